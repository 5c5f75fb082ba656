//! The random operations one stress thread runs on its own key range, and the checks it
//! makes as it goes (reads, scans both ways, snapshot reads), all against its words.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use riptide::{
    Concurrency, Db, IsolationLevel, ReadOptions, Transaction, TransactionOptions, WriteBatch, Xid,
};

use crate::state::{Entry, InFlight, MAX_ENTRIES, StateFile, Word};

/// The key of index `i`.
pub fn key(i: u32) -> Vec<u8> {
    format!("k{i:08}").into_bytes()
}

/// The value of version `version` of key `i`: 8 to 199 bytes, different for every
/// (key, version).
pub fn value(i: u32, version: u32) -> Vec<u8> {
    let mut h = (u64::from(i) << 32 | u64::from(version)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let len = 8 + (h % 192) as usize;
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&i.to_le_bytes());
    v.extend_from_slice(&version.to_le_bytes());
    while v.len() < len {
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        v.push(b'a' + (h % 26) as u8);
    }
    v
}

/// What `word` says the database must return for key `i`.
pub fn expected(i: u32, word: Word) -> Option<Vec<u8>> {
    word.present().then(|| value(i, word.version()))
}

/// The XID of a prepared transaction numbered `n` (thread and version, see [`xid_number`]).
pub fn xid(n: u64) -> Result<Xid> {
    Ok(Xid::new(0x5254, format!("stress-{n}").as_bytes(), b"")?)
}

/// The number [`xid`] encodes for `thread`'s transaction with first version `version`.
pub fn xid_number(thread: u32, version: u32) -> u64 {
    u64::from(thread + 1) << 32 | u64::from(version)
}

/// One stress thread.
pub struct Worker<'a> {
    db: &'a Db,
    state: &'a StateFile,
    thread: u32,
    /// First key index of the thread's range.
    lo: u32,
    /// The thread's words (index 0 is key `lo`): exact, since only this thread writes them.
    words: Vec<Word>,
    next_version: u32,
    acked: u64,
    rng: StdRng,
}

