"""Speed of the table store (tables/) on a SQLite file and on PostgreSQL.

    python -m benchmarks.bench_tables [--rounds N] [--replay N] [--postgres URL]

Per backend: (1) a table of 16 rounds created, then read back (table and rounds), end to end through
``TableStore``; (2) rounds/s: N rounds appended one transaction each (each settles one hand through
``scoring.settle``), from one writer and from four threads at once with the version each read (stale writes
retried); (3) a table of 500 rounds whose round 1 is edited: every round is settled again and rewritten.
Also the pure replay of 500 rounds (``scoring.scorebook.replay``, no database). PostgreSQL: ``--postgres`` or
a throwaway server started here (Debian's postgresql, as in the tests); skipped with the reason otherwise.
SQLite runs with ``synchronous=FULL`` (every commit is on disk); the throwaway PostgreSQL runs with fsync on.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import tempfile
import threading
import time
from pathlib import Path

import sqlalchemy as sa

from pipeline.table_models import RoundIn
from scoring.scorebook import TABLE_KEYS, add_round, new_scorebook, replay
from tables import StaleVersion, TableStore
from tests.tables.throwaway import PostgresUnavailable, throwaway_postgres

# docs/rules.md#examples E1 (seat 1 wins 平胡 自摸 on 5p), turned so that any seat wins it, and its hands at a 黄牌 draw.
E1 = json.loads((Path(__file__).resolve().parents[1] / "tests" / "data" / "tables" / "e1.json").read_text())


def win_round(winner: int) -> dict:
    shift = (winner - 1) % 4
    r = {k: v for k, v in copy.deepcopy(E1).items() if k not in TABLE_KEYS}
    r["players"] = [copy.deepcopy(E1["players"][(seat - shift) % 4]) for seat in range(4)]
    r["outcome"]["winners"] = [winner]
    r["first_1s"]["discarder"] = (E1["first_1s"]["discarder"] + shift) % 4
    return r


def draw_round() -> dict:
    return {"players": copy.deepcopy(E1["players"]), "outcome": {"type": "draw"}, "flipped": None, "first_1s": None}


NAMES = ["Ann", "Bo", "Cy", "Di"]
ROUNDS = [win_round(1), win_round(2), draw_round(), win_round(3), win_round(0), win_round(2)]
ENTERED = [RoundIn.model_validate(r) for r in ROUNDS]  # as the service hands them to the store, checked once


def _round(i: int) -> dict:
    return ROUNDS[i % len(ROUNDS)]


def _entered(i: int) -> RoundIn:
    return ENTERED[i % len(ENTERED)]


def bench_backend(label: str, url: str, n_rounds: int, n_replay: int) -> None:
    store = TableStore.open(url)
    try:
        t0 = time.perf_counter()
        table = store.create_table("sixteen", NAMES).table
        for i in range(16):
            store.add_round(table.id, _entered(i), None)
        t1 = time.perf_counter()
        back, rounds = store.get_table(table.id), store.list_rounds(table.id)
        t2 = time.perf_counter()
        assert back.rounds == len(rounds) == 16
        print(f"{label}: 16-round table created in {(t1 - t0) * 1000:.1f} ms, read back (table + 16 rounds with "
              f"settlements) in {(t2 - t1) * 1000:.1f} ms")

        table = store.create_table("one writer", NAMES).table
        t0 = time.perf_counter()
        for i in range(n_rounds):
            store.add_round(table.id, _entered(i), None)
        dt = time.perf_counter() - t0
        print(f"{label}: {n_rounds / dt:.0f} rounds/s, one writer ({dt / n_rounds * 1000:.2f} ms per round)")

        table = store.create_table("four writers", NAMES).table
        stale = [0]

        def writer(w: int) -> None:
            for i in range(n_rounds // 4):
                while True:
                    version = store.get_table(table.id).version
                    try:
                        store.add_round(table.id, _entered(w + i), version)
                        break
                    except StaleVersion:
                        stale[0] += 1

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        dt = time.perf_counter() - t0
        stored = store.get_table(table.id).rounds
        print(f"{label}: {stored / dt:.0f} rounds/s, four writers at once ({stale[0]} stale writes retried, "
              f"{stored} rounds stored)")

        table = store.create_table("long evening", NAMES).table
        for i in range(n_replay):
            store.add_round(table.id, _entered(i), None)
        t0 = time.perf_counter()
        edited = store.replace_round(table.id, 1, RoundIn.model_validate(win_round(3)), None)
        dt = time.perf_counter() - t0
        assert edited.rounds == n_replay and sum(edited.totals) == 0
        print(f"{label}: edit round 1 of {n_replay}: every round settled again and rewritten in {dt:.2f} s")
    finally:
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="rounds appended for rounds/s (default 200)")
    parser.add_argument("--replay", type=int, default=500, help="rounds of the table edited at round 1")
    parser.add_argument("--postgres", help="postgresql+psycopg:// URL of an empty database (default: start one)")
    args = parser.parse_args()
    print(f"python {platform.python_version()}, sqlalchemy {sa.__version__}, {platform.machine()}")

    book = new_scorebook(NAMES)
    for i in range(args.replay):
        book = add_round(book, _round(i))
    t0 = time.perf_counter()
    standing = replay(book)
    dt = time.perf_counter() - t0
    print(f"pure replay of {args.replay} rounds (scoring.settle each, no database): {dt:.2f} s "
          f"({dt / args.replay * 1000:.2f} ms per round); totals {list(standing.totals)}")

    with tempfile.TemporaryDirectory() as tmp:
        bench_backend("SQLite", f"sqlite:///{tmp}/bench.sqlite3", args.rounds, args.replay)
    if args.postgres:
        bench_backend("PostgreSQL", args.postgres, args.rounds, args.replay)
        return
    try:
        with throwaway_postgres(durable=True) as url:
            bench_backend("PostgreSQL", url, args.rounds, args.replay)
    except PostgresUnavailable as exc:
        print(f"PostgreSQL: skipped, {exc}")


if __name__ == "__main__":
    main()
