//! Range tombstones through flush and compaction: flushed with the memtable (alone too),
//! dropping what they cover in their snapshot stripe, split between output files without
//! making them overlap, clipped to subcompaction ranges, dropped at the bottom once every
//! snapshot sees them, and rewritten away by a manual compaction of the last level.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::Arc;

use riptide_common::range_del::RangeTombstone;
use riptide_common::{SeqNo, ValueKind};
use riptide_compaction::{
    CompactionJob, CompactionOptions, CompactionReason, CompactionRegistry, LevelOptions,
    ManualCompaction, ManualStep, TableHandle, VersionEdit, VersionSet, compact, flush_memtable,
    run_compaction,
};
use riptide_memtable::Memtable;
use riptide_sstable::TableOptions;
use util::{Entry, add_table_with_ranges, put, read_tables, write_table_with_ranges};

fn rt(start: &str, end: &str, seqno: SeqNo) -> RangeTombstone {
    RangeTombstone::new(start.as_bytes(), end.as_bytes(), seqno)
}

fn key(i: u32) -> String {
    format!("k{i:04}")
}

/// What a reader at `snap` sees for `k` in `tables` (points and range tombstones).
fn visible(tables: &[Arc<TableHandle>], k: &[u8], snap: SeqNo) -> Option<Vec<u8>> {
    let points = read_tables(tables);
    let newest = points
        .iter()
        .filter(|e| e.0 == k && e.1 <= snap)
        .max_by_key(|e| e.1)?;
    let covered = tables.iter().any(|t| {
        t.table()
            .unwrap()
            .range_tombstones()
            .unwrap()
            .iter()
            .any(|r| r.seqno <= snap && r.seqno > newest.1 && r.contains(k))
    });
    (!covered && newest.2 == ValueKind::Put).then(|| newest.3.clone())
}

fn all_tombstones(tables: &[Arc<TableHandle>]) -> Vec<RangeTombstone> {
    tables
        .iter()
        .flat_map(|t| t.table().unwrap().range_tombstones().unwrap().to_vec())
        .collect()
}

#[test]
fn flush_writes_range_tombstones_and_drops_what_they_cover() {
    let dir = tempfile::tempdir().unwrap();
    let mem = Arc::new(Memtable::new(1));
    mem.insert(b"a", 1, ValueKind::Put, b"a1");
    mem.insert(b"b", 2, ValueKind::Put, b"b2");
    mem.insert(b"a", 3, ValueKind::RangeDelete, b"c");
    mem.insert(b"b", 4, ValueKind::Put, b"b4");
    let opts = TableOptions::default();
    let h = flush_memtable(
        &riptide_common::fs::real(),
        &mem,
        dir.path(),
        7,
        &opts,
        None,
        &[],
    )
    .unwrap()
    .unwrap();
    let names = util::names(&read_tables(std::slice::from_ref(&h)));
    assert_eq!(names, ["b4P"], "a1 and b2 are covered in their stripe");
    assert_eq!(
        *h.table().unwrap().range_tombstones().unwrap(),
        vec![rt("a", "c", 3)]
    );
    assert_eq!(h.meta.smallest_user_key(), b"a");
    assert!(h.meta.largest_is_range_end());
    assert_eq!(h.meta.largest_user_key(), b"c");
    assert_eq!((h.meta.min_seqno, h.meta.max_seqno), (3, 4));
    // A snapshot at 2 still needs a1 and b2.
    let h = flush_memtable(
        &riptide_common::fs::real(),
        &mem,
        dir.path(),
        8,
        &opts,
        None,
        &[2],
    )
    .unwrap()
    .unwrap();
    let names = util::names(&read_tables(std::slice::from_ref(&h)));
    assert_eq!(names, ["a1P", "b4P", "b2P"]);

    // Only a range tombstone: still a table.
    let mem = Arc::new(Memtable::new(2));
    mem.insert(b"m", 9, ValueKind::RangeDelete, b"p");
    let h = flush_memtable(
        &riptide_common::fs::real(),
        &mem,
        dir.path(),
        9,
        &opts,
        None,
        &[],
    )
    .unwrap()
    .unwrap();
    assert_eq!(h.meta.entries, 0);
    assert_eq!(
        *h.table().unwrap().range_tombstones().unwrap(),
        vec![rt("m", "p", 9)]
    );
    assert!(read_tables(std::slice::from_ref(&h)).is_empty());
}

