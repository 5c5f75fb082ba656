//! Versions: immutable snapshots of which table files make up each column family, and the
//! [`VersionSet`] that owns the current one and the persisted [`ManifestState`].

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use riptide_common::fs::FsRef;
use riptide_common::{CfId, Error, IoResultExt, Result, ResultExt};
use riptide_sstable::{BlockCache, TableCache};

use crate::edit::{ManifestState, VersionEdit};
use crate::file_meta::{parse_numbered_file_name, table_file_name};
use crate::fsutil::remove_quietly;
use crate::manifest;
use crate::table_handle::TableHandle;

/// The files of one column family in a [`Version`].
#[derive(Debug, Clone)]
pub struct CfVersion {
    /// The column family's id.
    pub id: CfId,
    /// Files per level: L0 newest first (max seqno, then number, descending); deeper levels
    /// sorted by smallest key and non-overlapping.
    pub levels: Vec<Vec<Arc<TableHandle>>>,
}

/// An immutable view of the table files of every column family. Readers keep an
/// `Arc<Version>` for as long as they need its files.
#[derive(Debug, Clone, Default)]
pub struct Version {
    cfs: Vec<CfVersion>,
}

impl Version {
    /// The column families, ordered by id.
    pub fn column_families(&self) -> &[CfVersion] {
        &self.cfs
    }

    /// Column family `cf`, if live.
    pub fn cf(&self, cf: CfId) -> Option<&CfVersion> {
        self.cfs.iter().find(|c| c.id == cf)
    }

    /// The levels of `cf` (empty if it is not live): L0 newest first, then L1...
    pub fn levels(&self, cf: CfId) -> &[Vec<Arc<TableHandle>>] {
        self.cf(cf).map_or(&[], |c| c.levels.as_slice())
    }

    /// Number of levels of `cf` (0 if it is not live).
    pub fn num_levels(&self, cf: CfId) -> usize {
        self.cf(cf).map_or(0, |c| c.levels.len())
    }

    /// The files of `cf` at `level` (empty if either does not exist).
    pub fn files(&self, cf: CfId, level: usize) -> &[Arc<TableHandle>] {
        self.cf(cf)
            .and_then(|c| c.levels.get(level))
            .map_or(&[], |v| v.as_slice())
    }

    /// The level file `number` is in, within `cf`.
    pub fn level_of(&self, cf: CfId, number: u64) -> Option<usize> {
        self.cf(cf)?
            .levels
            .iter()
            .position(|files| files.iter().any(|f| f.number() == number))
    }

    /// Every file of every column family.
    pub fn all_files(&self) -> impl Iterator<Item = &Arc<TableHandle>> {
        self.cfs.iter().flat_map(|c| c.levels.iter().flatten())
    }

    /// The files of `cf` at `level` whose user-key range intersects `[smallest, largest]`
    /// (user keys, inclusive).
    pub fn overlapping_files(
        &self,
        cf: CfId,
        level: usize,
        smallest: &[u8],
        largest: &[u8],
    ) -> Vec<Arc<TableHandle>> {
        self.files(cf, level)
            .iter()
            .filter(|f| f.meta.overlaps_user_range(smallest, largest))
            .cloned()
            .collect()
    }
}

/// Owns the persisted [`ManifestState`] and the current [`Version`], and hands out file
/// numbers.
///
/// Not internally synchronized for changes: [`VersionSet::apply`] takes `&mut self` (the
/// engine serializes edits under its own lock). [`VersionSet::new_file_number`] takes `&self`.
pub struct VersionSet {
    fs: FsRef,
    dir: PathBuf,
    cache: Option<Arc<BlockCache>>,
    /// When set, tables are opened through it (at most its `max_open_files` stay open).
    table_cache: Option<Arc<TableCache>>,
    state: ManifestState,
    current: Arc<Version>,
    next_file_number: AtomicU64,
}

impl std::fmt::Debug for VersionSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VersionSet")
            .field("dir", &self.dir)
            .field("state", &self.state)
            .field("next_file_number", &self.next_file_number)
            .finish()
    }
}

