//! Row operations: secondary index maintenance, unique checks, NULLs, statement rollback,
//! estimates.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide_handler::{RowLock, SessionOptions};

#[test]
fn an_update_moves_a_secondary_key_and_leaves_unchanged_ones_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("b", true)],
            1,
        )
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"x"), k(b"p")], b"r1").unwrap();
    s.insert(&t, b"2", &[k(b"y"), k(b"q")], b"r2").unwrap();
    s.commit().unwrap();

    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let writes_before = s.transaction().write_count();
    // Only the row changes: no secondary entry is rewritten.
    s.update(
        &t,
        b"1",
        &[k(b"x"), k(b"p")],
        b"1",
        &[k(b"x"), k(b"p")],
        b"r1'",
        None,
    )
    .unwrap();
    assert_eq!(s.transaction().write_count(), writes_before + 1);
    // Index a moves: old entry deleted, new one put.
    s.update(
        &t,
        b"1",
        &[k(b"x"), k(b"p")],
        b"1",
        &[k(b"z"), k(b"p")],
        b"r1''",
        None,
    )
    .unwrap();
    assert_eq!(s.transaction().write_count(), writes_before + 3);
    // A unique key moved onto another row's value is a duplicate naming index 2.
    let e = s
        .update(
            &t,
            b"2",
            &[k(b"y"), k(b"q")],
            b"2",
            &[k(b"y"), k(b"p")],
            b"r2",
            None,
        )
        .unwrap_err();
    assert_eq!(e.duplicate_index(), Some(2));
    assert!(e.to_string().contains("`b`"), "{e}");
    // The primary key moves: every entry follows it.
    s.update(
        &t,
        b"2",
        &[k(b"y"), k(b"q")],
        b"9",
        &[k(b"y"), k(b"q")],
        b"r9",
        None,
    )
    .unwrap();
    s.commit().unwrap();
    assert_eq!(
        index_entries(&engine, &t, 1),
        vec![
            (b"y".to_vec(), b"9".to_vec()),
            (b"z".to_vec(), b"1".to_vec())
        ]
    );
    assert_eq!(
        index_entries(&engine, &t, 2),
        vec![
            (b"p".to_vec(), b"1".to_vec()),
            (b"q".to_vec(), b"9".to_vec())
        ]
    );
    assert_eq!(
        index_entries(&engine, &t, 0),
        vec![
            (b"1".to_vec(), b"r1''".to_vec()),
            (b"9".to_vec(), b"r9".to_vec())
        ]
    );
    drop(s);
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    assert_eq!(
        s.get_row(&t, b"9", RowLock::Exclusive).unwrap(),
        Some(b"r9".to_vec())
    );
    assert_eq!(s.get_row(&t, b"2", RowLock::None).unwrap(), None);
    drop((t, s));
    close(db, engine);
}

#[test]
fn unique_checks_primary_secondary_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"a")], b"").unwrap();
    let e = s.insert(&t, b"1", &[k(b"b")], b"").unwrap_err();
    assert_eq!(e.duplicate_index(), Some(0));
    let e = s.insert(&t, b"2", &[k(b"a")], b"").unwrap_err();
    assert_eq!(e.duplicate_index(), Some(1));
    // NULL-containing keys never conflict.
    s.insert(&t, b"3", &[null_key(b"\0")], b"").unwrap();
    s.insert(&t, b"4", &[null_key(b"\0")], b"").unwrap();
    // A key deleted in this transaction can be inserted again.
    s.delete(&t, b"1", &[k(b"a")]).unwrap();
    s.insert(&t, b"5", &[k(b"a")], b"").unwrap();
    s.commit().unwrap();
    // Committed entries are seen by a new transaction.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let e = s.insert(&t, b"6", &[k(b"a")], b"").unwrap_err();
    assert_eq!(e.duplicate_index(), Some(1));
    s.rollback().unwrap();
    assert_eq!(
        index_entries(&engine, &t, 1),
        vec![
            (b"\0".to_vec(), b"3".to_vec()),
            (b"\0".to_vec(), b"4".to_vec()),
            (b"a".to_vec(), b"5".to_vec())
        ]
    );
    drop((t, s));
    close(db, engine);
}

