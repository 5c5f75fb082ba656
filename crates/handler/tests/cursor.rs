//! `Cursor`: MariaDB's index reads in key tuples (no index prefix, no entry decoding on the
//! caller's side): every seek mode against a model, `next_same`, rows moved by the scan's own
//! statement, reads that go on after the transaction that made the iterator ended, keys-only
//! reads, and a locking read that stops at its range end.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use riptide::ErrorKind;
use riptide_handler::{
    Cursor, CursorMode, HandlerEngine, Isolation, RowLock, Seek, Session, SessionOptions, Table,
};

fn session(engine: &HandlerEngine, isolation: Isolation) -> Session {
    engine
        .begin_session(SessionOptions {
            isolation,
            lock_timeout: Duration::from_millis(100),
            ..SessionOptions::default()
        })
        .unwrap()
}

/// A table with a 1-byte primary key and a 2-byte secondary key (`[pk % 3, pk]`-like
/// values chosen by the test), committed.
fn table_with(engine: &HandlerEngine, rows: &[(u8, [u8; 2])]) -> Arc<Table> {
    let t = engine
        .create_table(b"t", &[primary(), secondary("v", false)], 1)
        .unwrap();
    let mut s = session(engine, Isolation::RepeatableRead);
    for (pk, v) in rows {
        s.insert(&t, &[*pk], &[k(v)], &[b'r', *pk]).unwrap();
    }
    s.commit().unwrap();
    t
}

/// (pk, key, row) of the cursor's row.
fn current(c: &Cursor) -> (Vec<u8>, Vec<u8>, Option<Vec<u8>>) {
    let r = c.row().expect("a current row");
    (r.pk.to_vec(), r.key.to_vec(), r.row.map(<[u8]>::to_vec))
}

/// Every entry of index 1 (key, pk) in order, as a model.
fn model(rows: &[(u8, [u8; 2])]) -> Vec<(Vec<u8>, u8)> {
    let mut m: Vec<(Vec<u8>, u8)> = rows.iter().map(|(pk, v)| (v.to_vec(), *pk)).collect();
    m.sort();
    m
}

const ROWS: &[(u8, [u8; 2])] = &[
    (1, [1, 0]),
    (2, [1, 5]),
    (3, [2, 0]),
    (4, [2, 0]),
    (5, [2, 9]),
    (6, [4, 1]),
];

#[test]
fn every_seek_mode_finds_what_the_model_says() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let m = model(ROWS);
    let mut s = session(&engine, Isolation::RepeatableRead);
    let mut c = Cursor::new(Arc::clone(&t), 1).unwrap();
    let probes: &[&[u8]] = &[&[], &[0], &[1], &[1, 5], &[2], &[2, 0], &[3], &[4, 1], &[9]];
    for tuple in probes {
        for (how, exact) in [
            (Seek::AtOrAfter, false),
            (Seek::AtOrAfter, true),
            (Seek::After, false),
            (Seek::Before, false),
            (Seek::AtOrBefore, false),
            (Seek::AtOrBefore, true),
        ] {
            let starts = |key: &[u8]| key.starts_with(tuple);
            let want = match how {
                Seek::AtOrAfter => m.iter().find(|(key, _)| key.as_slice() >= *tuple),
                Seek::After => m
                    .iter()
                    .find(|(key, _)| key.as_slice() > *tuple && !starts(key)),
                Seek::Before => m
                    .iter()
                    .rev()
                    .find(|(key, _)| key.as_slice() < *tuple && !starts(key)),
                Seek::AtOrBefore => m
                    .iter()
                    .rev()
                    .find(|(key, _)| starts(key) || key.as_slice() < *tuple),
            };
            let want = want.filter(|(key, _)| !exact || starts(key));
            let found = c.seek(&mut s, tuple, how, exact).unwrap();
            let case = format!("{tuple:?} {how:?} exact {exact}");
            match want {
                None => assert!(!found, "{case}"),
                Some((key, pk)) => {
                    assert!(found, "{case}");
                    let (got_pk, got_key, row) = current(&c);
                    assert_eq!((got_key, got_pk), (key.clone(), vec![*pk]), "{case}");
                    assert_eq!(row, Some(vec![b'r', *pk]), "{case}");
                }
            }
        }
    }
    // A whole scan each way, and next_same over one key value.
    assert!(c.first(&mut s).unwrap());
    let mut seen = vec![current(&c).0[0]];
    while c.next(&mut s, None).unwrap() {
        seen.push(current(&c).0[0]);
    }
    assert_eq!(seen, m.iter().map(|(_, pk)| *pk).collect::<Vec<_>>());
    assert!(c.last(&mut s).unwrap());
    let mut back = vec![current(&c).0[0]];
    while c.prev(&mut s, None).unwrap() {
        back.push(current(&c).0[0]);
    }
    seen.reverse();
    assert_eq!(back, seen);
    assert!(c.seek(&mut s, &[2, 0], Seek::AtOrAfter, true).unwrap());
    assert_eq!(current(&c).0, vec![3]);
    assert!(c.next(&mut s, Some(&[2, 0])).unwrap());
    assert_eq!(current(&c).0, vec![4]);
    assert!(!c.next(&mut s, Some(&[2, 0])).unwrap());
    // Backward within a prefix: [2, 0] then [1, ...] is outside it.
    assert!(c.seek(&mut s, &[2], Seek::AtOrBefore, true).unwrap());
    assert_eq!(current(&c).0, vec![5]);
    assert!(c.prev(&mut s, Some(&[2])).unwrap());
    assert!(c.prev(&mut s, Some(&[2])).unwrap());
    assert_eq!(current(&c).0, vec![3]);
    assert!(!c.prev(&mut s, Some(&[2])).unwrap());
    // The primary key: a point read positions the cursor, the next step goes on after it.
    let mut p = Cursor::new(Arc::clone(&t), 0).unwrap();
    assert!(p.get(&mut s, &[3]).unwrap());
    assert_eq!(current(&p), (vec![3], vec![], Some(vec![b'r', 3])));
    assert!(p.next(&mut s, None).unwrap());
    assert_eq!(current(&p).0, vec![4]);
    assert!(!p.get(&mut s, &[0]).unwrap());
    assert!(p.row().is_none());
    assert!(p.next(&mut s, None).unwrap());
    assert_eq!(current(&p).0, vec![1]);
    let err = c.get(&mut s, &[1]).unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidArgument), "{err}");
    s.rollback().unwrap();
    drop((c, p, s, t));
    close(db, engine);
}

