"""A table keeps its set's calibration ("teach it your set"): ``/v1/tables/{id}/calibration`` (GET, PUT the JSON,
DELETE) and ``POST /v1/tables/{id}/calibrate`` (a photo of the 27 suited tiles in three rows, calibrated and kept).

Once kept, /v1/read and /v1/score name the tiles of a photo sent with ``table={id}`` with it
(``pipeline.calibration.with_kept``). Writes bump the table's version like any other (409 with the current
table when ``expected_version`` is given and stale); errors have the table API's shapes.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body, File, Query, Request, UploadFile
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from api.service.deps import loaded_detector, stale_answer, store_errors, table_store
from api.service.errors import ApiError
from api.service.routes_tables import ERRORS
from api.service.table_keys import KEY_ERRORS, EditKey
from api.service.uploads import checked_upload
from pipeline.calibration import calibrate_bytes, calibration_problem, check_calibration
from pipeline.models import CalibrationFile, CalibrationIn
from pipeline.table_models import CalibrationOut, TableCalibration, TableOut
from tables import CalibrationRecord, StaleVersion, TableRecord, TableStore

router = APIRouter(prefix="/v1", tags=["tables"], responses=ERRORS)
MaybeVersion = Annotated[int | None, Query(ge=1, description="refuse (409) unless the table is at this version")]


def _answer(request: Request, table: TableRecord, calibration: CalibrationRecord | None) -> TableCalibration:
    out = None
    if calibration is not None:
        detector = getattr(request.app.state, "detector", None)
        out = CalibrationOut.of(calibration, calibration_problem(detector, calibration.model, calibration.kind,
                                                                 calibration.model_sha256))
    return TableCalibration(calibration=out, table=TableOut.of(table))


def _keep(request: Request, store: TableStore, table_id: str, calibration: CalibrationFile,
          expected_version: int | None) -> TableCalibration | JSONResponse:
    try:
        with store_errors():
            try:
                table, kept = store.set_calibration(table_id, calibration, expected_version)
            except ValueError as exc:  # the summary fields: named as what they are, not as a round
                raise ApiError(422, "invalid_calibration", str(exc)) from None
    except StaleVersion as exc:
        return stale_answer(exc)
    return _answer(request, table, kept)


@router.get("/tables/{table_id}/calibration", response_model=TableCalibration,
            summary="The table's calibration of its own tile set (null when none)")
def get_calibration(request: Request, table_id: str,
                    full: Annotated[bool, Query(description="include the calibration JSON (~75 kB)")] = False
                    ) -> TableCalibration:
    store = table_store(request)
    with store_errors():
        table = store.get_table(table_id)
        kept = store.get_calibration(table_id, full)
    return _answer(request, table, kept)


@router.put("/tables/{table_id}/calibration", response_model=TableCalibration,
            summary="Keep a calibration (the JSON /v1/calibrate or `zhuoji calibrate` made) with the table",
            dependencies=[EditKey], responses=KEY_ERRORS)
def put_calibration(request: Request, table_id: str,
                    calibration: Annotated[CalibrationIn, Body(description="the calibration JSON")],
                    expected_version: MaybeVersion = None) -> TableCalibration | JSONResponse:
    """Replaces the table's calibration; its photos sent to /v1/read or /v1/score with ``table`` are then named
    with it. A body that is no calibration is a 422: ``invalid_request`` for its shape, ``invalid_calibration`` for
    references that do not parse."""
    return _keep(request, table_store(request), table_id, check_calibration(calibration), expected_version)


@router.post("/tables/{table_id}/calibrate", response_model=TableCalibration,
             summary="Teach the table its set: calibrate from a photo of its 27 suited tiles and keep it",
             dependencies=[EditKey], responses=KEY_ERRORS)
async def post_calibrate(request: Request, table_id: str, image: Annotated[UploadFile, File(
        description="the 27 suited tiles face up in three rows: 1–9m, 1–9p, 1–9s")],
        expected_version: MaybeVersion = None) -> TableCalibration | JSONResponse:
    """``POST /v1/calibrate`` and ``PUT …/calibration`` in one: the answer says how many of the 27 tiles the
    networks named as their place says and which they named otherwise. A photo without 27 tiles in three rows of
    nine is a 422 (``calibration_photo``) saying what was found; the table's calibration is then unchanged."""
    store = table_store(request)
    with store_errors():
        await run_in_threadpool(store.get_table, table_id)  # an unknown table: 404 before any model runs
    data = await checked_upload(image)
    detector = loaded_detector(request)
    calibration = await request.app.state.runner.run(calibrate_bytes, detector, data,
                                                     is_disconnected=request.is_disconnected)
    return await run_in_threadpool(_keep, request, store, table_id, calibration, expected_version)


@router.delete("/tables/{table_id}/calibration", response_model=TableCalibration,
               summary="Forget the table's calibration: its photos are read with the shipped models only",
               dependencies=[EditKey], responses=KEY_ERRORS)
def delete_calibration(request: Request, table_id: str,
                       expected_version: MaybeVersion = None) -> TableCalibration | JSONResponse:
    try:
        with store_errors():
            table, _ = table_store(request).clear_calibration(table_id, expected_version)
    except StaleVersion as exc:
        return stale_answer(exc)
    return _answer(request, table, None)
