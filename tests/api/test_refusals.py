"""Impossible input is refused the same way on every surface: the engine raises (``ValueError``, or
``TypeError`` for a value that is not tiles / a list at all), the API answers 422 with the engine's words, the
CLI prints one line and exits 2. Also: 报听 does not make a hand 叫牌 (docs/rules.md#engine-input), and 一炮多响 on a chicken
counts the one shared tile once (``yipao_chicken``)."""

from __future__ import annotations

import json

import pytest

from api.cli import main
from scoring import analyze_hand, settle
from scoring.rules import get_rules
from tests.scoring.settle_tables import column, example, paid, seat, table, zimo

PINGHU = "789m2345p123456s"  # + 5p: 平胡 (plain win)
PONG_HAND = "789m2345p123s"  # + [P:9s], + 5p


def refused(response, fragment: str) -> None:
    assert response.status_code == 422, response.text
    assert fragment in response.json()["error"]["message"], response.json()


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_refused(capsys: pytest.CaptureFixture[str], fragment: str, *argv: str) -> None:
    code, out, err = cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err, err


# ---------------------------------------------------------------------------------- not tiles at all


@pytest.mark.parametrize("concealed", [None, 123, 4.5])
def test_analyze_hand_refuses_non_tiles_with_type_error(concealed):
    with pytest.raises(TypeError, match="MPSZ text"):
        analyze_hand(concealed)


@pytest.mark.parametrize("melds", [5, "pong:5m", {"type": "pong", "tile": "5m"}])
def test_analyze_hand_refuses_melds_that_are_no_list(melds):
    with pytest.raises(TypeError, match="list of meld objects"):
        analyze_hand(PINGHU, "5p", melds=melds)


@pytest.mark.parametrize("body", [{"concealed": None}, {"concealed": 123}, {"concealed": PINGHU, "melds": 5}])
def test_api_refuses_non_tiles(text_client, body):
    r = text_client.post("/v1/hand", json=body)
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_request"


def test_cli_refuses_non_tiles(capsys):
    cli_refused(capsys, "unknown suit", "hand", "123x")
    cli_refused(capsys, "--meld '5'", "hand", PINGHU, "--meld", "5")


# --------------------------------------------------------------------------------- 杠上花 without a kong


def test_kong_draw_without_a_kong_is_refused_everywhere(text_client, capsys):
    with pytest.raises(ValueError, match="杠上花.*needs a kong"):
        analyze_hand(PINGHU, "5p", self_drawn=True, kong_draw=True)
    with pytest.raises(ValueError, match="杠上花.*needs a kong"):
        analyze_hand(PINGHU, None, kong_draw=True)  # waiting: the per-wait values would carry the +1
    refused(text_client.post("/v1/hand", json={"concealed": PINGHU, "win_tile": "5p", "self_drawn": True,
                                          "kong_draw": True}), "needs a kong")
    cli_refused(capsys, "needs a kong", "hand", PINGHU, "--win", "5p", "--self-drawn", "--kong-draw")
    # with a kong it is scored: W = 平胡自摸 2 + 1 (E3, docs/rules.md#examples)
    e3 = analyze_hand("123456p2278s", "9s", [{"type": "concealed_kong", "tile": "6m"}], True, kong_draw=True)
    assert e3.win_value == 3
    with pytest.raises(ValueError, match="杠上花"):
        settle(example("E1", outcome=zimo(1, "5p", kong_draw=True)))


# ------------------------------------------------------------------------------------------ 报听 with melds


@pytest.mark.parametrize("meld", [{"type": "pong", "tile": "9s", "from": 2},
                                  {"type": "kong", "tile": "9s", "from": 2},
                                  {"type": "concealed_kong", "tile": "9s"}])
def test_bao_ting_with_a_meld_is_refused(meld):
    # S4: after 报听 no 碰 and no 杠 of any kind, so every meld contradicts the flag.
    with pytest.raises(ValueError, match="报听.*locks the hand"):
        analyze_hand(PONG_HAND, "5p", [meld], bao_ting=True)
    with pytest.raises(ValueError, match="报听.*locks the hand"):
        analyze_hand(PONG_HAND, None, [meld], bao_ting=True)


