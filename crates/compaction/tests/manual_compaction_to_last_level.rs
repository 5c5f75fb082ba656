//! Manual compaction (`compact_range`) steps level by level until everything (or everything
//! in a range) is in the last level.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionOptions, CompactionReason, CompactionRegistry, LevelOptions, ManualCompaction,
    ManualStep, VersionSet, run_compaction,
};
use riptide_sstable::TableOptions;
use util::{add_table, del, names, put, read_tables};

fn drive(
    vs: &mut VersionSet,
    manual: &mut ManualCompaction,
    opts: &LevelOptions,
) -> Vec<(usize, usize)> {
    let reg = CompactionRegistry::new();
    let topts = TableOptions::default();
    let dir = vs.dir().to_path_buf();
    let copts = CompactionOptions {
        fs: riptide_common::fs::real(),
        dir: &dir,
        table_options: &topts,
        cache: None,
        snapshots: &[],
        bottommost: false,
        target_file_size: 0,
    };
    let mut steps = Vec::new();
    loop {
        match manual.next_job(&vs.current(), opts, &reg) {
            ManualStep::Job(job) => {
                assert_eq!(job.reason, CompactionReason::Manual);
                let from = job.inputs[0].0;
                steps.push((from, job.output_level));
                // Not applied yet: asking again must wait.
                assert!(matches!(
                    manual.clone().next_job(&vs.current(), opts, &reg),
                    ManualStep::Wait
                ));
                let out = run_compaction(&job, &copts, || vs.new_file_number(), 2).unwrap();
                vs.apply_with_tables(job.edits(&out), &out.new_files)
                    .unwrap();
                reg.finish(&job);
            }
            ManualStep::Wait => panic!("nothing else runs"),
            ManualStep::Done => return steps,
        }
    }
}

#[test]
fn everything_reaches_the_last_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let opts = LevelOptions {
        num_levels: 4,
        dynamic_level_bytes: false,
        ..LevelOptions::default()
    };
    add_table(&mut vs, 2, &[put("a", 1, "a1"), put("m", 2, "m2")]);
    add_table(&mut vs, 1, &[put("b", 3, "b3"), del("m", 4)]);
    add_table(&mut vs, 0, &[put("a", 5, "a5"), put("z", 6, "z6")]);
    add_table(&mut vs, 0, &[put("c", 7, "c7"), put("z", 8, "z8")]);
    let mut manual = ManualCompaction::new(0, None);
    let steps = drive(&mut vs, &mut manual, &opts);
    assert_eq!(steps, [(0, 1), (1, 2), (2, 3)]);
    let v = vs.current();
    for l in 0..3 {
        assert!(v.files(0, l).is_empty(), "level {l} is empty");
    }
    // The last step was bottommost: the delete of m went with m2.
    assert_eq!(
        names(&read_tables(v.files(0, 3))),
        ["a5P", "b3P", "c7P", "z8P"]
    );
}

#[test]
fn a_range_moves_only_what_overlaps_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let opts = LevelOptions {
        num_levels: 4,
        dynamic_level_bytes: false,
        ..LevelOptions::default()
    };
    add_table(&mut vs, 1, &[put("a", 1, "x"), put("b", 2, "x")]);
    let mid = add_table(&mut vs, 1, &[put("m", 3, "x"), put("n", 4, "x")]);
    add_table(&mut vs, 1, &[put("y", 5, "x"), put("z", 6, "x")]);
    add_table(&mut vs, 0, &[put("c", 7, "x")]);
    let mut manual = ManualCompaction::new(0, Some((b"l", b"n")));
    let steps = drive(&mut vs, &mut manual, &opts);
    assert_eq!(steps, [(1, 2), (2, 3)], "L0 holds nothing in l..n");
    let v = vs.current();
    assert_eq!(v.files(0, 0).len(), 1);
    assert_eq!(v.files(0, 1).len(), 2);
    assert!(v.level_of(0, mid.number()).is_none());
    assert_eq!(names(&read_tables(v.files(0, 3))), ["m3P", "n4P"]);
}

#[test]
fn dynamic_levels_go_from_l0_straight_to_the_base_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let opts = LevelOptions::default();
    add_table(&mut vs, 0, &[put("a", 1, "x")]);
    add_table(&mut vs, 0, &[put("a", 2, "y"), put("b", 3, "x")]);
    let mut manual = ManualCompaction::new(0, None);
    let steps = drive(&mut vs, &mut manual, &opts);
    assert_eq!(steps, [(0, 6)]);
    assert_eq!(
        names(&read_tables(vs.current().files(0, 6))),
        ["a2P", "b3P"]
    );
}
