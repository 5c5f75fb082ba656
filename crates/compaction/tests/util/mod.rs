//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::sync::Arc;

use riptide_common::key::{internal_key, parse_internal_key};
use riptide_common::range_del::RangeTombstone;
use riptide_common::{InternalIterator, SeqNo, ValueKind};
use riptide_compaction::{CompactionOptions, FileMeta, TableHandle, table_file_path};
use riptide_sstable::{TableOptions, TableWriter};

/// One version of a key, as the tests describe it.
pub type Entry = (Vec<u8>, SeqNo, ValueKind, Vec<u8>);

pub fn put(k: &str, s: SeqNo, v: &str) -> Entry {
    (
        k.as_bytes().to_vec(),
        s,
        ValueKind::Put,
        v.as_bytes().to_vec(),
    )
}

pub fn del(k: &str, s: SeqNo) -> Entry {
    (k.as_bytes().to_vec(), s, ValueKind::Delete, Vec::new())
}

pub fn sdel(k: &str, s: SeqNo) -> Entry {
    (
        k.as_bytes().to_vec(),
        s,
        ValueKind::SingleDelete,
        Vec::new(),
    )
}

/// Writes `entries` (any order) as table `number` in `dir` and opens it.
pub fn write_table(dir: &Path, number: u64, entries: &[Entry]) -> Arc<TableHandle> {
    write_table_with_ranges(dir, number, entries, &[])
}

/// [`write_table`] with range tombstones.
pub fn write_table_with_ranges(
    dir: &Path,
    number: u64,
    entries: &[Entry],
    ranges: &[RangeTombstone],
) -> Arc<TableHandle> {
    let mut v: Vec<(Vec<u8>, Vec<u8>)> = entries
        .iter()
        .map(|(k, s, kind, val)| (internal_key(k, *s, *kind), val.clone()))
        .collect();
    v.sort_by(|a, b| riptide_common::key::compare_internal_keys(&a.0, &b.0));
    let path = table_file_path(dir, number);
    let mut w = TableWriter::create(&path, TableOptions::default()).unwrap();
    for (k, val) in &v {
        w.add(k, val).unwrap();
    }
    for t in ranges {
        w.add_range_tombstone(&t.start, &t.end, t.seqno).unwrap();
    }
    let p = w.finish().unwrap();
    let meta = FileMeta {
        number,
        file_size: p.file_size,
        smallest: p.smallest_key,
        largest: p.largest_key,
        min_seqno: p.min_seqno,
        max_seqno: p.max_seqno,
        entries: p.entries,
        tombstones: p.tombstones,
    };
    Arc::new(TableHandle::open(dir, meta, None).unwrap())
}

/// Every entry of an iterator, decoded.
pub fn read_all(it: &mut dyn InternalIterator) -> Vec<Entry> {
    let mut out = Vec::new();
    it.seek_to_first().unwrap();
    while it.valid() {
        let p = parse_internal_key(it.key()).unwrap();
        out.push((p.user_key.to_vec(), p.seqno, p.kind, it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

/// Every entry of several tables, in order.
pub fn read_tables(tables: &[Arc<TableHandle>]) -> Vec<Entry> {
    tables
        .iter()
        .flat_map(|t| read_all(&mut t.iter()))
        .collect()
}

/// Short names of entries (`a9P`), for readable assertions.
pub fn names(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .map(|(k, s, kind, _)| {
            let c = match kind {
                ValueKind::Put => 'P',
                ValueKind::Delete => 'D',
                ValueKind::SingleDelete => 'S',
                ValueKind::RangeDelete => 'R',
            };
            format!("{}{s}{c}", String::from_utf8_lossy(k))
        })
        .collect()
}

/// A file meta with made-up contents, for manifest-only tests.
pub fn fake_meta(number: u64, a: &str, b: &str, seq: SeqNo) -> FileMeta {
    FileMeta {
        number,
        file_size: 1000 + number,
        smallest: internal_key(a.as_bytes(), seq, ValueKind::Put),
        largest: internal_key(b.as_bytes(), seq, ValueKind::Delete),
        min_seqno: seq.saturating_sub(3),
        max_seqno: seq,
        entries: 10 * number,
        tombstones: number,
    }
}

/// Writes `entries` as a new table of `vs` and adds it to `level` of column family 0.
pub fn add_table(
    vs: &mut riptide_compaction::VersionSet,
    level: usize,
    entries: &[Entry],
) -> Arc<TableHandle> {
    add_table_with_ranges(vs, level, entries, &[])
}

/// [`add_table`] with range tombstones.
pub fn add_table_with_ranges(
    vs: &mut riptide_compaction::VersionSet,
    level: usize,
    entries: &[Entry],
    ranges: &[RangeTombstone],
) -> Arc<TableHandle> {
    let n = vs.new_file_number();
    let t = write_table_with_ranges(vs.dir(), n, entries, ranges);
    vs.apply_with_tables(
        vec![riptide_compaction::VersionEdit::AddFile {
            cf: 0,
            level,
            meta: t.meta.clone(),
        }],
        std::slice::from_ref(&t),
    )
    .unwrap();
    t
}

/// Puts of `keys` at consecutive seqnos from `first_seq`, with incompressible values of
/// `value_len` bytes.
pub fn puts(keys: &[&str], first_seq: SeqNo, value_len: usize) -> Vec<Entry> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| {
            let seq = first_seq + i as SeqNo;
            let mut x = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let value = (0..value_len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    b'a' + (x % 26) as u8
                })
                .collect();
            (k.as_bytes().to_vec(), seq, ValueKind::Put, value)
        })
        .collect()
}

/// Numbers of the files of one input level of a job.
pub fn job_numbers(job: &riptide_compaction::CompactionJob, level: usize) -> Vec<u64> {
    job.inputs
        .iter()
        .filter(|(l, _)| *l == level)
        .flat_map(|(_, f)| f.iter().map(|h| h.number()))
        .collect()
}

/// Options for `run_compaction` in `dir` on the real file system: no block cache, no
/// snapshots (the job gives bottommost and the output size).
pub fn job_options<'a>(dir: &'a Path, table_options: &'a TableOptions) -> CompactionOptions<'a> {
    CompactionOptions {
        fs: riptide_common::fs::real(),
        dir,
        table_options,
        cache: None,
        snapshots: &[],
        bottommost: false,
        target_file_size: 0,
    }
}
