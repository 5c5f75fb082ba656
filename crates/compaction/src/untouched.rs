//! Output-level files a compaction leaves where they are.
//!
//! A job merges its shallower inputs (the L0 files, or files of level `n`) with every file of
//! the output level inside their key hull. When the shallower keys fall into only a few narrow
//! ranges of a wide hull (rows loaded in key order by a few writers at once: each flushed
//! memtable then holds a slice of every table being filled), most of those output-level files
//! would be read and rewritten unchanged. That was most of the compaction I/O of a TPC-C load
//! (22 GB written by compaction for 3.3 GB flushed, at 42 warehouses).
//!
//! [`CompactionJob::set_aside_untouched`] takes such files out of the job before it runs: a
//! file no shallower entry or range tombstone falls into stays in its level as it is, and the
//! merge cuts its output files around the file's key range ([`KeptRange`], see
//! `OutputTables`), so the level stays sorted and non-overlapping. The file stays registered
//! as an input of the job until the job finishes, so no other job takes it meanwhile.

use std::sync::Arc;

use riptide_common::key::{MAX_SEQNO, seek_key, user_key, user_key_successor};
use riptide_common::range_del::RangeTombstone;
use riptide_common::{InternalIterator, Result};

use crate::job::{CompactionJob, CompactionReason};
use crate::table_handle::{HandleIterator, TableHandle};

/// The user-key range of an output-level file a compaction kept in place: none of the job's
/// output files reaches into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRange {
    /// The file's smallest user key (inclusive).
    pub smallest: Vec<u8>,
    /// The file's largest user key: inclusive, unless [`Self::largest_is_exclusive`].
    pub largest: Vec<u8>,
    /// True when [`Self::largest`] is a range tombstone's exclusive end
    /// ([`FileMeta::largest_is_range_end`](crate::FileMeta::largest_is_range_end)): the file
    /// covers `[smallest, largest)`, and `largest` itself may go into the file after it.
    pub largest_is_exclusive: bool,
}

impl KeptRange {
    /// The range of `file`.
    pub fn of(file: &TableHandle) -> Self {
        KeptRange {
            smallest: file.meta.smallest_user_key().to_vec(),
            largest: file.meta.largest_user_key().to_vec(),
            largest_is_exclusive: file.meta.largest_is_range_end(),
        }
    }

    /// True when `user_key` lies in the range.
    pub fn contains(&self, user_key: &[u8]) -> bool {
        self.smallest.as_slice() <= user_key && self.ends_after(user_key)
    }

    /// True when some key of the range is at least `user_key` (the range does not end
    /// before it).
    pub fn ends_after(&self, user_key: &[u8]) -> bool {
        if self.largest_is_exclusive {
            user_key < self.largest.as_slice()
        } else {
            user_key <= self.largest.as_slice()
        }
    }

    /// The smallest user key above the range (an inclusive lower bound for what follows it).
    pub fn end(&self) -> Vec<u8> {
        if self.largest_is_exclusive {
            self.largest.clone()
        } else {
            user_key_successor(&self.largest)
        }
    }
}

/// One shallower input, asked whether it holds anything in a key range.
struct UpperProbe {
    file: Arc<TableHandle>,
    iter: HandleIterator,
    tombstones: Option<Arc<Vec<RangeTombstone>>>,
}

impl UpperProbe {
    fn new(file: &Arc<TableHandle>) -> Result<Self> {
        let tombstones = if file.has_range_tombstones() {
            Some(file.table().and_then(|t| t.range_tombstones())?)
        } else {
            None
        };
        Ok(UpperProbe {
            file: Arc::clone(file),
            iter: file.iter(),
            tombstones,
        })
    }

    /// True when an entry or a range tombstone of this input falls in `range`.
    fn touches(&mut self, range: &KeptRange) -> Result<bool> {
        // Checked against the inclusive bound `[s, l]` (a wider range when `l` is exclusive:
        // conservative), then exactly.
        let (s, l) = (range.smallest.as_slice(), range.largest.as_slice());
        if !self.file.meta.overlaps_user_range(s, l) {
            return Ok(false);
        }
        if self.tombstones.as_ref().is_some_and(|ts| {
            ts.iter()
                .any(|t| range.ends_after(&t.start) && t.end.as_slice() > s)
        }) {
            return Ok(true);
        }
        self.iter.seek(&seek_key(s, MAX_SEQNO))?;
        Ok(self.iter.valid() && range.ends_after(user_key(self.iter.key())))
    }
}

impl CompactionJob {
    /// Takes out of the job every output-level input that no entry or range tombstone of a
    /// shallower input falls into (see the module documentation), records its range in
    /// [`Self::kept_ranges`], and returns how many files it set aside.
    ///
    /// Only size-triggered merges set files aside: a manual or tombstone-density job is asked
    /// for to rewrite its files. Call it once, after deciding against a trivial move and
    /// before running the job; the registry still holds the files set aside as the job's
    /// inputs until it finishes. Reads an index block and at most one data block of each
    /// shallower input per output-level file whose range it overlaps.
    pub fn set_aside_untouched(&mut self) -> Result<usize> {
        if !matches!(
            self.reason,
            CompactionReason::L0FileCount | CompactionReason::LevelSize
        ) {
            return Ok(0);
        }
        let output_level = self.output_level;
        let mut probes = self
            .inputs
            .iter()
            .filter(|(level, _)| *level != output_level)
            .flat_map(|(_, files)| files.iter())
            .map(UpperProbe::new)
            .collect::<Result<Vec<_>>>()?;
        if probes.is_empty() {
            return Ok(0);
        }
        // Decide every file first, so an error leaves the job as it was.
        let mut untouched: Vec<u64> = Vec::new();
        let lower = self
            .inputs
            .iter()
            .filter(|(level, _)| *level == output_level)
            .flat_map(|(_, files)| files.iter());
        for file in lower {
            let range = KeptRange::of(file);
            let mut touched = false;
            for probe in &mut probes {
                touched = probe.touches(&range).map_err(|e| {
                    e.with_context(format_args!(
                        "checking table {} against output-level table {}",
                        probe.file.path().display(),
                        file.path().display()
                    ))
                })?;
                if touched {
                    break;
                }
            }
            if !touched {
                untouched.push(file.number());
            }
        }
        let mut kept = Vec::with_capacity(untouched.len());
        for (level, files) in &mut self.inputs {
            if *level == output_level {
                files.retain(|f| {
                    let keep_in_place = untouched.contains(&f.number());
                    if keep_in_place {
                        kept.push(KeptRange::of(f));
                    }
                    !keep_in_place
                });
            }
        }
        self.inputs.retain(|(_, files)| !files.is_empty());
        let count = kept.len();
        self.kept_ranges.extend(kept);
        self.kept_ranges.sort_by(|a, b| a.smallest.cmp(&b.smallest));
        Ok(count)
    }
}
