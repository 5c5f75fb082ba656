//! [`FaultFs`]: an in-memory [`FileSystem`] for tests that injects I/O faults and simulates
//! crashes.
//!
//! Each file keeps two contents: what readers see now, and what its last `fsync` made
//! durable. Each directory keeps two sets of names: the current ones, and those its last
//! `fsync` made durable (creations, renames and removals are durable only then, as POSIX
//! promises and ext4 and XFS may do no better). [`FaultFs::crash`] keeps only the durable
//! part: every byte not fsynced, every file whose directory was not synced since it was
//! created (and renamed files' new names) are gone; removed files may come back.
//!
//! Faults are [`FaultRule`]s: an operation kind ([`FsOp`]), a [`Fault`] (`EIO`, `ENOSPC`, a
//! short write, corrupted read bytes), optionally a file-name suffix, a number of matching
//! calls to let through first, a maximum number of injections and a probability. Random
//! choices come from one generator seeded at construction, so a single-threaded sequence
//! of calls is reproducible from its seed.
//!
//! Directories are simple: created, renamed and removed at once and durably (a renamed
//! directory's files keep their current and durable state under the new name). Paths are
//! compared as given (no normalization).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{CreateMode, DirEntry, FileLock, FileSystem, Metadata, RandomAccessFile, WritableFile};

/// The kinds of calls a [`FaultRule`] can target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FsOp {
    /// [`FileSystem::create`].
    Create,
    /// [`FileSystem::open_read`].
    OpenRead,
    /// [`RandomAccessFile::read_exact_at`] (also behind [`FileSystem::read_all`]).
    Read,
    /// [`WritableFile::append`] and [`WritableFile::write_at`].
    Append,
    /// [`WritableFile::sync_data`] and [`WritableFile::sync_all`].
    Sync,
    /// [`FileSystem::sync_dir`].
    SyncDir,
    /// [`FileSystem::truncate`].
    Truncate,
    /// [`FileSystem::rename`] (the rule's suffix is matched against the source).
    Rename,
    /// [`FileSystem::remove_file`].
    Remove,
    /// [`FileSystem::list_dir`].
    List,
    /// [`FileSystem::metadata`] (also behind [`FileSystem::exists`]).
    Metadata,
    /// [`FileSystem::create_dir_all`].
    CreateDir,
    /// [`FileSystem::lock_file`].
    Lock,
    /// [`FileSystem::hard_link`] (the rule's suffix is matched against the new name).
    Link,
    /// [`FileSystem::remove_dir`].
    RemoveDir,
}

/// What an injected fault does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fault {
    /// The call does nothing and fails with an I/O error (`EIO`).
    Eio,
    /// The call does nothing and fails with "no space left on device" (`ENOSPC`, error
    /// kind `StorageFull`).
    NoSpace,
    /// For [`FsOp::Append`]: a random strict prefix of the data is written, then the call
    /// fails with `ENOSPC`. For any other operation, the same as [`Fault::Eio`].
    ShortWrite,
    /// For [`FsOp::Read`]: the read succeeds but one byte of the buffer is flipped (the
    /// file itself is intact). Never fires for any other operation.
    CorruptRead,
}

/// One fault to inject: which calls, what happens, how often. Build with
/// [`FaultRule::new`] and the setters, install with [`FaultFs::add_rule`].
#[derive(Debug, Clone)]
pub struct FaultRule {
    op: FsOp,
    fault: Fault,
    suffix: Option<String>,
    skip: u64,
    remaining: Option<u64>,
    probability: f64,
}

impl FaultRule {
    /// Every call of kind `op` (on any file) fails with `fault`, until removed.
    pub fn new(op: FsOp, fault: Fault) -> Self {
        FaultRule {
            op,
            fault,
            suffix: None,
            skip: 0,
            remaining: None,
            probability: 1.0,
        }
    }

    /// Only calls on paths ending with `suffix` (e.g. `".log"`, `".sst"`, `"MANIFEST.tmp"`).
    pub fn on_files_ending_with(mut self, suffix: &str) -> Self {
        self.suffix = Some(suffix.to_string());
        self
    }

