"""httpx for the tests and benches, with one TLS context per process instead of one per call.

httpx builds an SSL context (the system's CA bundle read and parsed: ~20 ms of CPU) for every
client it makes, even for a plain-HTTP address, and `httpx.get`/`post`/`request` make a client per
call. Polling a starting server or a standby's health page that way, and calling the API once per
step, was a tenth of the test workers' CPU in a profiled full run. Here the context is made once and
handed to every call (0.4 ms a client): the calls are otherwise httpx's own, a fresh connection
each, and a call that names its own `verify` (a test CA) keeps it.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any

import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """The system's trust store, read once (OpenSSL contexts are safe to share between threads)."""
    return ssl.create_default_context()


def request(method: str, url: str | httpx.URL, **kw: Any) -> httpx.Response:
    kw.setdefault("verify", tls_context())
    return httpx.request(method, url, **kw)


def get(url: str | httpx.URL, **kw: Any) -> httpx.Response:
    return request("GET", url, **kw)


def post(url: str | httpx.URL, **kw: Any) -> httpx.Response:
    return request("POST", url, **kw)


def Client(**kw: Any) -> httpx.Client:
    kw.setdefault("verify", tls_context())
    return httpx.Client(**kw)


def HTTPTransport(**kw: Any) -> httpx.HTTPTransport:
    kw.setdefault("verify", tls_context())
    return httpx.HTTPTransport(**kw)
