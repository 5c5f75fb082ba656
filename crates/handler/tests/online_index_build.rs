//! Online index builds (`HandlerEngine::capture_build_changes`; MariaDB's `ALTER TABLE ...
//! ADD INDEX, LOCK=NONE`): writes made while the build reads its snapshot reach the new
//! index through the changed rows the table records, whatever they did (insert, update in
//! place, a new primary key, delete, a rollback); a unique build is refused; a bulk load
//! that holds rows of the table is refused, and one that begins during the build writes the
//! ordinary way; the record stops when the build ends.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::*;
use riptide::ErrorKind;
use riptide_handler::{
    BuildCheck, HandlerEngine, IndexBuild, IndexSlot, NewIndex, RowLock, Session, SessionOptions,
    Table,
};

/// A table `t` (primary key + secondary `a`) with rows `pk` -> row `[pk % 10]` for pk in
/// `0..n` (pk as 4 big-endian bytes); `a` is `a<pk % 3>`.
fn table_with_rows(engine: &HandlerEngine, n: u32) -> Arc<Table> {
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for pk in 0..n {
        insert(&mut s, &t, pk, u8::try_from(pk % 10).unwrap());
    }
    s.commit().unwrap();
    t
}

fn a_key(pk: u32) -> Vec<u8> {
    format!("a{}", pk % 3).into_bytes()
}

fn insert(s: &mut Session, t: &Arc<Table>, pk: u32, value: u8) {
    s.insert(t, &pk.to_be_bytes(), &[k(&a_key(pk))], &[value])
        .unwrap();
}

/// The new index `b`'s key of a row: a NULL-indicator byte and the row's one byte.
fn b_key(row: &[u8]) -> Vec<u8> {
    vec![1, row[0]]
}

fn new_b() -> NewIndex {
    NewIndex {
        spec: secondary("b", false),
        null_offsets: vec![],
    }
}

/// What the caller of an online build does at its end: for each changed row, the new
/// index's key at the build's snapshot (`snap`) and now.
fn apply_changes(engine: &HandlerEngine, t: &Table, build: &mut IndexBuild, snap: &Session) {
    let now = engine.begin_session(SessionOptions::default()).unwrap();
    let n = build.take_changed_rows().unwrap();
    for i in 0..n {
        let pk = build.changed_row(i).unwrap().to_vec();
        let old = snap
            .get_row(t, &pk, RowLock::None)
            .unwrap()
            .map(|r| b_key(&r));
        let new = now
            .get_row(t, &pk, RowLock::None)
            .unwrap()
            .map(|r| b_key(&r));
        build
            .apply_change(0, old.as_deref(), new.as_deref(), &pk)
            .unwrap();
    }
}

fn commit(engine: &HandlerEngine, build: IndexBuild) -> Arc<Table> {
    engine
        .commit_index_build(
            build,
            &[
                IndexSlot::Existing(0),
                IndexSlot::Existing(1),
                IndexSlot::New(0),
            ],
            b"",
        )
        .unwrap()
}

/// Every (b key, pk) the table's rows should have in index `b`.
fn expected_b(engine: &HandlerEngine, t: &Table) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = index_entries(engine, t, 0)
        .into_iter()
        .map(|(pk, row)| (b_key(&row), pk))
        .collect();
    out.sort();
    out
}

