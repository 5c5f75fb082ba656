#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! Random writes, lock records and nested savepoints (set, roll back, release) on a
//! [`WriteBuffer`], checked after every step against a model that clones a plain map at each
//! savepoint: rollback must restore exactly the pre-savepoint state.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

use proptest::prelude::*;
use riptide_common::ErrorKind;
use riptide_txn::{BufferedOp, ENTRY_OVERHEAD_BYTES, LockKey, LockMode, WriteBuffer};

type Entries = BTreeMap<(u32, Vec<u8>), BufferedOp>;
type Locks = BTreeMap<(u32, Vec<u8>), LockMode>;

#[derive(Debug, Clone)]
enum Op {
    Put(u32, Vec<u8>, Vec<u8>),
    Delete(u32, Vec<u8>),
    SingleDelete(u32, Vec<u8>),
    Lock(u32, Vec<u8>, LockMode),
    SetSavepoint,
    Rollback,
    Release,
    /// Release of the savepoint at (this modulo the open count) from the outermost, keeping
    /// the later ones.
    ReleaseAt(usize),
    Seek(u32, Vec<u8>),
    Range(u32, Bound<Vec<u8>>, Bound<Vec<u8>>),
}

fn cf() -> impl Strategy<Value = u32> {
    0u32..3
}

/// Few short keys, so writes collide often.
fn key() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0u8..4, 0..3)
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        Just(Bound::Unbounded),
        key().prop_map(Bound::Included),
        key().prop_map(Bound::Excluded),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (cf(), key(), prop::collection::vec(any::<u8>(), 0..8))
            .prop_map(|(c, k, v)| Op::Put(c, k, v)),
        2 => (cf(), key()).prop_map(|(c, k)| Op::Delete(c, k)),
        1 => (cf(), key()).prop_map(|(c, k)| Op::SingleDelete(c, k)),
        2 => (cf(), key(), prop_oneof![Just(LockMode::Shared), Just(LockMode::Exclusive)])
            .prop_map(|(c, k, m)| Op::Lock(c, k, m)),
        2 => Just(Op::SetSavepoint),
        2 => Just(Op::Rollback),
        1 => Just(Op::Release),
        1 => any::<usize>().prop_map(Op::ReleaseAt),
        2 => (cf(), key()).prop_map(|(c, k)| Op::Seek(c, k)),
        1 => (cf(), bound(), bound()).prop_map(|(c, l, u)| Op::Range(c, l, u)),
    ]
}

#[derive(Default)]
struct Model {
    entries: Entries,
    locks: Locks,
    /// The state at each open savepoint.
    savepoints: Vec<(Entries, Locks)>,
}

fn snapshot(buf: &WriteBuffer) -> Entries {
    buf.iter_all()
        .map(|(cf, k, op)| ((cf, k.to_vec()), op.clone()))
        .collect()
}

fn lock_snapshot(buf: &WriteBuffer) -> Locks {
    buf.locked_keys()
        .map(|(cf, k, m)| ((cf, k.to_vec()), m))
        .collect()
}

