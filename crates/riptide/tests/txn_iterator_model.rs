//! Property test of [`riptide::TxnIterator`] against a `BTreeMap` model: the database is
//! filled with random puts and deletes (some flushed to tables), a repeatable-read
//! transaction takes its snapshot, more writes land outside it (invisible to it), and it makes
//! random puts and deletes of its own. Then forward and backward scans, seeks, `seek_for_prev`
//! and mixed `next`/`prev` walks, within random bounds, must match the model: the database at
//! the snapshot overlaid with the transaction's writes. Writes the transaction makes while an
//! iterator is open must be seen by it after a re-seek.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeMap;

use proptest::prelude::*;
use riptide::{
    Concurrency, Db, IsolationLevel, Options, ReadOptions, SyncMode, TransactionOptions,
    TxnIterator,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const KEYS: u8 = 40;

fn key(k: u8) -> Vec<u8> {
    format!("k{k:03}").into_bytes()
}

/// A seek target: a key, or (`between`) a key strictly between key `k` and key `k + 1`.
#[derive(Debug, Clone, Copy)]
struct Target {
    k: u8,
    between: bool,
}

impl Target {
    fn bytes(self) -> Vec<u8> {
        let mut b = key(self.k);
        if self.between {
            b.push(b'm');
        }
        b
    }
}

fn target() -> impl Strategy<Value = Target> {
    // A little beyond the key range on both sides.
    (0u8..KEYS + 2, any::<bool>()).prop_map(|(k, between)| Target { k, between })
}

#[derive(Debug, Clone)]
enum DbOp {
    Put(u8, u8),
    Delete(u8),
    Flush,
}

#[derive(Debug, Clone)]
enum TxnOp {
    Put(u8, u8),
    Delete(u8),
}

#[derive(Debug, Clone, Copy)]
enum Start {
    First,
    Last,
    Seek(Target),
    SeekForPrev(Target),
}

#[derive(Debug, Clone)]
enum Check {
    Forward,
    Backward,
    Seek(Target),
    SeekForPrev(Target),
    /// From `start`, a walk of `next` (true) and `prev` (false) steps.
    Walk(Start, Vec<bool>),
    /// With an iterator open and positioned at `start`, the transaction writes; a re-seek to
    /// the same place must see the writes.
    WriteWhileOpen(Start, Vec<TxnOp>),
}

fn db_op() -> impl Strategy<Value = DbOp> {
    prop_oneof![
        6 => (0..KEYS, any::<u8>()).prop_map(|(k, v)| DbOp::Put(k, v)),
        2 => (0..KEYS).prop_map(DbOp::Delete),
        1 => Just(DbOp::Flush),
    ]
}

fn txn_op() -> impl Strategy<Value = TxnOp> {
    prop_oneof![
        3 => (0..KEYS, any::<u8>()).prop_map(|(k, v)| TxnOp::Put(k, v)),
        2 => (0..KEYS).prop_map(TxnOp::Delete),
    ]
}

fn start() -> impl Strategy<Value = Start> {
    prop_oneof![
        Just(Start::First),
        Just(Start::Last),
        target().prop_map(Start::Seek),
        target().prop_map(Start::SeekForPrev),
    ]
}

fn check() -> impl Strategy<Value = Check> {
    prop_oneof![
        1 => Just(Check::Forward),
        1 => Just(Check::Backward),
        2 => target().prop_map(Check::Seek),
        2 => target().prop_map(Check::SeekForPrev),
        3 => (start(), proptest::collection::vec(any::<bool>(), 1..30))
            .prop_map(|(s, m)| Check::Walk(s, m)),
        2 => (start(), proptest::collection::vec(txn_op(), 1..8))
            .prop_map(|(s, w)| Check::WriteWhileOpen(s, w)),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    before: Vec<DbOp>,
    /// Writes committed after the transaction's snapshot: it must not see them.
    outside: Vec<DbOp>,
    txn: Vec<TxnOp>,
    lower: Option<Target>,
    upper: Option<Target>,
    pessimistic: bool,
    checks: Vec<Check>,
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::collection::vec(db_op(), 0..80),
        proptest::collection::vec(db_op(), 0..12),
        proptest::collection::vec(txn_op(), 0..40),
        proptest::option::weighted(0.4, target()),
        proptest::option::weighted(0.4, target()),
        any::<bool>(),
        proptest::collection::vec(check(), 1..12),
    )
        .prop_map(
            |(before, outside, txn, lower, upper, pessimistic, checks)| {
                // Keep lower <= upper (an inverted range is not what this test is about).
                let (lower, upper) = match (lower, upper) {
                    (Some(l), Some(u)) if l.bytes() > u.bytes() => (Some(u), Some(l)),
                    other => other,
                };
                Case {
                    before,
                    outside,
                    txn,
                    lower,
                    upper,
                    pessimistic,
                    checks,
                }
            },
        )
}

fn value(k: u8, v: u8, origin: &str) -> Vec<u8> {
    format!("{origin}-{k}-{v}").into_bytes()
}

fn apply_db(db: &Db, model: Option<&mut Model>, op: &DbOp) {
    let mut scratch = Model::new();
    let model = model.unwrap_or(&mut scratch);
    match *op {
        DbOp::Put(k, v) => {
            db.put(&key(k), &value(k, v, "db")).unwrap();
            model.insert(key(k), value(k, v, "db"));
        }
        DbOp::Delete(k) => {
            db.delete(&key(k)).unwrap();
            model.remove(&key(k));
        }
        DbOp::Flush => db.flush().unwrap(),
    }
}

/// Applies a transaction write to the transaction and the model. A pessimistic write of a
/// key written outside the transaction after its snapshot fails with `Conflict` (and changes
/// nothing), unless it is a delete and the newer version is a delete too.
fn apply_txn(
    txn: &riptide::Transaction,
    cf: &riptide::ColumnFamily,
    model: &mut Model,
    outside: &BTreeMap<Vec<u8>, bool>,
    op: &TxnOp,
) -> Result<(), TestCaseError> {
    let (k, result) = match *op {
        TxnOp::Put(k, v) => (k, txn.put(cf, &key(k), &value(k, v, "txn"))),
        TxnOp::Delete(k) => (k, txn.delete(cf, &key(k))),
    };
    match result {
        Ok(()) => match *op {
            TxnOp::Put(k, v) => {
                model.insert(key(k), value(k, v, "txn"));
            }
            TxnOp::Delete(k) => {
                model.remove(&key(k));
            }
        },
        Err(e) => {
            let newer_is_delete = outside.get(&key(k)).copied();
            let expected = e.kind() == riptide::ErrorKind::Conflict
                && match op {
                    TxnOp::Put(..) => newer_is_delete.is_some(),
                    TxnOp::Delete(_) => newer_is_delete == Some(false),
                };
            prop_assert!(expected, "{:?} failed: {}", op, e);
        }
    }
    Ok(())
}

/// The model's entries within the bounds, in order.
fn visible(
    model: &Model,
    lower: &Option<Vec<u8>>,
    upper: &Option<Vec<u8>>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .filter(|(k, _)| lower.as_ref().is_none_or(|l| *k >= l))
        .filter(|(k, _)| upper.as_ref().is_none_or(|u| *k < u))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Where `start` puts a cursor over `entries` (None: not valid).
fn model_start(entries: &[(Vec<u8>, Vec<u8>)], start: Start) -> Option<usize> {
    match start {
        Start::First => (!entries.is_empty()).then_some(0),
        Start::Last => entries.len().checked_sub(1),
        Start::Seek(t) => {
            let t = t.bytes();
            let i = entries.partition_point(|(k, _)| *k < t);
            (i < entries.len()).then_some(i)
        }
        Start::SeekForPrev(t) => {
            let t = t.bytes();
            entries.partition_point(|(k, _)| *k <= t).checked_sub(1)
        }
    }
}

fn iter_start(it: &mut TxnIterator, start: Start) {
    match start {
        Start::First => it.seek_to_first().unwrap(),
        Start::Last => it.seek_to_last().unwrap(),
        Start::Seek(t) => it.seek(&t.bytes()).unwrap(),
        Start::SeekForPrev(t) => it.seek_for_prev(&t.bytes()).unwrap(),
    }
}

/// The iterator's position as (key, value), None when not valid.
fn at(it: &TxnIterator) -> Option<(Vec<u8>, Vec<u8>)> {
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

fn expect_at(entries: &[(Vec<u8>, Vec<u8>)], pos: Option<usize>) -> Option<(Vec<u8>, Vec<u8>)> {
    pos.map(|i| entries[i].clone())
}

/// Displays keys readably in failure messages.
fn show(e: &Option<(Vec<u8>, Vec<u8>)>) -> String {
    match e {
        None => "<invalid>".into(),
        Some((k, v)) => format!(
            "{}={}",
            String::from_utf8_lossy(k),
            String::from_utf8_lossy(v)
        ),
    }
}

/// Walks from `start` with `moves` on both the iterator and the model, comparing each step.
fn walk(
    it: &mut TxnIterator,
    entries: &[(Vec<u8>, Vec<u8>)],
    start: Start,
    moves: &[bool],
) -> Result<(), TestCaseError> {
    iter_start(it, start);
    let mut pos = model_start(entries, start);
    prop_assert_eq!(
        show(&at(it)),
        show(&expect_at(entries, pos)),
        "after {:?}",
        start
    );
    for (step, &forward) in moves.iter().enumerate() {
        if forward {
            it.next().unwrap();
            pos = pos.and_then(|i| (i + 1 < entries.len()).then_some(i + 1));
        } else {
            it.prev().unwrap();
            pos = pos.and_then(|i| i.checked_sub(1));
        }
        prop_assert_eq!(
            show(&at(it)),
            show(&expect_at(entries, pos)),
            "step {} ({}) of a walk from {:?}: {:?}",
            step,
            if forward { "next" } else { "prev" },
            start,
            moves
        );
    }
    Ok(())
}

fn run(case: &Case) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options::default()
            .sync_mode(SyncMode::None)
            .write_buffer_size(16 * 1024),
    )
    .unwrap();
    let cf = db.default_cf();
    let mut model = Model::new();
    for op in &case.before {
        apply_db(&db, Some(&mut model), op);
    }
    let mode = if case.pessimistic {
        Concurrency::Pessimistic
    } else {
        Concurrency::Optimistic
    };
    let txn = db
        .begin_transaction(
            TransactionOptions::default()
                .isolation(IsolationLevel::RepeatableRead)
                .concurrency(mode)
                .snapshot_at_begin(true),
        )
        .unwrap();
    // Keys written outside the transaction after its snapshot: whether the newest write
    // deletes them. Only pessimistic writes see these (optimistic ones would fail at commit).
    let mut outside = BTreeMap::new();
    for op in &case.outside {
        apply_db(&db, None, op);
        if case.pessimistic {
            match *op {
                DbOp::Put(k, _) => outside.insert(key(k), false),
                DbOp::Delete(k) => outside.insert(key(k), true),
                DbOp::Flush => None,
            };
        }
    }
    for op in &case.txn {
        apply_txn(&txn, &cf, &mut model, &outside, op)?;
    }

    let lower = case.lower.map(Target::bytes);
    let upper = case.upper.map(Target::bytes);
    let read_opts = || {
        let mut o = ReadOptions::default();
        if let Some(l) = &lower {
            o = o.lower_bound(l.clone());
        }
        if let Some(u) = &upper {
            o = o.upper_bound(u.clone());
        }
        o
    };
    for check in &case.checks {
        let entries = visible(&model, &lower, &upper);
        let mut it = txn.iter(&cf, read_opts()).unwrap();
        match check {
            Check::Forward => {
                it.seek_to_first().unwrap();
                let mut got = Vec::new();
                while it.valid() {
                    got.push((it.key().to_vec(), it.value().to_vec()));
                    it.next().unwrap();
                }
                prop_assert_eq!(&got, &entries, "forward scan");
            }
            Check::Backward => {
                it.seek_to_last().unwrap();
                let mut got = Vec::new();
                while it.valid() {
                    got.push((it.key().to_vec(), it.value().to_vec()));
                    it.prev().unwrap();
                }
                got.reverse();
                prop_assert_eq!(&got, &entries, "backward scan");
            }
            Check::Seek(t) => {
                // A seek, then the rest of the range forward.
                let moves = vec![true; entries.len() + 1];
                walk(&mut it, &entries, Start::Seek(*t), &moves)?;
            }
            Check::SeekForPrev(t) => {
                let moves = vec![false; entries.len() + 1];
                walk(&mut it, &entries, Start::SeekForPrev(*t), &moves)?;
            }
            Check::Walk(start, moves) => walk(&mut it, &entries, *start, moves)?,
            Check::WriteWhileOpen(start, writes) => {
                iter_start(&mut it, *start);
                prop_assert_eq!(
                    show(&at(&it)),
                    show(&expect_at(&entries, model_start(&entries, *start))),
                    "before writing, at {:?}",
                    start
                );
                for op in writes {
                    apply_txn(&txn, &cf, &mut model, &outside, op)?;
                }
                let entries = visible(&model, &lower, &upper);
                let forward = vec![true; entries.len() + 1];
                walk(&mut it, &entries, *start, &forward)?;
                let backward = vec![false; entries.len() + 1];
                walk(&mut it, &entries, *start, &backward)?;
            }
        }
    }
    txn.rollback().unwrap();
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 4000, max_global_rejects: 1 << 20, .. ProptestConfig::default() })]

    /// The model test.
    #[test]
    fn txn_iterator_matches_the_model(case in case()) {
        run(&case)?;
    }
}

