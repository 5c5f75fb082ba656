//! Version set, manifest, flush and leveled compaction of the Riptide storage engine.
//!
//! * [`file_meta`]: what is recorded about a table file.
//! * [`edit`]: the persisted state ([`ManifestState`]) and its changes ([`VersionEdit`]).
//! * [`manifest`]: the MANIFEST file, replaced atomically (byte format in `FORMAT.md`).
//! * [`table_handle`]: an open table shared by versions, deleted once obsolete and unused.
//! * [`level_iter`]: one cursor over a level's sorted run of tables ([`LevelIterator`]).
//! * [`version`]: immutable [`Version`]s and the [`VersionSet`] that installs edits.
//! * [`gc`]: which versions a flush or compaction may drop.
//! * [`flush`]: memtable to L0 table.
//! * Leveled compaction (RocksDB-style):
//!   * [`options`]: [`LevelOptions`], the shape of the tree;
//!   * [`targets`]: the target size of each level and the base level ([`level_targets`]);
//!   * [`picker`]: scoring levels and picking a [`CompactionJob`] ([`pick_compaction`]);
//!   * [`manual`]: `compact_range`, level by level ([`ManualCompaction`]);
//!   * [`registry`]: running jobs, so several threads compact disjoint ranges at once
//!     ([`CompactionRegistry`]);
//!   * [`job`]: a picked compaction and the version edits installing it;
//!   * [`run`](mod@run): running a job in parallel subcompactions ([`run_compaction`]);
//!   * [`compact`](mod@compact): the merge itself and its statistics.
//!   * [`pick`]: the older L0-into-L1 picker and [`compaction_edits`].
//!
//! # Driving compactions
//!
//! Each compaction thread loops:
//!
//! 1. **pick**: under the version-set lock, `pick_compaction(&vs.current(), cf, &level_opts,
//!    &registry)` (or [`ManualCompaction::next_job`]). The job is registered: its inputs are
//!    busy and its output range reserved until step 5. `None`: nothing is due.
//! 2. **run**: without any lock, `run_compaction(&job, &opts, alloc_number,
//!    max_subcompactions)`.
//! 3. **edits**: `job.edits(&output)`.
//! 4. **apply**: under the version-set lock, `vs.apply_with_tables(edits, &output.new_files)`.
//! 5. **finish**: still under that lock, `registry.finish_with_output(&job, &output)` (or
//!    `registry.finish(&job)` if step 2 or 4 failed). Then pick again: finishing a job may
//!    make another one possible.

pub mod compact;
pub mod edit;
pub mod file_meta;
pub mod flush;
pub mod fsutil;
pub mod gc;
pub mod job;
pub mod level_iter;
pub mod manifest;
pub mod manual;
pub mod options;
mod output;
pub mod pick;
pub mod picker;
pub mod progressive;
mod range_iter;
pub mod registry;
pub mod run;
pub mod table_handle;
pub mod targets;
pub mod untouched;
pub mod version;

pub use compact::{CompactionOptions, CompactionOutput, CompactionStats, compact};
pub use edit::{CfState, ManifestState, VersionEdit};
pub use file_meta::{FileMeta, table_file_name, table_file_path};
pub use flush::{FlushOutput, TombstoneCoalescing, flush_memtable, flush_memtable_coalescing};
pub use gc::{GcStats, RangeDelAggregator, copy_with_gc, copy_with_gc_and_range_dels};
pub use job::{CompactionJob, CompactionReason, is_bottommost};
pub use level_iter::LevelIterator;
pub use manifest::manifest_path;
pub use manual::{ManualCompaction, ManualStep};
pub use options::{CompactionPriority, LevelOptions, MIN_YOUNG_FILE_SIZE, YOUNG_TREE_FILES};
pub use pick::{compaction_edits, l1_is_bottommost, pick_l0_compaction};
pub use picker::{compaction_scores, pick_compaction};
pub use progressive::{progressive_cuts, run_compaction_progressive};
pub use registry::CompactionRegistry;
pub use run::{run_compaction, subcompaction_boundaries};
pub use table_handle::{HandleIterator, TableHandle};
pub use targets::{LevelTargets, level_targets, level_targets_from_sizes};
pub use untouched::KeptRange;
pub use version::{CfVersion, Version, VersionSet};
