"""The hub as a real process (no HTTP), driven through stdin, for kill -9 tests.

    python -m tests.broker.floor.hub_proc VENUE DB_URL MQTT_PORT
stdin: "start TABLE" -> session id; "stop ID" -> JSON {total_cents, started_at, stopped_at};
"checkin TABLE MEMBER_ID" -> "ok" (a staff check-in at foosball).
"""

from __future__ import annotations

import json
import logging
import sys

from broker.adapters.hub_link import MqttUrl
from broker.compose import build_hub, open_store
from broker.domain.venue import load_venue
from broker.floor.games import StartGame, StopGame
from broker.storage.foosball import checkin
from broker.storage.models import Game
from tests.support.hub import on_writer


def main(venue_path: str, db_url: str, port: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    store = open_store(db_url)
    svc = build_hub(load_venue(venue_path), store, mqtt_url=MqttUrl("127.0.0.1", int(port), "lavos-hub", "hub-secret", False))
    svc.start()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "start":
            print(svc.execute(StartGame(table=words[1], actor="test")), flush=True)
        elif words and words[0] == "checkin":
            on_writer(svc, lambda db: checkin(db, words[1], int(words[2]), svc.clock(), "staff"))  # runs now, on the writer
            print("ok", flush=True)
        elif words and words[0] == "stop":
            sid = int(words[1])
            svc.execute(StopGame(game=sid, actor="test"))
            with store.reader() as db:
                row = db.get(Game, sid)
                assert row is not None and row.started_at is not None and row.stopped_at is not None
                print(
                    json.dumps(
                        {"total_cents": row.total_cents, "started_at": row.started_at.isoformat(), "stopped_at": row.stopped_at.isoformat()}
                    ),
                    flush=True,
                )
    svc.close()


if __name__ == "__main__":
    main(*sys.argv[1:4])
