"""The member registry for the manager: search, add, edit, the year's fee, club cards, CSV in and out.

The hub's facade (broker.hall.facade, the same methods the API calls) does the work through
broker.storage.members and broker.storage.members_csv, which write the audit log; this module turns form fields
into their arguments, refusing bad input with a message in the visitor's language before
anything is written. Reads go through the read models.

Card capture: the manager picks a table's reader and taps the card on it. The capture request
waits (without holding a thread) for the next `card` event the hub reports from that table,
through the same subscription (HallReads.subscribe) that feeds the live /events stream, and answers with
the member page with the UID filled in; assigning it is still a separate, CSRF-checked POST.
A UID is a credential and a node can be forged or replay an old tap: the page never fills one
in without saying which table's node sent it and when the hub received it (and when the
node says it was tapped, if that is much earlier).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Depends, File, Form, HTTPException, Query, Request, UploadFile
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from broker.accounts.staff import Staff
from broker.domain.euros import parse_euros
from broker.domain.people.membership import DEFAULT_FEE_CENTS, MAX_IMPORT_BYTES, MEMBER_KINDS, check_year, normalize_uid
from broker.hall.facade import MemberError, MemberImportError
from broker.hall.read_models import HallReads
from broker.people.member_views import MemberView
from broker.people.members import AddMember, AssignCard, EditMember, ImportMembers, RecordFee, RemoveCard
from dashboard.api.deps import IdPath, get_hub
from dashboard.web.auth import page_can
from dashboard.web.csrf import verify_csrf
from dashboard.web.i18n import N_
from dashboard.web.request_text import refusal, translated
from dashboard.web.templating import NavLink, flash, render

router = APIRouter(prefix="/members")
NAV = [NavLink("/members", N_("Members"), role="manager", order=60)]
CSRF = [Depends(verify_csrf)]

SEARCH_LIMIT = 100
CAPTURE_WAIT_S = 30.0
LATE_TAP = timedelta(minutes=1)  # a tap the node stamped this much before it arrived is worth a second look
KIND_NAMES = {"individual": N_("individual"), "collective": N_("collective"), "honorary": N_("honorary")}

Text = Annotated[str, Form(max_length=2000)]
Name = Annotated[str, Form(max_length=200)]
Short = Annotated[str, Form(max_length=64)]


# Refusals of form input are MemberErrors with a msgid (broker.domain.refusals): the page that
# re-renders the form shows them in the visitor's language (request_text.refusal).


def _checked(request: Request, *values: str) -> None:
    # PostgreSQL refuses NUL in text; a form field holding one is garbage, not a name.
    if any("\x00" in v for v in values):
        raise MemberError(N_("The form holds a NUL character; retype the text."))


def _kind(request: Request, kind: str) -> str:
    if kind not in MEMBER_KINDS:
        raise MemberError(N_("Choose the kind of membership from the list."))
    return kind


def _uid(request: Request, uid: str) -> str:
    try:
        return normalize_uid(uid)
    except MemberError:
        raise MemberError(N_("%(uid)s is not a card number: 4 to 32 hex digits (0-9, a-f), e.g. 04a2b3c4."), uid=uid[:40]) from None


def _fee_year(request: Request, text: str) -> int:
    value = text.strip()
    if value.isascii() and value.isdigit() and len(value) <= 4:
        try:
            return check_year(int(value))
        except MemberError:
            pass
    raise MemberError(N_("%(year)s is not a year: give a calendar year such as 2026."), year=text[:12])


def _cents(request: Request, text: str) -> int:
    """'10', '10,00', '10.5 €' → cents; money never passes through a float."""
    cents = parse_euros(text, low=0)
    if cents is None:
        raise MemberError(N_("%(amount)s is not an amount: write it as 10,00."), amount=text[:20])
    return cents


def _member(reads: HallReads, request: Request, member_id: int) -> MemberView:
    member = reads.people.member(member_id)
    if member is None:
        raise HTTPException(404, translated(request, N_("There is no member %(id)d; search by name."), id=member_id))
    return member


def _to_member(member_id: int) -> RedirectResponse:
    return RedirectResponse(f"/members/{member_id}", status_code=303)


# --- the list, search and add ------------------------------------------------------------------


@router.get("")
def members_page(
    request: Request, user: Annotated[Staff, Depends(page_can("members.read"))], q: Annotated[str, Query(max_length=100)] = ""
) -> Response:
    _checked(request, q)
    return _list(request, q)


def _list(request: Request, q: str = "", *, error: str | None = None, form: dict[str, Any] | None = None) -> Response:
    """The list page; after a refused "add", with the reason at the form and what was typed kept."""
    reads = get_hub(request).reads
    year = reads.fee_year()
    found = reads.people.search_members(q, SEARCH_LIMIT)
    context = {"members": found, "q": q, "limit": SEARCH_LIMIT, "kinds": KIND_NAMES, "year": year, "error": error, "form": form or {}}
    return render(request, "members.html", context, status=400 if error else 200)


@router.post("", dependencies=CSRF)
def add(
    request: Request,
    user: Annotated[Staff, Depends(page_can("members.edit"))],
    name: Name,
    kind: Short = "individual",
    note: Text = "",
    active: Annotated[str | None, Form(max_length=8)] = None,
) -> Response:
    try:
        _checked(request, name, kind, note)
        member = get_hub(request).execute(
            AddMember(name=name, kind=_kind(request, kind), note=note.strip(), active=active is not None, actor=user.username)
        )
    except MemberError as e:
        typed = {"name": name, "kind": kind, "note": note, "active": active is not None}
        return _list(request, error=refusal(request, e), form=typed)
    flash(request, translated(request, N_("Added: %(name)s"), name=member.name), "ok")
    return _to_member(member.id)


# --- CSV ---------------------------------------------------------------------------------------


@router.get("/export.csv")
def export(request: Request, user: Annotated[Staff, Depends(page_can("members.read"))]) -> Response:
    data = get_hub(request).reads.people.export_members_csv()
    return Response(
        data,
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": 'attachment; filename="lavos-members.csv"'},
    )


@router.get("/import")
def import_page(request: Request, user: Annotated[Staff, Depends(page_can("members.edit"))]) -> Response:
    return render(request, "members_import.html", {"errors": [], "filename": None})


@router.post("/import", dependencies=CSRF)
async def import_csv(
    request: Request, user: Annotated[Staff, Depends(page_can("members.edit"))], file: Annotated[UploadFile, File()]
) -> Response:
    data = await file.read(MAX_IMPORT_BYTES + 1)
    name = (file.filename or "")[:200]
    if len(data) > MAX_IMPORT_BYTES:
        raise HTTPException(413, translated(request, N_("The file is larger than %(kb)d kB; split it."), kb=MAX_IMPORT_BYTES // 1024))
    if not data.strip():
        raise HTTPException(400, translated(request, N_("The file is empty: choose the member list saved as CSV.")))
    hub = get_hub(request)
    try:  # one transaction: any error rolls the whole file back
        report = await run_in_threadpool(lambda: hub.execute(ImportMembers(data=data, actor=user.username)))
    except MemberImportError as e:
        lines = [(x.line, refusal(request, x)) for x in e.errors]  # each line's reason in the visitor's language
        return await run_in_threadpool(render, request, "members_import.html", {"errors": lines, "filename": name}, status=400)
    flash(
        request,
        translated(
            request,
            N_(
                "%(file)s imported: %(added)d added, %(updated)d updated, %(unchanged)d unchanged; "
                "%(cards)d cards and %(fees)d fee years recorded."
            ),
            file=name or "CSV",
            added=report.added,
            updated=report.updated,
            unchanged=report.unchanged,
            cards=report.cards_added,
            fees=report.fees_added,
        ),
        "ok",
    )
    return RedirectResponse("/members", status_code=303)


# --- one member ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CapturedCard:
    """A card read by a node's reader, and where and when it came from."""

    uid: str
    table: str
    received_at: datetime
    node_ts: datetime | None = None  # the node's own (synced) stamp, when it is LATE_TAP earlier


