"""`lavos demo`: the whole system with a simulated evening at the hall, on this machine."""

from __future__ import annotations

import signal
import threading

import typer

from sim.demo_defaults import DEFAULT_HTTP, MAX_SPEED  # not sim.demo: --help imports none of the hall


def demo(
    speed: float = typer.Option(10.0, "--speed", min=0.1, max=MAX_SPEED, help="How much faster than real time the evening runs"),
    seconds: float = typer.Option(None, "--seconds", help="Stop by itself after this many seconds (default: Ctrl-C)"),
    http: str = typer.Option(DEFAULT_HTTP, "--http", help="Where the dashboard listens, HOST:PORT (if the default is taken, a free port)"),
    seed: int = typer.Option(7, "--seed", help="Another seed, another evening"),
    broker: str = typer.Option("auto", "--broker", help="auto (Mosquitto if installed, else embedded iotcore), mosquitto or embedded"),
    notify_webhook: bool = typer.Option(
        False,
        "--notify-webhook",
        help="Also push the alerts to a tiny ntfy-style receiver on loopback that prints them (its address in the banner)",
    ),
    tournament: bool = typer.Option(
        False,
        "--tournament",
        help="A Lavosliga Sunday afternoon instead of the evening: 16 players, double elimination on 8 tables, the results printed",
    ),
) -> None:
    """Run the whole system on this machine: an MQTT broker, the hub, the dashboard,
    and every table of the ŠBK Lavos venue as a simulated node, with players, staff and incidents.

    Prints the dashboard URL and the demo logins. Ctrl-C stops everything.

    Example: lavos demo --speed 10
    """
    from sim.demo import run_demo

    if broker not in ("auto", "mosquitto", "embedded"):
        raise typer.BadParameter("use auto, mosquitto or embedded", param_hint="--broker")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        run_demo(
            speed=speed,
            seconds=seconds,
            http=http,
            seed=seed,
            broker=broker,
            stop=stop,
            notify_webhook=notify_webhook,
            tournament=tournament,
        )
    except (RuntimeError, ValueError) as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
