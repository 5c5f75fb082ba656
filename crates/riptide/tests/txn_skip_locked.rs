#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]
//! `SKIP LOCKED`: a skip-locked locking iterator steps over rows other transactions hold in a
//! conflicting mode and over their uncommitted inserts, never waiting, and locks the rows it
//! returns; it gap-locks what it walked under repeatable read (not under read committed); a
//! non-waiting point read reports a locked row as `LockedByOther`.

use std::time::{Duration, Instant};

use riptide::{
    Db, ErrorKind, IsolationLevel, LockedRead, Options, ReadOptions, SyncMode, Transaction,
    TransactionOptions,
};

/// Any wait at all in these tests would last this long: the assertions check that none
/// happens (`lock_statistics().waits`) and that the scans return well before it.
const LIMIT: Duration = Duration::from_secs(20);

fn open(keys: &[&[u8]]) -> (tempfile::TempDir, Db) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default().sync_mode(SyncMode::None)).unwrap();
    for k in keys {
        db.put(k, b"v").unwrap();
    }
    (dir, db)
}

fn txn(db: &Db, level: IsolationLevel) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(level)
            .current_reads(true)
            .lock_timeout(LIMIT),
    )
    .unwrap()
}

fn rr(db: &Db) -> Transaction {
    txn(db, IsolationLevel::RepeatableRead)
}

/// A forward skip-locked scan of the whole column family.
fn scan(t: &Transaction, db: &Db, exclusive: bool) -> Vec<Vec<u8>> {
    let mut it = t
        .iter_skip_locked(&db.default_cf(), ReadOptions::default(), exclusive)
        .unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next().unwrap();
    }
    out
}

fn keys(list: &[&[u8]]) -> Vec<Vec<u8>> {
    list.iter().map(|k| k.to_vec()).collect()
}

/// Whether another transaction could lock `key` exclusively right now.
fn lockable(db: &Db, key: &[u8]) -> bool {
    let probe = rr(db);
    probe.set_lock_timeout(Duration::ZERO);
    match probe.get_for_update(&db.default_cf(), key, true) {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::TimedOut => false,
        Err(e) => panic!("probe of {key:?}: {e}"),
    }
}

#[test]
fn locked_rows_are_skipped_and_the_others_locked() {
    let (_dir, db) = open(&[b"k1", b"k2", b"k3", b"k4", b"k5"]);
    let cf = db.default_cf();
    let a = rr(&db);
    a.get_for_update(&cf, b"k2", true).unwrap();
    a.get_for_update(&cf, b"k4", false).unwrap();

    let started = Instant::now();
    let b = rr(&db);
    assert_eq!(scan(&b, &db, true), keys(&[b"k1", b"k3", b"k5"]));
    // B holds what it returned.
    assert!(!lockable(&db, b"k1") && !lockable(&db, b"k3") && !lockable(&db, b"k5"));
    b.commit().unwrap();
    assert!(lockable(&db, b"k1"));
    // Shared: only the exclusively held row conflicts.
    let c = rr(&db);
    assert_eq!(scan(&c, &db, false), keys(&[b"k1", b"k3", b"k4", b"k5"]));
    c.commit().unwrap();
    assert!(started.elapsed() < LIMIT / 4);
    assert_eq!(db.lock_statistics().waits, 0, "nothing waited");
    // Backward, too.
    let d = rr(&db);
    let mut it = d
        .iter_skip_locked(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek_to_last().unwrap();
    let mut back = Vec::new();
    while it.valid() {
        back.push(it.key().to_vec());
        it.prev().unwrap();
    }
    assert_eq!(back, keys(&[b"k5", b"k3", b"k1"]));
}

#[test]
fn a_shared_scan_skips_the_rows_another_skip_locked_scan_returned() {
    // The row a skip-locked exclusive scan of another transaction returned is skipped by a
    // shared scan: B's exclusive locks conflict with shared requests.
    let (_dir, db) = open(&[b"k1", b"k2"]);
    let b = rr(&db);
    let mut it = b
        .iter_skip_locked(&db.default_cf(), ReadOptions::default(), true)
        .unwrap();
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), b"k1");
    drop(it);
    let c = rr(&db);
    assert_eq!(scan(&c, &db, false), keys(&[b"k2"]));
}

