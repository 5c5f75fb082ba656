//! `HandlerEngine::lock_table`: the locks of the sessions in handler terms (table, index,
//! kind of key, key without its index id, owner), what `information_schema.RIPTIDE_LOCKS`
//! shows; and the owner of a session's transaction in `Db::transactions`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::ops::Bound;
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use riptide::LockMode;
use riptide_handler::{
    HandlerEngine, HandlerLock, LockTarget, RowLock, Session, SessionOptions, Table,
};

fn session(engine: &HandlerEngine, owner: u64) -> Session {
    engine
        .begin_session(SessionOptions {
            lock_timeout: Duration::from_secs(60),
            owner,
            ..SessionOptions::default()
        })
        .unwrap()
}

/// A table `t` (primary key, UNIQUE secondary index `u`) with rows 1..=3.
fn table(engine: &HandlerEngine) -> std::sync::Arc<Table> {
    let t = engine
        .create_table(b"./db/t", &[primary(), secondary("u", true)], 0)
        .unwrap();
    let mut s = session(engine, 0);
    for pk in [b"1", b"2", b"3"] {
        s.insert(&t, pk, &[k(pk)], b"row").unwrap();
    }
    s.commit().unwrap();
    t
}

fn find(locks: &[HandlerLock], f: impl Fn(&HandlerLock) -> bool) -> Vec<&HandlerLock> {
    locks.iter().filter(|l| f(l)).collect()
}

#[test]
fn locks_are_named_by_table_index_and_owner() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = table(&engine);

    let holder = session(&engine, 11);
    holder.get_row(&t, b"2", RowLock::Exclusive).unwrap();
    let (locks, truncated) = engine.lock_table(1000).unwrap();
    assert!(!truncated);
    let rec = find(&locks, |l| l.target == LockTarget::Record);
    assert_eq!(rec.len(), 1, "{locks:?}");
    let r = rec[0];
    assert_eq!((r.txn, r.owner), (holder.transaction().id(), 11));
    assert_eq!(r.mode, Some(LockMode::Exclusive));
    assert_eq!(r.table.as_deref(), Some("./db/t"));
    assert_eq!(r.index.as_deref(), Some("PRIMARY"));
    assert_eq!(
        r.start,
        Bound::Included(b"2".to_vec()),
        "the key without its index id"
    );
    assert_eq!(r.waiting, None);

    // An insert by another owner locks its row, its unique value and the table's write
    // lock (shared).
    let mut inserter = session(&engine, 22);
    inserter.insert(&t, b"9", &[k(b"9")], b"row").unwrap();
    let (locks, _) = engine.lock_table(1000).unwrap();
    let mine = find(&locks, |l| l.owner == 22);
    let targets: Vec<LockTarget> = mine.iter().map(|l| l.target).collect();
    assert!(targets.contains(&LockTarget::Record), "{mine:?}");
    let unique = find(&locks, |l| {
        l.owner == 22 && l.target == LockTarget::UniqueValue
    });
    assert_eq!(unique.len(), 1, "{mine:?}");
    assert_eq!(unique[0].index.as_deref(), Some("u"));
    assert_eq!(unique[0].table.as_deref(), Some("./db/t"));
    assert_eq!(unique[0].start, Bound::Included(b"9".to_vec()));
    let write = find(&locks, |l| {
        l.owner == 22 && l.target == LockTarget::TableWrite
    });
    assert_eq!(write.len(), 1, "{mine:?}");
    assert_eq!(write[0].table.as_deref(), Some("./db/t"));
    assert_eq!(write[0].mode, Some(LockMode::Shared));
    assert_eq!(write[0].index, None);
    assert_eq!(write[0].start, Bound::Unbounded);
    inserter.commit().unwrap();

    // A session waiting for row 2 is listed as waiting, blocked by the holder.
    let waiter = session(&engine, 33);
    thread::scope(|s| {
        let w = s.spawn(|| waiter.get_row(&t, b"2", RowLock::Shared));
        let deadline = Instant::now() + Duration::from_secs(10);
        let waiting = loop {
            let (locks, _) = engine.lock_table(1000).unwrap();
            if let Some(l) = locks.iter().find(|l| l.waiting.is_some()) {
                break l.clone();
            }
            assert!(Instant::now() < deadline, "no waiting lock: {locks:?}");
            thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(waiting.owner, 33);
        assert_eq!(waiting.mode, Some(LockMode::Shared));
        assert_eq!(waiting.index.as_deref(), Some("PRIMARY"));
        assert_eq!(waiting.start, Bound::Included(b"2".to_vec()));
        assert_eq!(waiting.blocked_by, vec![holder.transaction().id()]);
        let owners: Vec<u64> = db.transactions().iter().map(|t| t.owner).collect();
        assert!(owners.contains(&11) && owners.contains(&33), "{owners:?}");
        let mut holder = holder;
        holder.commit().unwrap();
        assert!(w.join().unwrap().unwrap().is_some());
    });
    // An owner set after the session began.
    waiter.set_owner(44);
    assert!(db.transactions().iter().any(|t| t.owner == 44));
}