    /// The first `n` matching calls go through untouched.
    pub fn after(mut self, n: u64) -> Self {
        self.skip = n;
        self
    }

    /// At most `n` faults are injected, then the rule is spent.
    pub fn times(mut self, n: u64) -> Self {
        self.remaining = Some(n);
        self
    }

    /// Each matching call (after [`after`](Self::after)) fails with chance `p` (0 to 1).
    pub fn probability(mut self, p: f64) -> Self {
        self.probability = p.clamp(0.0, 1.0);
        self
    }

    fn applies(&self, op: FsOp, path: &Path) -> bool {
        if self.op != op || self.remaining == Some(0) {
            return false;
        }
        if self.fault == Fault::CorruptRead && op != FsOp::Read {
            return false;
        }
        match &self.suffix {
            None => true,
            Some(s) => path.as_os_str().as_encoded_bytes().ends_with(s.as_bytes()),
        }
    }
}

/// One file: what readers see and what the last fsync made durable.
#[derive(Debug, Default)]
struct Node {
    data: Vec<u8>,
    durable: Vec<u8>,
    /// True when `data` was cut or rewritten since the last sync (so `durable` is not a
    /// prefix of it).
    rewritten: bool,
}

impl Node {
    fn sync(&mut self) {
        if self.rewritten || self.durable.len() > self.data.len() {
            self.durable = self.data.clone();
            self.rewritten = false;
        } else if let Some(tail) = self.data.get(self.durable.len()..) {
            self.durable.extend_from_slice(tail);
        }
    }
}

type NodeRef = Arc<Mutex<Node>>;

#[derive(Debug)]
struct State {
    /// The current names.
    live: BTreeMap<PathBuf, NodeRef>,
    /// The names as of each directory's last fsync.
    durable: BTreeMap<PathBuf, NodeRef>,
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    rules: Vec<FaultRule>,
    rng: u64,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// Set by [`FaultFs::crash`]: every later call fails.
    dead: AtomicBool,
    injected: AtomicU64,
    calls: AtomicU64,
}

/// An in-memory file system that injects faults and simulates crashes (see the module
/// documentation). Cheap to clone: clones share the same files and rules.
#[derive(Debug, Clone)]
pub struct FaultFs {
    shared: Arc<Shared>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// splitmix64: a small, good generator, enough for choosing faults.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("no such file or directory: {}", path.display()),
    )
}

fn injected_error(fault: Fault, op: FsOp) -> io::Error {
    match fault {
        Fault::NoSpace | Fault::ShortWrite => io::Error::new(
            io::ErrorKind::StorageFull,
            format!("no space left on device (injected ENOSPC on {op:?})"),
        ),
        Fault::Eio | Fault::CorruptRead => {
            io::Error::other(format!("input/output error (injected EIO on {op:?})"))
        }
    }
}

/// What [`FaultFs::decide`] chose for one call.
struct Decision {
    fault: Option<Fault>,
    /// A random number for the fault's details (short-write length, flipped byte).
    random: u64,
}