#[test]
fn rows_the_statement_moves_ahead_of_the_scan_are_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let mut s = session(&engine, Isolation::RepeatableRead);
    s.begin_statement().unwrap();
    // UPDATE t SET pk = pk + 100 WHERE v >= [2] through index 1 (the new entries sort
    // after the old ones of the same key), and through the primary key.
    for index in [1usize, 0] {
        let mut c = Cursor::new(Arc::clone(&t), index).unwrap();
        c.set_mode(CursorMode::Locking {
            lock: RowLock::Exclusive,
            skip_locked: false,
        });
        let mut found = if index == 1 {
            c.seek(&mut s, &[2], Seek::AtOrAfter, false).unwrap()
        } else {
            c.first(&mut s).unwrap()
        };
        let mut moved = 0;
        while found {
            let (pk, key, row) = current(&c);
            let keep_going = index == 0 || key[0] >= 2;
            if keep_going && pk[0] < 200 {
                let new_pk = [pk[0] + 100];
                let row = row.unwrap();
                s.update(&t, &pk, &[k(&key)], &new_pk, &[k(&key)], &row, Some(&mut c))
                    .unwrap();
                moved += 1;
                assert!(moved <= ROWS.len(), "index {index}: a moved row came back");
            }
            found = c.next(&mut s, None).unwrap();
        }
        assert_eq!(
            moved,
            if index == 1 { 4 } else { ROWS.len() },
            "index {index}"
        );
    }
    s.end_statement(true).unwrap();
    let mut c = Cursor::new(Arc::clone(&t), 0).unwrap();
    let mut pks = vec![];
    let mut found = c.first(&mut s).unwrap();
    while found {
        pks.push(current(&c).0[0]);
        found = c.next(&mut s, None).unwrap();
    }
    // v >= 2 moved twice (first through the index, then through the primary key).
    assert_eq!(pks, vec![101, 102, 203, 204, 205, 206]);
    s.rollback().unwrap();
    drop((c, s, t));
    close(db, engine);
}

