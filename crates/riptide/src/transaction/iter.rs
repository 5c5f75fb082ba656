//! [`TxnIterator`]: a transaction's own writes merged over the database at its read point.
//!
//! Two ordered sources: a [`DbIterator`] (live keys of the database at the read point) and the
//! transaction's write buffer (puts and deletes). At equal keys the buffer wins; a buffered
//! delete hides the key. The buffer is consulted afresh at every step (by seeking after the
//! current key), so writes the transaction makes while iterating are seen, and the iterator
//! never holds the transaction's lock between calls.

use std::sync::Arc;

use riptide_common::{Result, SeqNo};

use crate::cf::ColumnFamily;
use crate::iterator::DbIterator;
use crate::transaction::TxnShared;

/// Which way the iterator last moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// A cursor over one column family as a transaction sees it: its own writes over the
/// database at its read point, in key order, in both directions, within optional bounds.
/// Made by [`crate::Transaction::iter`].
pub struct TxnIterator {
    txn: Arc<TxnShared>,
    cf: ColumnFamily,
    db: DbIterator,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    valid: bool,
    key: Vec<u8>,
    value: Vec<u8>,
    direction: Direction,
}

impl std::fmt::Debug for TxnIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TxnIterator")
            .field("valid", &self.valid)
            .finish_non_exhaustive()
    }
}

/// A buffered entry, copied out of the buffer.
type Buffered = Option<(Vec<u8>, Option<Vec<u8>>)>;

impl TxnIterator {
    pub(crate) fn new(
        txn: Arc<TxnShared>,
        cf: ColumnFamily,
        seqno: SeqNo,
        lower: Option<Vec<u8>>,
        upper: Option<Vec<u8>>,
    ) -> Result<TxnIterator> {
        let db = crate::db::iter_at(&txn.db, &cf, seqno, lower.clone(), upper.clone())?;
        Ok(TxnIterator {
            txn,
            cf,
            db,
            lower,
            upper,
            valid: false,
            key: Vec::new(),
            value: Vec::new(),
            direction: Direction::Forward,
        })
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

    fn in_bounds(&self, key: &[u8]) -> bool {
        self.lower.as_deref().is_none_or(|l| key >= l)
            && self.upper.as_deref().is_none_or(|u| key < u)
    }

    /// The first buffered entry at or after (`inclusive`) / after `key`, within bounds (a
    /// `key` below the lower bound starts at the lower bound).
    fn buffer_forward(&self, key: Option<&[u8]>, inclusive: bool) -> Buffered {
        let st = self.txn.state.lock();
        let cf = self.cf.id();
        let start = match (key, self.lower.as_deref()) {
            (None, None) => None,
            (None, Some(l)) => Some((l, true)),
            (Some(k), Some(l)) if k < l => Some((l, true)),
            (Some(k), _) => Some((k, inclusive)),
        };
        let found = match start {
            None => st.buffer.first(cf),
            Some((k, true)) => st.buffer.seek_ge(cf, k),
            Some((k, false)) => st.buffer.next_after(cf, k),
        };
        found
            .filter(|(k, _)| self.in_bounds(k))
            .map(|(k, op)| (k.to_vec(), op.value().map(<[u8]>::to_vec)))
    }

    /// The last buffered entry at or before (`inclusive`) / before `key`, within bounds (a
    /// `key` at or above the upper bound starts just below the upper bound).
    fn buffer_backward(&self, key: Option<&[u8]>, inclusive: bool) -> Buffered {
        let st = self.txn.state.lock();
        let cf = self.cf.id();
        let start = match (key, self.upper.as_deref()) {
            (None, None) => None,
            (None, Some(u)) => Some((u, false)),
            (Some(k), Some(u)) if k >= u => Some((u, false)),
            (Some(k), _) => Some((k, inclusive)),
        };
        let found = match start {
            None => st.buffer.last(cf),
            Some((k, true)) => st.buffer.seek_le(cf, k),
            Some((k, false)) => st.buffer.prev_before(cf, k),
        };
        found
            .filter(|(k, _)| self.in_bounds(k))
            .map(|(k, op)| (k.to_vec(), op.value().map(<[u8]>::to_vec)))
    }

    /// From the database cursor's position and the buffer at or after `from`, settles on the
    /// first visible key going forward.
    fn settle_forward(&mut self, mut from: Option<Vec<u8>>, mut inclusive: bool) -> Result<()> {
        self.direction = Direction::Forward;
        loop {
            let buffered = self.buffer_forward(from.as_deref(), inclusive);
            let db_key = self.db.valid().then(|| self.db.key().to_vec());
            let take_buffer = match (&buffered, &db_key) {
                (None, None) => {
                    self.valid = false;
                    return Ok(());
                }
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((bk, _)), Some(dk)) => bk <= dk,
            };
            if !take_buffer {
                self.key = db_key.unwrap_or_default();
                self.value = self.db.value().to_vec();
                self.valid = true;
                return Ok(());
            }
            let Some((bk, value)) = buffered else {
                continue;
            };
            if db_key.as_deref() == Some(bk.as_slice()) {
                self.db.next()?;
            }
            match value {
                Some(v) => {
                    self.key = bk;
                    self.value = v;
                    self.valid = true;
                    return Ok(());
                }
                None => {
                    // Deleted by this transaction: go on after it.
                    from = Some(bk);
                    inclusive = false;
                }
            }
        }
    }

