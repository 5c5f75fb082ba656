//! Removing whole table files whose every entry a range delete already deleted
//! ([`crate::Db::delete_files_in_range`], RocksDB's `DeleteFilesInRange`, which MyRocks calls
//! when a table or an index is dropped).
//!
//! A range delete makes its keys unreadable at once, but their bytes stay on disk until
//! compaction merges the tombstone down through every level that holds them. A dropped
//! table (and a table an `ALTER TABLE` copied) keeps its whole size that way, and with
//! dynamic level sizes the last level is only rewritten when the level above overflows into
//! it, so the space can stay taken for as long as the database lives. A file whose user keys
//! all lie inside the deleted range, and all of whose versions are older than the range
//! delete, holds nothing a reader at or after the delete can see: it can leave the version
//! without being read.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use riptide_common::range_del::RangeTombstoneSet;
use riptide_common::{CfId, Result, SeqNo};
use riptide_compaction::{TableHandle, VersionEdit};

use crate::background::refresh_pending_compaction_bytes;
use crate::cf::CfData;
use crate::db::DbInner;
use crate::stats::Counters;

/// What [`crate::Db::delete_files_in_range`] does about live snapshots older than the range
/// delete that covers a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OlderSnapshots {
    /// Keep every file such a snapshot may still read (the safe choice for any caller): a
    /// snapshot taken before the range delete still sees the range as it was.
    Keep,
    /// Delete the files anyway: the caller guarantees that no snapshot reads the range again
    /// (a dropped table's index ids, which MariaDB's metadata locks keep every session away
    /// from). A read of the range at such a snapshot would see only what is left of it.
    Ignore,
}

/// What [`crate::Db::delete_files_in_range`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeletedFiles {
    /// Table files removed from the column family's current version.
    pub files: u64,
    /// Their total size in bytes.
    pub bytes: u64,
}

/// A file chosen for deletion: its level and handle.
pub(crate) type Chosen = (usize, Arc<TableHandle>);

/// The files of `levels` to delete for the range `[start, end)`: every file whose user keys
/// all lie in the range, that holds no range tombstone (its own tombstones may cover keys
/// of other files), that no running compaction uses (`busy`), and whose every version is
/// older than the tombstones of `tombstones` covering its whole key range. Under
/// [`OlderSnapshots::Keep`] a file is also kept when a live snapshot in `snapshots` lies
/// between its oldest version and those tombstones: that snapshot can still read it.
pub(crate) fn choose(
    levels: &[Vec<Arc<TableHandle>>],
    start: &[u8],
    end: &[u8],
    tombstones: &RangeTombstoneSet,
    snapshots: &[SeqNo],
    older: OlderSnapshots,
    busy: impl Fn(u64) -> bool,
) -> Vec<Chosen> {
    let mut chosen = Vec::new();
    for (level, files) in levels.iter().enumerate() {
        for f in files {
            let meta = &f.meta;
            let inside = meta.smallest_user_key() >= start && meta.ends_before(end);
            if !inside || f.has_range_tombstones() || busy(f.number()) {
                continue;
            }
            let Some(deleted_at) = covering_seqno(
                tombstones,
                meta.smallest_user_key(),
                meta.largest_user_key(),
            ) else {
                continue;
            };
            if deleted_at <= meta.max_seqno {
                continue;
            }
            let seen_by_older = snapshots
                .iter()
                .any(|&s| s >= meta.min_seqno && s < deleted_at);
            if older == OlderSnapshots::Keep && seen_by_older {
                continue;
            }
            chosen.push((level, Arc::clone(f)));
        }
    }
    chosen
}