def test_bao_ting_with_a_pong_is_refused_by_api_cli_and_settle(text_client, capsys):
    refused(text_client.post("/v1/hand", json={"concealed": PONG_HAND, "win_tile": "5p", "bao_ting": True,
                                          "melds": [{"type": "pong", "tile": "9s", "from": 2}]}), "locks the hand")
    cli_refused(capsys, "locks the hand", "hand", PONG_HAND, "--win", "5p", "--meld", "pong:9s", "--bao-ting")
    state = example("E2")
    state["players"][0]["bao_ting"] = True  # P0 holds [P:1s<3]
    with pytest.raises(ValueError, match="报听"):
        settle(state)
    refused(text_client.post("/v1/settle", json=state), "报听")
    # without melds the flag stands: 报听 winner W = max(1, 10)
    assert analyze_hand(PINGHU, "5p", bao_ting=True).win_value == 10


# -------------------------------------------------------------------------------------- non-boolean flags


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_self_drawn_must_be_a_boolean(text_client, value):
    with pytest.raises(ValueError, match="self_drawn"):
        analyze_hand(PINGHU, "5p", self_drawn=value)
    assert text_client.post("/v1/hand", json={"concealed": PINGHU, "win_tile": "5p", "self_drawn": value}
                       ).status_code == 422
    state = example("E1")
    state["outcome"]["self_drawn"] = value
    if value is not None:  # null means "not given": self-drawn when there is no discarder
        with pytest.raises(ValueError, match="self_drawn"):
            settle(state)


# --------------------------------------------------------------------------------- unknown keys in a meld


def test_unknown_meld_keys_are_refused(text_client, capsys, tmp_path):
    typo = {"type": "pong", "tile": "9s", "form": 2}  # "form" for "from"
    with pytest.raises(ValueError, match="unknown key.*'form'"):
        analyze_hand(PONG_HAND, "5p", [typo])
    state = example("E2")
    state["players"][0]["melds"][0]["form"] = 3
    with pytest.raises(ValueError, match="unknown key.*'form'"):
        settle(state)
    assert text_client.post("/v1/hand", json={"concealed": PONG_HAND, "win_tile": "5p", "melds": [typo]}
                       ).status_code == 422
    assert text_client.post("/v1/settle", json=state).status_code == 422
    path = tmp_path / "table.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    cli_refused(capsys, "players[0].melds[0].form: Extra inputs are not permitted", "settle", str(path))


# ---------------------------------------------------------------------------------------------- 底分 base


@pytest.mark.parametrize("base", [0, -1, 10**18, 1_000_001, True, 2.0, "5"])
def test_base_inside_the_rules_has_the_same_bound(text_client, capsys, base, tmp_path):
    with pytest.raises(ValueError, match="1 to 1,000,000"):
        get_rules({"preset": "gy-normal", "base": base})
    with pytest.raises(ValueError, match="1 to 1,000,000"):
        settle(example("E1", rules={"base": base}))
    with pytest.raises(ValueError, match="1 to 1,000,000"):
        settle(example("E1", base=base))
    settled = text_client.post("/v1/settle", json=example("E1", rules={"base": base}))
    assert settled.status_code == 422
    assert text_client.post("/v1/settle", json=example("E1", base=base)).status_code == 422
    hand = text_client.post("/v1/hand", json={"concealed": PINGHU, "win_tile": "5p", "rules": {"base": base}})
    assert hand.status_code == 422
    # the command line refuses in the service's words
    cli_refused(capsys, hand.json()["error"]["message"], "hand", PINGHU, "--win", "5p", "--rules",
                json.dumps({"base": base}))
    path = tmp_path / "table.json"
    path.write_text(json.dumps(example("E1", rules={"base": base})), encoding="utf-8")
    cli_refused(capsys, settled.json()["error"]["message"], "settle", str(path))


def test_base_bounds_are_inclusive_and_null_means_not_given(text_client):
    top = settle(example("E1", rules={"base": 1_000_000}))
    assert column(top, "total") == [v * 1_000_000 for v in (2, 10, -8, -4)]  # E1 (docs/rules.md#examples) × 底分
    plain = settle(example("E1"))
    assert settle(example("E1", base=None)) == plain
    api_null = text_client.post("/v1/settle", json=example("E1", base=None))
    assert api_null.status_code == 200 and api_null.json() == text_client.post("/v1/settle", json=example("E1")).json()
    with_rules_base = text_client.post("/v1/settle", json=example("E1", base=None, rules={"base": 3})).json()
    assert [p["total"] for p in with_rules_base["players"]] == [6, 30, -24, -12]


