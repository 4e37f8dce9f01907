"""Tables that keep score: /v1/tables (a table, its rounds, undo, edit, export) and /v1/profiles (house rules).

A table's writes need its edit key, the list of every table and saving a profile the admin key
(``api.service.table_keys``); reading a table by its id or view id is free.

Plain ``def`` routes: FastAPI runs them in its thread pool, where the database calls block. The store is
``app.state.tables`` (:class:`api.service.table_store.LazyStore`). Errors use the project's one shape; a stale write
gets 409 with the table as it is now next to the error, so the client can reload and retry.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import JSONResponse

from api.service.deps import stale_answer, store_errors, table_store
from api.service.errors import ApiError
from api.service.responses import ErrorResponse
from api.service.table_keys import KEY_ERRORS, AdminKey, EditKey
from pipeline.table_models import (
    Payments,
    ProfileIn,
    ProfileList,
    ProfileOut,
    RoundAdded,
    RoundList,
    RoundOut,
    RoundPost,
    StaleTable,
    TableCreate,
    TableCreated,
    TableExport,
    TableList,
    TableOut,
    TableUpdated,
)
from tables import RoundRecord, StaleVersion, TableRecord
from tables.export import to_csv, to_json
from tables.payments import settle_up
from tables.repository import MAX_OFFSET

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorResponse, "description": "no such table, round or profile"},
    409: {"model": StaleTable, "description": "stale expected_version: the current table comes with the error; "
                                              "or table_finished: the table was finished (结账)"},
    422: {"model": ErrorResponse, "description": "invalid input, with the reason; nothing was changed"},
    503: {"model": ErrorResponse, "description": "the database cannot be reached"}}

router = APIRouter(prefix="/v1", tags=["tables"], responses=ERRORS)
ExpectedVersion = Annotated[int, Query(ge=1, description="the table version this change was based on")]
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=200,
                                              description="a retry with the same key stores the round once")]
EXPORT: dict[str, Any] = {"model": TableExport, "description": "the history: CSV with format=csv, JSON with format=json",
                          "content": {"text/csv": {"schema": {"type": "string"}}}}
_KEY = re.compile(r"[\x21-\x7e]{1,200}")


@router.post("/tables", status_code=201, response_model=TableCreated, summary="Start a table of four players")
def create_table(request: Request, req: TableCreate) -> TableCreated:
    """Four named players, their rules (a preset, ``{"preset", …overrides}``, or a saved house ``profile``)
    and the first dealer (庄家). The answer holds the table's edit key, once: every write to the table needs
    it (``Authorization: Bearer <edit_key>``); ``view_url`` reads the table and cannot write."""
    store = table_store(request)
    with store_errors("invalid_table"):
        keyed = store.create_table(req.name, req.players, req.rules, req.dealer, req.profile)
    return TableCreated.of_keyed(keyed)


@router.get("/tables", response_model=TableList, summary="Tables, newest first (the admin key)",
            dependencies=[AdminKey], responses=KEY_ERRORS)
def list_tables(request: Request, limit: Annotated[int, Query(ge=1, le=100)] = 20,
                offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0) -> TableList:
    with store_errors():
        tables, total = table_store(request).list_tables(limit, offset)
    return TableList(tables=[TableOut.of(t) for t in tables], total=total, limit=limit,
                     offset=offset)


@router.get("/tables/{table_id}", response_model=TableOut, summary="One table: totals, dealer, streak, version")
def get_table(request: Request, table_id: str) -> TableOut:
    with store_errors():
        return TableOut.of(table_store(request).get_table(table_id))


@router.delete("/tables/{table_id}", status_code=204, summary="Delete a table and its rounds",
               dependencies=[EditKey], responses=KEY_ERRORS)
def delete_table(request: Request, table_id: str) -> Response:
    with store_errors():
        table_store(request).delete_table(table_id)
    return Response(status_code=204)


@router.post("/tables/{table_id}/finish", response_model=TableOut,
             summary="Finish the table (结账): no more rounds, edits or undos", dependencies=[EditKey],
             responses=KEY_ERRORS)
def finish_table(request: Request, table_id: str) -> TableOut:
    """Round writes then answer 409 ``table_finished``; finishing again changes nothing."""
    with store_errors():
        return TableOut.of(table_store(request).finish_table(table_id))


@router.get("/tables/{table_id}/payments", response_model=Payments,
            summary="Who pays whom (结账): the fewest transfers, in money")
def payments(request: Request, table_id: str,
             per_point: Annotated[float, Query(gt=0, le=1_000_000, allow_inf_nan=False,
                                               description="the money a point is worth (default 1)")] = 1) -> Payments:
    """The totals squared with the fewest transfers (at most 3 for four players), each ``points × per_point``
    rounded to the cent; every seat's net equals its total."""
    with store_errors():
        table = table_store(request).get_table(table_id)
        return Payments.of(settle_up(table.totals, str(per_point)))


