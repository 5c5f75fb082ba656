//! [`RangeIterator`]: an iterator restricted to the user keys `[start, end)`, so that each
//! subcompaction reads only its own key range.

use riptide_common::key::MAX_SEQNO;
use riptide_common::key::{seek_key, user_key};
use riptide_common::{InternalIterator, Result};

/// Shows only the entries of `inner` whose user key is in `[start, end)` (`None` bounds are
/// open). Every version of a user key is inside or outside together.
pub(crate) struct RangeIterator<I> {
    inner: I,
    start: Option<Vec<u8>>,
    end: Option<Vec<u8>>,
}

impl<I: InternalIterator> RangeIterator<I> {
    /// `inner` restricted to `[start, end)`.
    pub(crate) fn new(inner: I, start: Option<Vec<u8>>, end: Option<Vec<u8>>) -> Self {
        RangeIterator { inner, start, end }
    }

    fn in_range(&self, uk: &[u8]) -> bool {
        self.start.as_deref().is_none_or(|s| uk >= s) && self.end.as_deref().is_none_or(|e| uk < e)
    }
}

impl<I: InternalIterator> InternalIterator for RangeIterator<I> {
    fn valid(&self) -> bool {
        self.inner.valid() && self.in_range(user_key(self.inner.key()))
    }
    fn seek_to_first(&mut self) -> Result<()> {
        match &self.start {
            // Sorts before every version of `start`.
            Some(s) => self.inner.seek(&seek_key(s, MAX_SEQNO)),
            None => self.inner.seek_to_first(),
        }
    }
    fn seek_to_last(&mut self) -> Result<()> {
        match &self.end {
            Some(e) => {
                self.inner.seek(&seek_key(e, MAX_SEQNO))?;
                if self.inner.valid() {
                    self.inner.prev()
                } else {
                    self.inner.seek_to_last()
                }
            }
            None => self.inner.seek_to_last(),
        }
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        match &self.start {
            Some(s) if user_key(target) < s.as_slice() => self.seek_to_first(),
            _ => self.inner.seek(target),
        }
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        match &self.end {
            Some(e) if user_key(target) >= e.as_slice() => self.seek_to_last(),
            _ => self.inner.seek_for_prev(target),
        }
    }
    fn next(&mut self) -> Result<()> {
        self.inner.next()
    }
    fn prev(&mut self) -> Result<()> {
        self.inner.prev()
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        self.inner.set_readahead_limit(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_common::ValueKind;
    use riptide_common::iter::VecIterator;
    use riptide_common::key::internal_key;

    fn keys(it: &mut dyn InternalIterator) -> Vec<(Vec<u8>, u64)> {
        let mut out = Vec::new();
        it.seek_to_first().unwrap_or(());
        while it.valid() {
            out.push((
                user_key(it.key()).to_vec(),
                riptide_common::key::seqno_of(it.key()),
            ));
            if it.next().is_err() {
                break;
            }
        }
        out
    }

    #[test]
    fn keeps_every_version_of_the_bounds_together() {
        let v = ["a", "b", "b", "c", "d"]
            .iter()
            .enumerate()
            .map(|(i, k)| {
                (
                    internal_key(k.as_bytes(), 10 - i as u64, ValueKind::Put),
                    vec![],
                )
            })
            .collect();
        let inner = VecIterator::new(v);
        let mut it = RangeIterator::new(inner, Some(b"b".to_vec()), Some(b"d".to_vec()));
        let got = keys(&mut it);
        let want = vec![(b"b".to_vec(), 9), (b"b".to_vec(), 8), (b"c".to_vec(), 7)];
        assert_eq!(got, want);
        let mut last = RangeIterator::new(
            VecIterator::new(vec![(internal_key(b"z", 1, ValueKind::Put), vec![])]),
            None,
            Some(b"z".to_vec()),
        );
        assert!(keys(&mut last).is_empty());
    }
}
