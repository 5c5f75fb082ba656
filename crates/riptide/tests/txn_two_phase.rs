//! Two-phase commit: prepare then commit or roll back in-process; xid errors; prepared
//! transactions surviving a clean reopen (still listed, their rows locked, finished by xid),
//! many memtable switches (their WAL records outliving the segments they were written to),
//! and a SIGKILL (a child process, this binary again with `RIPTIDE_2PC_CHILD` set).

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use riptide::{
    Concurrency, Db, ErrorKind, IsolationLevel, Options, ReadOptions, SyncMode, Transaction,
    TransactionOptions, Xid,
};

fn options() -> Options {
    Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(64 * 1024)
}

fn xid(name: &str) -> Xid {
    Xid::from_name(name).unwrap()
}

fn begin(db: &Db, mode: Concurrency) -> Transaction {
    db.begin_transaction(
        TransactionOptions::default()
            .isolation(IsolationLevel::RepeatableRead)
            .concurrency(mode)
            .lock_timeout(Duration::from_secs(30)),
    )
    .unwrap()
}

/// Whether another transaction can lock `key` right now (a pessimistic transaction with a
/// zero lock timeout: `TimedOut` means someone holds it).
fn lockable(db: &Db, key: &[u8]) -> bool {
    let cf = db.default_cf();
    let probe = db
        .begin_transaction(
            TransactionOptions::default()
                .concurrency(Concurrency::Pessimistic)
                .lock_timeout(Duration::ZERO),
        )
        .unwrap();
    let r = probe.put(&cf, key, b"probe");
    probe.rollback().unwrap();
    match r {
        Ok(()) => true,
        Err(e) if e.kind() == ErrorKind::TimedOut => false,
        Err(e) => panic!("probing the lock on {key:?}: {e}"),
    }
}

fn listed(db: &Db) -> BTreeSet<Xid> {
    db.prepared_transactions().into_iter().collect()
}

fn set(names: &[&str]) -> BTreeSet<Xid> {
    names.iter().map(|n| xid(n)).collect()
}

/// Prepares a transaction writing `<name>/a` and `<name>/b` (and deleting `<name>/gone`).
fn prepare(db: &Db, mode: Concurrency, name: &str) -> Transaction {
    let cf = db.default_cf();
    let txn = begin(db, mode);
    txn.put(&cf, format!("{name}/a").as_bytes(), name.as_bytes())
        .unwrap();
    txn.put(&cf, format!("{name}/b").as_bytes(), name.as_bytes())
        .unwrap();
    txn.delete(&cf, format!("{name}/gone").as_bytes()).unwrap();
    txn.prepare(&xid(name)).unwrap();
    txn
}

/// Whether the writes of the transaction prepared as `name` are visible (all or nothing).
fn applied(db: &Db, name: &str) -> bool {
    let a = db.get(format!("{name}/a").as_bytes()).unwrap();
    let b = db.get(format!("{name}/b").as_bytes()).unwrap();
    let gone = db.get(format!("{name}/gone").as_bytes()).unwrap();
    match (a, b, gone) {
        (Some(a), Some(b), None) => {
            assert_eq!(a, name.as_bytes());
            assert_eq!(b, name.as_bytes());
            true
        }
        (None, None, Some(_)) => false,
        other => panic!("{name} is half applied: {other:?}"),
    }
}

/// The row `<name>/gone` each prepared transaction deletes.
fn seed_gone(db: &Db, names: &[&str]) {
    for n in names {
        db.put(format!("{n}/gone").as_bytes(), b"old").unwrap();
    }
}

#[test]
fn prepare_then_commit_in_process() {
    for mode in [Concurrency::Pessimistic, Concurrency::Optimistic] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        let cf = db.default_cf();
        seed_gone(&db, &["t"]);
        let txn = prepare(&db, mode, "t");
        assert!(!applied(&db, "t"), "{mode:?}: visible after prepare");
        assert_eq!(listed(&db), set(&["t"]), "{mode:?}");
        // Prepared: no more writes, and its rows stay locked.
        let err = txn.put(&cf, b"more", b"x").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{mode:?}: {err}");
        assert!(!lockable(&db, b"t/a"), "{mode:?}");
        txn.commit().unwrap();
        assert!(applied(&db, "t"), "{mode:?}: invisible after commit");
        assert_eq!(listed(&db), set(&[]), "{mode:?}");
        assert!(lockable(&db, b"t/a"), "{mode:?}");
        let err = txn.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{mode:?}: {err}");
        // Nothing of the prepare record is replayed as data after a reopen.
        drop(txn);
        db.close().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        assert!(applied(&db, "t"), "{mode:?}");
        assert_eq!(listed(&db), set(&[]), "{mode:?}");
    }
}

