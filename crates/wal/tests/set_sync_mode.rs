//! `Wal::set_sync_mode` while the WAL is open: appends follow the new mode (counted in
//! `WalStats::syncs`), the background thread starts and stops with it, switching to `Full`
//! syncs what came before, and a zero interval is refused without changing anything.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use std::time::{Duration, Instant};

use common::open_collect;
use riptide_wal::{ErrorKind, RecoveryMode, SyncMode, WalOptions};

fn opts(sync_mode: SyncMode) -> WalOptions {
    WalOptions {
        sync_mode,
        recovery_mode: RecoveryMode::default(),
        ..WalOptions::default()
    }
}

#[test]
fn appends_follow_the_mode_set_while_open() {
    let tmp = tempfile::tempdir().unwrap();
    let (wal, _, _) = open_collect(tmp.path(), opts(SyncMode::None), 1).unwrap();
    wal.append(b"a").unwrap();
    wal.append(b"b").unwrap();
    assert_eq!(wal.stats().syncs, 0);

    // To Full: what came before is synced at once, then every append syncs.
    wal.set_sync_mode(SyncMode::Full).unwrap();
    assert_eq!(wal.stats().syncs, 1);
    wal.append(b"c").unwrap();
    wal.append(b"d").unwrap();
    assert_eq!(wal.stats().syncs, 3);

    // Back to None: appends do not sync.
    wal.set_sync_mode(SyncMode::None).unwrap();
    wal.append(b"e").unwrap();
    assert_eq!(wal.stats().syncs, 3);

    // To an interval: the background thread syncs the append within a few periods.
    wal.set_sync_mode(SyncMode::Interval(Duration::from_millis(10)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while wal.stats().syncs == 3 {
        assert!(Instant::now() < deadline, "no background sync");
        std::thread::sleep(Duration::from_millis(5));
    }
    // And stops when the mode changes again: no more syncs without appends or a change.
    wal.set_sync_mode(SyncMode::None).unwrap();
    wal.append(b"f").unwrap();
    let syncs = wal.stats().syncs;
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(wal.stats().syncs, syncs);

    // A zero interval is refused and changes nothing.
    let e = wal
        .set_sync_mode(SyncMode::Interval(Duration::ZERO))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    wal.append(b"g").unwrap();
    assert_eq!(wal.stats().syncs, syncs);

    wal.close().unwrap();
    drop(wal);
    let (_wal, _, seen) = open_collect(tmp.path(), opts(SyncMode::None), 1).unwrap();
    let payloads: Vec<Vec<u8>> = seen.into_iter().map(|(_, p)| p).collect();
    assert_eq!(
        payloads,
        [b"a", b"b", b"c", b"d", b"e", b"f", b"g"].map(|p| p.to_vec())
    );
}
