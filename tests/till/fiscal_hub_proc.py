"""A hub as a real process (no MQTT), driven through stdin, for the eKasa kill -9 test.

    python -m tests.till.fiscal_hub_proc VENUE DB_URL
stdin: "ekasa URL" -> "ok" (eKasa on at URL, 1 s timeout); "pay TABLE" -> the payment's id (a
game started on TABLE and paid through tests/till/payment_stand_in.py).
"""

from __future__ import annotations

import logging
import sys

from broker.compose import build_hub, open_store
from broker.domain.venue import load_venue
from broker.till.fiscal import SaveEkasaSettings
from tests.till.payment_stand_in import game_tab, pay


def main(venue_path: str, db_url: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    hub = build_hub(load_venue(venue_path), open_store(db_url))
    hub.start()
    hub.till.fiscal.poll_s = 0.2
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if words and words[0] == "ekasa":
            hub.execute(SaveEkasaSettings(enabled=True, url=words[1], timeout_s=1.0, actor="boss"))
            print("ok", flush=True)
        elif words and words[0] == "pay":
            print(pay(hub, game_tab(hub, words[1])), flush=True)
    hub.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
