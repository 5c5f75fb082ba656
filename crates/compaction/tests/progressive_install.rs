//! Progressive install: a big job installed slice by slice writes exactly the entries of a
//! one-shot run, deletes each output-level input in the slice that covers it, keeps the
//! output level sorted and non-overlapping after every partial install, and deletes the
//! shallower inputs only with the last slice. A job stopped after some slices (a crash, a
//! failed install) leaves the shallower inputs and their merged copies in the installed
//! slices; compacting that version again gives the one-shot result.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use proptest::prelude::*;
use riptide_compaction::{
    CompactionJob, CompactionReason, VersionEdit, progressive_cuts, run_compaction,
    run_compaction_progressive,
};
use riptide_sstable::TableOptions;
use util::{read_tables, write_table};

/// Level 1: `upper` files of newer versions over all keys; level 2: `lower` files of older
/// versions, each a contiguous key range.
fn job_for(
    dir: &std::path::Path,
    upper: u64,
    lower: u64,
    keys_per_lower: u64,
    bottommost: bool,
) -> CompactionJob {
    let total = lower * keys_per_lower;
    let mut number = 1;
    let mut lower_files = Vec::new();
    for l in 0..lower {
        let keys: Vec<String> = (0..keys_per_lower)
            .map(|k| format!("k{:05}", l * keys_per_lower + k))
            .collect();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        lower_files.push(write_table(
            dir,
            number,
            &util::puts(&refs, 1 + l * keys_per_lower, 60),
        ));
        number += 1;
    }
    let mut upper_files = Vec::new();
    let per_upper = total.div_ceil(upper);
    for u in 0..upper {
        // Every third key is overwritten, every seventh deleted, newer than all of level 2.
        let mut entries = Vec::new();
        for k in (u * per_upper..((u + 1) * per_upper).min(total)).filter(|k| k % 3 == 0) {
            let name = format!("k{k:05}");
            let seq = 1_000_000 + k;
            entries.push(if k % 7 == 0 {
                util::del(&name, seq)
            } else if k % 5 == 0 {
                // Each key is put once below: a single delete keeps its contract.
                util::sdel(&name, seq)
            } else {
                util::put(&name, seq, "new")
            });
        }
        upper_files.push(write_table(dir, number, &entries));
        number += 1;
    }
    CompactionJob {
        id: 0,
        cf: 0,
        inputs: vec![(1, upper_files), (2, lower_files)],
        output_level: 2,
        bottommost,
        reason: CompactionReason::LevelSize,
        score: 1.0,
        target_file_size: 4096,
        smallest_user_key: b"k00000".to_vec(),
        largest_user_key: format!("k{:05}", total - 1).into_bytes(),
        kept_ranges: Vec::new(),
    }
}