    /// Like [`Self::settle_forward`], going backward from at or before `from`.
    fn settle_backward(&mut self, mut from: Option<Vec<u8>>, mut inclusive: bool) -> Result<()> {
        self.direction = Direction::Backward;
        loop {
            let buffered = self.buffer_backward(from.as_deref(), inclusive);
            let db_key = self.db.valid().then(|| self.db.key().to_vec());
            let take_buffer = match (&buffered, &db_key) {
                (None, None) => {
                    self.valid = false;
                    return Ok(());
                }
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((bk, _)), Some(dk)) => bk >= dk,
            };
            if !take_buffer {
                self.key = db_key.unwrap_or_default();
                self.value = self.db.value().to_vec();
                self.valid = true;
                return Ok(());
            }
            let Some((bk, value)) = buffered else {
                continue;
            };
            if db_key.as_deref() == Some(bk.as_slice()) {
                self.db.prev()?;
            }
            match value {
                Some(v) => {
                    self.key = bk;
                    self.value = v;
                    self.valid = true;
                    return Ok(());
                }
                None => {
                    from = Some(bk);
                    inclusive = false;
                }
            }
        }
    }

    /// Positions on the first visible key.
    pub fn seek_to_first(&mut self) -> Result<()> {
        self.db.seek_to_first()?;
        let from = self.lower.clone();
        self.settle_forward(from, true)
    }

    /// Positions on the last visible key.
    pub fn seek_to_last(&mut self) -> Result<()> {
        self.db.seek_to_last()?;
        self.settle_backward(None, true)
    }

    /// Positions on the first visible key `>= target`.
    pub fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.db.seek(target)?;
        let from = match self.lower.as_deref() {
            Some(l) if l > target => l.to_vec(),
            _ => target.to_vec(),
        };
        self.settle_forward(Some(from), true)
    }

    /// Positions on the last visible key `<= target`.
    pub fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.db.seek_for_prev(target)?;
        self.settle_backward(Some(target.to_vec()), true)
    }

    /// Moves to the next visible key.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let current = std::mem::take(&mut self.key);
        if self.direction == Direction::Backward {
            self.db.seek(&current)?;
        }
        while self.db.valid() && self.db.key() <= &current[..] {
            self.db.next()?;
        }
        self.settle_forward(Some(current), false)
    }

    /// Moves to the previous visible key.
    pub fn prev(&mut self) -> Result<()> {
        if !self.valid {
            return Ok(());
        }
        let current = std::mem::take(&mut self.key);
        if self.direction == Direction::Forward {
            self.db.seek_for_prev(&current)?;
        }
        while self.db.valid() && self.db.key() >= &current[..] {
            self.db.prev()?;
        }
        self.settle_backward(Some(current), false)
    }
}
