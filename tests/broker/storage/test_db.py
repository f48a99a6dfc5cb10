"""The store on real SQLite and real PostgreSQL: opening, migrations, types, exactly-once ingest, alerts."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError

from broker.domain.floor.reject_tally import EXCERPT_CHARS, INVALID, SAMPLES_PER_TABLE, UNKNOWN, UNKNOWN_SENSOR, RejectTally
from broker.storage.alerts import ack_alert, close_alert, open_alerts, open_or_touch_alert
from broker.storage.audit import append_game_op, record_audit
from broker.storage.engine import default_db_url, open_store
from broker.storage.errors import SchemaTooNew, StoreError
from broker.storage.events import insert_event_once, insert_events_once, prune_events
from broker.storage.migrate import head_revision
from broker.storage.models import Alert, AuditEntry, Base, Event, Game, Member, MemberCard
from broker.storage.rejects import node_rejects, record_rejects
from tests.support.matching import some

if TYPE_CHECKING:
    from pathlib import Path

    from broker.storage.engine import Store
    from tests.support.postgres import PostgresCluster


BRATISLAVA = ZoneInfo("Europe/Bratislava")
T0 = datetime(2026, 11, 30, 18, 0, tzinfo=UTC)


def event_row(seq: int, *, table_id: str = "pool-01", boot: str = "boot-a", received_at: datetime = T0) -> dict[str, Any]:
    return dict(
        table_id=table_id,
        boot=boot,
        seq=seq,
        type="pocket",
        node_ts=T0,
        ts_synced=True,
        data={"pocket": seq % 6, "pulse_ms": 21.5},
        received_at=received_at,
    )


def race(store: Any, work: Any, n: int = 2) -> list[Any]:
    """Run work(session) in n threads that start together, each in its own transaction."""
    barrier = threading.Barrier(n)
    results: list[Any] = [None] * n
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait(5)
            with store.session() as db:
                results[i] = work(db)
        except BaseException as e:  # noqa: BLE001 - reported to the test thread below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    return results


# --- opening and migrations ----------------------------------------------------------------


def test_models_and_migrations_agree(store: Store) -> None:
    """A model change without a revision would make the server's upgrade silently incomplete."""
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata)
    assert diff == []


def test_open_twice_is_a_no_op_at_head(db_url: str) -> None:
    for _ in range(2):
        s = open_store(db_url)
        with s.engine.connect() as conn:
            assert MigrationContext.configure(conn).get_current_heads() == (head_revision(),)
        s.close()


def test_sqlite_connection_settings(tmp_path: Path) -> None:
    s = open_store(f"sqlite:///{tmp_path / 'x.db'}")
    with s.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() >= 1000
    s.close()


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(IntegrityError), store.session() as db:
        db.add(MemberCard(uid="04a2b3c4", member_id=424242, created_at=T0))


def test_newer_schema_is_refused(db_url: str) -> None:
    s = open_store(db_url)
    with s.session() as db:
        db.execute(text("UPDATE alembic_version SET version_num = '9999_from_the_future'"))
    s.close()
    with pytest.raises(SchemaTooNew) as err:
        open_store(db_url)
    assert str(err.value) == (
        f"database schema 9999_from_the_future is newer than this version of Lavos (knows up to {head_revision()}); upgrade Lavos"
    )


@pytest.mark.parametrize(
    "url, says",
    [
        ("not a url at all", "is not a URL"),
        ("mysql://lavos@localhost/lavos", "backend 'mysql' is not supported"),
        ("sqlite://", "names no file"),
        ("sqlite:////nonexistent-dir/sub/lavos.db", "database directory /nonexistent-dir/sub does not exist"),
    ],
)
def test_bad_database_urls_say_what_to_do(url: Any, says: Any) -> None:
    with pytest.raises(StoreError, match=says) as err:
        open_store(url)
    assert "sqlite:///" in str(err.value) or "does not exist" in str(err.value)


def test_a_file_that_is_no_database(tmp_path: Path) -> None:
    junk = tmp_path / "lavos.db"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 20)
    with pytest.raises(StoreError, match="file is not a database"):
        open_store(f"sqlite:///{junk}")
    assert junk.read_bytes().startswith(b"\x89PNG")  # nothing overwritten


