//! Helpers shared by the model tests and the range-delete tests.
// Each test file uses some of them.
#![allow(dead_code)]

use std::collections::HashMap;

use riptide::{Db, ReadOptions};

/// Every key a forward scan with `opts` returns, in order (panics on an error: test code).
#[allow(clippy::unwrap_used)]
pub fn keys(db: &Db, opts: ReadOptions<'_>) -> Vec<Vec<u8>> {
    let mut it = db.iter(opts).unwrap();
    it.seek_to_first().unwrap();
    let mut out = Vec::new();
    while it.valid() {
        out.push(it.key().to_vec());
        it.next().unwrap();
    }
    out
}

/// RocksDB's single-delete contract, per key: a single delete is allowed only when the key
/// was put exactly once since its previous single delete and never deleted otherwise. Tests
/// record every write here and ask before each single delete.
#[derive(Default)]
pub struct SingleDeleteContract {
    /// Per key: (puts, other deletes) since its last single delete.
    since_single_delete: HashMap<Vec<u8>, (u32, u32)>,
}

impl SingleDeleteContract {
    /// Records a put of `key`.
    pub fn put(&mut self, key: &[u8]) {
        self.since_single_delete.entry(key.to_vec()).or_default().0 += 1;
    }

    /// Records a plain delete (or a range delete covering) `key`.
    pub fn delete(&mut self, key: &[u8]) {
        self.since_single_delete.entry(key.to_vec()).or_default().1 += 1;
    }

    /// Records a single delete of `key` if the contract allows one and returns true;
    /// otherwise records a plain delete and returns false (the caller writes a delete).
    pub fn single_delete(&mut self, key: &[u8]) -> bool {
        let history = self.since_single_delete.entry(key.to_vec()).or_default();
        if *history == (1, 0) {
            *history = (0, 0);
            true
        } else {
            history.1 += 1;
            false
        }
    }
}
