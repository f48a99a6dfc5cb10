"""The member registry: staff find members by name, the manager reads and changes it. broker.storage.members audits each change."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from pydantic import Field
from starlette.concurrency import run_in_threadpool

from broker.accounts.staff import Staff
from broker.domain.people.membership import MAX_IMPORT_BYTES, normalize_uid
from broker.hall.facade import HubFacade
from broker.hall.read_models import HallReads
from broker.people.member_views import MemberFound, MemberView
from broker.people.members import AddMember, AssignCard, EditMember, ImportMembers, ImportReport, RecordFee, RemoveCard
from dashboard import access
from dashboard.api.auth import can
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.errors import TOO_LARGE
from dashboard.api.schemas import CardIn, FeeIn, MemberIn, MemberPatch, text

router = APIRouter(prefix="/members", tags=["members"])

SearchText = Annotated[str, text(100, 0)]


def _member(reads: HallReads, member_id: int) -> MemberView:
    member = reads.people.member(member_id)
    if member is None:
        raise HTTPException(404, f"no member {member_id}: search by name to find the right id")
    return member


@router.get(
    "",
    # The manager's view first: a full member is written as a MemberView, with its note and cards.
    response_model=list[Annotated[MemberView | MemberFound, Field(union_mode="left_to_right")]],
    summary="Search members by name (any words, accents and case ignored); notes, cards and fees for the manager only",
)
def list_members(
    reads: Reads,
    user: Annotated[Staff, Depends(can("members.search"))],
    q: Annotated[SearchText, Query(description="Words of the name, e.g. zadrazil")] = "",
    limit: int = Query(50, ge=1, le=500),
) -> list[MemberView] | list[MemberFound]:
    found = reads.people.search_members(q, limit)
    if access.allows(user.role, "members.read"):
        return found
    # Staff find a member to put on a game; notes and card UIDs (a card UID is a credential) are the manager's.
    return [m.found() for m in found]


@router.post("", status_code=201, response_model=MemberView, summary="Add a member (manager)")
def create_member(body: MemberIn, hub: Hub, user: Annotated[Staff, Depends(can("members.edit"))]) -> MemberView:
    return hub.execute(body.to(AddMember, actor=user.username))


@router.get(
    "/export",
    summary="The whole registry as CSV (the import format)",
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}},
    response_class=Response,
)
def export(reads: Reads, user: Annotated[Staff, Depends(can("members.read"))]) -> Response:
    data = reads.people.export_members_csv()
    return Response(
        data,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="lavos-members.csv"'},
    )


def _import(hub: HubFacade, data: bytes, actor: str) -> ImportReport:
    return hub.execute(ImportMembers(data=data, actor=actor))


@router.post(
    "/import",
    response_model=ImportReport,
    summary="Import a CSV file (the request body): all of it, or nothing with the errors by line (manager)",
    openapi_extra={"requestBody": {"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}}},
    responses=TOO_LARGE,
)
async def import_csv(request: Request, hub: Hub, user: Annotated[Staff, Depends(can("members.edit"))]) -> ImportReport:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_IMPORT_BYTES:
            raise HTTPException(413, f"the file is larger than {MAX_IMPORT_BYTES // 1024} kB; split it")
    if not data.strip():
        raise HTTPException(400, "the body is empty: send the CSV file as the request body (Content-Type: text/csv)")
    # The import is blocking database work: keep it off the event loop.
    return await run_in_threadpool(_import, hub, bytes(data), user.username)


@router.delete("/cards/{uid}", status_code=204, summary="Take a card away from its member (manager)")
def delete_card(uid: str, hub: Hub, user: Annotated[Staff, Depends(can("members.edit"))]) -> Response:
    hub.execute(RemoveCard(uid=normalize_uid(uid), actor=user.username))  # NotFound (404) when nobody holds it
    return Response(status_code=204)


@router.get("/{member_id}", response_model=MemberView, summary="One member with cards and fee payments")
def get_member(member_id: IdPath, reads: Reads, user: Annotated[Staff, Depends(can("members.read"))]) -> MemberView:
    return _member(reads, member_id)


@router.patch("/{member_id}", response_model=MemberView, summary="Change name, kind, note or active (manager)")
def patch_member(member_id: IdPath, body: MemberPatch, hub: Hub, user: Annotated[Staff, Depends(can("members.edit"))]) -> MemberView:
    return hub.execute(
        EditMember(
            member_id=member_id, name=body.name, kind=body.kind, active=body.active, note=body.note, reason=body.reason, actor=user.username
        )
    )


@router.post("/{member_id}/fees", status_code=201, response_model=MemberView, summary="Record a year's fee payment (manager)")
def pay_fee(member_id: IdPath, body: FeeIn, hub: Hub, user: Annotated[Staff, Depends(can("members.edit"))]) -> MemberView:
    return hub.execute(body.to(RecordFee, member_id=member_id, actor=user.username))


@router.post("/{member_id}/cards", status_code=201, response_model=MemberView, summary="Give the member a club card (manager)")
def add_card(member_id: IdPath, body: CardIn, hub: Hub, user: Annotated[Staff, Depends(can("members.edit"))]) -> MemberView:
    return hub.execute(body.to(AssignCard, member_id=member_id, actor=user.username))
