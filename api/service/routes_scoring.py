"""Routes that score text: /v1/hand, /v1/settle, /v1/chajiao, and the rules they score by (/v1/rules). No photo,
no detector.

Plain ``def`` routes: FastAPI runs them in its thread pool, so the event loop stays free while the engine
enumerates waits.
"""

from __future__ import annotations

from fastapi import APIRouter

from api.service.responses import ErrorResponse
from pipeline.hand import analyze, chajiao_request, settle_table
from pipeline.models import (
    ChajiaoRequest,
    ChajiaoResponse,
    HandAnalysis,
    HandRequest,
    SettleRequest,
    SettleResponse,
)
from pipeline.rules import RulesCatalogue, catalogue

ERRORS = {400: {"model": ErrorResponse, "description": "not JSON"},
          413: {"model": ErrorResponse, "description": "body over 1 MB"},
          422: {"model": ErrorResponse, "description": "impossible hand or table, with the reason"}}

router = APIRouter(prefix="/v1", tags=["scoring"], responses=ERRORS)


@router.post("/hand", response_model=HandAnalysis, summary="Score or read the waits of one hand (牌型, 听牌)")
def post_hand(req: HandRequest) -> HandAnalysis:
    """One player's hand as MPSZ text.

    With ``win_tile``: 牌型 hand type (中文 + English), fan, win value W after 自摸 (self-draw) / 杠上花
    (kong-replacement win) / 报听 (declared ready), every reading, and whether the win may be taken on a
    discard (胡牌通行证, the 豆 gate). Without: 叫牌 (ready) or not, and per wait its type, fan and the copies
    still unseen (``seen`` = other tiles in view).
    """
    return analyze(req)


@router.post("/settle", response_model=SettleResponse, summary="Settle a whole table (hand fan, 豆, 鸡)")
def post_settle(req: SettleRequest) -> SettleResponse:
    """The table at the end of a hand → the ledger: who pays whom, hand fan (牌型), 豆 (kongs) and
    鸡 (chickens), each player's net, the next dealer (docs/rules.md#dou to #settlement)."""
    return settle_table(req)


@router.post("/chajiao", response_model=ChajiaoResponse, summary="黄牌查叫: exhaustive-draw check of 2–4 hands")
def post_chajiao(req: ChajiaoRequest) -> ChajiaoResponse:
    """Hands shown at 黄牌 (the wall ran out, nobody won): who is 叫牌 (ready), their waits and best fan, and
    who pays whom (docs/rules.md#chajiao). Photos: ``POST /v1/chajiao/photos``."""
    return chajiao_request(req)


@router.get("/rules", response_model=RulesCatalogue, summary="The presets, every rules switch, example house profiles")
def get_rules_catalogue() -> RulesCatalogue:
    """Everything a house-rules panel shows, as data: the presets with every switch's value, the switches grouped
    with a one-line explanation each (中文 + English) and their choices, example regional house profiles and the
    round fields some switches need (``weekday`` for 星期鸡). A rules object sent to any endpoint is
    ``{"preset": NAME, <switch>: value, ...}``."""
    return catalogue()
