//! The memtable iterator behaves exactly like `VecIterator` over the same entries, for random
//! data and random sequences of positioning and stepping calls.

use std::collections::HashSet;

use proptest::prelude::*;
use riptide_common::iter::VecIterator;
use riptide_common::key::internal_key;
use riptide_common::range_del::RangeTombstone;
use riptide_common::{InternalIterator, ValueKind};
use riptide_memtable::Memtable;
use std::sync::Arc;

#[derive(Debug, Clone)]
enum Op {
    First,
    Last,
    Seek(Vec<u8>, u64),
    SeekForPrev(Vec<u8>, u64),
    Next,
    Prev,
}

fn user_key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0u8..4, 0..4)
}

fn kind() -> impl Strategy<Value = ValueKind> {
    prop_oneof![
        Just(ValueKind::Put),
        Just(ValueKind::Delete),
        Just(ValueKind::SingleDelete),
        Just(ValueKind::RangeDelete),
    ]
}

fn trailer() -> impl Strategy<Value = u64> {
    prop_oneof![
        (0u64..40, 0u64..4).prop_map(|(s, k)| (s << 8) | k),
        (0u64..40).prop_map(|s| (s << 8) | 0xFF),
        Just(0),
        Just(u64::MAX),
        any::<u64>(),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::First),
        1 => Just(Op::Last),
        3 => (user_key(), trailer()).prop_map(|(k, t)| Op::Seek(k, t)),
        3 => (user_key(), trailer()).prop_map(|(k, t)| Op::SeekForPrev(k, t)),
        4 => Just(Op::Next),
        4 => Just(Op::Prev),
    ]
}

fn target(user_key: &[u8], trailer: u64) -> Vec<u8> {
    let mut t = user_key.to_vec();
    t.extend_from_slice(&trailer.to_le_bytes());
    t
}

fn same<A: InternalIterator, B: InternalIterator>(a: &A, b: &B) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.valid(), b.valid());
    if a.valid() {
        prop_assert_eq!(a.key(), b.key());
        prop_assert_eq!(a.value(), b.value());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn memtable_iterator_matches_vec_iterator(
        entries in prop::collection::vec(
            (user_key(), 0u64..40, kind(), prop::collection::vec(any::<u8>(), 0..8)),
            0..120,
        ),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let m = Arc::new(Memtable::new(0));
        let mut seen = HashSet::new();
        let mut reference = Vec::new();
        let mut range_tombstones = Vec::new();
        for (k, s, kind, v) in &entries {
            let inserted = m.insert(k, *s, *kind, v);
            if *kind == ValueKind::RangeDelete {
                // Range tombstones go to their own store, never to the point entries; empty
                // and inverted ranges are dropped.
                prop_assert_eq!(inserted, k < v);
                if inserted {
                    range_tombstones.push(RangeTombstone::new(k.clone(), v.clone(), *s));
                }
                continue;
            }
            let ikey = internal_key(k, *s, *kind);
            // The memtable keeps the first of duplicate internal keys.
            prop_assert_eq!(inserted, seen.insert(ikey.clone()));
            if inserted {
                reference.push((ikey, v.clone()));
            }
        }
        prop_assert_eq!(m.len(), reference.len());
        prop_assert_eq!(m.range_tombstones(), range_tombstones);
        let mut expected = VecIterator::new(reference);
        let mut actual = m.iter();

        // Full scans both ways.
        expected.seek_to_first()?;
        actual.seek_to_first()?;
        while expected.valid() {
            same(&actual, &expected)?;
            expected.next()?;
            actual.next()?;
        }
        same(&actual, &expected)?;
        expected.seek_to_last()?;
        actual.seek_to_last()?;
        while expected.valid() {
            same(&actual, &expected)?;
            expected.prev()?;
            actual.prev()?;
        }
        same(&actual, &expected)?;

        for op in ops {
            match op {
                Op::First => { expected.seek_to_first()?; actual.seek_to_first()?; }
                Op::Last => { expected.seek_to_last()?; actual.seek_to_last()?; }
                Op::Seek(k, t) => {
                    let t = target(&k, t);
                    expected.seek(&t)?;
                    actual.seek(&t)?;
                }
                Op::SeekForPrev(k, t) => {
                    let t = target(&k, t);
                    expected.seek_for_prev(&t)?;
                    actual.seek_for_prev(&t)?;
                }
                Op::Next => if expected.valid() { expected.next()?; actual.next()?; },
                Op::Prev => if expected.valid() { expected.prev()?; actual.prev()?; },
            }
            same(&actual, &expected)?;
        }
    }
}

#[test]
fn empty_memtable_iterator_is_never_valid() {
    let m = Arc::new(Memtable::new(0));
    let mut it = m.iter();
    assert!(!it.valid());
    it.seek_to_first().unwrap();
    assert!(!it.valid());
    it.seek_to_last().unwrap();
    assert!(!it.valid());
    it.seek(b"anything").unwrap();
    assert!(!it.valid());
    it.seek_for_prev(b"anything").unwrap();
    assert!(!it.valid());
    assert_eq!(it.key(), b"");
    assert_eq!(it.value(), b"");
}

#[test]
fn iterator_keeps_memtable_alive_and_sees_later_inserts() {
    let m = Arc::new(Memtable::new(3));
    m.insert(b"b", 1, ValueKind::Put, b"vb");
    let mut it = m.iter();
    assert!(Arc::ptr_eq(it.memtable(), &m));
    m.insert(b"a", 2, ValueKind::Put, b"va");
    drop(m);
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), internal_key(b"a", 2, ValueKind::Put).as_slice());
    assert_eq!(it.value(), b"va");
    it.next().unwrap();
    assert_eq!(it.value(), b"vb");
    it.next().unwrap();
    assert!(!it.valid());
}
