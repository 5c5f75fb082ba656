//! Random damage to a log never panics, and whatever is replayed is a prefix of what was
//! written, in every recovery mode.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)] // test code

mod common;

use common::{open_collect, opts, seg, write_log};
use proptest::prelude::*;
use riptide_wal::{ErrorKind, RecoveryMode};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn damaged_log_replays_a_prefix_or_fails_cleanly(
        flips in proptest::collection::vec((0usize..3, any::<u16>(), 1u8..=255), 1..4),
        cut_last in proptest::option::of(any::<u16>()),
        mode_idx in 0usize..3,
    ) {
        let mode = [
            RecoveryMode::TolerateCorruptedTail,
            RecoveryMode::AbsoluteConsistency,
            RecoveryMode::PointInTime,
        ][mode_idx];
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let all = write_log(dir, 3, 4);
        for (s, pos, x) in flips {
            let path = seg(dir, s as u64 + 1);
            let mut b = std::fs::read(&path).unwrap();
            let i = pos as usize % b.len();
            b[i] ^= x;
            std::fs::write(&path, b).unwrap();
        }
        if let Some(c) = cut_last {
            let path = seg(dir, 3);
            let len = std::fs::metadata(&path).unwrap().len();
            common::cut(&path, u64::from(c) % (len + 1));
        }
        match open_collect(dir, opts(mode), 1) {
            Ok((wal, _report, seen)) => {
                let got: Vec<_> = seen.into_iter().map(|(_, p)| p).collect();
                prop_assert!(got.len() <= all.len());
                prop_assert_eq!(&got[..], &all[..got.len()]);
                drop(wal);
                // Recovery left a clean log behind.
                let (_wal, _, again) =
                    open_collect(dir, opts(RecoveryMode::AbsoluteConsistency), 1).unwrap();
                prop_assert_eq!(again.len(), got.len());
            }
            Err(e) => {
                prop_assert!(
                    matches!(e.kind(), ErrorKind::Corruption | ErrorKind::NotSupported),
                    "{}", e
                );
                prop_assert!(mode != RecoveryMode::PointInTime, "{}", e);
            }
        }
    }
}
