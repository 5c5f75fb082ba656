//! Bulk load (`Session::set_bulk_load`, `riptide_bulk_load` in MariaDB): rows inserted into
//! a table are sorted on the side and, where every index's span is vacant (an empty table,
//! appends), ingested at commit; duplicates among them fail the commit with nothing written;
//! a load among existing rows is written the ordinary way at commit; an ingest waits for the
//! table's ordinary writers; a rolled-back statement holding loaded rows makes the commit
//! refuse; prepare refuses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide_handler::{HandlerError, SessionOptions};

/// [`open`] with every load big enough to ingest (`ingest_min_bytes` 0), so that small
/// tests take the ingest path; [`small_loads_are_written_the_ordinary_way`] checks the
/// default.
fn open_ingesting(
    dir: &std::path::Path,
) -> (std::sync::Arc<riptide::Db>, riptide_handler::HandlerEngine) {
    let options = riptide::Options::default().ingest_min_bytes(0);
    let db = std::sync::Arc::new(riptide::Db::open(dir, options).unwrap());
    let engine = riptide_handler::HandlerEngine::open(std::sync::Arc::clone(&db)).unwrap();
    (db, engine)
}

#[test]
fn small_loads_are_written_the_ordinary_way() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    assert_eq!(db.ingest_min_bytes(), 1 << 20);
    let t = append_table(&engine);
    // About 100 KiB into the empty table: replayed, no file of its own.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in 1..=2_000 {
        insert_append_row(&mut s, &t, pk).unwrap();
    }
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!((outcome.rows, outcome.replayed_rows), (0, 2_000));
    assert_eq!(db.statistics().ingested_files, 0);
    // More than 1 MiB appended: ingested.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    let filler = vec![b'x'; 200];
    for pk in 2_001..=10_000u32 {
        let u = (pk + 1_000_000).to_be_bytes();
        s.insert(&t, &pk.to_be_bytes(), &[k(&u)], &filler).unwrap();
    }
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!((outcome.rows, outcome.replayed_rows), (8_000, 0));
    assert!(db.statistics().ingested_files > 0);
    assert_eq!(index_entries(&engine, &t, 0).len(), 10_000);
    drop((s, t));
    close(db, engine);
}

/// Row `pk`: secondary `a` (non-unique) = `pk % 7`, unique `u` = `pk` (NULL for every
/// 10th row).
fn insert_row(
    s: &mut riptide_handler::Session,
    t: &std::sync::Arc<riptide_handler::Table>,
    pk: u32,
) -> Result<(), HandlerError> {
    let a = [(pk % 7) as u8];
    let u = pk.to_be_bytes();
    let ukey = if pk.is_multiple_of(10) {
        null_key(&[0, 0, 0, 0])
    } else {
        k(&u)
    };
    s.insert(
        t,
        &pk.to_be_bytes(),
        &[k(&a), ukey],
        format!("row{pk}").as_bytes(),
    )
}

#[test]
fn a_load_into_an_empty_table_is_ingested_at_commit_and_unseen_before() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("u", true)],
            1,
        )
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    // Not in primary-key order: the sort puts them in order.
    for i in 0..20_000u32 {
        insert_row(&mut s, &t, (i * 7_919) % 20_000).unwrap();
    }
    assert_eq!(
        s.get_row(&t, &5u32.to_be_bytes(), Default::default())
            .unwrap(),
        None
    );
    let written = db.statistics().keys_written;
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!(outcome.rows, 20_000);
    assert_eq!(outcome.entries, 60_000);
    assert!(db.statistics().ingested_files > 0);
    assert_eq!(t.row_estimate(), 20_000);
    assert!(
        db.statistics().keys_written - written < 10,
        "nothing row by row"
    );
    assert_eq!(index_entries(&engine, &t, 0).len(), 20_000);
    let a = index_entries(&engine, &t, 1);
    assert_eq!(a.len(), 20_000);
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(index_entries(&engine, &t, 2).len(), 20_000);
    drop(s);
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    assert_eq!(
        s.get_row(&t, &5u32.to_be_bytes(), Default::default())
            .unwrap(),
        Some(b"row5".to_vec())
    );
    drop(s);
    // Ordinary writes afterwards see the loaded keys.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    let err = insert_row(&mut s, &t, 17).unwrap_err();
    assert_eq!(err.duplicate_index(), Some(0));
    drop((s, t));
    close(db, engine);
}