fn scratch_db() -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    (dir, db)
}

/// Minimal reproduction: the transaction wrote `a` and `c`, the iterator's upper bound is `b`.
/// `seek_to_last` and `seek_for_prev(c)` must land on `a`; they find the buffered `c` (the
/// last buffered key, or the last at or before the target), see it is out of bounds and give
/// up on the buffer instead of looking below the bound.
#[test]
fn txn_iterator_backward_positioning_finds_own_writes_below_the_upper_bound() {
    let (_dir, db) = scratch_db();
    let cf = db.default_cf();
    let txn = db.begin_transaction(TransactionOptions::default()).unwrap();
    txn.put(&cf, b"a", b"1").unwrap();
    txn.put(&cf, b"c", b"3").unwrap();
    let mut it = txn
        .iter(&cf, ReadOptions::default().upper_bound("b"))
        .unwrap();
    it.seek_to_last().unwrap();
    assert_eq!(
        at(&it),
        Some((b"a".to_vec(), b"1".to_vec())),
        "seek_to_last"
    );
    it.seek_for_prev(b"c").unwrap();
    assert_eq!(
        at(&it),
        Some((b"a".to_vec(), b"1".to_vec())),
        "seek_for_prev(c)"
    );
}

/// Minimal reproduction: with a lower bound of `b`, `seek_for_prev(a)` must find nothing; it
/// lands on the live key `a` below the bound. The database iterator does it too (its
/// `seek_for_prev` checks whether the target itself is live without checking the lower
/// bound), and the transaction iterator inherits it.
#[test]
fn seek_for_prev_below_the_lower_bound_finds_nothing() {
    let (_dir, db) = scratch_db();
    let cf = db.default_cf();
    db.put(b"a", b"1").unwrap();
    db.put(b"b", b"2").unwrap();
    let mut it = db.iter(ReadOptions::default().lower_bound("b")).unwrap();
    it.seek_for_prev(b"a").unwrap();
    assert!(!it.valid(), "db iterator: landed on {:?}", it.key());
    let txn = db.begin_transaction(TransactionOptions::default()).unwrap();
    let mut it = txn
        .iter(&cf, ReadOptions::default().lower_bound("b"))
        .unwrap();
    it.seek_for_prev(b"a").unwrap();
    assert_eq!(at(&it), None, "transaction iterator");
}
