//! `Wal::append_all`: several records in one write, synced once in full mode (or not at all
//! when the caller says so), replayed as separate records in order, with and without
//! preallocation; an empty list writes nothing.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{open_collect, payload};
use riptide_wal::{RecoveryMode, SyncMode, WalOptions};

fn opts(preallocate: u64) -> WalOptions {
    WalOptions {
        sync_mode: SyncMode::Full,
        recovery_mode: RecoveryMode::default(),
        preallocate_bytes: preallocate,
    }
}

#[test]
fn a_group_is_one_sync_and_replays_as_separate_records() {
    for preallocate in [0, 64 * 1024] {
        let tmp = tempfile::tempdir().unwrap();
        let (wal, _, _) = open_collect(tmp.path(), opts(preallocate), 1).unwrap();
        let before = wal.stats();
        wal.append(&payload(1)).unwrap();
        let group: Vec<Vec<u8>> = (2..7).map(payload).collect();
        let refs: Vec<&[u8]> = group.iter().map(Vec::as_slice).collect();
        wal.append_all(&refs, true).unwrap();
        wal.append_all(&[], true).unwrap();
        // Not synced even in full mode: the next synced append covers it.
        wal.append_all(&[&payload(7)], false).unwrap();
        wal.append(&payload(8)).unwrap();
        let after = wal.stats();
        assert_eq!(after.records_written - before.records_written, 8);
        assert_eq!(
            after.syncs - before.syncs,
            3,
            "one sync per call that wrote and wanted one"
        );
        wal.close().unwrap();

        let (_wal, _, seen) = open_collect(tmp.path(), opts(preallocate), 1).unwrap();
        let replayed: Vec<Vec<u8>> = seen.into_iter().map(|(_, p)| p).collect();
        let expected: Vec<Vec<u8>> = (1..9).map(payload).collect();
        assert_eq!(replayed, expected, "preallocate {preallocate}");
    }
}