#[test]
fn duplicates_among_loaded_rows_fail_the_commit_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = engine
        .create_table(
            b"t",
            &[primary(), secondary("a", false), secondary("u", true)],
            1,
        )
        .unwrap();
    let files = db.statistics().ingested_files;
    // The primary key twice.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in [1u32, 2, 3, 2] {
        insert_row(&mut s, &t, pk).unwrap();
    }
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(0));
    // A unique key twice (rows 31 and 99); NULLs (rows 10 and 20) never conflict.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in [10u32, 20, 31] {
        insert_row(&mut s, &t, pk).unwrap();
    }
    s.insert(
        &t,
        &99u32.to_be_bytes(),
        &[k(&[1]), k(&31u32.to_be_bytes())],
        b"x",
    )
    .unwrap();
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(2));
    assert_eq!(db.statistics().ingested_files, files, "nothing ingested");
    assert!(index_entries(&engine, &t, 0).is_empty());
    // NULLs alone: accepted.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in [10u32, 20, 30] {
        insert_row(&mut s, &t, pk).unwrap();
    }
    s.commit().unwrap();
    assert_eq!(index_entries(&engine, &t, 2).len(), 3);
    drop((s, t));
    close(db, engine);
}

/// A table of `pk` (4 bytes) and a unique secondary `u` = `pk` + 1,000,000 (so that both
/// indexes grow at their ends when rows are appended in `pk` order).
fn append_table(engine: &riptide_handler::HandlerEngine) -> std::sync::Arc<riptide_handler::Table> {
    engine
        .create_table(b"t", &[primary(), secondary("u", true)], 1)
        .unwrap()
}

fn insert_append_row(
    s: &mut riptide_handler::Session,
    t: &std::sync::Arc<riptide_handler::Table>,
    pk: u32,
) -> Result<(), HandlerError> {
    let u = (pk + 1_000_000).to_be_bytes();
    s.insert(
        t,
        &pk.to_be_bytes(),
        &[k(&u)],
        format!("row{pk}").as_bytes(),
    )
}

/// Commits rows `pks` the ordinary way.
fn insert_ordinary(
    engine: &riptide_handler::HandlerEngine,
    t: &std::sync::Arc<riptide_handler::Table>,
    pks: impl Iterator<Item = u32>,
) {
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for pk in pks {
        insert_append_row(&mut s, t, pk).unwrap();
    }
    s.commit().unwrap();
}

