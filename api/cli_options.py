"""Options shared by several ``zhuoji`` subcommands (a module of its own, so the command modules import it
instead of each other)."""

from __future__ import annotations

import argparse


def add_win_context_options(p: argparse.ArgumentParser) -> None:
    """Rules preset and how the hand was won: shared by ``hand`` (text) and ``score`` (photo)."""
    p.add_argument("--rules", default="gy-normal", help="rules preset: gy-normal, gy-reduced, liupanshui")
    p.add_argument("--kong-draw", action="store_true", help="杠上花: won on a kong replacement draw")
    p.add_argument("--hot-discard", action="store_true", help="热炮: the discarder's first discard after his kong")
    p.add_argument("--robbed-kong", action="store_true", help="抢杠: won on another player's added kong")
    p.add_argument("--bao-ting", action="store_true", help="报听: this player declared ready at the start")
    p.add_argument("--discarder-bao-ting", action="store_true", help="杀报: the discarder declared 报听")
