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
