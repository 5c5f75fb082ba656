//! Flush: writing a memtable out as a new L0 table (or, into an empty column family, as
//! several small tables for the base level).

use std::path::Path;
use std::sync::Arc;

use riptide_common::fs::FsRef;
use riptide_common::range_del::RangeTombstone;
use riptide_common::{Result, SeqNo};
use riptide_memtable::Memtable;
use riptide_sstable::{BlockCache, TableOptions};

use crate::gc::{RangeDelAggregator, copy_with_gc_and_range_dels};
use crate::output::OutputTables;
use crate::table_handle::TableHandle;

/// Writes `mem` as table `number` in `dir` on the file system `fs` and opens it. `None` if nothing is left to write
/// (an empty memtable, or one whose single deletes all cancelled their puts).
///
/// Versions no snapshot can tell apart are dropped (see [`crate::gc`]), and so are versions
/// that a range tombstone of the memtable deletes in their snapshot stripe; tombstones (point
/// and range) are kept, since older data may be below. The range tombstones go to the table's
/// range-deletion block (fragmented per stripe): a memtable holding only range tombstones
/// still makes a table. `snapshots` are sorted here. The file and the directory are fsynced;
/// the caller then records the file with a version edit.
pub fn flush_memtable(
    fs: &FsRef,
    mem: &Arc<Memtable>,
    dir: &Path,
    number: u64,
    table_opts: &TableOptions,
    cache: Option<Arc<BlockCache>>,
    snapshots: &[SeqNo],
) -> Result<Option<Arc<TableHandle>>> {
    let mut numbers = std::iter::once(number);
    let mut next = || numbers.next().unwrap_or(number);
    let mut files = flush_memtable_coalescing(
        mem,
        dir,
        FlushOutput {
            fs: fs.clone(),
            next_number: &mut next,
            max_file_size: u64::MAX,
        },
        table_opts,
        cache,
        snapshots,
        None,
    )?;
    Ok(files.pop())
}

/// Where [`flush_memtable_coalescing`] writes: the file system, file numbers and how big a
/// file may grow.
pub struct FlushOutput<'a> {
    /// The file system the tables are written on.
    pub fs: FsRef,
    /// Returns the number of each new table file.
    pub next_number: &'a mut dyn FnMut() -> u64,
    /// A new file is started (between two user keys) once one reaches this size;
    /// `u64::MAX` writes one file. Several files from one memtable never overlap, so they
    /// can go to a sorted level together (see [`crate::CompactionJob::is_trivial_move`]).
    pub max_file_size: u64,
}

/// The check of [`TombstoneCoalescing::verify`]: `(first, last, run) -> Result<bool>`.
pub type RunCheck<'a> = &'a dyn Fn(&[u8], &[u8], &[Vec<u8>]) -> Result<bool>;

/// Turning long runs of point tombstones into one range tombstone at flush, so that scans
/// seek over a deleted stretch (a queue's consumed end) instead of stepping over every
/// tombstone and every version it deletes.
///
/// A *run* is a stretch of consecutive user keys of the memtable whose newest version is a
/// delete or single delete, at least `min_run` long. It becomes a range tombstone
/// `[first, last + 0x00)` at the memtable's largest sequence number, added to the table
/// like the memtable's own range tombstones, only if `verify(first, last, run)` confirms
/// that the older data (everything flushed before this memtable) holds no live key in
/// `[first, last]` other than keys of the run: then the tombstone deletes nothing that was
/// not deleted already. Readers at older snapshots do not see it (its sequence number is
/// above theirs) and keep the point tombstones, which garbage collection retains exactly
/// when such a snapshot exists.
pub struct TombstoneCoalescing<'a> {
    /// The shortest run worth a range tombstone (at least 2).
    pub min_run: usize,
    /// `verify(first, last, run)`: true when no live key of the older data lies in
    /// `[first, last]` except keys of `run` (sorted ascending).
    pub verify: RunCheck<'a>,
}

/// The runs of [`TombstoneCoalescing`] in `mem`: sorted user keys whose newest version is a
/// delete, consecutive in the memtable, at least `min_run` long.
fn tombstone_runs(mem: &Arc<Memtable>, min_run: usize) -> Result<Vec<Vec<Vec<u8>>>> {
    use riptide_common::InternalIterator;
    use riptide_common::ValueKind;
    use riptide_common::key::parse_internal_key;
    let mut runs = Vec::new();
    // A memtable with fewer deletes than one run holds no run: skip the pass.
    if mem.delete_count() < min_run as u64 {
        return Ok(runs);
    }
    let mut current: Vec<Vec<u8>> = Vec::new();
    // The user key of the previous entry (one buffer for the whole pass).
    let mut last_key: Vec<u8> = Vec::new();
    let mut first = true;
    let mut it = mem.iter();
    it.seek_to_first()?;
    while it.valid() {
        let ikey = parse_internal_key(it.key())?;
        if first || last_key != ikey.user_key {
            // The first entry of a user key is its newest version.
            first = false;
            last_key.clear();
            last_key.extend_from_slice(ikey.user_key);
            match ikey.kind {
                ValueKind::Delete | ValueKind::SingleDelete => {
                    current.push(ikey.user_key.to_vec());
                }
                ValueKind::Put | ValueKind::RangeDelete => {
                    if current.len() >= min_run {
                        runs.push(std::mem::take(&mut current));
                    } else {
                        current.clear();
                    }
                }
            }
        }
        it.next()?;
    }
    if current.len() >= min_run {
        runs.push(current);
    }
    Ok(runs)
}

/// [`flush_memtable`] into the files of `output` (in key order; empty if nothing is left to
/// write), and with `coalesce` given, runs of point tombstones also become range tombstones
/// (see [`TombstoneCoalescing`]).
pub fn flush_memtable_coalescing(
    mem: &Arc<Memtable>,
    dir: &Path,
    output: FlushOutput<'_>,
    table_opts: &TableOptions,
    cache: Option<Arc<BlockCache>>,
    snapshots: &[SeqNo],
    coalesce: Option<&TombstoneCoalescing<'_>>,
) -> Result<Vec<Arc<TableHandle>>> {
    if mem.is_empty() {
        return Ok(Vec::new());
    }
    let snapshots = crate::compact::sorted(snapshots);
    let mut tombstones = mem.range_tombstones();
    if let (Some(c), Some(seqno)) = (coalesce, mem.max_seqno()) {
        for run in tombstone_runs(mem, c.min_run.max(2))? {
            let (Some(first), Some(last)) = (run.first(), run.last()) else {
                continue;
            };
            if (c.verify)(first, last, &run)? {
                let end = riptide_common::key::user_key_successor(last);
                tombstones.push(RangeTombstone::new(first.clone(), end, seqno));
            }
        }
    }
    let mut range_dels = RangeDelAggregator::new(tombstones, &snapshots);
    let FlushOutput {
        fs,
        next_number,
        max_file_size,
    } = output;
    let mut out = OutputTables::new(fs, dir, table_opts, cache, next_number, max_file_size)
        .with_range_tombstones(&range_dels.output_tombstones(false), None, None);
    let mut it = mem.iter();
    copy_with_gc_and_range_dels(&mut it, &snapshots, false, &mut range_dels, |k, v| {
        out.add(k, v)
    })?;
    let (files, _) = out.finish()?;
    Ok(files)
}
