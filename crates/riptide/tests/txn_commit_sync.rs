#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `Transaction::set_commit_sync(false)` and `Db::sync_wal` in full sync mode (what the
//! MariaDB plugin does after two-phase commit with the binary log, and when the binary log
//! asks for a checkpoint): the commit of a prepared transaction and a plain commit skip the
//! WAL sync, a prepare still syncs, `sync_wal` syncs once, and everything is there after a
//! reopen.

use riptide::{Db, IsolationLevel, Options, SyncMode, TransactionOptions, Xid};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default().sync_mode(SyncMode::Full)).unwrap()
}

fn syncs(db: &Db) -> u64 {
    db.statistics().wal_syncs
}

fn xid(n: u32) -> Xid {
    Xid::new(1, format!("gtrid-{n}").as_bytes(), b"b").unwrap()
}

#[test]
fn commits_without_sync_are_synced_later_and_survive_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let cf = db.default_cf();
        let opts = TransactionOptions::default().isolation(IsolationLevel::RepeatableRead);

        // Two-phase: the prepare syncs, the commit does not.
        let t = db.begin_transaction(opts.clone()).unwrap();
        t.put(&cf, b"prepared", b"1").unwrap();
        let before = syncs(&db);
        t.prepare(&xid(1)).unwrap();
        assert_eq!(syncs(&db), before + 1, "a prepare syncs");
        t.set_commit_sync(false);
        t.commit().unwrap();
        assert_eq!(syncs(&db), before + 1, "the commit did not sync");

        // One phase, without and with the sync.
        let t = db.begin_transaction(opts.clone()).unwrap();
        t.put(&cf, b"plain", b"2").unwrap();
        t.set_commit_sync(false);
        t.commit().unwrap();
        assert_eq!(syncs(&db), before + 1);
        let t = db.begin_transaction(opts).unwrap();
        t.put(&cf, b"synced", b"3").unwrap();
        t.commit().unwrap();
        assert_eq!(syncs(&db), before + 2, "the default still syncs");

        // Nothing new to sync: sync_wal does not call fdatasync again.
        db.sync_wal().unwrap();
        assert_eq!(syncs(&db), before + 2);
        assert_eq!(db.get(b"prepared").unwrap().as_deref(), Some(&b"1"[..]));
        db.close().unwrap();
    }
    let db = open(dir.path());
    for (k, v) in [("prepared", "1"), ("plain", "2"), ("synced", "3")] {
        assert_eq!(
            db.get(k.as_bytes()).unwrap().as_deref(),
            Some(v.as_bytes()),
            "{k}"
        );
    }
    assert!(db.prepared_transactions().is_empty());
}

#[test]
fn sync_wal_syncs_what_the_commits_left() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let cf = db.default_cf();
    let t = db.begin_transaction(TransactionOptions::default()).unwrap();
    t.put(&cf, b"k", b"v").unwrap();
    t.set_commit_sync(false);
    let before = syncs(&db);
    t.commit().unwrap();
    assert_eq!(syncs(&db), before);
    db.sync_wal().unwrap();
    assert_eq!(syncs(&db), before + 1);
}
