//! Merging of several [`InternalIterator`]s into one ordered view.
//!
//! [`MergingIterator`] follows RocksDB's `MergingIterator`: it keeps every child positioned and
//! a binary heap of the children that are valid, a min-heap while moving forward and a max-heap
//! while moving backward. The current entry is the heap's top. Changing direction repositions
//! every other child just past (or just before) the current entry.
//!
//! Equal internal keys in different children should not happen, but the order is deterministic
//! all the same: going forward, the child with the lower index comes first; going backward the
//! order is exactly reversed, so `prev` always undoes `next`.

use std::cmp::Ordering;

use crate::error::Result;
use crate::iter::{BoxedIterator, InternalIterator};
use crate::key::compare_internal_keys;

/// Which way the iterator last moved; decides the heap's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// An [`InternalIterator`] over the union of several children, in internal-key order.
///
/// Children are given newest source first (memtable, then L0 newest first, then deeper levels);
/// on equal internal keys the earlier child wins the forward order.
pub struct MergingIterator {
    children: Vec<BoxedIterator>,
    /// Indices of the valid children, as a binary heap ordered by [`Self::direction`]. The top
    /// (index 0) is the current child.
    heap: Vec<usize>,
    direction: Direction,
}

impl std::fmt::Debug for MergingIterator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergingIterator")
            .field("children", &self.children.len())
            .field("heap", &self.heap)
            .field("direction", &self.direction)
            .finish()
    }
}

/// Orders child `a` against child `b` in forward order: key, then child index.
fn forward_cmp(children: &[BoxedIterator], a: usize, b: usize) -> Ordering {
    match (children.get(a), children.get(b)) {
        (Some(x), Some(y)) => compare_internal_keys(x.key(), y.key()).then(a.cmp(&b)),
        _ => a.cmp(&b),
    }
}

/// True if child `a` belongs above child `b` in a heap going in direction `dir`.
fn above(children: &[BoxedIterator], dir: Direction, a: usize, b: usize) -> bool {
    let o = forward_cmp(children, a, b);
    match dir {
        Direction::Forward => o == Ordering::Less,
        Direction::Backward => o == Ordering::Greater,
    }
}

/// Heap entry at `pos`; the heap only ever reads positions below its length.
fn at(heap: &[usize], pos: usize) -> usize {
    heap.get(pos).copied().unwrap_or(usize::MAX)
}

/// Restores the heap property downward from `pos`.
fn sift_down(heap: &mut [usize], children: &[BoxedIterator], dir: Direction, mut pos: usize) {
    let n = heap.len();
    loop {
        let l = 2 * pos + 1;
        if l >= n {
            return;
        }
        let r = l + 1;
        let mut best = l;
        if r < n && above(children, dir, at(heap, r), at(heap, l)) {
            best = r;
        }
        if above(children, dir, at(heap, best), at(heap, pos)) {
            heap.swap(best, pos);
            pos = best;
        } else {
            return;
        }
    }
}

/// Restores the heap property upward from `pos`.
fn sift_up(heap: &mut [usize], children: &[BoxedIterator], dir: Direction, mut pos: usize) {
    while pos > 0 {
        let parent = (pos - 1) / 2;
        if above(children, dir, at(heap, pos), at(heap, parent)) {
            heap.swap(pos, parent);
            pos = parent;
        } else {
            return;
        }
    }
}

impl MergingIterator {
    /// A merge of `children`, newest source first. Unpositioned until a seek.
    pub fn new(children: Vec<BoxedIterator>) -> Self {
        let heap = Vec::with_capacity(children.len());
        MergingIterator {
            children,
            heap,
            direction: Direction::Forward,
        }
    }

    /// Number of children.
    pub fn num_children(&self) -> usize {
        self.children.len()
    }

    /// The index of the child the current entry comes from, while valid.
    pub fn current_child(&self) -> Option<usize> {
        self.heap.first().copied()
    }