/// Inputs: a lower file of many puts and an upper file with overlapping range tombstones
/// and a few newer puts.
fn inputs(dir: &std::path::Path) -> (Vec<Arc<TableHandle>>, Vec<RangeTombstone>) {
    // Incompressible values, so outputs split at a predictable size.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut value = || -> String {
        (0..100)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                char::from(b'a' + (x % 26) as u8)
            })
            .collect()
    };
    let lower: Vec<Entry> = (0..400)
        .map(|i| put(&key(i), u64::from(i) + 1, &value()))
        .collect();
    let ranges = vec![
        rt(&key(50), &key(350), 1000),
        rt(&key(100), &key(120), 1001),
        rt(&key(300), &key(500), 990),
        rt("a", "b", 1002),
    ];
    let upper: Vec<Entry> = [60u32, 200, 340]
        .iter()
        .map(|&i| put(&key(i), 2000 + u64::from(i), "new"))
        .collect();
    let files = vec![
        write_table_with_ranges(dir, 2, &upper, &ranges),
        write_table_with_ranges(dir, 1, &lower, &[]),
    ];
    (files, ranges)
}

fn check_same_reads(before: &[Arc<TableHandle>], after: &[Arc<TableHandle>], snaps: &[SeqNo]) {
    let mut reads = snaps.to_vec();
    reads.push(SeqNo::MAX >> 8);
    for i in 0..420 {
        for &s in &reads {
            assert_eq!(
                visible(before, key(i).as_bytes(), s),
                visible(after, key(i).as_bytes(), s),
                "key {i} at {s}"
            );
        }
    }
}

/// Checks output files are sorted and pairwise non-overlapping (a range end is exclusive).
fn check_level_shape(files: &[Arc<TableHandle>]) {
    for w in files.windows(2) {
        assert!(
            w[0].meta.ends_before(w[1].meta.smallest_user_key()),
            "files {} and {} overlap",
            w[0].number(),
            w[1].number()
        );
    }
}

#[test]
fn tombstones_split_between_output_files_without_overlap() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = inputs(dir.path());
    let topts = TableOptions {
        block_size: 512,
        ..TableOptions::default()
    };
    let next = std::sync::atomic::AtomicU64::new(100);
    for snaps in [vec![], vec![995], vec![5, 150, 1000]] {
        let opts = CompactionOptions {
            fs: riptide_common::fs::real(),
            dir: dir.path(),
            table_options: &topts,
            cache: None,
            snapshots: &snaps,
            bottommost: false,
            target_file_size: 2048,
        };
        let out = compact(files.clone(), &opts, || {
            next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        })
        .unwrap();
        assert!(out.new_files.len() >= 2, "{}", out.new_files.len());
        check_level_shape(&out.new_files);
        check_same_reads(&files, &out.new_files, &snaps);
        // Tombstones were split: several files carry a piece of [k0050, k0350).
        let carrying = out
            .new_files
            .iter()
            .filter(|f| f.table().unwrap().has_range_tombstones())
            .count();
        assert!(carrying > usize::from(!snaps.is_empty()), "{carrying}");
        // Each file's tombstones lie within its key range.
        for f in &out.new_files {
            for t in f.table().unwrap().range_tombstones().unwrap().iter() {
                assert!(t.start.as_slice() >= f.meta.smallest_user_key());
                assert!(t.end.as_slice() <= f.meta.largest_user_key());
            }
        }
        assert!(out.stats.range_tombstones_out >= 4);
        if snaps.is_empty() {
            assert!(out.stats.range_deleted > 0);
        }
        // The outputs install as a level (the manifest checks they do not overlap).
        let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
        let edits = out
            .new_files
            .iter()
            .map(|f| VersionEdit::AddFile {
                cf: 0,
                level: 1,
                meta: f.meta.clone(),
            })
            .collect();
        vs.apply_with_tables(edits, &out.new_files).unwrap();
        let edits = out
            .new_files
            .iter()
            .map(|f| VersionEdit::DeleteFile {
                cf: 0,
                level: 1,
                number: f.number(),
            })
            .collect();
        vs.apply(edits).unwrap();
    }
}

#[test]
fn bottommost_drops_tombstones_every_snapshot_sees() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = inputs(dir.path());
    let topts = TableOptions::default();
    let next = std::sync::atomic::AtomicU64::new(100);
    let run = |snaps: &[SeqNo]| {
        let opts = CompactionOptions {
            fs: riptide_common::fs::real(),
            dir: dir.path(),
            table_options: &topts,
            cache: None,
            snapshots: snaps,
            bottommost: true,
            target_file_size: 1 << 20,
        };
        let out = compact(files.clone(), &opts, || {
            next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        })
        .unwrap();
        check_same_reads(&files, &out.new_files, snaps);
        out
    };
    let out = run(&[]);
    assert!(all_tombstones(&out.new_files).is_empty());
    // Every covered put is gone: 400 keys, minus the covered ones, plus the 3 newer puts.
    let covered = (50..400).count();
    assert_eq!(read_tables(&out.new_files).len(), 400 - covered + 3);
    // A snapshot at 995 sees the tombstone at 990 but not the others: those stay.
    let out = run(&[995]);
    let left = all_tombstones(&out.new_files);
    assert!(!left.is_empty());
    assert!(left.iter().all(|t| t.seqno > 995), "{left:?}");
}

