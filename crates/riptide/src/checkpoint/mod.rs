//! [`Db::create_checkpoint`](crate::Db::create_checkpoint): a consistent copy of an open
//! database in a new directory, taken while it keeps working (RocksDB's `Checkpoint`, what
//! MyRocks' `rocksdb_create_checkpoint` makes). Open the directory with
//! [`Db::open`](crate::Db::open) to get the database as it was at one sequence number.
//!
//! How (details in `docs/ENGINE.md`, "Checkpoints"):
//!
//! 1. [`staging`]: the target is checked and a staging directory made beside it.
//! 2. [`cut`]: with writers held off for a moment, the last sequence number, the end of the
//!    WAL's records and the version are captured; the version keeps its table files on disk
//!    and a pin keeps the WAL segments from the cut's log number on.
//! 3. Every table file of the version is hard-linked (copied when it cannot be), the WAL
//!    segments are copied, the current one only up to the cut, and a manifest describing
//!    exactly the version is written. Nothing holds the writers off meanwhile.
//! 4. The staging directory is synced and renamed to the target, and the parent synced.

mod cut;
mod staging;

use std::path::Path;
use std::time::{Duration, Instant};

use riptide_common::{Result, ResultExt, SeqNo};
use riptide_compaction::manifest::{MANIFEST_FILE_NAME, encode_state};
use riptide_compaction::{table_file_name, table_file_path};
use riptide_wal::segment_file_name;

pub(crate) use cut::WalPins;
use staging::{Placed, Staging};

use crate::db::DbInner;

/// What [`Db::create_checkpoint`](crate::Db::create_checkpoint) made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointInfo {
    /// The sequence number the checkpoint holds the database at: every write (and committed
    /// transaction) published at or below it is in it, none above it. A database opened on
    /// the checkpoint starts with it as its [`latest_seqno`](crate::Db::latest_seqno).
    pub seqno: SeqNo,
    /// Table files hard-linked into the checkpoint (no byte copied).
    pub tables_linked: u64,
    /// Table files copied because the file system could not link them there (the
    /// checkpoint is on another file system).
    pub tables_copied: u64,
    /// WAL segments copied (the last one up to the checkpoint's sequence number).
    pub wal_segments: u64,
    /// Bytes of the linked table files.
    pub bytes_linked: u64,
    /// Bytes written by copying: the WAL segments, the manifest and any table file that
    /// could not be linked.
    pub bytes_copied: u64,
    /// How long writers were held off while the sequence number, the WAL's end and the
    /// version were captured (reads are never held off).
    pub writer_stall: Duration,
    /// How long the whole call took.
    pub total: Duration,
}

#[cfg(test)]
thread_local! {
    /// Test hook: runs (once, then is cleared) on this thread right after the cut is
    /// captured and the locks are released, before any file is linked or copied.
    static AFTER_CUT: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        std::cell::RefCell::new(None);
}

/// Runs the test hook, if any; nothing outside tests.
#[inline(always)]
fn after_cut() {
    #[cfg(test)]
    if let Some(hook) = AFTER_CUT.with(|h| h.borrow_mut().take()) {
        hook();
    }
}