impl VersionSet {
    /// Opens the database state in `dir`.
    ///
    /// Loads the manifest (a missing one creates a new database if `create_if_missing`, else
    /// is `NotFound`), opens every live table (a missing or damaged one is an error naming it)
    /// and deletes orphan `.sst` files the manifest does not name (left by a crash during a
    /// flush or compaction). File numbers handed out later are above every numbered file
    /// found in `dir`, so no number is ever reused for a file that may still exist.
    pub fn open(
        dir: &Path,
        cache: Option<Arc<BlockCache>>,
        create_if_missing: bool,
    ) -> Result<VersionSet> {
        Self::open_with_table_cache(dir, cache, None, create_if_missing)
    }

    /// Like [`Self::open`], but every table is opened through `table_cache` (RocksDB's
    /// `max_open_files`): live tables are checked once at open, then reopened on demand when
    /// the cache has evicted them. Tables installed later (flush and compaction outputs) go
    /// through it too.
    pub fn open_with_table_cache(
        dir: &Path,
        cache: Option<Arc<BlockCache>>,
        table_cache: Option<Arc<TableCache>>,
        create_if_missing: bool,
    ) -> Result<VersionSet> {
        Self::open_in(
            riptide_common::fs::real(),
            dir,
            cache,
            table_cache,
            create_if_missing,
        )
    }

    /// [`Self::open_with_table_cache`] on the file system `fs`: the manifest, the listing,
    /// orphan removal and every table (`table_cache` must open tables on the same `fs`, see
    /// `TableCache::with_file_system`) go through it.
    pub fn open_in(
        fs: FsRef,
        dir: &Path,
        cache: Option<Arc<BlockCache>>,
        table_cache: Option<Arc<TableCache>>,
        create_if_missing: bool,
    ) -> Result<VersionSet> {
        let state = match manifest::load(&*fs, dir)? {
            Some(s) => s,
            None if create_if_missing => {
                let s = ManifestState::new_database();
                manifest::store(&*fs, dir, &s)?;
                s
            }
            None => {
                return Err(Error::not_found(format!(
                    "no database in {}: {} is missing",
                    dir.display(),
                    manifest::manifest_path(dir).display()
                )));
            }
        };

        let mut next_number = state.next_file_number;
        let mut sst_on_disk = Vec::new();
        for entry in fs.list_dir(dir).at("list directory", dir)? {
            let Some((number, ext)) = entry.name.to_str().and_then(parse_numbered_file_name) else {
                continue;
            };
            next_number = next_number.max(number.saturating_add(1));
            if ext == "sst" {
                sst_on_disk.push((number, dir.join(&entry.name)));
            }
        }

        let mut cfs = Vec::with_capacity(state.column_families.len());
        for c in &state.column_families {
            let mut levels = Vec::with_capacity(c.levels.len());
            for (l, files) in c.levels.iter().enumerate() {
                let mut handles = Vec::with_capacity(files.len());
                for meta in files {
                    let number = meta.number;
                    let h = match &table_cache {
                        Some(tc) => TableHandle::open_cached(dir, meta.clone(), tc),
                        None => {
                            TableHandle::open_in(Arc::clone(&fs), dir, meta.clone(), cache.clone())
                        }
                    }
                    .context_with(|| {
                        format!(
                            "live table {} (column family {}, level {l})",
                            table_file_name(number),
                            c.id
                        )
                    })?;
                    handles.push(Arc::new(h));
                }
                levels.push(handles);
            }
            cfs.push(CfVersion { id: c.id, levels });
        }

        let live: HashSet<u64> = state.live_files().map(|(_, _, f)| f.number).collect();
        for (number, path) in sst_on_disk {
            if !live.contains(&number) {
                log::info!("deleting orphan table {}", path.display());
                remove_quietly(&*fs, &path);
            }
        }

        Ok(VersionSet {
            fs,
            dir: dir.to_path_buf(),
            cache,
            table_cache,
            state,
            current: Arc::new(Version { cfs }),
            next_file_number: AtomicU64::new(next_number),
        })
    }

    /// The database directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file system the database lives on.
    pub fn file_system(&self) -> &FsRef {
        &self.fs
    }

    /// The table cache tables are opened through, if any.
    pub fn table_cache(&self) -> Option<&Arc<TableCache>> {
        self.table_cache.as_ref()
    }

