"""``zhuoji table …`` (a table that keeps score, over the same store as /v1/tables) and ``zhuoji chajiao``
(黄牌查叫, the exhaustive-draw check, over the same pipeline functions as /v1/chajiao and /v1/chajiao/photos).

Whoever holds the database owns its tables: the CLI writes without edit keys, and hands them out (``table new``,
``table key``) for the page and the HTTP API, where every write needs one.

Rounds are JSON files (or ``-`` for stdin) holding the ``/v1/settle`` body without rules, dealer, streak and
base; they are checked by the API's own model, so a round the service refuses is refused here too. Every
problem a user can cause is a ``ValueError`` with one line of message, which ``api.cli.main`` prints before it
exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from api.cli.options import rules_option
from api.cli.output import print_model

# The answer models are imported where used: building the parser (every ``zhuoji`` command does) loads no models.
if TYPE_CHECKING:
    from pipeline.table_models import CalibrationOut, RoundIn
    from tables import CalibrationRecord, KeyedTable, RoundRecord, TableRecord, TableStore


def _calibration_out(kept: CalibrationRecord | None, problem: str | None) -> CalibrationOut | None:
    from pipeline.table_models import CalibrationOut

    return None if kept is None else CalibrationOut.of(kept, problem)


# ------------------------------------------------------------------------------ zhuoji table


def add_table(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("table", help="a table that keeps score: rounds, running totals, dealer, undo, export",
                       description="A table of four players that keeps score round after round. The database "
                                   "is --db, else ZHUOJI_DATABASE_URL, else a SQLite file in your data directory "
                                   "(`zhuoji table where` prints it).")
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", metavar="URL", help="a SQLite file path or URL, or postgresql+psycopg://…")

    def action(name: str, help_: str, func: Any, json_flag: bool = True) -> argparse.ArgumentParser:
        a = actions.add_parser(name, help=help_, parents=[common])
        if json_flag:
            a.add_argument("--json", action="store_true", help="machine-readable output")
        a.set_defaults(func=func)
        return a

    a = action("new", "start a table", run_new)
    a.add_argument("name")
    a.add_argument("--players", required=True, metavar="A,B,C,D", help="four names, seats 0..3 in turn order")
    a.add_argument("--rules", help="preset (gy-normal, gy-reduced, liupanshui, dushan) or a JSON object "
                                   "'{\"preset\": \"gy-normal\", \"base\": 2}'")
    a.add_argument("--profile", help="start from a saved house profile instead of --rules")
    a.add_argument("--dealer", type=int, default=0, help="seat of the first dealer (庄家), default 0")
    _base_url_option(a)
    a = action("key", "issue a new edit key for a table (the old one stops working) and print its edit link",
               run_key)
    a.add_argument("id")
    _base_url_option(a)
    a = action("list", "tables, newest first", run_list)
    a.add_argument("--limit", type=int, default=20)
    a.add_argument("--offset", type=int, default=0)
    a = action("show", "totals, dealer and every round of a table, and its view link", run_show)
    a.add_argument("id")
    _base_url_option(a)
    a = action("round", "add a round from a JSON file (- for stdin)", run_round)
    a.add_argument("id")
    a.add_argument("file", help="the /v1/settle body without rules, dealer, streak, base")
    a.add_argument("--key", help="idempotency key: running the same command again stores the round once")
    _version_option(a)
    a = action("undo", "remove a round (default the last); later rounds are settled again", run_undo)
    a.add_argument("id")
    a.add_argument("number", nargs="?", type=int)
    _version_option(a)
    a = action("edit", "replace round N; later rounds are settled again", run_edit)
    a.add_argument("id")
    a.add_argument("number", type=int)
    a.add_argument("file")
    _version_option(a)
    a = action("pay", "结账 (settle up): who pays whom, with the fewest transfers, in money", run_pay)
    a.add_argument("id")
    a.add_argument("--per-point", default="1", metavar="X", help="the money a point is worth (default 1; cents "
                                                                 "allowed, e.g. 0.5)")
    a = action("finish", "finish the table (结账): no more rounds, edits or undos", run_finish)
    a.add_argument("id")
    a = action("delete", "delete a table and its rounds", run_delete, json_flag=False)
    a.add_argument("id")
    a = action("export", "history as CSV (one row per round, one column per player) or JSON", run_export,
               json_flag=False)
    a.add_argument("id")
    a.add_argument("--format", choices=["csv", "json"], default="csv")
    a.add_argument("-o", "--output", type=Path, help="write to this file instead of stdout")
    a = action("profile", "save a table's rules (or --rules) as a named house profile", run_profile)
    a.add_argument("name")
    a.add_argument("--from-table", metavar="ID")
    a.add_argument("--rules")
    action("profiles", "saved house profiles", run_profiles)
    from api.cli.table_calibration_commands import add_table_calibrate

    a = action("calibrate", "teach the table its set: a photo of its 27 suited tiles in three rows (or --clear)",
               run_table_calibrate)
    add_table_calibrate(a)
    _version_option(a)
    action("where", "print where the tables are stored", run_where, json_flag=False)


def _base_url_option(a: argparse.ArgumentParser) -> None:
    a.add_argument("--base-url", default="", metavar="URL",
                   help="the service's address, e.g. http://192.168.1.20:8000, put before the links (default: "
                        "links relative to it, as the HTTP API answers them)")


def _version_option(a: argparse.ArgumentParser) -> None:
    a.add_argument("--expected-version", type=int, metavar="V",
                   help="refuse the change if the table is no longer at version V (another writer came first)")


def _database(args: argparse.Namespace) -> str:
    from pipeline.settings import Settings
    from tables import default_database_url

    return Settings.from_env(database_url=args.db).database_url or default_database_url()


def _open(args: argparse.Namespace) -> TableStore:
    from tables import StoreUnavailable, TableStore

    try:
        return TableStore.open(_database(args))
    except StoreUnavailable as exc:
        raise ValueError(str(exc)) from None


def _call(func: Any, *a: Any, **kw: Any) -> Any:
    """A store call; its refusals become one-line user errors."""
    from tables import (
        ProfileNotFound,
        RoundNotFound,
        StaleVersion,
        StoreUnavailable,
        TableFinished,
        TableNotFound,
    )

    try:
        return func(*a, **kw)
    except (TableNotFound, RoundNotFound, ProfileNotFound) as exc:
        raise ValueError(str(exc.args[0])) from None
    except (StaleVersion, StoreUnavailable, TableFinished) as exc:
        raise ValueError(str(exc)) from None


def _read_round(path: str) -> RoundIn:
    """A round from a file or stdin, checked by the API's model (strict types, unknown keys refused)."""
    from pydantic import ValidationError

    from pipeline.table_models import RoundIn

    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path} must hold a JSON object (players, outcome, flipped, first_1s)")
    taken = [k for k in ("rules", "dealer", "streak", "base") if k in data]
    if taken:
        raise ValueError(f"{path}: a round does not set {', '.join(taken)}: the table decides them")
    try:
        return RoundIn.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "round"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ValueError(f"{path}: {where}: {first['msg'].removeprefix('Value error, ')}{more}") from None


