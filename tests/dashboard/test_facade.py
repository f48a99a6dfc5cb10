"""The hub's facade and read models: values out, the hub's errors out, never the ORM's."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import exc as sa

from broker.accounts.staff import Staff
from broker.accounts.users import new_password
from broker.core import store_errors
from broker.core.alert_book import AckAlert
from broker.hall.facade import Conflict, HubFacade, MemberError, NotFound, StoreUnavailable
from broker.people.accounts import CreateStaff
from broker.people.members import AddMember, AssignCard, RecordFee, RemoveCard
from tests.dashboard.conftest import CHEAP

if TYPE_CHECKING:
    from broker.hall.hub import Hub


def test_reads_are_frozen_values_not_rows(service: Hub) -> None:
    hub = HubFacade(service)
    added = hub.execute(AddMember(name="Ján Facade", actor="test"))
    hub.execute(AssignCard(member_id=added.id, uid="04a1b2c3", actor="test"))
    member = hub.execute(RecordFee(member_id=added.id, year=hub.reads.fee_year(), amount_cents=1000, actor="test"))
    assert member.cards == ("04a1b2c3",) and member.fee_paid and member.fee_year == hub.reads.fee_year()
    assert hub.reads.people.member(added.id) == member  # the same value, read again
    staff = hub.execute(CreateStaff(username="jana", password=new_password("a-long-password-1", CHEAP), role="staff", actor="test"))
    assert isinstance(staff, Staff) and hub.reads.people.staff("jana") == staff
    for value in (member, staff, *hub.reads.people.search_members("facade", 5)):
        assert dataclasses.is_dataclass(value)
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.id = 0  # type: ignore[union-attr]  # a write to a frozen value on purpose (is_dataclass above hid its fields)


def test_store_errors_come_out_as_the_hubs_own(service: Hub) -> None:
    hub = HubFacade(service)
    with pytest.raises(NotFound):  # the store's "no alert" (StoreError) is the hub's NotFound
        hub.execute(AckAlert(alert_id=987654, actor="test"))
    with pytest.raises(NotFound):
        hub.execute(RecordFee(member_id=987654, year=2026, actor="test"))
    m = hub.execute(AddMember(name="Eva Karta", actor="test"))
    with pytest.raises(MemberError):  # not her card: refused before anything is written
        hub.execute(RemoveCard(uid="04ffffff", member_id=m.id, actor="test"))
    with pytest.raises(NotFound):
        hub.execute(RemoveCard(uid="04ffffff", actor="test"))


def test_translation_of_database_failures() -> None:
    def failing(error: Exception) -> Callable[..., Any]:
        @store_errors.store_call
        def call() -> None:
            raise error

        return call

    with pytest.raises(Conflict, match="reload the page and try again"):
        failing(sa.IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed: member_cards.uid")))()
    with pytest.raises(StoreUnavailable, match="database is unavailable"):
        failing(sa.OperationalError("SELECT", {}, Exception("could not connect")))()
