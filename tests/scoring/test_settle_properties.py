"""Property tests: random legal tables settle to zero-sum components and a ledger that adds up.

Tables are dealt from a shuffled 108-tile wall: winners get complete hands built around the winning tile
(with a 豆 or a big shape when they win on a discard, so the 豆 gate lets them), the others random tiles with
optional melds, everyone a random river; flags and rule switches are random.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from scoring import settle
from scoring.tiles import TILES
from tests.scoring.settle_tables import EXAMPLES

KONG_TYPES = ("kong", "added_kong", "concealed_kong")


class Pool:
    """Tile counts left in the wall."""

    def __init__(self) -> None:
        self.counts = [4] * 27

    def take(self, i: int, n: int = 1) -> list[str]:
        assert self.counts[i] >= n
        self.counts[i] -= n
        return [TILES[i]] * n

    def random_tiles(self, rng: random.Random, n: int) -> list[str]:
        wall = [TILES[i] for i, c in enumerate(self.counts) for _ in range(c)]
        picked = rng.sample(wall, n)
        for t in picked:
            self.counts[TILES.index(t)] -= 1
        return picked


def _group_options(pool: Pool, triplets_only: bool, must: int | None = None) -> list[tuple[str, int]]:
    c = pool.counts
    options = [("triplet", i) for i in range(27) if c[i] >= 3 and must in (None, i)]
    if not triplets_only:
        options += [("run", i) for i in range(27) if i % 9 <= 6 and c[i] and c[i + 1] and c[i + 2]
                    and must in (None, i, i + 1, i + 2)]
    return options


def _take_group(pool: Pool, kind: str, i: int) -> list[str]:
    if kind == "triplet":
        return pool.take(i, 3)
    return [*pool.take(i), *pool.take(i + 1), *pool.take(i + 2)]


def _meld(rng: random.Random, pool: Pool, owner: int, kong: bool) -> dict[str, Any] | None:
    need = 4 if kong else 3
    choices = [i for i in range(27) if pool.counts[i] >= need]
    if not choices:
        return None
    i = rng.choice(choices)
    pool.take(i, need)
    kind = rng.choice(KONG_TYPES) if kong else "pong"
    meld: dict[str, Any] = {"type": kind, "tile": TILES[i]}
    if kind in ("kong", "pong") or (kind == "added_kong" and rng.random() < 0.5):
        meld["from"] = rng.choice([s for s in range(4) if s != owner])
    if kind in ("concealed_kong", "added_kong") and rng.random() < 0.2:
        meld["late"] = True
    return meld


def complete_hand(rng: random.Random, pool: Pool, owner: int, win: int, *, big: bool, kong: bool,
                  run_only: bool = False) -> tuple[list[str], list[dict[str, Any]]] | None:
    """A complete hand holding the winning tile ``win``; returns (concealed without one ``win``, melds).

    The shared winning tile is added to the pool for this hand, so the pool loses only the other copies used.
    ``big``: all triplets or 七对 (beats 平胡 for the 豆 gate); ``kong``: one kong meld; ``run_only``: the
    winning tile sits in a run (抢杠, where the other three copies are the robbed pong).
    """
    pool.counts[win] += 1
    melds: list[dict[str, Any]] = []
    if big and not kong and rng.random() < 0.3:  # 七对, possibly with a concealed quad
        if pool.counts[win] < 2:
            return None
        tiles = pool.take(win, 2)
        while len(tiles) < 14:
            pairs = [i for i in range(27) if pool.counts[i] >= 2]
            if not pairs:
                return None
            tiles += pool.take(rng.choice(pairs), 2)
        tiles.remove(TILES[win])
        return tiles, melds
    first = _group_options(pool, big, must=win) if not run_only else [
        ("run", i) for i in range(max(0, win - 2), win + 1)
        if i % 9 <= 6 and i // 9 == win // 9 and all(pool.counts[j] for j in (i, i + 1, i + 2))]
    pair_first = not run_only and pool.counts[win] >= 2 and rng.random() < 0.3
    if pair_first:
        tiles = pool.take(win, 2)
    else:
        if not first:
            return None
        tiles = _take_group(pool, *rng.choice(first))
        pairs = [i for i in range(27) if pool.counts[i] >= 2]
        if not pairs:
            return None
        tiles += pool.take(rng.choice(pairs), 2)
    sets_left = 4 - (0 if pair_first else 1)
    if kong:
        meld = _meld(rng, pool, owner, kong=True)
        if meld is None:
            return None
        melds.append(meld)
        sets_left -= 1
    while sets_left:
        if rng.random() < 0.2:
            meld = _meld(rng, pool, owner, kong=False)
            if meld is not None:
                melds.append(meld)
                sets_left -= 1
                continue
        options = _group_options(pool, big)
        if not options:
            return None
        tiles += _take_group(pool, *rng.choice(options))
        sets_left -= 1
    tiles.remove(TILES[win])
    return tiles, melds


def waiting_player(rng: random.Random, pool: Pool, owner: int) -> dict[str, Any]:
    """13 random tiles (3 per meld), sometimes 报听 when there are no melds."""
    melds = []
    for _ in range(rng.choice((0, 0, 1, 2))):
        meld = _meld(rng, pool, owner, kong=rng.random() < 0.5)
        if meld is not None:
            melds.append(meld)
    concealed = pool.random_tiles(rng, 13 - 3 * len(melds))
    return {"concealed": concealed, "melds": melds, "bao_ting": not melds and rng.random() < 0.1}


def random_rules(rng: random.Random) -> dict[str, Any]:
    rules: dict[str, Any] = {"preset": rng.choice(("gy-normal", "gy-reduced", "liupanshui"))}
    switches = {
        "dou_not_ting": ("void", "reverse"), "chicken_scope": ("mantang", "shoushang"),
        "chicken_requires_ting": (True, False), "bao_ji": (True, False),
        "chicken_payers": ("all_others", "non_ting_only"), "chongfeng_mode": ("replace", "additive"),
        "wuguji": (True, False), "yipao_reverse": (True, False), "dealer_bonus": (True, False),
        "huang_dealer": ("s2", "qq", "stay"), "dead_wait_counts": (True, False),
        "qianggang_burn": (True, False), "repao_burn": (True, False), "baoting_win": ("max", "add", "replace"),
        "zimo_bonus": ("pinghu_only", "none", "all_plus1"), "hanbao_dou_scores": (True, False),
        "base": (1, 2, 5), "yipao_dealer": ("gy", "lps"),
    }
    for key, values in switches.items():
        if rng.random() < 0.3:
            rules[key] = rng.choice(values)
    return rules


def random_table(rng: random.Random) -> dict[str, Any] | None:
    pool = Pool()
    players: list[dict[str, Any] | None] = [None] * 4
    kind = rng.choice(("self_drawn", "discard", "discard", "multi", "robbed", "draw", "false_win", "pass_lock"))
    outcome: dict[str, Any]
    if kind in ("draw", "false_win"):
        outcome = {"type": "draw"} if kind == "draw" else {"type": "false_win", "player": rng.randrange(4)}
    elif kind == "pass_lock":
        p = rng.randrange(4)
        win = rng.randrange(27)
        pool.take(win)
        built = complete_hand(rng, pool, p, win, big=rng.random() < 0.5, kong=rng.random() < 0.3)
        if built is None:
            return None
        players[p] = {"concealed": built[0], "melds": built[1]}
        outcome = {"type": "pass_lock_penalty", "player": p, "win_tile": TILES[win]}
    else:
        discarder = None if kind == "self_drawn" else rng.randrange(4)
        others = [s for s in range(4) if s != discarder]
        count = rng.choice((2, 3)) if kind == "multi" else 1
        winners = sorted(rng.sample(others, count))
        if kind == "robbed":
            win = rng.choice([i for i in range(27) if pool.counts[i] == 4])
            pool.take(win, 4)  # the robbed pong and the 4th tile that the winner takes
        else:
            win = rng.randrange(27)
            pool.take(win)
        for w in winners:
            on_discard = kind in ("discard", "multi")
            kong = rng.random() < (0.5 if on_discard else 0.2)
            built = complete_hand(rng, pool, w, win, big=on_discard and not kong, kong=kong,
                                  run_only=kind == "robbed")
            if built is None:
                return None
            players[w] = {"concealed": built[0], "melds": built[1]}
        if kind == "robbed":
            assert discarder is not None
            extra = [] if rng.random() < 0.5 else [_meld(rng, pool, discarder, kong=True)]
            melds = [{"type": "pong", "tile": TILES[win]}, *(m for m in extra if m)]
            players[discarder] = {"concealed": pool.random_tiles(rng, 13 - 3 * len(melds)), "melds": melds}
        outcome = {"type": "win", "winners": winners, "win_tile": TILES[win], "self_drawn": discarder is None,
                   "discarder": discarder, "robbed_kong": kind == "robbed"}
    for s in range(4):
        if players[s] is None:
            players[s] = waiting_player(rng, pool, s)
    state_players: list[dict[str, Any]] = [p for p in players if p is not None]
    for p in state_players:
        p.setdefault("bao_ting", False)
        if p["melds"]:
            p["bao_ting"] = False
        p["river"] = pool.random_tiles(rng, min(rng.randrange(7), sum(pool.counts)))
    if outcome["type"] == "win":
        d = outcome["discarder"]
        winner_melds = state_players[outcome["winners"][0]]["melds"]
        if outcome["self_drawn"]:
            outcome["kong_draw"] = any(m["type"] != "pong" for m in winner_melds) and rng.random() < 0.5
        elif not outcome["robbed_kong"]:
            outcome["hot_discard"] = any(m["type"] != "pong" for m in state_players[d]["melds"]) \
                and rng.random() < 0.5
    flipped = None
    if outcome["type"] == "win" and sum(pool.counts) and rng.random() < 0.8:
        flipped = pool.random_tiles(rng, 1)[0]
    first = None
    river_1s = [s for s in range(4) if "1s" in state_players[s]["river"]]
    claimed = [(m["from"], s) for s in range(4) for m in state_players[s]["melds"]
               if m["tile"] == "1s" and m["type"] != "concealed_kong" and "from" in m]
    if claimed and rng.random() < 0.5:
        first = {"discarder": claimed[0][0], "claimed_by": claimed[0][1]}
    elif river_1s and rng.random() < 0.8:
        first = {"discarder": rng.choice(river_1s), "claimed_by": None}
    return {"rules": random_rules(rng), "dealer": rng.randrange(4), "streak": rng.randint(1, 4),
            "players": state_players, "outcome": outcome, "flipped": flipped, "first_1s": first}


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False))
def test_random_tables_settle_to_zero_sum(rng: random.Random):
    state = random_table(rng)
    assume(state is not None)
    result = settle(state)

    ledger = result.ledger
    assert all(t.fan > 0 and t.payer != t.payee for t in ledger)
    for key in ("hand", "dou", "chicken", "total"):
        assert sum(getattr(p, key) for p in result.players) == 0
    for seat, player in enumerate(result.players):
        for key in ("hand", "dou", "chicken"):
            received = sum(t.fan for t in ledger if t.payee == seat and t.component == key)
            paid = sum(t.fan for t in ledger if t.payer == seat and t.component == key)
            assert getattr(player, key) == received - paid
        assert player.total == player.hand + player.dou + player.chicken
        assert player.total == sum(result.matrix[j][seat] - result.matrix[seat][j] for j in range(4))
    assert sum(map(sum, result.matrix)) == sum(t.fan for t in ledger)
    outcome = state["outcome"]
    if outcome["type"] == "win":
        assert all(result.players[w].ting for w in outcome["winners"])
    else:
        assert all(t.component == "hand" for t in ledger)  # no 豆/鸡 without a win
    assert 0 <= result.next_dealer < 4 and result.next_streak >= 1


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 30) | st.floats(allow_nan=False) | st.text(max_size=4)
    | st.sampled_from(["1s", "5m", "9p", "0m", "pong", "kong", "win", "draw", "gy-normal", "123m"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=2),
    max_leaves=4)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(sorted(EXAMPLES)), rng=st.randoms(use_true_random=False), value=JSON_VALUES,
       delete=st.booleans())
def test_mutated_tables_give_a_result_or_a_value_error(name, rng, value, delete):
    """Bad input never escapes as anything but ValueError: replace or delete one random node of a table."""
    state = copy.deepcopy(EXAMPLES[name])
    node: Any = state
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            break
        key = rng.choice(keys)
        child = node[key]
        if isinstance(child, (dict, list)) and child and rng.random() < 0.6:
            node = child
            continue
        if delete and isinstance(node, dict):
            del node[key]
        else:
            node[key] = value
        break
    try:
        result = settle(state)
    except ValueError:
        return
    assert sum(p.total for p in result.players) == 0
