"""A hub in a process of its own for the SIGKILL test: `python -m tests.notify.hub_proc DB DATA_DIR URL [TABLE...]`.

Configures one target (URL) unless the settings exist, raises node_offline for each TABLE (an
open one is only touched), prints "ready" and runs until killed."""

from __future__ import annotations

import sys
import time
from datetime import timedelta
from pathlib import Path

from broker.adapters.notify import Notifier
from broker.compose import build_hub, open_store
from broker.domain.floor import alert_kinds
from broker.domain.venue import load_venue
from broker.notify.notifications import NotifySettings, SaveNotifySettings, Target
from tests.support.hub import VENUE, on_writer


def main() -> None:
    db_url, data_dir, url, *tables = sys.argv[1:]
    Notifier.poll_s, Notifier.backoff_s, Notifier.late_after = 0.1, (0.2,), timedelta(0)
    store = open_store(db_url)
    hub = build_hub(load_venue(VENUE), store, data_dir=Path(data_dir))
    hub.start()
    if not hub.notifications.settings.targets:
        hub.execute(SaveNotifySettings(settings=NotifySettings((Target(id="t0", url=url),)), actor="boss"))
    for t in tables:
        on_writer(hub, lambda db: hub.alerts.raise_alert(db, alert_kinds.node_offline(t)))  # runs now, on the writer
    print("ready", flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