impl FaultFs {
    /// An empty file system (only the root directory `/` exists) with no fault rules,
    /// whose random choices derive from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut dirs = BTreeSet::new();
        dirs.insert(PathBuf::from("/"));
        FaultFs {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    live: BTreeMap::new(),
                    durable: BTreeMap::new(),
                    dirs,
                    locks: BTreeSet::new(),
                    rules: Vec::new(),
                    rng: seed,
                }),
                dead: AtomicBool::new(false),
                injected: AtomicU64::new(0),
                calls: AtomicU64::new(0),
            }),
        }
    }

    /// This file system as the engine takes it (`Options::file_system`).
    pub fn as_dyn(&self) -> super::FsRef {
        Arc::new(self.clone())
    }

    /// Installs a fault rule (rules are checked in the order added; the first that fires
    /// wins).
    pub fn add_rule(&self, rule: FaultRule) {
        lock(&self.shared.state).rules.push(rule);
    }

    /// Removes every fault rule.
    pub fn clear_rules(&self) {
        lock(&self.shared.state).rules.clear();
    }

    /// Faults injected so far (by this instance, not counting earlier ones before a crash).
    pub fn injected_faults(&self) -> u64 {
        self.shared.injected.load(Ordering::Relaxed)
    }

    /// Calls made so far to this instance (every operation, failed or not).
    pub fn calls(&self) -> u64 {
        self.shared.calls.load(Ordering::Relaxed)
    }

    /// Simulates a power loss: returns a new file system holding only what was durable
    /// here (see the module documentation), with no fault rules and no locks. This
    /// instance, and every file open on it, fails every later call with `EIO`, so a
    /// database still running on it (drop it next) changes nothing in the new one.
    pub fn crash(&self) -> FaultFs {
        self.shared.dead.store(true, Ordering::SeqCst);
        let st = lock(&self.shared.state);
        let mut live = BTreeMap::new();
        for (path, node) in &st.durable {
            let durable = lock(node).durable.clone();
            live.insert(
                path.clone(),
                Arc::new(Mutex::new(Node {
                    data: durable.clone(),
                    durable,
                    rewritten: false,
                })),
            );
        }
        let durable = live.clone();
        FaultFs {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    live,
                    durable,
                    dirs: st.dirs.clone(),
                    locks: BTreeSet::new(),
                    rules: Vec::new(),
                    rng: next_random(&mut st.rng.clone()),
                }),
                dead: AtomicBool::new(false),
                injected: AtomicU64::new(0),
                calls: AtomicU64::new(0),
            }),
        }
    }

    /// The current content of file `path` (not a fault-injected read), if it exists.
    pub fn file_content(&self, path: &Path) -> Option<Vec<u8>> {
        let st = lock(&self.shared.state);
        st.live.get(path).map(|n| lock(n).data.clone())
    }

    /// Overwrites the byte at `offset` of file `path` with `byte` (on the current and the
    /// durable content: damage on the medium). Returns false if there is no such byte.
    pub fn damage(&self, path: &Path, offset: usize, byte: u8) -> bool {
        let st = lock(&self.shared.state);
        let Some(node) = st.live.get(path) else {
            return false;
        };
        let mut n = lock(node);
        let mut hit = false;
        if let Some(b) = n.data.get_mut(offset) {
            *b = byte;
            hit = true;
        }
        if let Some(b) = n.durable.get_mut(offset) {
            *b = byte;
        }
        hit
    }

    /// A listing for debugging: every file with its current and durable length, and the
    /// names a crash would drop or bring back.
    pub fn describe(&self) -> String {
        let st = lock(&self.shared.state);
        let mut out = String::new();
        for (p, n) in &st.live {
            let n = lock(n);
            let durable_name = st.durable.contains_key(p);
            out.push_str(&format!(
                "{} {} bytes, {} durable{}\n",
                p.display(),
                n.data.len(),
                n.durable.len(),
                if durable_name {
                    ""
                } else {
                    ", name not durable"
                }
            ));
        }
        for p in st.durable.keys().filter(|p| !st.live.contains_key(*p)) {
            out.push_str(&format!("{} removed, removal not durable\n", p.display()));
        }
        out
    }

    /// The names of the files (not directories) directly in `dir`, sorted.
    pub fn file_names(&self, dir: &Path) -> Vec<String> {
        let st = lock(&self.shared.state);
        st.live
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    }

    /// Counts the call, refuses it on a crashed instance, and decides whether a fault
    /// fires.
    fn decide(&self, op: FsOp, path: &Path) -> io::Result<Decision> {
        self.shared.calls.fetch_add(1, Ordering::Relaxed);
        if self.shared.dead.load(Ordering::SeqCst) {
            return Err(io::Error::other(format!(
                "input/output error: the file system crashed (simulated) before {op:?} on {}",
                path.display()
            )));
        }
        let mut st = lock(&self.shared.state);
        let State { rules, rng, .. } = &mut *st;
        let random = next_random(rng);
        for rule in rules.iter_mut() {
            if !rule.applies(op, path) {
                continue;
            }
            if rule.skip > 0 {
                rule.skip -= 1;
                continue;
            }
            if rule.probability < 1.0 {
                let draw = (next_random(rng) >> 11) as f64 / (1u64 << 53) as f64;
                if draw >= rule.probability {
                    continue;
                }
            }
            if let Some(r) = &mut rule.remaining {
                *r -= 1;
            }
            self.shared.injected.fetch_add(1, Ordering::Relaxed);
            return Ok(Decision {
                fault: Some(rule.fault),
                random,
            });
        }
        Ok(Decision {
            fault: None,
            random,
        })
    }

    /// [`Self::decide`] for calls where every fault is a plain failure.
    fn check(&self, op: FsOp, path: &Path) -> io::Result<()> {
        match self.decide(op, path)?.fault {
            Some(f) => Err(injected_error(f, op)),
            None => Ok(()),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.state)
    }
}

