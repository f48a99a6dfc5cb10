"""Slovak formats and a complete Slovak catalogue (no service needed)."""

from __future__ import annotations

from datetime import UTC

from dashboard.web import i18n


def test_money_and_dates_in_the_slovak_format() -> None:
    from datetime import datetime
    from zoneinfo import ZoneInfo

    token = i18n.use_lang("sk")
    try:
        assert i18n.money(600) == "6,00 €"
        assert i18n.money(123456) == "1 234,56 €"
        assert i18n.money(-5) == "-0,05 €"
        assert i18n.when(datetime(2026, 11, 30, 17, 5, tzinfo=UTC), ZoneInfo("Europe/Bratislava")) == "30. 11. 2026 18:05"
        assert i18n.duration(3900) == "1:05"
    finally:
        i18n.reset_lang(token)
    token = i18n.use_lang("en")
    try:
        assert i18n.money(600) == "€6.00"
    finally:
        i18n.reset_lang(token)


def test_every_slovak_message_is_translated() -> None:
    from dashboard.web.i18n_tools import missing

    assert missing("sk") == []
