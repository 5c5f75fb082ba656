//! The append side of the WAL: the current segment, its sync state and the poison flag.
//!
//! One mutex guards the state. `append` and `rotate` hold it while they write; `sync`
//! releases it during `fdatasync` so that a background sync does not stall appends.

use std::io::ErrorKind as IoErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::Mutex;
use riptide_common::fs::{FsRef, WritableFile};
use riptide_common::{Error, IoResultExt, Result};

use crate::format::{
    MAX_PAYLOAD_LEN, RECORD_HEADER_LEN, SEGMENT_HEADER_LEN, encode_record, encode_record_into,
};
use crate::options::{SyncMode, WalOptions};
use crate::segment::{create_segment, list_segments, sync_dir, truncate};

/// The first reservation of zeros in a segment (see [`Writer::reserve`]): small, so that a
/// short-lived WAL (a test, a tool) writes little, then doubling with the segment's use.
const MIN_RESERVATION: u64 = 64 << 10;

/// The page size the zeros of a reservation are written in (see [`write_zero_pages`]).
const PAGE: u64 = 4096;

/// Writes zeros over `from..to` of `file`, one write per page (the first and last ones
/// partial when unaligned). One large write would make Linux (6.x, ext4) cache the range
/// in large folios; each small record written over them later then dirties a whole large
/// folio again, which `/proc/<pid>/io` counts as that many bytes written (72 KiB per
/// transaction in a durable sysbench insert run, while the device wrote 2.3 KiB).
fn write_zero_pages(file: &dyn WritableFile, from: u64, to: u64) -> std::io::Result<()> {
    const ZEROS: [u8; PAGE as usize] = [0; PAGE as usize];
    let mut at = from;
    while at < to {
        let page_end = (at / PAGE + 1) * PAGE;
        let n = page_end.min(to) - at;
        // n <= PAGE, so the slice is in bounds.
        file.write_at(ZEROS.get(..n as usize).unwrap_or(&ZEROS), at)?;
        at += n;
    }
    Ok(())
}

/// Counters of a [`crate::Wal`] since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalStats {
    /// Bytes appended to segments: record headers and payloads (segment headers not counted).
    pub bytes_written: u64,
    /// Records appended.
    pub records_written: u64,
    /// Successful `fsync`/`fdatasync` calls on segments (appends in full sync mode, explicit
    /// and background syncs, rotations, close).
    pub syncs: u64,
    /// Segments created, the one created by `open` included.
    pub segments_created: u64,
}

/// Where the records of a WAL end at one moment: [`crate::Wal::position`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalPosition {
    /// The segment being appended to.
    pub segment: u64,
    /// The length of that segment's prefix holding its header and every record appended so
    /// far: the next record starts here. The file may be longer (zeros reserved ahead of the
    /// records, see [`crate::WalOptions::preallocate_bytes`], or later appends); a copy of
    /// this prefix replays exactly the records appended before the position was taken.
    pub offset: u64,
}

/// The mutable state behind the writer's mutex.
struct State {
    /// The open current segment; `None` once closed.
    file: Option<Arc<dyn WritableFile>>,
    /// Number of the current segment.
    segment: u64,
    /// Path of the current segment.
    path: PathBuf,
    /// Where the next record of the current segment goes: the end of its records.
    offset: u64,
    /// Length of the current segment file: `offset`, or beyond it when zeros were
    /// written ahead of the records (see [`WalOptions::preallocate_bytes`]).
    reserved_end: u64,
    /// Bytes appended through this handle, over all segments.
    written: u64,
    /// The value of `written` covered by the last successful sync.
    synced: u64,
    /// Set by the first failed write or sync: what failed. Every later write is refused.
    failure: Option<String>,
    /// Set by `close`.
    closed: bool,
}

/// The append side of the WAL, shared with the background sync thread.
pub(crate) struct Writer {
    fs: FsRef,
    dir: PathBuf,
    /// Whether every append syncs ([`SyncMode::Full`]); [`crate::Wal::set_sync_mode`]
    /// changes it.
    sync_every_append: AtomicBool,
    /// The most the current segment is extended by at a time; 0: records are appended.
    preallocate: u64,
    state: Mutex<State>,
    bytes_written: AtomicU64,
    records_written: AtomicU64,
    syncs: AtomicU64,
    segments_created: AtomicU64,
}