fn parent_of(path: &Path) -> PathBuf {
    path.parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf)
}

fn check_parent(st: &State, path: &Path) -> io::Result<()> {
    let parent = parent_of(path);
    if st.dirs.contains(&parent) {
        Ok(())
    } else {
        Err(not_found(&parent))
    }
}

/// True when directory `dir` holds no file and no directory.
fn is_empty_dir(st: &State, dir: &Path) -> bool {
    !st.live.keys().any(|p| p.parent() == Some(dir))
        && !st.dirs.iter().any(|p| p.parent() == Some(dir))
}

/// `path` with its prefix `from` replaced by `to`, if it lies in `from` (or is it).
fn moved(path: &Path, from: &Path, to: &Path) -> Option<PathBuf> {
    path.strip_prefix(from).ok().map(|rest| {
        if rest.as_os_str().is_empty() {
            to.to_path_buf()
        } else {
            to.join(rest)
        }
    })
}

/// Renames directory `from` (in `st.dirs`) and everything under it to `to`, which must not
/// exist or be an empty directory (POSIX `rename`); at once and durably.
fn rename_dir(st: &mut State, from: &Path, to: &Path) -> io::Result<()> {
    if st.live.contains_key(to) {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", to.display()),
        ));
    }
    if to.starts_with(from) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot move {} into itself", from.display()),
        ));
    }
    if st.dirs.contains(to) {
        if !is_empty_dir(st, to) {
            return Err(io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                format!("directory not empty: {}", to.display()),
            ));
        }
        st.dirs.remove(to);
    }
    let rename_keys = |map: &mut BTreeMap<PathBuf, NodeRef>| {
        let inside: Vec<PathBuf> = map
            .keys()
            .filter(|p| p.starts_with(from))
            .cloned()
            .collect();
        for old in inside {
            if let (Some(node), Some(new)) = (map.remove(&old), moved(&old, from, to)) {
                map.insert(new, node);
            }
        }
    };
    rename_keys(&mut st.live);
    rename_keys(&mut st.durable);
    let dirs: Vec<PathBuf> = st
        .dirs
        .iter()
        .filter(|p| p.starts_with(from))
        .cloned()
        .collect();
    for old in dirs {
        st.dirs.remove(&old);
        if let Some(new) = moved(&old, from, to) {
            st.dirs.insert(new);
        }
    }
    Ok(())
}

