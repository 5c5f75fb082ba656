//! Property test for range deletes.
//!
//! Random sequences of puts, deletes, single deletes and range deletes (single writes and
//! inside batches), snapshots, point reads, bounded scans both ways, seeks and random walks
//! that switch direction, flushes, reopens and `compact_range`, checked against a `BTreeMap`
//! model after every read. Tiny write buffers and a tiny level base make flushes and leveled
//! compactions (with subcompactions) happen all the time, so range tombstones travel from
//! memtables to L0 tables and down the levels, get split between output files and dropped at
//! the bottom.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use riptide::{Db, Options, ReadOptions, Snapshot, SyncMode, WriteBatch};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// Keys written are `key(0..KEYS)`; reads and range bounds go a little beyond.
const KEYS: u8 = 40;
const PROBE: u8 = 45;

#[derive(Debug, Clone, Copy)]
struct Val {
    seed: u8,
    len: u16,
}

impl Val {
    fn bytes(self) -> Vec<u8> {
        (0..self.len)
            .map(|i| self.seed.wrapping_add((i % 251) as u8))
            .collect()
    }
}

#[derive(Debug, Clone)]
enum Write {
    Put(u8, Val),
    Delete(u8),
    /// A single delete where the contract allows it, otherwise a plain delete.
    SingleDelete(u8),
    /// `[key(a), key(b))`; empty when `a == b`.
    DeleteRange(u8, u8),
}

#[derive(Debug, Clone)]
enum Op {
    Write(Write),
    Batch(Vec<Write>),
    Get(u8),
    TakeSnapshot,
    ReadSnapshot(usize),
    ReleaseSnapshot(usize),
    Scan {
        from: Option<u8>,
        to: Option<u8>,
    },
    SeekForPrev(u8),
    Flush,
    Reopen,
    /// `compact_range` over `[key(a), key(b)]`, or everything.
    CompactRange(Option<(u8, u8)>),
    /// Seek to `start`, then step (`true` = next, `false` = prev), checking every position.
    Walk {
        start: u8,
        steps: Vec<bool>,
    },
}

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn write_strategy() -> impl Strategy<Value = Write> {
    prop_oneof![
        8 => (0u8..KEYS, any::<u8>(), 0u16..64)
            .prop_map(|(k, seed, len)| Write::Put(k, Val { seed, len })),
        2 => (0u8..KEYS).prop_map(Write::Delete),
        1 => (0u8..KEYS).prop_map(Write::SingleDelete),
        2 => (0u8..PROBE, 0u8..12).prop_map(|(a, n)| Write::DeleteRange(a, a.saturating_add(n).min(PROBE))),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => write_strategy().prop_map(Op::Write),
        4 => proptest::collection::vec(write_strategy(), 1..12).prop_map(Op::Batch),
        6 => (0u8..PROBE).prop_map(Op::Get),
        2 => Just(Op::TakeSnapshot),
        3 => any::<usize>().prop_map(Op::ReadSnapshot),
        1 => any::<usize>().prop_map(Op::ReleaseSnapshot),
        3 => (proptest::option::of(0u8..PROBE), proptest::option::of(0u8..PROBE))
            .prop_map(|(from, to)| Op::Scan { from, to }),
        2 => (0u8..PROBE).prop_map(Op::SeekForPrev),
        3 => (0u8..PROBE, proptest::collection::vec(any::<bool>(), 0..20))
            .prop_map(|(start, steps)| Op::Walk { start, steps }),
        2 => Just(Op::Flush),
        1 => Just(Op::Reopen),
        1 => proptest::option::of((0u8..PROBE, 0u8..12))
            .prop_map(|r| Op::CompactRange(r.map(|(a, n)| (a, a.saturating_add(n).min(PROBE))))),
    ]
}

/// Tiny memtables and levels: data (and range tombstones) move down all the time.
fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(2048)
        .max_immutable_memtables(2)
        .l0_compaction_trigger(2)
        .target_file_size(4096)
        .block_size(256)
        .max_bytes_for_level_base(8 * 1024)
        .level_size_ratio(4.0)
        .num_levels(5)
        .max_subcompactions(2)
        .tombstone_min_entries(20)
        .tombstone_coalesce_min_run(2)
}

/// Tracks each key's writes since its last single delete, to know when another single
/// delete keeps the contract. A range delete counts as a delete of every key it covers.
#[derive(Default)]
struct SingleDeleteGuard {
    contract: common::SingleDeleteContract,
}