def _table_lines(table: TableRecord, rounds: list[RoundRecord] | None = None) -> list[str]:
    from tables.export import outcome_words

    rules = table.rules if isinstance(table.rules, str) else json.dumps(table.rules, ensure_ascii=False)
    finished = ", finished (结账)" if table.finished else ""
    lines = [f"{table.name}  (id {table.id}, version {table.version}, {table.rounds} round(s), rules {rules}"
             f"{finished})"]
    for seat, (name, total) in enumerate(zip(table.players, table.totals, strict=True)):
        deal = f"  deals next (庄家), 连庄 k={table.streak}" if seat == table.dealer else ""
        lines.append(f"  P{seat} {name:<16}{total:>+7}{deal}")
    if rounds:
        lines.append("")
        width = max(6, *(len(p) for p in table.players))
        lines.append(f"  {'#':>3}  {'dealer':<{width}}  " + "".join(f"{p:>{max(7, len(p) + 1)}}" for p in table.players)
                     + "  outcome")
        for r in rounds:
            deltas = "".join(f"{d:>+{max(7, len(p) + 1)}}" for d, p in zip(r.deltas, table.players, strict=True))
            hands = "".join(f"; {w.hand_type.zh} ({w.hand_type.en}) {w.fan} fan" for w in r.summary.wins)
            lines.append(f"  {r.number:>3}  {table.players[r.dealer]:<{width}}  {deltas}  "
                         f"{outcome_words(r.round.entered(), table.players)}{hands}")
    return lines


