//! The registry keeps concurrent jobs apart: picks made while others run never share a file
//! nor write overlapping ranges at one level; several threads then run and install them.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::{Arc, Mutex};

use riptide_compaction::{
    CompactionJob, CompactionOptions, CompactionRegistry, LevelOptions, VersionSet,
    pick_compaction, run_compaction,
};
use riptide_sstable::TableOptions;
use util::{add_table, puts, read_tables};

fn key(i: usize) -> String {
    format!("k{i:04}")
}

fn overlaps(a: &CompactionJob, b: &CompactionJob) -> bool {
    a.smallest_user_key <= b.largest_user_key && b.smallest_user_key <= a.largest_user_key
}

#[test]
fn concurrent_picks_are_disjoint_and_install_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let opts = LevelOptions {
        num_levels: 4,
        max_bytes_for_level_base: 1,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.0,
        target_file_size_base: 1 << 20,
        ..LevelOptions::default()
    };
    // L1: 16 files of 4 keys; L2: 8 files of 8 keys (older versions of the same keys).
    let mut seq = 1000;
    for f in 0..16 {
        let names: Vec<String> = (f * 4..f * 4 + 4).map(key).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        add_table(&mut vs, 1, &puts(&refs, seq, 20));
        seq += 10;
    }
    for f in 0..8 {
        let names: Vec<String> = (f * 8..f * 8 + 8).map(key).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        add_table(&mut vs, 2, &puts(&refs, f as u64 * 10 + 1, 20));
    }
    let before = read_tables(vs.current().files(0, 1)).len();
    let reg = CompactionRegistry::new();
    let version = vs.current();

    // Pick from four threads at once until nothing is left.
    let jobs: Vec<CompactionJob> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some(j) = pick_compaction(&version, 0, &opts, &reg) {
                        mine.push(j);
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(jobs.len() >= 4, "several jobs run at once: {}", jobs.len());
    assert_eq!(reg.running_jobs(), jobs.len());
    for (i, a) in jobs.iter().enumerate() {
        for b in &jobs[i + 1..] {
            let fa: Vec<u64> = a.input_files().map(|f| f.number()).collect();
            assert!(
                b.input_files().all(|f| !fa.contains(&f.number())),
                "shared input"
            );
            if a.output_level == b.output_level {
                assert!(!overlaps(a, b), "overlapping outputs at one level");
            }
        }
    }

    // Run them in parallel and install each as it finishes.
    let vs = Mutex::new(vs);
    let topts = TableOptions::default();
    std::thread::scope(|s| {
        for job in &jobs {
            let (vs, reg, topts, dir) = (&vs, &reg, &topts, dir.path());
            s.spawn(move || {
                let copts = CompactionOptions {
                    fs: riptide_common::fs::real(),
                    dir,
                    table_options: topts,
                    cache: None,
                    snapshots: &[],
                    bottommost: false,
                    target_file_size: 0,
                };
                let alloc = || vs.lock().unwrap().new_file_number();
                let out = run_compaction(job, &copts, alloc, 2).unwrap();
                let mut g = vs.lock().unwrap();
                let tables: Vec<Arc<_>> = out.new_files.clone();
                g.apply_with_tables(job.edits(&out), &tables).unwrap();
                reg.finish_with_output(job, &out);
            });
        }
    });
    assert_eq!(reg.running_jobs(), 0);
    let vs = vs.into_inner().unwrap();
    let v = vs.current();
    let moved: usize = jobs
        .iter()
        .map(|j| {
            j.input_files()
                .filter(|f| v.level_of(0, f.number()).is_some())
                .count()
        })
        .sum();
    assert_eq!(moved, 0, "every input was removed");
    let l2 = read_tables(v.files(0, 2));
    assert_eq!(
        l2.iter().filter(|e| e.1 >= 1000).count(),
        before - read_tables(v.files(0, 1)).len(),
        "every L1 entry that left L1 is in L2 (the newer versions win)"
    );
}