/// Runs `job` progressively, checking every partial install; returns the new files' entries.
fn run_checked(job: &CompactionJob, dir: &std::path::Path, slice: u64) -> Vec<util::Entry> {
    let mut owned = job.clone();
    let topts = TableOptions::default();
    let opts = util::job_options(dir, &topts);
    // The output level as a map from smallest key to (largest key, file number).
    let mut level2: BTreeMap<Vec<u8>, (Vec<u8>, u64)> = job.inputs[1]
        .1
        .iter()
        .map(|f| {
            (
                f.meta.smallest_user_key().to_vec(),
                (f.meta.largest_user_key().to_vec(), f.number()),
            )
        })
        .collect();
    let mut level1: Vec<u64> = job.inputs[0].1.iter().map(|f| f.number()).collect();
    let slices = progressive_cuts(job, slice).len() + 1;
    let mut installs = 0;
    let next = AtomicU64::new(1000);
    let out = run_compaction_progressive(
        &mut owned,
        &opts,
        || next.fetch_add(1, Ordering::Relaxed),
        slice,
        |edits, tables| {
            installs += 1;
            let last = installs == slices;
            for e in &edits {
                match e {
                    VersionEdit::DeleteFile {
                        level: 2, number, ..
                    } => {
                        level2.retain(|_, (_, n)| n != number);
                    }
                    VersionEdit::DeleteFile {
                        level: 1, number, ..
                    } => {
                        assert!(last, "a level-1 input was deleted before the last slice");
                        level1.retain(|n| n != number);
                    }
                    VersionEdit::AddFile { level: 2, .. } => {}
                    other => panic!("unexpected edit {other:?}"),
                }
            }
            for t in tables {
                let prev = level2.insert(
                    t.meta.smallest_user_key().to_vec(),
                    (t.meta.largest_user_key().to_vec(), t.number()),
                );
                assert!(prev.is_none(), "two files start at one key");
            }
            let ranges: Vec<_> = level2.iter().collect();
            for w in ranges.windows(2) {
                assert!(
                    w[0].1.0 < *w[1].0,
                    "level 2 overlaps after install {installs}"
                );
            }
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(installs, slices);
    assert!(level1.is_empty());
    assert_eq!(
        owned.input_files().count(),
        0,
        "the job lets go of every input it replaced"
    );
    let remaining: Vec<u64> = level2.values().map(|(_, n)| *n).collect();
    let mut new: Vec<u64> = out.new_files.iter().map(|f| f.number()).collect();
    new.sort_unstable();
    assert_eq!(remaining, new, "exactly the new files are left in level 2");
    read_tables(&out.new_files)
}

#[test]
fn big_job_installs_in_slices_with_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_for(dir.path(), 2, 12, 80, true);
    let cuts = progressive_cuts(&job, 8192);
    assert!(cuts.len() >= 3, "{} cuts", cuts.len());
    let lower_starts: Vec<Vec<u8>> = job.inputs[1]
        .1
        .iter()
        .map(|f| f.meta.smallest_user_key().to_vec())
        .collect();
    assert!(
        cuts.iter().all(|c| lower_starts.contains(c)),
        "cuts at lower file starts"
    );
    let progressive = run_checked(&job, dir.path(), 8192);
    let topts = TableOptions::default();
    let opts = util::job_options(dir.path(), &topts);
    let next = AtomicU64::new(5000);
    let once = run_compaction(&job, &opts, || next.fetch_add(1, Ordering::Relaxed), 1).unwrap();
    assert_eq!(progressive, read_tables(&once.new_files));
}

#[test]
fn small_or_single_level_jobs_are_one_slice() {
    let dir = tempfile::tempdir().unwrap();
    let job = job_for(dir.path(), 1, 3, 10, false);
    assert!(progressive_cuts(&job, 1 << 30).is_empty(), "small job");
    let mut alone = job.clone();
    alone.inputs.remove(0);
    alone.output_level = 2;
    assert!(
        progressive_cuts(&alone, 1).is_empty(),
        "a level rewritten into itself"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn any_slicing_matches_one_shot(
        upper in 1u64..4,
        lower in 2u64..10,
        keys in 5u64..60,
        bottommost: bool,
        slice in prop::sample::select(vec![1u64, 2048, 8192, 1 << 20]),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let job = job_for(dir.path(), upper, lower, keys, bottommost);
        let progressive = run_checked(&job, dir.path(), slice);
        let topts = TableOptions::default();
        let opts = util::job_options(dir.path(), &topts);
        let next = AtomicU64::new(50_000);
        let once = run_compaction(&job, &opts, || next.fetch_add(1, Ordering::Relaxed), 1).unwrap();
        prop_assert_eq!(progressive, read_tables(&once.new_files));
    }
}

#[test]
fn a_job_stopped_after_a_slice_compacts_again_to_the_same_result() {
    let dir = tempfile::tempdir().unwrap();
    // Not bottommost: tombstones and single deletes stay in the output.
    let job = job_for(dir.path(), 2, 12, 80, false);
    let slices = progressive_cuts(&job, 8192).len() + 1;
    assert!(slices >= 3, "{slices} slices");
    let topts = TableOptions::default();
    // A snapshot between the puts below and the single deletes above keeps both.
    let snapshots = [999_999];
    let opts = riptide_compaction::CompactionOptions {
        snapshots: &snapshots,
        ..util::job_options(dir.path(), &topts)
    };
    let next = AtomicU64::new(1000);

    // Install the first slice, then fail (as a crash between two installs would).
    let mut deleted = Vec::new();
    let mut installed = Vec::new();
    let mut installs = 0;
    let mut owned = job.clone();
    let err = run_compaction_progressive(
        &mut owned,
        &opts,
        || next.fetch_add(1, Ordering::Relaxed),
        8192,
        |edits, tables| {
            installs += 1;
            if installs > 1 {
                return Err(riptide_common::Error::io(
                    "install of slice 2",
                    std::io::Error::other("injected"),
                ));
            }
            for e in edits {
                if let VersionEdit::DeleteFile { number, .. } = e {
                    deleted.push(number);
                }
            }
            installed.extend(tables.iter().cloned());
            Ok(())
        },
    );
    assert!(err.is_err());
    assert!(!installed.is_empty() && !deleted.is_empty());

    // The version now: every level-1 input, level 2 without the replaced files but with the
    // first slice's outputs. Picked again, the job meets both copies of the slice's keys.
    let mut level2: Vec<_> = job.inputs[1]
        .1
        .iter()
        .filter(|f| !deleted.contains(&f.number()))
        .cloned()
        .chain(installed.iter().cloned())
        .collect();
    level2.sort_by(|a, b| a.meta.smallest_user_key().cmp(b.meta.smallest_user_key()));
    let mut again = job.clone();
    again.inputs = vec![(1, job.inputs[0].1.clone()), (2, level2)];
    let redo = run_compaction(&again, &opts, || next.fetch_add(1, Ordering::Relaxed), 1).unwrap();
    let once = run_compaction(&job, &opts, || next.fetch_add(1, Ordering::Relaxed), 1).unwrap();
    let (redo, once) = (read_tables(&redo.new_files), read_tables(&once.new_files));
    assert!(
        once.iter()
            .any(|e| e.2 == riptide_common::ValueKind::SingleDelete),
        "the job keeps single deletes"
    );
    assert_eq!(redo, once);
}