def test_unreachable_postgresql_hides_the_password(postgres_cluster: PostgresCluster) -> None:
    from sim.mosquitto import free_port

    with pytest.raises(StoreError, match="cannot open database") as err:
        open_store(f"postgresql://lavos:s3cret-pw@127.0.0.1:{free_port()}/lavos")
    assert "s3cret-pw" not in str(err.value)


def test_default_url_is_a_sqlite_file_in_the_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LAVOS_DB", raising=False)
    monkeypatch.setenv("LAVOS_DATA_DIR", str(tmp_path / "data"))
    assert default_db_url() == f"sqlite:///{tmp_path / 'data' / 'lavos.db'}"
    assert (tmp_path / "data").is_dir()


# --- types ---------------------------------------------------------------------------------


def test_datetimes_come_back_aware_utc(store: Store) -> None:
    local = datetime(2026, 7, 1, 23, 30, tzinfo=BRATISLAVA)  # summer time: 21:30 UTC
    with store.session() as db:
        s = Game(table_id="pool-01", state="running", started_at=local)
        db.add(s)
        db.flush()
        sid = s.id
    with store.session() as db:
        got = some(db.get(Game, sid)).started_at
    assert got == local and got.tzinfo == UTC and got.hour == 21


def test_naive_datetime_is_refused(store: Store) -> None:
    with pytest.raises(Exception, match="naive datetime"), store.session() as db:
        db.add(Game(table_id="pool-01", state="running", started_at=datetime(2026, 1, 1, 12, 0)))
        db.flush()


# --- events --------------------------------------------------------------------------------


def test_duplicate_events_are_ignored(store: Store) -> None:
    with store.session() as db:
        assert insert_event_once(db, **event_row(1)) is True
        assert insert_event_once(db, **event_row(1)) is False
        assert insert_event_once(db, **event_row(1, boot="boot-b")) is True  # a new boot is a new event
    with store.session() as db:
        assert insert_event_once(db, **event_row(1)) is False  # across transactions too
        assert db.scalar(select(func.count()).select_from(Event)) == 2
        stored = db.scalars(select(Event).where(Event.boot == "boot-a")).one()
        assert stored.data == {"pocket": 1, "pulse_ms": 21.5} and stored.node_ts == T0


def test_batch_insert_stores_what_the_orm_stores(store: Store) -> None:
    """insert_events_once writes its own SQL on both backends (the ingest hot path); the stored
    values must be exactly what the column types store, down to the raw text on SQLite, or
    time-range queries and retention would compare unlike formats. More than one chunk, a
    zone other than UTC, a whole second (no microseconds), unsynced, non-ASCII data."""
    whole = datetime(2026, 11, 30, 19, 0, 0, tzinfo=BRATISLAVA)
    odd = datetime(2026, 11, 30, 19, 0, 0, 123, tzinfo=BRATISLAVA)
    rows = [
        dict(
            table_id="pool-01",
            boot="bulk",
            seq=i,
            type="card",
            node_ts=odd if i % 2 else whole,
            ts_synced=bool(i % 3),
            data={"uid": "04a1b2", "n": i, "note": "žltá"},
            received_at=whole + timedelta(seconds=i % 7),
        )
        for i in range(2345)
    ]
    with store.session() as db:
        assert insert_events_once(db, rows) == {("pool-01", "bulk", i) for i in range(2345)}
        for r in rows[:40]:
            db.add(Event(**{**r, "boot": "orm"}))
    with store.session() as db:

        def raw(boot: Any) -> Any:
            return db.execute(
                text("SELECT seq, type, node_ts, ts_synced, received_at, data FROM events WHERE boot = :b AND seq < 40 ORDER BY seq"),
                {"b": boot},
            ).all()

        assert raw("bulk") == raw("orm")
        stored = db.scalars(select(Event).where(Event.boot == "bulk", Event.seq == 1)).one()
        assert stored.node_ts == odd and stored.received_at == whole + timedelta(seconds=1) and stored.ts_synced is True
        assert stored.data == {"uid": "04a1b2", "n": 1, "note": "žltá"}
        assert db.scalar(select(func.count()).select_from(Event).where(Event.received_at >= whole + timedelta(seconds=6))) == sum(
            1 for i in [*range(2345), *range(40)] if i % 7 == 6
        )
        assert insert_events_once(db, rows[:1500]) == set()  # all stored: nothing new, nothing raised


