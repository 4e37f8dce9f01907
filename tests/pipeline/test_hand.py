"""``pipeline/hand.py``: typed requests in, the engine's stages, typed answers out; and the edge models' own
conversions to the engine's frozen values (``SettleRequest.to_table``), which must agree with the JSON adapter
``scoring.table.parse_table`` that scripts use."""

from __future__ import annotations

import pytest

from pipeline.errors import Refused
from pipeline.hand import (
    analyze,
    chajiao_request,
    meld_from_text,
    settle_table,
    typed_hand_request,
)
from pipeline.models import ChajiaoRequest, HandRequest, MeldIn, SettleRequest, SettleResponse
from scoring import settle
from scoring.table import parse_table
from tests.scoring.settle_tables import EXAMPLES, example


def test_fourteen_typed_tiles_take_the_last_written_one_as_the_win():
    req, assumptions = typed_hand_request("123m456p789s11s55p5p", None, [], self_drawn=True)
    assert req.win_tile == "5p" and req.concealed == "123m45556p11789s"  # 456p 55p 5p less the winning 5p
    assert assumptions == ["14 tiles: took the last one, 5p, as the winning tile (--win picks another)"]
    req, assumptions = typed_hand_request("123m456p789s11s555p", "1s", [])
    assert req.win_tile == "1s" and assumptions == [] and req.concealed == "123m455556p1789s"  # 11s less one
    with pytest.raises(Refused, match="9m is not among the 14 tiles"):
        typed_hand_request("123m456p789s11s555p", "9m", [])


def test_thirteen_tiles_and_a_meld_stay_as_typed():
    req, assumptions = typed_hand_request("123456p2278s", "9s", [MeldIn(type="concealed_kong", tile="6m")])
    assert (req.concealed, req.win_tile, assumptions) == ("123456p2278s", "9s", [])


def test_a_meld_as_text():
    assert meld_from_text("pong:5m") == MeldIn(type="pong", tile="5m")
    with pytest.raises(Refused, match=r"--meld 'bong:5m': expected TYPE:TILE with TYPE one of pong, kong"):
        meld_from_text("bong:5m", "--meld ")
    with pytest.raises(Refused, match="not a tile of the 108-tile set"):
        meld_from_text("pong:5z")


def test_a_won_hand_counts_the_copies_left_of_its_waits():
    # 789m 234p 123s 456s + 55p: before the win it waited on 2p or 5p (the pair 55p with 234p, or 2345p's ends)
    analysis = analyze(HandRequest(concealed="789m2345p123456s", win_tile="5p", self_drawn=True))
    assert analysis.status == "win" and analysis.hand_type is not None and analysis.hand_type.key == "pinghu"
    assert analysis.win_value == 2  # 平胡 1 fan, +1 for 自摸 (docs/rules.md#win-value)
    # 2p: one in the hand, so 3 unseen; 5p: one in the hand and the winning tile, so 2 unseen
    assert [(w.tile, w.copies_left) for w in analysis.waits] == [("2p", 3), ("5p", 2)]
    assert analysis.chickens is not None and [(c.tile, c.count) for c in analysis.chickens.tiles] == [("1s", 1)]


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_typed_table_settles_as_the_json_adapter_does(name):
    state = example(name)
    typed = settle_table(SettleRequest.model_validate(state))
    assert typed == SettleResponse.of(settle(parse_table(state)))
    assert typed.model_dump(mode="json") == settle(state).to_dict()  # the same JSON as the engine's own form


def test_the_typed_table_refuses_in_the_engines_words():
    state = example("E1")
    state["players"][2] = {"not_ready": True, "river": "1m"}
    with pytest.raises(ValueError) as engine:
        parse_table(state)
    with pytest.raises(Refused) as refused:
        settle_table(SettleRequest.model_validate(state))
    assert refused.value.code == "invalid_table" and refused.value.message == str(engine.value)


def test_the_draw_check_makes_the_unready_pay_the_ready_their_best_fan():
    answer = chajiao_request(ChajiaoRequest(players=[
        {"concealed": "1112345678999m"},  # 九莲 shape: ready on every 1m..9m (清一色, one suit)
        {"concealed": "258m258p258s147p9s"},  # scattered tiles: no tile completes them
    ]))
    ready, unready = answer.players[0], answer.players[1]
    assert ready.ting and not unready.ting and ready.best_fan > 0
    # docs/rules.md#chajiao: each non-叫牌 seat pays each 叫牌 seat its best type fan; seats not given take no part
    assert [(t.from_, t.to, t.fan) for t in answer.ledger] == [(1, 0, ready.best_fan)]
    assert (ready.total, unready.total) == (ready.best_fan, -ready.best_fan)
    assert [p.given for p in answer.players] == [True, True, False, False] and answer.next_dealer is None
