"""The hub's facade and read models: values out, the hub's errors out, never the ORM's."""

from __future__ import annotations

import dataclasses

import pytest
from sqlalchemy import exc as sa

from broker.accounts.staff import Staff
from broker.hall import store_errors
from broker.hall.facade import Conflict, HubFacade, MemberError, NotFound, StoreUnavailable


def test_reads_are_frozen_values_not_rows(service) -> None:  # type: ignore[no-untyped-def]
    hub = HubFacade(service)
    added = hub.add_member("Ján Facade", actor="test")
    hub.assign_card(added.id, "04a1b2c3", actor="test")
    member = hub.record_fee(added.id, hub.reads.fee_year(), actor="test", amount_cents=1000)
    assert member.cards == ("04a1b2c3",) and member.fee_paid(hub.reads.fee_year())
    assert hub.reads.member(added.id) == member  # the same value, read again
    staff = hub.create_staff("jana", "a-long-password-1", "staff", actor="test")
    assert isinstance(staff, Staff) and hub.reads.staff("jana") == staff
    for value in (member, staff, *hub.reads.search_members("facade", 5)):
        assert dataclasses.is_dataclass(value)
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.id = 0  # type: ignore[misc]


def test_store_errors_come_out_as_the_hubs_own(service) -> None:  # type: ignore[no-untyped-def]
    hub = HubFacade(service)
    with pytest.raises(NotFound):  # the store's "no alert" (StoreError) is the hub's NotFound
        hub.acknowledge_alert(987654, actor="test")
    with pytest.raises(NotFound):
        hub.record_fee(987654, 2026, actor="test")
    m = hub.add_member("Eva Karta", actor="test")
    with pytest.raises(MemberError):  # not her card: refused before anything is written
        hub.remove_card("04ffffff", actor="test", member_id=m.id)
    with pytest.raises(NotFound):
        hub.remove_card("04ffffff", actor="test")


def test_translation_of_database_failures() -> None:
    def failing(error: Exception):  # type: ignore[no-untyped-def]
        @store_errors.store_call
        def call() -> None:
            raise error

        return call

    with pytest.raises(Conflict, match="reload the page and try again"):
        failing(sa.IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed: member_cards.uid")))()
    with pytest.raises(StoreUnavailable, match="database is unavailable"):
        failing(sa.OperationalError("SELECT", {}, Exception("could not connect")))()