fn job(files: &[Arc<TableHandle>], level: usize, bottommost: bool) -> CompactionJob {
    CompactionJob {
        id: 0,
        cf: 0,
        inputs: vec![(level, files.to_vec())],
        output_level: level + 1,
        bottommost,
        reason: CompactionReason::Manual,
        score: 0.0,
        target_file_size: 2048,
        smallest_user_key: files
            .iter()
            .map(|f| f.meta.smallest_user_key().to_vec())
            .min()
            .unwrap(),
        largest_user_key: files
            .iter()
            .map(|f| f.meta.largest_user_key().to_vec())
            .max()
            .unwrap(),
        kept_ranges: Vec::new(),
    }
}

#[test]
fn subcompactions_clip_tombstones_to_their_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let (files, _) = inputs(dir.path());
    let topts = TableOptions {
        block_size: 512,
        ..TableOptions::default()
    };
    let next = std::sync::atomic::AtomicU64::new(100);
    for (snaps, bottommost) in [(vec![], false), (vec![600], false), (vec![], true)] {
        let opts = CompactionOptions {
            fs: riptide_common::fs::real(),
            dir: dir.path(),
            table_options: &topts,
            cache: None,
            snapshots: &snaps,
            bottommost: false,
            target_file_size: 0,
        };
        let j = job(&files, 0, bottommost);
        let alloc = || next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let single = run_compaction(&j, &opts, alloc, 1).unwrap();
        let multi = run_compaction(&j, &opts, alloc, 4).unwrap();
        assert!(
            multi.stats.subcompactions > 1,
            "{}",
            multi.stats.subcompactions
        );
        check_level_shape(&multi.new_files);
        check_same_reads(&files, &single.new_files, &snaps);
        check_same_reads(&files, &multi.new_files, &snaps);
        assert_eq!(
            read_tables(&single.new_files),
            read_tables(&multi.new_files)
        );
        // No tombstone piece crosses a file's range.
        for f in &multi.new_files {
            for t in f.table().unwrap().range_tombstones().unwrap().iter() {
                assert!(f.meta.contains_user_key(&t.start));
                assert!(t.end.as_slice() <= f.meta.largest_user_key());
            }
        }
    }
}

#[test]
fn manual_compaction_rewrites_the_last_level() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let opts = LevelOptions {
        num_levels: 3,
        dynamic_level_bytes: false,
        ..LevelOptions::default()
    };
    // In the last level already: puts and, in another file, a tombstone kept for a snapshot
    // released since.
    add_table_with_ranges(&mut vs, 2, &[put("a", 1, "x"), put("b", 2, "x")], &[]);
    add_table_with_ranges(&mut vs, 2, &[put("m", 3, "x")], &[rt("c", "l", 4)]);
    let reg = CompactionRegistry::new();
    let topts = TableOptions::default();
    let dirp = vs.dir().to_path_buf();
    let copts = CompactionOptions {
        fs: riptide_common::fs::real(),
        dir: &dirp,
        table_options: &topts,
        cache: None,
        snapshots: &[],
        bottommost: false,
        target_file_size: 0,
    };
    let mut manual = ManualCompaction::new(0, None);
    let mut steps = Vec::new();
    loop {
        match manual.next_job(&vs.current(), &opts, &reg) {
            ManualStep::Job(job) => {
                steps.push((job.inputs[0].0, job.output_level, job.bottommost));
                let out = run_compaction(&job, &copts, || vs.new_file_number(), 2).unwrap();
                vs.apply_with_tables(job.edits(&out), &out.new_files)
                    .unwrap();
                reg.finish(&job);
            }
            ManualStep::Wait => panic!("nothing else runs"),
            ManualStep::Done => break,
        }
    }
    assert_eq!(steps, [(2, 2, true)]);
    let files = vs.current().files(0, 2).to_vec();
    assert!(all_tombstones(&files).is_empty());
    assert_eq!(util::names(&read_tables(&files)), ["a1P", "b2P", "m3P"]);
}