impl FileSystem for FaultFs {
    fn create(&self, path: &Path, mode: CreateMode) -> io::Result<Box<dyn WritableFile>> {
        self.check(FsOp::Create, path)?;
        let mut st = self.state();
        check_parent(&st, path)?;
        if st.dirs.contains(path) {
            return Err(io::Error::other(format!(
                "{} is a directory",
                path.display()
            )));
        }
        let node = match (st.live.get(path), mode) {
            (Some(_), CreateMode::New) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("file exists: {}", path.display()),
                ));
            }
            (Some(n), CreateMode::Truncate) => {
                let n = Arc::clone(n);
                {
                    let mut g = lock(&n);
                    g.data.clear();
                    g.rewritten = true;
                }
                n
            }
            (None, _) => {
                let n = NodeRef::default();
                st.live.insert(path.to_path_buf(), Arc::clone(&n));
                n
            }
        };
        Ok(Box::new(FaultWritable {
            fs: self.clone(),
            path: path.to_path_buf(),
            node,
        }))
    }

    fn open_read(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        self.check(FsOp::OpenRead, path)?;
        let st = self.state();
        let node = st.live.get(path).cloned().ok_or_else(|| not_found(path))?;
        Ok(Box::new(FaultReadable {
            fs: self.clone(),
            path: path.to_path_buf(),
            node,
        }))
    }

    fn truncate(&self, path: &Path, len: u64) -> io::Result<()> {
        self.check(FsOp::Truncate, path)?;
        let st = self.state();
        let node = st.live.get(path).ok_or_else(|| not_found(path))?;
        let len = usize::try_from(len).map_err(|_| io::Error::other("length too large"))?;
        let mut n = lock(node);
        n.data.resize(len, 0);
        n.rewritten = true;
        n.sync();
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(FsOp::Rename, from)?;
        let mut st = self.state();
        check_parent(&st, to)?;
        if st.dirs.contains(from) {
            return rename_dir(&mut st, from, to);
        }
        let node = st.live.remove(from).ok_or_else(|| not_found(from))?;
        st.live.insert(to.to_path_buf(), node);
        Ok(())
    }

    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.check(FsOp::Link, to)?;
        let mut st = self.state();
        check_parent(&st, to)?;
        let node = st.live.get(from).cloned().ok_or_else(|| {
            if st.dirs.contains(from) {
                io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{} is a directory", from.display()),
                )
            } else {
                not_found(from)
            }
        })?;
        if st.live.contains_key(to) || st.dirs.contains(to) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("file exists: {}", to.display()),
            ));
        }
        st.live.insert(to.to_path_buf(), node);
        Ok(())
    }

    fn create_dir(&self, dir: &Path) -> io::Result<()> {
        self.check(FsOp::CreateDir, dir)?;
        let mut st = self.state();
        check_parent(&st, dir)?;
        if st.live.contains_key(dir) || st.dirs.contains(dir) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{} exists", dir.display()),
            ));
        }
        st.dirs.insert(dir.to_path_buf());
        Ok(())
    }

    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        self.check(FsOp::RemoveDir, dir)?;
        let mut st = self.state();
        if !st.dirs.contains(dir) {
            if st.live.contains_key(dir) {
                return Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    format!("{} is not a directory", dir.display()),
                ));
            }
            return Err(not_found(dir));
        }
        if !is_empty_dir(&st, dir) {
            return Err(io::Error::new(
                io::ErrorKind::DirectoryNotEmpty,
                format!("directory not empty: {}", dir.display()),
            ));
        }
        st.dirs.remove(dir);
        // Removed at once and durably: names of files removed from it before go too.
        st.durable.retain(|p, _| p.parent() != Some(dir));
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.check(FsOp::Remove, path)?;
        let mut st = self.state();
        st.live
            .remove(path)
            .map(|_| ())
            .ok_or_else(|| not_found(path))
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        self.check(FsOp::List, dir)?;
        let st = self.state();
        if !st.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let name = |p: &Path| p.file_name().map(OsString::from);
        let files = st
            .live
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| name(p))
            .map(|name| DirEntry {
                name,
                is_file: true,
            });
        let subdirs = st
            .dirs
            .iter()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| name(p))
            .map(|name| DirEntry {
                name,
                is_file: false,
            });
        Ok(files.chain(subdirs).collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        self.check(FsOp::CreateDir, dir)?;
        let mut st = self.state();
        for d in dir.ancestors() {
            if d.as_os_str().is_empty() {
                continue;
            }
            if st.live.contains_key(d) {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    format!("{} exists and is a file", d.display()),
                ));
            }
            st.dirs.insert(d.to_path_buf());
        }
        Ok(())
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.check(FsOp::Metadata, path)?;
        let st = self.state();
        if st.dirs.contains(path) {
            return Ok(Metadata {
                len: 0,
                is_dir: true,
            });
        }
        let node = st.live.get(path).ok_or_else(|| not_found(path))?;
        Ok(Metadata {
            len: lock(node).data.len() as u64,
            is_dir: false,
        })
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.check(FsOp::SyncDir, dir)?;
        let mut st = self.state();
        if !st.dirs.contains(dir) {
            return Err(not_found(dir));
        }
        let State { live, durable, .. } = &mut *st;
        durable.retain(|p, _| p.parent() != Some(dir));
        for (p, n) in live.iter() {
            if p.parent() == Some(dir) {
                durable.insert(p.clone(), Arc::clone(n));
            }
        }
        Ok(())
    }

    fn lock_file(&self, path: &Path) -> io::Result<Box<dyn FileLock>> {
        self.check(FsOp::Lock, path)?;
        let mut st = self.state();
        check_parent(&st, path)?;
        if st.locks.contains(path) {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("{} is locked", path.display()),
            ));
        }
        if !st.live.contains_key(path) {
            st.live.insert(path.to_path_buf(), NodeRef::default());
        }
        st.locks.insert(path.to_path_buf());
        Ok(Box::new(FaultLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        }))
    }
}