def _key_lines(keyed: KeyedTable, base_url: str) -> list[str]:
    return [f"edit key: {keyed.edit_key}  (shown once; `zhuoji table key {keyed.table.id}` issues a new one)",
            f"edit link: {keyed.edit_url(base_url)}  (opens the table for writing: share it only with the players)",
            f"view link: {keyed.view_url(base_url)}  (read only)"]


def run_new(args: argparse.Namespace) -> int:
    from pipeline.table_models import TableCreated

    players = [p.strip() for p in args.players.split(",")]
    rules = None if args.rules is None else rules_option(args.rules)
    store = _open(args)
    keyed = _call(store.create_table, args.name, players, rules, args.dealer, args.profile)
    if args.json:
        print_model(TableCreated.of_keyed(keyed, args.base_url))  # the body of POST /v1/tables
    else:
        print("\n".join(_table_lines(keyed.table)))
        print(f"table {keyed.table.id} stored in {store.location}")
        print("\n".join(_key_lines(keyed, args.base_url)))
    return 0


def run_key(args: argparse.Namespace) -> int:
    from pipeline.table_models import TableCreated

    keyed = _call(_open(args).issue_edit_key, args.id)
    if args.json:
        print_model(TableCreated.of_keyed(keyed, args.base_url))
    else:
        print(f"a new edit key for table {keyed.table.id} ({keyed.table.name}): the old one no longer writes")
        print("\n".join(_key_lines(keyed, args.base_url)))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from pipeline.table_models import TableList, TableOut
    from tables.repository import MAX_OFFSET, MAX_PAGE

    if not 1 <= args.limit <= MAX_PAGE or not 0 <= args.offset <= MAX_OFFSET:
        raise ValueError(f"--limit takes a whole number 1..{MAX_PAGE} and --offset 0..{MAX_OFFSET}")
    store = _open(args)
    tables, total = _call(store.list_tables, args.limit, args.offset)
    if args.json:
        print_model(TableList(tables=[TableOut.of(t) for t in tables], total=total,
                              limit=args.limit, offset=args.offset))
        return 0
    print(f"database: {store.location} ({total} table(s))")
    for t in tables:
        totals = " ".join(f"{p} {v:+d}" for p, v in zip(t.players, t.totals, strict=True))
        print(f"{t.id}  {t.updated_at[:16].replace('T', ' ')}  {t.name}: {t.rounds} round(s); {totals}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from pipeline.table_models import RoundOut, TableOut, TableShown

    store = _open(args)
    table = _call(store.get_table, args.id)
    rounds = _call(store.list_rounds, args.id)
    kept = _call(store.get_calibration, args.id)
    from api.cli.table_calibration_commands import calibration_problem_here, calibration_words
    from tables.keys import view_url

    problem = calibration_problem_here(kept)
    if args.json:
        # the bodies of GET /v1/tables/{id}, …/rounds and …/calibration in one
        print_model(TableShown(table=TableOut.of(table),
                               rounds=[RoundOut.of(r) for r in rounds],
                               calibration=_calibration_out(kept, problem)))
    else:
        lines = _table_lines(table, rounds)
        print("\n".join([lines[0], "  " + calibration_words(kept, problem),
                         f"  view link: {view_url(table.view_id, args.base_url)}  (read only)", *lines[1:]]))
    return 0


def run_round(args: argparse.Namespace) -> int:
    from pipeline.table_models import RoundAdded

    round_ = _read_round(args.file)
    store = _open(args)
    added, replayed = _call(store.add_round, args.id, round_, args.expected_version, args.key)
    if args.json:
        print_model(RoundAdded.of(added))  # the body of POST /v1/tables/{id}/rounds
        return 0
    again = " (already stored with this --key: nothing added)" if replayed else ""
    print(f"round {added.number} added{again}")
    print("\n".join(_table_lines(added.table)))
    return 0


def _changed(args: argparse.Namespace, table: TableRecord, what: str) -> int:
    from pipeline.table_models import TableOut, TableUpdated

    if args.json:
        print_model(TableUpdated(table=TableOut.of(table)))
    else:
        print(what)
        print("\n".join(_table_lines(table)))
    return 0


def run_undo(args: argparse.Namespace) -> int:
    store = _open(args)
    number = args.number
    if number is None:
        number = _call(store.get_table, args.id).rounds
        if number == 0:
            raise ValueError(f"table {args.id} has no rounds to undo")
    table = _call(store.remove_round, args.id, number, args.expected_version)
    return _changed(args, table, f"round {number} removed; later rounds settled again")


def run_edit(args: argparse.Namespace) -> int:
    round_ = _read_round(args.file)
    store = _open(args)
    table = _call(store.replace_round, args.id, args.number, round_, args.expected_version)
    return _changed(args, table, f"round {args.number} replaced; later rounds settled again")


def run_pay(args: argparse.Namespace) -> int:
    from pipeline.table_models import Payments
    from tables.payments import settle_up

    store = _open(args)
    table = _call(store.get_table, args.id)
    result = settle_up(table.totals, args.per_point)
    if args.json:
        print_model(Payments.of(result))  # the body of GET …/payments
        return 0
    names = table.players
    print(f"{table.name}: 结账 (settle up), {result.per_point} per point")
    for name, points, money in zip(names, result.totals, result.amounts, strict=True):
        print(f"  {name:<16}{points:>+7}  {money:>+12.2f}")
    if not result.payments:
        print("nobody pays: every total is 0")
    for p in result.payments:
        print(f"{names[p.payer]} pays {names[p.payee]} {p.amount:.2f} ({p.points} points)")
    return 0


def run_finish(args: argparse.Namespace) -> int:
    table = _call(_open(args).finish_table, args.id)
    return _changed(args, table, f"table {args.id} finished (结账): no more rounds, edits or undos")


def run_delete(args: argparse.Namespace) -> int:
    store = _open(args)
    _call(store.delete_table, args.id)
    print(f"table {args.id} deleted")
    return 0


def run_export(args: argparse.Namespace) -> int:
    from tables.export import to_csv, to_json

    store = _open(args)
    table = _call(store.get_table, args.id)
    rounds = _call(store.list_rounds, args.id)
    text = to_csv(table, rounds) if args.format == "csv" else json.dumps(
        to_json(table, rounds).model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n"
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text, encoding="utf-8", newline="")
        print(f"{len(rounds)} round(s) written to {args.output}", file=sys.stderr)
    return 0


def run_table_calibrate(args: argparse.Namespace) -> int:
    from api.cli.table_calibration_commands import (
        calibration_of,
        calibration_problem_here,
        calibration_words,
    )
    from pipeline.table_models import TableCalibration, TableOut

    if args.clear == (args.image is not None):
        raise ValueError("give a calibration photo (or JSON file), or --clear, one of them")
    store = _open(args)
    _call(store.get_table, args.id)  # an unknown table: said before any model runs
    if args.clear:
        table, had = _call(store.clear_calibration, args.id, args.expected_version)
        kept = None
        what = "calibration forgotten" if had else "the table had no calibration"
    else:
        calibration = calibration_of(args)
        table, kept = _call(store.set_calibration, args.id, calibration, args.expected_version)
        what = "calibration kept with the table: its photos (read/score --table) are named with it"
    problem = calibration_problem_here(kept, getattr(args, "model", None))
    if args.json:
        print_model(TableCalibration(calibration=_calibration_out(kept, problem),
                                     table=TableOut.of(table)))
        return 0
    print(what)
    print(calibration_words(kept, problem))
    print("\n".join(_table_lines(table)))
    return 0


def run_profile(args: argparse.Namespace) -> int:
    from pipeline.table_models import ProfileOut

    if (args.from_table is None) == (args.rules is None):
        raise ValueError("give --from-table ID or --rules, one of them")
    rules = None if args.rules is None else rules_option(args.rules)
    store = _open(args)
    profile = _call(store.save_profile, args.name, rules, args.from_table)
    if args.json:
        print_model(ProfileOut.of(profile))
    else:
        print(f"house profile {profile.name!r} saved: {json.dumps(profile.rules, ensure_ascii=False)}")
    return 0


def run_profiles(args: argparse.Namespace) -> int:
    from pipeline.table_models import ProfileList, ProfileOut

    store = _open(args)
    profiles = _call(store.list_profiles)
    if args.json:
        print_model(ProfileList(profiles=[ProfileOut.of(p) for p in profiles]))
    else:
        for p in profiles:
            print(f"{p.name}: {json.dumps(p.rules, ensure_ascii=False)}")
    return 0


def run_where(args: argparse.Namespace) -> int:
    from tables import describe
    from tables.db import normalize_url

    print(describe(normalize_url(_database(args))))
    return 0


# ------------------------------------------------------------------------------ zhuoji chajiao


def add_chajiao(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chajiao", help="黄牌查叫 (exhaustive-draw check): who is 叫牌, waits, who pays whom",
                       description="The hands shown at 黄牌 (the wall ran out, nobody won), 2 to 4 seats, each "
                                   "as text or a photo: who is 叫牌 (ready), the waits with copies left, and who "
                                   "pays whom (docs/rules.md#chajiao).")
    p.add_argument("--hand", nargs=2, action="append", default=[], metavar=("SEAT", "TILES"),
                   help="seat 0..3 and its tiles, melds as TYPE:TILE: --hand 2 '123m456p789s1p pong:5m'")
    p.add_argument("--photo", nargs=2, action="append", default=[], metavar=("SEAT", "IMAGE"),
                   help="seat 0..3 and a photo of its tiles")
    p.add_argument("--rules", default="gy-normal",
                   help="preset (gy-normal, gy-reduced, liupanshui, dushan) or a JSON object {\"preset\": ..., <switch>: value}")
    p.add_argument("--dealer", type=int, default=0, help="dealer seat (decides the next dealer), default 0")
    p.add_argument("--streak", type=int, default=1, help="连庄 count k of this hand, default 1")
    p.add_argument("--model", type=Path, help="ONNX model for photos (default: ZHUOJI_MODEL or the shipped one)")
    p.add_argument("--json", action="store_true", help="machine-readable output (the /v1/chajiao answer)")
    p.set_defaults(func=run_chajiao)


def _seat(text: str, option: str) -> int:
    if text not in ("0", "1", "2", "3"):
        raise ValueError(f"{option} {text!r}: the seat is 0, 1, 2 or 3")
    return int(text)


def run_chajiao(args: argparse.Namespace) -> int:

    from api.cli.output import print_model
    from pipeline.files import read_photo_file
    from pipeline.hand import chajiao, text_hand
    from pipeline.photo import photo_hand_bytes

    if not 0 <= args.dealer <= 3 or not 1 <= args.streak <= 1000:
        raise ValueError("--dealer is a seat 0..3 and --streak a whole number 1..1000")
    rules = rules_option(args.rules)  # refused before any photo is read
    given = [(_seat(s, "--hand"), "hand", v) for s, v in args.hand] + \
            [(_seat(s, "--photo"), "photo", v) for s, v in args.photo]
    seats = [s for s, _, _ in given]
    if len(set(seats)) != len(seats):
        raise ValueError(f"a seat is given twice: {sorted(seats)}")
    if not 2 <= len(given) <= 4:
        raise ValueError(f"give 2 to 4 hands (--hand SEAT TILES or --photo SEAT IMAGE), not {len(given)}")
    detector = None
    hands = []
    for seat, kind, value in sorted(given):
        if kind == "hand":
            hands.append(text_hand(seat, value))
            continue
        data = read_photo_file(value)
        if detector is None:
            from pipeline.settings import Settings, open_detector

            detector = open_detector(Settings.from_env(model=args.model))
        hands.append(photo_hand_bytes(detector, seat, data))  # refused as the service refuses photo{seat}
    result = chajiao(hands, rules, args.dealer, args.streak)
    if args.json:
        print_model(result)  # the body of POST /v1/chajiao/photos for the same hands
        return 0
    for row in result.players:
        if not row.given:
            continue
        if row.ting:
            waits = " ".join(f"{w.tile}×{w.copies_left}" for w in row.waits)
            best = f", best {row.best_hand_type.name_zh} ({row.best_hand_type.name_en}) {row.best_fan} fan" \
                if row.best_hand_type else ""
            state = f"叫牌 (ready), waits {waits} (tile×copies left){best}"
        else:
            state = "not 叫牌 (not ready)"
        print(f"P{row.seat} ({row.source}): {row.concealed} — {state}; net {row.total:+d}")
        for r in row.retake:
            print(f"    photo: {r.message}")
    if result.ledger:
        print("Payments:")
        for t in result.ledger:
            print(f"  P{t.from_} → P{t.to} {t.fan}")
    else:
        print("No payment: " + next((line for line in result.explanation if line.startswith("查叫")), "nobody pays"))
    if result.next_dealer is not None:
        print(f"Next dealer: P{result.next_dealer}")
    return 0