# --------------------------------------------------------------------------- 报听 but not ready at 黄牌


def test_bao_ting_does_not_make_a_hand_ready_at_a_draw(text_client, capsys, tmp_path):
    state = table([seat("1234567892256p"), seat("11m123p22346799s", bao_ting=True),
                   seat("234m567s888p33m67m"), seat("255668m5p223678s")], {"type": "draw"})
    result = settle(state)
    assert column(result, "ting") == [True, False, True, False]
    # P1 pays his 查叫 like any hand not ready: 10 to P0, 1 to P2 (before: he escaped it as "叫牌")
    assert paid(result, "hand") == {(1, 0): 10, (3, 0): 10, (1, 2): 1, (3, 2): 1}
    assert any("P1 (declared 报听 but not ready)" in line for line in result.explanation)
    api = text_client.post("/v1/settle", json=state).json()
    assert [p["ting"] for p in api["players"]] == [True, False, True, False]
    chajiao = text_client.post("/v1/chajiao", json={"players": [
        {"concealed": "1234567892256p"}, {"concealed": "11m123p22346799s", "bao_ting": True}]}).json()
    assert [p["ting"] for p in chajiao["players"] if p["given"]] == [True, False]
    assert [(t["from"], t["to"], t["fan"]) for t in chajiao["ledger"]] == [(1, 0, 10)]
    path = tmp_path / "draw.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    code, out, _ = cli(capsys, "settle", str(path), "--json")
    assert code == 0 and [p["ting"] for p in json.loads(out)["players"]] == [True, False, True, False]


def test_a_ready_bao_ting_player_is_still_ting():
    # E8 (docs/rules.md#examples): P3 declared 报听 and waits on 1s.
    from tests.scoring.settle_tables import EXAMPLES
    assert column(settle(EXAMPLES["E8"]), "ting")[3] is True


# ---------------------------------------------------------------------------- 一炮多响 on a chicken


def _two_winners_on_1s() -> dict:
    # P0 discards 1s; P2 (大对子, single wait) and P3 (大对子, 1s/22m) both win on it. 翻 3p → 4p.
    return table([seat("1234m2468p2468s9s"), seat("5789p3579s5678m1p"),
                  seat("1s555m666p777s999m"), seat("11s22m333m444p888s")],
                 {"type": "win", "winners": [2, 3], "win_tile": "1s", "discarder": 0}, flipped="3p")


def test_one_shared_winning_1s_counts_once_for_the_first_winner_from_the_discarders_next_seat():
    result = settle(_two_winners_on_1s())
    # P2 comes first from P0's 下家 (P1, P2, P3): his 1s + the winning 1s = 2; P3 only his two 1s + 444p = 5.
    chickens = paid(result, "chicken")
    assert chickens[(0, 2)] == 2 and chickens[(0, 3)] == 5
    assert column(result, "chicken") == [-7, -7, 1, 13]
    assert any("counts once, for P2" in line for line in result.explanation)


def test_the_each_switch_keeps_counting_the_shared_tile_for_every_winner(text_client):
    state = _two_winners_on_1s()
    state["rules"] = {"yipao_chicken": "each"}
    result = settle(state)
    assert paid(result, "chicken")[(0, 2)] == 2 and paid(result, "chicken")[(0, 3)] == 6
    assert column(result, "chicken") == [-8, -8, 0, 16]
    assert text_client.post("/v1/settle", json=state).json()["players"][3]["chicken"] == 16
    # the first winner is counted from the discarder's 下家: with P3 discarding, P0 before P2
    other = table([seat("1s555m666p777s999m"), seat("5789p3579s5678m1p"),
                   seat("11s22m333m444p888s"), seat("1234m2468p2468s9s")],
                  {"type": "win", "winners": [0, 2], "win_tile": "1s", "discarder": 3}, flipped="3p")
    assert paid(settle(other), "chicken")[(3, 0)] == 2 and paid(settle(other), "chicken")[(3, 2)] == 5
