"""The round a camera over the table proposes: ``/v1/tables/{id}/proposal``.

``zhuoji live --table --server …`` posts each round it reads (the read-table answer and the frame it was read on,
:class:`pipeline.proposal.ProposalIn`) with the table's edit key; the table screen polls ``GET`` (free, as a table
read is) and shows it; the players fill the round form from it, correct and save, or dismiss it (``DELETE``). The
latest proposal per table is kept in the database (shared by every worker and replica); saving a round clears it,
and it never becomes a round by itself.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from api.service.deps import store_errors, table_store
from api.service.routes_tables import ERRORS
from api.service.table_keys import KEY_ERRORS, EditKey
from pipeline.proposal import ProposalIn, ProposalOut, TableProposal

router = APIRouter(prefix="/v1", tags=["tables"], responses=ERRORS)
ProposalId = Annotated[str | None, Query(max_length=16, pattern=r"^[0-9a-f]+$",
                                         description="dismiss only this proposal (the one shown): a newer one stays")]


@router.post("/tables/{table_id}/proposal", response_model=ProposalOut, status_code=201,
             summary="Propose a round read by a camera over the table (the players confirm it on the table screen)",
             dependencies=[EditKey], responses=KEY_ERRORS)
async def post_proposal(request: Request, table_id: str, body: ProposalIn) -> ProposalOut:
    """Replaces the table's proposal, if any (the latest wins). The table itself is unchanged (its version too);
    a finished table takes none (409 ``table_finished``)."""
    store = table_store(request)
    with store_errors("invalid_proposal"):
        kept = await run_in_threadpool(store.set_proposal, table_id, body.table.model_dump(mode="json"),
                                       body.frame_bytes())
    return ProposalOut(id=kept.id, table=body.table, frame=body.frame, created_at=kept.created_at)


@router.get("/tables/{table_id}/proposal", response_model=TableProposal,
            summary="The round a camera proposes for this table (null when none waits)",
            responses={304: {"description": "unchanged since the ETag sent in If-None-Match"}})
def get_proposal(request: Request, table_id: str,
                 if_none_match: Annotated[str | None, Header(max_length=100)] = None) -> Response:
    """The page asks every few seconds: the answer's ETag names the proposal, so asking again with it
    (``If-None-Match``, as browsers do by themselves) is a 304 without the frame while nothing changed."""
    store = table_store(request)
    with store_errors():
        answer = TableProposal.of(store.get_proposal(table_id))
    headers = {"ETag": f'"{answer.proposal.id if answer.proposal else "none"}"', "Cache-Control": "no-cache"}
    if if_none_match == headers["ETag"]:
        return Response(status_code=304, headers=headers)
    return JSONResponse(answer.model_dump(mode="json"), headers=headers)


@router.delete("/tables/{table_id}/proposal", status_code=204, response_class=Response,
               summary="Dismiss the proposed round (saving a round clears it too)",
               dependencies=[EditKey], responses=KEY_ERRORS)
def delete_proposal(request: Request, table_id: str, proposal: ProposalId = None) -> Response:
    """204 whether or not one was waiting: dismissing twice, or after a phone saved the round, is no error."""
    store = table_store(request)
    with store_errors():
        store.clear_proposal(table_id, proposal)
    return Response(status_code=204)
