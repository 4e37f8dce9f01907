"""Rounds for the table tests, as a client enters them (the ``/v1/settle`` body without rules, dealer,
streak and base), and the keys a client writes with."""

from __future__ import annotations

import copy
import re
from typing import Any

import httpx

from pipeline.table_models import RoundIn

ADMIN_KEY = "admin key of the table tests"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
_TABLE_PATH = re.compile(r"/v1/tables/([^/]+)")


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def remember_keys(client: httpx.Client) -> dict[str, str]:
    """Make ``client`` write as the page does: it keeps each table's edit key from the ``POST /v1/tables`` answer
    and sends it with every write to that table that carries no ``Authorization`` of its own. Returns the kept
    keys by table id (a test may change or drop one)."""
    keys: dict[str, str] = {}

    def keep(response: httpx.Response) -> None:
        if response.request.method == "POST" and response.request.url.path == "/v1/tables" \
                and response.status_code == 201:
            response.read()
            keys[response.json()["id"]] = response.json()["edit_key"]

    def send(request: httpx.Request) -> None:
        match = _TABLE_PATH.match(request.url.path)
        if match and request.method != "GET" and "authorization" not in request.headers \
                and match[1] in keys:
            request.headers["Authorization"] = f"Bearer {keys[match[1]]}"

    client.event_hooks = {"request": [*client.event_hooks["request"], send],
                          "response": [*client.event_hooks["response"], keep]}
    return keys

def entered(round_: dict[str, Any]) -> RoundIn:
    """A round as the store takes it: checked by the contract's model, as the service and the CLI check theirs."""
    return RoundIn.model_validate(round_)


# docs/rules.md#examples E1 (平胡 自摸, 翻鸡 4m, 冲锋鸡): seat 1 wins on 5p. Rotated, any seat can win it.
E1_PLAYERS = [
    {"concealed": "56m23344556788s", "melds": [], "river": "", "bao_ting": False},
    {"concealed": "123456s234p789m5p", "melds": [], "river": "", "bao_ting": False},
    {"concealed": "224567m2468p799s", "melds": [], "river": "1s", "bao_ting": False},
    {"concealed": "3467889m7p11247s", "melds": [], "river": "", "bao_ting": False},
]


def win_round(winner: int = 1) -> dict[str, Any]:
    """E1 turned so that ``winner`` has the winning hand: a 平胡 自摸 (plain self-drawn win) on 5p."""
    shift = (winner - 1) % 4
    return {"players": [copy.deepcopy(E1_PLAYERS[(seat - shift) % 4]) for seat in range(4)],
            "outcome": {"type": "win", "winners": [winner], "win_tile": "5p", "self_drawn": True, "discarder": None},
            "flipped": "4m", "first_1s": {"discarder": (2 + shift) % 4, "claimed_by": None}}


def draw_round() -> dict[str, Any]:
    """黄牌 (exhaustive draw) with E1's hands: seats 0 and 1 are 叫牌 (ready), 2 and 3 pay them."""
    return {"players": copy.deepcopy(E1_PLAYERS), "outcome": {"type": "draw"}, "flipped": None, "first_1s": None}


def impossible_round() -> dict[str, Any]:
    """Well-formed but refused by the engine: a 平胡 without a 豆 may not win on a discard (胡牌通行证)."""
    r = win_round(1)
    r["outcome"].update(self_drawn=False, discarder=3)
    return r
