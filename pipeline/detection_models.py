"""The detector's answer (``POST /v1/detect``, ``zhuoji detect --json``): every box, its tile name and confidence.

A module of its own so that a detection alone loads neither the rules engine nor the other answers' models.
"""

from __future__ import annotations

from pydantic import Field

from pipeline.model_base import OutModel


class Alternative(OutModel):
    tile: str
    p: float


class DetectedTile(OutModel):
    index: int = Field(description="box index, referred to by the reading")
    tile: str = Field(description="detector's class: a tile, back (face down) or other")
    box: list[float] = Field(description="x1, y1, x2, y2 in image pixels")
    confidence: float
    alternatives: list[Alternative]


class ImageInfo(OutModel):
    width: int
    height: int


class DetectResponse(OutModel):
    image: ImageInfo
    count: int
    tiles: list[DetectedTile]
    model: str
    seconds: float = Field(description="server time for decoding and detection")