#[test]
fn rows_appended_to_a_table_holding_rows_are_ingested() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    insert_ordinary(&engine, &t, 1..=100);
    let files = db.statistics().ingested_files;
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    // Not in order within the load: the sort puts them in order.
    for i in 0..1_000u32 {
        insert_append_row(&mut s, &t, 101 + (i * 331) % 1_000).unwrap();
    }
    // Unseen before the commit, even by the loading transaction.
    assert_eq!(
        s.get_row(&t, &101u32.to_be_bytes(), Default::default())
            .unwrap(),
        None
    );
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!(outcome.rows, 1_000);
    assert_eq!(outcome.entries, 2_000);
    assert_eq!(outcome.replayed_rows, 0);
    assert!(db.statistics().ingested_files > files);
    assert_eq!(index_entries(&engine, &t, 0).len(), 1_100);
    assert_eq!(index_entries(&engine, &t, 1).len(), 1_100);
    // The loaded rows are there for the unique checks of later inserts.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    assert_eq!(
        insert_append_row(&mut s, &t, 600)
            .unwrap_err()
            .duplicate_index(),
        Some(0)
    );
    let clash = s.insert(
        &t,
        &5_000u32.to_be_bytes(),
        &[k(&1_000_600u32.to_be_bytes())],
        b"x",
    );
    assert_eq!(clash.unwrap_err().duplicate_index(), Some(1));
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_load_among_existing_rows_is_written_the_ordinary_way_at_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    insert_ordinary(&engine, &t, (1..=100).map(|i| i * 2));
    let files = db.statistics().ingested_files;
    // The odd keys between the even ones: not vacant, so replayed.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in (0..100).map(|i| i * 2 + 1) {
        insert_append_row(&mut s, &t, pk).unwrap();
    }
    assert_eq!(s.bulk_rows(), 100);
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!(outcome.replayed_rows, 100);
    assert_eq!(outcome.rows, 0);
    assert_eq!(db.statistics().ingested_files, files, "nothing ingested");
    assert_eq!(index_entries(&engine, &t, 0).len(), 200);
    assert_eq!(index_entries(&engine, &t, 1).len(), 200);
    // A replayed row that clashes with an existing one (primary key, then unique key)
    // fails the commit, and nothing of the transaction is written.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    insert_append_row(&mut s, &t, 1_001).unwrap();
    insert_append_row(&mut s, &t, 4).unwrap();
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(0));
    drop(s);
    // One row whose unique value an existing row (another primary key) holds: its entry's
    // own range is vacant, but its value's is not.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.insert(
        &t,
        &1_003u32.to_be_bytes(),
        &[k(&1_000_004u32.to_be_bytes())],
        b"x",
    )
    .unwrap();
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(1));
    assert_eq!(index_entries(&engine, &t, 0).len(), 200);
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_load_waits_for_writers_of_the_table_and_then_sees_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    insert_ordinary(&engine, &t, 1..=100);
    // An ordinary insert inside the span the load will fill, not yet committed: the load
    // cannot see it before it commits, so the load's commit waits for it.
    let mut writer = engine.begin_session(SessionOptions::default()).unwrap();
    insert_append_row(&mut writer, &t, 150).unwrap();
    let mut loader = engine.begin_session(SessionOptions::default()).unwrap();
    loader.set_bulk_load(true);
    for pk in 101..=200 {
        if pk != 150 {
            insert_append_row(&mut loader, &t, pk).unwrap();
        }
    }
    let files = db.statistics().ingested_files;
    let committing = std::thread::spawn(move || loader.commit_with_outcome());
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !committing.is_finished(),
        "the load's commit waits for the writer"
    );
    writer.commit().unwrap();
    // Then it finds the writer's row in its span: written the ordinary way.
    let outcome = committing.join().unwrap().unwrap();
    assert_eq!((outcome.rows, outcome.replayed_rows), (0, 99));
    assert_eq!(db.statistics().ingested_files, files, "nothing ingested");
    assert_eq!(index_entries(&engine, &t, 0).len(), 200);
    // An ordinary insert waits for a load's commit and then sees its rows.
    let mut loader = engine.begin_session(SessionOptions::default()).unwrap();
    loader.set_bulk_load(true);
    for pk in 201..=300 {
        insert_append_row(&mut loader, &t, pk).unwrap();
    }
    let mut other = engine.begin_session(SessionOptions::default()).unwrap();
    insert_append_row(&mut other, &t, 1_000).unwrap();
    let committing = std::thread::spawn(move || loader.commit_with_outcome());
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !committing.is_finished(),
        "the load's commit waits for the other writer"
    );
    other.commit().unwrap();
    // `other`'s row lies above the load's span: the load is still ingested.
    let outcome = committing.join().unwrap().unwrap();
    assert_eq!((outcome.rows, outcome.replayed_rows), (100, 0));
    assert_eq!(index_entries(&engine, &t, 0).len(), 301);
    let mut late = engine.begin_session(SessionOptions::default()).unwrap();
    assert_eq!(
        insert_append_row(&mut late, &t, 250)
            .unwrap_err()
            .duplicate_index(),
        Some(0)
    );
    drop((writer, other, late, t));
    close(db, engine);
}

/// Two loads whose rows interleave in one table (hidden row ids handed out in turn, say):
/// the second to commit finds the first's rows in its span and writes the ordinary way.
#[test]
fn interleaved_loads_both_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    let mut a = engine.begin_session(SessionOptions::default()).unwrap();
    let mut b = engine.begin_session(SessionOptions::default()).unwrap();
    a.set_bulk_load(true);
    b.set_bulk_load(true);
    for pk in 1..=200u32 {
        let s = if (pk / 10) % 2 == 0 { &mut a } else { &mut b };
        insert_append_row(s, &t, pk).unwrap();
    }
    let first = b.commit_with_outcome().unwrap();
    let second = a.commit_with_outcome().unwrap();
    assert_eq!((first.rows, first.replayed_rows), (100, 0));
    assert_eq!((second.rows, second.replayed_rows), (0, 100));
    assert_eq!(index_entries(&engine, &t, 0).len(), 200);
    assert_eq!(index_entries(&engine, &t, 1).len(), 200);
    drop((a, b, t));
    close(db, engine);
}

