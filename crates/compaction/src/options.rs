//! [`LevelOptions`]: the shape of the level tree and when compactions are due.

/// One MiB.
const MIB: u64 = 1 << 20;

/// A column family's tables are written in files of at most 1/this of its size (see
/// [`LevelOptions::output_file_size`]).
pub const YOUNG_TREE_FILES: u64 = 32;

/// The smallest file size [`LevelOptions::output_file_size`] picks for a young tree (a
/// smaller [`LevelOptions::target_file_size_base`] still wins).
pub const MIN_YOUNG_FILE_SIZE: u64 = 2 * MIB;

/// Which file of a level a size-triggered compaction starts from (RocksDB `compaction_pri`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionPriority {
    /// The file whose overlapping bytes in the next level are fewest for its own size (its
    /// tombstones counted twice, so files full of deletes go first): the merge that
    /// rewrites the fewest bytes of the level below per byte it moves down (RocksDB
    /// `kMinOverlappingRatio`, its default). Files whose keys fall in gaps of the level
    /// below (appends at the end of a key range, as TPC-C's orders per district) move down
    /// without rewriting anything.
    #[default]
    MinOverlappingRatio,
    /// The files in key order, one after another, from a cursor kept per level (and in the
    /// manifest) (RocksDB `kRoundRobin`): every key range is merged in turn, whatever it
    /// costs.
    RoundRobin,
}

/// How leveled compaction shapes the tree of levels (RocksDB's level-style options; each
/// field names its RocksDB equivalent).
#[derive(Debug, Clone, PartialEq)]
pub struct LevelOptions {
    /// Number of levels, L0 included (RocksDB `num_levels`). At least 2 is used.
    pub num_levels: usize,
    /// L0 is compacted once it has this many files (RocksDB `level0_file_num_compaction_trigger`).
    pub l0_compaction_trigger: usize,
    /// L0 is also compacted once its bytes reach this fraction of the bytes in all deeper
    /// levels together (0 disables; no RocksDB equivalent; default 0.25). It matters only
    /// while the database is small next to its write buffer: a compaction keeps its L0
    /// inputs on disk until it ends, so with four 64 MiB L0 files on a 220 MiB database the
    /// disk briefly held twice the live data. With L0 (`a`) at most a quarter of the data
    /// below it (`b`), that transient, `(2a + b) / (a + b)`, is at most 1.2x of the tables
    /// (computed; the sustained benchmark measured 1.43-1.47x of live data in all, WAL and
    /// format overhead included). Once the deeper levels hold more
    /// than `l0_compaction_trigger` files' worth / this fraction, the file-count trigger
    /// fires first and this one never does. See `docs/ENGINE.md`, "A young database".
    pub l0_fraction_trigger: f64,
    /// Target size of the base level (RocksDB `max_bytes_for_level_base`). With
    /// [`Self::dynamic_level_bytes`] it is the upper bound of the base level's target; it is
    /// also the size at which L0 is compacted even below its file-count trigger.
    pub max_bytes_for_level_base: u64,
    /// Each level is this many times larger than the one above
    /// (RocksDB `max_bytes_for_level_multiplier`).
    pub level_size_ratio: f64,
    /// Size levels from the bottom up (RocksDB `level_compaction_dynamic_level_bytes`): the
    /// last level's target is its actual size and L0 compacts into the first level that is
    /// worth using (the *base level*). See [`crate::targets`].
    pub dynamic_level_bytes: bool,
    /// Target size of the files written to the base level (RocksDB `target_file_size_base`).
    pub target_file_size_base: u64,
    /// Each level below the base level writes files this many times larger than the one above
    /// (RocksDB `target_file_size_multiplier`).
    pub target_file_size_multiplier: f64,
    /// A file whose tombstones make up at least this fraction of its entries is compacted
    /// when nothing is due by size (like RocksDB's `CompactOnDeletionCollector` deletion
    /// ratio). 0 disables tombstone-density compactions.
    pub tombstone_ratio_trigger: f64,
    /// Files with fewer entries are never picked for their tombstone density (the window
    /// size of RocksDB's `CompactOnDeletionCollector`, roughly).
    pub tombstone_min_entries: u64,
    /// Upper bound on the bytes of a compaction when its inputs are grown beyond the one
    /// file picked (RocksDB `max_compaction_bytes`). A single picked file and the files it
    /// must take along are compacted even when they exceed it.
    pub max_compaction_bytes: u64,
    /// Which file of a level a size-triggered compaction starts from (RocksDB
    /// `compaction_pri`).
    pub priority: CompactionPriority,
}

