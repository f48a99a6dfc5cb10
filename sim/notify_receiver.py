"""`lavos demo --notify-webhook`: a tiny ntfy-style receiver on loopback that prints what it gets.

The demo's hub sends its alerts there through Apprise (`ntfy://127.0.0.1:PORT/lavos-demo`), so
push notifications can be watched without an ntfy server or an e-mail account. Off by default.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOPIC = "lavos-demo"


class NtfyReceiver:
    def __init__(self, say: Callable[[str], None]) -> None:
        self.received: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _take(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n).decode("utf-8", "replace")
                try:
                    doc = json.loads(raw)  # Apprise's ntfy plugin posts JSON {topic, title, message}
                except ValueError:
                    doc = {"message": raw, "title": self.headers.get("Title", "")}  # ntfy's plain form
                doc = doc if isinstance(doc, dict) else {"message": raw}
                outer.received.append(doc)
                say(str(doc.get("message") or doc.get("title") or ""))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(b'{"id":"demo","event":"message"}')

            do_POST = do_PUT = _take

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_port
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-ntfy", daemon=True)

    @property
    def apprise_url(self) -> str:
        return f"ntfy://127.0.0.1:{self.port}/{TOPIC}"

    @property
    def address(self) -> str:
        return f"http://127.0.0.1:{self.port}/{TOPIC}"

    def start(self) -> NtfyReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
