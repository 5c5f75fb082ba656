//! Level targets: how many bytes each level should hold, and which level L0 compacts into.
//!
//! * Static sizing: L1 holds [`LevelOptions::max_bytes_for_level_base`], each deeper level
//!   [`LevelOptions::level_size_ratio`] times the one above; L0 compacts into L1.
//! * Dynamic sizing (RocksDB `level_compaction_dynamic_level_bytes`): the last level's target
//!   is the size of the largest level below L0 (at least the base size); each level above
//!   has the target of the one below divided by the ratio. A level whose target would not
//!   exceed `max_bytes_for_level_base / ratio` is unused, and L0 compacts into the first used
//!   level, the *base level*. The base level is never below a non-empty level, so data never
//!   skips over older data on its way down.

use riptide_common::CfId;

use crate::options::LevelOptions;
use crate::version::Version;

/// The result of [`level_targets`].
#[derive(Debug, Clone, PartialEq)]
pub struct LevelTargets {
    /// The level L0 compacts into (1 with static sizing).
    pub base_level: usize,
    /// Target size in bytes of each level, indexed by level (`num_levels` entries). 0 for L0
    /// (scored by file count) and for unused levels above the base level.
    pub targets: Vec<u64>,
    /// Current size in bytes of each level (all files, being compacted or not).
    pub level_bytes: Vec<u64>,
}

impl LevelTargets {
    /// Number of levels (L0 included).
    pub fn num_levels(&self) -> usize {
        self.targets.len()
    }

    /// The last (bottom) level.
    pub fn last_level(&self) -> usize {
        self.targets.len().saturating_sub(1)
    }

    /// The target of `level` (0 for L0, unused levels and levels beyond the last).
    pub fn target(&self, level: usize) -> u64 {
        self.targets.get(level).copied().unwrap_or(0)
    }

    /// The level a compaction whose inputs come from `level` writes to: the base level for
    /// L0, the next level otherwise (the last level for itself).
    pub fn output_level_for(&self, level: usize) -> usize {
        if level == 0 {
            self.base_level
        } else {
            (level + 1).min(self.last_level())
        }
    }
}

/// The level targets of column family `cf` in `version`. Pure: depends only on file sizes.
///
/// The number of levels is [`LevelOptions::levels`], or more if `version` has files deeper.
pub fn level_targets(version: &Version, cf: CfId, opts: &LevelOptions) -> LevelTargets {
    let sizes: Vec<u64> = version
        .levels(cf)
        .iter()
        .map(|files| files.iter().map(|f| f.meta.file_size).sum())
        .collect();
    level_targets_from_sizes(&sizes, opts)
}

