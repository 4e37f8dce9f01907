"""The round a camera over the table proposes (``zhuoji live --table --server``), on its way to the table screen.

Live mode reads the round (:class:`pipeline.live_table.RoundWatch`, the read-table answer) and posts it with the
frame it was read on as :class:`ProposalIn` to ``POST /v1/tables/{id}/proposal``; the store keeps the latest per
table until a round is saved or the proposal is dismissed; ``GET`` answers :class:`TableProposal`. A proposal is
never a round by itself: the page fills its round form from it, exactly as from a photo of the table, and the
players correct, preview and save.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Protocol

import cv2
import numpy as np
from pydantic import Field, ValidationError, field_validator

from pipeline.model_base import OutModel, StrictModel
from pipeline.table_photo import TableReading

MAX_FRAME_BYTES = 512 * 1024  # the frame as JPEG; its base64 stays well inside the service's 1 MB JSON bodies
FRAME_SIDE = 1280  # px, the frame's longer side as sent: the page draws the boxes over it, a phone shows ~400 px
FRAME_QUALITIES = (80, 65, 50)  # JPEG qualities tried in turn until the frame fits MAX_FRAME_BYTES
JPEG_START = b"\xff\xd8\xff"


class ProposalIn(StrictModel):
    """``POST /v1/tables/{id}/proposal``: the round as the camera read it, and the frame it was read on."""

    table: TableReading = Field(description="the read-table answer (POST /v1/read-table's body) of the frame")
    frame: str | None = Field(None, max_length=(MAX_FRAME_BYTES + 2) // 3 * 4,
                              description="the frame the table was read on: a JPEG, base64 (at most 512 kB); the "
                                          "boxes of table.detections are in its pixels")

    @field_validator("frame")
    @classmethod
    def _jpeg(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                data = base64.b64decode(value, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError("frame is a JPEG in base64") from None
            if not data.startswith(JPEG_START):
                raise ValueError("frame is a JPEG in base64: these bytes are no JPEG")
        return value

    def frame_bytes(self) -> bytes | None:
        return None if self.frame is None else base64.b64decode(self.frame)


class ProposalOut(OutModel):
    """A proposed round waiting for the players: ``id`` tells it from the next one."""

    id: str
    table: TableReading = Field(description="the round as the camera read it (the read-table answer)")
    frame: str | None = Field(description="the frame it was read on, a JPEG in base64 (null: none was sent)")
    created_at: str


class StoredProposal(Protocol):
    """A proposal as the table store keeps it (``tables.ProposalRecord``)."""

    id: str
    reading: dict[str, Any]
    frame: bytes | None
    created_at: str


class TableProposal(OutModel):
    """``GET /v1/tables/{id}/proposal``: the table's proposed round, null when none waits."""

    proposal: ProposalOut | None

    @classmethod
    def of(cls, kept: StoredProposal | None) -> TableProposal:
        """From the store's record (None: no proposal). One kept by an older version whose reading no longer
        validates is no proposal either: the camera proposes the next round anew."""
        if kept is None:
            return cls(proposal=None)
        try:
            table = TableReading.model_validate(kept.reading)
        except ValidationError:
            return cls(proposal=None)
        shown = None if kept.frame is None else base64.b64encode(kept.frame).decode("ascii")
        return cls(proposal=ProposalOut(id=kept.id, table=table, frame=shown, created_at=kept.created_at))


def proposal_body(reading: TableReading, frame: np.ndarray | None) -> ProposalIn:
    """What live mode posts: the reading and its frame as a JPEG of at most ``FRAME_SIDE`` px (the reading's boxes
    scaled with it), at the best quality of ``FRAME_QUALITIES`` that fits ``MAX_FRAME_BYTES`` (none fits: no frame)."""
    if frame is None:
        return ProposalIn(table=reading)
    height, width = frame.shape[:2]
    scale = min(1.0, FRAME_SIDE / max(height, width))
    if scale < 1.0:
        frame = cv2.resize(frame, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
        detections = [d.model_copy(update={"box": [round(v * scale, 1) for v in d.box]}) for d in reading.detections]
        reading = reading.model_copy(update={"detections": detections})
    for quality in FRAME_QUALITIES:
        ok, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
        if ok and len(jpeg) <= MAX_FRAME_BYTES:
            return ProposalIn(table=reading, frame=base64.b64encode(jpeg.tobytes()).decode("ascii"))
    return ProposalIn(table=reading)
