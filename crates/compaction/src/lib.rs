//! Version set, manifest, flush and compaction of the Riptide storage engine.
//!
//! * [`file_meta`]: what is recorded about a table file.
//! * [`edit`]: the persisted state ([`ManifestState`]) and its changes ([`VersionEdit`]).
//! * [`manifest`]: the MANIFEST file, replaced atomically (byte format in `FORMAT.md`).
//! * [`table_handle`]: an open table shared by versions, deleted once obsolete and unused.
//! * [`version`]: immutable [`Version`]s and the [`VersionSet`] that installs edits.
//! * [`gc`]: which versions a flush or compaction may drop.
//! * [`flush`]: memtable to L0 table.
//! * [`compact`](mod@compact): merging tables; [`pick`]: choosing inputs (L0 into L1 for now).

pub mod compact;
pub mod edit;
pub mod file_meta;
pub mod flush;
pub mod fsutil;
pub mod gc;
pub mod manifest;
mod output;
pub mod pick;
pub mod table_handle;
pub mod version;

pub use compact::{CompactionOptions, CompactionOutput, CompactionStats, compact};
pub use edit::{CfState, ManifestState, VersionEdit};
pub use file_meta::{FileMeta, table_file_name, table_file_path};
pub use flush::flush_memtable;
pub use gc::{GcStats, copy_with_gc};
pub use manifest::manifest_path;
pub use pick::{compaction_edits, l1_is_bottommost, pick_l0_compaction};
pub use table_handle::{HandleIterator, TableHandle};
pub use version::{CfVersion, Version, VersionSet};
