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
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from api.cli.options import CommandParser, add_win_context_options, rules_option, win_flags
from api.cli.output import print_model

if TYPE_CHECKING:
    from pipeline.models import HandAnalysis, MeldIn, SettleResponse


class UserError(Exception):
    """A problem with the user's input: printed as a message, exit code 2."""


MAX_JSON_BYTES = 1024 * 1024  # as the API's JSON limit: a whole table state is a few kB


def read_json_object(path: str, what: str) -> dict[str, Any]:
    """A JSON object from a file (``-``: stdin), bounded; anything else is a one-line error."""
    from pipeline.files import read_bounded

    data = sys.stdin.buffer.read(MAX_JSON_BYTES + 1) if path == "-" else read_bounded(path, MAX_JSON_BYTES)
    if len(data) > MAX_JSON_BYTES:
        raise UserError(f"{path}: over {MAX_JSON_BYTES // 1024} kB")
    try:
        obj = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise UserError(f"{path}: JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise UserError(f"{path} must hold a JSON object ({what})")
    return obj


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zhuoji", description="Camera scorer for Guiyang 捉鸡 mahjong (tiles in MPSZ: 123m456p789s)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=CommandParser)
    from api.cli.calibrate_commands import add_calibrate
    from api.cli.rules_commands import add_rules
    from api.cli.service_commands import add_live, add_serve
    from api.cli.table_commands import add_chajiao, add_table
    from api.cli.table_photo_commands import add_read_table
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
                add_train_back_check, add_quantize, add_serve, add_live, add_table, add_chajiao, add_calibrate, add_rules,
                add_read_table):
        add(sub)
    return parser


def add_waits(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("waits", help="tiles that complete a hand (听牌 waits)")
    p.add_argument("concealed", help="concealed tiles, e.g. 1112345678999m")
    _add_meld_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output: the body of POST /v1/hand")
    p.set_defaults(func=run_waits)


def run_waits(args: argparse.Namespace) -> int:
    from pipeline.hand import analyze
    from pipeline.models import HandRequest

    analysis = analyze(HandRequest(concealed=args.concealed, melds=_melds(args.meld)))
    if args.json:
        print_model(analysis)
    else:
        waits = [w.tile for w in analysis.waits]
        print(" ".join(waits) if waits else "not ready (no tile completes this hand)")
    return 0


def _add_meld_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--meld", action="append", default=[], metavar="TYPE:TILE",
                   help="a laid meld, repeatable: pong:5m, kong:4m (点豆), added_kong:5p (转弯豆), "
                        "concealed_kong:9s (闷豆)")


def _melds(specs: Sequence[str]) -> list[MeldIn]:
    """``["pong:5m", "concealed_kong:9s"]`` → melds; a malformed one is a one-line error naming it."""
    from pipeline.hand import meld_from_text

    return [meld_from_text(spec, "--meld ") for spec in specs]


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
    p.add_argument("--json", action="store_true", help="machine-readable output: the body of POST /v1/hand (an "
                                                      "assumption made is said on stderr)")
    p.set_defaults(func=run_hand)


def run_hand(args: argparse.Namespace) -> int:
    from pipeline.hand import analyze, typed_hand_request

    req, assumptions = typed_hand_request(args.concealed, args.win, _melds(args.meld), rules=rules_option(args.rules),
                                          flipped=args.flipped, self_drawn=args.self_drawn, **win_flags(args))
    analysis = analyze(req)
    if args.json:
        print_model(analysis)
        for line in assumptions:
            print(f"assumed: {line}", file=sys.stderr)
        return 0
    print("\n".join([*assumptions, *_hand_lines(analysis)]))
    return 0


def _hand_lines(analysis: HandAnalysis) -> list[str]:
    """The analysis in words, its chickens last: held under which 翻鸡 (flipped chicken), or none."""
    from pipeline.hand import CHICKENS_HELD

    chickens = analysis.chickens
    lines = [line for line in analysis.explanation if not line.startswith(CHICKENS_HELD)]
    if chickens is None:
        return lines
    shown = ", ".join(f"{c.tile}×{c.count} {c.label}" for c in chickens.tiles)
    flip = "" if chickens.flipped is None else f" (翻 {chickens.flipped} → {chickens.flipped_chicken})"
    return [*lines, f"{CHICKENS_HELD}{flip}: " + (f"{shown} = {chickens.total}" if shown else "none")]


def add_settle(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("settle", help="settle a whole table: hand fan, 豆 (kongs), 鸡 (chickens), next dealer")
    p.add_argument("table", help="table state JSON file (- for stdin): the body of POST /v1/settle (examples in "
                                 "tests/data/tables)")
    p.add_argument("--rules", metavar="RULES", help="rules preset gy-normal, gy-reduced, liupanshui or dushan, or a JSON "
                                                    "object {\"preset\": ..., <switch>: value}; replaces the file's "
                                                    "preset and adds to its rule overrides (zhuoji rules lists them)")
    p.add_argument("--json", action="store_true", help="machine-readable output: the body POST /v1/settle answers")
    p.set_defaults(func=run_settle)


def run_settle(args: argparse.Namespace) -> int:
    from pipeline.hand import settle_table
    from pipeline.models import SettleRequest

    state = read_json_object(args.table, "the table state")
    if args.rules is not None:
        file_rules = state.get("rules")
        overrides = dict(file_rules) if isinstance(file_rules, dict) else {}
        if isinstance(file_rules, str):
            overrides["preset"] = file_rules
        given = rules_option(args.rules)
        state["rules"] = {**overrides, **(given if isinstance(given, dict) else {"preset": given})}
    result = settle_table(SettleRequest.model_validate(state))
    if args.json:
        print_model(result)
    else:
        print("\n".join(_settle_lines(result)))
    return 0


def _settle_lines(result: SettleResponse) -> list[str]:
    """Human-readable settlement: one row per player, the itemized ledger, the next dealer."""
    lines = [f"Rules: {result.rules.preset}, 底分 (base) {result.rules.base}", "",
             # CJK characters are two columns wide: "叫牌" fills 4 of its 6, "豆"/"鸡" 2 of their 6.
             f"{'seat':<10}叫牌  {'waits':<14}{'hand':>6}    豆    鸡{'total':>7}  win"]
    for p in result.players:
        seat = f"P{p.seat}" + (" dealer" if p.dealer else "")
        ready = "yes" if p.ting else "no"
        waits = " ".join(p.waits) or "-"
        win = f"{p.win.name} {p.win.fan} (W {p.win.value})" if p.win else ""
        if p.burned:
            win = (win + " 全烧 burned").strip()
        lines.append(f"{seat:<10}{ready:<6}{waits:<14}{p.hand:>6}{p.dou:>6}{p.chicken:>6}{p.total:>+7}  {win}")
    lines += ["", "Ledger:"]
    lines += [f"  {t.component:<8}P{t.from_} → P{t.to} {t.fan:>3}  {t.reason}" for t in result.ledger]
    if not result.ledger:
        lines.append("  (no payments)")
    lines += ["", "Explanation:", *(f"  {line}" for line in result.explanation)]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    from pipeline.limits import cap_decoded_pixels

    cap_decoded_pixels()  # before any command loads OpenCV
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
    except ValidationError as exc:  # a request model refused the input: one line, as the service words it
        from pipeline.errors import validation_line

        print(f"zhuoji {args.command}: error: {validation_line(exc)}", file=sys.stderr)
        return 2
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
