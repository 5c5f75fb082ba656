//! Back-pressure: writes slow down (and are counted) as L0 fills, never lose data, and the
//! memtable budget bounds memory across column families. A stopped write sleeps (no busy
//! loop with the flush thread), and triggers that would stop writes for good are refused.

// Test code: a failed unwrap is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use riptide::fs::{
    CreateMode, DirEntry, FaultFs, FileLock, FileSystem, Metadata, RandomAccessFile, WritableFile,
};
use riptide::{Db, ErrorKind, Options, SyncMode};

#[test]
fn writes_slow_down_as_l0_fills_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(8 * 1024)
        .l0_compaction_trigger(40)
        // L0 must fill: no young-database merging of these tiny tables.
        .young_space_bound(false)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(100)
        .max_immutable_memtables(4)
        // Slow enough for the flushes of these tiny memtables (three fsyncs each) to keep
        // up, so the slowdown alone absorbs the pressure.
        .delayed_write_rate(256 * 1024);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..2000u32 {
        db.put(&i.to_be_bytes(), &[i as u8; 100]).unwrap();
    }
    let s = db.statistics();
    assert!(s.levels[0].files >= 2, "L0 never filled: {s}");
    assert!(s.write_slowdowns > 0, "no slowdown was recorded: {s}");
    assert!(s.write_slowdown_micros > 0);
    assert_eq!(s.write_stops, 0, "a stop is a last resort: {s}");
    for i in 0..2000u32 {
        assert_eq!(db.get(&i.to_be_bytes()).unwrap(), Some(vec![i as u8; 100]));
    }
    db.close().unwrap();
}

#[test]
fn writes_stop_at_the_l0_stop_trigger_until_compaction_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(8 * 1024)
        .l0_compaction_trigger(3)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(3);
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..4000u32 {
        db.put(&i.to_be_bytes(), &[i as u8; 100]).unwrap();
    }
    let s = db.statistics();
    assert!(
        s.write_slowdowns + s.write_stops > 0,
        "no back-pressure recorded: {s}"
    );
    assert!(s.levels[0].files <= 3, "L0 passed its stop trigger: {s}");
    for i in (0..4000u32).step_by(7) {
        assert_eq!(db.get(&i.to_be_bytes()).unwrap(), Some(vec![i as u8; 100]));
    }
    db.close().unwrap();
}

#[test]
fn memtables_of_all_column_families_stay_within_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 256 * 1024;
    let opts = Options::default()
        .sync_mode(SyncMode::None)
        .write_buffer_size(1 << 20)
        .db_write_buffer_size(budget);
    let db = Db::open(dir.path(), opts).unwrap();
    let cfs: Vec<_> = (0..4)
        .map(|i| db.create_cf(&format!("cf{i}")).unwrap())
        .collect();
    let mut peak = 0;
    for i in 0..20_000u32 {
        let cf = &cfs[(i % 4) as usize];
        db.put_cf(cf, &i.to_be_bytes(), &[1u8; 100]).unwrap();
        peak = peak.max(db.statistics().memtable_bytes);
    }
    // Each column family alone (1 MiB buffers) would hold everything; the shared budget
    // forces flushes. Allow one write (and its skiplist node) beyond it.
    let bound = budget as u64 + 4096;
    assert!(
        peak <= bound,
        "memtables reached {peak} bytes, budget {budget}"
    );
    assert!(db.statistics().flushes > 0);
    db.close().unwrap();
}

#[test]
fn an_l0_compaction_trigger_above_the_stop_trigger_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::default()
        .l0_compaction_trigger(8)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(4);
    let e = Db::open(dir.path(), opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    let msg = e.to_string();
    assert!(msg.contains("l0_compaction_trigger (8)"), "{msg}");
    assert!(msg.contains("l0_stop_trigger (4)"), "{msg}");
    // Refused before anything was written.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // The stop trigger the engine uses counts: raised above the slowdown trigger, it
    // leaves room for the compaction trigger.
    let opts = Options::default()
        .l0_compaction_trigger(8)
        .l0_slowdown_trigger(10)
        .l0_stop_trigger(4);
    Db::open(dir.path(), opts).unwrap().close().unwrap();
    // Equal triggers work: compaction starts when writes stop.
    let opts = Options::default()
        .l0_compaction_trigger(4)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(4);
    Db::open(dir.path(), opts).unwrap().close().unwrap();
    let opts = Options::default()
        .l0_compaction_trigger(20)
        .l0_slowdown_trigger(2)
        .l0_stop_trigger(4);
    let e = Db::open(dir.path(), opts).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
}

