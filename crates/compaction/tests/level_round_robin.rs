//! Round-robin picking within a level: the cursor advances past each picked file and wraps.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionPriority, CompactionRegistry, LevelOptions, VersionSet, pick_compaction,
};
use util::{add_table, job_numbers, puts};

#[test]
fn cursor_advances_and_wraps() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let opts = LevelOptions {
        num_levels: 3,
        max_bytes_for_level_base: 1,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.0,
        priority: CompactionPriority::RoundRobin,
        ..LevelOptions::default()
    };
    let reg = CompactionRegistry::new();
    let files: Vec<u64> = [["a", "b"], ["c", "d"], ["e", "f"], ["g", "h"]]
        .iter()
        .enumerate()
        .map(|(i, keys)| add_table(&mut vs, 1, &puts(keys, 1 + 10 * i as u64, 10)).number())
        .collect();
    let version = vs.current();
    let mut picked = Vec::new();
    for _ in 0..6 {
        let job = pick_compaction(&version, 0, &opts, &reg).unwrap();
        picked.push(job_numbers(&job, 1)[0]);
        let cursor = reg.round_robin_cursor(0, 1).unwrap();
        assert_eq!(cursor, job.largest_user_key, "cursor = last key picked");
        // Not applied: the version stays the same, only the cursor moves.
        reg.finish(&job);
    }
    assert_eq!(
        picked,
        [files[0], files[1], files[2], files[3], files[0], files[1]]
    );

    // A busy file is skipped, the cursor goes past the file actually picked.
    let held = pick_compaction(&version, 0, &opts, &reg).unwrap();
    assert_eq!(job_numbers(&held, 1), [files[2]]);
    let next = pick_compaction(&version, 0, &opts, &reg).unwrap();
    assert_eq!(job_numbers(&next, 1), [files[3]]);
    let wrapped = pick_compaction(&version, 0, &opts, &reg).unwrap();
    assert_eq!(job_numbers(&wrapped, 1), [files[0]]);
    assert_eq!(reg.running_jobs(), 3);
}
