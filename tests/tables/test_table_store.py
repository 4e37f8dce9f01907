"""The table store on a SQLite file and on a real PostgreSQL server: rounds, undo/edit, versions, idempotency,
house profiles, and two writers at once (threads and processes) never double-counting."""

from __future__ import annotations

import multiprocessing
import threading

import pytest
import sqlalchemy as sa

from scoring.scorebook import add_round, new_scorebook, replay
from tables import (
    IdempotencyKeyReused,
    ProfileNotFound,
    RoundNotFound,
    StaleVersion,
    StoreUnavailable,
    TableNotFound,
    TableStore,
)
from tables.schema import rounds as rounds_table
from tests.tables.support import draw_round, entered, impossible_round, win_round

NAMES = ["Ann", "Bo", "Cy", "Di"]


@pytest.fixture
def store(db_url):
    s = TableStore.open(db_url)
    yield s
    s.close()


def test_a_table_keeps_its_rounds_and_totals(store):
    table = store.create_table("Friday", NAMES, {"preset": "gy-reduced", "base": 2}, dealer=3).table
    assert (table.version, table.rounds, table.totals, table.dealer, table.streak) == (1, 0, [0, 0, 0, 0], 3, 1)
    given = [win_round(1), draw_round(), win_round(1), win_round(0)]
    for n, r in enumerate(given, start=1):
        answer, replayed = store.add_round(table.id, entered(r), expected_version=n)
        assert not replayed and answer.number == n and answer.table.version == n + 1
    expected = replay(add_many(new_scorebook(NAMES, {"preset": "gy-reduced", "base": 2}, 3), given))
    now = store.get_table(table.id)
    assert now.totals == list(expected.totals) and sum(now.totals) == 0
    assert (now.dealer, now.streak, now.rounds, now.version) == (expected.dealer, expected.streak, 4, 5)
    stored = store.list_rounds(table.id)
    assert [r.round.entered() for r in stored] == given  # the input as entered, exactly
    for row, played in zip(stored, expected.rounds, strict=True):
        assert (row.dealer, row.streak, row.totals_after) == (played.dealer, played.streak, list(played.totals_after))
        assert row.settlement.model_dump(mode="json") == played.settlement.to_dict()
        assert row.engine_version and row.created_at.endswith("Z")
    with store.engine.connect() as conn:  # what the engine saw: the round as entered with the table's decisions
        states = conn.execute(sa.select(rounds_table.c.state).where(rounds_table.c.table_id == table.id)
                              .order_by(rounds_table.c.number)).scalars().all()
    assert states == [played.state for played in expected.rounds]


def add_many(book, rounds):
    for r in rounds:
        book = add_round(book, r)
    return book


def test_edit_and_undo_replay_later_rounds(store):
    table = store.create_table("Edits", NAMES).table
    for r in [win_round(1), win_round(1), draw_round(), win_round(2)]:
        store.add_round(table.id, entered(r), None)
    assert [r.dealer for r in store.list_rounds(table.id)] == [0, 1, 1, 1]
    created = [r.created_at for r in store.list_rounds(table.id)]
    edited = store.replace_round(table.id, 1, entered(win_round(3)), expected_version=5)
    assert edited.version == 6
    after = store.list_rounds(table.id)
    assert [r.dealer for r in after] == [0, 3, 1, 1]
    assert [r.created_at for r in after] == created  # an edit keeps each round's time of entry
    undone = store.remove_round(table.id, 2, expected_version=6)
    assert undone.rounds == 3 and undone.version == 7
    left = store.list_rounds(table.id)
    assert [r.number for r in left] == [1, 2, 3]
    assert [r.round.entered() for r in left] == [win_round(3), draw_round(), win_round(2)]
    assert [r.created_at for r in left] == [created[0], created[2], created[3]]
    assert left[-1].totals_after == undone.totals and sum(undone.totals) == 0
    store.remove_round(table.id, 3, None)  # undo the last round
    assert store.get_table(table.id).rounds == 2
    with pytest.raises(RoundNotFound):
        store.remove_round(table.id, 3, None)


def test_stale_writes_get_the_current_table_and_change_nothing(store):
    table = store.create_table("Two phones", NAMES).table
    store.add_round(table.id, entered(win_round(1)), expected_version=1)
    with pytest.raises(StaleVersion) as stale:
        store.add_round(table.id, entered(win_round(2)), expected_version=1)
    assert stale.value.current.version == 2 and stale.value.current.rounds == 1
    with pytest.raises(StaleVersion):
        store.replace_round(table.id, 1, entered(win_round(2)), expected_version=1)
    with pytest.raises(StaleVersion):
        store.remove_round(table.id, 1, expected_version=7)
    assert store.get_table(table.id) == stale.value.current


def test_an_invalid_round_leaves_the_table_unchanged(store):
    table = store.create_table("Bad input", NAMES).table
    store.add_round(table.id, entered(win_round(1)), None)
    before, rounds = store.get_table(table.id), store.list_rounds(table.id)
    with pytest.raises(ValueError, match="round 2: .*cannot win"):
        store.add_round(table.id, entered(impossible_round()), before.version)
    with pytest.raises(ValueError, match="round 1: .*cannot win"):
        store.replace_round(table.id, 1, entered(impossible_round()), before.version)
    with pytest.raises(ValueError, match="rules"):  # the table decides them: refused by the round's model
        store.add_round(table.id, entered({**win_round(1), "rules": "liupanshui"}), before.version)
    assert store.get_table(table.id) == before and store.list_rounds(table.id) == rounds


