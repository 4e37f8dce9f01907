"""``POST /v1/read-table``: one photo of the whole table at the end of a round → the round (four seats' hands,
melds and rivers, the flipped tile, a winner guess), as the pipeline's :func:`pipeline.table_photo.read_table_bytes`
answers it. The upload is checked and run as the other photo routes' (``api.service.routes_vision``)."""

from __future__ import annotations

from typing import Annotated, BinaryIO

from fastapi import APIRouter, File, Request, UploadFile

from api.service.deps import loaded_detector
from api.service.routes_vision import ERRORS
from api.service.uploads import checked_upload
from pipeline.photo import Deadline, Detector
from pipeline.table_photo import TableReading, read_table_bytes, table_reading

router = APIRouter(prefix="/v1", tags=["photos"], responses=ERRORS)
TableImage = Annotated[UploadFile, File(description="photo of the whole table, every hand laid face up (JPEG, PNG, "
                                                    "WebP, BMP, TIFF)")]


def _read_table(detector: Detector, data: BinaryIO, deadline: Deadline | None = None) -> TableReading:
    # A photo job, in a worker: the answer alone (the command line also draws the read photo).
    return table_reading(read_table_bytes(detector, data, "image", deadline))


@router.post("/read-table", response_model=TableReading, summary="Read the whole table from one photo")
async def post_read_table(request: Request, image: TableImage) -> TableReading:
    """Seats 0..3 (0 nearest the bottom of the photo, then in the order of play: 1 right, 2 top, 3 left), each with
    its concealed hand in laid order, its melds and its river (discards in order); the flipped tile (翻鸡) by the
    wall; the seat whose tiles make a complete hand (a guess, for the players to confirm); retake reasons (e.g. 5
    copies of a tile read: the photo is impossible as read); every box with its seat and role."""
    data = await checked_upload(image)
    detector = loaded_detector(request)
    return await request.app.state.runner.run(_read_table, detector, data, is_disconnected=request.is_disconnected)
