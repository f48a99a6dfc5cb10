"""`lavos ekasa …`: the eKasa client (NineDigit Portos) from the command line.

`lavos ekasa selftest` is run once by the installer against the club's real client in its TEST
mode, before the first fiscal evening (broker.adapters.ekasa_selftest says what it sends and why).
"""

from __future__ import annotations

import typer

from broker.ops.cli_options import db_option
from devices.cli_support import fail

ekasa_app = typer.Typer(
    help="The eKasa client (NineDigit Portos).\n\nExample: lavos ekasa selftest --url http://localhost:3010",
    no_args_is_help=True,
)


def _stored_settings(db: str | None) -> tuple[str, float, str] | None:
    """(url, timeout, cash register code) as the manager saved them on /ekasa, if this box has a database."""
    from broker.ops.cli_options import store_session
    from broker.storage.models import Setting
    from broker.till.fiscal import SETTINGS_KEY, EkasaSettings

    with store_session(db) as s:
        row = s.get(Setting, SETTINGS_KEY)
        if row is None:
            return None
        settings = EkasaSettings.from_json(row.value)
        return settings.url, settings.timeout_s, settings.cash_register_code


@ekasa_app.command("selftest")
def selftest(
    url: str | None = typer.Option(
        None, "--url", help="The Portos client, e.g. http://localhost:3010 (default: the address saved on /ekasa)"
    ),
    cash_register_code: str | None = typer.Option(None, "--cash-register-code", help="The ORP code, if the client serves more than one"),
    timeout: float | None = typer.Option(None, "--timeout", help="Seconds to wait for each answer (default: as saved, else 10)"),
    paragon: bool = typer.Option(True, "--paragon/--no-paragon", help="Also register a test paragón (an assumed shape)"),
    offline: bool = typer.Option(False, "--offline", help="The till's internet is unplugged: a receipt must come back stored offline"),
    yes: bool = typer.Option(False, "--yes", help="Do not ask whether the client is in its test mode"),
    db: str | None = db_option,
) -> None:
    """Send the client one test receipt (and a test paragón), look it up by its externalId, and print
    what the client answered against what Lavos expects; exit status 1 when anything differs.

    Run it against the client in its TEST mode: what it registers there is not fiscal.

    Example: lavos ekasa selftest --url http://localhost:3010
    """
    from broker.adapters.ekasa import DEFAULT_URL
    from broker.adapters.ekasa_selftest import run_selftest

    # The address saved on /ekasa, unless one is given (then this box need not have the database).
    stored = _stored_settings(db) if url is None else None
    url = url or (stored[0] if stored else DEFAULT_URL)
    timeout_s = timeout if timeout is not None else (stored[1] if stored else 10.0)
    code = cash_register_code if cash_register_code is not None else (stored[2] if stored else "")
    if not 1 <= timeout_s <= 60:
        raise fail("--timeout must be between 1 and 60 seconds")
    if not yes and not typer.confirm(
        f"Send a test receipt{' and a test paragón' if paragon else ''} of 0,01 € to {url}? Only with the client in its TEST mode"
    ):
        raise typer.Exit(2)
    try:
        lines, status = run_selftest(url, timeout_s=timeout_s, cash_register_code=code, paragon=paragon, offline=offline)
    except ValueError as e:  # a URL httpx cannot use
        raise fail(f"{url}: {e}") from None
    for line in lines:
        typer.echo(line)
    raise typer.Exit(status)
