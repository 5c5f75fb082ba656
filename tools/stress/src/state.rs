//! The expected-state file: what the database must hold, kept beside it and updated around
//! every acknowledged operation, so that a process killed at any moment can be checked.
//!
//! Layout (little-endian), all in one file:
//! * header: magic, thread count, keys per thread;
//! * one [`Word`] (u64) per key: the key's expected value;
//! * one record per thread: its next version number, its count of acknowledged operations,
//!   and its *in-flight operation* (the keys it changes with their old and new words, and
//!   the XID when it is a prepared transaction).
//!
//! A thread owns a contiguous range of keys; no other thread writes them, so its words are
//! exact. Around each write it (1) writes the in-flight record, (2) performs the write,
//! (3) stores the new words, (4) clears the record. A kill between (1) and (4) leaves the
//! record: the write then happened wholly or not at all, which [`crate::verify`] checks.
//! Writes go to the page cache with `pwrite`, which survives a killed process.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{Context, Result, bail, ensure};

const MAGIC: u64 = u64::from_le_bytes(*b"RIPSTRS1");
const HEADER_BYTES: u64 = 16;
/// Most keys one operation changes.
pub const MAX_ENTRIES: usize = 64;
const ENTRY_BYTES: usize = 24;
const RECORD_HEADER_BYTES: usize = 40;
const RECORD_BYTES: usize = RECORD_HEADER_BYTES + MAX_ENTRIES * ENTRY_BYTES;

/// The expected value of one key: a version (0 = absent) and two flags for single delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Word(pub u64);

impl Word {
    /// A key never written: absent, and single delete is allowed after its first put.
    pub const FRESH: Word = Word(CLEAN);

    /// The version of the value the key holds; 0 when absent.
    pub fn version(self) -> u32 {
        self.0 as u32
    }

    /// True when the key holds a value.
    pub fn present(self) -> bool {
        self.version() != 0
    }

    /// True when the key was put exactly once since it was fresh or single-deleted and never
    /// deleted otherwise since: the contract of `Db::single_delete`.
    pub fn single_delete_ok(self) -> bool {
        self.present() && self.0 & ONCE != 0
    }

    /// The word after a put of `version`.
    pub fn put(self, version: u32) -> Word {
        let once = if !self.present() && self.0 & CLEAN != 0 {
            ONCE
        } else {
            0
        };
        Word(u64::from(version) | once)
    }

    /// The word after a delete or a range delete.
    pub fn delete(self) -> Word {
        Word(0)
    }

    /// The word after a single delete (allowed only when [`Self::single_delete_ok`]).
    pub fn single_delete(self) -> Word {
        Word(CLEAN)
    }
}

const ONCE: u64 = 1 << 32;
const CLEAN: u64 = 1 << 33;

/// One key an in-flight operation changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The key's index.
    pub key: u32,
    /// Its word before the operation.
    pub old: Word,
    /// Its word if the operation happened.
    pub new: Word,
}

/// A thread's operation that may or may not have happened when the process died.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InFlight {
    /// The XID number of a transaction being prepared or committed after prepare
    /// (see [`crate::workload::xid`]), or 0.
    pub xid: u64,
    /// The keys it changes.
    pub entries: Vec<Entry>,
}

/// The per-thread record, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadRecord {
    /// The next version number the thread hands out (versions are unique per thread).
    pub next_version: u32,
    /// Operations the thread saw acknowledged, over all rounds.
    pub acked: u64,
    /// The operation in flight when the process stopped, if any.
    pub in_flight: Option<InFlight>,
}

/// The open expected-state file.
pub struct StateFile {
    file: File,
    threads: u32,
    keys_per_thread: u32,
}

