//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::sync::Arc;

use riptide_common::InternalIterator;
use riptide_common::key::internal_key;
use riptide_common::{ErrorKind, ValueKind};
use riptide_sstable::{BlockCache, Table, TableOptions, TableProperties, TableWriter};

/// Entries sorted by internal key.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Writes `entries` (already sorted) to `path`.
pub fn write_table(path: &Path, entries: &Entries, opts: TableOptions) -> TableProperties {
    let mut w = TableWriter::create(path, opts).unwrap();
    for (k, v) in entries {
        w.add(k, v).unwrap();
    }
    w.finish().unwrap()
}

/// Writes and opens a table.
pub fn build(
    dir: &Path,
    name: &str,
    entries: &Entries,
    opts: TableOptions,
    cache: Option<Arc<BlockCache>>,
) -> Arc<Table> {
    let path = dir.join(name);
    write_table(&path, entries, opts);
    Table::open(&path, cache).unwrap()
}

/// `n` distinct keys with one put each, values of `value_len` bytes.
pub fn simple_entries(n: usize, value_len: usize) -> Entries {
    (0..n)
        .map(|i| {
            let k = internal_key(
                format!("key{i:08}").as_bytes(),
                i as u64 + 1,
                ValueKind::Put,
            );
            let v: Vec<u8> = format!("v{i}-").bytes().cycle().take(value_len).collect();
            (k, v)
        })
        .collect()
}

/// Reads every entry, every way we can; returns the first error (or the entries read).
pub fn read_everything(table: &Arc<Table>) -> riptide_common::Result<Entries> {
    let mut out = Vec::new();
    let mut it = table.iter();
    it.seek_to_first()?;
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next()?;
    }
    it.seek_to_last()?;
    while it.valid() {
        it.prev()?;
    }
    Ok(out)
}

/// Asserts `e` is a corruption error.
pub fn assert_corruption(e: &riptide_common::Error, what: &str) {
    assert_eq!(e.kind(), ErrorKind::Corruption, "{what}: {e}");
}

/// Number of this process's open file descriptors on files under `dir` (from /proc/self/fd).
pub fn open_fds_under(dir: &Path) -> usize {
    let dir = dir.canonicalize().unwrap();
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(&dir))
        .count()
}

/// The user key of `entries[i]` with an extra byte: absent from the table.
pub fn absent_key(entries: &Entries, i: usize) -> Vec<u8> {
    let mut k = riptide_common::key::user_key(&entries[i].0).to_vec();
    k.push(b'~');
    k
}
