//! Picking by overlap (RocksDB `kMinOverlappingRatio`, the default): of the files of a level
//! that is due, the one that rewrites the fewest bytes below per byte of its own goes first;
//! tombstones make a file weigh more; round-robin picking still works when asked for.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use riptide_compaction::{
    CompactionPriority, CompactionRegistry, LevelOptions, VersionSet, pick_compaction,
};
use util::{add_table, del, job_numbers, puts};

/// Three levels, L1 always due, sized by fixed targets.
fn opts(priority: CompactionPriority) -> LevelOptions {
    LevelOptions {
        num_levels: 3,
        max_bytes_for_level_base: 1,
        dynamic_level_bytes: false,
        tombstone_ratio_trigger: 0.0,
        priority,
        ..LevelOptions::default()
    }
}

#[test]
fn the_file_with_the_least_overlap_below_goes_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    // L2: a big file under "a".."c", a small one under "g".."h", nothing under "m".."n".
    let big_keys: Vec<String> = (0..200).map(|i| format!("b{i:04}")).collect();
    let big_refs: Vec<&str> = big_keys.iter().map(String::as_str).collect();
    add_table(&mut vs, 2, &puts(&big_refs, 1, 100));
    add_table(&mut vs, 2, &puts(&["g1", "g2"], 1000, 100));
    // L1: three files of the same shape, in key order.
    let heavy = add_table(&mut vs, 1, &puts(&["a", "c"], 2000, 100)).number();
    let light = add_table(&mut vs, 1, &puts(&["g", "h"], 2010, 100)).number();
    let free = add_table(&mut vs, 1, &puts(&["m", "n"], 2020, 100)).number();
    let version = vs.current();

    let reg = CompactionRegistry::new();
    let by_overlap = opts(CompactionPriority::MinOverlappingRatio);
    let mut picked = Vec::new();
    for _ in 0..3 {
        let job = pick_compaction(&version, 0, &by_overlap, &reg).unwrap();
        picked.push(job_numbers(&job, 1)[0]);
        // Held: the next pick must take another file.
    }
    assert_eq!(picked, [free, light, heavy], "fewest bytes below first");
    assert_eq!(reg.running_jobs(), 3);

    // Round-robin takes them in key order instead.
    let reg = CompactionRegistry::new();
    let job = pick_compaction(&version, 0, &opts(CompactionPriority::RoundRobin), &reg).unwrap();
    assert_eq!(job_numbers(&job, 1), [heavy]);
}

#[test]
fn tombstones_make_a_file_go_first() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    // L2: two files of the same size, one under each L1 file.
    add_table(&mut vs, 2, &puts(&["b1", "b2", "b3"], 1, 100));
    add_table(&mut vs, 2, &puts(&["x1", "x2", "x3"], 10, 100));
    // L1: "a".."c" holds puts; "w".."y" holds as many entries, mostly deletes (a smaller
    // file, so by raw size its overlap ratio would be the worse one).
    let puts_file = add_table(&mut vs, 1, &puts(&["a", "b", "c", "c1"], 100, 8)).number();
    let deletes = vec![
        del("w", 200),
        del("w1", 201),
        del("w2", 202),
        util::put("y", 203, "v"),
    ];
    let deletes_file = add_table(&mut vs, 1, &deletes).number();
    let version = vs.current();
    let reg = CompactionRegistry::new();
    let opts = opts(CompactionPriority::MinOverlappingRatio);
    let job = pick_compaction(&version, 0, &opts, &reg).unwrap();
    let size = |n: u64| {
        version
            .files(0, 1)
            .iter()
            .find(|f| f.number() == n)
            .unwrap()
            .meta
            .file_size
    };
    assert!(
        size(deletes_file) < size(puts_file),
        "the deletes are the smaller file"
    );
    assert_eq!(job_numbers(&job, 1), [deletes_file]);
}