/// A row the transaction itself moved into the span of its load, before or after loading
/// (a table of a primary key only: the move leaves no other trace the load would see): the
/// load is checked against it (replayed), never written over by it or over it.
#[test]
fn a_row_the_transaction_moved_into_the_span_is_a_duplicate_not_a_loss() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = engine.create_table(b"p", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    for pk in 1..=10u32 {
        s.insert(&t, &pk.to_be_bytes(), &[], b"old").unwrap();
    }
    s.commit().unwrap();
    drop(s);
    let move_row = |s: &mut riptide_handler::Session| {
        let (from, to) = (1u32.to_be_bytes(), 500u32.to_be_bytes());
        s.update(&t, &from, &[], &to, &[], b"moved", None).unwrap();
    };
    for load_first in [false, true] {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        s.set_bulk_load(true);
        if !load_first {
            move_row(&mut s);
        }
        for pk in 400..=600u32 {
            s.insert(&t, &pk.to_be_bytes(), &[], b"loaded").unwrap();
        }
        assert_eq!(s.bulk_rows(), 201, "load first {load_first}");
        if load_first {
            move_row(&mut s);
        }
        let err = s.commit().unwrap_err();
        assert_eq!(
            err.duplicate_index(),
            Some(0),
            "load first {load_first}: {err}"
        );
        drop(s);
        assert_eq!(index_entries(&engine, &t, 0).len(), 10);
    }
    drop(t);
    close(db, engine);
}

#[test]
fn a_rolled_back_statement_holding_loaded_rows_makes_the_commit_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = engine.create_table(b"t", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.begin_statement().unwrap();
    s.insert(&t, &1u32.to_be_bytes(), &[], b"a").unwrap();
    s.end_statement(true).unwrap();
    s.begin_statement().unwrap();
    s.insert(&t, &2u32.to_be_bytes(), &[], b"b").unwrap();
    s.end_statement(false).unwrap();
    let err = s.commit().unwrap_err();
    assert!(err.to_string().contains("cannot take rows back"), "{err}");
    assert!(index_entries(&engine, &t, 0).is_empty());
    // A statement rolled back before any loaded row is harmless.
    drop(s);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.begin_statement().unwrap();
    s.end_statement(false).unwrap();
    s.begin_statement().unwrap();
    s.insert(&t, &3u32.to_be_bytes(), &[], b"c").unwrap();
    s.end_statement(true).unwrap();
    s.commit().unwrap();
    assert_eq!(index_entries(&engine, &t, 0).len(), 1);
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_transaction_holding_a_bulk_load_cannot_be_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = engine.create_table(b"t", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.insert(&t, &1u32.to_be_bytes(), &[], b"a").unwrap();
    let xid = riptide::Xid::new(1, b"g", b"b").unwrap();
    let err = s.prepare(&xid).unwrap_err();
    assert!(err.to_string().contains("cannot be prepared"), "{err}");
    s.rollback().unwrap();
    assert!(index_entries(&engine, &t, 0).is_empty());
    drop((s, t));
    close(db, engine);
}

#[test]
fn an_insert_after_bulk_load_is_turned_off_still_joins_the_load() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = engine.create_table(b"t", &[primary()], 1).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    s.insert(&t, &1u32.to_be_bytes(), &[], b"loaded").unwrap();
    s.set_bulk_load(false);
    // The same key again: found at commit, not written over the loaded row.
    s.insert(&t, &1u32.to_be_bytes(), &[], b"ordinary").unwrap();
    assert_eq!(s.bulk_rows(), 2);
    assert_eq!(s.commit().unwrap_err().duplicate_index(), Some(0));
    assert!(index_entries(&engine, &t, 0).is_empty());
    drop((s, t));
    close(db, engine);
}

