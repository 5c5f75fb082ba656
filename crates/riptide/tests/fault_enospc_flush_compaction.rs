//! Fault injection: `ENOSPC` while a flush or a compaction writes its tables or the manifest.
//!
//! The background failure makes the database read-only with a message naming what failed;
//! reads go on; nothing acknowledged is lost after a simulated power loss and a reopen, and
//! no input table is deleted before its replacement is durable.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod fault_common;

use std::path::Path;
use std::time::{Duration, Instant};

use riptide::fs::{Fault, FaultFs, FaultRule, FsOp};
use riptide::{Db, ErrorKind, Options};

fn options(fs: &FaultFs) -> Options {
    fault_common::options(fs, 8 << 10)
        .target_file_size(8 << 10)
        .l0_compaction_trigger(2)
}

fn key(i: u32) -> Vec<u8> {
    format!("key{:05}", (i * 7919) % 4000).into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    fault_common::value(i, 'v', 60)
}

/// Writes `range` until the database refuses one (the background error): returns the
/// writes it acknowledged, in order, and the refusal.
fn write_until_refused(db: &Db, range: std::ops::Range<u32>) -> (Vec<u32>, riptide::Error) {
    let mut acked = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    for i in range {
        match db.put(&key(i), &value(i)) {
            Ok(()) => acked.push(i),
            Err(e) => return (acked, e),
        }
        assert!(
            Instant::now() < deadline,
            "the database never refused a write"
        );
    }
    // The background may need a moment to hit the fault after the last write.
    loop {
        match db.put(b"probe", b"x") {
            Ok(()) => {
                std::thread::sleep(Duration::from_millis(10));
                assert!(
                    Instant::now() < deadline,
                    "the database never refused a write"
                );
            }
            Err(e) => return (acked, e),
        }
    }
}

/// The value of every key as the acknowledged writes left it (the probe aside).
fn expected(acked: &[u32]) -> std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
    acked.iter().map(|&i| (key(i), value(i))).collect()
}

fn check(db: &Db, want: &std::collections::BTreeMap<Vec<u8>, Vec<u8>>, what: &str) {
    for (k, v) in want {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "{what}: key {k:?}");
    }
}

/// Runs one scenario: acknowledged writes, the fault armed by `arm`, writes until the
/// database refuses them, then checks, crash, reopen, checks.
fn scenario(seed: u64, arm: impl FnOnce(&FaultFs), must_mention: &str) {
    let dir = Path::new("/db");
    let fs = FaultFs::new(seed);
    let db = Db::open(dir, options(&fs)).unwrap();
    let mut acked: Vec<u32> = (0..600).collect();
    for &i in &acked {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    arm(&fs);
    let (more, refusal) = write_until_refused(&db, 600..20_000);
    acked.extend(more);
    assert!(fs.injected_faults() > 0);
    assert_eq!(refusal.kind(), ErrorKind::Closed, "{refusal}");
    let msg = refusal.to_string();
    assert!(msg.contains("read-only"), "{msg}");
    assert!(msg.contains(must_mention), "{msg}");
    assert!(msg.contains("no space left on device"), "{msg}");

    let want = expected(&acked);
    check(&db, &want, "before the crash");

    let fs = fs.crash();
    drop(db);
    let db = Db::open(dir, options(&fs)).unwrap();
    check(&db, &want, "after crash and reopen");
    // The refused probe never reached the database.
    assert_eq!(db.get(b"probe").unwrap(), None);
    db.put(b"after", b"reopen").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
}

#[test]
fn enospc_while_a_flush_writes_its_table() {
    scenario(
        1,
        |fs| {
            fs.add_rule(
                FaultRule::new(FsOp::Append, Fault::NoSpace)
                    .on_files_ending_with(".sst")
                    .times(1),
            );
        },
        ".sst",
    );
}

#[test]
fn enospc_while_a_compaction_writes_its_table() {
    // Let a few flushes through, so a compaction is running when the disk fills; every
    // table write fails from then on (flushes too: the disk is full).
    scenario(
        2,
        |fs| {
            fs.add_rule(
                FaultRule::new(FsOp::Create, Fault::NoSpace)
                    .on_files_ending_with(".sst")
                    .after(12),
            );
        },
        ".sst",
    );
}

#[test]
fn enospc_while_the_manifest_is_rewritten() {
    scenario(
        3,
        |fs| {
            fs.add_rule(
                FaultRule::new(FsOp::Append, Fault::NoSpace)
                    .on_files_ending_with("MANIFEST.tmp")
                    .after(2),
            );
        },
        "MANIFEST.tmp",
    );
}

/// A compaction (`compact_range`, installed slice by slice) whose table writes or directory
/// fsyncs fail at the `k`-th call, for many `k`: the failure is reported, the data stays
/// readable, and the database reopens with everything both as the failure left the disk
/// (no crash: a manifest renamed into place before a failed directory fsync must not name
/// deleted tables) and after a crash.
#[test]
fn a_failed_compaction_keeps_what_the_manifest_names() {
    let dir = Path::new("/db");
    let mut failures = 0;
    for k in 0..24u64 {
        let fs = FaultFs::new(100 + k);
        // No background compaction: `compact_range` does it all (and no write stall).
        let opts = || {
            options(&fs)
                .l0_compaction_trigger(1000)
                .l0_slowdown_trigger(1000)
                .l0_stop_trigger(1000)
                .young_space_bound(false)
        };
        let db = Db::open(dir, opts()).unwrap();
        let acked: Vec<u32> = (0..3000).collect();
        for &i in &acked {
            db.put(&key(i), &value(i)).unwrap();
        }
        db.flush().unwrap();
        let rule = if k % 2 == 0 {
            FaultRule::new(FsOp::SyncDir, Fault::Eio).after(k / 2)
        } else {
            FaultRule::new(FsOp::Append, Fault::NoSpace)
                .on_files_ending_with(".sst")
                .after(k)
        };
        fs.add_rule(rule.times(1));
        let want = expected(&acked);
        if let Err(e) = db.compact_range(&db.default_cf(), None) {
            failures += 1;
            let msg = e.to_string();
            assert!(
                msg.contains("injected EIO") || msg.contains("no space left on device"),
                "{msg}"
            );
            let e = db.put(b"refused", b"x").unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
        }
        check(&db, &want, &format!("k {k}: after the compaction"));
        fs.clear_rules();
        drop(db);

        // No crash: the files as the failure left them.
        let db = Db::open(dir, opts())
            .unwrap_or_else(|e| panic!("k {k}: reopen without a crash failed: {e}"));
        check(&db, &want, &format!("k {k}: reopened"));
        assert_eq!(db.get(b"refused").unwrap(), None);
        db.close().unwrap();
        let fs = fs.crash();
        let db = Db::open(dir, options(&fs))
            .unwrap_or_else(|e| panic!("k {k}: reopen after a crash failed: {e}"));
        check(&db, &want, &format!("k {k}: after a crash"));
        db.compact_range(&db.default_cf(), None).unwrap();
        check(&db, &want, &format!("k {k}: compacted after the crash"));
        db.close().unwrap();
    }
    assert!(failures >= 12, "only {failures} of 24 compactions failed");
}
