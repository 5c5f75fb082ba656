//! Picking by score: the most urgent level wins; L1+ jobs take the overlapping files of the
//! next level; L0 jobs take all of L0 and the overlapping base-level files.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionPriority, CompactionReason, CompactionRegistry, LevelOptions, VersionSet,
    compaction_scores, pick_compaction,
};
use util::{add_table, job_numbers, puts};

fn opts() -> LevelOptions {
    LevelOptions {
        num_levels: 4,
        l0_compaction_trigger: 2,
        max_bytes_for_level_base: 3000,
        level_size_ratio: 10.0,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.0,
        // The file picked within a level is checked in key order (picking by overlap has
        // its own test, level_min_overlapping_ratio.rs).
        priority: CompactionPriority::RoundRobin,
        ..LevelOptions::default()
    }
}

#[test]
fn highest_score_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    assert!(pick_compaction(&vs.current(), 0, &opts(), &reg).is_none());

    // L1: five files of ~1.5 KB each, over the 3000-byte target (score ~2.5).
    let a = add_table(&mut vs, 1, &puts(&["a", "b", "c"], 1, 400));
    let m = add_table(&mut vs, 1, &puts(&["m", "n", "o"], 10, 400));
    let q = add_table(&mut vs, 1, &puts(&["q", "r", "s"], 20, 400));
    add_table(&mut vs, 1, &puts(&["t", "u", "v"], 30, 400));
    add_table(&mut vs, 1, &puts(&["x", "y", "z"], 40, 400));
    // L2: one file under m..o, one under q..s.
    add_table(&mut vs, 2, &puts(&["m", "p"], 50, 10));
    let l2_r = add_table(&mut vs, 2, &puts(&["r"], 60, 10));
    let scores = compaction_scores(&vs.current(), 0, &opts(), &reg);
    assert_eq!(scores.len(), 3, "L0..L2 scored, the last level is not");
    assert!(scores[1] > 2.0 && scores[1] < 2.8, "{scores:?}");
    assert!(scores[2] < 1.0);

    // One L0 file: below its trigger (score 0.5); L1 wins.
    add_table(&mut vs, 0, &puts(&["b", "n"], 70, 10));
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::LevelSize);
    assert_eq!(job.output_level, 2);
    assert!(job.score > 1.0);
    assert_eq!(job_numbers(&job, 1), [a.number()], "first file of L1");
    assert!(
        job_numbers(&job, 2).is_empty(),
        "nothing in L2 overlaps a..c"
    );
    assert!(job.bottommost);
    reg.finish(&job);

    // Six L0 files: score 3 beats L1.
    for i in 0..5 {
        add_table(&mut vs, 0, &puts(&["c", "m"], 80 + i * 2, 10));
    }
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::L0FileCount);
    assert_eq!(job.output_level, 1);
    assert!((job.score - 3.0).abs() < 1e-9, "{}", job.score);
    assert_eq!(job_numbers(&job, 0).len(), 6);
    assert_eq!(
        job_numbers(&job, 1),
        [a.number(), m.number()],
        "L1 files overlapping b..n"
    );
    assert!(!job.bottommost, "L2 holds m..p");
    assert_eq!(job.smallest_user_key, b"a");
    assert_eq!(job.largest_user_key, b"o");

    // While it runs, L0 and those L1 files are busy and do not count: L1 still scores
    // above 1 with q..s, t..v, x..z. The next pick is q..s (round robin: after a..c, m..o is
    // busy), with the overlapping L2 file; L0 is not picked twice.
    let job2 = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job2.reason, CompactionReason::LevelSize);
    assert_eq!(job_numbers(&job2, 1), [q.number()]);
    assert_eq!(job_numbers(&job2, 2), [l2_r.number()]);
    // L1's two idle files are still just over target: t..v goes next, then nothing is due.
    let job3 = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job3.inputs.len(), 1, "nothing below t..v");
    assert_eq!(job3.smallest_user_key, b"t");
    assert!(pick_compaction(&vs.current(), 0, &opts(), &reg).is_none());
    reg.finish(&job3);
    reg.finish(&job);
    reg.finish(&job2);
    assert_eq!(reg.running_jobs(), 0);
}

#[test]
fn l0_by_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let reg = CompactionRegistry::new();
    let o = LevelOptions {
        l0_compaction_trigger: 100,
        ..opts()
    };
    add_table(
        &mut vs,
        0,
        &puts(&["a", "b", "c", "d", "e", "f", "g", "h"], 1, 500),
    );
    let job = pick_compaction(&vs.current(), 0, &o, &reg).unwrap();
    assert_eq!(job.reason, CompactionReason::L0FileCount);
    assert!(job.score > 1.0);
}