/// A file of a [`FaultFs`] open for appending.
#[derive(Debug)]
struct FaultWritable {
    fs: FaultFs,
    path: PathBuf,
    node: NodeRef,
}

impl FaultWritable {
    /// Decides the fault of a write of `data` (an append or a `write_at`, whose position
    /// `at` names for the message): the part of `data` to store, and what the call returns
    /// after storing it. A short write stores a random strict prefix and fails with
    /// `ENOSPC`; other faults store nothing (the `Err` of the outer result).
    fn decide_write<'a>(
        &self,
        data: &'a [u8],
        at: String,
    ) -> io::Result<(&'a [u8], io::Result<()>)> {
        let d = self.fs.decide(FsOp::Append, &self.path)?;
        match d.fault {
            None => Ok((data, Ok(()))),
            Some(Fault::ShortWrite) => {
                let n = if data.is_empty() {
                    0
                } else {
                    (d.random % data.len() as u64) as usize
                };
                let e = io::Error::new(
                    io::ErrorKind::StorageFull,
                    format!(
                        "short write: {n} of {} bytes written{at}, then no space left on \
                         device (injected)",
                        data.len()
                    ),
                );
                Ok((data.get(..n).unwrap_or_default(), Err(e)))
            }
            Some(f) => Err(injected_error(f, FsOp::Append)),
        }
    }
}

impl WritableFile for FaultWritable {
    fn append(&self, data: &[u8]) -> io::Result<()> {
        let (written, result) = self.decide_write(data, String::new())?;
        lock(&self.node).data.extend_from_slice(written);
        result
    }

    fn write_at(&self, data: &[u8], offset: u64) -> io::Result<()> {
        let (written, result) = self.decide_write(data, format!(" at offset {offset}"))?;
        let start = usize::try_from(offset)
            .map_err(|_| io::Error::other(format!("offset {offset} out of memory range")))?;
        let mut node = lock(&self.node);
        let end = start.saturating_add(written.len());
        if node.data.len() < end {
            node.data.resize(end, 0);
        }
        if start < node.durable.len() {
            node.rewritten = true;
        }
        if let Some(dst) = node.data.get_mut(start..end) {
            dst.copy_from_slice(written);
        }
        result
    }

    fn sync_data(&self) -> io::Result<()> {
        self.fs.check(FsOp::Sync, &self.path)?;
        lock(&self.node).sync();
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }
}

/// A file of a [`FaultFs`] open for reading.
#[derive(Debug)]
struct FaultReadable {
    fs: FaultFs,
    path: PathBuf,
    node: NodeRef,
}

