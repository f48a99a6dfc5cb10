"""paho-mqtt plumbing shared by the table nodes (edge) and the hub: client, TLS, will, backoff, guards.

The lowest layer both may import; it knows nothing of either. What differs stays with them: a
node uses clean sessions and its outbox as the record, the hub a persistent session with
manual acks.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

log = logging.getLogger("lavos.mqtt")
_P = ParamSpec("_P")


def guarded(fn: Callable[_P, None], on_error: Callable[[], None] | None = None, logger: logging.Logger | None = None) -> Callable[_P, None]:
    """An exception escaping a paho callback kills paho's network thread: log it instead."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> None:
        try:
            fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - the connection must carry on
            if on_error is not None:
                on_error()
            (logger or log).exception("error in MQTT callback %s (ignored; the connection carries on)", fn.__name__)

    return wrapper


def make_client(
    client_id: str,
    *,
    v5: bool,
    persistent: bool,
    username: str | None,
    password: str | None,
    tls: bool,
    ca_file: Path | None,
    will: tuple[str, bytes],
    reconnect_s: tuple[float, float],
    max_inflight: int,
    manual_ack: bool = False,
) -> mqtt.Client:
    """A paho 2.x client with login, TLS (verified against `ca_file` or the system store), a
    retained QoS 1 will and reconnect backoff. `persistent`: the broker keeps the session
    (MQTT 3.1.1 clean_session=False; on v5 it is chosen at connect time)."""
    client = mqtt.Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        clean_session=None if v5 else not persistent,
        protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311,
        manual_ack=manual_ack,
    )
    if username:
        client.username_pw_set(username, password)
    if tls:
        # A private CA (deploy/mosquitto/make-certs.sh) is in no system trust store.
        client.tls_set_context(ssl.create_default_context(cafile=str(ca_file) if ca_file else None))
    topic, payload = will
    client.will_set(topic, payload, qos=1, retain=True)
    client.reconnect_delay_set(reconnect_s[0], reconnect_s[1])  # type: ignore[arg-type]  # paho's hint says int; floats work
    client.max_inflight_messages_set(max_inflight)
    return client


def say_goodbye(client: mqtt.Client, last_words: tuple[str, bytes] | None, *, connected: bool, wait_s: float = 2.0) -> None:
    """Publish retained last words (a clean disconnect does not fire the will), then stop paho."""
    if last_words is not None:
        topic, payload = last_words
        try:
            info = client.publish(topic, payload, qos=1, retain=True)
            if connected:
                info.wait_for_publish(wait_s)
        except (RuntimeError, ValueError):
            pass
    client.disconnect()
    # paho 2.x: after disconnect() its network thread may exit and clear `_thread` between
    # loop_stop()'s check and its join (AttributeError on None); the thread is gone either way.
    with contextlib.suppress(AttributeError):
        client.loop_stop()