/// Makes a checkpoint of `db` in the new directory `target` (see the module doc). Errors
/// name the target, the file and the step; on error nothing is left at `target` and the
/// staging directory is removed.
pub(crate) fn create(db: &DbInner, target: &Path) -> Result<CheckpointInfo> {
    let started = Instant::now();
    let made = (|| {
        db.check_open()?;
        let fs = db.options().file_system.clone();
        let staging = Staging::create(&*fs, target)?;
        let (cut, wal_pin) = cut::capture(db)?;
        after_cut();
        let mut info = CheckpointInfo {
            seqno: cut.seqno,
            writer_stall: cut.stall,
            ..CheckpointInfo::default()
        };
        let manifest = encode_state(&cut.manifest_state()?);

        for table in cut.version.all_files() {
            let number = table.number();
            let name = table_file_name(number);
            let from = table_file_path(&db.path, number);
            match staging
                .link_or_copy(&from, &name)
                .context_with(|| format!("table {name}"))?
            {
                Placed::Linked => {
                    info.tables_linked += 1;
                    info.bytes_linked += table.meta.file_size;
                }
                Placed::Copied(bytes) => {
                    info.tables_copied += 1;
                    info.bytes_copied += bytes;
                }
            }
        }
        // The links exist: compaction may delete the source's names now.
        let cut::Cut {
            version,
            wal_end,
            min_log,
            ..
        } = cut;
        drop(version);

        for segment in min_log..=wal_end.segment {
            let name = segment_file_name(segment);
            // Sealed segments end at their last record; the current one goes up to the cut.
            let len = (segment == wal_end.segment).then_some(wal_end.offset);
            info.bytes_copied += staging
                .copy(&db.path.join(&name), &name, len)
                .context_with(|| format!("WAL segment {name}"))?;
            info.wal_segments += 1;
        }
        drop(wal_pin);

        staging
            .write(MANIFEST_FILE_NAME, &manifest)
            .context_with(|| format!("manifest {MANIFEST_FILE_NAME}"))?;
        info.bytes_copied += manifest.len() as u64;
        staging.publish()?;
        info.total = started.elapsed();
        Ok(info)
    })();
    match &made {
        Ok(info) => log::info!(
            "checkpoint {} of {} at seqno {}: {} tables linked ({} bytes), {} copied, {} WAL \
             segments, {} bytes copied; writers held off {:?}, {:?} in all",
            target.display(),
            db.path.display(),
            info.seqno,
            info.tables_linked,
            info.bytes_linked,
            info.tables_copied,
            info.wal_segments,
            info.bytes_copied,
            info.writer_stall,
            info.total
        ),
        Err(e) => log::warn!("checkpoint {} failed: {e}", target.display()),
    }
    made.context_with(|| format!("checkpoint {}", target.display()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::sync::Arc;

    use super::AFTER_CUT;
    use crate::{Db, Options, ReadOptions, SyncMode};

    /// Runs `hook` right after the next cut this thread captures.
    fn after_next_cut(hook: impl FnOnce() + 'static) {
        AFTER_CUT.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
    }

    fn keys(db: &Db) -> Vec<Vec<u8>> {
        let mut it = db.iter(ReadOptions::default()).unwrap();
        it.seek_to_first().unwrap();
        let mut out = Vec::new();
        while it.valid() {
            out.push(it.key().to_vec());
            it.next().unwrap();
        }
        out
    }

    /// Between the cut and the copies, the source writes more (into the segment the cut
    /// ends in, then into new ones), flushes (which removes the WAL segments below its new
    /// log number) and compacts everything (which deletes the cut's table files once
    /// unused). The checkpoint still holds exactly the cut: every write before it, none
    /// after, its WAL cut at the record boundary of the cut's sequence number.
    #[test]
    fn the_checkpoint_holds_the_cut_whatever_the_source_does_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default()
            .sync_mode(SyncMode::None)
            .write_buffer_size(32 << 10);
        let db = Arc::new(Db::open(dir.path().join("db"), opts.clone()).unwrap());
        for i in 0..300u32 {
            db.put(format!("before{i:04}").as_bytes(), &[7u8; 100])
                .unwrap();
        }
        db.flush().unwrap();
        // Some only in the memtable (and the current WAL segment).
        for i in 0..50u32 {
            db.put(format!("memtable{i:04}").as_bytes(), b"v").unwrap();
        }
        let at_cut = db.latest_seqno();
        let tables_before: Vec<_> = std::fs::read_dir(dir.path().join("db"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".sst"))
            .collect();
        assert!(!tables_before.is_empty());

        let writer = Arc::clone(&db);
        after_next_cut(move || {
            for i in 0..300u32 {
                writer
                    .put(format!("after{i:04}").as_bytes(), &[9u8; 100])
                    .unwrap();
            }
            writer.flush().unwrap();
            writer.compact_range(&writer.default_cf(), None).unwrap();
        });
        let target = dir.path().join("ckpt");
        let info = db.create_checkpoint(&target).unwrap();
        assert_eq!(info.seqno, at_cut);
        // The compaction did delete the cut's tables from the source: the links kept them.
        let source = dir.path().join("db");
        assert!(
            tables_before.iter().any(|n| !source.join(n).exists()),
            "the compaction deleted no table of the cut; the test proves nothing"
        );

        let ck = Db::open(&target, opts).unwrap();
        assert_eq!(ck.latest_seqno(), at_cut);
        let found = keys(&ck);
        assert_eq!(found.len(), 350);
        assert!(found.iter().all(|k| !k.starts_with(b"after")));
        assert_eq!(ck.get(b"memtable0049").unwrap(), Some(b"v".to_vec()));
        assert_eq!(ck.get(b"before0000").unwrap(), Some(vec![7u8; 100]));
        assert_eq!(db.get(b"after0299").unwrap(), Some(vec![9u8; 100]));
    }
}
