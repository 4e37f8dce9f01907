"""The ``zhuoji`` command line: a thin shell over the pipeline's stage functions.

Each subcommand is ``add_<name>(subparsers)`` registering ``func(args) -> int``. Errors a user can cause
(bad tiles, missing files, bad JSON) print one line to stderr and exit with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from api.cli.options import add_win_context_options, win_flags

if TYPE_CHECKING:
    from scoring.melds import Meld
    from scoring.results import Settlement


class UserError(Exception):
    """A problem with the user's input: printed as a message, exit code 2."""


def _print_json(obj: object) -> None:
    print(json.dumps(obj, ensure_ascii=False))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zhuoji", description="Camera scorer for Guiyang 捉鸡 mahjong (tiles in MPSZ: 123m456p789s)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    from api.cli.calibrate_commands import add_calibrate
    from api.cli.rules_commands import add_rules
    from api.cli.service_commands import add_live, add_serve
    from api.cli.table_commands import add_chajiao, add_table
    from api.cli.vision_commands import (
        add_detect,
        add_quantize,
        add_read,
        add_score,
        add_train,
        add_train_back_check,
        add_train_classifier,
    )

    for add in (add_waits, add_hand, add_settle, add_detect, add_read, add_score, add_train, add_train_classifier,
                add_train_back_check, add_quantize, add_serve, add_live, add_table, add_chajiao, add_calibrate, add_rules):
        add(sub)
    return parser


def add_waits(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("waits", help="tiles that complete a hand (听牌 waits)")
    p.add_argument("concealed", help="concealed tiles, e.g. 1112345678999m")
    _add_meld_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_waits)


def run_waits(args: argparse.Namespace) -> int:
    from scoring import waits

    melds = _melds(args.meld)
    result = waits(args.concealed, melds)
    if args.json:
        _print_json({"concealed": args.concealed, "melds": [m.to_dict() for m in melds], "waits": result})
    else:
        print(" ".join(result) if result else "not ready (no tile completes this hand)")
    return 0


def _add_meld_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--meld", action="append", default=[], metavar="TYPE:TILE",
                   help="a laid meld, repeatable: pong:5m, kong:4m (点豆), added_kong:5p (转弯豆), "
                        "concealed_kong:9s (闷豆)")


def _melds(specs: Sequence[str]) -> list[Meld]:
    """``["pong:5m", "concealed_kong:9s"]`` → melds; a malformed one is a :class:`UserError`."""
    from scoring.melds import MELD_TYPES, parse_meld

    melds = []
    for spec in specs:
        kind, sep, tile = spec.partition(":")
        if not sep or kind not in MELD_TYPES:
            raise UserError(f"--meld {spec!r}: expected TYPE:TILE with TYPE one of {', '.join(MELD_TYPES)}")
        melds.append(parse_meld({"type": kind, "tile": tile}))
    return melds


def add_hand(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hand", help="hand type, fan and win value of a hand (牌型), or its waits without --win")
    p.add_argument("concealed", help="concealed tiles without the winning tile, e.g. 123m456p789s5p; or all 14, "
                                     "the last one written being the winning tile")
    p.add_argument("--win", metavar="TILE", help="the winning tile, e.g. 5p (omit to list the waits)")
    p.add_argument("--self-drawn", action="store_true", help="自摸: the winner drew the tile himself")
    p.add_argument("--flipped", metavar="TILE", help="翻鸡 indicator: the flipped tile (its next rank is a chicken)")
    _add_meld_option(p)
    add_win_context_options(p, rules_help="rules preset (gy-normal, gy-reduced, liupanshui, dushan) or a JSON object "
                                          "{\"preset\": ..., <rules key>: value}, e.g. '{\"dadiaoche\": 17}'")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_hand)


def _rules_arg(text: str) -> object:
    """``--rules``: a preset name, or a JSON object of a preset and rule overrides."""
    if not text.lstrip().startswith("{"):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"--rules is not a valid JSON object: {exc}") from None


def run_hand(args: argparse.Namespace) -> int:
    from scoring import analyze_hand, parse_tiles
    from scoring.chickens import held_chickens
    from scoring.rules import get_rules
    from scoring.tiles import tile_index

    rules = get_rules(_rules_arg(args.rules))
    melds = _melds(args.meld)
    tiles = parse_tiles(args.concealed)
    if args.flipped is not None:
        tile_index(args.flipped)
    win, assumptions = args.win, []
    if len(tiles) + 3 * len(melds) == 14:
        # 14 tiles: the winning tile is among them, as in a photo of a won hand.
        if win is None:
            text = args.concealed.replace(" ", "")
            win = text[-2:]  # the last tile as written (parse_tiles sorts): its rank and the suit after it
            assumptions.append(f"14 tiles: took the last one, {win}, as the winning tile (--win picks another)")
        elif win not in tiles:
            raise UserError(f"the winning tile {win} is not among the 14 tiles {args.concealed}")
        tiles.remove(win)
    result = analyze_hand(tiles, win, melds, args.self_drawn, rules, **win_flags(args))
    held = [*tiles, *(t for m in melds for t in m.tiles), *([win] if win else [])]
    chickens = held_chickens(held, args.flipped, rules)
    if args.json:
        _print_json({**result.to_dict(), "chickens": chickens, "assumptions": assumptions})
        return 0
    shown = ", ".join(f"{c['tile']}×{c['count']} {c['label']}" for c in chickens["tiles"])
    flip = "" if args.flipped is None else f" (翻 {args.flipped} → {chickens['flipped_chicken']})"
    print("\n".join([*assumptions, *result.explanation,
                     f"鸡 (chickens) held{flip}: " + (f"{shown} = {chickens['total']}" if shown else "none")]))
    return 0


