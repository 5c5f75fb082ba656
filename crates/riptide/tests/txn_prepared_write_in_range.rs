#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `Db::prepared_write_in_range`: a prepared transaction's writes (not in the database yet)
//! are found by key range and column family, whether prepared in this process, left by a
//! dropped handle, or recovered from the WAL after a reopen; finishing it by xid clears it.

use std::time::Duration;

use riptide::{Db, Options, SyncMode, TransactionOptions, Xid};

fn options() -> Options {
    Options::default().sync_mode(SyncMode::None)
}

#[test]
fn prepared_writes_are_found_by_range_until_finished() {
    let dir = tempfile::tempdir().unwrap();
    let xid = Xid::from_name("xa-1").unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        let cf = db.default_cf();
        let other = db.create_cf("other").unwrap();
        db.put(b"t1-committed", b"v").unwrap();
        assert_eq!(db.prepared_write_in_range(&cf, b"", None), None);
        let t = db
            .begin_transaction(TransactionOptions::default().lock_timeout(Duration::from_secs(5)))
            .unwrap();
        t.put(&cf, b"t1-row5", b"x").unwrap();
        t.delete(&cf, b"t1-committed").unwrap();
        t.put(&other, b"t2-row", b"y").unwrap();
        // Not prepared yet: nothing outstanding.
        assert_eq!(db.prepared_write_in_range(&cf, b"t1-", Some(b"t1.")), None);
        t.prepare(&xid).unwrap();
        let found = db.prepared_write_in_range(&cf, b"t1-", Some(b"t1."));
        assert_eq!(found, Some((xid.clone(), b"t1-committed".to_vec())));
        // A delete counts as a write; bounds are [lower, upper).
        assert!(
            db.prepared_write_in_range(&cf, b"t1-row5", Some(b"t1-row6"))
                .is_some()
        );
        assert_eq!(
            db.prepared_write_in_range(&cf, b"t1-row6", None),
            None,
            "above every key it wrote"
        );
        assert_eq!(
            db.prepared_write_in_range(&cf, b"t1-", Some(b"t1-committed")),
            None,
            "the upper bound is exclusive"
        );
        // Column families are told apart.
        assert_eq!(
            db.prepared_write_in_range(&other, b"t1-", Some(b"t1.")),
            None
        );
        assert_eq!(
            db.prepared_write_in_range(&other, b"t2-", None),
            Some((xid.clone(), b"t2-row".to_vec()))
        );
        // The handle goes (a client disconnected after XA PREPARE): still outstanding.
        drop(t);
        assert!(db.prepared_write_in_range(&cf, b"t1-", None).is_some());
        db.close().unwrap();
    }
    // Recovered from the WAL.
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    assert_eq!(db.prepared_transactions(), vec![xid.clone()]);
    assert_eq!(
        db.prepared_write_in_range(&cf, b"t1-", Some(b"t1.")),
        Some((xid.clone(), b"t1-committed".to_vec()))
    );
    db.commit_prepared(&xid).unwrap();
    assert_eq!(db.prepared_write_in_range(&cf, b"", None), None);
    assert_eq!(db.get(b"t1-row5").unwrap(), Some(b"x".to_vec()));
    assert_eq!(db.get(b"t1-committed").unwrap(), None);
}
