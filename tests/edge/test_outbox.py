"""The outbox on a real SQLite file: order, acks, restart replay, seq never reused, full-disk policy."""

from __future__ import annotations

import json
import logging
import sqlite3
from typing import TYPE_CHECKING, Any

import pytest

from edge.outbox import ROW_OVERHEAD, SEQ_BLOCK, Outbox

if TYPE_CHECKING:
    from pathlib import Path


def add(box: Outbox, event_type: str = "pocket", size: int = 10) -> int | None:
    return box.add(event_type, f"t/{event_type}", lambda seq: json.dumps({"seq": seq, "pad": "x" * size}).encode())


def test_pending_is_in_seq_order_and_ack_removes(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.db", 1 << 20) as box:
        seqs = [add(box) for _ in range(5)]
        assert seqs == [0, 1, 2, 3, 4]
        assert [p.seq for p in box.pending()] == seqs
        assert json.loads(box.pending()[2].payload)["seq"] == 2
        box.ack(1)
        box.ack(1)  # a duplicate PUBACK is harmless
        box.ack(99)  # so is one for nothing we hold
        assert [p.seq for p in box.pending()] == [0, 2, 3, 4]
        assert [p.seq for p in box.pending(after_seq=2, limit=1)] == [3]
        assert box.depth == 4


def test_restart_replays_what_was_not_acked_and_continues_seq(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.db", 1 << 20) as box:
        for _ in range(3):
            add(box)
        box.ack(0)
    with Outbox(tmp_path / "o.db", 1 << 20) as box:
        assert [p.seq for p in box.pending()] == [1, 2]
        assert box.depth == 2
        assert add(box) == 3, "a clean close continues without a gap"


def test_seq_is_never_reused_after_a_crash(tmp_path: Path) -> None:
    box = Outbox(tmp_path / "o.db", 1 << 20)
    for _ in range(5):
        add(box)
    for seq in range(5):
        box.ack(seq)
    # no close(): the process died; even the acked-and-deleted seqs must not come back
    box._db.close()
    with Outbox(tmp_path / "o.db", 1 << 20) as again:
        resumed = add(again)
        assert resumed is not None and resumed >= SEQ_BLOCK, "after a crash, seq skips past the whole reserved block"


def test_seq_survives_a_rolled_back_tail(tmp_path: Path) -> None:
    """A power cut may undo commits that were published: the reserved block still protects them."""
    box = Outbox(tmp_path / "o.db", 1 << 20)
    for _ in range(10):
        add(box)
    box._db.close()
    db = sqlite3.connect(tmp_path / "o.db")
    db.execute("DELETE FROM events WHERE seq >= 3")  # what a lost WAL tail looks like
    db.commit()
    db.close()
    with Outbox(tmp_path / "o.db", 1 << 20) as again:
        resumed = add(again)
        assert resumed is not None and resumed >= 10


def row_size(event_type: str, size: int) -> int:
    return len(f"t/{event_type}") + len(json.dumps({"seq": 0, "pad": "x" * size})) + ROW_OVERHEAD


def test_full_outbox_drops_oldest_low_value_events_first(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    room = 10 * row_size("button", 100) + 5  # ten rows fit, allowing for longer seq digits
    with Outbox(tmp_path / "o.db", 64 * 1024) as box:
        box.max_bytes = room
        for _i in range(4):
            add(box, "button", 100)
        for _i in range(6):
            add(box, "pocket", 100)
        assert box.depth == 10 and box.dropped == 0
        caplog.set_level(logging.WARNING)
        assert add(box, "pocket", 100) == 10
        assert box.dropped == 1
        assert [p.seq for p in box.pending()][:3] == [1, 2, 3], "the oldest button went first"
        assert "dropped" in caplog.text


def test_full_outbox_refuses_a_pocket_loudly_when_only_pockets_are_left(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with Outbox(tmp_path / "o.db", 64 * 1024) as box:
        box.max_bytes = 3 * row_size("pocket", 100) + 5
        for _ in range(3):
            add(box, "pocket", 100)
        caplog.set_level(logging.WARNING)
        assert add(box, "pocket", 100) is None
        assert box.refused == 1 and box.dropped == 0 and box.depth == 3
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert errors and "NOT STORED" in errors[0].getMessage() and '"seq": 3' in errors[0].getMessage()
        # a low-value event that does not fit is dropped, and counted
        assert add(box, "activity", 100) is None
        assert box.dropped == 1 and box.refused == 1
        # room again after an ack
        box.ack(0)
        assert add(box, "pocket", 100) is not None


def test_dropped_count_survives_restart(tmp_path: Path) -> None:
    with Outbox(tmp_path / "o.db", 64 * 1024) as box:
        box.max_bytes = 2 * row_size("button", 10) + 5
        for _ in range(3):
            add(box, "button", 10)
        assert box.dropped == 1
    with Outbox(tmp_path / "o.db", 64 * 1024) as box:
        assert box.dropped == 1


@pytest.mark.parametrize("garbage", [b"not a database at all" * 100, b""])
def test_a_corrupt_outbox_file_is_an_error_not_a_silent_reset(tmp_path: Path, garbage: Any) -> None:
    path = tmp_path / "o.db"
    path.write_bytes(garbage)
    if garbage:
        with pytest.raises(sqlite3.DatabaseError):
            Outbox(path, 1 << 20)
    else:
        with Outbox(path, 1 << 20) as box:  # an empty file is a new database
            assert add(box) == 0