def add_settle(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("settle", help="settle a whole table: hand fan, 豆 (kongs), 鸡 (chickens), next dealer")
    p.add_argument("table", help="table state JSON file (see scoring/settle.py; examples in tests/data/tables)")
    p.add_argument("--rules", metavar="RULES", help="rules preset gy-normal, gy-reduced, liupanshui or dushan, or a JSON "
                                                    "object {\"preset\": ..., <switch>: value}; replaces the file's "
                                                    "preset and adds to its rule overrides (zhuoji rules lists them)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_settle)


MAX_TABLE_BYTES = 1024 * 1024  # as the API's JSON limit: a whole table state is a few kB


def run_settle(args: argparse.Namespace) -> int:
    from scoring import settle
    from scoring.seat_names import name_seats, named_settlement
    from vision.files import read_file

    data = read_file(args.table, MAX_TABLE_BYTES)  # a folder, device, FIFO or huge file: one line, never a hang
    try:
        state = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{args.table} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{args.table} is not valid JSON: {exc}") from None
    except RecursionError:
        raise UserError(f"{args.table}: JSON nested too deeply") from None
    if not isinstance(state, dict):
        raise UserError(f"{args.table} must hold a JSON object (the table state)")
    if args.rules is not None:
        file_rules = state.get("rules")
        overrides = dict(file_rules) if isinstance(file_rules, dict) else {}
        if isinstance(file_rules, str):
            overrides["preset"] = file_rules
        given = _rules_arg(args.rules)
        state["rules"] = {**overrides, **(given if isinstance(given, dict) else {"preset": given})}
    names = state.pop("names", None)  # the players' names, as /v1/settle takes them
    if names is not None and not (isinstance(names, list) and len(names) == 4
                                  and all(isinstance(n, str) and n.strip() for n in names)):
        raise UserError(f"{args.table}: names must be a list of the 4 players' names, seats 0..3")
    try:
        result = named_settlement(settle(state), names)
    except ValueError as exc:
        raise UserError(name_seats(str(exc), names)) from None
    if args.json:
        _print_json(result.to_dict())
    else:
        print("\n".join(_settle_lines(result)))
    return 0


def _settle_lines(result: Settlement) -> list[str]:
    """Human-readable settlement: one row per player, the itemized ledger, the next dealer."""
    lines = [f"Rules: {result.rules.preset}, 底分 (base) {result.rules.base}", "",
             # CJK characters are two columns wide: "叫牌" fills 4 of its 6, "豆"/"鸡" 2 of their 6.
             f"{'seat':<10}叫牌  {'waits':<14}{'hand':>6}    豆    鸡{'total':>7}  win"]
    for p in result.players:
        seat = f"P{p.seat}" + (" dealer" if p.dealer else "")
        ready = "yes" if p.ting else "no"
        waits = " ".join(p.waits) or "-"
        win = f"{p.win.hand_type.name_zh} {p.win.hand_type.fan} (W {p.win.value})" if p.win else ""
        if p.burned:
            win = (win + " 全烧 burned").strip()
        lines.append(f"{seat:<10}{ready:<6}{waits:<14}{p.hand:>6}{p.dou:>6}{p.chicken:>6}{p.total:>+7}  {win}")
    lines += ["", "Ledger:"]
    lines += [f"  {t.component:<8}P{t.payer} → P{t.payee} {t.fan:>3}  {t.reason}" for t in result.ledger]
    if not result.ledger:
        lines.append("  (no payments)")
    lines += ["", "Explanation:", *(f"  {line}" for line in result.explanation)]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    # `train`, `train-classifier`, `train-back-check` and `quantize` hand their options to their own parsers;
    # argparse's REMAINDER alone drops a leading --option.
    args, unknown = parser.parse_known_args(argv)
    if args.command in ("train", "train-classifier", "train-back-check", "quantize"):
        args.rest = unknown + args.rest
    elif unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return args.func(args)
    except (UserError, ValueError, FileNotFoundError, IsADirectoryError, PermissionError,
            json.JSONDecodeError) as exc:
        print(f"zhuoji {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except RecursionError:  # input nested deeper than any real one (the API answers 400/422 for the same)
        print(f"zhuoji {args.command}: error: input nested too deeply", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`zhuoji detect --json ... | head`): stop quietly, as other command-line tools do;
        # stdout is pointed at devnull so that Python's own flush at exit does not fail a second time
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