#[test]
fn writes_during_an_online_build_reach_the_new_index() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 100);
    let mut build = engine.begin_index_build(b"t", &[new_b()]).unwrap();
    engine.capture_build_changes(&mut build).unwrap();
    assert!(t.is_capturing_changes());
    // The build's snapshot: writers go on after it.
    let snap = engine
        .begin_session(SessionOptions {
            snapshot_at_begin: true,
            ..SessionOptions::default()
        })
        .unwrap();
    let mut w = engine.begin_session(SessionOptions::default()).unwrap();
    insert(&mut w, &t, 200, 7);
    // Row 5 changes its value (so its `b` key), row 6 moves to primary key 300, row 7 goes,
    // row 9 is rewritten with the value it had.
    w.update(
        &t,
        &5u32.to_be_bytes(),
        &[k(&a_key(5))],
        &5u32.to_be_bytes(),
        &[k(&a_key(5))],
        &[9],
        None,
    )
    .unwrap();
    w.update(
        &t,
        &6u32.to_be_bytes(),
        &[k(&a_key(6))],
        &300u32.to_be_bytes(),
        &[k(&a_key(300))],
        &[6],
        None,
    )
    .unwrap();
    w.delete(&t, &7u32.to_be_bytes(), &[k(&a_key(7))]).unwrap();
    w.update(
        &t,
        &9u32.to_be_bytes(),
        &[k(&a_key(9))],
        &9u32.to_be_bytes(),
        &[k(&a_key(9))],
        &[9],
        None,
    )
    .unwrap();
    w.commit().unwrap();
    drop(w);
    // A transaction that rolls back changes nothing, though its row is recorded.
    let mut r = engine.begin_session(SessionOptions::default()).unwrap();
    r.delete(&t, &8u32.to_be_bytes(), &[k(&a_key(8))]).unwrap();
    r.rollback().unwrap();
    // The build reads the rows at its snapshot.
    for (pk, row) in index_rows_at(&snap, &t) {
        build.add(0, &b_key(&row), &pk).unwrap();
    }
    assert_eq!(build.finish().unwrap(), BuildCheck::Unique);
    assert_eq!(build.entries(), 100);
    // One more write after the finish, before the writers are kept out.
    let mut w = engine.begin_session(SessionOptions::default()).unwrap();
    insert(&mut w, &t, 201, 3);
    w.commit().unwrap();
    let now = engine.begin_session(SessionOptions::default()).unwrap();
    let n = build.take_changed_rows().unwrap();
    let changed: BTreeSet<u32> = (0..n)
        .map(|i| u32::from_be_bytes(build.changed_row(i).unwrap().try_into().unwrap()))
        .collect();
    assert_eq!(changed, BTreeSet::from([5, 6, 7, 8, 9, 200, 201, 300]));
    for i in 0..n {
        let pk = build.changed_row(i).unwrap().to_vec();
        let old = snap
            .get_row(&t, &pk, RowLock::None)
            .unwrap()
            .map(|r| b_key(&r));
        let new = now
            .get_row(&t, &pk, RowLock::None)
            .unwrap()
            .map(|r| b_key(&r));
        build
            .apply_change(0, old.as_deref(), new.as_deref(), &pk)
            .unwrap();
    }
    drop((snap, now, w, r));
    let t2 = commit(&engine, build);
    assert!(!t.is_capturing_changes(), "the record stops with the build");
    assert!(t.is_dropped(), "the old definition is replaced");
    let entries = index_entries(&engine, &t2, 2);
    assert_eq!(entries.len(), 101);
    assert_eq!(entries, expected_b(&engine, &t2));
    assert!(entries.contains(&(vec![1, 9], 5u32.to_be_bytes().to_vec())));
    assert!(!entries.contains(&(vec![1, 5], 5u32.to_be_bytes().to_vec())));
    assert!(entries.contains(&(vec![1, 6], 300u32.to_be_bytes().to_vec())));
    assert!(!entries.iter().any(|(_, pk)| pk == &6u32.to_be_bytes()));
    assert!(!entries.iter().any(|(_, pk)| pk == &7u32.to_be_bytes()));
    assert!(entries.contains(&(vec![1, 8], 8u32.to_be_bytes().to_vec())));
    drop((t, t2));
    close(db, engine);
}

/// The rows of `t` as `s` sees them, in primary key order: (pk, row).
fn index_rows_at(s: &Session, t: &Table) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = s.iter(t, 0).unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key()[4..].to_vec(), it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

#[test]
fn an_online_build_with_no_writes_meanwhile_applies_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 20);
    let mut build = engine.begin_index_build(b"t", &[new_b()]).unwrap();
    engine.capture_build_changes(&mut build).unwrap();
    let snap = engine.begin_session(SessionOptions::default()).unwrap();
    for (pk, row) in index_rows_at(&snap, &t) {
        build.add(0, &b_key(&row), &pk).unwrap();
    }
    build.finish().unwrap();
    apply_changes(&engine, &t, &mut build, &snap);
    assert_eq!(build.changed_row(0), None);
    drop(snap);
    let t2 = commit(&engine, build);
    assert_eq!(index_entries(&engine, &t2, 2), expected_b(&engine, &t2));
    drop((t, t2));
    close(db, engine);
}

#[test]
fn misuse_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 10);
    // A unique index cannot be built while writers go on.
    let mut unique = engine
        .begin_index_build(
            b"t",
            &[NewIndex {
                spec: secondary("u", true),
                null_offsets: vec![0],
            }],
        )
        .unwrap();
    let err = engine.capture_build_changes(&mut unique).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::NotSupported), "{err}");
    assert!(err.to_string().contains("unique index `u`"), "{err}");
    assert!(!t.is_capturing_changes());
    // A build that is not online has no changed rows to give.
    let err = unique.take_changed_rows().unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidArgument), "{err}");
    engine.abort_index_build(unique).unwrap();
    // Changes apply only after the finish; an abort stops the record.
    let mut build = engine.begin_index_build(b"t", &[new_b()]).unwrap();
    engine.capture_build_changes(&mut build).unwrap();
    let err = build
        .apply_change(0, None, Some(&[1, 1]), &1u32.to_be_bytes())
        .unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidArgument), "{err}");
    build.finish().unwrap();
    let err = build
        .apply_change(1, None, Some(&[1, 1]), &1u32.to_be_bytes())
        .unwrap_err();
    assert!(
        err.to_string().contains("new index #1 does not exist"),
        "{err}"
    );
    engine.abort_index_build(build).unwrap();
    assert!(!t.is_capturing_changes());
    drop(t);
    close(db, engine);
}