def _detail(
    request: Request,
    member_id: int,
    *,
    uid: str = "",
    capture_table: str | None = None,
    capture_note: str | None = None,
    captured: CapturedCard | None = None,
    errors: dict[str, str] | None = None,
    form: dict[str, Any] | None = None,
) -> Response:
    """The member page. `errors` (form id → reason) and `form` (field → what was typed) redraw a
    refused form in place: the reason next to it, the input kept, status 400."""
    reads = get_hub(request).reads
    year = reads.fee_year()
    member = _member(reads, request, member_id)
    readers = [t for t in reads.venue.tables if t.kind.has_card_reader]
    return render(
        request,
        "members_detail.html",
        {
            "m": member,
            "kinds": KIND_NAMES,
            "year": year,
            "default_fee": f"{DEFAULT_FEE_CENTS // 100},{DEFAULT_FEE_CENTS % 100:02d}",
            "uid": uid,
            "readers": readers,
            "capture_table": capture_table,
            "capture_note": capture_note,
            "capture_wait": int(CAPTURE_WAIT_S),
            "captured": captured,
            "captured_name": reads.tables[captured.table].name if captured else None,
            "wallet": reads.wallet.member(member_id),  # credit and packages (broker.wallet): their own page
            "errors": errors or {},
            "form": form or {},
        },
        status=400 if errors else 200,
    )


def _refused(request: Request, member_id: int, where: str, e: MemberError, **typed: object) -> Response:
    return _detail(request, member_id, errors={where: refusal(request, e)}, form=typed, uid=str(typed.get("uid", "")))


@router.get("/{member_id}")
def member_page(request: Request, member_id: IdPath, user: Annotated[Staff, Depends(page_can("members.read"))]) -> Response:
    return _detail(request, member_id)