#[test]
fn a_scan_goes_on_after_its_transaction_ended() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let mut c = Cursor::new(Arc::clone(&t), 1).unwrap();
    let mut order = vec![];
    let mut s = session(&engine, Isolation::RepeatableRead);
    assert!(c.first(&mut s).unwrap());
    order.push(current(&c).0[0]);
    // HANDLER ... READ NEXT in later statements, each in a transaction of its own: the
    // session dropped the iterator at commit; the cursor makes a new one in the next
    // session and goes on after the entry it returned last.
    loop {
        s.commit().unwrap();
        s = session(&engine, Isolation::RepeatableRead);
        if !c.next(&mut s, None).unwrap() {
            break;
        }
        order.push(current(&c).0[0]);
    }
    assert_eq!(
        order,
        model(ROWS).iter().map(|(_, pk)| *pk).collect::<Vec<_>>()
    );
    // A statement rollback drops the iterator too; the scan goes on.
    s.begin_statement().unwrap();
    assert!(c.seek(&mut s, &[2], Seek::AtOrAfter, false).unwrap());
    assert_eq!(current(&c).0, vec![3]);
    s.end_statement(false).unwrap();
    assert!(c.next(&mut s, None).unwrap());
    assert_eq!(current(&c).0, vec![4]);
    s.rollback().unwrap();
    drop((c, s, t));
    close(db, engine);
}

#[test]
fn keys_only_reads_stop_once_the_session_wrote_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let mut s = session(&engine, Isolation::RepeatableRead);
    let mut c = Cursor::new(Arc::clone(&t), 1).unwrap();
    assert!(c.set_keys_only(&s, true));
    assert!(c.seek(&mut s, &[1, 5], Seek::AtOrAfter, true).unwrap());
    assert_eq!(current(&c), (vec![2], vec![1, 5], None));
    // The primary key always has its rows; a locking read reads rows.
    let mut p = Cursor::new(Arc::clone(&t), 0).unwrap();
    assert!(!p.set_keys_only(&s, true));
    c.set_mode(CursorMode::Locking {
        lock: RowLock::Shared,
        skip_locked: false,
    });
    assert!(!c.set_keys_only(&s, true));
    c.set_mode(CursorMode::Snapshot);
    // A grant ends with a change of mode (and with a reset): back in snapshot mode the rows
    // come with the reads again until keys-only reads are asked for anew.
    assert!(c.set_keys_only(&s, true));
    c.set_mode(CursorMode::Locking {
        lock: RowLock::Exclusive,
        skip_locked: false,
    });
    c.set_mode(CursorMode::Snapshot);
    assert!(c.seek(&mut s, &[1, 5], Seek::AtOrAfter, true).unwrap());
    assert_eq!(current(&c).2, Some(vec![b'r', 2]));
    assert!(c.set_keys_only(&s, true));
    c.reset();
    assert!(c.seek(&mut s, &[1, 5], Seek::AtOrAfter, true).unwrap());
    assert_eq!(current(&c).2, Some(vec![b'r', 2]));
    s.update(&t, &[2], &[k(&[1, 5])], &[2], &[k(&[1, 6])], b"r2", None)
        .unwrap();
    assert!(!c.set_keys_only(&s, true));
    assert!(c.seek(&mut s, &[1, 6], Seek::AtOrAfter, true).unwrap());
    assert_eq!(current(&c), (vec![2], vec![1, 6], Some(b"r2".to_vec())));
    s.rollback().unwrap();
    drop((c, p, s, t));
    close(db, engine);
}

#[test]
fn a_locking_read_stops_at_its_range_end() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let mut s = session(&engine, Isolation::ReadCommitted);
    s.begin_statement().unwrap();
    let mut c = Cursor::new(Arc::clone(&t), 0).unwrap();
    c.set_mode(CursorMode::Locking {
        lock: RowLock::Exclusive,
        skip_locked: false,
    });
    // WHERE pk BETWEEN 2 AND 3: the read ends at 3 and does not lock 4.
    c.set_range_end(Some((&[3], true)));
    assert!(c.seek(&mut s, &[2], Seek::AtOrAfter, false).unwrap());
    assert!(c.next(&mut s, None).unwrap());
    assert_eq!(current(&c).0, vec![3]);
    let lockable = |pk: u8| {
        let mut other = session(&engine, Isolation::ReadCommitted);
        let outcome = other.get_row(&t, &[pk], RowLock::Exclusive);
        other.rollback().unwrap();
        match outcome {
            Ok(_) => true,
            Err(e) if e.kind() == Some(ErrorKind::TimedOut) => false,
            Err(e) => panic!("{e}"),
        }
    };
    assert!(!lockable(3));
    // unlock_current lets go of the row the statement did not want (READ COMMITTED).
    c.unlock_current(&s).unwrap();
    assert!(lockable(3));
    assert!(!lockable(2));
    assert!(!c.next(&mut s, None).unwrap());
    assert!(lockable(4));
    s.rollback().unwrap();
    drop((c, s, t));
    close(db, engine);
}

