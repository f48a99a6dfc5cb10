"""The member registry: staff find members by name, the manager reads and changes it. broker.members audits each change."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from broker.db.models import Member, MemberCard, User
from broker.members import add_member, assign_card, edit_member, normalize_uid, record_fee, remove_card, search_members
from broker.members_csv import MAX_IMPORT_BYTES, export_members_csv, import_members_csv
from broker.service import CentralService
from broker.tariffs import calendar_year
from dashboard import access
from dashboard.api import views
from dashboard.api.auth import can
from dashboard.api.deps import IdPath, Service
from dashboard.api.errors import TOO_LARGE
from dashboard.api.schemas import CardIn, FeeIn, MemberIn, MemberPatch, text

router = APIRouter(prefix="/members", tags=["members"])

SearchText = text(100, 0)


def _year(service: CentralService) -> int:
    return calendar_year(service.clock(), service.venue)


def _member(db: Session, member_id: int) -> Member:
    member = db.get(Member, member_id)
    if member is None:
        raise HTTPException(404, f"no member {member_id}: search by name to find the right id")
    return member


@router.get("", summary="Search members by name (any words, accents and case ignored); notes, cards and fees for the manager only")
def list_members(
    service: Service, user: Annotated[User, Depends(can("members.search"))],
    q: Annotated[SearchText, Query(description="Words of the name, e.g. zadrazil")] = "",  # type: ignore[valid-type]
    limit: int = Query(50, ge=1, le=500),
) -> list[dict[str, Any]]:
    # Staff find a member to put on a session; notes and card UIDs (a card UID is a credential) are the manager's.
    view = views.member if access.allows(user.role, "members.read") else views.member_found
    with service.store.reader() as db:
        return [view(m, _year(service)) for m in search_members(db, q, limit=limit)]


@router.post("", status_code=201, summary="Add a member (manager)")
def create_member(body: MemberIn, service: Service, user: Annotated[User, Depends(can("members.edit"))]) -> dict[str, Any]:
    with service.store.session() as db:
        m = add_member(db, body.name, actor=user.username, kind=body.kind, note=body.note, active=body.active)
        return views.member(m, _year(service))


@router.get("/export", summary="The whole registry as CSV (the import format)",
            responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}}, response_class=Response)
def export(service: Service, user: Annotated[User, Depends(can("members.read"))]) -> Response:
    with service.store.reader() as db:
        data = export_members_csv(db)
    return Response(data.encode("utf-8-sig"), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="lavos-members.csv"'})


def _import(service: CentralService, data: bytes, actor: str) -> dict[str, Any]:
    with service.store.session() as db:
        report = import_members_csv(db, data, actor=actor)
    return {"added": report.added, "updated": report.updated, "unchanged": report.unchanged,
            "cards_added": report.cards_added, "fees_added": report.fees_added, "summary": str(report)}


@router.post(
    "/import", summary="Import a CSV file (the request body): all of it, or nothing with the errors by line (manager)",
    openapi_extra={"requestBody": {"required": True, "content": {"text/csv": {"schema": {"type": "string"}}}}}, responses=TOO_LARGE,
)
async def import_csv(request: Request, service: Service, user: Annotated[User, Depends(can("members.edit"))]) -> dict[str, Any]:
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_IMPORT_BYTES:
            raise HTTPException(413, f"the file is larger than {MAX_IMPORT_BYTES // 1024} kB; split it")
    if not data.strip():
        raise HTTPException(400, "the body is empty: send the CSV file as the request body (Content-Type: text/csv)")
    # The import is blocking database work: keep it off the event loop.
    return await run_in_threadpool(_import, service, bytes(data), user.username)


@router.delete("/cards/{uid}", status_code=204, summary="Take a card away from its member (manager)")
def delete_card(uid: str, service: Service, user: Annotated[User, Depends(can("members.edit"))]) -> Response:
    with service.store.session() as db:
        if db.get(MemberCard, normalize_uid(uid)) is None:
            raise HTTPException(404, f"card {normalize_uid(uid)} is not assigned to anyone")
        remove_card(db, uid, actor=user.username)
    return Response(status_code=204)


@router.get("/{member_id}", summary="One member with cards and fee payments")
def get_member(member_id: IdPath, service: Service, user: Annotated[User, Depends(can("members.read"))]) -> dict[str, Any]:
    with service.store.reader() as db:
        return views.member(_member(db, member_id), _year(service))


@router.patch("/{member_id}", summary="Change name, kind, note or active (manager)")
def patch_member(member_id: IdPath, body: MemberPatch, service: Service, user: Annotated[User, Depends(can("members.edit"))]) -> dict[str, Any]:
    with service.store.session() as db:
        _member(db, member_id)
        m = edit_member(db, member_id, actor=user.username, name=body.name, kind=body.kind,
                        active=body.active, note=body.note, reason=body.reason)
        return views.member(m, _year(service))


@router.post("/{member_id}/fees", status_code=201, summary="Record a year's fee payment (manager)")
def pay_fee(member_id: IdPath, body: FeeIn, service: Service, user: Annotated[User, Depends(can("members.edit"))]) -> dict[str, Any]:
    with service.store.session() as db:
        _member(db, member_id)
        record_fee(db, member_id, body.year, actor=user.username, amount_cents=body.amount_cents, paid_at=service.clock())
        return views.member(_member(db, member_id), _year(service))


@router.post("/{member_id}/cards", status_code=201, summary="Give the member a club card (manager)")
def add_card(member_id: IdPath, body: CardIn, service: Service, user: Annotated[User, Depends(can("members.edit"))]) -> dict[str, Any]:
    with service.store.session() as db:
        _member(db, member_id)
        assign_card(db, member_id, body.uid, actor=user.username)
        return views.member(_member(db, member_id), _year(service))
