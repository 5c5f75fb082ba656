//! [`ExternalSorter`]: sorts key-value entries of any total size in bounded memory, for
//! loads that write sorted tables straight into a level ([`crate::Db::ingest_writer`]): an
//! index build reads rows in primary-key order and must write its entries in index order.
//!
//! Entries gather in one buffer (keys and values packed in an arena, plus a fixed-size slot
//! per entry) until it holds the memory limit; then they are sorted and written out as a
//! *run*, an unnamed temporary file in the given directory (`O_TMPFILE` where the system has
//! it, so a crash leaves nothing behind). [`ExternalSorter::finish`] merges the runs and
//! what is still buffered into one ascending stream. Past [`MAX_RUNS`] runs the runs are
//! merged into one first, so open files and merge buffers stay bounded too.
//!
//! A run is `[u32 key length][u32 value length][key][value]` per entry, little-endian,
//! followed by nothing: its entry count, byte length and XXH3-64 checksum stay in memory and
//! are checked when it is read back, so a run damaged on disk gives a `Corruption` error that
//! names it, not a wrong order or a wrong entry.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use riptide_common::{Error, Result};
use xxhash_rust::xxh3::Xxh3;

/// Runs merged at once; one more spill first merges the runs into a single one.
pub const MAX_RUNS: usize = 64;

/// The smallest memory limit [`ExternalSorter::new`] accepts (smaller values are raised).
pub const MIN_SORT_MEMORY: usize = 1 << 20;

/// Bytes of read buffer per run while merging.
const RUN_READ_BUFFER: usize = 256 << 10;

/// Bytes of write buffer of the run being written.
const RUN_WRITE_BUFFER: usize = 1 << 20;

/// Memory counted per buffered entry besides its bytes: its slot.
const SLOT_BYTES: usize = std::mem::size_of::<Slot>();

/// Where one buffered entry's key and value are in the arena.
#[derive(Debug, Clone, Copy)]
struct Slot {
    offset: usize,
    key_len: u32,
    value_len: u32,
}

/// The key and value of `slot` in `arena` (slots only point inside it).
fn parts<'a>(arena: &'a [u8], slot: &Slot) -> (&'a [u8], &'a [u8]) {
    let mid = slot.offset + slot.key_len as usize;
    let end = mid + slot.value_len as usize;
    (
        arena.get(slot.offset..mid).unwrap_or_default(),
        arena.get(mid..end).unwrap_or_default(),
    )
}

/// One sorted run on disk.
#[derive(Debug)]
struct Run {
    file: File,
    entries: u64,
    bytes: u64,
    checksum: u64,
}

/// Sorts entries of any total size within a memory limit: see the module documentation.
#[derive(Debug)]
pub struct ExternalSorter {
    dir: PathBuf,
    memory_limit: usize,
    /// [`MAX_RUNS`], smaller in tests.
    max_runs: usize,
    arena: Vec<u8>,
    slots: Vec<Slot>,
    runs: Vec<Run>,
    entries: u64,
    spilled_bytes: u64,
}

/// What an [`ExternalSorter`] did: for statistics and tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortStats {
    /// Entries added.
    pub entries: u64,
    /// Runs written to disk (merges of runs included).
    pub runs_written: u64,
    /// Bytes written to runs.
    pub spilled_bytes: u64,
}