#[test]
fn named_savepoints_and_hidden_row_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"h", &[hidden(), secondary("v", false)], 1)
        .unwrap();
    let mut s = session(&engine, Isolation::RepeatableRead);
    let a = s.insert_hidden(&t, &[k(b"a")], b"row a").unwrap();
    s.set_named_savepoint(7).unwrap();
    let b = s.insert_hidden(&t, &[k(b"b")], b"row b").unwrap();
    assert_ne!(a, b);
    s.set_named_savepoint(8).unwrap();
    s.insert_hidden(&t, &[k(b"c")], b"row c").unwrap();
    // SAVEPOINT 7 reused: the older 7 goes, 8 stays.
    s.set_named_savepoint(7).unwrap();
    assert!(s.release_named_savepoint(7).unwrap());
    assert!(s.release_named_savepoint(7).unwrap());
    assert!(!s.release_named_savepoint(7).unwrap());
    // ROLLBACK TO 8 undoes c and keeps 8.
    assert!(s.rollback_to_named_savepoint(8).unwrap());
    assert!(s.rollback_to_named_savepoint(8).unwrap());
    let mut c = Cursor::new(Arc::clone(&t), 1).unwrap();
    let mut keys = vec![];
    let mut found = c.first(&mut s).unwrap();
    while found {
        let r = c.row().unwrap();
        keys.push((r.key.to_vec(), r.pk.to_vec()));
        found = c.next(&mut s, None).unwrap();
    }
    assert_eq!(
        keys,
        vec![(b"a".to_vec(), a.to_vec()), (b"b".to_vec(), b.to_vec())]
    );
    assert_eq!(
        s.get_row(&t, &b, RowLock::None).unwrap(),
        Some(b"row b".to_vec())
    );
    let keyed = engine.create_table(b"k", &[primary()], 1).unwrap();
    let err = s.insert_hidden(&keyed, &[], b"x").unwrap_err();
    assert_eq!(err.kind(), Some(ErrorKind::InvalidArgument), "{err}");
    s.rollback().unwrap();
    drop((c, s, t, keyed));
    close(db, engine);
}

#[test]
fn range_estimates_take_tuples() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let est = |lo: Option<(&[u8], bool)>, hi: Option<(&[u8], bool)>| {
        t.estimate_tuple_range(1, lo, hi, 100).unwrap()
    };
    assert_eq!(est(None, None), 6);
    assert_eq!(est(Some((&[2], false)), Some((&[2], true))), 3);
    assert_eq!(est(Some((&[2], true)), None), 1);
    assert_eq!(est(Some((&[1], false)), Some((&[2], false))), 2);
    assert_eq!(est(Some((&[0xff], true)), None), 0);
    // An index the table lacks is refused, also with a lower bound past every key (found
    // by the `handler_sequence` fuzz target).
    let n = t.index_count();
    assert!(t.estimate_tuple_range(n, None, None, 100).is_err());
    assert!(
        t.estimate_tuple_range(n, Some((&[0xff], true)), None, 100)
            .is_err()
    );
    drop(t);
    close(db, engine);
}

#[test]
fn a_commit_does_not_wait_for_a_cursor_another_session_reads_with() {
    // MariaDB hands a table's handler (and its cursor) to another connection between
    // statements. Session A read with the cursor, then holds a row lock; session B reads
    // the same row with the same cursor and waits for A's lock inside the cursor. A's
    // commit must not wait for the cursor (it made no iterator there now): it used to
    // block until B's wait timed out.
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table_with(&engine, ROWS);
    let mut a = engine
        .begin_session(SessionOptions {
            lock_timeout: Duration::from_secs(10),
            ..SessionOptions::default()
        })
        .unwrap();
    let mut c = Cursor::new(Arc::clone(&t), 0).unwrap();
    assert!(c.first(&mut a).unwrap());
    c.reset();
    a.get_row(&t, &[6], RowLock::Exclusive).unwrap();
    let waiter = {
        let engine_b = engine
            .begin_session(SessionOptions {
                lock_timeout: Duration::from_secs(10),
                ..SessionOptions::default()
            })
            .unwrap();
        std::thread::spawn(move || {
            let mut b = engine_b;
            c.set_mode(CursorMode::Locking {
                lock: RowLock::Exclusive,
                skip_locked: false,
            });
            let found = c.seek(&mut b, &[6], Seek::AtOrAfter, true).unwrap();
            b.rollback().unwrap();
            (found, c)
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    let started = std::time::Instant::now();
    a.commit().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the commit waited {:?}",
        started.elapsed()
    );
    let (found, c) = waiter.join().unwrap();
    assert!(found);
    drop((c, a, t));
    close(db, engine);
}