def test_batch_insert_reports_only_new_keys(store: Store) -> None:
    with store.session() as db:
        insert_events_once(db, [event_row(1), event_row(2)])
    with store.session() as db:
        new = insert_events_once(db, [event_row(2), event_row(3), event_row(3), event_row(4)])
    assert new == {("pool-01", "boot-a", 3), ("pool-01", "boot-a", 4)}
    with store.session() as db:
        assert db.scalar(select(func.count()).select_from(Event)) == 4
        assert insert_events_once(db, []) == set()


def test_concurrent_duplicate_inserts_store_one_row(store: Store) -> None:
    results = race(store, lambda db: insert_event_once(db, **event_row(7)))
    assert sorted(results) == [False, True]
    with store.session() as db:
        assert db.scalar(select(func.count()).select_from(Event)) == 1


def test_prune_events_keeps_the_recent_ones(store: Store) -> None:
    with store.session() as db:
        insert_events_once(db, [event_row(i, received_at=T0 - timedelta(days=i)) for i in range(1, 6)])
    with store.session() as db:
        assert prune_events(db, older_than=T0 - timedelta(days=3)) == 2  # days 4 and 5
    with store.session() as db:
        assert sorted(db.scalars(select(Event.seq))) == [1, 2, 3]


def test_rejects_are_counted_per_table_and_reason_with_bounded_samples(store: Store) -> None:
    for batch in range(3):
        tally = RejectTally()
        for i in range(15):
            tally.add("pool-01", UNKNOWN_SENSOR, "lavos/v1/table/pool-01/event/sensor_fault", f"sensor s{batch}-{i}", b'{"x":"\x00"}', T0)
        tally.add(UNKNOWN, INVALID, "lavos/v1/table/\x00" + "x" * 500, "bad", b"\xff" * 5000, T0)
        with store.session() as db:
            record_rejects(db, tally, T0 + timedelta(minutes=batch))
    with store.session() as db:
        got = node_rejects(db)
    pool = got["pool-01"]
    assert pool.by_reason[UNKNOWN_SENSOR].count == 45 and pool.dropped == 45
    assert pool.by_reason[UNKNOWN_SENSOR].first_at == T0 and pool.last_at == T0 + timedelta(minutes=2)
    assert len(pool.samples) == SAMPLES_PER_TABLE and pool.samples[0].error == "sensor s2-14"  # newest first
    odd = got[UNKNOWN].samples[0]
    assert got[UNKNOWN].by_reason[INVALID].count == 3 and odd.topic.startswith("lavos/v1/table/\\x00") and len(odd.topic) <= 201
    assert len(odd.excerpt) <= EXCERPT_CHARS + 1


# --- alerts --------------------------------------------------------------------------------


def touch(db: Any, cause: Any = "play_without_session:pool-03", at: Any = T0) -> Any:
    return open_or_touch_alert(
        db,
        cause_key=cause,
        kind="play_without_session",
        table_id="pool-03",
        message="Hra bez session na stole pool-03",
        message_en="Play without a session on pool-03",
        at=at,
    )


def test_one_open_alert_per_cause(store: Store) -> None:
    with store.session() as db:
        first, opened = touch(db)
        assert opened and first.count == 1
        again, opened = touch(db, at=T0 + timedelta(seconds=40))
        assert not opened and again.id == first.id and again.count == 2
        assert again.last_seen_at == T0 + timedelta(seconds=40) and again.opened_at == T0
        other, opened = touch(db, cause="node_offline:pool-01")
        assert opened and other.id != first.id
        ack_alert(db, first.id, "jana", at=T0 + timedelta(minutes=1))
        acked, opened = touch(db, at=T0 + timedelta(minutes=2))
        assert not opened and acked.acked_by == "jana" and acked.count == 3  # an ack does not reopen
        closed = close_alert(db, "play_without_session:pool-03", at=T0 + timedelta(minutes=3))
        assert closed is not None and closed.id == first.id
        assert close_alert(db, "play_without_session:pool-03") is None
        fresh, opened = touch(db, at=T0 + timedelta(minutes=4))
        assert opened and fresh.id != first.id and fresh.acked_at is None
        assert [a.id for a in open_alerts(db)] == [fresh.id, other.id]
        assert [a.id for a in open_alerts(db, table_id="nope")] == []