#[test]
fn prepare_then_rollback_in_process() {
    for mode in [Concurrency::Pessimistic, Concurrency::Optimistic] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        seed_gone(&db, &["t"]);
        let txn = prepare(&db, mode, "t");
        assert!(!lockable(&db, b"t/b"), "{mode:?}");
        txn.rollback().unwrap();
        assert!(!applied(&db, "t"), "{mode:?}");
        assert_eq!(listed(&db), set(&[]), "{mode:?}");
        assert!(lockable(&db, b"t/b"), "{mode:?}");
        drop(txn);
        db.close().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        assert!(!applied(&db, "t"), "{mode:?}");
        assert_eq!(listed(&db), set(&[]), "{mode:?}");
    }
}

#[test]
fn prepare_with_a_duplicate_xid_is_an_invalid_argument() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let cf = db.default_cf();
    seed_gone(&db, &["dup"]);
    let first = prepare(&db, Concurrency::Pessimistic, "dup");
    let second = begin(&db, Concurrency::Pessimistic);
    second.put(&cf, b"other", b"x").unwrap();
    let err = second.prepare(&xid("dup")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    // The failed prepare ended the second transaction and released its lock; the first is
    // untouched.
    assert!(lockable(&db, b"other"));
    assert_eq!(listed(&db), set(&["dup"]));
    first.commit().unwrap();
    assert!(applied(&db, "dup"));
    assert_eq!(db.get(b"other").unwrap(), None);
    // Once finished, the xid can be used again.
    let third = begin(&db, Concurrency::Optimistic);
    third.put(&cf, b"other", b"y").unwrap();
    third.prepare(&xid("dup")).unwrap();
    assert_eq!(listed(&db), set(&["dup"]));
    db.commit_prepared(&xid("dup")).unwrap();
    assert_eq!(db.get(b"other").unwrap(), Some(b"y".to_vec()));
    assert_eq!(listed(&db), set(&[]));
}

#[test]
fn finishing_an_unknown_xid_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let err = db.commit_prepared(&xid("nope")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    let err = db.rollback_prepared(&xid("nope")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    // A finished one is unknown too.
    seed_gone(&db, &["done"]);
    prepare(&db, Concurrency::Optimistic, "done")
        .commit()
        .unwrap();
    let err = db.commit_prepared(&xid("done")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    // Xids with the same name but another format id or branch are different.
    let other = Xid::new(7, b"done", b"branch").unwrap();
    let err = db.rollback_prepared(&other).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
}

/// A prepared transaction survives a clean close and reopen: listed, invisible, its rows
/// locked; `commit_prepared` makes it visible and unlocks, `rollback_prepared` leaves nothing.
#[test]
fn prepared_survives_a_clean_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        seed_gone(&db, &["c", "r"]);
        let c = prepare(&db, Concurrency::Pessimistic, "c");
        let r = prepare(&db, Concurrency::Optimistic, "r");
        drop((c, r));
        db.close().unwrap();
    }
    {
        let db = Db::open(dir.path(), options()).unwrap();
        assert_eq!(listed(&db), set(&["c", "r"]));
        assert!(!applied(&db, "c"));
        assert!(!applied(&db, "r"));
        for k in ["c/a", "c/b", "c/gone", "r/a", "r/b", "r/gone"] {
            assert!(
                !lockable(&db, k.as_bytes()),
                "{k} is not locked after reopen"
            );
        }
        // An optimistic transaction cannot commit over it either.
        let cf = db.default_cf();
        let opt = db
            .begin_transaction(
                TransactionOptions::default()
                    .concurrency(Concurrency::Optimistic)
                    .lock_timeout(Duration::ZERO),
            )
            .unwrap();
        opt.put(&cf, b"c/a", b"sneaky").unwrap();
        let err = opt.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut, "{err}");

        db.commit_prepared(&xid("c")).unwrap();
        db.rollback_prepared(&xid("r")).unwrap();
        assert!(applied(&db, "c"));
        assert!(!applied(&db, "r"));
        assert_eq!(listed(&db), set(&[]));
        for k in ["c/a", "c/b", "r/a", "r/b"] {
            assert!(
                lockable(&db, k.as_bytes()),
                "{k} still locked after finishing"
            );
        }
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(listed(&db), set(&[]));
    assert!(applied(&db, "c"));
    assert!(!applied(&db, "r"));
}