#[test]
fn bulk_loads_do_not_bypass_an_online_build() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with_rows(&engine, 10);
    // A load that took rows of the table before the build began is refused at its commit.
    let mut early = engine.begin_session(SessionOptions::default()).unwrap();
    early.set_bulk_load(true);
    insert(&mut early, &t, 1000, 1);
    assert_eq!(early.bulk_rows(), 1);
    let mut build = engine.begin_index_build(b"t", &[new_b()]).unwrap();
    engine.capture_build_changes(&mut build).unwrap();
    let err = early.commit().unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::Busy), "{err}");
    assert!(err.to_string().contains("online index build"), "{err}");
    // One that begins during the build writes the ordinary way, and its rows are recorded.
    let mut late = engine.begin_session(SessionOptions::default()).unwrap();
    late.set_bulk_load(true);
    insert(&mut late, &t, 2000, 2);
    assert_eq!(late.bulk_rows(), 0, "no row took the bulk path");
    late.commit().unwrap();
    let snap = engine.begin_session(SessionOptions::default()).unwrap();
    for (pk, row) in index_rows_at(&snap, &t) {
        build.add(0, &b_key(&row), &pk).unwrap();
    }
    build.finish().unwrap();
    let n = build.take_changed_rows().unwrap();
    assert_eq!(n, 1);
    assert_eq!(build.changed_row(0), Some(&2000u32.to_be_bytes()[..]));
    drop((snap, early, late));
    let t2 = commit(&engine, build);
    assert_eq!(index_entries(&engine, &t2, 2), expected_b(&engine, &t2));
    assert!(
        !index_entries(&engine, &t2, 0)
            .iter()
            .any(|(pk, _)| pk == &1000u32.to_be_bytes())
    );
    drop((t, t2));
    close(db, engine);
}

/// A small xorshift generator (no dependency for one test).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Writer `who` (of two): until `stop`, transactions of one to three changes on the
/// primary keys below 3000 that are `who` modulo 2 (so the writers never wait for each
/// other): an update of the row's value, a delete, or an insert where no row is; one in
/// ten rolls back. Returns the transactions committed.
fn writer(
    engine: &HandlerEngine,
    t: &Arc<Table>,
    who: u32,
    stop: &std::sync::atomic::AtomicBool,
) -> u64 {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(who + 1));
    let mut committed = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        for _ in 0..=rng.below(3) {
            let pk = u32::try_from(rng.below(1500)).unwrap() * 2 + who;
            let value = u8::try_from(rng.below(250)).unwrap();
            let key = pk.to_be_bytes();
            match s.get_row(t, &key, RowLock::Exclusive).unwrap() {
                Some(_) if rng.below(3) == 0 => {
                    s.delete(t, &key, &[k(&a_key(pk))]).unwrap();
                }
                Some(_) => {
                    s.update(
                        t,
                        &key,
                        &[k(&a_key(pk))],
                        &key,
                        &[k(&a_key(pk))],
                        &[value],
                        None,
                    )
                    .unwrap();
                }
                None => insert(&mut s, t, pk, value),
            }
        }
        if rng.below(10) == 0 {
            s.rollback().unwrap();
        } else {
            s.commit().unwrap();
            committed += 1;
        }
    }
    committed
}

#[test]
fn an_online_build_under_concurrent_writers_matches_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let engine = Arc::new(engine);
    let t = table_with_rows(&engine, 2000);
    let mut build = engine.begin_index_build(b"t", &[new_b()]).unwrap();
    engine.capture_build_changes(&mut build).unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2u32)
        .map(|who| {
            let (engine, t, stop) = (Arc::clone(&engine), Arc::clone(&t), Arc::clone(&stop));
            std::thread::spawn(move || writer(&engine, &t, who, &stop))
        })
        .collect();
    // Writers run before, during and after the build's snapshot and scan.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let snap = engine
        .begin_session(SessionOptions {
            snapshot_at_begin: true,
            ..SessionOptions::default()
        })
        .unwrap();
    for (pk, row) in index_rows_at(&snap, &t) {
        build.add(0, &b_key(&row), &pk).unwrap();
    }
    build.finish().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    // The commit's exclusive lock: every writer has finished.
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let committed: u64 = writers.into_iter().map(|w| w.join().unwrap()).sum();
    assert!(committed > 0, "the writers committed nothing");
    apply_changes(&engine, &t, &mut build, &snap);
    drop(snap);
    let t2 = commit(&engine, build);
    assert_eq!(index_entries(&engine, &t2, 2), expected_b(&engine, &t2));
    let engine = Arc::try_unwrap(engine).unwrap();
    drop((t, t2));
    close(db, engine);
}