/// A file system that lets `allowed` table files be created, then holds every later
/// table creation until [`Gate::open`]: a compaction that cannot finish, on demand.
#[derive(Debug)]
struct Gate {
    inner: FaultFs,
    state: Mutex<(u64, Option<u64>, bool)>, // (tables created, allowed, a creation waits)
    cv: Condvar,
}

impl Gate {
    fn allow(&self, more: u64) {
        let mut st = self.state.lock().unwrap();
        st.1 = Some(st.0 + more);
    }
    fn open(&self) {
        self.state.lock().unwrap().1 = None;
        self.cv.notify_all();
    }
    fn wait_until_holding(&self) {
        let mut st = self.state.lock().unwrap();
        while !st.2 {
            st = self.cv.wait(st).unwrap();
        }
    }
}

impl FileSystem for Gate {
    fn create(&self, path: &Path, mode: CreateMode) -> std::io::Result<Box<dyn WritableFile>> {
        if path.extension().is_some_and(|e| e == "sst") {
            let mut st = self.state.lock().unwrap();
            while st.1.is_some_and(|allowed| st.0 >= allowed) {
                st.2 = true;
                self.cv.notify_all();
                st = self.cv.wait(st).unwrap();
            }
            st.0 += 1;
        }
        self.inner.create(path, mode)
    }
    fn open_read(&self, path: &Path) -> std::io::Result<Box<dyn RandomAccessFile>> {
        self.inner.open_read(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> std::io::Result<()> {
        self.inner.truncate(path, len)
    }
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> std::io::Result<()> {
        self.inner.remove_file(path)
    }
    fn list_dir(&self, dir: &Path) -> std::io::Result<Vec<DirEntry>> {
        self.inner.list_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> std::io::Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn metadata(&self, path: &Path) -> std::io::Result<Metadata> {
        self.inner.metadata(path)
    }
    fn sync_dir(&self, dir: &Path) -> std::io::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn lock_file(&self, path: &Path) -> std::io::Result<Box<dyn FileLock>> {
        self.inner.lock_file(path)
    }
}

/// A write stopped at the L0 stop trigger while the compaction it waits for cannot finish
/// (its output file is held by [`Gate`]) sleeps: the writer and the idle flush thread must
/// not wake each other in a loop. Counted, not timed: the flush thread's idle wake-ups
/// during the stop stay at about one per 100 ms wait slice (a busy loop makes thousands).
#[test]
fn a_stopped_write_does_not_busy_loop_with_the_flush_thread() {
    let gate = Arc::new(Gate {
        inner: FaultFs::new(1),
        state: Mutex::new((0, None, false)),
        cv: Condvar::new(),
    });
    let opts = Options::default()
        .file_system(gate.clone())
        .sync_mode(SyncMode::None)
        .write_buffer_size(1 << 20)
        .young_space_bound(false)
        .l0_compaction_trigger(2)
        .l0_slowdown_trigger(1)
        .l0_stop_trigger(2);
    let db = Arc::new(Db::open(Path::new("/db"), opts).unwrap());
    for round in 0..2u8 {
        for i in 0..100u32 {
            db.put(&i.to_be_bytes(), &[round; 100]).unwrap();
        }
        if round == 1 {
            // This flush's table is the last one let through: the compaction of the two
            // overlapping L0 tables then waits to create its output.
            gate.allow(1);
        }
        db.flush().unwrap();
    }
    gate.wait_until_holding();
    assert_eq!(db.statistics().levels[0].files, 2);

    let before = db.statistics();
    let start = Instant::now();
    let writer = {
        let db = Arc::clone(&db);
        std::thread::spawn(move || db.put(b"stopped", b"until compaction ends"))
    };
    std::thread::sleep(Duration::from_millis(500));
    let during = db.statistics();
    let elapsed_slices = start.elapsed().as_millis() / 100;
    assert!(!writer.is_finished(), "the write was not stopped: {during}");
    let idle = during.flush_idle_wakeups - before.flush_idle_wakeups;
    assert!(
        u128::from(idle) <= 3 + 2 * elapsed_slices,
        "{idle} idle flush-thread wake-ups in {elapsed_slices} wait slices: a busy loop"
    );

    gate.open();
    writer.join().unwrap().unwrap();
    let after = db.statistics();
    assert!(after.write_stops > before.write_stops, "{after}");
    assert_eq!(
        db.get(b"stopped").unwrap().as_deref(),
        Some(&b"until compaction ends"[..])
    );
    assert_eq!(db.get(&7u32.to_be_bytes()).unwrap(), Some(vec![1u8; 100]));
    Arc::into_inner(db).unwrap().close().unwrap();
}
