"""A table read by its view id (``/v1/views/{view_id}``, its rounds and export): the view link ``/t/{view_id}``
shows the table and its history, read only. The answers never hold the table's id, which is what writes name."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request, Response

from api.service.deps import store_errors, table_store
from api.service.errors import ApiError
from api.service.responses import ErrorResponse
from api.service.routes_tables import EXPORT, export_answer
from pipeline.table_models import Payments, RoundList, RoundOut, TableView
from tables import TableNotFound, TableRecord, TableStore
from tables.payments import settle_up

router = APIRouter(prefix="/v1/views", tags=["tables"], responses={
    404: {"model": ErrorResponse, "description": "no table has this view id (`table_not_found`)"},
    422: {"model": ErrorResponse, "description": "invalid input (a query parameter), with the reason"},
    503: {"model": ErrorResponse, "description": "the database cannot be reached"}})


def _viewed(store: TableStore, view_id: str) -> TableRecord:
    with store_errors():
        try:
            return store.get_view(view_id)
        except TableNotFound as exc:
            raise ApiError(404, "table_not_found", str(exc.args[0])) from None


@router.get("/{view_id}", response_model=TableView, summary="A table by its view id: totals, dealer, streak")
def get_view(request: Request, view_id: str) -> TableView:
    return TableView.of(_viewed(table_store(request), view_id))


@router.get("/{view_id}/rounds", response_model=RoundList, summary="A table's rounds by its view id")
def view_rounds(request: Request, view_id: str) -> RoundList:
    store = table_store(request)
    table = _viewed(store, view_id)
    with store_errors():
        rounds = store.list_rounds(table.id)
    return RoundList(rounds=[RoundOut.of(r) for r in rounds])


@router.get("/{view_id}/export", summary="A table's history by its view id, as CSV or JSON",
            responses={200: EXPORT})
def view_export(request: Request, view_id: str, format: Literal["csv", "json"] = "csv") -> Response:
    store = table_store(request)
    table = _viewed(store, view_id)
    with store_errors():
        rounds = store.list_rounds(table.id)
    return export_answer(table, rounds, format, by_view=True)


@router.get("/{view_id}/payments", response_model=Payments, summary="Who pays whom (结账), by the view id")
def view_payments(request: Request, view_id: str,
                  per_point: Annotated[float, Query(gt=0, le=1_000_000, allow_inf_nan=False,
                                                    description="the money a point is worth (default 1)")] = 1
                  ) -> Payments:
    """As ``GET /v1/tables/{id}/payments``: the other phones see who pays whom at the end of the evening."""
    table = _viewed(table_store(request), view_id)
    return Payments.of(settle_up(table.totals, str(per_point)))