/// [`level_targets`] from the byte size of each level (`level_sizes[0]` is L0; missing
/// levels are empty).
pub fn level_targets_from_sizes(level_sizes: &[u64], opts: &LevelOptions) -> LevelTargets {
    let deepest_nonempty = level_sizes.iter().rposition(|&s| s > 0).unwrap_or(0);
    let n = opts.levels().max(deepest_nonempty + 1);
    let last = n - 1;
    let mut level_bytes = level_sizes.to_vec();
    level_bytes.resize(n, 0);
    let ratio = opts.ratio();
    let base = opts.max_bytes_for_level_base.max(1);
    let mut targets = vec![0u64; n];

    if !opts.dynamic_level_bytes {
        let mut t = base as f64;
        for target in targets.iter_mut().skip(1) {
            *target = (t as u64).max(1);
            t *= ratio;
        }
        return LevelTargets {
            base_level: 1,
            targets,
            level_bytes,
        };
    }

    let largest = level_bytes.iter().skip(1).copied().max().unwrap_or(0);
    let first_nonempty = level_bytes
        .iter()
        .skip(1)
        .position(|&s| s > 0)
        .map_or(last, |p| p + 1);
    let min_used = base as f64 / ratio;
    let mut t = largest.max(base) as f64;
    let mut base_level = last;
    for level in (1..=last).rev() {
        if level != last {
            t /= ratio;
            // Used while worth it, and always when data already lies at or below here.
            if t <= min_used && level < first_nonempty {
                break;
            }
        }
        if let Some(target) = targets.get_mut(level) {
            *target = (t as u64).max(1);
        }
        base_level = level;
    }
    LevelTargets {
        base_level,
        targets,
        level_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn opts(dynamic: bool) -> LevelOptions {
        LevelOptions {
            dynamic_level_bytes: dynamic,
            max_bytes_for_level_base: 256 * MIB,
            level_size_ratio: 10.0,
            num_levels: 7,
            ..LevelOptions::default()
        }
    }

    #[test]
    fn static_targets() {
        let t = level_targets_from_sizes(&[], &opts(false));
        assert_eq!(t.base_level, 1);
        assert_eq!(t.num_levels(), 7);
        assert_eq!(t.target(0), 0);
        assert_eq!(t.target(1), 256 * MIB);
        assert_eq!(t.target(2), 2560 * MIB);
        assert_eq!(t.target(6), 256 * MIB * 100_000);
        // Sizes do not matter.
        let t2 = level_targets_from_sizes(&[5, 0, 0, 0, 0, 0, 999 * MIB], &opts(false));
        assert_eq!(t2.targets, t.targets);
        assert_eq!(t2.level_bytes[6], 999 * MIB);
    }

    #[test]
    fn dynamic_empty_database_compacts_l0_into_the_last_level() {
        let t = level_targets_from_sizes(&[10 * MIB], &opts(true));
        assert_eq!(t.base_level, 6);
        assert_eq!(t.target(6), 256 * MIB);
        assert!(t.targets[..6].iter().all(|&x| x == 0));
    }

    #[test]
    fn dynamic_small_last_level_stays_the_base() {
        // Last level below base: its target is the base size, L5 would be base/10 exactly,
        // which is not above base/ratio: unused.
        let t = level_targets_from_sizes(&[0, 0, 0, 0, 0, 0, 100 * MIB], &opts(true));
        assert_eq!(t.base_level, 6);
        assert_eq!(t.target(6), 256 * MIB);
    }

    #[test]
    fn dynamic_grows_upwards_with_the_last_level() {
        // 30 GiB at the bottom: L6 30 GiB, L5 3 GiB, L4 307 MiB, L3 30.7 MiB (> 25.6 MiB),
        // L2 3 MiB (unused).
        let last = 30 * 1024 * MIB;
        let t = level_targets_from_sizes(&[0, 0, 0, 0, 0, 0, last], &opts(true));
        assert_eq!(t.base_level, 3);
        assert_eq!(t.target(6), last);
        assert_eq!(t.target(5), last / 10);
        assert_eq!(t.target(4), last / 100);
        assert_eq!(t.target(3), last / 1000);
        assert_eq!(t.target(2), 0);
        assert_eq!(t.output_level_for(0), 3);
        assert_eq!(t.output_level_for(3), 4);
        assert_eq!(t.output_level_for(6), 6);
    }

    #[test]
    fn dynamic_uses_the_largest_level_as_the_last_levels_size() {
        // Data mostly in L5 (for example after lowering num_levels' use): the last level's
        // target follows the largest level.
        let t = level_targets_from_sizes(&[0, 0, 0, 0, 0, 3000 * MIB, 10 * MIB], &opts(true));
        assert_eq!(t.target(6), 3000 * MIB);
        assert_eq!(t.target(5), 300 * MIB);
        assert_eq!(t.base_level, 4);
    }

    #[test]
    fn dynamic_base_level_never_below_non_empty_levels() {
        // Data in L2 of a small tree (opened after static sizing): L2 must stay used, with a
        // tiny target, so it drains downwards.
        let t = level_targets_from_sizes(&[0, 0, MIB, 0, 0, 0, 300 * MIB], &opts(true));
        assert_eq!(t.base_level, 2);
        assert_eq!(t.target(6), 300 * MIB);
        assert!(t.target(2) < MIB);
        assert!(t.target(2) >= 1);
    }

    #[test]
    fn dynamic_huge_tree_uses_every_level() {
        let last = 256 * MIB * 1_000_000;
        let t = level_targets_from_sizes(&[0, 0, 0, 0, 0, 0, last], &opts(true));
        assert_eq!(t.base_level, 1);
        assert_eq!(t.target(1), last / 100_000);
    }

    #[test]
    fn deeper_files_extend_the_levels() {
        let mut sizes = vec![0u64; 9];
        sizes[8] = MIB;
        let t = level_targets_from_sizes(&sizes, &opts(true));
        assert_eq!(t.num_levels(), 9);
        assert_eq!(t.base_level, 8);
    }
}
