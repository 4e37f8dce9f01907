"""The ``zhuoji`` command line: a thin shell over the pipeline's stage functions.

Each subcommand is ``add_<name>(subparsers)`` registering ``func(args) -> int``. Errors a user can cause
(bad tiles, missing files, bad JSON) print one line to stderr and exit with code 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence


class UserError(Exception):
    """A problem with the user's input: printed as a message, exit code 2."""


def _print_json(obj: object) -> None:
    print(json.dumps(obj, ensure_ascii=False))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zhuoji", description="Camera scorer for Guiyang 捉鸡 mahjong (tiles in MPSZ: 123m456p789s)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (add_waits,):
        add(sub)
    return parser


def add_waits(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("waits", help="tiles that complete a hand (听牌 waits)")
    p.add_argument("concealed", help="concealed tiles, e.g. 1112345678999m")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run_waits)


def run_waits(args: argparse.Namespace) -> int:
    from scoring import waits

    result = waits(args.concealed)
    if args.json:
        _print_json({"concealed": args.concealed, "waits": result})
    else:
        print(" ".join(result) if result else "not ready (no tile completes this hand)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (UserError, ValueError, FileNotFoundError, IsADirectoryError, PermissionError,
            json.JSONDecodeError) as exc:
        print(f"zhuoji {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
