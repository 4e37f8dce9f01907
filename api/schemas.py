"""The contract of the HTTP API (shown at ``/docs``): the pipeline's typed values (``pipeline.models``) plus
the service's own answers (errors, health).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pipeline.models import (  # noqa: F401 - re-exported: the models are the pipeline's, the contract is here
    Alternative,
    ChajiaoPlayer,
    ChajiaoPlayerResult,
    ChajiaoRequest,
    ChajiaoResponse,
    ChajiaoWait,
    ChickenOut,
    ChickensOut,
    DetectedTile,
    DetectResponse,
    DrawOutcome,
    ErrorBody,
    ErrorDetail,
    FalseWinOutcome,
    FirstOneS,
    HandAnalysis,
    HandRead,
    HandRequest,
    HandTypeOut,
    ImageInfo,
    MeldIn,
    MeldRead,
    Mpsz,
    OptionalTile,
    OutModel,
    PassLockOutcome,
    PlayerIn,
    PlayerSettlement,
    Preset,
    ReadResponse,
    ReadTile,
    RetakeReason,
    RulesSpec,
    ScoreContext,
    ScoreResponse,
    Seat,
    SettleRequest,
    SettleResponse,
    Tile,
    TransferOut,
    WaitOut,
    WinContext,
    WinOut,
    WinOutcome,
)


class ErrorResponse(BaseModel):
    error: ErrorBody


class Health(OutModel):
    status: Literal["ok", "no_model"]
    model_loaded: bool
    model: str | None
    classifier: str | None = Field(None, description="the crop classifier that takes a second look at each tile")
    back_check: str | None = Field(None, description="the back check that tells face-down tiles (闷豆) from flat "
                                                     "things of a back's colour")
    version: str
    classes: int
