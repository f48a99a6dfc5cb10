"""Refusals and alerts in the staff's language: the hub's message ids, their Slovak translations
and plural forms, and names (not ids) in what people read."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from babel.messages.pofile import read_po

from broker.domain.floor import alert_kinds
from broker.domain.refusals import N_, Name, Refusal
from broker.hall.hub import CardInUse, ServiceError
from dashboard.web import i18n, i18n_tools
from tests.support.matching import some

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog


REPO = Path(__file__).resolve().parents[2]
SK_PO = REPO / "dashboard/web/translations/sk/LC_MESSAGES/messages.po"


def _sk_catalogue() -> Catalog:
    with open(SK_PO, "rb") as f:
        return read_po(f, locale="sk")


def _n_literals() -> list[tuple[str, int, str]]:
    """Every N_("...") literal under broker/ (what the catalogues extract for the pages)."""
    found = []
    for path in (REPO / "broker").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "N_" and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    found.append((str(path.relative_to(REPO)), node.lineno, arg.value))
    return found


def test_every_refusal_of_the_hub_has_a_slovak_translation() -> None:
    catalogue = _sk_catalogue()
    literals = _n_literals()
    assert len(literals) > 60  # the hub's refusals are marked, not only a handful
    missing = [f"{where}:{line}: {msgid}" for where, line, msgid in literals if not (m := catalogue.get(msgid)) or not m.string]
    assert not missing, "\n".join(missing)


def test_the_slovak_plural_forms_are_three_and_all_filled() -> None:
    catalogue = _sk_catalogue()
    assert catalogue.num_plurals == 3 and "n == 1 ? 0 : n >= 2 && n <= 4 ? 1 : 2" in catalogue.plural_expr
    plurals = [m for m in catalogue if m.id and isinstance(m.id, tuple)]
    assert plurals and all(len(some(m.string)) == 3 and all(some(m.string)) for m in plurals), [
        m.id for m in plurals if not all(some(m.string))
    ]


def test_the_catalogue_check_fails_on_an_empty_plural_form() -> None:
    assert i18n_tools._filled(("1 porucha", "2 poruchy", "5 porúch"), 3)
    assert not i18n_tools._filled(("1 porucha", "", ""), 3)
    assert not i18n_tools._filled(("", "", ""), 3)  # a tuple of empty forms is truthy: not filled
    assert not i18n_tools._filled(("1 porucha", "2 poruchy"), 3)
    assert not i18n_tools._filled("", 3) and i18n_tools._filled("Späť", 3)


@pytest.mark.parametrize(
    "n, sk",
    [(1, "1 porucha"), (2, "2 poruchy"), (4, "4 poruchy"), (5, "5 porúch"), (11, "11 porúch"), (0, "0 porúch")],
)
def test_slovak_fault_counts(n: Any, sk: Any) -> None:
    token = i18n.use_lang("sk")
    try:
        assert i18n.ngettext("%(num)d fault", "%(num)d faults", n) % {"num": n} == sk
    finally:
        i18n.reset_lang(token)


def test_a_refusal_reads_in_the_visitors_language_with_the_tables_name() -> None:
    e = ServiceError(
        N_("%(table)s already has game no. %(game)d running; stop or move it first."), table=Name("Karambol", "Carom"), game=25
    )
    assert str(e) == "Carom already has game no. 25 running; stop or move it first."  # the API and the log
    assert i18n.refusal_text(e, "sk") == "Na stole Karambol už beží hra č. 25; najprv ju ukončite alebo presuňte."
    assert i18n.refusal_text(e, "en") == str(e)


def test_a_refusal_passed_on_keeps_its_message_id() -> None:
    inner = Refusal(N_("The game has no prepaid time, so there is nothing to extend."))
    outer = ServiceError.like(inner)
    assert (outer.msgid, outer.params, str(outer)) == (inner.msgid, inner.params, str(inner))
    assert i18n.refusal_text(outer, "sk") == "Hra nemá predplatený čas, nie je čo predĺžiť."


def test_anything_else_reads_as_its_english_text() -> None:
    assert i18n.refusal_text(ValueError("plain"), "sk") == "plain"
    unknown = ServiceError("not in any catalogue %(x)s", x=1)
    assert i18n.refusal_text(unknown, "sk") == "not in any catalogue 1"


def test_card_in_use_names_the_member_and_the_table() -> None:
    e = CardInUse("Zadražil Miro", "carom-01", "Karambol", 7, "Carom")
    assert "carom-01" not in str(e) and "Carom" in str(e)
    assert i18n.refusal_text(e, "sk").startswith("Klubová karta člena Zadražil Miro je už na stole Karambol (hra č. 7)")


def test_alerts_are_worded_with_the_tables_name_and_the_pocket_people_count() -> None:
    spec = alert_kinds.sensor_fault("pool-09", "pocket-0", "stuck")
    assert spec.worded("Pool 9") == ("Pool 9: zaseknutý senzor v kapse 1", "Pool 9: sensor stuck in pocket 1")
    assert spec.cause_key == "sensor_fault:pool-09:pocket-0" and spec.table_id == "pool-09"  # ids stay in the key and the API
    light = alert_kinds.light_without_session("carom-01", "button")
    assert light.worded("Karambol", "Carom") == (
        "Karambol: svetlo svieti bez hry (zapnuté tlačidlom pri stole)",
        "Carom: the light is on with no game (switched on with the button at the table)",
    )
    assert alert_kinds.outbox_stuck("pool-01", 3).text == "modul neodoslal 3 udalosti"
    assert alert_kinds.outbox_stuck("pool-01", 7).text == "modul neodoslal 7 udalostí"
    assert alert_kinds.sensor_place("goal-home") == ("pri bránke domácich", "at the home goal")