impl ExternalSorter {
    /// A sorter that buffers at most about `memory_limit` bytes (at least
    /// [`MIN_SORT_MEMORY`]) and writes its runs as temporary files in `dir`.
    pub fn new(dir: impl Into<PathBuf>, memory_limit: usize) -> Self {
        ExternalSorter {
            dir: dir.into(),
            memory_limit: memory_limit.max(MIN_SORT_MEMORY),
            max_runs: MAX_RUNS,
            arena: Vec::new(),
            slots: Vec::new(),
            runs: Vec::new(),
            entries: 0,
            spilled_bytes: 0,
        }
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Bytes the buffer holds now (arena and slots, counted by capacity).
    pub fn buffered_bytes(&self) -> usize {
        self.arena.capacity() + self.slots.capacity() * SLOT_BYTES
    }

    /// Adds one entry. Entries with equal keys come out in the order they were added.
    /// `InvalidArgument` if the key or value is longer than `u32::MAX` bytes.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let (Ok(key_len), Ok(value_len)) = (u32::try_from(key.len()), u32::try_from(value.len()))
        else {
            return Err(Error::invalid_argument(format!(
                "sort: entry of {} + {} bytes is too long (at most 4 GiB each)",
                key.len(),
                value.len()
            )));
        };
        let need = key.len() + value.len();
        if self.arena.capacity() == 0 {
            // Reserved once, never grown: pages a small sort never touches cost nothing.
            self.arena.reserve_exact(self.memory_limit / 3 * 2);
            self.slots.reserve_exact(self.memory_limit / 3 / SLOT_BYTES);
        }
        let full = self.arena.len() + need > self.arena.capacity()
            || self.slots.len() == self.slots.capacity();
        if full && !self.slots.is_empty() {
            self.spill()?;
        }
        // Only an entry larger than the whole arena grows it (it is then alone in it).
        self.arena.reserve(need);
        self.slots.reserve(1);
        let offset = self.arena.len();
        self.arena.extend_from_slice(key);
        self.arena.extend_from_slice(value);
        self.slots.push(Slot {
            offset,
            key_len,
            value_len,
        });
        self.entries += 1;
        Ok(())
    }

    /// The key of `slot`.
    fn key_of<'a>(arena: &'a [u8], slot: &Slot) -> &'a [u8] {
        parts(arena, slot).0
    }

    /// Sorts the buffer by key (equal keys in insertion order).
    fn sort_buffer(&mut self) {
        let arena = &self.arena;
        self.slots.sort_unstable_by(|a, b| {
            Self::key_of(arena, a)
                .cmp(Self::key_of(arena, b))
                .then(a.offset.cmp(&b.offset))
        });
    }

    /// Writes the buffer as a sorted run and empties it (keeping its memory for reuse).
    fn spill(&mut self) -> Result<()> {
        if self.runs.len() >= self.max_runs {
            self.merge_runs()?;
        }
        self.sort_buffer();
        let mut writer = RunWriter::create(&self.dir)?;
        for slot in &self.slots {
            let (key, value) = parts(&self.arena, slot);
            writer.add(key, value)?;
        }
        let run = writer.finish()?;
        self.spilled_bytes += run.bytes;
        self.runs.push(run);
        self.arena.clear();
        self.slots.clear();
        Ok(())
    }

    /// Merges every run into one.
    fn merge_runs(&mut self) -> Result<()> {
        let runs = std::mem::take(&mut self.runs);
        let mut merged = Merge::new(&self.dir, runs)?;
        let mut writer = RunWriter::create(&self.dir)?;
        while let Some((key, value)) = merged.next()? {
            writer.add(key, value)?;
        }
        let run = writer.finish()?;
        self.spilled_bytes += run.bytes;
        self.runs.push(run);
        Ok(())
    }

    /// What the sorter did so far.
    pub fn stats(&self) -> SortStats {
        SortStats {
            entries: self.entries,
            runs_written: self.runs.len() as u64,
            spilled_bytes: self.spilled_bytes,
        }
    }

    /// Every entry added, in ascending key order (equal keys in the order added).
    pub fn finish(mut self) -> Result<SortedEntries> {
        if self.runs.is_empty() {
            self.sort_buffer();
            return Ok(SortedEntries {
                source: Source::Memory {
                    arena: self.arena,
                    slots: self.slots,
                    next: 0,
                },
                stats: SortStats {
                    entries: self.entries,
                    runs_written: 0,
                    spilled_bytes: 0,
                },
            });
        }
        if !self.slots.is_empty() {
            self.spill()?;
        }
        let stats = self.stats();
        // The buffer's memory goes before the merge's read buffers come.
        self.arena = Vec::new();
        self.slots = Vec::new();
        let runs = std::mem::take(&mut self.runs);
        Ok(SortedEntries {
            source: Source::Runs(Merge::new(&self.dir, runs)?),
            stats,
        })
    }
}

