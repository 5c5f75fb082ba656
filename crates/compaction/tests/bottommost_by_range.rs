//! `bottommost` is decided by key range: deeper files elsewhere in the key space do not stop
//! a job from dropping tombstones.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionRegistry, LevelOptions, VersionSet, is_bottommost, pick_compaction,
};
use util::{add_table, puts};

fn opts() -> LevelOptions {
    LevelOptions {
        num_levels: 5,
        max_bytes_for_level_base: 1,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.0,
        ..LevelOptions::default()
    }
}

#[test]
fn deeper_files_only_matter_when_they_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    add_table(&mut vs, 1, &puts(&["c", "f"], 10, 10));
    add_table(&mut vs, 3, &puts(&["x", "y"], 1, 10));
    let reg = CompactionRegistry::new();
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.output_level, 2);
    assert!(job.bottommost, "L3 holds only x..y");
    reg.finish(&job);

    // A deeper file inside c..f (two levels down) makes it not bottommost.
    add_table(&mut vs, 4, &puts(&["d"], 2, 10));
    let job = pick_compaction(&vs.current(), 0, &opts(), &reg).unwrap();
    assert_eq!(job.output_level, 2);
    assert!(!job.bottommost);
    let v = vs.current();
    assert!(is_bottommost(&v, 0, 2, b"a", b"c"));
    assert!(!is_bottommost(&v, 0, 2, b"a", b"d"));
    assert!(is_bottommost(&v, 0, 4, b"a", b"z"));
}