    fn current(&self) -> Option<&BoxedIterator> {
        self.current_child().and_then(|c| self.children.get(c))
    }

    /// Rebuilds the heap from every valid child, ordered for `dir`.
    fn rebuild(&mut self, dir: Direction) {
        self.direction = dir;
        self.heap.clear();
        for (i, c) in self.children.iter().enumerate() {
            if c.valid() {
                self.heap.push(i);
                let last = self.heap.len() - 1;
                sift_up(&mut self.heap, &self.children, dir, last);
            }
        }
    }

    /// Runs `op` on every child, then rebuilds the heap for `dir`. On an error the iterator is
    /// left invalid and the first error is returned.
    fn reposition_all(
        &mut self,
        dir: Direction,
        mut op: impl FnMut(&mut BoxedIterator) -> Result<()>,
    ) -> Result<()> {
        self.heap.clear();
        for c in &mut self.children {
            op(c)?;
        }
        self.rebuild(dir);
        Ok(())
    }

    /// After the top child moved, restores the heap (dropping the child if it became invalid).
    fn fix_top(&mut self) {
        let Some(&top) = self.heap.first() else {
            return;
        };
        let still_valid = self.children.get(top).is_some_and(|c| c.valid());
        if !still_valid {
            let last = self.heap.len() - 1;
            self.heap.swap(0, last);
            self.heap.pop();
        }
        sift_down(&mut self.heap, &self.children, self.direction, 0);
    }

    /// Moves the current child one step in `forward` direction and fixes the heap.
    fn step_current(&mut self, forward: bool) -> Result<()> {
        let Some(top) = self.current_child() else {
            return Ok(());
        };
        let res = match self.children.get_mut(top) {
            Some(c) if forward => c.next(),
            Some(c) => c.prev(),
            None => Ok(()),
        };
        if let Err(e) = res {
            self.heap.clear();
            return Err(e);
        }
        self.fix_top();
        Ok(())
    }

    /// Switches from backward to forward: every other child moves to the first entry after the
    /// current one in the merged order.
    fn switch_to_forward(&mut self) -> Result<()> {
        let Some(cur) = self.current_child() else {
            return Ok(());
        };
        let key = self.current().map(|c| c.key().to_vec()).unwrap_or_default();
        let res = self.children.iter_mut().enumerate().try_for_each(|(i, c)| {
            if i == cur {
                return Ok(());
            }
            c.seek(&key)?;
            // Children before the current one rank before it on equal keys: skip those.
            if i < cur && c.valid() && compare_internal_keys(c.key(), &key) == Ordering::Equal {
                c.next()?;
            }
            Ok(())
        });
        if let Err(e) = res {
            self.heap.clear();
            return Err(e);
        }
        // The current child stays where it is; the rebuilt heap puts it on top.
        self.rebuild(Direction::Forward);
        Ok(())
    }

    /// Switches from forward to backward: every other child moves to the last entry before the
    /// current one in the merged order.
    fn switch_to_backward(&mut self) -> Result<()> {
        let Some(cur) = self.current_child() else {
            return Ok(());
        };
        let key = self.current().map(|c| c.key().to_vec()).unwrap_or_default();
        let res = self.children.iter_mut().enumerate().try_for_each(|(i, c)| {
            if i == cur {
                return Ok(());
            }
            c.seek_for_prev(&key)?;
            // Children after the current one rank after it on equal keys: skip those.
            if i > cur && c.valid() && compare_internal_keys(c.key(), &key) == Ordering::Equal {
                c.prev()?;
            }
            Ok(())
        });
        if let Err(e) = res {
            self.heap.clear();
            return Err(e);
        }
        self.rebuild(Direction::Backward);
        Ok(())
    }
}

impl InternalIterator for MergingIterator {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn seek_to_first(&mut self) -> Result<()> {
        self.reposition_all(Direction::Forward, |c| c.seek_to_first())
    }

