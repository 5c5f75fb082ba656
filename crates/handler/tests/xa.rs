//! Two-phase commit of a session (XA PREPARE): prepared writes are invisible and durable;
//! the session commits or rolls them back, or, once dropped, the database does by xid, also
//! after a reopen.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use common::*;
use riptide::Xid;
use riptide_handler::{RowLock, SessionOptions};

fn row(
    engine: &riptide_handler::HandlerEngine,
    t: &riptide_handler::Table,
    pk: &[u8],
) -> Option<Vec<u8>> {
    let s = engine.begin_session(SessionOptions::default()).unwrap();
    s.get_row(t, pk, RowLock::None).unwrap()
}

#[test]
fn a_prepared_session_commits_or_rolls_back_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"./db/t", &[primary(), secondary("k", false)], 0)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"a")], b"row1").unwrap();
    s.prepare(&Xid::new(1, b"x1", b"").unwrap()).unwrap();
    assert_eq!(row(&engine, &t, b"1"), None);
    assert_eq!(db.prepared_transactions().len(), 1);
    s.commit().unwrap();
    assert_eq!(row(&engine, &t, b"1"), Some(b"row1".to_vec()));
    assert!(db.prepared_transactions().is_empty());
    drop(s);

    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"2", &[k(b"b")], b"row2").unwrap();
    s.prepare(&Xid::new(1, b"x2", b"q").unwrap()).unwrap();
    s.rollback().unwrap();
    assert_eq!(row(&engine, &t, b"2"), None);
    assert!(db.prepared_transactions().is_empty());
    drop((s, t));
    close(db, engine);
}

#[test]
fn a_dropped_prepared_session_is_finished_by_xid_after_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"./db/t", &[primary(), secondary("k", false)], 0)
        .unwrap();
    let x1 = Xid::new(1, b"k1", b"").unwrap();
    let x2 = Xid::new(1, b"k2", b"").unwrap();
    for (xid, pk, key) in [(&x1, b"1", b"a"), (&x2, b"2", b"b")] {
        let mut s = engine.begin_session(SessionOptions::default()).unwrap();
        s.insert(&t, pk, &[k(key)], b"row").unwrap();
        s.prepare(xid).unwrap();
        drop(s);
    }
    drop(t);
    // As after a crash: no clean close of the handler engine.
    drop(engine);
    std::sync::Arc::try_unwrap(db).unwrap().close().unwrap();

    let (db, engine) = open(dir.path());
    let t = engine.open_table(b"./db/t").unwrap().unwrap();
    let mut listed = db.prepared_transactions();
    listed.sort();
    assert_eq!(listed, vec![x1.clone(), x2.clone()]);
    assert_eq!(row(&engine, &t, b"1"), None);
    db.commit_prepared(&x1).unwrap();
    db.rollback_prepared(&x2).unwrap();
    assert_eq!(row(&engine, &t, b"1"), Some(b"row".to_vec()));
    assert_eq!(row(&engine, &t, b"2"), None);
    assert_eq!(
        index_entries(&engine, &t, 1),
        vec![(b"a".to_vec(), b"1".to_vec())]
    );
    assert!(db.prepared_transactions().is_empty());
    drop(t);
    close(db, engine);
}
