"""A TCP relay on loopback whose cable a test can pull: the network between a client and a real server.

`cut()` closes the listening socket and every relayed connection, so the client sees exactly what
it sees when the server is gone (connection refused, a reset mid-request); `restore()` listens on
the same port again. The server behind it keeps running. That is the point: a server being
stopped can acknowledge a write and still not keep it (VictoriaMetrics did, in CI, three times),
and a test of what a client does during an outage must not depend on how a server shuts down.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass, field

from sim.mosquitto import free_port

_CHUNK = 65536


@dataclass
class TcpCut:
    target_port: int
    target_host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    _listener: socket.socket | None = None
    _conns: set[socket.socket] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def restore(self) -> TcpCut:
        """Listen (again) on `port` and relay every connection to the target."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        with self._lock:
            self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), name="tcp-cut-accept", daemon=True).start()
        return self

    start = restore

    def cut(self) -> None:
        """Refuse new connections and break the open ones, both ways, now."""
        with self._lock:
            listener, self._listener = self._listener, None
            conns, self._conns = self._conns, set()
        if listener is not None:
            _shut(listener)  # wakes the accept() blocked on it (close alone does not, on Linux)
            listener.close()
        for sock in conns:
            _shut(sock)  # each pump closes the socket it reads once its recv() returns

    close = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut: the listener is closed
            try:
                server = socket.create_connection((self.target_host, self.target_port), timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # cut while connecting
                    client.close()
                    server.close()
                    return
                self._conns |= {client, server}
            for src, dst in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(src, dst), name="tcp-cut-pump", daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(_CHUNK):
                dst.sendall(data)
        except OSError:
            pass  # cut, or the other side went away
        finally:
            _shut(src)
            _shut(dst)  # so the pump the other way ends too
            with self._lock:
                self._conns.discard(src)
            src.close()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # not connected (any more)
        sock.shutdown(socket.SHUT_RDWR)