impl SingleDeleteGuard {
    fn apply(&mut self, w: &Write, model: &mut Model, batch: &mut WriteBatch) {
        match w {
            Write::Put(k, v) => {
                self.contract.put(&key(*k));
                model.insert(key(*k), v.bytes());
                batch.put(&key(*k), &v.bytes());
            }
            Write::Delete(k) => {
                self.contract.delete(&key(*k));
                model.remove(&key(*k));
                batch.delete(&key(*k));
            }
            Write::SingleDelete(k) => {
                model.remove(&key(*k));
                if self.contract.single_delete(&key(*k)) {
                    batch.single_delete(&key(*k));
                } else {
                    batch.delete(&key(*k));
                }
            }
            Write::DeleteRange(a, b) => {
                for k in *a..*b {
                    self.contract.delete(&key(k));
                    model.remove(&key(k));
                }
                batch.delete_range(&key(*a), &key(*b));
            }
        }
    }
}

fn collect_forward(db: &Db, opts: ReadOptions<'_>) -> Entries {
    let mut out = Vec::new();
    let mut it = db.iter(opts).unwrap();
    it.seek_to_first().unwrap();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

fn collect_backward(db: &Db, opts: ReadOptions<'_>) -> Entries {
    let mut out = Vec::new();
    let mut it = db.iter(opts).unwrap();
    it.seek_to_last().unwrap();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev().unwrap();
    }
    out.reverse();
    out
}

fn bounded(lo: Option<u8>, hi: Option<u8>) -> ReadOptions<'static> {
    let mut o = ReadOptions::default();
    if let Some(l) = lo {
        o = o.lower_bound(key(l));
    }
    if let Some(h) = hi {
        o = o.upper_bound(key(h));
    }
    o
}

fn assert_same(actual: &[(Vec<u8>, Vec<u8>)], expected: &[(Vec<u8>, Vec<u8>)], what: &str) {
    if actual == expected {
        return;
    }
    let fmt = |e: &[(Vec<u8>, Vec<u8>)]| -> Vec<String> {
        e.iter()
            .map(|(k, v)| format!("{}={}", String::from_utf8_lossy(k), v.len()))
            .collect()
    };
    panic!(
        "{what}:\n  got      {:?}\n  expected {:?}",
        fmt(actual),
        fmt(expected)
    );
}

fn check_snapshot_view(db: &Db, snap: &Snapshot, model: &Model) {
    for k in 0u8..PROBE {
        let got = db
            .get_cf_opt(
                &db.default_cf(),
                &key(k),
                &ReadOptions::default().snapshot(snap),
            )
            .unwrap();
        assert!(
            got.as_ref() == model.get(&key(k)),
            "snapshot {} get of key {k}: got {:?} expected {:?}; versions {:?}",
            snap.seqno(),
            got.map(|v| v.len()),
            model.get(&key(k)).map(|v| v.len()),
            db.key_versions(&db.default_cf(), &key(k))
        );
    }
    let expected: Entries = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    let seen = collect_forward(db, ReadOptions::default().snapshot(snap));
    assert_same(&seen, &expected, "snapshot forward scan");
    let seen = collect_backward(db, ReadOptions::default().snapshot(snap));
    assert_same(&seen, &expected, "snapshot backward scan");
}