/// The sorted output of [`ExternalSorter::finish`]: call [`SortedEntries::next`] until it
/// returns `None`.
#[derive(Debug)]
pub struct SortedEntries {
    source: Source,
    stats: SortStats,
}

#[derive(Debug)]
enum Source {
    Memory {
        arena: Vec<u8>,
        slots: Vec<Slot>,
        next: usize,
    },
    Runs(Merge),
}

impl SortedEntries {
    /// The next entry `(key, value)`, or `None` after the last. The slices are valid until
    /// the next call.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        match &mut self.source {
            Source::Memory { arena, slots, next } => {
                let Some(slot) = slots.get(*next) else {
                    return Ok(None);
                };
                *next += 1;
                Ok(Some(parts(arena, slot)))
            }
            Source::Runs(merge) => merge.next(),
        }
    }

    /// What the sorter did.
    pub fn stats(&self) -> SortStats {
        self.stats
    }
}

/// Writes one run.
struct RunWriter {
    out: BufWriter<File>,
    hasher: Xxh3,
    entries: u64,
    bytes: u64,
    dir: PathBuf,
}

impl RunWriter {
    fn create(dir: &Path) -> Result<RunWriter> {
        let file = tempfile::tempfile_in(dir)
            .map_err(|e| Error::io_at("sort: create a temporary run file in", dir, e))?;
        Ok(RunWriter {
            out: BufWriter::with_capacity(RUN_WRITE_BUFFER, file),
            hasher: Xxh3::new(),
            entries: 0,
            bytes: 0,
            dir: dir.to_path_buf(),
        })
    }

    fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let mut header = [0u8; 8];
        header[..4].copy_from_slice(&(key.len() as u32).to_le_bytes());
        header[4..].copy_from_slice(&(value.len() as u32).to_le_bytes());
        for part in [&header[..], key, value] {
            self.hasher.update(part);
            self.out.write_all(part).map_err(|e| self.io_error(e))?;
        }
        self.entries += 1;
        self.bytes += (8 + key.len() + value.len()) as u64;
        Ok(())
    }

    fn io_error(&self, e: std::io::Error) -> Error {
        Error::io_at("sort: write a temporary run file in", &self.dir, e)
    }

    fn finish(self) -> Result<Run> {
        let dir = self.dir.clone();
        let mut file = self.out.into_inner().map_err(|e| {
            Error::io_at("sort: write a temporary run file in", &dir, e.into_error())
        })?;
        file.seek(SeekFrom::Start(0))
            .map_err(|e| Error::io_at("sort: rewind a temporary run file in", &dir, e))?;
        Ok(Run {
            file,
            entries: self.entries,
            bytes: self.bytes,
            checksum: self.hasher.digest(),
        })
    }
}

/// Reads one run back, checking its length and checksum at its end.
#[derive(Debug)]
struct RunReader {
    input: BufReader<File>,
    hasher: Xxh3Debug,
    left: u64,
    bytes_read: u64,
    bytes: u64,
    checksum: u64,
    number: usize,
    dir: PathBuf,
}

/// [`Xxh3`] with a `Debug` that prints nothing of its state.
struct Xxh3Debug(Xxh3);

impl std::fmt::Debug for Xxh3Debug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Xxh3")
    }
}

impl RunReader {
    fn new(run: Run, number: usize, dir: &Path) -> RunReader {
        RunReader {
            input: BufReader::with_capacity(RUN_READ_BUFFER, run.file),
            hasher: Xxh3Debug(Xxh3::new()),
            left: run.entries,
            bytes_read: 0,
            bytes: run.bytes,
            checksum: run.checksum,
            number,
            dir: dir.to_path_buf(),
        }
    }

