//! Subcompactions: splitting a job into parallel key ranges writes exactly the entries a
//! single-threaded merge writes, in key order, and never splits a user key across files.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use riptide_common::ValueKind;
use riptide_compaction::{
    CompactionJob, CompactionOptions, CompactionReason, run_compaction, subcompaction_boundaries,
};
use riptide_sstable::TableOptions;
use util::{Entry, read_tables, write_table};

/// Entries with unique seqnos over a few dozen keys, spread over `tables` groups.
fn workload() -> impl Strategy<Value = (Vec<(usize, Entry)>, usize)> {
    (1usize..7).prop_flat_map(|tables| {
        (
            prop::collection::vec(
                (0u8..60, any::<bool>(), 0usize..120, 0usize..tables),
                1..400,
            )
            .prop_map(|ops| {
                ops.into_iter()
                    .enumerate()
                    .map(|(i, (k, is_put, vlen, t))| {
                        let kind = if is_put {
                            ValueKind::Put
                        } else {
                            ValueKind::Delete
                        };
                        let value = if is_put {
                            vec![b'a' + (i % 26) as u8; vlen]
                        } else {
                            Vec::new()
                        };
                        (
                            t,
                            (format!("key{k:02}").into_bytes(), i as u64 + 1, kind, value),
                        )
                    })
                    .collect()
            }),
            Just(tables),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn same_entries_as_one_thread(
        (entries, tables) in workload(),
        snaps in prop::collection::vec(0u64..400, 0..3),
        bottommost: bool,
        target in prop::sample::select(vec![256u64, 1024, 4096]),
        subs in 2usize..6,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let next = AtomicU64::new(100);
        let mut files = Vec::new();
        for t in 0..tables {
            let mine: Vec<Entry> = entries.iter().filter(|(g, _)| *g == t).map(|(_, e)| e.clone()).collect();
            if !mine.is_empty() {
                files.push(write_table(dir.path(), t as u64 + 1, &mine));
            }
        }
        let smallest = files.iter().map(|f| f.meta.smallest_user_key().to_vec()).min().unwrap();
        let largest = files.iter().map(|f| f.meta.largest_user_key().to_vec()).max().unwrap();
        let job = CompactionJob {
            id: 0,
            cf: 0,
            inputs: vec![(0, files)],
            output_level: 1,
            bottommost,
            reason: CompactionReason::Manual,
            score: 0.0,
            target_file_size: target,
            smallest_user_key: smallest,
            largest_user_key: largest,
        kept_ranges: Vec::new(),
        };
        let topts = TableOptions::default();
        let opts = CompactionOptions {
            fs: riptide_common::fs::real(),
            dir: dir.path(),
            table_options: &topts,
            cache: None,
            snapshots: &snaps,
            bottommost: !bottommost,
            target_file_size: 1,
        };
        let alloc = || next.fetch_add(1, Ordering::Relaxed);
        let one = run_compaction(&job, &opts, alloc, 1).unwrap();
        let many = run_compaction(&job, &opts, alloc, subs).unwrap();
        prop_assert_eq!(one.stats.subcompactions, 1);
        let cuts = subcompaction_boundaries(&job, subs);
        prop_assert!(cuts.len() < subs);
        prop_assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        prop_assert_eq!(many.stats.subcompactions, cuts.len() + 1);
        prop_assert_eq!(read_tables(&one.new_files), read_tables(&many.new_files));
        prop_assert_eq!(one.stats.entries_in, many.stats.entries_in);
        prop_assert_eq!(one.stats.entries_out, many.stats.entries_out);
        prop_assert_eq!(one.stats.tombstones_dropped, many.stats.tombstones_dropped);
        prop_assert_eq!(many.stats.entries_in, entries.len() as u64);
        for w in many.new_files.windows(2) {
            prop_assert!(w[0].meta.largest_user_key() < w[1].meta.smallest_user_key(), "a user key spans two files");
        }
        for f in &many.new_files {
            for c in &cuts {
                prop_assert!(!(f.meta.smallest_user_key() < c.as_slice() && c.as_slice() <= f.meta.largest_user_key()), "a file crosses a range boundary");
            }
        }
    }
}

#[test]
fn large_jobs_are_split() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = (0..4u64)
        .map(|t| {
            let keys: Vec<String> = (0..50).map(|k| format!("k{:03}", t * 50 + k)).collect();
            let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
            write_table(dir.path(), t + 1, &util::puts(&refs, t * 100 + 1, 100))
        })
        .collect();
    let job = CompactionJob {
        id: 0,
        cf: 0,
        inputs: vec![(1, files[..2].to_vec()), (2, files[2..].to_vec())],
        output_level: 2,
        bottommost: true,
        reason: CompactionReason::Manual,
        score: 0.0,
        target_file_size: 4096,
        smallest_user_key: b"k000".to_vec(),
        largest_user_key: b"k199".to_vec(),
        kept_ranges: Vec::new(),
    };
    let cuts = subcompaction_boundaries(&job, 4);
    assert_eq!(cuts.len(), 3, "{cuts:?}");
    assert!(subcompaction_boundaries(&job, 1).is_empty());
    let small = CompactionJob {
        target_file_size: 1 << 30,
        ..job.clone()
    };
    assert!(
        subcompaction_boundaries(&small, 4).is_empty(),
        "too small to split"
    );
    let topts = TableOptions::default();
    let opts = util::job_options(dir.path(), &topts);
    let next = AtomicU64::new(10);
    let out = run_compaction(&job, &opts, || next.fetch_add(1, Ordering::Relaxed), 4).unwrap();
    assert_eq!(out.stats.subcompactions, 4);
    assert_eq!(out.stats.entries_out, 200);
    assert_eq!(out.stats.bytes_read_per_level.len(), 2);
    assert_eq!(out.stats.bytes_read_per_level[0].0, 1);
    assert_eq!(
        out.stats.bytes_read,
        out.stats
            .bytes_read_per_level
            .iter()
            .map(|(_, b)| b)
            .sum::<u64>()
    );
    assert_eq!(read_tables(&out.new_files).len(), 200);
}