/// The smallest seqno of the fragments of `set` that together cover every user key from
/// `smallest` to `largest` (inclusive), or `None` when some key of it is not covered.
fn covering_seqno(set: &RangeTombstoneSet, smallest: &[u8], largest: &[u8]) -> Option<SeqNo> {
    let fragments = set.fragments();
    let first = fragments.partition_point(|f| f.end.as_slice() <= smallest);
    let mut reached: &[u8] = smallest;
    let mut seqno = SeqNo::MAX;
    for f in fragments.get(first..)? {
        if f.start.as_slice() > reached {
            return None;
        }
        seqno = seqno.min(f.seqno);
        if f.end.as_slice() > largest {
            return Some(seqno);
        }
        reached = f.end.as_slice();
    }
    None
}

/// The version edits that remove `chosen` from column family `cf`.
pub(crate) fn edits(cf: CfId, chosen: &[Chosen]) -> Vec<VersionEdit> {
    chosen
        .iter()
        .map(|(level, f)| VersionEdit::DeleteFile {
            cf,
            level: *level,
            number: f.number(),
        })
        .collect()
}

/// The count and bytes of `chosen`.
pub(crate) fn tally(chosen: &[Chosen]) -> DeletedFiles {
    DeletedFiles {
        files: chosen.len() as u64,
        bytes: chosen.iter().map(|(_, f)| f.meta.file_size).sum(),
    }
}

/// Removes from `cf`'s current version every file [`choose`] picks for `[start, end)`; see
/// [`crate::Db::delete_files_in_range`]. The version-set lock is held from the choice to the
/// install, so no compaction picks a chosen file in between (compactions pick under it).
pub(crate) fn run(
    db: &DbInner,
    cf: &CfData,
    start: &[u8],
    end: &[u8],
    older: OlderSnapshots,
) -> Result<DeletedFiles> {
    let mut vs = db.versions.lock();
    let view = cf.view();
    // Only published writes: every one of them is in the WAL, which the sync below makes
    // durable before the manifest forgets the files their range deletes cover.
    let published = db.last_seqno.load(Ordering::Acquire);
    let Some(tombstones) = view.range_tombstone_set(published)? else {
        return Ok(DeletedFiles::default());
    };
    let snapshots = db.snapshots.seqnos();
    let chosen = choose(
        view.levels(),
        start,
        end,
        &tombstones,
        &snapshots,
        older,
        |n| db.registry.is_being_compacted(n),
    );
    if chosen.is_empty() {
        return Ok(DeletedFiles::default());
    }
    db.wal.sync()?;
    let version = vs.apply_with_tables(edits(cf.id, &chosen), &[])?;
    db.install_version(&version);
    refresh_pending_compaction_bytes(db, &version);
    let deleted = tally(&chosen);
    Counters::add(&db.counters.range_files_deleted, deleted.files);
    Counters::add(&db.counters.range_file_bytes_deleted, deleted.bytes);
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use riptide_common::range_del::RangeTombstone;

    use super::*;

    fn set(ts: &[(&str, &str, SeqNo)]) -> RangeTombstoneSet {
        RangeTombstoneSet::new(
            ts.iter()
                .map(|(s, e, q)| RangeTombstone::new(s.as_bytes(), e.as_bytes(), *q)),
            SeqNo::MAX >> 8,
        )
    }

    #[test]
    fn a_range_is_covered_only_without_gaps() {
        let s = set(&[("a", "f", 10), ("f", "m", 7), ("p", "z", 9)]);
        assert_eq!(covering_seqno(&s, b"b", b"e"), Some(10));
        assert_eq!(covering_seqno(&s, b"b", b"g"), Some(7));
        assert_eq!(covering_seqno(&s, b"k", b"p"), None, "gap [m, p)");
        assert_eq!(covering_seqno(&s, b"q", b"y"), Some(9));
        assert_eq!(
            covering_seqno(&s, b"q", b"z"),
            None,
            "z is the exclusive end"
        );
        assert_eq!(
            covering_seqno(&s, b"0", b"b"),
            None,
            "starts before the tombstones"
        );
        assert_eq!(covering_seqno(&set(&[]), b"a", b"b"), None);
    }
}