/// A primary key longer than a secondary entry can hold (its length is stored in 2 bytes) is
/// refused before anything is written: no row without its entries, in the transaction or
/// after commit (found by the `handler_sequence` fuzz target). A table without secondary
/// indexes takes it.
#[test]
fn a_primary_key_too_long_for_the_entries_is_refused_before_any_write() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap();
    let plain = engine.create_table(b"p", &[primary()], 1).unwrap();
    let long = vec![1u8; riptide_handler::MAX_PK_LEN + 1];
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let e = s.insert(&t, &long, &[k(b"a")], b"row").unwrap_err();
    assert!(e.to_string().contains("longer than 65535"), "{e}");
    s.insert(&t, b"1", &[k(b"b")], b"row").unwrap();
    let e = s
        .update(&t, b"1", &[k(b"b")], &long, &[k(b"b")], b"row", None)
        .unwrap_err();
    assert!(e.to_string().contains("longer than 65535"), "{e}");
    assert!(s.delete(&t, &long, &[k(b"a")]).is_err());
    assert_eq!(s.get_row(&t, &long, RowLock::None).unwrap(), None);
    s.insert(&plain, &long, &[], b"row").unwrap();
    s.commit().unwrap();
    drop(s);
    assert_eq!(raw_index_keys(&db, &t, 0).len(), 1);
    assert_eq!(
        index_entries(&engine, &t, 1),
        vec![(b"b".to_vec(), b"1".to_vec())]
    );
    assert_eq!(raw_index_keys(&db, &plain, 0).len(), 1);
    drop((t, plain));
    close(db, engine);
}

#[test]
fn a_failing_statement_rolls_back_only_itself() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.begin_statement().unwrap();
    s.insert(&t, b"1", &[k(b"a")], b"kept").unwrap();
    s.end_statement(true).unwrap();
    // INSERT (2,'b'), (3,'a'): the second row fails, the statement goes.
    s.begin_statement().unwrap();
    s.insert(&t, b"2", &[k(b"b")], b"undone").unwrap();
    assert!(s.insert(&t, b"3", &[k(b"a")], b"dup").is_err());
    s.end_statement(false).unwrap();
    assert!(!s.in_statement());
    // The undone row's unique value is free again inside the same transaction.
    s.begin_statement().unwrap();
    s.insert(&t, b"4", &[k(b"b")], b"kept too").unwrap();
    s.end_statement(true).unwrap();
    // SQL savepoints nest around statements.
    s.set_savepoint().unwrap();
    s.begin_statement().unwrap();
    s.delete(&t, b"1", &[k(b"a")]).unwrap();
    s.end_statement(true).unwrap();
    s.rollback_to_savepoint().unwrap();
    assert_eq!(s.savepoint_depth(), 0);
    s.commit().unwrap();
    assert_eq!(
        index_entries(&engine, &t, 0),
        vec![
            (b"1".to_vec(), b"kept".to_vec()),
            (b"4".to_vec(), b"kept too".to_vec())
        ]
    );
    assert_eq!(
        index_entries(&engine, &t, 1),
        vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"b".to_vec(), b"4".to_vec())
        ]
    );
    assert_eq!(t.row_estimate(), 2);
    drop((t, s));
    close(db, engine);
}

// How these tests catch a broken single-delete contract: an entry put twice with no delete
// in between, whose older put sits in an SST below, then single-deleted. If the single
// delete meets the newer put in a flush (same memtable) or a non-bottommost compaction, both
// go and the older put resurfaces. (At the bottommost level a single delete drops every older
// version, which would hide the bug: so the newer put and the single delete are kept in one
// memtable, and the older put is flushed first.)

#[test]
fn a_key_moved_away_and_back_in_one_transaction_is_deleted_cleanly_later() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"x")], b"r").unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    // x -> y -> x in one transaction: the entry (x, 1) is single-deleted and put again; the
    // transaction commits both, so each put meets its own single delete.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.update(&t, b"1", &[k(b"x")], b"1", &[k(b"y")], b"r", None)
        .unwrap();
    s.update(&t, b"1", &[k(b"y")], b"1", &[k(b"x")], b"r", None)
        .unwrap();
    s.commit().unwrap();
    assert_eq!(
        raw_index_keys(&db, &t, 1),
        vec![raw_secondary_entry(&t, 1, b"x", b"1")]
    );
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.delete(&t, b"1", &[k(b"x")]).unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after flush"
    );
    db.compact_range(&db.default_cf(), None).unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after compaction"
    );
    assert!(index_entries(&engine, &t, 1).is_empty());
    assert!(legacy_taint_records(&db).is_empty());
    drop((t, s));
    close(db, engine);
    // After a reopen the entry is an ordinary one: put once, single-deleted once.
    let (db, engine) = open(dir.path());
    let t = engine.open_table(b"t").unwrap().unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"x")], b"r").unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.delete(&t, b"1", &[k(b"x")]).unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    db.compact_range(&db.default_cf(), None).unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after compaction"
    );
    drop((t, s));
    close(db, engine);
}

