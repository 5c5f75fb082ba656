//! [`DbIterator`]: the user's ordered view of one column family at one snapshot.
//!
//! It wraps a merge of every source (memtables, tables) and turns internal entries into user
//! entries: versions newer than the snapshot are invisible, only the newest visible version
//! of each key counts, and a key whose newest visible version is a tombstone does not exist.
//! The current entry is copied out, so moving the merged cursor never invalidates it.

use std::sync::Arc;

use riptide_common::key::{MAX_SEQNO, parse_internal_key, seek_key};
use riptide_common::merge::MergingIterator;
use riptide_common::{InternalIterator, Result, SeqNo, ValueKind};

use crate::cf::CfView;

/// Which way the merged cursor last moved relative to the current entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// The merged cursor sits on the current entry's newest visible version.
    Forward,
    /// The merged cursor sits before every version of the current entry.
    Backward,
}

/// Where a backward search starts.
enum BackwardStart {
    /// Just below every version of this user key.
    Before(Vec<u8>),
    /// At the end (below the upper bound, if any).
    End,
    /// Where the merged cursor already is.
    Here,
}

/// A cursor over the live keys of one column family as of one snapshot, in key order, in
/// either direction, within optional bounds. Holds the memtables and tables it reads, so it
/// stays consistent while writes, flushes and compactions go on.
///
/// Position it with [`seek_to_first`](Self::seek_to_first), [`seek`](Self::seek),
/// [`seek_for_prev`](Self::seek_for_prev) or [`seek_to_last`](Self::seek_to_last), then read
/// [`key`](Self::key) and [`value`](Self::value) while [`valid`](Self::valid) is true and
/// step with [`next`](Self::next) / [`prev`](Self::prev).
pub struct DbIterator {
    merged: MergingIterator,
    snapshot: SeqNo,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    valid: bool,
    direction: Direction,
    key: Vec<u8>,
    value: Vec<u8>,
    _view: Arc<CfView>,
}

impl std::fmt::Debug for DbIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbIterator")
            .field("snapshot", &self.snapshot)
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

