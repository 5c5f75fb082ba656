//! Flush: writing a memtable out as a new L0 table.

use std::path::Path;
use std::sync::Arc;

use riptide_common::{Result, SeqNo};
use riptide_memtable::Memtable;
use riptide_sstable::{BlockCache, TableOptions};

use crate::gc::{RangeDelAggregator, copy_with_gc_and_range_dels};
use crate::output::OutputTables;
use crate::table_handle::TableHandle;

/// Writes `mem` as table `number` in `dir` and opens it. `None` if nothing is left to write
/// (an empty memtable, or one whose single deletes all cancelled their puts).
///
/// Versions no snapshot can tell apart are dropped (see [`crate::gc`]), and so are versions
/// that a range tombstone of the memtable deletes in their snapshot stripe; tombstones (point
/// and range) are kept, since older data may be below. The range tombstones go to the table's
/// range-deletion block (fragmented per stripe): a memtable holding only range tombstones
/// still makes a table. `snapshots` are sorted here. The file and the directory are fsynced;
/// the caller then records the file with a version edit.
pub fn flush_memtable(
    mem: &Arc<Memtable>,
    dir: &Path,
    number: u64,
    table_opts: &TableOptions,
    cache: Option<Arc<BlockCache>>,
    snapshots: &[SeqNo],
) -> Result<Option<Arc<TableHandle>>> {
    if mem.is_empty() {
        return Ok(None);
    }
    let snapshots = crate::compact::sorted(snapshots);
    let mut range_dels = RangeDelAggregator::new(mem.range_tombstones(), &snapshots);
    let mut numbers = std::iter::once(number);
    let mut out = OutputTables::new(
        dir,
        table_opts,
        cache,
        || numbers.next().unwrap_or(number),
        u64::MAX,
    )
    .with_range_tombstones(&range_dels.output_tombstones(false), None, None);
    let mut it = mem.iter();
    copy_with_gc_and_range_dels(&mut it, &snapshots, false, &mut range_dels, |k, v| {
        out.add(k, v)
    })?;
    let (mut files, _) = out.finish()?;
    Ok(files.pop())
}