impl RandomAccessFile for FaultReadable {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let d = self.fs.decide(FsOp::Read, &self.path)?;
        if let Some(f) = d.fault
            && f != Fault::CorruptRead
        {
            return Err(injected_error(f, FsOp::Read));
        }
        {
            let n = lock(&self.node);
            let src = usize::try_from(offset)
                .ok()
                .and_then(|o| Some(o..o.checked_add(buf.len())?))
                .and_then(|r| n.data.get(r))
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!(
                            "read of {} bytes at offset {offset} past the end of {} ({} bytes)",
                            buf.len(),
                            self.path.display(),
                            n.data.len()
                        ),
                    )
                })?;
            buf.copy_from_slice(src);
        }
        if d.fault == Some(Fault::CorruptRead) && !buf.is_empty() {
            let i = (d.random % buf.len() as u64) as usize;
            if let Some(b) = buf.get_mut(i) {
                *b ^= 1 << (d.random >> 61);
            }
        }
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        if self.fs.shared.dead.load(Ordering::SeqCst) {
            return Err(io::Error::other("the file system crashed (simulated)"));
        }
        Ok(lock(&self.node).data.len() as u64)
    }
}

/// A lock held on a [`FaultFs`] file.
#[derive(Debug)]
struct FaultLock {
    fs: FaultFs,
    path: PathBuf,
}

impl FileLock for FaultLock {}