impl DbIterator {
    pub(crate) fn new(
        view: Arc<CfView>,
        merged: MergingIterator,
        snapshot: SeqNo,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Self {
        DbIterator {
            merged,
            snapshot,
            lower,
            upper,
            valid: false,
            direction: Direction::Forward,
            key: Vec::new(),
            value: Vec::new(),
            _view: view,
        }
    }

    /// True when positioned on an entry.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// The current key. Empty when not valid.
    pub fn key(&self) -> &[u8] {
        if self.valid { &self.key } else { &[] }
    }

    /// The current value. Empty when not valid.
    pub fn value(&self) -> &[u8] {
        if self.valid { &self.value } else { &[] }
    }

    /// The sequence number this iterator reads at.
    pub fn snapshot_seqno(&self) -> SeqNo {
        self.snapshot
    }

    fn above_upper(&self, user_key: &[u8]) -> bool {
        self.upper.as_deref().is_some_and(|u| user_key >= u)
    }

    fn below_lower(&self, user_key: &[u8]) -> bool {
        self.lower.as_deref().is_some_and(|l| user_key < l)
    }

    /// From the merged cursor's position, finds the first user key whose newest visible
    /// version is a put, skipping every version of `skip` (if given). Forward only.
    fn find_next_visible(&mut self, mut skip: Option<Vec<u8>>) -> Result<()> {
        self.valid = false;
        self.direction = Direction::Forward;
        while self.merged.valid() {
            let ikey = parse_internal_key(self.merged.key())?;
            if self.above_upper(ikey.user_key) {
                return Ok(());
            }
            let shadowed = skip.as_deref() == Some(ikey.user_key);
            if ikey.seqno > self.snapshot || shadowed {
                self.merged.next()?;
                continue;
            }
            match ikey.kind {
                ValueKind::Put => {
                    self.key.clear();
                    self.key.extend_from_slice(ikey.user_key);
                    self.value.clear();
                    self.value.extend_from_slice(self.merged.value());
                    self.valid = true;
                    return Ok(());
                }
                ValueKind::Delete | ValueKind::SingleDelete | ValueKind::RangeDelete => {
                    skip = Some(ikey.user_key.to_vec());
                    self.merged.next()?;
                }
            }
        }
        Ok(())
    }

    /// Positions on the last user key before `start` whose newest visible version is a put.
    fn find_prev_visible(&mut self, start: BackwardStart) -> Result<()> {
        self.valid = false;
        self.direction = Direction::Backward;
        match start {
            // Land on the oldest version of the greatest user key < `k`.
            BackwardStart::Before(k) => self.merged.seek_for_prev(&seek_key(&k, MAX_SEQNO))?,
            BackwardStart::End => match self.upper.clone() {
                Some(u) => self.merged.seek_for_prev(&seek_key(&u, MAX_SEQNO))?,
                None => self.merged.seek_to_last()?,
            },
            BackwardStart::Here => {}
        }
        // Walk backward one user key at a time; versions of a key come oldest first.
        while self.merged.valid() {
            let current_user_key = parse_internal_key(self.merged.key())?.user_key.to_vec();
            if self.below_lower(&current_user_key) {
                return Ok(());
            }
            let mut newest_visible: Option<(ValueKind, Vec<u8>)> = None;
            while self.merged.valid() {
                let ikey = parse_internal_key(self.merged.key())?;
                if ikey.user_key != current_user_key.as_slice() {
                    break;
                }
                if ikey.seqno <= self.snapshot {
                    let value = match ikey.kind {
                        ValueKind::Put => self.merged.value().to_vec(),
                        _ => Vec::new(),
                    };
                    newest_visible = Some((ikey.kind, value));
                }
                self.merged.prev()?;
            }
            if let Some((ValueKind::Put, value)) = newest_visible {
                if self.above_upper(&current_user_key) {
                    continue;
                }
                self.key = current_user_key;
                self.value = value;
                self.valid = true;
                return Ok(());
            }
        }
        Ok(())
    }

    /// Positions on the first live key (at or above the lower bound).
    pub fn seek_to_first(&mut self) -> Result<()> {
        match self.lower.clone() {
            Some(l) => self.seek(&l),
            None => {
                self.merged.seek_to_first()?;
                self.find_next_visible(None)
            }
        }
    }

    /// Positions on the last live key (below the upper bound).
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.find_prev_visible(BackwardStart::End)
    }

    /// Positions on the first live key >= `target` (clamped to the bounds).
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        let target = match self.lower.as_deref() {
            Some(l) if target < l => l.to_vec(),
            _ => target.to_vec(),
        };
        self.merged.seek(&seek_key(&target, self.snapshot))?;
        self.find_next_visible(None)
    }

    /// Positions on the last live key <= `target` (clamped to the bounds).
    pub fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        if self.above_upper(target) {
            return self.find_prev_visible(BackwardStart::End);
        }
        // Is `target` itself live?
        self.merged.seek(&seek_key(target, self.snapshot))?;
        self.find_next_visible(None)?;
        if self.valid && self.key == target {
            return Ok(());
        }
        self.find_prev_visible(BackwardStart::Before(target.to_vec()))
    }

    /// Moves to the next live key. Does nothing when not valid.
    // A cursor step (as in RocksDB's iterator), not `Iterator::next`: it can fail.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let current = std::mem::take(&mut self.key);
        if self.direction == Direction::Backward {
            self.merged.seek(&seek_key(&current, self.snapshot))?;
        }
        self.find_next_visible(Some(current))
    }

    /// Moves to the previous live key. Does nothing when not valid.
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let start = match self.direction {
            // The merged cursor already sits on the oldest version of the previous key.
            Direction::Backward => BackwardStart::Here,
            Direction::Forward => BackwardStart::Before(std::mem::take(&mut self.key)),
        };
        self.find_prev_visible(start)
    }
}
