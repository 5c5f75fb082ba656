//! Helpers shared by the handler's tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use riptide::{Db, Options};
use riptide_handler::{HandlerEngine, IndexKind, IndexSpec, SecondaryKey};

pub fn open(dir: &Path) -> (Arc<Db>, HandlerEngine) {
    let db = Arc::new(Db::open(dir, Options::default()).unwrap());
    let engine = HandlerEngine::open(Arc::clone(&db)).unwrap();
    (db, engine)
}

/// Closes the engine and the database cleanly.
pub fn close(db: Arc<Db>, engine: HandlerEngine) {
    engine.close().unwrap();
    drop(engine);
    Arc::try_unwrap(db)
        .expect("no other db handle")
        .close()
        .unwrap();
}

pub fn primary() -> IndexSpec {
    IndexSpec {
        kind: IndexKind::Primary,
        unique: true,
        key_parts: 1,
        name: "PRIMARY".into(),
    }
}

pub fn hidden() -> IndexSpec {
    IndexSpec {
        kind: IndexKind::HiddenPk,
        unique: false,
        key_parts: 1,
        name: "HIDDEN".into(),
    }
}

pub fn secondary(name: &str, unique: bool) -> IndexSpec {
    IndexSpec {
        kind: IndexKind::Secondary,
        unique,
        key_parts: 1,
        name: name.into(),
    }
}

pub fn k(key: &[u8]) -> SecondaryKey<'_> {
    SecondaryKey {
        key,
        has_null: false,
    }
}

pub fn null_key(key: &[u8]) -> SecondaryKey<'_> {
    SecondaryKey {
        key,
        has_null: true,
    }
}

/// Every (secondary key, pk) of index `n`, as a fresh session sees it.
pub fn index_entries(
    engine: &HandlerEngine,
    t: &riptide_handler::Table,
    n: usize,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    let s = engine.begin_session(Default::default()).unwrap();
    let mut it = s.iter(t, n).unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        if n == 0 {
            out.push((it.key()[4..].to_vec(), it.value().to_vec()));
        } else {
            let (sk, pk) = riptide_handler::decode_secondary_entry(it.key()).unwrap();
            out.push((sk.to_vec(), pk.to_vec()));
        }
        it.next().unwrap();
    }
    out
}

/// Every raw key of column family `cf` that starts with `prefix`, read with a plain `Db`
/// iterator (newest committed state, no transaction in between).
pub fn raw_keys(db: &Db, cf: &riptide::ColumnFamily, prefix: &[u8]) -> Vec<Vec<u8>> {
    let mut opts = riptide::ReadOptions::default().lower_bound(prefix.to_vec());
    if let Some(hi) = riptide_handler::prefix_successor(prefix) {
        opts = opts.upper_bound(hi);
    }
    let mut it = db.iter_cf(cf, opts).unwrap();
    it.seek(prefix).unwrap();
    let mut out = Vec::new();
    while it.valid() && it.key().starts_with(prefix) {
        out.push(it.key().to_vec());
        it.next().unwrap();
    }
    out
}

/// The raw keys of index `n` of `t` in the data column family.
pub fn raw_index_keys(db: &Db, t: &riptide_handler::Table, n: usize) -> Vec<Vec<u8>> {
    raw_keys(db, &db.default_cf(), &t.index_prefix(n).unwrap())
}

/// The legacy taint records (`X` + entry) left in the dictionary; none is ever written now.
pub fn legacy_taint_records(db: &Db) -> Vec<Vec<u8>> {
    let dd = db.cf(riptide_handler::DD_CF_NAME).unwrap();
    raw_keys(db, &dd, b"X")
}

/// A secondary entry key as FORMAT.md lays it out: index id + key + pk + pk length (BE).
pub fn raw_secondary_entry(t: &riptide_handler::Table, n: usize, key: &[u8], pk: &[u8]) -> Vec<u8> {
    let mut e = t.index_prefix(n).unwrap().to_vec();
    e.extend_from_slice(key);
    e.extend_from_slice(pk);
    e.extend_from_slice(&u16::try_from(pk.len()).unwrap().to_be_bytes());
    e
}

/// Runs `body` in two threads at once (`who` = 0 and 1), each in its own session at
/// `isolation` with a 10 s lock timeout that has taken its snapshot (a read of a missing
/// row) before a barrier releases both; returns their results in `who` order.
pub fn race_two_sessions<R: Send + 'static>(
    engine: &Arc<HandlerEngine>,
    t: &Arc<riptide_handler::Table>,
    isolation: riptide_handler::Isolation,
    body: impl Fn(&mut riptide_handler::Session, &Arc<riptide_handler::Table>, u8) -> R
    + Send
    + Sync
    + 'static,
) -> Vec<R> {
    let body = Arc::new(body);
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let handles: Vec<_> = (0..2u8)
        .map(|who| {
            let (engine, t, barrier, body) = (
                Arc::clone(engine),
                Arc::clone(t),
                Arc::clone(&barrier),
                Arc::clone(&body),
            );
            std::thread::spawn(move || {
                let opts = riptide_handler::SessionOptions {
                    isolation,
                    lock_timeout: std::time::Duration::from_secs(10),
                    ..riptide_handler::SessionOptions::default()
                };
                let mut s = engine.begin_session(opts).unwrap();
                // Take the snapshot before the race (repeatable read).
                s.get_row(&t, b"none", riptide_handler::RowLock::None)
                    .unwrap();
                barrier.wait();
                body(&mut s, &t, who)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}
