"""Quick rounds: a seat that did not win told instead of shown (``{"ready": true, "holds": …}`` or
``{"not_ready": true, …}`` with its melds and river) settles exactly as its full hand would (scoring.table).

The property: for every win of the rules test cases — the worked examples of docs/rules.md#examples (settle_tables.py,
test_settle_examples.py), the tables built in test_settle_rules.py, each under every preset and under each
rule switch of test_settle_rules.py / test_house_rules.py, and with other flipped tiles — each non-winner's
full hand replaced by its summary (ready = the full settlement found it 叫牌; holds = the tiles of its hand
that could be chickens: 1s, 8p and the tile after the flipped one, whatever the rules) gives the same ledger
and totals, the same next dealer and the same 叫牌 flags.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scoring import settle
from scoring.results import Settlement
from scoring.tiles import parse_tiles
from tests.scoring.settle_tables import EXAMPLES, column, example, first_1s, ron, seat, table
from tests.scoring.test_settle_rules import bao_ting_winner, three_winners

# Every switch the rules tests turn, one at a time (test_settle_rules.py, test_house_rules.py), plus the
# chicken and 叫牌 switches a summary could get wrong.
SWITCHES: list[dict[str, Any]] = [
    {}, {"bao_ji": False}, {"chicken_requires_ting": False}, {"chongfeng_mode": "additive"},
    {"dealer_bonus": True}, {"wuguji": True}, {"wuguji": True, "wuguji_value": 1},
    {"wuguji": True, "wuguji_chongfeng": True}, {"chicken_payers": "non_ting_only"}, {"qianggang_burn": True},
    {"qianggang_burn": False}, {"zeren_extra": 2}, {"dou_not_ting": "reverse"}, {"dou_values": "2/3/1"},
    {"repao_burn": False}, {"repao_extra": 0}, {"chicken_scope": "shoushang"}, {"yipao_reverse": True},
    {"yipao_dealer": "lps"}, {"bao_ji_shared": True}, {"chongfeng_moves": True}, {"zeren_scope": "all"},
    {"yipao_chicken": "each"}, {"dead_wait_counts": False}, {"hanbao_dou_scores": False}, {"base": 3},
]
PRESETS = ("gy-normal", "gy-reduced", "liupanshui")


def _wins() -> dict[str, dict[str, Any]]:
    """The win tables of the rules tests, by name."""
    wins = {name: state for name, state in EXAMPLES.items() if state["outcome"]["type"] == "win"}
    wins["E1 first 8p"] = example("E1", first_8p={"discarder": 3})
    wins["E2 golden"] = example("E2", flipped="9s")
    wins["E6 flipped 7p"] = example("E6", flipped="7p")
    wins["E8 1s claimed"] = example("E8", first_1s=first_1s(0, claimed_by=3))
    wins["E9 dealer 2"] = example("E9", dealer=2)
    wins["E12 dealer 0"] = example("E12", dealer=0)
    wins["three winners"] = three_winners()
    wins["bao ting winner"] = bao_ting_winner("gy-normal")
    # A not-叫牌 seat with a chicken pong and 1s in its river, a 叫牌 seat with an exposed kong and chickens.
    wins["chickens everywhere"] = table(
        [seat("234m567p99s11s", "K:6p<1", river="1s"),
         seat("345m678m22p456s1s"),
         seat("1369m258p147s8p", "P:1s<3", river=["8p", "1s"]),
         seat("2377m55p888s", "P:9m", river="9s")],
        ron([1], "1s", 3), flipped="7p", first_1s=first_1s(3, claimed_by=2))
    return wins


WINS = _wins()
CANDIDATES = {"1s", "8p"}


def _rules(state: dict[str, Any], preset: str, switch: dict[str, Any]) -> dict[str, Any]:
    return {**copy.deepcopy(state), "rules": {"preset": preset, **switch}}


def _next(tile: str) -> str:
    return f"{int(tile[0]) % 9 + 1}{tile[1]}"


def quick(state: dict[str, Any], full: Settlement | None) -> dict[str, Any]:
    """Every non-winner told: 叫牌 as the full settlement found (no settlement: not 叫牌), holding the tiles
    that could be chickens."""
    state = copy.deepcopy(state)
    winners = state["outcome"]["winners"]
    candidates = CANDIDATES | ({_next(state["flipped"])} if state.get("flipped") else set())
    for s, player in enumerate(state["players"]):
        if s in winners:
            continue
        holds = [t for t in parse_tiles(player["concealed"]) if t in candidates]
        ready = full is not None and full.players[s].ting
        told: dict[str, Any] = {"ready": True, "holds": holds} if ready else {"not_ready": True}
        if holds and not ready:
            told["holds"] = "".join(holds)  # MPSZ text works as well as a list
        state["players"][s] = {**told, "melds": player.get("melds", []), "river": player.get("river", ""),
                               "bao_ting": player.get("bao_ting", False)}
    return state


def _cases() -> list[tuple[str, str, dict[str, Any]]]:
    return [(name, preset, switch) for name in WINS for preset in PRESETS for switch in SWITCHES]


def _settled(state: dict[str, Any]) -> Settlement | None:
    try:
        return settle(state)
    except ValueError:
        return None  # a win these rules refuse (a 豆 gate, 过水): the summary must be refused too


def test_the_cases_cover_many_settlements():
    settled = [r for name, preset, switch in _cases() if (r := _settled(_rules(WINS[name], preset, switch)))]
    assert len(settled) > 500
    assert any(not all(p.ting for p in r.players) for r in settled)  # some non-winner not 叫牌
    assert any(sum(p.chicken != 0 for p in r.players) >= 3 for r in settled)


@pytest.mark.parametrize("name", WINS)
def test_a_summary_of_each_non_winner_settles_as_the_full_hands(name):
    for preset in PRESETS:
        for switch in SWITCHES:
            state = _rules(WINS[name], preset, switch)
            full = _settled(state)
            if full is None:  # the winner's hand refused (a 豆 gate): refused told too
                with pytest.raises(ValueError):
                    settle(quick(state, None))
                continue
            short = settle(quick(state, full))
            where = f"{name} under {preset} {switch}"
            assert [t.to_dict() for t in short.ledger] == [t.to_dict() for t in full.ledger], where
            assert column(short, "total") == column(full, "total"), where
            assert column(short, "ting") == column(full, "ting"), where
            assert (short.next_dealer, short.next_streak) == (full.next_dealer, full.next_streak), where


def test_e1_told_and_what_the_explanation_says():
    # docs/rules.md#examples E1: P1 self-draws 5p; P0 is 叫牌 (56m… waits 4m7m), P2 and P3 are not. Told: P0 ready holding the
    # 翻鸡 5m (F = 4m), P2 not ready with the 冲锋鸡 1s in his river, P3 not ready holding 1s (worth nothing: he is
    # not 叫牌, and a 1s in hand is no 包鸡).
    state = example("E1")
    state["players"][0] = {"ready": True, "holds": "5m"}
    state["players"][2] = {"not_ready": True, "river": "1s"}
    state["players"][3] = {"not_ready": True, "holds": "1s"}
    assert column(settle(state), "total") == column(settle(EXAMPLES["E1"]), "total")
    lines = settle(state).explanation
    assert "P0: ready (叫牌), as told; holds 5m" in lines
    assert "P3: not ready (not 叫牌), as told; holds 1s" in lines
    assert "P0 (said ready, hand not shown)" in lines[1]


def test_a_non_chicken_tile_held_is_worth_nothing_but_counts_as_a_copy():
    state = example("E1")
    state["players"][0] = {"ready": True, "holds": "5m9p"}
    assert column(settle(state), "total") == column(settle(EXAMPLES["E1"]), "total")
    state["players"][0] = {"ready": True, "holds": "5p5p5p"}  # with the 5p won on, a 5th: 5p is in P1's hand too
    with pytest.raises(ValueError, match="more than 4 copies .* 5p ×5"):
        settle(state)


@pytest.mark.parametrize("seat_value, fragment", [
    ({"ready": True, "concealed": "56m23344556788s"}, "give no concealed"),
    ({"ready": True, "not_ready": True}, "both ready and not_ready"),
    ({"ready": True, "holds": "11s88p555m999p33m", "melds": [{"type": "pong", "tile": "2m"}]},
     "at most 10 concealed"),
    ({"ready": True, "holds": "1x"}, "P0 holds"),
    ({"ready": True, "melds": [{"type": "pong", "tile": "2m"}], "bao_ting": True}, "报听"),
    ({"ready": "yes"}, "must be true or false"),
])
def test_a_summary_that_does_not_fit_is_refused(seat_value, fragment):
    state = example("E1")
    state["players"][0] = seat_value
    with pytest.raises(ValueError, match=fragment):
        settle(state)


def test_a_claimed_first_1s_needs_the_claimers_pong_even_when_told():
    state = example("E2")
    state["players"][0] = {"ready": True, "holds": ""}  # the 1s pong of P0 left out
    with pytest.raises(ValueError, match="P0 claimed the first 1s, so P0 needs a pong or kong of 1s"):
        settle(state)


def test_a_not_ready_seat_with_a_kong_pays_no_kong_and_its_river_chickens_are_bao_ji():
    # E3: P3's 转弯豆 of 9p is void because P3 is not 叫牌; told so, it stays void.
    state = example("E3")
    state["players"][3] = {"not_ready": True, "melds": [{"type": "added_kong", "tile": "9p"}]}
    assert column(settle(state), "dou") == column(settle(EXAMPLES["E3"]), "dou")
    # Told ready instead, the same kong scores 3 from each other player (docs/rules.md#dou: 转弯豆 3).
    state["players"][3] = {"ready": True, "melds": [{"type": "added_kong", "tile": "9p"}]}
    assert settle(state).players[3].dou - settle(EXAMPLES["E3"]).players[3].dou == 9