impl StateFile {
    /// Opens the state at `path`, creating it for `threads` x `keys_per_thread` fresh keys
    /// if it does not exist. An existing file must have the same shape.
    pub fn open(path: &Path, threads: u32, keys_per_thread: u32) -> Result<StateFile> {
        let exists = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("open expected state {}", path.display()))?;
        let state = StateFile {
            file,
            threads,
            keys_per_thread,
        };
        if exists {
            let mut h = [0u8; HEADER_BYTES as usize];
            state.file.read_exact_at(&mut h, 0)?;
            let (magic, shape) = h.split_at(8);
            ensure!(
                u64::from_le_bytes(magic.try_into()?) == MAGIC,
                "{} is not an expected-state file",
                path.display()
            );
            let (t, k) = shape.split_at(4);
            let (t, k) = (
                u32::from_le_bytes(t.try_into()?),
                u32::from_le_bytes(k.try_into()?),
            );
            if (t, k) != (threads, keys_per_thread) {
                bail!(
                    "{} holds {t} threads x {k} keys, not {threads} x {keys_per_thread}",
                    path.display()
                );
            }
            return Ok(state);
        }
        let len = state.record_offset(threads);
        state.file.set_len(len)?;
        let mut words = Vec::with_capacity(state.total_keys() as usize * 8);
        for _ in 0..state.total_keys() {
            words.extend_from_slice(&Word::FRESH.0.to_le_bytes());
        }
        state.file.write_all_at(&words, HEADER_BYTES)?;
        for t in 0..threads {
            state.write_record_header(t, 1, 0)?;
            state.clear_in_flight(t)?;
        }
        let mut h = Vec::with_capacity(HEADER_BYTES as usize);
        h.extend_from_slice(&MAGIC.to_le_bytes());
        h.extend_from_slice(&threads.to_le_bytes());
        h.extend_from_slice(&keys_per_thread.to_le_bytes());
        // The magic goes last: a file without it is recreated.
        state.file.write_all_at(&h, 0)?;
        Ok(state)
    }

    /// Number of threads.
    pub fn threads(&self) -> u32 {
        self.threads
    }

    /// Keys each thread owns.
    pub fn keys_per_thread(&self) -> u32 {
        self.keys_per_thread
    }

    /// Number of keys.
    pub fn total_keys(&self) -> u32 {
        self.threads * self.keys_per_thread
    }

    fn word_offset(&self, key: u32) -> u64 {
        HEADER_BYTES + u64::from(key) * 8
    }

    fn record_offset(&self, thread: u32) -> u64 {
        HEADER_BYTES + u64::from(self.total_keys()) * 8 + u64::from(thread) * RECORD_BYTES as u64
    }

    /// Every key's word.
    pub fn words(&self) -> Result<Vec<Word>> {
        let mut buf = vec![0u8; self.total_keys() as usize * 8];
        self.file.read_exact_at(&mut buf, HEADER_BYTES)?;
        Ok(buf
            .chunks_exact(8)
            .map(|c| Word(u64::from_le_bytes(c.try_into().unwrap_or_default())))
            .collect())
    }

    /// Stores the words of `entries` (their `new` side).
    pub fn store_words(&self, entries: &[Entry]) -> Result<()> {
        for e in entries {
            self.file
                .write_all_at(&e.new.0.to_le_bytes(), self.word_offset(e.key))?;
        }
        Ok(())
    }

    /// Stores one word.
    pub fn store_word(&self, key: u32, word: Word) -> Result<()> {
        self.file
            .write_all_at(&word.0.to_le_bytes(), self.word_offset(key))?;
        Ok(())
    }

    /// Writes the thread's version counter and acknowledged-operation count.
    pub fn write_record_header(&self, thread: u32, next_version: u32, acked: u64) -> Result<()> {
        let mut b = [0u8; 16];
        let (v, a) = b.split_at_mut(8);
        v.copy_from_slice(&u64::from(next_version).to_le_bytes());
        a.copy_from_slice(&acked.to_le_bytes());
        self.file.write_all_at(&b, self.record_offset(thread))?;
        Ok(())
    }

    /// Records `op` as the thread's in-flight operation (one write: entries, then the flag).
    pub fn set_in_flight(&self, thread: u32, op: &InFlight) -> Result<()> {
        ensure!(op.entries.len() <= MAX_ENTRIES, "too many entries");
        let mut b = Vec::with_capacity(RECORD_BYTES - 16);
        b.extend_from_slice(&1u64.to_le_bytes());
        b.extend_from_slice(&op.xid.to_le_bytes());
        b.extend_from_slice(&(op.entries.len() as u64).to_le_bytes());
        for e in &op.entries {
            b.extend_from_slice(&u64::from(e.key).to_le_bytes());
            b.extend_from_slice(&e.old.0.to_le_bytes());
            b.extend_from_slice(&e.new.0.to_le_bytes());
        }
        self.file
            .write_all_at(&b, self.record_offset(thread) + 16)?;
        Ok(())
    }

    /// Clears the thread's in-flight operation.
    pub fn clear_in_flight(&self, thread: u32) -> Result<()> {
        self.file
            .write_all_at(&0u64.to_le_bytes(), self.record_offset(thread) + 16)?;
        Ok(())
    }

    /// Reads the thread's record.
    pub fn record(&self, thread: u32) -> Result<ThreadRecord> {
        let mut b = vec![0u8; RECORD_BYTES];
        self.file
            .read_exact_at(&mut b, self.record_offset(thread))?;
        let u = |i: usize| -> u64 {
            b.get(i * 8..i * 8 + 8)
                .and_then(|s| s.try_into().ok())
                .map_or(0, u64::from_le_bytes)
        };
        let next_version = u32::try_from(u(0)).context("corrupt version counter")?;
        let acked = u(1);
        let in_flight = if u(2) == 1 {
            let n = usize::try_from(u(4)).unwrap_or(usize::MAX);
            ensure!(
                n <= MAX_ENTRIES,
                "corrupt in-flight record of thread {thread}"
            );
            let entries = (0..n)
                .map(|i| {
                    let base = RECORD_HEADER_BYTES / 8 + i * 3;
                    Entry {
                        key: u(base) as u32,
                        old: Word(u(base + 1)),
                        new: Word(u(base + 2)),
                    }
                })
                .collect();
            Some(InFlight { xid: u(3), entries })
        } else {
            None
        };
        Ok(ThreadRecord {
            next_version,
            acked,
            in_flight,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn words_follow_the_single_delete_contract() {
        let w = Word::FRESH;
        assert!(!w.present());
        let once = w.put(7);
        assert_eq!(once.version(), 7);
        assert!(once.single_delete_ok());
        assert!(!once.put(8).single_delete_ok(), "put twice");
        let sd = once.single_delete();
        assert!(!sd.present());
        assert!(
            sd.put(9).single_delete_ok(),
            "a single delete resets the history"
        );
        assert!(
            !once.delete().put(10).single_delete_ok(),
            "a delete does not"
        );
    }

    #[test]
    fn records_round_trip_and_survive_reopen() {
        let dir = std::env::temp_dir().join(format!("riptide-stress-state-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let s = StateFile::open(&dir, 2, 10).unwrap();
        assert_eq!(s.words().unwrap(), vec![Word::FRESH; 20]);
        let op = InFlight {
            xid: 42,
            entries: vec![Entry {
                key: 13,
                old: Word::FRESH,
                new: Word::FRESH.put(5),
            }],
        };
        s.set_in_flight(1, &op).unwrap();
        s.write_record_header(1, 6, 99).unwrap();
        s.store_words(&op.entries).unwrap();
        drop(s);
        let s = StateFile::open(&dir, 2, 10).unwrap();
        let r = s.record(1).unwrap();
        assert_eq!(r.next_version, 6);
        assert_eq!(r.acked, 99);
        assert_eq!(r.in_flight, Some(op));
        assert_eq!(s.record(0).unwrap().in_flight, None);
        assert_eq!(s.words().unwrap()[13].version(), 5);
        assert!(StateFile::open(&dir, 3, 10).is_err(), "another shape");
        std::fs::remove_file(&dir).unwrap();
    }
}