/// The model's answer for a cursor at `pos` (a key) moving one step.
fn model_step(model: &Model, pos: &[u8], forward: bool) -> Option<Vec<u8>> {
    if forward {
        model
            .range(pos.to_vec()..)
            .find(|(k, _)| k.as_slice() > pos)
            .map(|(k, _)| k.clone())
    } else {
        model
            .range(..pos.to_vec())
            .next_back()
            .map(|(k, _)| k.clone())
    }
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut handle = Some(Db::open(dir.path(), options()).unwrap());
    let mut model = Model::new();
    let mut guard = SingleDeleteGuard::default();
    let mut snapshots: Vec<(Snapshot, Model)> = Vec::new();
    for op in ops {
        let db = handle.as_ref().unwrap();
        match op {
            Op::Write(w) => {
                let mut b = WriteBatch::new();
                guard.apply(&w, &mut model, &mut b);
                db.write(b).unwrap();
            }
            Op::Batch(ws) => {
                let mut b = WriteBatch::new();
                for w in &ws {
                    guard.apply(w, &mut model, &mut b);
                }
                db.write(b).unwrap();
            }
            Op::Get(k) => {
                let got = db.get(&key(k)).unwrap();
                assert!(
                    got.as_ref() == model.get(&key(k)),
                    "get {k}: got {:?} expected {:?}; versions {:?}",
                    got.map(|v| v.len()),
                    model.get(&key(k)).map(|v| v.len()),
                    db.key_versions(&db.default_cf(), &key(k))
                );
            }
            Op::TakeSnapshot => snapshots.push((db.snapshot(), model.clone())),
            Op::ReadSnapshot(i) => {
                if !snapshots.is_empty() {
                    let (s, m) = &snapshots[i % snapshots.len()];
                    check_snapshot_view(db, s, m);
                }
            }
            Op::ReleaseSnapshot(i) => {
                if !snapshots.is_empty() {
                    let n = snapshots.len();
                    snapshots.remove(i % n);
                }
            }
            Op::Scan { from, to } => {
                let lo = from.map(key);
                let hi = to.map(key);
                let expected: Entries = model
                    .iter()
                    .filter(|(k, _)| lo.as_ref().is_none_or(|l| *k >= l))
                    .filter(|(k, _)| hi.as_ref().is_none_or(|h| *k < h))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let fwd = collect_forward(db, bounded(from, to));
                assert_same(&fwd, &expected, &format!("forward scan {from:?}..{to:?}"));
                let bwd = collect_backward(db, bounded(from, to));
                assert_same(&bwd, &expected, &format!("backward scan {from:?}..{to:?}"));
            }
            Op::SeekForPrev(k) => {
                let mut it = db.iter(ReadOptions::default()).unwrap();
                it.seek_for_prev(&key(k)).unwrap();
                let expected = model.range(..=key(k)).next_back();
                assert_eq!(
                    it.valid().then(|| (it.key().to_vec(), it.value().to_vec())),
                    expected.map(|(k, v)| (k.clone(), v.clone())),
                    "seek_for_prev {k}"
                );
            }
            Op::Walk { start, steps } => {
                let mut it = db.iter(ReadOptions::default()).unwrap();
                it.seek(&key(start)).unwrap();
                let mut pos = model.range(key(start)..).next().map(|(k, _)| k.clone());
                assert_eq!(it.valid().then(|| it.key().to_vec()), pos, "seek {start}");
                for forward in steps {
                    let Some(p) = pos.clone() else { break };
                    if forward {
                        it.next().unwrap();
                    } else {
                        it.prev().unwrap();
                    }
                    pos = model_step(&model, &p, forward);
                    assert_eq!(
                        it.valid().then(|| it.key().to_vec()),
                        pos,
                        "walk from {start}: step {} after {}",
                        if forward { "next" } else { "prev" },
                        String::from_utf8_lossy(&p)
                    );
                    if let Some(p) = &pos {
                        assert_eq!(it.value(), model[p].as_slice());
                    }
                }
            }
            Op::Flush => db.flush().unwrap(),
            Op::Reopen => {
                snapshots.clear();
                handle.take().unwrap().close().unwrap();
                handle = Some(Db::open(dir.path(), options()).unwrap());
            }
            Op::CompactRange(range) => {
                let range = range.map(|(a, b)| (key(a), key(b)));
                db.compact_range(
                    &db.default_cf(),
                    range.as_ref().map(|(a, b)| (a.as_slice(), b.as_slice())),
                )
                .unwrap();
                // Every snapshot still reads what it read.
                if let Some((s, m)) = snapshots.last() {
                    check_snapshot_view(db, s, m);
                }
            }
        }
    }
    let db = handle.as_ref().unwrap();
    let expected: Entries = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_same(
        &collect_forward(db, ReadOptions::default()),
        &expected,
        "final forward scan",
    );
    assert_same(
        &collect_backward(db, ReadOptions::default()),
        &expected,
        "final backward scan",
    );
    snapshots.clear();
    handle.take().unwrap().close().unwrap();
    // Once more after a final reopen, and after compacting everything to the bottom.
    let db = Db::open(dir.path(), options()).unwrap();
    assert_same(
        &collect_forward(&db, ReadOptions::default()),
        &expected,
        "after the final reopen",
    );
    db.compact_range(&db.default_cf(), None).unwrap();
    assert_same(
        &collect_forward(&db, ReadOptions::default()),
        &expected,
        "after compacting everything",
    );
    assert_same(
        &collect_backward(&db, ReadOptions::default()),
        &expected,
        "backward after compacting everything",
    );
    for k in 0u8..PROBE {
        assert_eq!(
            db.get(&key(k)).unwrap().as_ref(),
            expected_get(&expected, k),
            "key {k} after compacting everything"
        );
    }
    db.close().unwrap();
}

fn expected_get(expected: &Entries, k: u8) -> Option<&Vec<u8>> {
    expected
        .iter()
        .find(|(kk, _)| kk == &key(k))
        .map(|(_, v)| v)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("RIPTIDE_MODEL_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96), max_shrink_iters: 4000, .. ProptestConfig::default() })]

    #[test]
    fn range_deletes_match_btreemap_model(ops in proptest::collection::vec(op_strategy(), 1..200)) {
        run(ops);
    }
}
