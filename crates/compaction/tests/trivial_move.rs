//! Trivial moves (a job whose inputs can go down a level unchanged) and the L0 fraction
//! trigger that keeps L0 small next to a young tree.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionReason, CompactionRegistry, LevelOptions, VersionSet, compaction_scores,
    pick_compaction, table_file_path,
};
use util::{add_table, job_numbers, puts};

fn opts() -> LevelOptions {
    LevelOptions {
        num_levels: 4,
        l0_compaction_trigger: 2,
        l0_fraction_trigger: 0.0,
        max_bytes_for_level_base: 1 << 30,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.0,
        ..LevelOptions::default()
    }
}

#[test]
fn disjoint_l0_files_over_an_empty_level_move_down_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    let a = add_table(&mut vs, 0, &puts(&["a", "b", "c"], 1, 100));
    let m = add_table(&mut vs, 0, &puts(&["m", "n"], 10, 100));
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::L0FileCount);
    assert_eq!(job.output_level, 1);
    assert!(job.is_trivial_move(), "{job:?}");

    let version = vs.apply_with_tables(job.trivial_move_edits(), &[]).unwrap();
    reg.finish(&job);
    assert!(version.files(0, 0).is_empty());
    let moved: Vec<u64> = version.files(0, 1).iter().map(|f| f.number()).collect();
    assert_eq!(moved, [a.number(), m.number()], "same files, in key order");
    for f in version.files(0, 1) {
        assert!(!f.is_obsolete(), "a moved file must not be deleted");
        assert!(table_file_path(dir.path(), f.number()).exists());
    }
    drop((a, m, job));
    drop(version);
    // The manifest records the move: a reopened set sees the files in L1.
    drop(vs);
    let vs = VersionSet::open(dir.path(), None, false).unwrap();
    assert_eq!(vs.current().files(0, 1).len(), 2);
    assert!(vs.current().files(0, 0).is_empty());
}

#[test]
fn overlapping_inputs_are_merged_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    // Two L0 files sharing a key range: they must be merged.
    add_table(&mut vs, 0, &puts(&["a", "c"], 1, 100));
    add_table(&mut vs, 0, &puts(&["b", "d"], 10, 100));
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert!(!job.is_trivial_move());
    reg.finish(&job);

    // Disjoint L0 files, but one overlaps a file of the output level.
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let below = add_table(&mut vs, 1, &puts(&["m", "p"], 1, 100));
    add_table(&mut vs, 0, &puts(&["a", "b"], 10, 100));
    add_table(&mut vs, 0, &puts(&["n", "o"], 20, 100));
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job_numbers(&job, 1), [below.number()]);
    assert!(!job.is_trivial_move());
    reg.finish(&job);

    // Two disjoint files whose key ranges touch at one user key are not disjoint.
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    add_table(&mut vs, 0, &puts(&["a", "k"], 1, 100));
    add_table(&mut vs, 0, &puts(&["k", "z"], 10, 100));
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert!(!job.is_trivial_move());
}

#[test]
fn a_level_file_with_nothing_below_moves_down() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    let small = LevelOptions {
        max_bytes_for_level_base: 100,
        ..opts()
    };
    let a = add_table(&mut vs, 1, &puts(&["a", "b"], 1, 200));
    add_table(&mut vs, 2, &puts(&["x", "y"], 1, 10));
    let job = pick_compaction(&vs.current(), 0, &small, &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::LevelSize);
    assert_eq!(job_numbers(&job, 1), [a.number()]);
    assert!(job.is_trivial_move());
    let version = vs.apply_with_tables(job.trivial_move_edits(), &[]).unwrap();
    assert_eq!(version.files(0, 2).len(), 2);
    assert!(version.files(0, 1).is_empty());
}

#[test]
fn l0_is_due_once_it_holds_its_fraction_of_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    let fraction = LevelOptions {
        l0_compaction_trigger: 10,
        l0_fraction_trigger: 0.25,
        ..opts()
    };
    // One L0 file, nothing below: due at once (it can simply move down).
    let l0 = add_table(&mut vs, 0, &puts(&["a", "m"], 10, 1000));
    let scores = compaction_scores(&vs.current(), 0, &fraction, &reg);
    assert!((scores[0] - 1.0).abs() < 1e-9, "{scores:?}");
    // Below: eight times the L0 bytes: L0 is 1/8 of it, half its fraction.
    for (i, k) in ["b", "c", "d", "e", "f", "g", "h", "i"].iter().enumerate() {
        add_table(
            &mut vs,
            1 + i % 3,
            &puts(&[k], 1, l0.meta.file_size as usize),
        );
    }
    let below: u64 = (1..4)
        .flat_map(|l| vs.current().files(0, l).to_vec())
        .map(|f| f.meta.file_size)
        .sum();
    let want = l0.meta.file_size as f64 / (0.25 * below as f64);
    let scores = compaction_scores(&vs.current(), 0, &fraction, &reg);
    assert!((scores[0] - want).abs() < 1e-9, "{scores:?} want {want}");
    assert!(scores[0] < 0.6, "{scores:?}");
    // Turned off, only the file count counts.
    let scores = compaction_scores(&vs.current(), 0, &opts_with_trigger(10), &reg);
    assert!((scores[0] - 0.1).abs() < 1e-9, "{scores:?}");
}

fn opts_with_trigger(n: usize) -> LevelOptions {
    LevelOptions {
        l0_compaction_trigger: n,
        ..opts()
    }
}
