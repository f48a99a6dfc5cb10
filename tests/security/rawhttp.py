"""A client that streams a huge request body and reads the answer as soon as one comes.

httpx (like most clients) sends the whole body before it reads anything, so it cannot show that a
server answered early; this one checks for an answer before every chunk it sends.
"""

from __future__ import annotations

import contextlib
import select
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

CHUNK = b"x" * (256 * 1024)


@dataclass
class Answer:
    status: int | None  # None: the server closed without an answer
    head: str
    body: bytes
    sent: int  # body bytes the server let us send before it answered (or closed)
    elapsed: float

    def header(self, name: str) -> str | None:
        for line in self.head.split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.strip().lower() == name.lower():
                return value.strip()
        return None


def read_answer(sock: socket.socket, deadline: float) -> tuple[int | None, str, bytes]:
    data = b""
    while time.monotonic() < deadline:
        try:
            part = sock.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            break
        except TimeoutError:
            continue
        if not part:
            break
        data += part
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            length = next(
                (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), None
            )
            if length is not None and len(body) >= length:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1."):
        return None, head.decode("latin-1"), body
    return int(head.split()[1]), head.decode("latin-1"), body


def _pieces(total: int, prefix: bytes, suffix: bytes) -> Iterator[bytes]:
    if prefix:
        yield prefix
    filler = total - len(prefix) - len(suffix)
    while filler > 0:
        yield CHUNK[: min(len(CHUNK), filler)]
        filler -= len(CHUNK)
    if suffix:
        yield suffix


def stream_request(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str],
    total: int,
    *,
    chunked: bool = False,
    prefix: bytes = b"",
    suffix: bytes = b"",
    during: Callable[[int], None] | None = None,
    timeout: float = 60,
) -> Answer:
    """Send `prefix`, then filler up to `total` body bytes, then `suffix`, stopping at the first answer.

    With `chunked` no Content-Length is sent: the body streams as HTTP/1.1 chunks. `during(sent)`
    is called after every chunk (to watch the server while the body is in flight).
    """
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    started = time.monotonic()
    deadline = started + timeout
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items())]
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}")
    sent = 0
    try:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        for piece in _pieces(total, prefix, suffix):
            if select.select([sock], [], [], 0)[0] or time.monotonic() > deadline:
                break  # an answer (or a close) while the body is still going
            try:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += len(piece)
            if during is not None:
                during(sent)
        if chunked and sent >= total:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                sock.sendall(b"0\r\n\r\n")
        status, head, body = read_answer(sock, deadline)
        return Answer(status, head, body, sent, time.monotonic() - started)
    finally:
        sock.close()
