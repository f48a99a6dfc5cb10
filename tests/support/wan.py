"""A bad internet link on loopback: a TCP relay in front of a real server whose path a test can break
in each of the ways a WAN breaks, and heal again.

    link = Wan(centre_broker.tls.port).start()      # relays, as a good path does
    link.set(Wan.RESET)                              # accepts, then resets every connection
    link.set(Wan.UP)                                 # heals: relays again

The modes (what a client of the relay sees):
- UP: every byte relayed both ways.
- REFUSED: nothing listens (connection refused); open connections are reset.
- BLACKHOLE: connections are accepted and nothing comes back, ever; open connections go silent
  (what is sent is swallowed), as behind a dead router whose far side never answers.
- RESET: a connection is accepted and hung up at once, before a byte is read (the client's TLS
  handshake reads an "unexpected eof"); open connections are reset (RST). Issue 29 item 11: this
  is what sends Debian 12's Mosquitto 2.0.11 bridge into a busy loop that starves the hall's own
  broker (a RST at once, or a hang-up after the ClientHello, does not).
- GARBAGE: a connection is accepted and answered with bytes that are not TLS (a captive portal, a
  middlebox); open connections get the same garbage in the middle of their stream.
- SLOW: relayed, each chunk held back SLOW_S each way (a saturated uplink, a satellite hop).

The server behind it keeps running throughout: a test of a client's outage must not depend on how
a server shuts down (tests/support/tcp_cut.py says why).
"""

from __future__ import annotations

import contextlib
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from sim.mosquitto import free_port

_CHUNK = 65536
_LINGER_RST = struct.pack("ii", 1, 0)  # SO_LINGER on, 0 s: close() sends a RST


@dataclass
class Wan:
    target_port: int
    target_host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    slow_s: float = 0.25

    UP = "up"
    REFUSED = "refused"
    BLACKHOLE = "blackholed"
    RESET = "reset after accept"
    GARBAGE = "TLS garbage"
    SLOW = "slow"
    FAULTS = (REFUSED, BLACKHOLE, RESET, GARBAGE, SLOW)

    def __post_init__(self) -> None:
        self.mode = self.UP
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.accepted = 0  # connections the relay took, whatever it did with them

    def start(self) -> Wan:
        self._listen()
        return self

    def set(self, mode: str) -> None:
        """Switch the path to `mode` now: new connections see it, and so do the open ones."""
        if mode not in (self.UP, *self.FAULTS):
            raise ValueError(f"no such mode {mode!r}")
        with self._lock:
            old, self.mode = self.mode, mode
            conns = set(self._conns) if mode in (self.REFUSED, self.RESET, self.GARBAGE) else set()
        if mode == self.REFUSED:
            self._unlisten()
        elif old == self.REFUSED:
            self._listen()
        for sock in conns:
            if mode == self.GARBAGE:
                with contextlib.suppress(OSError):
                    sock.sendall(_garbage())
            _reset(sock)

    def close(self) -> None:
        self._unlisten()
        with self._lock:
            conns, self._conns = self._conns, set()
        for sock in conns:
            _reset(sock)  # its pump closes it

    # -- the relay --------------------------------------------------------------------

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="wan-accept", daemon=True).start()

    def _unlisten(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() blocked on it
            listener.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # refused: the listener is closed
            self.accepted += 1
            threading.Thread(target=self._serve, args=(client,), name="wan-conn", daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        mode = self.mode
        if mode == self.RESET:
            client.close()  # a FIN before the ClientHello is even read
            return
        if mode == self.GARBAGE:
            client.settimeout(5)
            with contextlib.suppress(OSError):
                client.recv(_CHUNK)  # the ClientHello
                client.sendall(_garbage())
            _reset(client)
            client.close()  # with SO_LINGER 0: a RST
            return
        if mode == self.BLACKHOLE:
            self._track(client)
            self._swallow(client)
            return
        try:
            server = socket.create_connection((self.target_host, self.target_port), timeout=5)
        except OSError:
            _reset(client)
            client.close()
            return
        server.settimeout(None)
        self._track(client, server)
        for src, dst in ((client, server), (server, client)):
            threading.Thread(target=self._pump, args=(src, dst), name="wan-pump", daemon=True).start()

    def _track(self, *socks: socket.socket) -> None:
        with self._lock:
            self._conns.update(socks)

    def _swallow(self, sock: socket.socket) -> None:
        try:
            while sock.recv(_CHUNK):
                pass
        except OSError:
            pass
        finally:
            self._drop(sock)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(_CHUNK):
                mode = self.mode
                if mode == self.BLACKHOLE:
                    continue  # swallowed: the far side never hears of it
                if mode == self.SLOW:
                    time.sleep(self.slow_s)
                dst.sendall(data)
        except OSError:
            pass  # reset, or the other side went away
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_RDWR)  # so the pump the other way ends too
            self._drop(src)

    def _drop(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns.discard(sock)
        sock.close()


def _garbage() -> bytes:
    # Not a TLS record: an HTTP answer a captive portal gives, then noise.
    return b"HTTP/1.1 302 Found\r\nLocation: http://portal.invalid/\r\n\r\n" + os.urandom(512)


def _reset(sock: socket.socket) -> None:
    """Make the socket's close() a RST, and wake the thread reading it (which then closes it)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RD)  # recv() returns b"" at once; no FIN is sent