#[test]
fn uncommitted_inserts_are_skipped_not_waited_for() {
    let (_dir, db) = open(&[b"k1", b"k3"]);
    let cf = db.default_cf();
    let writer = rr(&db);
    writer.insert(&cf, b"k2", b"new").unwrap();
    writer.put(&cf, b"k3", b"changed").unwrap();
    // A waiting locking scan waits for the writer (here: times out at once)...
    let waiting = rr(&db);
    waiting.set_lock_timeout(Duration::ZERO);
    let mut it = waiting
        .iter_locking(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek_to_first().unwrap();
    assert_eq!(it.next().unwrap_err().kind(), ErrorKind::TimedOut);
    drop(it);
    waiting.rollback().unwrap();
    // ...a skip-locked one steps over its insert and its locked row.
    let scanner = rr(&db);
    let started = Instant::now();
    assert_eq!(scan(&scanner, &db, true), keys(&[b"k1"]));
    assert!(started.elapsed() < LIMIT / 4);
    assert_eq!(db.lock_statistics().waits, 0);
    // Once the writer commits, the rows are there and free.
    writer.commit().unwrap();
    scanner.commit().unwrap();
    let again = rr(&db);
    assert_eq!(scan(&again, &db, true), keys(&[b"k1", b"k2", b"k3"]));
}

#[test]
fn an_insert_ahead_of_the_scan_is_skipped_while_uncommitted() {
    // The insert happens after the scan reserved its range: it is recorded there, and the
    // scan, reaching it, skips it instead of waiting for its row lock.
    let (_dir, db) = open(&[b"k1", b"k5"]);
    let cf = db.default_cf();
    let scanner = rr(&db);
    let mut it = scanner
        .iter_skip_locked(&cf, ReadOptions::default(), true)
        .unwrap();
    it.seek_to_first().unwrap();
    assert_eq!(it.key(), b"k1");
    let writer = rr(&db);
    writer.insert(&cf, b"k3", b"new").unwrap();
    it.next().unwrap();
    assert_eq!(it.key(), b"k5");
    it.next().unwrap();
    assert!(!it.valid());
    assert_eq!(db.lock_statistics().waits, 0);
}

#[test]
fn gaps_are_locked_under_repeatable_read_only() {
    let (_dir, db) = open(&[b"k10", b"k20", b"k30", b"k40"]);
    let cf = db.default_cf();
    let holder = rr(&db);
    holder.get_for_update(&cf, b"k20", true).unwrap();

    let scanner = rr(&db);
    assert_eq!(scan(&scanner, &db, true), keys(&[b"k10", b"k30", b"k40"]));
    // Inserts into the walked range wait for the scanner (zero timeout: fail at once), the
    // gaps around the skipped row included; the scan ran off the end, so every gap is held.
    let inserter = rr(&db);
    inserter.set_lock_timeout(Duration::ZERO);
    for k in [b"k05", b"k15", b"k25", b"k35", b"k45"] {
        let e = inserter.insert(&cf, k, b"x").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut, "{k:?}: {e}");
        assert!(e.to_string().contains("gap locked by"), "{e}");
    }
    scanner.commit().unwrap();
    inserter.insert(&cf, b"k15", b"x").unwrap();
    inserter.rollback().unwrap();

    // Read committed: no gap lock at all.
    let rc = txn(&db, IsolationLevel::ReadCommitted);
    assert_eq!(scan(&rc, &db, true), keys(&[b"k10", b"k30", b"k40"]));
    let inserter = rr(&db);
    inserter.set_lock_timeout(Duration::ZERO);
    inserter.insert(&cf, b"k15", b"x").unwrap();
    inserter.insert(&cf, b"k45", b"x").unwrap();
    assert_eq!(db.lock_statistics().gap_locks, 0);
}

#[test]
fn a_locked_row_past_the_stop_key_ends_the_scan() {
    let (_dir, db) = open(&[b"k1", b"k2", b"k3", b"k4"]);
    let cf = db.default_cf();
    let holder = rr(&db);
    holder.get_for_update(&cf, b"k3", true).unwrap();
    let scanner = rr(&db);
    let mut it = scanner
        .iter_skip_locked(&cf, ReadOptions::default(), true)
        .unwrap();
    it.set_stop(Some(b"k3"));
    it.seek_to_first().unwrap();
    let mut seen = Vec::new();
    while it.valid() {
        seen.push(it.key().to_vec());
        it.next().unwrap();
    }
    assert_eq!(seen, keys(&[b"k1", b"k2"]));
    drop(it);
    // It did not go on to lock k4.
    assert!(lockable(&db, b"k4"));
}

#[test]
fn a_point_read_reports_a_locked_row_without_waiting() {
    let (_dir, db) = open(&[b"k1", b"k2"]);
    let cf = db.default_cf();
    let holder = rr(&db);
    holder.put(&cf, b"k2", b"changing").unwrap();
    holder.get_for_update(&cf, b"k1", false).unwrap();
    let t = rr(&db);
    let started = Instant::now();
    assert_eq!(
        t.get_for_update_skip_locked(&cf, b"k2", true).unwrap(),
        LockedRead::LockedByOther
    );
    assert_eq!(
        t.get_for_update_skip_locked(&cf, b"k2", false).unwrap(),
        LockedRead::LockedByOther
    );
    // Shared with a shared holder: compatible.
    assert_eq!(
        t.get_for_update_skip_locked(&cf, b"k1", false).unwrap(),
        LockedRead::Value(Some(b"v".to_vec()))
    );
    assert_eq!(
        t.get_for_update_skip_locked(&cf, b"k1", true).unwrap(),
        LockedRead::LockedByOther
    );
    // An absent key is locked and reads as absent.
    assert_eq!(
        t.get_for_update_skip_locked(&cf, b"k9", true).unwrap(),
        LockedRead::Value(None)
    );
    assert!(!lockable(&db, b"k9"));
    assert!(started.elapsed() < LIMIT / 4);
    assert_eq!(db.lock_statistics().waits, 0);
    // Once the holder is gone, the row reads as it committed it.
    holder.commit().unwrap();
    assert_eq!(
        t.get_for_update_skip_locked(&cf, b"k2", true).unwrap(),
        LockedRead::Value(Some(b"changing".to_vec()))
    );
}