fn model_range(model: &Entries, cf: u32, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Vec<Vec<u8>> {
    model
        .keys()
        .filter(|(c, _)| *c == cf)
        .map(|(_, k)| k.clone())
        .filter(|k| match lower {
            Bound::Included(l) => k.as_slice() >= l,
            Bound::Excluded(l) => k.as_slice() > l,
            Bound::Unbounded => true,
        })
        .filter(|k| match upper {
            Bound::Included(u) => k.as_slice() <= u,
            Bound::Excluded(u) => k.as_slice() < u,
            Bound::Unbounded => true,
        })
        .collect()
}

fn check_step(buf: &WriteBuffer, model: &Model) {
    assert_eq!(snapshot(buf), model.entries);
    assert_eq!(lock_snapshot(buf), model.locks);
    assert_eq!(buf.len(), model.entries.len());
    assert_eq!(buf.is_empty(), model.entries.is_empty());
    assert_eq!(buf.num_locked_keys(), model.locks.len());
    assert_eq!(buf.savepoint_depth(), model.savepoints.len());
    for ((cf, k), op) in &model.entries {
        assert_eq!(buf.get(*cf, k), Some(op));
    }
    let live: usize = model
        .entries
        .iter()
        .map(|((_, k), op)| k.len() + op.value().map_or(0, <[u8]>::len) + ENTRY_OVERHEAD_BYTES)
        .chain(
            model
                .locks
                .keys()
                .map(|(_, k)| k.len() + ENTRY_OVERHEAD_BYTES),
        )
        .sum();
    if model.savepoints.is_empty() {
        assert_eq!(buf.approximate_bytes(), live);
    } else {
        assert!(buf.approximate_bytes() >= live);
    }
}

fn run(ops: Vec<Op>) {
    let mut buf = WriteBuffer::new();
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Put(cf, k, v) => {
                buf.put(cf, &k, &v);
                // A put over a deletion remembers it (the commit writes both).
                let op = match model.entries.get(&(cf, k.clone())) {
                    Some(BufferedOp::Delete) => BufferedOp::PutAfterDelete {
                        value: v,
                        single: false,
                    },
                    Some(BufferedOp::SingleDelete) => BufferedOp::PutAfterDelete {
                        value: v,
                        single: true,
                    },
                    Some(BufferedOp::PutAfterDelete { single, .. }) => BufferedOp::PutAfterDelete {
                        value: v,
                        single: *single,
                    },
                    _ => BufferedOp::Put(v),
                };
                model.entries.insert((cf, k), op);
            }
            Op::Delete(cf, k) => {
                buf.delete(cf, &k);
                model.entries.insert((cf, k), BufferedOp::Delete);
            }
            Op::SingleDelete(cf, k) => {
                buf.single_delete(cf, &k);
                model.entries.insert((cf, k), BufferedOp::SingleDelete);
            }
            Op::Lock(cf, k, mode) => {
                let was_locked = model.locks.contains_key(&(cf, k.clone()));
                assert_eq!(buf.record_lock(cf, &k, mode), !was_locked);
                let held = model.locks.entry((cf, k)).or_insert(mode);
                *held = (*held).max(mode);
            }
            Op::SetSavepoint => {
                buf.set_savepoint();
                model
                    .savepoints
                    .push((model.entries.clone(), model.locks.clone()));
            }
            Op::Rollback => match model.savepoints.pop() {
                Some((entries, locks_before)) => {
                    let released = buf.rollback_to_savepoint().unwrap();
                    let released: BTreeSet<(u32, Vec<u8>)> = released
                        .iter()
                        .map(|l: &LockKey| (l.cf(), l.key().to_vec()))
                        .collect();
                    let expected: BTreeSet<(u32, Vec<u8>)> = model
                        .locks
                        .keys()
                        .filter(|k| !locks_before.contains_key(*k))
                        .cloned()
                        .collect();
                    assert_eq!(released, expected);
                    model.entries = entries;
                    model.locks.retain(|k, _| locks_before.contains_key(k));
                }
                None => {
                    let err = buf.rollback_to_savepoint().unwrap_err();
                    assert_eq!(err.kind(), ErrorKind::NotFound);
                }
            },
            Op::Release => match model.savepoints.pop() {
                Some(_) => buf.pop_savepoint().unwrap(),
                None => {
                    assert_eq!(buf.pop_savepoint().unwrap_err().kind(), ErrorKind::NotFound);
                }
            },
            Op::ReleaseAt(i) => {
                let open = model.savepoints.len();
                if open == 0 {
                    assert_eq!(
                        buf.remove_savepoint(i % 4).unwrap_err().kind(),
                        ErrorKind::NotFound
                    );
                } else {
                    // Rolling back to a later savepoint still restores its state; to an
                    // earlier one, that one's: the released one's state is simply gone.
                    let at = i % open;
                    buf.remove_savepoint(at).unwrap();
                    model.savepoints.remove(at);
                    assert_eq!(
                        buf.remove_savepoint(open - 1).unwrap_err().kind(),
                        ErrorKind::NotFound
                    );
                }
                assert_eq!(buf.savepoint_depth(), model.savepoints.len());
            }
            Op::Seek(cf, k) => {
                let all = model_range(&model.entries, cf, Bound::Unbounded, Bound::Unbounded);
                let key_of = |e: Option<(&[u8], &BufferedOp)>| e.map(|(k, _)| k.to_vec());
                assert_eq!(
                    key_of(buf.seek_ge(cf, &k)),
                    all.iter().find(|x| **x >= k).cloned()
                );
                assert_eq!(
                    key_of(buf.next_after(cf, &k)),
                    all.iter().find(|x| **x > k).cloned()
                );
                assert_eq!(
                    key_of(buf.seek_le(cf, &k)),
                    all.iter().rev().find(|x| **x <= k).cloned()
                );
                assert_eq!(
                    key_of(buf.prev_before(cf, &k)),
                    all.iter().rev().find(|x| **x < k).cloned()
                );
                assert_eq!(key_of(buf.first(cf)), all.first().cloned());
                assert_eq!(key_of(buf.last(cf)), all.last().cloned());
            }
            Op::Range(cf, lower, upper) => {
                let (l, u) = (
                    lower.as_ref().map(Vec::as_slice),
                    upper.as_ref().map(Vec::as_slice),
                );
                let expected = model_range(&model.entries, cf, l, u);
                let forward: Vec<Vec<u8>> = buf.range(cf, l, u).map(|(k, _)| k.to_vec()).collect();
                assert_eq!(forward, expected);
                let mut backward: Vec<Vec<u8>> =
                    buf.range(cf, l, u).rev().map(|(k, _)| k.to_vec()).collect();
                backward.reverse();
                assert_eq!(backward, expected);
            }
        }
        check_step(&buf, &model);
    }
    // Unwinding every savepoint by rollback returns to the state before the first one.
    while let Some((entries, _)) = model.savepoints.pop() {
        buf.rollback_to_savepoint().unwrap();
        assert_eq!(snapshot(&buf), entries);
    }
    buf.clear();
    assert!(buf.is_empty());
    assert_eq!(buf.approximate_bytes(), 0);
    assert_eq!(buf.num_locked_keys(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn write_buffer_matches_model(ops in prop::collection::vec(op(), 0..120)) {
        run(ops);
    }
}

#[test]
fn deeply_nested_savepoints_restore_each_level() {
    let mut buf = WriteBuffer::new();
    let mut levels = Vec::new();
    for i in 0u8..50 {
        levels.push(snapshot(&buf));
        buf.set_savepoint();
        buf.put(0, &[i % 7], &[i]);
        buf.delete(1, &[i % 5]);
    }
    while let Some(expected) = levels.pop() {
        buf.rollback_to_savepoint().unwrap();
        assert_eq!(snapshot(&buf), expected);
    }
    assert!(buf.is_empty());
    assert_eq!(buf.approximate_bytes(), 0);
}
