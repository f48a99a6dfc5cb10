"""Real receivers on loopback for the push notification tests: an SMTP server (aiosmtpd) and a
JSON webhook (http.server), each keeping what it received."""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from aiosmtpd.controller import Controller


class MailBox:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []  # (subject, plain text body)
        outer = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
                body = msg.get_body(preferencelist=("plain",))
                outer.messages.append((str(msg["Subject"]), body.get_content() if body else ""))
                return "250 OK"

        with socket.socket() as probe:  # aiosmtpd cannot take port 0 (it connects to itself to check)
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def start(self) -> MailBox:
        self._controller.start()
        return self

    def url(self) -> str:
        return f"mailto://127.0.0.1:{self.port}?from=hala@lavos.sk&to=sef@lavos.sk&mode=insecure"

    def stop(self) -> None:
        self._controller.stop()


class Webhook:
    """A JSON webhook (Apprise json://); `start(port)` may reuse the port of one stopped before.

    With `hold`, a slow receiver: each request is read, counted in `arrived`, and answered only once
    `hold` is set (a message in flight for as long as the test wants)."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.received: list[dict[str, Any]] = []
        self.paths: list[str] = []  # the path each message was posted to (a guest SMS gateway's number)
        self.arrived = 0  # requests read, answered or not
        self.hold = hold
        self._server: HTTPServer | None = None
        self.port = 0

    def start(self, port: int = 0) -> Webhook:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n))
                outer.arrived += 1
                if outer.hold is not None:
                    outer.hold.wait(60)
                outer.received.append(body)
                outer.paths.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        HTTPServer.allow_reuse_address = True
        self._server = HTTPServer(("127.0.0.1", port), Handler)
        self.port = self._server.server_port
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"

    def stop(self) -> None:
        if self.hold is not None:
            self.hold.set()  # a held request is answered, so the server can stop
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def texts(self) -> list[str]:
        return [m["message"] for m in self.received]
