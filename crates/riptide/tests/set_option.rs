//! `Db::set_option`: a running database takes new values of its dynamic options, uses them
//! from the next use on (a lower compaction trigger starts a compaction; a lower write-set
//! limit refuses the next write), and refuses the others, unknown names and values it could
//! not run with, changing nothing then.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::time::{Duration, Instant};

use riptide::{Db, ErrorKind, OptionValue, Options, SyncMode, TransactionOptions};

fn l0_files(db: &Db) -> usize {
    db.statistics().levels.first().map_or(0, |l| l.files)
}

#[test]
fn values_change_and_fixed_options_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(
        db.option_value("compaction_pri").unwrap(),
        OptionValue::Enum(0)
    );
    db.set_option("compaction_pri", "round_robin").unwrap();
    assert_eq!(
        db.option_value("compaction_pri").unwrap(),
        OptionValue::Enum(1)
    );
    db.set_option("max_bytes_for_level_base", "512M").unwrap();
    assert_eq!(
        db.option_value("max_bytes_for_level_base").unwrap(),
        OptionValue::Unsigned(512 << 20)
    );
    // The first change stays when another option changes.
    assert_eq!(
        db.option_value("compaction_pri").unwrap(),
        OptionValue::Enum(1)
    );

    // Fixed while open: refused, unchanged.
    let before = db.option_value("write_buffer_size").unwrap();
    let e = db.set_option("write_buffer_size", "8M").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported, "{e}");
    assert!(e.to_string().contains("write_buffer_size"), "{e}");
    assert_eq!(db.option_value("write_buffer_size").unwrap(), before);

    // A value the engine could not run with: refused, unchanged.
    let e = db.set_option("l0_compaction_trigger", "1000").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("l0_stop_trigger"), "{e}");
    assert_eq!(
        db.option_value("l0_compaction_trigger").unwrap(),
        OptionValue::Unsigned(4)
    );
    // Out of bounds, not a number, unknown: refused.
    for (name, text) in [
        ("level_size_ratio", "0.5"),
        ("max_compaction_bytes", "lots"),
        ("no_such_option", "1"),
    ] {
        let e = db.set_option(name, text).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
        assert!(e.to_string().contains(name), "{e}");
    }
    assert!(db.option_value("no_such_option").is_err());

    // Every option the table calls dynamic is set to its own value without error.
    for spec in Options::TABLE.iter().filter(|s| s.is_dynamic()) {
        let text = spec.value_type.format(&db.option_value(spec.name).unwrap());
        db.set_option(spec.name, &text)
            .unwrap_or_else(|e| panic!("{}: {e}", spec.name));
    }
}

#[test]
fn a_lower_compaction_trigger_starts_a_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .l0_compaction_trigger(8)
        .young_space_bound(false);
    let db = Db::open(dir.path(), opts).unwrap();
    // Three flushed tables over the same keys, below the trigger of 8.
    for round in 0..3u32 {
        for i in 0..200u32 {
            db.put(
                format!("k{i:04}").as_bytes(),
                format!("v{round}").as_bytes(),
            )
            .unwrap();
        }
        db.flush().unwrap();
    }
    // Flushes into an empty tree may move down at once; what stays in L0 stays there.
    let before = l0_files(&db);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(l0_files(&db), before, "nothing is due at trigger 8");
    assert!(before >= 2, "{before} L0 tables");

    db.set_option("l0_compaction_trigger", "2").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while l0_files(&db) >= 2 {
        assert!(
            Instant::now() < deadline,
            "no compaction after the trigger fell"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(db.get(b"k0007").unwrap().as_deref(), Some(&b"v2"[..]));
}

#[test]
fn a_lower_write_set_limit_refuses_the_next_write() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let cf = db.default_cf();
    let value = vec![b'v'; 1000];
    let txn = db.begin_transaction(TransactionOptions::default()).unwrap();
    for i in 0..100u32 {
        txn.put(&cf, format!("a{i:04}").as_bytes(), &value).unwrap();
    }
    // The transaction holds about 100 KB: a 64 KiB limit refuses its next write.
    db.set_option("max_txn_write_set_bytes", "64K").unwrap();
    let e = txn.put(&cf, b"b", &value).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");
    // Back to no limit: the next write goes through, and the commit keeps everything.
    db.set_option("max_txn_write_set_bytes", "0").unwrap();
    txn.put(&cf, b"b", &value).unwrap();
    txn.commit().unwrap();
    assert!(db.get(b"b").unwrap().is_some());
    assert!(db.get(b"a0099").unwrap().is_some());
}

#[test]
fn the_block_cache_takes_a_new_size() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .block_cache_size(8 << 20)
        .young_space_bound(false);
    let db = Db::open(dir.path(), opts).unwrap();
    let value = vec![b'v'; 100];
    for i in 0..20_000u32 {
        db.put(format!("k{i:06}").as_bytes(), &value).unwrap();
    }
    db.flush().unwrap();
    for i in 0..20_000u32 {
        assert!(db.get(format!("k{i:06}").as_bytes()).unwrap().is_some());
    }
    let s = db.statistics();
    assert_eq!(s.block_cache_capacity, 8 << 20);
    assert!(s.block_cache_usage > 2 << 20, "{s}");

    db.set_option("block_cache_size", "1M").unwrap();
    let s = db.statistics();
    assert_eq!(s.block_cache_capacity, 1 << 20);
    assert!(s.block_cache_usage <= 1 << 20, "{s}");
    assert_eq!(
        db.option_value("block_cache_size").unwrap(),
        OptionValue::Unsigned(1 << 20)
    );
    // Reads go on within the smaller cache.
    for i in (0..20_000u32).step_by(7) {
        assert!(db.get(format!("k{i:06}").as_bytes()).unwrap().is_some());
    }
    assert!(db.statistics().block_cache_usage <= 1 << 20);
    // Below the option's minimum: refused, unchanged.
    let e = db.set_option("block_cache_size", "256K").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(db.statistics().block_cache_capacity, 1 << 20);
}

#[test]
fn the_wal_takes_a_new_sync_mode() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"1").unwrap();
    assert_eq!(db.statistics().wal_syncs, 0);

    // Full: the writes before are synced at once, then every commit syncs.
    db.set_option("sync_mode", "full").unwrap();
    let after_switch = db.statistics().wal_syncs;
    assert_eq!(after_switch, 1);
    db.put(b"c", b"1").unwrap();
    db.put(b"d", b"1").unwrap();
    assert_eq!(db.statistics().wal_syncs, after_switch + 2);

    // Interval: a background sync follows a write within a few periods.
    db.set_option("sync_interval_ms", "10").unwrap();
    db.set_option("sync_mode", "interval").unwrap();
    let before = db.statistics().wal_syncs;
    db.put(b"e", b"1").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while db.statistics().wal_syncs == before {
        assert!(Instant::now() < deadline, "no background sync");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(db.option_value("sync_mode").unwrap(), OptionValue::Enum(1));
    assert_eq!(
        db.option_value("sync_interval_ms").unwrap(),
        OptionValue::Unsigned(10)
    );

    // None again: writes do not sync.
    db.set_option("sync_mode", "none").unwrap();
    let syncs = db.statistics().wal_syncs;
    db.put(b"f", b"1").unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(db.statistics().wal_syncs, syncs);
    db.close().unwrap();

    let db = Db::open(dir.path(), Options::default()).unwrap();
    for k in [b"a", b"b", b"c", b"d", b"e", b"f"] {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&b"1"[..]));
    }
}
