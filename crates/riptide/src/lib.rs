//! Riptide: an LSM-tree storage engine for write-heavy workloads.
//!
//! Open a [`Db`] on a directory, write with [`Db::put`] / [`Db::delete`] /
//! [`Db::write`] (atomic [`WriteBatch`]es, also across column families), read with
//! [`Db::get`], iterate with [`Db::iter`], pin a consistent view with [`Db::snapshot`].
//! Every write goes to a write-ahead log first (group-committed, fsynced per
//! [`SyncMode`]), then to an in-memory table; full memtables are flushed to sorted table
//! files in the background and merged by compaction.
//!
//! ```
//! use riptide::{Db, Options, ReadOptions, WriteBatch};
//!
//! # fn main() -> riptide::Result<()> {
//! let dir = tempfile::tempdir().unwrap();
//! let db = Db::open(dir.path(), Options::default())?;
//!
//! let mut batch = WriteBatch::new();
//! batch.put(b"apple", b"red").put(b"banana", b"yellow").delete(b"cherry");
//! db.write(batch)?;
//!
//! let before = db.snapshot();
//! db.put(b"apple", b"green")?;
//! assert_eq!(db.get(b"apple")?.as_deref(), Some(&b"green"[..]));
//! assert_eq!(
//!     db.get_cf_opt(&db.default_cf(), b"apple", &ReadOptions::default().snapshot(&before))?,
//!     Some(b"red".to_vec())
//! );
//!
//! let mut it = db.iter(ReadOptions::default())?;
//! it.seek_to_first()?;
//! let mut keys = Vec::new();
//! while it.valid() {
//!     keys.push(it.key().to_vec());
//!     it.next()?;
//! }
//! assert_eq!(keys, vec![b"apple".to_vec(), b"banana".to_vec()]);
//! db.close()?;
//! # Ok(()) }
//! ```

mod background;
mod batch;
mod cf;
mod checkpoint;
mod db;
mod delete_files;
mod ingest;
mod iterator;
#[cfg(test)]
mod iterator_refresh_tests;
pub mod jobs;
mod lock;
mod option_table;
mod options;
mod read_point;
mod recovery;
mod snapshot;
pub mod sort;
mod stats;
pub mod transaction;
mod write_controller;

pub use batch::WriteBatch;
pub use cf::{ColumnFamily, KeyVersion};
pub use checkpoint::CheckpointInfo;
pub use db::{DEFAULT_CF_NAME, Db, MAX_KEY_VALUE_LEN};
pub use delete_files::{DeletedFiles, OlderSnapshots};
pub use ingest::{IngestWriter, Ingested};
pub use iterator::DbIterator;
pub use option_table::{DYNAMIC_OPTIONS, OptionSpec, OptionType, OptionValue};
pub use options::{Compression, Options, ReadOptions, RecoveryMode, SyncMode};
/// The file-system seam ([`Options::file_system`]): the traits a file system implements and
/// the real one.
pub use riptide_common::fs;
pub use riptide_common::{Error, ErrorKind, Result, SeqNo, ValueKind};
pub use riptide_compaction::CompactionPriority;
/// Bytes of memtable memory mapped now in this process, every open database together
/// (memtables map their memory from the kernel, outside the allocator's statistics).
pub use riptide_memtable::mapped_bytes as memtable_mapped_bytes;
pub use riptide_sstable::EntryEstimate;
pub use riptide_txn::{LockManagerStats, Xid};
pub use snapshot::Snapshot;

/// What [`Db::set_lock_wait_listener`] calls: `listener(waiter, blockers)`, with the owners
/// ([`Transaction::set_owner`]) of a transaction about to wait for a lock and of the
/// transactions it waits for.
pub type LockWaitListener = std::sync::Arc<dyn Fn(u64, &[u64]) + Send + Sync>;

/// The names of the engine's crash-test kill points (effective only with the `kill-points`
/// feature; see `riptide_common::kill_point`).
pub fn kill_points() -> &'static [&'static str] {
    riptide_common::kill_point::POINTS
}
pub use jobs::{JobInfo, JobKind, JobState};
pub use riptide_txn::{LockInfo, LockKind, LockMode, LockTable};
pub use stats::{LevelStats, StatKind, StatSpec, StatValue, Statistics};
pub use transaction::{
    Concurrency, InterruptHandle, IsolationLevel, LockedRead, Transaction, TransactionInfo,
    TransactionOptions, TransactionState, TxnIterator,
};

/// The README's example, compiled and run as a doc test so it cannot rot.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