def test_idempotency_key_stores_once_and_answers_the_same(store):
    table = store.create_table("Bad wifi", NAMES).table
    first, replayed = store.add_round(table.id, entered(win_round(1)), 1, idempotency_key="phone-1-round-1")
    assert not replayed
    again, replayed = store.add_round(table.id, entered(win_round(1)), 1, idempotency_key="phone-1-round-1")
    assert replayed and again == first
    assert store.get_table(table.id).rounds == 1
    with pytest.raises(IdempotencyKeyReused):
        store.add_round(table.id, entered(win_round(2)), 2, idempotency_key="phone-1-round-1")
    other = store.create_table("Other", NAMES).table  # keys belong to one table
    _, replayed = store.add_round(other.id, entered(win_round(1)), 1, idempotency_key="phone-1-round-1")
    assert not replayed


def test_list_delete_and_not_found(store):
    ids = [store.create_table(f"T{i}", NAMES).table.id for i in range(5)]
    page, total = store.list_tables(limit=2, offset=0)
    assert total == 5 and [t.id for t in page] == ids[::-1][:2]  # newest first
    page, _ = store.list_tables(limit=2, offset=4)
    assert [t.id for t in page] == [ids[0]]
    store.add_round(ids[0], entered(win_round(1)), None, idempotency_key="k")
    store.delete_table(ids[0])
    with pytest.raises(TableNotFound):
        store.get_table(ids[0])
    with pytest.raises(TableNotFound):
        store.list_rounds(ids[0])
    with pytest.raises(TableNotFound):
        store.add_round(ids[0], entered(win_round(1)), None)
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(rounds_table)).scalar_one() == 0


def test_house_profiles(store):
    rules = {"preset": "liupanshui", "base": 5, "wuguji": True}
    home = store.create_table("Home rules", NAMES, rules).table
    saved = store.save_profile("Ann's house", from_table=home.id)
    assert saved.rules == rules
    copy = store.create_table("Next week", NAMES, profile="Ann's house").table
    assert copy.rules == rules
    store.save_profile("Ann's house", "gy-normal")  # replaced; tables made from it keep their copy
    assert store.get_table(copy.id).rules == rules
    assert [(p.name, p.rules) for p in store.list_profiles()] == [("Ann's house", "gy-normal")]
    with pytest.raises(ProfileNotFound):
        store.create_table("x", NAMES, profile="nobody's")
    with pytest.raises(ValueError, match="not both"):
        store.create_table("x", NAMES, rules="gy-normal", profile="Ann's house")


def test_threads_writing_at_once_never_double_count(store):
    """Eight writers race on one table with the version each read: exactly one wins each version."""
    table = store.create_table("Race", NAMES).table
    wins, stale = [], []
    lock = threading.Lock()

    def writer(seat: int) -> None:
        for _ in range(6):
            version = store.get_table(table.id).version
            try:
                answer, _ = store.add_round(table.id, entered(win_round(seat % 4)), version)
                with lock:
                    wins.append(answer.number)
            except StaleVersion:
                with lock:
                    stale.append(seat)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = store.get_table(table.id)
    stored = store.list_rounds(table.id)
    assert sorted(wins) == list(range(1, len(wins) + 1))  # no number given twice
    assert final.rounds == len(wins) == len(stored) and final.version == len(wins) + 1
    assert len(wins) + len(stale) == 48
    assert final.totals == stored[-1].totals_after == list(replay(add_many(
        new_scorebook(NAMES), [r.round.entered() for r in stored])).totals)


def _replica(url: str, inbox: multiprocessing.Queue, out: multiprocessing.Queue) -> None:
    store = TableStore.open(url)  # racing the other replicas to migrate an empty database
    table_id, seat = inbox.get(timeout=120)
    added = 0
    for i in range(5):
        # Seats 0 and 2 share keys k0-0..k4-0, seats 1 and 3 k0-1..k4-1, each with a different round: of two
        # requests with one key exactly one is stored, the other is refused (or answered from the first).
        try:
            _, replayed = store.add_round(table_id, entered(win_round(seat % 4)), None,
                                          idempotency_key=f"k{i}-{seat % 2}")
            added += not replayed
        except IdempotencyKeyReused:
            pass
    out.put(added)
    store.close()


def _head() -> str:
    """The newest migration in tables/migrations/versions."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    from tables.db import MIGRATIONS

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    return ScriptDirectory.from_config(config).get_current_head()


@pytest.mark.slow
def test_replicas_migrate_and_write_at_once(db_url):
    """Four processes and four threads open an empty database at once: one migrates, all open, and the schema
    is exactly tables/schema.py. Then the four processes write to one table with shared idempotency keys."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from tables.schema import metadata

    ctx = multiprocessing.get_context("spawn")
    inbox, out = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=_replica, args=(db_url, inbox, out)) for _ in range(4)]
    for p in procs:
        p.start()
    stores, errors = [], []

    def start() -> None:
        try:
            stores.append(TableStore.open(db_url))
        except Exception as exc:  # any failure to open counts; listed by the assert below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(stores) == 4
    with stores[0].engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), metadata) == []
        assert conn.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one() == _head()
    store = stores[0]
    table = store.create_table("Processes", NAMES).table
    for seat in (0, 2, 1, 3):
        inbox.put((table.id, seat))
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 4
    added = sum(out.get(timeout=5) for _ in procs)
    final = store.get_table(table.id)
    assert final.rounds == added == 10  # ten keys, each stored once
    assert len(store.list_rounds(table.id)) == 10 and sum(final.totals) == 0
    for s in stores:
        s.close()


def test_unreachable_database_is_reported():
    with pytest.raises(StoreUnavailable):
        TableStore.open("postgresql+psycopg://nobody@/none?host=/nonexistent-socket-dir&port=1")
    with pytest.raises(StoreUnavailable, match="unsupported"):
        TableStore.open("mysql://x@localhost/db")
    with pytest.raises(StoreUnavailable, match="in-memory"):
        TableStore.open("sqlite://")
