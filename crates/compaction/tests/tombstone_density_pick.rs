//! Tombstone-density compactions: when nothing is due by size, a file dense with tombstones
//! is merged down (or rewritten alone at the bottom) so its tombstones can go.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionOptions, CompactionReason, CompactionRegistry, LevelOptions, VersionSet,
    pick_compaction, run_compaction,
};
use riptide_sstable::TableOptions;
use util::{add_table, del, job_numbers, put, read_tables};

fn opts() -> LevelOptions {
    LevelOptions {
        num_levels: 3,
        max_bytes_for_level_base: 1 << 30,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.5,
        tombstone_min_entries: 8,
        ..LevelOptions::default()
    }
}

fn run_and_apply(
    vs: &mut VersionSet,
    job: &riptide_compaction::CompactionJob,
    snaps: &[u64],
) -> riptide_compaction::CompactionOutput {
    let topts = TableOptions::default();
    let dir = vs.dir().to_path_buf();
    let copts = CompactionOptions {
        fs: riptide_common::fs::real(),
        dir: &dir,
        table_options: &topts,
        cache: None,
        snapshots: snaps,
        bottommost: false,
        target_file_size: 0,
    };
    let out = run_compaction(job, &copts, || vs.new_file_number(), 1).unwrap();
    vs.apply_with_tables(job.edits(&out), &out.new_files)
        .unwrap();
    out
}

#[test]
fn dense_file_in_the_last_level_is_rewritten_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    // 10 entries, 6 tombstones (each deleting an older put in the same file).
    let mut e = Vec::new();
    for (i, k) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
        e.push(del(k, 20 + i as u64));
    }
    for (i, k) in ["a", "b", "x", "y"].iter().enumerate() {
        e.push(put(k, 1 + i as u64, "v"));
    }
    let sparse = add_table(&mut vs, 2, &[put("zz", 30, "v")]);
    let dense = add_table(&mut vs, 2, &e);
    assert_eq!(dense.meta.tombstones, 6);
    let _ = sparse;

    // With the trigger off, nothing happens.
    let off = LevelOptions {
        tombstone_ratio_trigger: 0.0,
        ..opts()
    };
    assert!(pick_compaction(&vs.current(), 0, &off, &reg).is_none());

    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::TombstoneDensity);
    assert!((job.score - 0.6).abs() < 1e-9);
    assert_eq!(job.output_level, 2);
    assert_eq!(job.inputs.len(), 1);
    assert_eq!(job_numbers(&job, 2), [dense.number()]);
    assert!(job.bottommost);

    // A snapshot that still needs the tombstones: nothing is dropped, and the output is not
    // picked for its tombstones again (that would loop).
    let out = run_and_apply(&mut vs, &job, &[19]);
    assert_eq!(out.stats.tombstones_dropped, 0);
    reg.finish_with_output(&job, &out);
    assert!(pick_compaction(&vs.current(), 0, &opts(), &reg).is_none());
}

#[test]
fn dense_file_above_merges_into_the_next_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    let below = add_table(
        &mut vs,
        2,
        &[put("a", 1, "old"), put("c", 2, "old"), put("z", 3, "old")],
    );
    let mut e = vec![put("q", 9, "v")];
    for (i, k) in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .enumerate()
    {
        e.push(del(k, 10 + i as u64));
    }
    let dense = add_table(&mut vs, 1, &e);
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::TombstoneDensity);
    assert_eq!(job.output_level, 2);
    assert_eq!(job_numbers(&job, 1), [dense.number()]);
    assert_eq!(job_numbers(&job, 2), [below.number()]);
    assert!(job.bottommost);
    let out = run_and_apply(&mut vs, &job, &[]);
    reg.finish_with_output(&job, &out);
    assert_eq!(out.stats.tombstones_dropped, 9);
    let v = vs.current();
    assert!(v.files(0, 1).is_empty());
    let names = util::names(&read_tables(v.files(0, 2)));
    assert_eq!(names, ["q9P", "z3P"]);
    assert!(pick_compaction(&v, 0, &opts(), &reg).is_none());
}
