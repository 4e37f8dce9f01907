"""The service's own answers beside the pipeline's typed values (``pipeline.models``): errors and health."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from pipeline.model_base import OutModel
from pipeline.models import ErrorBody


class ErrorResponse(BaseModel):
    error: ErrorBody


class Health(OutModel):
    status: Literal["ok", "no_model"]
    model_loaded: bool
    model: str | None = Field(description="the tile model's file name")
    classifier: str | None = Field(None, description="the crop classifier that takes a second look at each tile "
                                                     "(file name)")
    back_check: str | None = Field(None, description="the back check that tells face-down tiles (闷豆) from flat "
                                                     "things of a back's colour (file name)")
    version: str
    classes: int


class ReadinessCheckResult(OutModel):
    ok: bool
    detail: str


class Readiness(OutModel):
    status: Literal["ready", "not_ready"]
    checks: dict[str, ReadinessCheckResult]
