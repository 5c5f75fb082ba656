//! After close, writes are refused with `Closed`; close stops the background thread.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::time::{Duration, Instant};

use common::{open_collect, opts};
use riptide_wal::{ErrorKind, RecoveryMode, SyncMode, Wal, WalOptions};

#[test]
fn append_after_close_is_closed() {
    let tmp = tempfile::tempdir().unwrap();
    let (wal, _, _) = open_collect(tmp.path(), opts(RecoveryMode::default()), 1).unwrap();
    wal.append(b"before").unwrap();
    wal.close().unwrap();
    for e in [
        wal.append(b"after").unwrap_err(),
        wal.sync().unwrap_err(),
        wal.rotate().unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
        assert!(e.to_string().contains("closed"), "{e}");
    }
    wal.close().unwrap(); // idempotent
    drop(wal);
    let (_wal, _, seen) = open_collect(tmp.path(), opts(RecoveryMode::default()), 1).unwrap();
    assert_eq!(seen, vec![(1, b"before".to_vec())]);
}

#[test]
fn close_stops_a_slow_interval_thread_promptly() {
    let tmp = tempfile::tempdir().unwrap();
    let o = WalOptions {
        sync_mode: SyncMode::Interval(Duration::from_secs(3600)),
        ..WalOptions::default()
    };
    let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
    wal.append(b"x").unwrap();
    let t = Instant::now();
    wal.close().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert_eq!(wal.stats().syncs, 1); // the close itself
    // Dropping without close also stops the thread (a leak would hang nothing, but drop
    // must return promptly).
    let (wal, _) = Wal::open(tmp.path(), o, 1, |_, _| Ok(())).unwrap();
    let t = Instant::now();
    drop(wal);
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[test]
fn drop_without_close_keeps_appended_records() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let (wal, _, _) = open_collect(tmp.path(), opts(RecoveryMode::default()), 1).unwrap();
        wal.append(b"kept").unwrap();
    }
    let (_wal, report, seen) =
        open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    assert_eq!(seen, vec![(1, b"kept".to_vec())]);
    assert_eq!(report.segments_replayed, vec![1]);
}

#[test]
fn callback_error_aborts_open_with_context() {
    let tmp = tempfile::tempdir().unwrap();
    let all = common::write_log(tmp.path(), 2, 3);
    let mut n = 0;
    let e = Wal::open(tmp.path(), WalOptions::default(), 1, |_, _| {
        n += 1;
        if n == 5 {
            Err(riptide_wal::Error::invalid_argument("bad batch"))
        } else {
            Ok(())
        }
    })
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let msg = e.to_string();
    assert!(msg.contains("bad batch"), "{msg}");
    assert!(msg.contains("000002.log"), "{msg}");
    let offset = common::record_offsets(&[all[3].len()])[1];
    assert!(msg.contains(&format!("offset {offset}")), "{msg}");
    // Nothing was modified: a clean reopen sees everything.
    let (_wal, _, seen) =
        open_collect(tmp.path(), opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
    assert_eq!(seen.len(), 6);
}
