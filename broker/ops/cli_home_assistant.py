"""`lavos ha …`: Home Assistant discovery, by hand (the hub announces it: `lavos server --home-assistant`).

`lavos ha clear` removes what the hub announced: an empty retained message on every discovery
topic (HA then deletes the entity) and on the per-table state topics. Turning the option off
removes nothing by itself, on purpose: a restart without the flag must not wipe a club's HA setup.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from devices.cli_support import fail

ha_app = typer.Typer(
    help="Home Assistant discovery (deploy/home-assistant.md).\n\nExample: lavos ha topics --venue /etc/lavos/venue.toml",
    no_args_is_help=True,
)
venue_option = typer.Option(..., "--venue", help="The venue file, e.g. /etc/lavos/venue.toml")
HUB_LOGIN = "lavos-hub"


def _topics(venue: Path) -> list[str]:
    from broker.domain.floor import home_assistant as ha
    from broker.domain.venue import load_venue
    from devices.kinds import Kind
    from devices.tomlfile import ConfigError

    try:
        v = load_venue(venue)
    except ConfigError as e:
        raise fail(str(e)) from None
    states = [ha.ha_state_topic(t.id) for t in v.tables if Kind(t.kind).billed]
    return [d.topic for d in ha.venue_discovery(v)] + states


@ha_app.command("topics")
def topics(venue: Path = venue_option) -> None:
    """Print every retained topic the hub publishes for Home Assistant, one a line.

    Example: lavos ha topics --venue /etc/lavos/venue.toml
    """
    for topic in _topics(venue):
        typer.echo(topic)


@ha_app.command("clear")
def clear(
    venue: Path = venue_option,
    mqtt: str = typer.Option(..., "--mqtt", help="The broker as a spare hub login, e.g. mqtt://lavos-hub-4@127.0.0.1:1883"),
    mqtt_password_file: Path | None = typer.Option(None, "--mqtt-password-file", help="File holding that login's password"),
) -> None:
    """Remove the hub's Home Assistant entities: an empty retained message on each of its topics.

    Not as lavos-hub: the broker makes the login the client id, so this connection would end the
    hub's persistent session and the events queued for it. Use a spare hub login of the ACL
    (lavos-hub-4: give it a password with mosquitto_passwd), and stop `--home-assistant` first,
    or the hub announces everything again at its next reconnect.

    Example: lavos ha clear --venue /etc/lavos/venue.toml --mqtt mqtt://lavos-hub-4@127.0.0.1:1883 --mqtt-password-file /root/hub-4-password
    """
    import paho.mqtt.client as paho
    from paho.mqtt.enums import CallbackAPIVersion

    from broker.adapters.hub_link import MqttUrl

    try:
        url = MqttUrl.parse(mqtt, mqtt_password_file)
    except ValueError as e:
        raise fail(str(e)) from None
    if (url.username or HUB_LOGIN) == HUB_LOGIN:
        raise fail("not as lavos-hub (it would end the hub's MQTT session): use a spare hub login such as lavos-hub-4")
    names = _topics(venue)
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=url.username or "", clean_session=True)
    client.username_pw_set(url.username, url.password)
    if url.tls:
        import ssl

        client.tls_set_context(ssl.create_default_context(cafile=str(url.ca_file) if url.ca_file else None))
    try:
        client.connect(url.host, url.port, keepalive=15)
    except OSError as e:
        raise fail(f"cannot reach the MQTT broker at {url.host}:{url.port} ({e})") from None
    client.loop_start()
    try:
        infos = [client.publish(t, b"", qos=1, retain=True) for t in names]
        deadline = time.monotonic() + 15
        while not all(i.is_published() for i in infos):
            if time.monotonic() > deadline:
                raise fail("the broker did not confirm every message in 15 s (is the login right? see its log)")
            time.sleep(0.05)
    finally:
        client.disconnect()
        client.loop_stop()
    typer.echo(f"cleared {len(names)} retained Home Assistant topics")