/// A load taken out of each transaction before it commits and taken up by the next (the
/// MariaDB plugin's autocommit statements with `riptide_bulk_load` on): its rows stay
/// invisible while it is held, the transactions' own ordinary writes commit as they go, and
/// the transaction that holds it last writes the whole load at its commit.
#[test]
fn a_load_held_across_transactions_is_written_by_the_last_one() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    let other = engine
        .create_table(b"other", &[primary(), secondary("u", true)], 1)
        .unwrap();
    let mut held = None;
    for part in 0..3u32 {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        s.set_bulk_load(true);
        if let Some(h) = held.take() {
            s.attach_bulk_load(h).unwrap();
        }
        for pk in part * 100 + 1..=part * 100 + 100 {
            insert_append_row(&mut s, &t, pk).unwrap();
        }
        // An ordinary write of the same transaction commits with it.
        s.set_bulk_load(false);
        insert_append_row(&mut s, &other, part).unwrap();
        let h = s.detach_bulk_load().expect("the load holds rows");
        assert_eq!(h.rows(), u64::from(part + 1) * 100);
        held = Some(h);
        s.commit().unwrap();
        assert!(index_entries(&engine, &t, 0).is_empty());
        assert_eq!(index_entries(&engine, &other, 0).len(), part as usize + 1);
    }
    // A transaction without a load of its own takes it up and commits it.
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.attach_bulk_load(held.take().unwrap()).unwrap();
    let outcome = s.commit_with_outcome().unwrap();
    assert_eq!((outcome.rows, outcome.replayed_rows), (300, 0));
    assert_eq!(index_entries(&engine, &t, 0).len(), 300);
    assert_eq!(index_entries(&engine, &t, 1).len(), 300);
    assert_eq!(t.row_estimate(), 300);
    // Nothing is held once the load was written.
    assert!(s.detach_bulk_load().is_none());
    drop((s, t, other));
    close(db, engine);
}

/// A held load is all or nothing: a duplicate between rows of two of its transactions
/// fails the last commit and writes nothing of the load; a held load dropped unwritten
/// discards its rows; a transaction that holds loaded rows of its own refuses another.
#[test]
fn a_held_load_is_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    let load = |pks: std::ops::RangeInclusive<u32>, held: Option<riptide_handler::HeldBulkLoad>| {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        s.set_bulk_load(true);
        if let Some(h) = held {
            s.attach_bulk_load(h).unwrap();
        }
        for pk in pks {
            insert_append_row(&mut s, &t, pk).unwrap();
        }
        let h = s.detach_bulk_load();
        s.commit().unwrap();
        h
    };
    let held = load(1..=50, None);
    let held = load(40..=60, held).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.attach_bulk_load(held).unwrap();
    let err = s.commit().unwrap_err();
    assert!(
        matches!(err, HandlerError::Duplicate { index: 0, .. }),
        "{err}"
    );
    assert!(index_entries(&engine, &t, 0).is_empty());
    drop(s);

    // Dropped unwritten: nothing of it ever appears.
    let held = load(100..=120, None).unwrap();
    drop(held);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.commit().unwrap();
    assert!(index_entries(&engine, &t, 0).is_empty());
    drop(s);

    // A transaction with loaded rows of its own refuses a held load.
    let held = load(200..=210, None).unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    insert_append_row(&mut s, &t, 300).unwrap();
    let err = s.attach_bulk_load(held).unwrap_err();
    assert!(
        err.to_string().contains("already holds a bulk load"),
        "{err}"
    );
    s.commit().unwrap();
    assert_eq!(index_entries(&engine, &t, 0).len(), 1);
    drop((s, t));
    close(db, engine);
}

/// Nothing keeps DDL off a table between the transactions of a held load: a commit that
/// finds a table of the load dropped or replaced since (here truncated) refuses, and writes
/// nothing of the load into the table that replaced it. A RENAME keeps the table: the load
/// goes on.
#[test]
fn a_held_load_refuses_a_table_changed_since() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open_ingesting(dir.path());
    let t = append_table(&engine);
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.set_bulk_load(true);
    for pk in 1..=30 {
        insert_append_row(&mut s, &t, pk).unwrap();
    }
    let held = s.detach_bulk_load().unwrap();
    s.commit().unwrap();
    drop(s);
    engine.rename_table(b"t", b"t2").unwrap();
    assert!(!t.is_dropped());
    let renamed = engine.truncate_table(b"t2").unwrap();
    assert!(t.is_dropped());
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.attach_bulk_load(held).unwrap();
    let err = s.commit().unwrap_err();
    assert!(err.to_string().contains("was dropped or changed"), "{err}");
    drop(s);
    assert!(!renamed.is_dropped());
    assert!(index_entries(&engine, &renamed, 0).is_empty());
    assert!(index_entries(&engine, &renamed, 1).is_empty());
    drop((t, renamed));
    close(db, engine);
}