@router.post("/tables/{table_id}/rounds", status_code=201, response_model=RoundAdded,
             summary="Add a round: settled, dealer and streak carried on, totals updated",
             dependencies=[EditKey], responses=KEY_ERRORS)
def add_round(request: Request, table_id: str, req: RoundPost,
              idempotency_key: IdempotencyKey = None) -> RoundAdded | JSONResponse:
    """The ``/v1/settle`` body without rules, dealer, streak and base, plus the table version it was entered
    against. A retry with the same ``Idempotency-Key`` stores the round once and gets the same answer."""
    if idempotency_key is not None and not _KEY.fullmatch(idempotency_key):
        raise ApiError(422, "invalid_request", "Idempotency-Key: 1 to 200 printable ASCII characters")
    store = table_store(request)
    try:
        with store_errors():
            added, replayed = store.add_round(table_id, req.round, req.expected_version, idempotency_key)
    except StaleVersion as exc:
        return stale_answer(exc)
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    return JSONResponse(RoundAdded.of(added).model_dump(mode="json", by_alias=True), status_code=201,
                        headers=headers)


@router.get("/tables/{table_id}/rounds", response_model=RoundList, summary="Every round with its settlement")
def list_rounds(request: Request, table_id: str) -> RoundList:
    with store_errors():
        rounds = table_store(request).list_rounds(table_id)
    return RoundList(rounds=[RoundOut.of(r) for r in rounds])


@router.put("/tables/{table_id}/rounds/{number}", response_model=TableUpdated,
            summary="Edit a round; later rounds are settled again", dependencies=[EditKey], responses=KEY_ERRORS)
def replace_round(request: Request, table_id: str, number: int, req: RoundPost) -> TableUpdated | JSONResponse:
    try:
        with store_errors():
            table = table_store(request).replace_round(table_id, number, req.round, req.expected_version)
    except StaleVersion as exc:
        return stale_answer(exc)
    return TableUpdated(table=TableOut.of(table))


@router.delete("/tables/{table_id}/rounds/{number}", response_model=TableUpdated,
               summary="Undo any round; later rounds move up and are settled again", dependencies=[EditKey],
               responses=KEY_ERRORS)
def remove_round(request: Request, table_id: str, number: int,
                 expected_version: ExpectedVersion) -> TableUpdated | JSONResponse:
    try:
        with store_errors():
            table = table_store(request).remove_round(table_id, number, expected_version)
    except StaleVersion as exc:
        return stale_answer(exc)
    return TableUpdated(table=TableOut.of(table))


@router.get("/tables/{table_id}/export", summary="History as CSV (one row per round) or JSON",
            responses={200: EXPORT})
def export(request: Request, table_id: str, format: Literal["csv", "json"] = "csv") -> Response:
    store = table_store(request)
    with store_errors():
        table = store.get_table(table_id)
        rounds = store.list_rounds(table_id)
    return export_answer(table, rounds, format)


def export_answer(table: TableRecord, rounds: list[RoundRecord], format: Literal["csv", "json"],
                  by_view: bool = False) -> Response:
    """The export as a download; ``by_view``: named by the view id and without the table's id."""
    filename = f"zhuoji-table-{table.view_id if by_view else table.id}.{format}"
    headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
    if format == "csv":
        return Response(to_csv(table, rounds), media_type="text/csv; charset=utf-8", headers=headers)
    return Response(to_json(table, rounds, by_view).model_dump_json(), media_type="application/json", headers=headers)


@router.put("/profiles/{name}", response_model=ProfileOut, summary="Save house rules under a name (the admin key)",
            dependencies=[AdminKey], responses=KEY_ERRORS)
def save_profile(request: Request, name: str, req: ProfileIn) -> ProfileOut:
    """Rules given, or copied from a table (``{"table": id}``); a new table can start from them with
    ``"profile": name``. Saving a name again replaces its rules (tables made from it keep their copy)."""
    with store_errors("invalid_profile"):
        profile = table_store(request).save_profile(name, req.rules, req.table)
    return ProfileOut.of(profile)


@router.get("/profiles", response_model=ProfileList, summary="Saved house rules")
def list_profiles(request: Request) -> ProfileList:
    with store_errors():
        return ProfileList(profiles=[ProfileOut.of(p) for p in table_store(request).list_profiles()])


@router.get("/profiles/{name}", response_model=ProfileOut, summary="One saved house profile")
def get_profile(request: Request, name: str) -> ProfileOut:
    with store_errors():
        return ProfileOut.of(table_store(request).get_profile(name))