#[test]
fn a_key_moved_away_and_back_then_deleted_in_one_transaction_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"x")], b"r").unwrap();
    s.insert(&t, b"2", &[k(b"x")], b"r").unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    drop(s);
    // Row 1: x -> y -> x -> deleted. Row 2: x -> y -> x, kept. Row 3: inserted, moved away
    // and back, deleted. All in one transaction.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for pk in [&b"1"[..], b"2"] {
        s.update(&t, pk, &[k(b"x")], pk, &[k(b"y")], b"r", None)
            .unwrap();
        s.update(&t, pk, &[k(b"y")], pk, &[k(b"x")], b"r", None)
            .unwrap();
    }
    s.delete(&t, b"1", &[k(b"x")]).unwrap();
    s.insert(&t, b"3", &[k(b"z")], b"r").unwrap();
    s.update(&t, b"3", &[k(b"z")], b"3", &[k(b"w")], b"r", None)
        .unwrap();
    s.update(&t, b"3", &[k(b"w")], b"3", &[k(b"z")], b"r", None)
        .unwrap();
    s.delete(&t, b"3", &[k(b"z")]).unwrap();
    s.commit().unwrap();
    let expected = vec![raw_secondary_entry(&t, 1, b"x", b"2")];
    assert_eq!(raw_index_keys(&db, &t, 1), expected);
    // Row 2's entry, put again in that transaction, is single-deleted cleanly too.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.delete(&t, b"2", &[k(b"x")]).unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after flush"
    );
    db.compact_range(&db.default_cf(), None).unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after compaction"
    );
    assert!(raw_index_keys(&db, &t, 0).is_empty());
    assert!(legacy_taint_records(&db).is_empty());
    drop((t, s));
    close(db, engine);
}

#[test]
fn legacy_taint_records_are_migrated_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"x")], b"r").unwrap();
    s.insert(&t, b"2", &[k(b"x")], b"r").unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    // What older builds left behind: entries put twice with no delete in between, each
    // with a taint record; (x, 2) was then plain-deleted (its row is gone).
    let dd = db.cf(riptide_handler::DD_CF_NAME).unwrap();
    let e1 = raw_secondary_entry(&t, 1, b"x", b"1");
    let e2 = raw_secondary_entry(&t, 1, b"x", b"2");
    for e in [&e1, &e2] {
        db.put_cf(&db.default_cf(), e, b"").unwrap();
        let mut x = b"X".to_vec();
        x.extend_from_slice(e);
        db.put_cf(&dd, &x, b"").unwrap();
    }
    db.delete(&primary_raw(&t, b"2")).unwrap();
    db.delete(&e2).unwrap();
    drop((t, s, dd));
    engine.close().unwrap();
    drop(engine);
    // Open the handler layer again on the same database (the second puts stay in the
    // memtable, where the single delete below would cancel them in the flush).
    let engine = riptide_handler::HandlerEngine::open(std::sync::Arc::clone(&db)).unwrap();
    assert!(legacy_taint_records(&db).is_empty());
    let t = engine.open_table(b"t").unwrap().unwrap();
    assert_eq!(raw_index_keys(&db, &t, 1), vec![e1.clone()]);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.delete(&t, b"1", &[k(b"x")]).unwrap();
    s.commit().unwrap();
    db.flush().unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after flush"
    );
    db.compact_range(&db.default_cf(), None).unwrap();
    assert!(
        raw_index_keys(&db, &t, 1).is_empty(),
        "stale entry after compaction"
    );
    assert!(raw_index_keys(&db, &t, 0).is_empty());
    drop((t, s));
    close(db, engine);
}

fn primary_raw(t: &riptide_handler::Table, pk: &[u8]) -> Vec<u8> {
    let mut key = t.index_prefix(0).unwrap().to_vec();
    key.extend_from_slice(pk);
    key
}

#[test]
fn estimates_count_range_keys_and_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("a", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for i in 0..100u8 {
        s.insert(&t, &[i], &[k(&[i / 10])], b"").unwrap();
    }
    s.commit().unwrap();
    assert_eq!(t.row_estimate(), 100);
    assert_eq!(t.estimate_range(0, &[10], Some(&[20]), 1000).unwrap(), 10);
    assert_eq!(t.estimate_range(1, &[3], Some(&[4]), 1000).unwrap(), 10);
    assert_eq!(t.estimate_range(1, &[], None, 1000).unwrap(), 100);
    // Past the limit the count stops at 50 and the memtable's skiplist estimates the rest
    // (exact for a list this small: the estimate walks its bottom level).
    assert_eq!(t.estimate_range(1, &[], None, 50).unwrap(), 100);
    assert_eq!(t.estimate_range(1, &[5], Some(&[5]), 1000).unwrap(), 0);
    drop((t, s));
    close(db, engine);
}