impl Writer {
    /// A writer appending to `file`, the freshly created segment `segment` at `path`.
    pub(crate) fn new(
        fs: FsRef,
        dir: PathBuf,
        opts: &WalOptions,
        segment: u64,
        file: Arc<dyn WritableFile>,
        path: PathBuf,
    ) -> Self {
        let preallocate = match opts.sync_mode {
            SyncMode::None => 0,
            SyncMode::Interval(_) | SyncMode::Full => opts.preallocate_bytes,
        };
        Writer {
            fs,
            dir,
            sync_every_append: AtomicBool::new(opts.sync_mode == SyncMode::Full),
            preallocate,
            state: Mutex::new(State {
                file: Some(file),
                segment,
                path,
                offset: SEGMENT_HEADER_LEN as u64,
                reserved_end: SEGMENT_HEADER_LEN as u64,
                written: 0,
                synced: 0,
                failure: None,
                closed: false,
            }),
            bytes_written: AtomicU64::new(0),
            records_written: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            segments_created: AtomicU64::new(1),
        }
    }

    /// The WAL directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The error for a write refused because of an earlier failure or a close.
    fn refuse(&self, st: &State) -> Result<()> {
        if let Some(failure) = &st.failure {
            return Err(Error::closed(format!(
                "WAL {} is read-only after an earlier failure: {failure}",
                self.dir.display()
            )));
        }
        if st.closed {
            return Err(Error::closed(format!(
                "WAL {} is closed",
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// The current segment file, or the refusal error.
    fn writable(&self, st: &State) -> Result<Arc<dyn WritableFile>> {
        self.refuse(st)?;
        st.file
            .clone()
            .ok_or_else(|| Error::closed(format!("WAL {} is closed", self.dir.display())))
    }

    /// Records a failed write or sync: the WAL refuses every later write.
    fn poison(&self, st: &mut State, err: &Error) {
        log::error!("WAL {} is now read-only: {err}", self.dir.display());
        if st.failure.is_none() {
            st.failure = Some(err.to_string());
        }
    }

    /// Appends one record with a single `write()`; syncs it in [`SyncMode::Full`].
    pub(crate) fn append(&self, payload: &[u8]) -> Result<()> {
        self.append_all(&[payload], true)
    }

    /// Appends one record per payload, all with a single `write()`, and syncs them once in
    /// [`SyncMode::Full`] if `sync` (a group of two-phase-commit records, which keep a
    /// record each).
    pub(crate) fn append_all(&self, payloads: &[&[u8]], sync: bool) -> Result<()> {
        if let Some(p) = payloads.iter().find(|p| p.len() > MAX_PAYLOAD_LEN) {
            return Err(Error::invalid_argument(format!(
                "WAL record payload of {} bytes exceeds the maximum of {MAX_PAYLOAD_LEN}",
                p.len()
            )));
        }
        let record = match payloads {
            [] => return Ok(()),
            [one] => encode_record(one),
            many => {
                let mut all = Vec::with_capacity(
                    many.iter()
                        .map(|p| p.len() + RECORD_HEADER_LEN)
                        .sum::<usize>(),
                );
                for p in many {
                    encode_record_into(p, &mut all);
                }
                all
            }
        };
        let records = payloads.len() as u64;
        let len = record.len() as u64;
        let mut st = self.state.lock();
        let file = self.writable(&st)?;
        let written = if self.preallocate == 0 {
            file.append(&record)
        } else {
            self.reserve(&file, &mut st, len)?;
            file.write_at(&record, st.offset)
        };
        if let Err(e) = written {
            let what = if records == 1 {
                format!("a {len}-byte record")
            } else {
                format!("{records} records of {len} bytes in all")
            };
            let err = Error::io(
                format!(
                    "append {what} at offset {} of WAL segment {}",
                    st.offset,
                    st.path.display()
                ),
                e,
            );
            self.poison(&mut st, &err);
            return Err(err);
        }
        st.offset += len;
        st.written += len;
        self.bytes_written.fetch_add(len, Ordering::Relaxed);
        self.records_written.fetch_add(records, Ordering::Relaxed);
        if sync && self.sync_every_append.load(Ordering::Acquire) {
            if let Err(e) = file.sync_data() {
                let err = Error::io_at("fdatasync WAL segment", &st.path, e);
                self.poison(&mut st, &err);
                return Err(err);
            }
            st.synced = st.written;
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Makes room for a record of `len` bytes at `st.offset`: when it would pass the zeros
    /// written so far, writes more: as many as the segment's records take already, at least
    /// [`MIN_RESERVATION`] and at most `self.preallocate` (the smaller of the two wins), and
    /// never less than the record. The next sync makes the zeros durable with the record,
    /// so a record is never acknowledged in space whose allocation is not.
    fn reserve(&self, file: &Arc<dyn WritableFile>, st: &mut State, len: u64) -> Result<()> {
        let need = st.offset.saturating_add(len);
        if need <= st.reserved_end {
            return Ok(());
        }
        let used = st.offset - SEGMENT_HEADER_LEN as u64;
        let cap = self.preallocate;
        let step = used.clamp(MIN_RESERVATION.min(cap), cap);
        let new_end = need.max(st.reserved_end.saturating_add(step));
        let from = st.reserved_end;
        let res = write_zero_pages(&**file, from, new_end).map_err(|e| {
            Error::io(
                format!(
                    "reserve {} bytes of zeros at offset {from} of WAL segment {}",
                    new_end - from,
                    st.path.display()
                ),
                e,
            )
        });
        match res {
            Ok(()) => {
                st.reserved_end = new_end;
                Ok(())
            }
            Err(err) => {
                self.poison(st, &err);
                Err(err)
            }
        }
    }

    /// Cuts the zeros reserved past the records of the current segment off, so a finished
    /// segment ends at its last record. Does nothing when none are reserved.
    fn cut_reservation(&self, st: &mut State) -> Result<()> {
        if st.reserved_end <= st.offset {
            return Ok(());
        }
        if let Err(err) = truncate(&*self.fs, &st.path, st.offset) {
            self.poison(st, &err);
            return Err(err);
        }
        st.reserved_end = st.offset;
        Ok(())
    }

    /// Makes every later append sync before it returns (`true`) or not.
    pub(crate) fn set_sync_every_append(&self, on: bool) {
        self.sync_every_append.store(on, Ordering::Release);
    }

    /// Makes every record appended so far durable. Does nothing if nothing was appended
    /// since the last sync.
    pub(crate) fn sync(&self) -> Result<()> {
        let (file, target, path) = {
            let st = self.state.lock();
            let file = self.writable(&st)?;
            if st.synced >= st.written {
                return Ok(());
            }
            (file, st.written, st.path.clone())
        };
        // Without the lock: appends continue while the disk flushes. A rotation meanwhile
        // fsyncs this segment itself, so syncing a stale handle is still correct.
        let res = file.sync_data();
        let mut st = self.state.lock();
        match res {
            Ok(()) => {
                st.synced = st.synced.max(target);
                self.syncs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                let err = Error::io_at("fdatasync WAL segment", &path, e);
                self.poison(&mut st, &err);
                Err(err)
            }
        }
    }

    /// Fsyncs and closes the current segment, creates the next one, returns its number.
    pub(crate) fn rotate(&self) -> Result<u64> {
        let mut st = self.state.lock();
        let file = self.writable(&st)?;
        self.cut_reservation(&mut st)?;
        if let Err(e) = file.sync_all() {
            let err = Error::io_at("fsync WAL segment", &st.path, e);
            self.poison(&mut st, &err);
            return Err(err);
        }
        st.synced = st.written;
        self.syncs.fetch_add(1, Ordering::Relaxed);
        riptide_common::kill_point::kill_point("wal.rotate.after_sync");
        let next = st.segment.checked_add(1).ok_or_else(|| {
            Error::invalid_argument(format!("WAL segment number {} is the maximum", st.segment))
        })?;
        match create_segment(&*self.fs, &self.dir, next) {
            Ok((file, path)) => {
                st.file = Some(file);
                st.segment = next;
                st.path = path;
                st.offset = SEGMENT_HEADER_LEN as u64;
                st.reserved_end = st.offset;
                self.segments_created.fetch_add(1, Ordering::Relaxed);
                riptide_common::kill_point::kill_point("wal.rotate.after_create");
                Ok(next)
            }
            Err(err) => {
                self.poison(&mut st, &err);
                Err(err)
            }
        }
    }

    /// Number of the segment being appended to.
    pub(crate) fn current_segment(&self) -> u64 {
        self.state.lock().segment
    }

    /// The current segment and the end of its records.
    pub(crate) fn position(&self) -> WalPosition {
        let st = self.state.lock();
        WalPosition {
            segment: st.segment,
            offset: st.offset,
        }
    }

    /// Deletes every segment numbered below `n`, except the current one, lowest first.
    pub(crate) fn remove_segments_below(&self, n: u64) -> Result<usize> {
        let current = {
            let st = self.state.lock();
            self.refuse(&st)?;
            st.segment
        };
        // The current segment only grows, so everything below this limit stays obsolete
        // even if a rotation happens while we delete.
        let limit = n.min(current);
        let mut removed = 0;
        for (num, path) in list_segments(&*self.fs, &self.dir)? {
            if num >= limit {
                break;
            }
            match self.fs.remove_file(&path) {
                Ok(()) => removed += 1,
                Err(e) if e.kind() == IoErrorKind::NotFound => {}
                Err(e) => return Err(Error::io_at("remove WAL segment", &path, e)),
            }
        }
        if removed > 0 {
            sync_dir(&*self.fs, &self.dir)?;
        }
        Ok(removed)
    }

    /// Bytes appended since open (see [`WalStats::bytes_written`]).
    pub(crate) fn bytes_written(&self) -> u64 {
        self.bytes_written.load(Ordering::Relaxed)
    }

    /// Counters since open.
    pub(crate) fn stats(&self) -> WalStats {
        WalStats {
            bytes_written: self.bytes_written.load(Ordering::Relaxed),
            records_written: self.records_written.load(Ordering::Relaxed),
            syncs: self.syncs.load(Ordering::Relaxed),
            segments_created: self.segments_created.load(Ordering::Relaxed),
        }
    }

    /// Fsyncs and closes the current segment. Later writes are refused. Closing twice is a
    /// no-op; closing after a failure reports that failure.
    pub(crate) fn close(&self) -> Result<()> {
        let mut st = self.state.lock();
        if st.closed {
            return Ok(());
        }
        let file = st.file.take();
        st.closed = true;
        if st.failure.is_some() {
            return self.refuse(&st);
        }
        if let Some(file) = file {
            let res = self
                .cut_reservation(&mut st)
                .and_then(|()| file.sync_all().at("fsync WAL segment", &st.path));
            if let Err(err) = res {
                self.poison(&mut st, &err);
                return Err(err);
            }
            st.synced = st.written;
            self.syncs.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_common::ErrorKind;
    use riptide_common::fs::{Fault, FaultFs, FaultRule, FileSystem, FsOp};

    /// Records the `(offset, len)` of every `write_at`, and that the bytes were zeros.
    #[derive(Debug, Default)]
    struct Pieces(parking_lot::Mutex<Vec<(u64, usize, bool)>>);

    impl WritableFile for Pieces {
        fn append(&self, _: &[u8]) -> std::io::Result<()> {
            unreachable!("reservations write at offsets")
        }
        fn write_at(&self, data: &[u8], offset: u64) -> std::io::Result<()> {
            let zeros = data.iter().all(|&b| b == 0);
            self.0.lock().push((offset, data.len(), zeros));
            Ok(())
        }
        fn sync_data(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn sync_all(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn zeros_are_written_one_page_at_a_time() {
        let file = Pieces::default();
        write_zero_pages(&file, 32, 3 * 4096 + 132).unwrap();
        assert_eq!(
            *file.0.lock(),
            vec![
                (32, 4064, true),
                (4096, 4096, true),
                (8192, 4096, true),
                (12288, 132, true)
            ]
        );
        let file = Pieces::default();
        write_zero_pages(&file, 4096, 4096).unwrap();
        assert!(file.0.lock().is_empty());
    }

    /// A writer on a file system that fails every append.
    fn failing_writer(fs: &FaultFs, dir: &Path) -> Writer {
        fs.create_dir_all(dir).unwrap();
        let (file, path) = create_segment(fs, dir, 1).unwrap();
        fs.add_rule(FaultRule::new(FsOp::Append, Fault::Eio));
        Writer::new(
            fs.as_dyn(),
            dir.to_path_buf(),
            &WalOptions {
                sync_mode: SyncMode::None,
                ..WalOptions::default()
            },
            1,
            file,
            path,
        )
    }

    #[test]
    fn a_failed_write_poisons_the_wal() {
        let fs = FaultFs::new(1);
        let dir = Path::new("/wal");
        let w = failing_writer(&fs, dir);
        let e = w.append(b"doomed").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Io);
        let msg = e.to_string();
        assert!(msg.contains("000001.log"), "{msg}");
        assert!(msg.contains("offset 32"), "{msg}");

        for e in [
            w.append(b"again").unwrap_err(),
            w.sync().unwrap_err(),
            w.rotate().unwrap_err(),
            w.remove_segments_below(1).unwrap_err(),
        ] {
            assert_eq!(e.kind(), ErrorKind::Closed, "{e}");
            let msg = e.to_string();
            assert!(msg.contains("read-only after an earlier failure"), "{msg}");
            assert!(msg.contains("append a 19-byte record"), "{msg}");
        }
        assert_eq!(w.stats().records_written, 0);
        // Close reports the failure (nothing can be claimed durable), then is a no-op.
        assert_eq!(w.close().unwrap_err().kind(), ErrorKind::Closed);
        w.close().unwrap();
        // The rotation was refused: no new segment.
        assert!(!fs.exists(&dir.join("000002.log")).unwrap());
    }
}
