//! Simple L0 compaction: picking L0 plus overlapping L1, splitting outputs by size without
//! splitting a user key's versions, installing the result, and dropping the inputs.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod util;

use std::sync::Arc;

use riptide_compaction::{
    CompactionOptions, VersionEdit, VersionSet, compact, compaction_edits, l1_is_bottommost,
    pick_l0_compaction,
};
use riptide_sstable::{Compression, TableOptions};
use util::{Entry, put, read_tables, write_table};

#[test]
fn l0_into_l1_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let mut vs = VersionSet::open(dir.path(), None, true).unwrap();
    let mut seq = 0;
    let mut add = |vs: &mut VersionSet, level: usize, keys: &[&str]| {
        let entries: Vec<Entry> = keys
            .iter()
            .flat_map(|k| {
                seq += 2;
                // Two versions per key, with a large value, so files fill up quickly.
                [put(k, seq, &"x".repeat(3000)), put(k, seq - 1, "old")]
            })
            .collect();
        let n = vs.new_file_number();
        let t = write_table(dir.path(), n, &entries);
        vs.apply_with_tables(
            vec![VersionEdit::AddFile {
                cf: 0,
                level,
                meta: t.meta.clone(),
            }],
            &[t],
        )
        .unwrap();
    };
    add(&mut vs, 1, &["a", "b"]);
    add(&mut vs, 1, &["m", "n"]);
    add(&mut vs, 1, &["x", "y"]);
    add(&mut vs, 0, &["b", "c", "d"]);
    assert!(
        pick_l0_compaction(&vs.current(), 0, 2).is_none(),
        "below trigger"
    );
    add(&mut vs, 0, &["c", "e", "m"]);

    let version = vs.current();
    let inputs = pick_l0_compaction(&version, 0, 2).unwrap();
    let nums: Vec<u64> = inputs.iter().map(|h| h.number()).collect();
    assert_eq!(
        nums,
        [5, 4, 1, 2],
        "L0 newest first, then overlapping L1 (not x..y)"
    );
    assert!(l1_is_bottommost(&version, 0));
    let input_paths: Vec<_> = inputs.iter().map(|h| h.path().to_path_buf()).collect();

    // Uncompressed, so the size estimate tracks the values.
    let topts = TableOptions {
        compression: Compression::None,
        ..TableOptions::default()
    };
    let opts = CompactionOptions {
        fs: riptide_common::fs::real(),
        dir: dir.path(),
        table_options: &topts,
        cache: None,
        snapshots: &[],
        bottommost: true,
        target_file_size: 4000,
    };
    let output = compact(inputs.clone(), &opts, || vs.new_file_number()).unwrap();
    assert!(output.new_files.len() > 1, "split by size");
    for w in output.new_files.windows(2) {
        assert!(
            w[0].meta.largest_user_key() < w[1].meta.smallest_user_key(),
            "no user key spans two files"
        );
    }
    let entries = read_tables(&output.new_files);
    let keys: Vec<&[u8]> = entries.iter().map(|e| e.0.as_slice()).collect();
    assert_eq!(
        keys,
        [b"a", b"b", b"c", b"d", b"e", b"m", b"n"],
        "one version each"
    );
    assert_eq!(output.stats.entries_in, 20);
    assert_eq!(output.stats.entries_out, 7);
    assert_eq!(
        output.stats.bytes_read,
        inputs.iter().map(|h| h.meta.file_size).sum::<u64>()
    );
    assert_eq!(
        output.stats.bytes_written,
        output
            .new_files
            .iter()
            .map(|h| h.meta.file_size)
            .sum::<u64>()
    );

    let edits = compaction_edits(&version, 0, &inputs, 1, &output).unwrap();
    let new_files = output.new_files.clone();
    vs.apply_with_tables(edits, &new_files).unwrap();
    drop((version, inputs, output, new_files));
    for p in &input_paths {
        assert!(!p.exists(), "input {} deleted", p.display());
    }
    let v = vs.current();
    assert!(v.files(0, 0).is_empty());
    let l1 = v.files(0, 1);
    assert!(l1.len() > 2);
    let all = read_tables(l1);
    assert_eq!(
        all.len(),
        7 + 4,
        "the new files and the untouched x..y file"
    );

    // And it all survives a reopen.
    let state = vs.state().clone();
    drop((v, vs));
    let vs = VersionSet::open(dir.path(), None, false).unwrap();
    assert_eq!(vs.state(), &state);
    assert_eq!(read_tables(vs.current().files(0, 1)), all);
    assert_eq!(Arc::strong_count(&vs.current()), 2);
}

#[test]
fn failed_compaction_leaves_no_files() {
    let dir = tempfile::tempdir().unwrap();
    let t = write_table(dir.path(), 1, &[put("a", 1, "x"), put("b", 2, "y")]);
    // The output number collides with an existing file: creating it fails.
    let topts = TableOptions::default();
    let opts = CompactionOptions {
        fs: riptide_common::fs::real(),
        dir: dir.path(),
        table_options: &topts,
        cache: None,
        snapshots: &[],
        bottommost: false,
        target_file_size: 1,
    };
    let mut numbers = [2u64, 1].into_iter();
    let e = compact(vec![t], &opts, || numbers.next().unwrap()).unwrap_err();
    assert_eq!(e.kind(), riptide_common::ErrorKind::Io, "{e}");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        ["000001.sst"],
        "the finished output 000002.sst was removed"
    );
}
