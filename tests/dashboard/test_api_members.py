"""The member registry through the API: manager writes (audited), staff reads, CSV all-or-nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select

from broker.storage.models import AuditEntry, Member
from tests.dashboard.conftest import sqlite_only
from tests.support.hub import REPO

if TYPE_CHECKING:
    from tests.dashboard.conftest import Api


pytestmark = sqlite_only


def _audit(api: Any) -> list[tuple[str, str, str]]:
    with api.service.store.reader() as db:
        return [
            (a.actor, a.action, a.target)
            for a in db.scalars(select(AuditEntry).where(AuditEntry.action.like("member%")).order_by(AuditEntry.id))
        ]


def test_manager_adds_edits_pays_and_cards_a_member(api: Api) -> None:
    m = api.ok("POST", "/api/members", 201, as_manager=True, json={"name": "  Zadražil   Miro ", "kind": "honorary"})
    mid = m["id"]
    assert (m["name"], m["kind"], m["active"], m["fee_paid"], m["fee_year"]) == ("Zadražil Miro", "honorary", True, False, 2026)
    api.ok("PATCH", f"/api/members/{mid}", as_manager=True, json={"note": "liga", "reason": "typo"})
    paid = api.ok("POST", f"/api/members/{mid}/fees", 201, as_manager=True, json={"year": 2026, "amount_cents": 0})
    assert paid["fee_paid"] and paid["fees"][0]["amount_cents"] == 0
    carded = api.ok("POST", f"/api/members/{mid}/cards", 201, as_manager=True, json={"uid": "04:A2:B3:C4"})
    assert carded["cards"] == ["04a2b3c4"]
    assert [x["id"] for x in api.ok("GET", "/api/members?q=zadrazil")] == [mid]  # staff search, accents ignored
    assert "note" not in api.ok("GET", "/api/members?q=zadrazil")[0]  # issue 9: notes and cards are the manager's
    assert api.ok("GET", f"/api/members/{mid}", as_manager=True)["note"] == "liga"
    api.ok("DELETE", "/api/members/cards/04a2b3c4", 204, as_manager=True)
    assert api.ok("GET", f"/api/members/{mid}", as_manager=True)["cards"] == []
    assert [a[1] for a in _audit(api)] == ["member.add", "member.edit", "member.fee", "member.card.assign", "member.card.remove"]
    assert {a[0] for a in _audit(api)} == {"boss"}


def test_registry_refusals(api: Api) -> None:
    mid = api.ok("POST", "/api/members", 201, as_manager=True, json={"name": "Ambra Tomáš"})["id"]
    assert "already exists" in api.refused("POST", "/api/members", 400, json={"name": "Ambra Tomáš"})
    api.ok("POST", f"/api/members/{mid}/fees", 201, as_manager=True, json={"year": 2026})
    assert "already recorded" in api.refused("POST", f"/api/members/{mid}/fees", 400, json={"year": 2026})
    assert "no member 777" in api.refused("GET", "/api/members/777", 404)
    assert "There is no member no. 777" in api.refused("PATCH", "/api/members/777", 404, json={"active": False})
    assert "nothing to change" in api.refused("PATCH", f"/api/members/{mid}", 422, json={})
    assert "not assigned" in api.refused("DELETE", "/api/members/cards/0a0b0c0d", 404)
    assert "is not a card number" in api.refused("DELETE", "/api/members/cards/xyz", 400)
    other = api.ok("POST", "/api/members", 201, as_manager=True, json={"name": "Axamit Miloš"})["id"]
    api.ok("POST", f"/api/members/{mid}/cards", 201, as_manager=True, json={"uid": "0a0b0c0d"})
    assert "belongs to Ambra Tomáš" in api.refused("POST", f"/api/members/{other}/cards", 400, json={"uid": "0a0b0c0d"})


def test_import_is_all_or_nothing_and_export_round_trips(api: Api) -> None:
    shipped = (REPO / "deploy" / "members" / "lavos-members.csv").read_bytes()
    headers = {**api.manager, "Content-Type": "text/csv"}
    report = api.client.post("/api/members/import", headers=headers, content=shipped).json()
    assert report["added"] == 59
    again = api.client.post("/api/members/import", headers=headers, content=shipped).json()
    assert (again["added"], again["unchanged"]) == (0, 59)
    exported = api.ok("GET", "/api/members/export", as_manager=True)
    assert exported.headers["content-type"].startswith("text/csv") and exported.content.startswith(b"\xef\xbb\xbf")
    assert api.client.post("/api/members/import", headers=headers, content=exported.content).json()["unchanged"] == 59

    bad = "name,kind,fees_paid\nNový Člen,individual,2026\nZlý Riadok,vip,2026\nTretí,individual,19x\n".encode()
    r = api.client.post("/api/members/import", headers=headers, content=bad)
    assert r.status_code == 400 and [e["line"] for e in r.json()["errors"]] == [3, 4]
    neither = b"name\n\x81tefan\n"  # 0x81 is a character in neither UTF-8 (alone) nor Windows-1250
    r = api.client.post("/api/members/import", headers=headers, content=neither)
    assert r.status_code == 400 and "neither UTF-8 nor Windows-1250" in r.json()["errors"][0]["message"]
    assert api.client.post("/api/members/import", headers=headers, content=b"").status_code == 400
    assert api.client.post("/api/members/import", headers=headers, content=b"name\n" + b"x" * (3 * 1024 * 1024)).status_code == 413
    with api.service.store.reader() as db:
        assert db.scalar(select(func.count()).select_from(Member)) == 59  # nothing from the refused files