impl<'a> Worker<'a> {
    /// A worker for `thread`, starting from the words and counters of `state` (verified).
    pub fn new(db: &'a Db, state: &'a StateFile, thread: u32, seed: u64) -> Result<Worker<'a>> {
        let per = state.keys_per_thread();
        let lo = thread * per;
        let all = state.words()?;
        let words = all
            .get(lo as usize..(lo + per) as usize)
            .context("state shorter than its shape")?
            .to_vec();
        let record = state.record(thread)?;
        if record.in_flight.is_some() {
            bail!("thread {thread} has an unresolved in-flight operation: verify first");
        }
        Ok(Worker {
            db,
            state,
            thread,
            lo,
            words,
            next_version: record.next_version.max(1),
            acked: record.acked,
            rng: StdRng::seed_from_u64(
                seed ^ u64::from(thread).wrapping_mul(0xA24B_AED4_963E_E407),
            ),
        })
    }

    /// Runs random operations until `stop` is set (or the process is killed).
    pub fn run(&mut self, stop: &Arc<AtomicBool>) -> Result<()> {
        while !stop.load(Ordering::Relaxed) {
            let roll = self.rng.random_range(0..100);
            match roll {
                0..=29 => self.put()?,
                30..=37 => self.delete()?,
                38..=42 => self.single_delete()?,
                43..=54 => self.batch()?,
                55..=58 => self.delete_range()?,
                59..=73 => self.transaction()?,
                74..=88 => self.check_get()?,
                89..=94 => self.check_scan(None)?,
                _ => self.check_snapshot()?,
            }
        }
        Ok(())
    }

    fn pick(&mut self) -> u32 {
        self.rng.random_range(0..self.words.len() as u32)
    }

    fn version(&mut self) -> u32 {
        let v = self.next_version;
        self.next_version += 1;
        v
    }

    fn word(&self, k: u32) -> Word {
        self.words.get(k as usize).copied().unwrap_or(Word::FRESH)
    }

    /// Performs `write` as the in-flight operation changing `changes` (local key -> new
    /// word), then records the result.
    fn apply(
        &mut self,
        changes: &BTreeMap<u32, Word>,
        xid: u64,
        write: impl FnOnce(&Db) -> Result<()>,
    ) -> Result<()> {
        let entries: Vec<Entry> = changes
            .iter()
            .map(|(&k, &new)| Entry {
                key: self.lo + k,
                old: self.word(k),
                new,
            })
            .collect();
        // The version counter moves first, so no version is ever handed out twice.
        self.state
            .write_record_header(self.thread, self.next_version, self.acked)?;
        self.state.set_in_flight(
            self.thread,
            &InFlight {
                xid,
                entries: entries.clone(),
            },
        )?;
        write(self.db)?;
        self.state.store_words(&entries)?;
        for (&k, &new) in changes {
            if let Some(w) = self.words.get_mut(k as usize) {
                *w = new;
            }
        }
        self.acked += 1;
        self.state
            .write_record_header(self.thread, self.next_version, self.acked)?;
        self.state.clear_in_flight(self.thread)
    }

    fn put(&mut self) -> Result<()> {
        let k = self.pick();
        let v = self.version();
        let changes = BTreeMap::from([(k, self.word(k).put(v))]);
        let (key, value) = (key(self.lo + k), value(self.lo + k, v));
        self.apply(&changes, 0, |db| Ok(db.put(&key, &value)?))
    }

    fn delete(&mut self) -> Result<()> {
        let k = self.pick();
        let changes = BTreeMap::from([(k, self.word(k).delete())]);
        let key = key(self.lo + k);
        self.apply(&changes, 0, |db| Ok(db.delete(&key)?))
    }

    fn single_delete(&mut self) -> Result<()> {
        // A key put once since it was fresh or single-deleted (the contract), near a random
        // start; otherwise a put.
        let start = self.pick();
        let n = self.words.len() as u32;
        let Some(k) = (0..64)
            .map(|d| (start + d) % n)
            .find(|&k| self.word(k).single_delete_ok())
        else {
            return self.put();
        };
        let changes = BTreeMap::from([(k, self.word(k).single_delete())]);
        let key = key(self.lo + k);
        self.apply(&changes, 0, |db| Ok(db.single_delete(&key)?))
    }

    /// A range `[start, end)` of local keys, 1 to 16 long.
    fn range(&mut self) -> (u32, u32) {
        let n = self.words.len() as u32;
        let start = self.rng.random_range(0..n);
        let len = self.rng.random_range(1..=16u32);
        (start, (start + len).min(n))
    }

    fn delete_range(&mut self) -> Result<()> {
        let (start, end) = self.range();
        let changes: BTreeMap<u32, Word> =
            (start..end).map(|k| (k, self.word(k).delete())).collect();
        let (s, e) = (key(self.lo + start), key(self.lo + end));
        self.apply(&changes, 0, |db| Ok(db.delete_range(&s, &e)?))
    }

    fn batch(&mut self) -> Result<()> {
        let mut b = WriteBatch::new();
        let mut changes: BTreeMap<u32, Word> = BTreeMap::new();
        for _ in 0..self.rng.random_range(1..=8) {
            // Room for one more operation of up to 16 keys in the in-flight record.
            if changes.len() + 16 > MAX_ENTRIES {
                break;
            }
            let current = |c: &BTreeMap<u32, Word>, w: &Self, k: u32| {
                c.get(&k).copied().unwrap_or_else(|| w.word(k))
            };
            match self.rng.random_range(0..10) {
                0..=5 => {
                    let k = self.pick();
                    let v = self.version();
                    b.put(&key(self.lo + k), &value(self.lo + k, v));
                    changes.insert(k, current(&changes, self, k).put(v));
                }
                6..=7 => {
                    let k = self.pick();
                    b.delete(&key(self.lo + k));
                    changes.insert(k, current(&changes, self, k).delete());
                }
                8 => {
                    let k = self.pick();
                    let w = current(&changes, self, k);
                    if w.single_delete_ok() {
                        b.single_delete(&key(self.lo + k));
                        changes.insert(k, w.single_delete());
                    }
                }
                _ => {
                    let (s, e) = self.range();
                    b.delete_range(&key(self.lo + s), &key(self.lo + e));
                    for k in s..e {
                        changes.insert(k, current(&changes, self, k).delete());
                    }
                }
            }
        }
        if b.is_empty() {
            return Ok(());
        }
        self.apply(&changes, 0, |db| Ok(db.write(b)?))
    }

    /// A transaction of 1-8 writes, pessimistic or optimistic, sometimes with a savepoint
    /// rolled back to, sometimes prepared (two-phase commit) first, sometimes rolled back.
    fn transaction(&mut self) -> Result<()> {
        let opts = TransactionOptions::default()
            .concurrency(if self.rng.random_bool(0.5) {
                Concurrency::Pessimistic
            } else {
                Concurrency::Optimistic
            })
            .isolation(if self.rng.random_bool(0.5) {
                IsolationLevel::RepeatableRead
            } else {
                IsolationLevel::ReadCommitted
            })
            .lock_timeout(Duration::from_secs(10));
        let txn = self.db.begin_transaction(opts)?;
        let cf = self.db.default_cf();
        let first_version = self.next_version;
        let mut changes: BTreeMap<u32, Word> = BTreeMap::new();
        let writes = self.rng.random_range(1..=8);
        let savepoint_at = self
            .rng
            .random_bool(0.4)
            .then(|| self.rng.random_range(0..writes));
        let mut saved: Option<BTreeMap<u32, Word>> = None;
        for i in 0..writes {
            if savepoint_at == Some(i) {
                txn.set_savepoint()?;
                saved = Some(changes.clone());
            }
            let k = self.pick();
            let current = changes.get(&k).copied().unwrap_or_else(|| self.word(k));
            // Reads inside the transaction see its own writes.
            let seen = txn.get(&cf, &key(self.lo + k))?;
            if seen != expected(self.lo + k, current) {
                bail!(
                    "thread {}: transaction read of key {} gave {:?}, expected version {}",
                    self.thread,
                    self.lo + k,
                    seen.as_deref().map(describe),
                    current.version()
                );
            }
            if self.rng.random_bool(0.75) {
                let v = self.version();
                txn.put(&cf, &key(self.lo + k), &value(self.lo + k, v))?;
                changes.insert(k, current.put(v));
            } else {
                txn.delete(&cf, &key(self.lo + k))?;
                changes.insert(k, current.delete());
            }
        }
        if let Some(before) = saved
            && self.rng.random_bool(0.5)
        {
            txn.rollback_to_savepoint()?;
            changes = before;
        }
        if self.rng.random_bool(0.1) {
            txn.rollback()?;
            return Ok(());
        }
        let two_phase = self.rng.random_bool(0.3);
        let xid_n = if two_phase {
            xid_number(self.thread, first_version)
        } else {
            0
        };
        self.apply(&changes, xid_n, |_| commit(&txn, two_phase, xid_n))
    }

    /// Checks a random key against its word.
    fn check_get(&mut self) -> Result<()> {
        let k = self.pick();
        let got = self.db.get(&key(self.lo + k))?;
        let want = expected(self.lo + k, self.word(k));
        if got != want {
            bail!(
                "thread {}: get of key {} gave {:?}, expected {:?}",
                self.thread,
                self.lo + k,
                got.as_deref().map(describe),
                want.as_deref().map(describe)
            );
        }
        Ok(())
    }

    /// Scans a random stretch of the thread's keys, forward or backward, against the words
    /// (or against `snapshot`'s copy of them).
    fn check_scan(&mut self, snapshot: Option<(&riptide::Snapshot, &[Word])>) -> Result<()> {
        let n = self.words.len() as u32;
        let start = self.rng.random_range(0..n);
        let end = (start + self.rng.random_range(1..=200u32)).min(n);
        let words: &[Word] = snapshot.map_or(&self.words, |(_, w)| w);
        let want: Vec<(Vec<u8>, Vec<u8>)> = (start..end)
            .filter_map(|k| {
                let w = words.get(k as usize).copied()?;
                expected(self.lo + k, w).map(|v| (key(self.lo + k), v))
            })
            .collect();
        let mut opts = ReadOptions::default()
            .lower_bound(key(self.lo + start))
            .upper_bound(key(self.lo + end));
        if let Some((s, _)) = snapshot {
            opts = opts.snapshot(s);
        }
        let mut it = self.db.iter(opts)?;
        let mut got = Vec::new();
        let backward = self.rng.random_bool(0.5);
        if backward {
            it.seek_to_last()?;
        } else {
            it.seek_to_first()?;
        }
        while it.valid() {
            got.push((it.key().to_vec(), it.value().to_vec()));
            if backward {
                it.prev()?;
            } else {
                it.next()?;
            }
        }
        if backward {
            got.reverse();
        }
        if got != want {
            let first_bad = got
                .iter()
                .zip(&want)
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            bail!(
                "thread {}: {} scan of keys {}..{}{} gave {} entries, expected {}; first \
                 difference at entry {first_bad}: got {:?}, expected {:?}",
                self.thread,
                if backward { "backward" } else { "forward" },
                self.lo + start,
                self.lo + end,
                if snapshot.is_some() {
                    " at a snapshot"
                } else {
                    ""
                },
                got.len(),
                want.len(),
                got.get(first_bad)
                    .map(|(k, v)| (String::from_utf8_lossy(k), describe(v))),
                want.get(first_bad)
                    .map(|(k, v)| (String::from_utf8_lossy(k), describe(v))),
            );
        }
        Ok(())
    }

    /// Takes a snapshot, writes on, and checks that reads at the snapshot still see the
    /// words of that moment.
    fn check_snapshot(&mut self) -> Result<()> {
        let snap = self.db.snapshot();
        let frozen = self.words.clone();
        for _ in 0..self.rng.random_range(1..=4) {
            match self.rng.random_range(0..3) {
                0 => self.put()?,
                1 => self.batch()?,
                _ => self.delete_range()?,
            }
        }
        let k = self.pick();
        let got = self.db.get_cf_opt(
            &self.db.default_cf(),
            &key(self.lo + k),
            &ReadOptions::default().snapshot(&snap),
        )?;
        let want = expected(
            self.lo + k,
            frozen.get(k as usize).copied().unwrap_or(Word::FRESH),
        );
        if got != want {
            bail!(
                "thread {}: get of key {} at a snapshot gave {:?}, expected {:?}",
                self.thread,
                self.lo + k,
                got.as_deref().map(describe),
                want.as_deref().map(describe)
            );
        }
        self.check_scan(Some((&snap, &frozen)))
    }
}

/// Commits `txn`, through prepare first when `two_phase`.
fn commit(txn: &Transaction, two_phase: bool, xid_n: u64) -> Result<()> {
    if two_phase {
        txn.prepare(&xid(xid_n)?)?;
    }
    txn.commit()?;
    Ok(())
}

/// A short description of a value: its key index and version.
pub fn describe(v: &[u8]) -> String {
    let word = |r: std::ops::Range<usize>| {
        v.get(r)
            .and_then(|b| b.try_into().ok())
            .map_or(u32::MAX, u32::from_le_bytes)
    };
    format!(
        "(key {} version {}, {} bytes)",
        word(0..4),
        word(4..8),
        v.len()
    )
}