def test_ack_with_close_and_unknown_alert(store: Store) -> None:
    with store.session() as db:
        alert, _ = touch(db)
        ack_alert(db, alert.id, "jana", close=True)
        assert alert.closed_at is not None and open_alerts(db) == []
        with pytest.raises(StoreError, match="no alert 999999"):
            ack_alert(db, 999999, "jana")


def test_partial_unique_index_is_enforced_by_the_database(store: Store) -> None:
    with pytest.raises(IntegrityError), store.session() as db:
        for _ in range(2):
            db.add(
                Alert(kind="k", cause_key="same", message="m", message_en="m", severity="warning", opened_at=T0, last_seen_at=T0, count=1)
            )
        db.flush()
    with store.session() as db:  # closed ones do not count
        for _ in range(2):
            db.add(
                Alert(
                    kind="k",
                    cause_key="same",
                    message="m",
                    message_en="m",
                    severity="warning",
                    opened_at=T0,
                    last_seen_at=T0,
                    count=1,
                    closed_at=T0,
                )
            )
        db.add(Alert(kind="k", cause_key="same", message="m", message_en="m", severity="warning", opened_at=T0, last_seen_at=T0, count=1))


def test_concurrent_alerts_for_one_cause_make_one_alert(store: Store) -> None:
    race(store, lambda db: touch(db)[1], n=3)
    with store.session() as db:
        (alert,) = open_alerts(db)
        assert alert.count == 3


def test_bad_severity(store: Store) -> None:
    with store.session() as db, pytest.raises(ValueError, match="severity 'loud'"):
        open_or_touch_alert(db, cause_key="c", kind="k", message="m", message_en="m", severity="loud")


# --- audit ---------------------------------------------------------------------------------


def test_session_ops_are_numbered_per_session(store: Store) -> None:
    with store.session() as db:
        a = Game(table_id="pool-01", state="running", started_at=T0)
        b = Game(table_id="pool-02", state="running", started_at=T0)
        db.add_all([a, b])
        db.flush()
        seqs = [
            append_game_op(db, a.id, "start", {"tariff": "standard"}, "jana").seq,
            append_game_op(db, b.id, "start", {}, "jana").seq,
            append_game_op(db, a.id, "stop", {}, "jana", reason="closing").seq,
        ]
        assert seqs == [1, 1, 2]
        with pytest.raises(StoreError, match="no game 999999"):
            append_game_op(db, 999999, "stop", {}, "jana")
    with store.session() as db:
        ops = some(db.get(Game, a.id)).ops
        assert [(o.seq, o.kind, o.reason) for o in ops] == [(1, "start", None), (2, "stop", "closing")]
        assert ops[0].data == {"tariff": "standard"}


def test_audit_entries(store: Store) -> None:
    with store.session() as db:
        record_audit(db, "jana", "tariff.edit", "tariff:standard", {"rate": [600, 650]}, "new price list")
    with store.session() as db:
        entry = db.scalars(select(AuditEntry)).one()
        assert (entry.actor, entry.action, entry.detail, entry.reason) == ("jana", "tariff.edit", {"rate": [600, 650]}, "new price list")
        assert entry.at.tzinfo == UTC
        assert db.scalar(select(func.count()).select_from(Member)) == 0


def test_readers_do_not_wait_for_a_writer(store: Store) -> None:
    with store.session() as db:
        insert_event_once(db, **event_row(1))
    with store.session() as writer:
        insert_event_once(writer, **event_row(2))  # holds the write lock until the block ends
        done = threading.Event()

        def read() -> None:
            with store.reader() as r:
                assert r.scalar(select(func.count()).select_from(Event)) == 1  # the committed row only
            done.set()

        threading.Thread(target=read).start()
        assert done.wait(3), "a reader queued behind the open write transaction"


def test_processes_starting_together_migrate_once(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Two servers started at once on an empty database: both come up, the schema is made once."""
    cluster = request.getfixturevalue("postgres_cluster")
    for url in (f"sqlite:///{tmp_path / 'fresh.db'}", cluster.create_database()):
        barrier = threading.Barrier(2)
        stores, errors = [], []

        def start() -> None:
            try:
                barrier.wait(5)
                stores.append(open_store(url))
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=start) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and len(stores) == 2, errors
        for s in stores:
            with s.reader() as db:
                assert db.scalar(text("SELECT version_num FROM alembic_version")) == head_revision()
            s.close()
        if url.startswith("postgresql"):
            cluster.drop_database(url)