impl Default for LevelOptions {
    fn default() -> Self {
        let target_file_size_base = 64 * MIB;
        LevelOptions {
            num_levels: 7,
            l0_compaction_trigger: 4,
            l0_fraction_trigger: 0.25,
            max_bytes_for_level_base: 256 * MIB,
            level_size_ratio: 10.0,
            dynamic_level_bytes: true,
            target_file_size_base,
            target_file_size_multiplier: 1.0,
            tombstone_ratio_trigger: 0.5,
            tombstone_min_entries: 10_000,
            max_compaction_bytes: 25 * target_file_size_base,
            priority: CompactionPriority::default(),
        }
    }
}

impl LevelOptions {
    /// The number of levels used: [`Self::num_levels`], at least 2.
    pub fn levels(&self) -> usize {
        self.num_levels.max(2)
    }

    /// The ratio between levels, at least 1 (a smaller or invalid value is taken as 1).
    pub fn ratio(&self) -> f64 {
        if self.level_size_ratio.is_finite() && self.level_size_ratio >= 1.0 {
            self.level_size_ratio
        } else {
            1.0
        }
    }

    /// The size of the files a compaction into `output_level` writes when L0 compacts into
    /// `base_level`: [`Self::target_file_size_base`] at the base level (and above), times
    /// [`Self::target_file_size_multiplier`] for every level below it. At least 1.
    pub fn target_file_size(&self, output_level: usize, base_level: usize) -> u64 {
        let steps = output_level.saturating_sub(base_level.max(1));
        let mult = if self.target_file_size_multiplier.is_finite()
            && self.target_file_size_multiplier > 0.0
        {
            self.target_file_size_multiplier
        } else {
            1.0
        };
        let exp = i32::try_from(steps).unwrap_or(i32::MAX);
        let size = self.target_file_size_base as f64 * mult.powi(exp);
        // `as` saturates for floats: huge values become u64::MAX.
        (size as u64).max(1)
    }

    /// The size of the files a compaction into `output_level` writes in a column family
    /// holding `cf_bytes` of tables: [`Self::target_file_size`], but no more than
    /// 1/[`YOUNG_TREE_FILES`] of the column family (and no less than
    /// [`MIN_YOUNG_FILE_SIZE`]).
    ///
    /// Why: a progressive compaction (`crate::progressive`) frees the output level's old
    /// files one slice of files at a time. In a young database whose whole last level is
    /// one or two 64 MiB files, a slice would be the whole level, and the disk would hold
    /// it twice until the job ended. Small files while the tree is small keep slices small;
    /// as the tree grows, compactions rewrite them at the full target size.
    pub fn output_file_size(&self, output_level: usize, base_level: usize, cf_bytes: u64) -> u64 {
        let young = (cf_bytes / YOUNG_TREE_FILES).max(MIN_YOUNG_FILE_SIZE);
        self.target_file_size(output_level, base_level).min(young)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_file_size_grows_below_the_base_level() {
        let o = LevelOptions {
            target_file_size_base: 100,
            target_file_size_multiplier: 2.0,
            ..LevelOptions::default()
        };
        assert_eq!(o.target_file_size(1, 1), 100);
        assert_eq!(o.target_file_size(3, 1), 400);
        assert_eq!(o.target_file_size(5, 5), 100);
        assert_eq!(o.target_file_size(6, 5), 200);
        assert_eq!(o.target_file_size(0, 3), 100);
        assert_eq!(LevelOptions::default().max_compaction_bytes, 25 * 64 * MIB);
    }

    #[test]
    fn young_trees_write_smaller_files() {
        let o = LevelOptions::default();
        assert_eq!(o.output_file_size(6, 6, 0), MIN_YOUNG_FILE_SIZE);
        assert_eq!(o.output_file_size(6, 6, 320 * MIB), 10 * MIB);
        assert_eq!(o.output_file_size(6, 6, 2048 * MIB), 64 * MIB);
        assert_eq!(o.output_file_size(6, 6, 100 * 1024 * MIB), 64 * MIB);
        let tiny = LevelOptions {
            target_file_size_base: 4096,
            ..LevelOptions::default()
        };
        assert_eq!(tiny.output_file_size(1, 1, 0), 4096);
    }
}