/// The WAL segment files (`NNNNNN.log`) in `dir`.
fn wal_segments(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".log"))
        .collect()
}

/// A prepared transaction outlives the WAL segment it was prepared in: after megabytes of
/// other writes (dozens of memtable switches and flushes, old segments deleted) it is still
/// listed, committable in-process, and after a reopen listed and committable by xid.
#[test]
fn prepared_survives_many_memtable_switches() {
    let dir = tempfile::tempdir().unwrap();
    let filler = vec![b'f'; 1000];
    {
        let db = Db::open(dir.path(), options()).unwrap();
        seed_gone(&db, &["in-process", "after-reopen"]);
        let in_process = prepare(&db, Concurrency::Pessimistic, "in-process");
        let after_reopen = prepare(&db, Concurrency::Optimistic, "after-reopen");
        let prepared_in = wal_segments(dir.path());
        assert!(!prepared_in.is_empty());
        for i in 0..3000u32 {
            db.put(format!("filler/{i:06}").as_bytes(), &filler)
                .unwrap();
        }
        db.flush().unwrap();
        let flushes = db.statistics().flushes;
        assert!(flushes >= 10, "only {flushes} flushes");
        let left = wal_segments(dir.path());
        assert!(
            prepared_in.is_disjoint(&left),
            "the segments the prepares were written to ({prepared_in:?}) are still there: {left:?}"
        );
        assert_eq!(listed(&db), set(&["in-process", "after-reopen"]));
        in_process.commit().unwrap();
        assert!(applied(&db, "in-process"));
        drop(after_reopen);
        // More rotations with only one transaction left prepared.
        for i in 3000..4500u32 {
            db.put(format!("filler/{i:06}").as_bytes(), &filler)
                .unwrap();
        }
        assert_eq!(listed(&db), set(&["after-reopen"]));
        db.close().unwrap();
    }
    {
        let db = Db::open(dir.path(), options()).unwrap();
        assert_eq!(listed(&db), set(&["after-reopen"]));
        assert!(applied(&db, "in-process"));
        assert!(!applied(&db, "after-reopen"));
        assert!(!lockable(&db, b"after-reopen/a"));
        // The recovered transaction must outlive the segments of this session too.
        let recovered_in = wal_segments(dir.path());
        for i in 4500..6000u32 {
            db.put(format!("filler/{i:06}").as_bytes(), &filler)
                .unwrap();
        }
        db.flush().unwrap();
        let left = wal_segments(dir.path());
        assert!(recovered_in.is_disjoint(&left), "{recovered_in:?} {left:?}");
        db.close().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        assert_eq!(listed(&db), set(&["after-reopen"]));
        assert!(!applied(&db, "after-reopen"));
        assert!(!lockable(&db, b"after-reopen/a"));
        db.commit_prepared(&xid("after-reopen")).unwrap();
        assert!(applied(&db, "after-reopen"));
        // Reopen before anything else is written: the commit record alone finishes it.
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(listed(&db), set(&[]));
    assert!(applied(&db, "in-process"));
    assert!(applied(&db, "after-reopen"));
    assert_eq!(
        db.get(b"filler/005999").unwrap().as_deref(),
        Some(&filler[..])
    );
}

const CRASH_XIDS: [&str; 5] = ["x0", "x1", "x2", "x3", "x4"];
const CRASH_COMMITTED: [&str; 2] = ["x1", "x3"];
const READY: &str = "riptide-2pc-child-ready";

/// Child of the crash test: prepares x0..x4, commits x1 and x3, writes enough to switch
/// memtables, says it is ready and waits to be killed.
fn child(dir: &str) {
    // Should the engine hang before `ready`, end anyway so the parent sees EOF and fails.
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(120));
        std::process::exit(3);
    });
    let db = Db::open(dir, options().sync_mode(SyncMode::Full)).unwrap();
    seed_gone(&db, &CRASH_XIDS);
    let txns: Vec<(&str, Transaction)> = CRASH_XIDS
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mode = if i % 2 == 0 {
                Concurrency::Pessimistic
            } else {
                Concurrency::Optimistic
            };
            (*name, prepare(&db, mode, name))
        })
        .collect();
    let filler = vec![b'f'; 1000];
    for (i, (name, txn)) in txns.iter().enumerate() {
        if CRASH_COMMITTED.contains(name) {
            txn.commit().unwrap();
        }
        for j in 0..150u32 {
            db.put(format!("filler/{i}/{j:04}").as_bytes(), &filler)
                .unwrap();
        }
    }
    let mut out = std::io::stdout();
    // libtest may print its "test ... " prefix on the same line.
    writeln!(out, "{READY}").unwrap();
    out.flush().unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