impl Drop for FaultLock {
    fn drop(&mut self) {
        self.fs.state().locks.remove(&self.path);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn setup() -> (FaultFs, PathBuf) {
        let fs = FaultFs::new(7);
        let dir = PathBuf::from("/db");
        fs.create_dir_all(&dir).unwrap();
        (fs, dir)
    }

    #[test]
    fn crash_keeps_only_synced_bytes_and_synced_names() {
        let (fs, dir) = setup();
        let a = dir.join("a");
        let w = fs.create(&a, CreateMode::New).unwrap();
        w.append(b"durable").unwrap();
        w.sync_data().unwrap();
        w.append(b" lost").unwrap();
        fs.sync_dir(&dir).unwrap();
        let b = dir.join("b");
        let wb = fs.create(&b, CreateMode::New).unwrap();
        wb.append(b"synced but unnamed").unwrap();
        wb.sync_all().unwrap();
        assert_eq!(fs.read_all(&a).unwrap(), b"durable lost");

        let after = fs.crash();
        assert_eq!(after.read_all(&a).unwrap(), b"durable");
        assert_eq!(
            after.open_read(&b).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        // The crashed instance and its open files refuse everything.
        assert!(w.append(b"x").is_err());
        assert!(fs.metadata(&a).is_err());
    }

    #[test]
    fn unsynced_rename_and_remove_are_undone_by_a_crash() {
        let (fs, dir) = setup();
        let (a, b) = (dir.join("a"), dir.join("b"));
        let w = fs.create(&a, CreateMode::New).unwrap();
        w.append(b"1").unwrap();
        w.sync_all().unwrap();
        fs.sync_dir(&dir).unwrap();
        fs.rename(&a, &b).unwrap();
        let after = fs.crash();
        assert_eq!(after.file_names(&dir), vec!["a".to_string()]);
        after.remove_file(&a).unwrap();
        let again = after.crash();
        assert_eq!(again.file_names(&dir), vec!["a".to_string()]);
    }

    #[test]
    fn rules_fire_as_configured() {
        let (fs, dir) = setup();
        fs.add_rule(
            FaultRule::new(FsOp::Sync, Fault::Eio)
                .on_files_ending_with(".log")
                .after(1)
                .times(1),
        );
        let log = fs.create(&dir.join("1.log"), CreateMode::New).unwrap();
        let sst = fs.create(&dir.join("2.sst"), CreateMode::New).unwrap();
        sst.sync_data().unwrap();
        log.sync_data().unwrap();
        assert!(log.sync_data().is_err());
        log.sync_data().unwrap();
        assert_eq!(fs.injected_faults(), 1);

        fs.add_rule(FaultRule::new(FsOp::Append, Fault::ShortWrite).times(1));
        let e = sst.append(&[7u8; 100]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        let len = fs.metadata(&dir.join("2.sst")).unwrap().len;
        assert!(len < 100, "{len}");

        fs.add_rule(FaultRule::new(FsOp::Read, Fault::CorruptRead).times(1));
        let w = fs.create(&dir.join("c"), CreateMode::New).unwrap();
        w.append(&[0u8; 64]).unwrap();
        let r = fs.open_read(&dir.join("c")).unwrap();
        let mut buf = [0u8; 64];
        r.read_exact_at(&mut buf, 0).unwrap();
        assert_eq!(buf.iter().filter(|&&b| b != 0).count(), 1);
        r.read_exact_at(&mut buf, 0).unwrap();
        assert!(buf.iter().all(|&b| b == 0));
        assert_eq!(fs.file_content(&dir.join("c")).unwrap(), vec![0u8; 64]);

        fs.add_rule(FaultRule::new(FsOp::Create, Fault::NoSpace).probability(0.0));
        fs.create(&dir.join("d"), CreateMode::New).unwrap();
        fs.clear_rules();
    }

    #[test]
    fn links_share_the_file_and_directories_move_whole() {
        let (fs, dir) = setup();
        let a = dir.join("a");
        let w = fs.create(&a, CreateMode::New).unwrap();
        w.append(b"one").unwrap();
        w.sync_all().unwrap();
        let sub = dir.join("sub");
        fs.create_dir(&sub).unwrap();
        assert_eq!(
            fs.create_dir(&sub).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        assert_eq!(
            fs.create_dir(&dir.join("no/such")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        let b = sub.join("b");
        fs.hard_link(&a, &b).unwrap();
        assert_eq!(
            fs.hard_link(&a, &b).unwrap_err().kind(),
            io::ErrorKind::AlreadyExists
        );
        // One file, two names: a write through one shows through the other, and removing
        // one name keeps the other.
        w.append(b" two").unwrap();
        assert_eq!(fs.read_all(&b).unwrap(), b"one two");
        fs.remove_file(&a).unwrap();
        assert_eq!(fs.read_all(&b).unwrap(), b"one two");
        fs.sync_dir(&sub).unwrap();

        let moved_dir = dir.join("moved");
        fs.rename(&sub, &moved_dir).unwrap();
        assert_eq!(fs.file_names(&moved_dir), vec!["b".to_string()]);
        assert!(!fs.exists(&sub).unwrap());
        assert!(fs.metadata(&moved_dir).unwrap().is_dir);
        // A directory rename is durable at once; the linked file's synced bytes survive.
        let after = fs.crash();
        assert_eq!(after.read_all(&moved_dir.join("b")).unwrap(), b"one");

        // Not onto a directory that holds something; removal only when empty.
        let other = dir.join("other");
        after.create_dir(&other).unwrap();
        after
            .create(&other.join("x"), CreateMode::New)
            .unwrap()
            .sync_all()
            .unwrap();
        assert_eq!(
            after.rename(&moved_dir, &other).unwrap_err().kind(),
            io::ErrorKind::DirectoryNotEmpty
        );
        assert_eq!(
            after.remove_dir(&other).unwrap_err().kind(),
            io::ErrorKind::DirectoryNotEmpty
        );
        after.remove_file(&other.join("x")).unwrap();
        after.remove_dir(&other).unwrap();
        assert!(!after.exists(&other).unwrap());
        assert_eq!(
            after.remove_dir(&other).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn locks_exclude_until_dropped() {
        let (fs, dir) = setup();
        let l = fs.lock_file(&dir.join("LOCK")).unwrap();
        assert_eq!(
            fs.lock_file(&dir.join("LOCK")).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        drop(l);
        fs.lock_file(&dir.join("LOCK")).unwrap();
        assert_eq!(
            fs.create(&PathBuf::from("/nowhere/x"), CreateMode::New)
                .unwrap_err()
                .kind(),
            io::ErrorKind::NotFound
        );
    }
}