    /// The block cache tables are opened with.
    pub fn cache(&self) -> Option<&Arc<BlockCache>> {
        self.cache.as_ref()
    }

    /// The current version.
    pub fn current(&self) -> Arc<Version> {
        Arc::clone(&self.current)
    }

    /// The persisted state (as of the last successful apply).
    pub fn state(&self) -> &ManifestState {
        &self.state
    }

    /// Allocates a new file number (for a table or a WAL segment). It is persisted by the
    /// next [`Self::apply`]; if the process dies first, [`Self::open`] still skips it when a
    /// file with that number exists.
    pub fn new_file_number(&self) -> u64 {
        self.next_file_number.fetch_add(1, Ordering::Relaxed)
    }

    /// Applies `edits` atomically: the resulting state is persisted first, then installed as
    /// the current version. On error nothing changes in memory. Files the edits add are
    /// opened from disk; see [`Self::apply_with_tables`] to pass already open handles.
    pub fn apply(&mut self, edits: Vec<VersionEdit>) -> Result<Arc<Version>> {
        self.apply_with_tables(edits, &[])
    }

    /// Like [`Self::apply`], reusing `tables` (for example a flush's or compaction's output)
    /// for the files the edits add instead of reopening them. A table's `meta` must equal the
    /// edit's.
    ///
    /// Files the edits remove are marked obsolete and deleted once no version or iterator
    /// uses them. If persisting fails in the final directory fsync, the new manifest may or
    /// may not be the one on disk: the caller should stop writing and reopen.
    pub fn apply_with_tables(
        &mut self,
        edits: Vec<VersionEdit>,
        tables: &[Arc<TableHandle>],
    ) -> Result<Arc<Version>> {
        let mut new_state = self.state.apply_edits(&edits)?;
        new_state.next_file_number = new_state
            .next_file_number
            .max(self.next_file_number.load(Ordering::Relaxed));

        let mut known: HashMap<u64, &Arc<TableHandle>> =
            self.current.all_files().map(|h| (h.number(), h)).collect();
        for t in tables {
            known.entry(t.number()).or_insert(t);
        }
        let mut cfs = Vec::with_capacity(new_state.column_families.len());
        for c in &new_state.column_families {
            let mut levels = Vec::with_capacity(c.levels.len());
            for files in &c.levels {
                let mut handles = Vec::with_capacity(files.len());
                for meta in files {
                    let h = match known.get(&meta.number) {
                        // A new output opened for itself: from now on reach it through the
                        // table cache, so it counts against `max_open_files` (its own open
                        // file closes when the caller drops the output).
                        Some(h)
                            if h.meta == *meta
                                && !h.is_cached()
                                && let Some(tc) = &self.table_cache =>
                        {
                            Arc::new(
                                TableHandle::open_cached(&self.dir, meta.clone(), tc)
                                    .context_with(|| {
                                        format!("new table {}", table_file_name(meta.number))
                                    })?,
                            )
                        }
                        Some(h) if h.meta == *meta => Arc::clone(h),
                        Some(_) => {
                            return Err(Error::invalid_argument(format!(
                                "table {} was passed with a different description than \
                                 its version edit",
                                table_file_name(meta.number)
                            )));
                        }
                        None => Arc::new(
                            match &self.table_cache {
                                Some(tc) => TableHandle::open_cached(&self.dir, meta.clone(), tc),
                                None => TableHandle::open_in(
                                    Arc::clone(&self.fs),
                                    &self.dir,
                                    meta.clone(),
                                    self.cache.clone(),
                                ),
                            }
                            .context_with(|| {
                                format!("new table {}", table_file_name(meta.number))
                            })?,
                        ),
                    };
                    handles.push(h);
                }
                levels.push(handles);
            }
            cfs.push(CfVersion { id: c.id, levels });
        }
        let version = Arc::new(Version { cfs });

        manifest::store(&*self.fs, &self.dir, &new_state)?;

        let still_live: HashSet<u64> = version.all_files().map(|h| h.number()).collect();
        for h in self.current.all_files() {
            if !still_live.contains(&h.number()) {
                h.mark_obsolete();
            }
        }
        self.state = new_state;
        self.current = Arc::clone(&version);
        Ok(version)
    }
}