#[ignore = "run by prepared_survives_a_kill as its child process"]
fn two_phase_crash_child() {
    let Ok(dir) = std::env::var("RIPTIDE_2PC_CHILD") else {
        return;
    };
    child(&dir);
}

/// A child prepares x0..x4 and commits x1 and x3, then is SIGKILLed. After reopen exactly x0,
/// x2 and x4 are listed, their rows locked and invisible; x0 and x4 are committed and x2
/// rolled back by xid; after another reopen all but x2 is applied and nothing is listed.
#[test]
fn prepared_survives_a_kill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "two_phase_crash_child",
            "--nocapture",
            "--include-ignored",
            "--test-threads=1",
        ])
        .env("RIPTIDE_2PC_CHILD", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = BufReader::new(stdout)
        .lines()
        .map_while(|l| l.ok())
        .any(|l| l.contains(READY));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(ready, "the child ended without preparing its transactions");

    {
        let db = Db::open(&path, options()).unwrap();
        assert_eq!(listed(&db), set(&["x0", "x2", "x4"]));
        for name in CRASH_XIDS {
            let committed = CRASH_COMMITTED.contains(&name);
            assert_eq!(applied(&db, name), committed, "{name}");
            assert_eq!(
                lockable(&db, format!("{name}/a").as_bytes()),
                committed,
                "{name}"
            );
        }
        db.commit_prepared(&xid("x0")).unwrap();
        db.rollback_prepared(&xid("x2")).unwrap();
        db.commit_prepared(&xid("x4")).unwrap();
        assert_eq!(listed(&db), set(&[]));
        db.close().unwrap();
    }
    let db = Db::open(&path, options()).unwrap();
    assert_eq!(listed(&db), set(&[]));
    for name in CRASH_XIDS {
        assert_eq!(applied(&db, name), name != "x2", "{name}");
        assert!(lockable(&db, format!("{name}/a").as_bytes()), "{name}");
    }
    let scanned = {
        let mut it = db
            .iter(
                ReadOptions::default()
                    .lower_bound("filler/")
                    .upper_bound("filler0"),
            )
            .unwrap();
        it.seek_to_first().unwrap();
        let mut n = 0;
        while it.valid() {
            n += 1;
            it.next().unwrap();
        }
        n
    };
    assert_eq!(scanned, 5 * 150, "filler rows written before the kill");
}

/// Dropping the handle of a prepared transaction leaves it prepared (to be finished by xid),
/// and its rows stay locked, as they are after a restart: no other transaction can change a
/// row whose fate is undecided (`commit_prepared` would then overwrite that commit).
#[test]
fn dropping_a_prepared_transaction_keeps_its_rows_locked() {
    for mode in [Concurrency::Pessimistic, Concurrency::Optimistic] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options()).unwrap();
        let cf = db.default_cf();
        seed_gone(&db, &["p"]);
        drop(prepare(&db, mode, "p"));
        assert_eq!(listed(&db), set(&["p"]), "{mode:?}");
        for k in ["p/a", "p/b", "p/gone"] {
            assert!(!lockable(&db, k.as_bytes()), "{mode:?}: {k} is not locked");
        }
        let other = db
            .begin_transaction(
                TransactionOptions::default()
                    .concurrency(Concurrency::Optimistic)
                    .lock_timeout(Duration::ZERO),
            )
            .unwrap();
        other.put(&cf, b"p/a", b"later").unwrap();
        let err = other.commit().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::TimedOut, "{mode:?}: {err}");
        db.commit_prepared(&xid("p")).unwrap();
        assert!(applied(&db, "p"), "{mode:?}");
        for k in ["p/a", "p/b", "p/gone"] {
            assert!(lockable(&db, k.as_bytes()), "{mode:?}: {k} still locked");
        }
        // Same after rollback by xid.
        seed_gone(&db, &["q"]);
        drop(prepare(&db, mode, "q"));
        assert!(!lockable(&db, b"q/a"), "{mode:?}");
        db.rollback_prepared(&xid("q")).unwrap();
        assert!(lockable(&db, b"q/a"), "{mode:?}");
        assert!(!applied(&db, "q"), "{mode:?}");
    }
}
