//! MariaDB's long UNIQUE keys: the server checks for duplicates itself, with an index read
//! of the key's hash in a NON-unique index (several rows may share a hash). The handler
//! makes that check safe against concurrent inserts with `Session::lock_value` (the hash
//! locked exclusively until the transaction ends) followed by `Session::iter_current` (the
//! newest committed entries, not the snapshot). Two transactions inserting one value: one
//! succeeds, the other sees its row and reports the duplicate, under both isolation levels.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use riptide_handler::{Isolation, Session, SessionOptions, Table};

/// The server's check: is there an entry with secondary key `hash` in index 1?
fn hash_exists(s: &Session, t: &Table, hash: &[u8]) -> bool {
    s.lock_value(t, 1, hash).unwrap();
    let mut it = s.iter_current(t, 1).unwrap();
    let mut prefix = it_prefix(t);
    prefix.extend_from_slice(hash);
    it.seek(&prefix).unwrap();
    it.valid() && it.key().starts_with(&prefix)
}

fn it_prefix(t: &Table) -> Vec<u8> {
    t.index_prefix(1).unwrap().to_vec()
}

fn race(isolation: Isolation, rounds: u8) {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let engine = Arc::new(engine);
    let t = engine
        .create_table(b"t", &[primary(), secondary("h", false)], 1)
        .unwrap();
    for round in 0..rounds {
        let inserted = race_two_sessions(&engine, &t, isolation, move |s, t, who| {
            let hash = [round; 8];
            if hash_exists(s, t, &hash) {
                s.rollback().unwrap();
                return false;
            }
            s.insert(t, &[round, who], &[k(&hash)], b"row").unwrap();
            std::thread::sleep(Duration::from_millis(20));
            s.commit().unwrap();
            true
        });
        assert_eq!(
            inserted.iter().filter(|&&ok| ok).count(),
            1,
            "round {round}: {inserted:?}"
        );
    }
    assert_eq!(index_entries(&engine, &t, 1).len(), usize::from(rounds));
    drop(t);
    let engine = Arc::try_unwrap(engine).unwrap();
    close(db, engine);
}

#[test]
fn concurrent_checked_inserts_of_one_hash_repeatable_read() {
    race(Isolation::RepeatableRead, 10);
}

#[test]
fn concurrent_checked_inserts_of_one_hash_read_committed() {
    race(Isolation::ReadCommitted, 10);
}

#[test]
fn a_non_unique_index_keeps_rows_sharing_a_hash_and_lock_value_names_bad_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let (db, engine) = open(dir.path());
    let t = engine
        .create_table(b"t", &[primary(), secondary("h", false)], 1)
        .unwrap();
    let mut s = engine.begin_session(SessionOptions::default()).unwrap();
    s.insert(&t, b"1", &[k(b"samehash")], b"a").unwrap();
    s.insert(&t, b"2", &[k(b"samehash")], b"b").unwrap();
    // The session's own uncommitted entries are seen by the check.
    assert!(hash_exists(&s, &t, b"samehash"));
    assert!(!hash_exists(&s, &t, b"otherhsh"));
    assert!(s.lock_value(&t, 0, b"x").is_err());
    assert!(s.lock_value(&t, 2, b"x").is_err());
    s.commit().unwrap();
    drop(s);
    assert_eq!(index_entries(&engine, &t, 1).len(), 2);
    drop(t);
    close(db, engine);
}