@router.post("/{member_id}", dependencies=CSRF)
def edit(
    request: Request,
    member_id: IdPath,
    user: Annotated[Staff, Depends(page_can("members.edit"))],
    name: Name,
    kind: Short,
    note: Text = "",
    active: Annotated[str | None, Form(max_length=8)] = None,
    reason: Text = "",
) -> Response:
    hub = get_hub(request)
    _member(hub.reads, request, member_id)
    try:
        _checked(request, name, kind, note, reason)
        hub.execute(
            EditMember(
                member_id=member_id,
                name=name,
                kind=_kind(request, kind),
                note=note.strip(),
                active=active is not None,
                reason=reason.strip() or None,
                actor=user.username,
            )
        )
    except MemberError as e:
        return _refused(request, member_id, "edit-member", e, name=name, kind=kind, note=note, active=active is not None, reason=reason)
    flash(request, translated(request, N_("Saved.")), "ok")
    return _to_member(member_id)


@router.post("/{member_id}/fee", dependencies=CSRF)
def pay_fee(
    request: Request, member_id: IdPath, user: Annotated[Staff, Depends(page_can("members.edit"))], year: Short, amount: Short
) -> Response:
    hub = get_hub(request)
    _member(hub.reads, request, member_id)
    try:
        _checked(request, year, amount)
        fee_year, cents = _fee_year(request, year), _cents(request, amount)
        hub.execute(RecordFee(member_id=member_id, year=fee_year, amount_cents=cents, actor=user.username))
    except MemberError as e:
        return _refused(request, member_id, "record-fee", e, year=year, amount=amount)
    flash(request, translated(request, N_("The %(year)d fee is recorded."), year=fee_year), "ok")
    return _to_member(member_id)


@router.post("/{member_id}/cards", dependencies=CSRF)
def add_card(request: Request, member_id: IdPath, user: Annotated[Staff, Depends(page_can("members.edit"))], uid: Short) -> Response:
    hub = get_hub(request)
    _member(hub.reads, request, member_id)
    try:
        _checked(request, uid)
        card = _uid(request, uid)
        hub.execute(AssignCard(member_id=member_id, uid=card, actor=user.username))
    except MemberError as e:
        return _refused(request, member_id, "assign-card", e, uid=uid)
    flash(request, translated(request, N_("Card %(uid)s assigned."), uid=card), "ok")
    return _to_member(member_id)


@router.post("/{member_id}/cards/remove", dependencies=CSRF)
def take_card(
    request: Request, member_id: IdPath, user: Annotated[Staff, Depends(page_can("members.edit"))], uid: Short, reason: Text = ""
) -> Response:
    hub = get_hub(request)
    try:
        _checked(request, uid, reason)
        card = _uid(request, uid)
        if card not in _member(hub.reads, request, member_id).cards:
            raise MemberError(N_("Card %(uid)s is not this member's."), uid=card)
        # The facade checks it again inside its transaction (a card taken meanwhile is refused there).
        hub.execute(RemoveCard(uid=card, reason=reason.strip() or None, member_id=member_id, actor=user.username))
    except MemberError as e:
        return _refused(request, member_id, "cards", e)
    flash(request, translated(request, N_("Card %(uid)s taken away."), uid=card), "ok")
    return _to_member(member_id)


# --- card capture ----------------------------------------------------------------------------


async def next_card(reads: HallReads, table: str, timeout: float) -> CapturedCard | None:
    """The next card tapped on `table`'s reader, or None after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    tapped: asyncio.Future[CapturedCard] = loop.create_future()

    def settle(card: CapturedCard) -> None:
        if not tapped.done():
            tapped.set_result(card)

    def listener(topic: str, data: dict[str, Any]) -> None:  # a hub thread: only hand over, never wait
        if topic == "event" and data.get("type") == "card" and data.get("table") == table:
            uid, at, ts = (data.get("data") or {}).get("uid"), data.get("received_at"), data.get("ts")
            if isinstance(uid, str) and isinstance(at, datetime):
                late = data.get("ts_synced") is True and isinstance(ts, datetime) and ts < at - LATE_TAP
                loop.call_soon_threadsafe(settle, CapturedCard(uid, table, at, ts if late else None))

    reads.subscribe(listener)
    try:
        return await asyncio.wait_for(tapped, timeout)
    except TimeoutError:
        return None
    finally:
        reads.unsubscribe(listener)


@router.get("/{member_id}/capture")
async def capture(
    request: Request,
    member_id: IdPath,
    user: Annotated[Staff, Depends(page_can("members.edit"))],
    table: Annotated[str, Query(max_length=32)],
    wait: Annotated[float, Query(gt=0, le=CAPTURE_WAIT_S)] = CAPTURE_WAIT_S,
) -> Response:
    reads = get_hub(request).reads
    if table not in reads.tables or not reads.tables[table].kind.has_card_reader:
        raise HTTPException(400, translated(request, N_("That table has no card reader; choose one from the list.")))
    await run_in_threadpool(_member, reads, request, member_id)  # before waiting: a wrong id should not cost half a minute
    card = await next_card(reads, table, wait)
    name = reads.tables[table].name
    if card is None:
        note = translated(request, N_("No card was tapped on %(table)s within %(s)d s. Try again."), table=name, s=int(wait))
    else:
        note = translated(request, N_("Card %(uid)s read on %(table)s. Check it and press Assign."), uid=card.uid, table=name)
    return await run_in_threadpool(
        _detail, request, member_id, uid=card.uid if card else "", capture_table=table, capture_note=note, captured=card
    )