    fn seek_to_last(&mut self) -> Result<()> {
        self.reposition_all(Direction::Backward, |c| c.seek_to_last())
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.reposition_all(Direction::Forward, |c| c.seek(target))
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.reposition_all(Direction::Backward, |c| c.seek_for_prev(target))
    }

    fn next(&mut self) -> Result<()> {
        if self.direction == Direction::Backward {
            self.switch_to_forward()?;
        }
        self.step_current(true)
    }

    fn prev(&mut self) -> Result<()> {
        if self.direction == Direction::Forward {
            self.switch_to_backward()?;
        }
        self.step_current(false)
    }

    fn key(&self) -> &[u8] {
        self.current().map(|c| c.key()).unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.current().map(|c| c.value()).unwrap_or(&[])
    }

    fn set_readahead_limit(&mut self, limit: Option<&[u8]>) {
        for c in &mut self.children {
            c.set_readahead_limit(limit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::iter::VecIterator;
    use crate::key::{ValueKind, internal_key, seek_for_prev_key, seek_key};
    use proptest::prelude::*;

    type Entries = Vec<(Vec<u8>, Vec<u8>)>;

    fn boxed(children: &[Entries]) -> Vec<BoxedIterator> {
        children
            .iter()
            .map(|c| Box::new(VecIterator::new(c.clone())) as BoxedIterator)
            .collect()
    }

    /// The reference: one sorted vector. The sort is stable, so equal keys keep child order,
    /// which is the merge's tie rule.
    fn union(children: &[Entries]) -> VecIterator {
        let mut all: Entries = Vec::new();
        for c in children {
            let mut c = c.clone();
            c.sort_by(|a, b| compare_internal_keys(&a.0, &b.0));
            all.extend(c);
        }
        VecIterator::new(all)
    }

    fn collect_forward(it: &mut dyn InternalIterator) -> Entries {
        let mut out = Vec::new();
        it.seek_to_first().unwrap();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next().unwrap();
        }
        out
    }

    #[test]
    fn merges_in_order_and_back() {
        let k = |u: &[u8], s| internal_key(u, s, ValueKind::Put);
        let a = vec![(k(b"a", 3), b"a3".to_vec()), (k(b"c", 1), b"c1".to_vec())];
        let b = vec![(k(b"a", 2), b"a2".to_vec()), (k(b"b", 9), b"b9".to_vec())];
        let children = vec![a, b];
        let mut m = MergingIterator::new(boxed(&children));
        let fwd = collect_forward(&mut m);
        assert_eq!(fwd, collect_forward(&mut union(&children)));
        m.seek_to_last().unwrap();
        let mut back = Vec::new();
        while m.valid() {
            back.push((m.key().to_vec(), m.value().to_vec()));
            m.prev().unwrap();
        }
        back.reverse();
        assert_eq!(back, fwd);
    }

    #[test]
    fn empty_merge_is_invalid() {
        let mut m = MergingIterator::new(Vec::new());
        m.seek_to_first().unwrap();
        assert!(!m.valid());
        m.seek_for_prev(b"zzzzzzzzzz").unwrap();
        assert!(!m.valid());
        assert_eq!(m.key(), b"");
    }

    /// A child that fails on its second step.
    struct Failing {
        inner: VecIterator,
        steps: usize,
    }

    impl InternalIterator for Failing {
        fn valid(&self) -> bool {
            self.inner.valid()
        }
        fn seek_to_first(&mut self) -> Result<()> {
            self.inner.seek_to_first()
        }
        fn seek_to_last(&mut self) -> Result<()> {
            Err(Error::corruption("bad block at offset 7"))
        }
        fn seek(&mut self, t: &[u8]) -> Result<()> {
            self.inner.seek(t)
        }
        fn seek_for_prev(&mut self, t: &[u8]) -> Result<()> {
            self.inner.seek_for_prev(t)
        }
        fn next(&mut self) -> Result<()> {
            self.steps += 1;
            if self.steps >= 2 {
                return Err(Error::corruption("bad block at offset 7"));
            }
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
    }

    #[test]
    fn child_errors_are_returned_and_invalidate() {
        let k = |u: &[u8], s| internal_key(u, s, ValueKind::Put);
        let failing = Failing {
            inner: VecIterator::new(vec![
                (k(b"a", 1), Vec::new()),
                (k(b"b", 1), Vec::new()),
                (k(b"c", 1), Vec::new()),
            ]),
            steps: 0,
        };
        let other = VecIterator::new(vec![(k(b"z", 1), Vec::new())]);
        let mut m = MergingIterator::new(vec![Box::new(other), Box::new(failing)]);
        m.seek_to_first().unwrap();
        m.next().unwrap();
        let e = m.next().unwrap_err();
        assert!(e.to_string().contains("offset 7"), "{e}");
        assert!(!m.valid());
        assert!(m.seek_to_last().is_err());
        assert!(!m.valid());
    }

    #[derive(Debug, Clone)]
    enum Op {
        First,
        Last,
        Seek(Vec<u8>),
        SeekForPrev(Vec<u8>),
        Next,
        Prev,
    }

    fn user_key_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(0u8..4, 0..3)
    }

    fn ikey_strategy() -> impl Strategy<Value = Vec<u8>> {
        (user_key_strategy(), 0u64..6, 0u8..3).prop_map(|(u, s, k)| {
            let kind = ValueKind::from_u8(k).unwrap_or(ValueKind::Put);
            internal_key(&u, s, kind)
        })
    }

    fn target_strategy() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            ikey_strategy(),
            (user_key_strategy(), 0u64..7).prop_map(|(u, s)| seek_key(&u, s)),
            user_key_strategy().prop_map(|u| seek_for_prev_key(&u)),
        ]
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        prop_oneof![
            1 => Just(Op::First),
            1 => Just(Op::Last),
            2 => target_strategy().prop_map(Op::Seek),
            2 => target_strategy().prop_map(Op::SeekForPrev),
            4 => Just(Op::Next),
            4 => Just(Op::Prev),
        ]
    }