    fn corrupt(&self, what: impl std::fmt::Display) -> Error {
        Error::corruption(format!(
            "sort: temporary run #{} in {} (written {} bytes, read {}): {what}",
            self.number,
            self.dir.display(),
            self.bytes,
            self.bytes_read
        ))
    }

    fn read_exact(&mut self, buf: &mut [u8]) -> Result<()> {
        match self.input.read_exact(buf) {
            Ok(()) => {
                self.hasher.0.update(buf);
                self.bytes_read += buf.len() as u64;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(self.corrupt("the file ends early"))
            }
            Err(e) => Err(Error::io_at(
                &format!("sort: read temporary run #{} in", self.number),
                &self.dir,
                e,
            )),
        }
    }

    /// Reads the next entry into `key` and `value`; false after the last one (whose
    /// checksum is then verified).
    fn read_into(&mut self, key: &mut Vec<u8>, value: &mut Vec<u8>) -> Result<bool> {
        if self.left == 0 {
            if self.bytes_read != self.bytes || self.hasher.0.digest() != self.checksum {
                return Err(self.corrupt("checksum mismatch"));
            }
            return Ok(false);
        }
        let mut header = [0u8; 8];
        self.read_exact(&mut header)?;
        let key_len = u32::from_le_bytes([header[0], header[1], header[2], header[3]]) as u64;
        let value_len = u32::from_le_bytes([header[4], header[5], header[6], header[7]]) as u64;
        if self.bytes_read + key_len + value_len > self.bytes {
            return Err(self.corrupt(format_args!(
                "an entry of {key_len} + {value_len} bytes reaches past the run's end"
            )));
        }
        key.resize(key_len as usize, 0);
        self.read_exact(key)?;
        value.resize(value_len as usize, 0);
        self.read_exact(value)?;
        self.left -= 1;
        Ok(true)
    }
}

/// The current entry of one run in the merge heap: ordered so that the heap's top is the
/// smallest key (ties: the earlier run, whose entries were added first).
#[derive(Debug)]
struct Head {
    key: Vec<u8>,
    value: Vec<u8>,
    run: usize,
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: `BinaryHeap` is a max-heap.
        other
            .key
            .cmp(&self.key)
            .then_with(|| other.run.cmp(&self.run))
    }
}

/// The k-way merge of sorted runs.
#[derive(Debug)]
struct Merge {
    readers: Vec<RunReader>,
    heap: BinaryHeap<Head>,
    /// The entry last returned; refilled from its run by the next call.
    current: Option<Head>,
}

impl Merge {
    fn new(dir: &Path, runs: Vec<Run>) -> Result<Merge> {
        let mut readers: Vec<RunReader> = runs
            .into_iter()
            .enumerate()
            .map(|(n, run)| RunReader::new(run, n, dir))
            .collect();
        let mut heap = BinaryHeap::with_capacity(readers.len());
        for (run, reader) in readers.iter_mut().enumerate() {
            let (mut key, mut value) = (Vec::new(), Vec::new());
            if reader.read_into(&mut key, &mut value)? {
                heap.push(Head { key, value, run });
            }
        }
        Ok(Merge {
            readers,
            heap,
            current: None,
        })
    }

    fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        if let Some(mut head) = self.current.take()
            && let Some(reader) = self.readers.get_mut(head.run)
            && reader.read_into(&mut head.key, &mut head.value)?
        {
            self.heap.push(head);
        }
        self.current = self.heap.pop();
        Ok(self
            .current
            .as_ref()
            .map(|h| (h.key.as_slice(), h.value.as_slice())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(mut s: SortedEntries) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        while let Some((k, v)) = s.next().unwrap() {
            out.push((k.to_vec(), v.to_vec()));
        }
        out
    }

    fn pseudo_random_keys(n: u32) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let x = (i as u64)
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .rotate_left(17);
                format!("{x:016x}-{i}").into_bytes()
            })
            .collect()
    }

    #[test]
    fn sorts_in_memory_without_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ExternalSorter::new(dir.path(), 64 << 20);
        for k in pseudo_random_keys(1000) {
            s.add(&k, b"v").unwrap();
        }
        let out = s.finish().unwrap();
        assert_eq!(out.stats().runs_written, 0);
        let got = collect(out);
        let mut want = pseudo_random_keys(1000);
        want.sort();
        assert_eq!(got.into_iter().map(|(k, _)| k).collect::<Vec<_>>(), want);
    }

    #[test]
    fn spills_runs_and_merges_them_in_order_with_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ExternalSorter::new(dir.path(), MIN_SORT_MEMORY);
        let keys = pseudo_random_keys(100_000);
        for k in &keys {
            let mut v = k.clone();
            v.reverse();
            s.add(k, &v).unwrap();
            assert!(
                s.buffered_bytes() <= MIN_SORT_MEMORY,
                "buffer past its limit"
            );
        }
        let out = s.finish().unwrap();
        assert!(out.stats().runs_written > 3, "{:?}", out.stats());
        let got = collect(out);
        let mut want: Vec<_> = keys
            .into_iter()
            .map(|k| {
                let mut v = k.clone();
                v.reverse();
                (k, v)
            })
            .collect();
        want.sort();
        assert_eq!(got, want);
    }

    #[test]
    fn equal_keys_keep_the_order_they_were_added_across_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ExternalSorter::new(dir.path(), MIN_SORT_MEMORY);
        let n = 60_000u32;
        for i in 0..n {
            s.add(&(i % 7).to_be_bytes(), &i.to_be_bytes()).unwrap();
        }
        let got = collect(s.finish().unwrap());
        assert_eq!(got.len(), n as usize);
        for pair in got.windows(2) {
            let (a, b) = (&pair[0], &pair[1]);
            assert!(a.0 < b.0 || (a.0 == b.0 && a.1 < b.1), "{a:?} before {b:?}");
        }
    }

    #[test]
    fn many_runs_are_merged_into_one_before_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ExternalSorter::new(dir.path(), MIN_SORT_MEMORY);
        s.max_runs = 3;
        let value = vec![7u8; 1000];
        let n = 8_000u32; // 8 MB of values: 8 runs of 1 MiB
        let mut most = 0;
        for i in 0..n {
            s.add(&i.wrapping_mul(2_654_435_761).to_be_bytes(), &value)
                .unwrap();
            most = most.max(s.runs.len());
        }
        assert_eq!(most, 3, "runs merged once there were 3");
        assert!(s.stats().spilled_bytes > 8_000_000, "{:?}", s.stats());
        let got = collect(s.finish().unwrap());
        assert_eq!(got.len(), n as usize);
        assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn a_damaged_run_is_reported_as_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = ExternalSorter::new(dir.path(), MIN_SORT_MEMORY);
        for k in pseudo_random_keys(50_000) {
            s.add(&k, b"value").unwrap();
        }
        s.spill().unwrap();
        // Flip one byte in the middle of the first run.
        let run = &mut s.runs[0];
        let mut byte = [0u8; 1];
        run.file.seek(SeekFrom::Start(run.bytes / 2)).unwrap();
        run.file.read_exact(&mut byte).unwrap();
        run.file.seek(SeekFrom::Start(run.bytes / 2)).unwrap();
        run.file.write_all(&[byte[0] ^ 0x55]).unwrap();
        run.file.seek(SeekFrom::Start(0)).unwrap();
        let mut out = s.finish().unwrap();
        let err = loop {
            match out.next() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("a damaged run read back without an error"),
                Err(e) => break e,
            }
        };
        assert_eq!(err.kind(), riptide_common::ErrorKind::Corruption, "{err}");
        assert!(err.to_string().contains("temporary run"), "{err}");
    }
}
