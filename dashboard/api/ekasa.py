"""eKasa: the receipts not registered yet (staff), a hand-written paragón, the manager's settings.

Each route calls the same facade method as its page (dashboard/web/pages_ekasa.py).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import Field

from broker.accounts.staff import Staff
from broker.adapters.ekasa import ClientStatus
from broker.till.fiscal import RecordParagon, RetryEkasa, SaveEkasaSettings
from broker.till.reads import EkasaSettingsView, FiscalReceiptView
from dashboard.api import responses as R
from dashboard.api.auth import can
from dashboard.api.dates import Moment
from dashboard.api.deps import Hub, IdPath, Reads
from dashboard.api.schemas import Body, text

router = APIRouter(prefix="/ekasa", tags=["ekasa"])


class EkasaSettingsIn(Body):
    enabled: bool
    url: Annotated[str, text(200)]
    timeout_s: Annotated[int | float, Field(ge=1, le=60)] = 10
    cash_register_code: Annotated[str, text(20, min_length=0)] = ""


class EkasaTestIn(Body):
    url: Annotated[str, text(200)]
    timeout_s: Annotated[int | float, Field(ge=1, le=60)] = 10


class ParagonIn(Body):
    number: Annotated[str, text(10)]
    at: Annotated[Moment, Field(description="When it was written by hand: ISO 8601; without an offset, the venue's wall clock")]


@router.get("/settings", response_model=EkasaSettingsView, summary="The eKasa settings (manager)")
def get_settings(reads: Reads, user: Annotated[Staff, Depends(can("ekasa.settings"))]) -> EkasaSettingsView:
    return reads.till.ekasa_settings()


@router.put("/settings", response_model=EkasaSettingsView, summary="Change the eKasa settings (manager; audited)")
def put_settings(body: EkasaSettingsIn, hub: Hub, user: Annotated[Staff, Depends(can("ekasa.settings"))]) -> EkasaSettingsView:
    hub.execute(
        SaveEkasaSettings(
            enabled=body.enabled,
            url=body.url,
            timeout_s=float(body.timeout_s),
            cash_register_code=body.cash_register_code,
            actor=user.username,
        )
    )
    return hub.reads.till.ekasa_settings()


@router.post("/test", response_model=ClientStatus, summary="Ask the eKasa client at this address how it is (manager)")
def test_connection(body: EkasaTestIn, hub: Hub, user: Annotated[Staff, Depends(can("ekasa.settings"))]) -> ClientStatus:
    return hub.ekasa_test_connection(url=body.url, timeout_s=float(body.timeout_s))


@router.get("/receipts", response_model=list[FiscalReceiptView], summary="Receipts not registered in eKasa yet, oldest first")
def unregistered(reads: Reads, user: Annotated[Staff, Depends(can("ekasa.run"))]) -> list[FiscalReceiptView]:
    return reads.till.ekasa_unregistered()


@router.post("/receipts/{payment_id}/paragon", response_model=R.DoneOut, summary="Record a hand-written paragón for a payment (audited)")
def paragon(payment_id: IdPath, body: ParagonIn, hub: Hub, user: Annotated[Staff, Depends(can("ekasa.run"))]) -> R.DoneOut:
    hub.execute(body.to(RecordParagon, payment=payment_id, actor=user.username))
    return R.DoneOut()


@router.post("/receipts/{payment_id}/retry", response_model=R.DoneOut, summary="Send a failed receipt again (manager; audited)")
def retry(payment_id: IdPath, hub: Hub, user: Annotated[Staff, Depends(can("ekasa.settings"))]) -> R.DoneOut:
    hub.execute(RetryEkasa(payment=payment_id, actor=user.username))
    return R.DoneOut()