    /// Children with unique keys inside each child; keys may repeat across children.
    fn children_strategy() -> impl Strategy<Value = Vec<Entries>> {
        prop::collection::vec(prop::collection::btree_set(ikey_strategy(), 0..12), 0..5).prop_map(
            |sets| {
                sets.into_iter()
                    .enumerate()
                    .map(|(ci, set)| {
                        set.into_iter()
                            .enumerate()
                            .map(|(ei, k)| (k, format!("{ci}:{ei}").into_bytes()))
                            .collect()
                    })
                    .collect()
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn matches_a_sorted_union(children in children_strategy(),
                                  ops in prop::collection::vec(op_strategy(), 1..40)) {
            let mut model = union(&children);
            let mut merged = MergingIterator::new(boxed(&children));
            for op in ops {
                match &op {
                    Op::First => { model.seek_to_first().unwrap(); merged.seek_to_first().unwrap(); }
                    Op::Last => { model.seek_to_last().unwrap(); merged.seek_to_last().unwrap(); }
                    Op::Seek(t) => { model.seek(t).unwrap(); merged.seek(t).unwrap(); }
                    Op::SeekForPrev(t) => {
                        model.seek_for_prev(t).unwrap();
                        merged.seek_for_prev(t).unwrap();
                    }
                    Op::Next => if model.valid() { model.next().unwrap(); merged.next().unwrap(); },
                    Op::Prev => if model.valid() { model.prev().unwrap(); merged.prev().unwrap(); },
                }
                prop_assert_eq!(merged.valid(), model.valid(), "after {:?}", op);
                if model.valid() {
                    prop_assert_eq!(merged.key(), model.key(), "after {:?}", op);
                    prop_assert_eq!(merged.value(), model.value(), "after {:?}", op);
                }
            }
        }
    }
}
