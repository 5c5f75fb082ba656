//! The persisted state of the database ([`ManifestState`]) and the changes to it
//! ([`VersionEdit`]).
//!
//! Applying edits is pure in-memory logic; [`crate::manifest`] persists the result and
//! [`crate::version`] turns it into live [`crate::version::Version`]s.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use riptide_common::key::compare_internal_keys;
use riptide_common::{CfId, DEFAULT_CF_ID, Error, Result, SeqNo};

use crate::file_meta::FileMeta;

/// Number of levels a new column family starts with (L0 to L6). Adding a file to a deeper
/// level extends the list.
pub const DEFAULT_NUM_LEVELS: usize = 7;

/// The deepest level a file may be added to, plus one.
pub const MAX_LEVELS: usize = 64;

/// Name of the default column family, which every database has and which cannot be dropped.
pub const DEFAULT_CF_NAME: &str = "default";

/// The persisted state of one column family.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CfState {
    /// The column family's id.
    pub id: CfId,
    /// The column family's name, unique among live column families.
    pub name: String,
    /// WAL segments numbered below this hold nothing unflushed for this column family.
    pub log_number: u64,
    /// The files of each level. L0 is ordered newest first (max seqno, then number,
    /// descending); deeper levels by smallest key, and their files never overlap.
    pub levels: Vec<Vec<FileMeta>>,
    /// Round-robin compaction cursor per level: the largest user key of the last file a
    /// size-triggered compaction picked there (the next pick starts after it), so a restart
    /// does not compact the start of every level again (RocksDB's `compact_cursor`).
    pub compact_cursors: BTreeMap<usize, Vec<u8>>,
}

impl CfState {
    /// An empty column family with [`DEFAULT_NUM_LEVELS`] levels.
    pub fn new(id: CfId, name: impl Into<String>) -> Self {
        CfState {
            id,
            name: name.into(),
            log_number: 0,
            levels: vec![Vec::new(); DEFAULT_NUM_LEVELS],
            compact_cursors: BTreeMap::new(),
        }
    }

    /// Iterates over `(level, file)` for every file of this column family.
    pub fn files(&self) -> impl Iterator<Item = (usize, &FileMeta)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(l, files)| files.iter().map(move |f| (l, f)))
    }
}

/// The whole persisted state of a database: what the MANIFEST file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestState {
    /// The next file number to hand out (tables and WAL segments share the numbering).
    pub next_file_number: u64,
    /// The largest sequence number that may appear in any file.
    pub last_seqno: SeqNo,
    /// The next column family id to hand out; ids are never reused.
    pub next_cf_id: CfId,
    /// The live column families, ordered by id.
    pub column_families: Vec<CfState>,
}

/// One change to a [`ManifestState`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionEdit {
    /// Adds a table file to a level of a column family.
    AddFile {
        /// The column family.
        cf: CfId,
        /// The level (0 = L0).
        level: usize,
        /// The file.
        meta: FileMeta,
    },
    /// Removes a table file from a level of a column family.
    DeleteFile {
        /// The column family.
        cf: CfId,
        /// The level the file is in.
        level: usize,
        /// The file's number.
        number: u64,
    },
    /// Sets the round-robin compaction cursor of a level (see [`CfState::compact_cursors`]).
    SetCompactCursor {
        /// The column family.
        cf: CfId,
        /// The level.
        level: usize,
        /// The largest user key of the last file picked there.
        key: Vec<u8>,
    },
    /// Sets a column family's log number (see [`CfState::log_number`]).
    SetLogNumber {
        /// The column family.
        cf: CfId,
        /// The new log number; it never decreases.
        log_number: u64,
    },
    /// Raises the next file number (it never decreases).
    SetNextFileNumber(u64),
    /// Raises the last sequence number (it never decreases).
    SetLastSeqno(SeqNo),
    /// Creates an empty column family.
    AddCf {
        /// Its id: must never have been used before.
        id: CfId,
        /// Its name: must not be in use.
        name: String,
    },
    /// Drops a column family and all its files.
    DropCf {
        /// Its id.
        id: CfId,
    },
}

impl Default for ManifestState {
    fn default() -> Self {
        Self::new_database()
    }
}

impl ManifestState {
    /// The state of a brand-new database: only the default column family, file number 1.
    pub fn new_database() -> Self {
        ManifestState {
            next_file_number: 1,
            last_seqno: 0,
            next_cf_id: DEFAULT_CF_ID + 1,
            column_families: vec![CfState::new(DEFAULT_CF_ID, DEFAULT_CF_NAME)],
        }
    }

    /// The column family `id`, if live.
    pub fn cf(&self, id: CfId) -> Option<&CfState> {
        self.column_families.iter().find(|c| c.id == id)
    }

    /// The live column family called `name`.
    pub fn cf_by_name(&self, name: &str) -> Option<&CfState> {
        self.column_families.iter().find(|c| c.name == name)
    }

    fn cf_mut(&mut self, id: CfId) -> Result<&mut CfState> {
        self.column_families
            .iter_mut()
            .find(|c| c.id == id)
            .ok_or_else(|| Error::invalid_argument(format!("no column family with id {id}")))
    }

    /// Iterates over `(cf, level, file)` for every live file.
    pub fn live_files(&self) -> impl Iterator<Item = (CfId, usize, &FileMeta)> {
        self.column_families
            .iter()
            .flat_map(|c| c.files().map(move |(l, f)| (c.id, l, f)))
    }

    /// The smallest log number over all column families: WAL segments below it can be
    /// deleted. `None` if there are no column families.
    pub fn min_log_number(&self) -> Option<u64> {
        self.column_families.iter().map(|c| c.log_number).min()
    }

    /// The state after applying `edits` in order, or `InvalidArgument` if one of them does not
    /// fit (unknown column family or file, duplicate file number, overlapping files in L1+...).
    /// `self` is not changed.
    pub fn apply_edits(&self, edits: &[VersionEdit]) -> Result<ManifestState> {
        let mut next = self.clone();
        for (i, e) in edits.iter().enumerate() {
            next.apply_one(e)
                .map_err(|err| err.with_context(format_args!("version edit #{i}")))?;
        }
        next.sort_levels();
        next.validate().map_err(Error::invalid_argument)?;
        Ok(next)
    }

    fn apply_one(&mut self, edit: &VersionEdit) -> Result<()> {
        match edit {
            VersionEdit::AddFile { cf, level, meta } => {
                if *level >= MAX_LEVELS {
                    return Err(Error::invalid_argument(format!(
                        "level {level} is beyond the deepest level {}",
                        MAX_LEVELS - 1
                    )));
                }
                if let Some((c, l, _)) = self.live_files().find(|(_, _, f)| f.number == meta.number)
                {
                    return Err(Error::invalid_argument(format!(
                        "file {} is already live in column family {c} level {l}",
                        meta.number
                    )));
                }
                self.next_file_number = self.next_file_number.max(meta.number.saturating_add(1));
                self.last_seqno = self.last_seqno.max(meta.max_seqno);
                let c = self.cf_mut(*cf)?;
                if c.levels.len() <= *level {
                    c.levels.resize(level + 1, Vec::new());
                }
                if let Some(files) = c.levels.get_mut(*level) {
                    files.push(meta.clone());
                }
            }
            VersionEdit::DeleteFile { cf, level, number } => {
                let c = self.cf_mut(*cf)?;
                let files = c.levels.get_mut(*level);
                let pos = files
                    .as_ref()
                    .and_then(|fs| fs.iter().position(|f| f.number == *number));
                match (files, pos) {
                    (Some(files), Some(p)) => {
                        files.remove(p);
                    }
                    _ => {
                        return Err(Error::invalid_argument(format!(
                            "file {number} is not in column family {cf} level {level}"
                        )));
                    }
                }
            }
            VersionEdit::SetLogNumber { cf, log_number } => {
                let c = self.cf_mut(*cf)?;
                c.log_number = c.log_number.max(*log_number);
            }
            VersionEdit::SetCompactCursor { cf, level, key } => {
                if *level >= MAX_LEVELS {
                    return Err(Error::invalid_argument(format!(
                        "compaction cursor for level {level}, beyond the last level {}",
                        MAX_LEVELS - 1
                    )));
                }
                let c = self.cf_mut(*cf)?;
                c.compact_cursors.insert(*level, key.clone());
            }
            VersionEdit::SetNextFileNumber(n) => {
                self.next_file_number = self.next_file_number.max(*n);
            }
            VersionEdit::SetLastSeqno(s) => {
                self.last_seqno = self.last_seqno.max(*s);
            }
            VersionEdit::AddCf { id, name } => {
                if *id < self.next_cf_id {
                    return Err(Error::invalid_argument(format!(
                        "column family id {id} is already used (next free id is {})",
                        self.next_cf_id
                    )));
                }
                if name.is_empty() {
                    return Err(Error::invalid_argument("column family name is empty"));
                }
                if self.cf_by_name(name).is_some() {
                    return Err(Error::invalid_argument(format!(
                        "column family name {name:?} is in use"
                    )));
                }
                self.next_cf_id = id.saturating_add(1);
                self.column_families.push(CfState::new(*id, name.clone()));
                self.column_families.sort_by_key(|c| c.id);
            }
            VersionEdit::DropCf { id } => {
                if *id == DEFAULT_CF_ID {
                    return Err(Error::invalid_argument(
                        "the default column family cannot be dropped",
                    ));
                }
                let before = self.column_families.len();
                self.column_families.retain(|c| c.id != *id);
                if self.column_families.len() == before {
                    return Err(Error::invalid_argument(format!(
                        "no column family with id {id}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Puts every level in its canonical order (see [`CfState::levels`]).
    pub(crate) fn sort_levels(&mut self) {
        for c in &mut self.column_families {
            for (l, files) in c.levels.iter_mut().enumerate() {
                if l == 0 {
                    sort_l0(files);
                } else {
                    files.sort_by(|a, b| {
                        compare_internal_keys(&a.smallest, &b.smallest)
                            .then(a.number.cmp(&b.number))
                    });
                }
            }
        }
        self.column_families.sort_by_key(|c| c.id);
    }

    /// Checks the invariants of a state; the message says which one fails.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let mut ids = HashSet::new();
        let mut names = HashSet::new();
        let mut numbers = HashSet::new();
        for c in &self.column_families {
            if !ids.insert(c.id) {
                return Err(format!("column family id {} appears twice", c.id));
            }
            if !names.insert(c.name.as_str()) {
                return Err(format!("column family name {:?} appears twice", c.name));
            }
            if c.id >= self.next_cf_id {
                return Err(format!(
                    "column family id {} is not below the next id {}",
                    c.id, self.next_cf_id
                ));
            }
            if c.levels.len() > MAX_LEVELS {
                return Err(format!(
                    "column family {} has {} levels, more than {MAX_LEVELS}",
                    c.id,
                    c.levels.len()
                ));
            }
            for (l, f) in c.files() {
                if !numbers.insert(f.number) {
                    return Err(format!("file {} appears twice", f.number));
                }
                if f.number >= self.next_file_number {
                    return Err(format!(
                        "file {} is not below the next file number {}",
                        f.number, self.next_file_number
                    ));
                }
                if f.max_seqno > self.last_seqno || f.min_seqno > f.max_seqno {
                    return Err(format!(
                        "file {} has seqnos {}..={} but the last seqno is {}",
                        f.number, f.min_seqno, f.max_seqno, self.last_seqno
                    ));
                }
                if compare_internal_keys(&f.smallest, &f.largest) == Ordering::Greater {
                    return Err(format!(
                        "file {} in level {l} has its smallest key above its largest",
                        f.number
                    ));
                }
            }
            for (l, files) in c.levels.iter().enumerate().skip(1) {
                for pair in files.windows(2) {
                    if let [a, b] = pair
                        && !a.ends_before(b.smallest_user_key())
                    {
                        return Err(format!(
                            "files {} and {} overlap in column family {} level {l}",
                            a.number, b.number, c.id
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Sorts L0 files newest first: by max seqno, then number, descending.
pub fn sort_l0(files: &mut [FileMeta]) {
    files.sort_by(|a, b| b.max_seqno.cmp(&a.max_seqno).then(b.number.cmp(&a.number)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use riptide_common::ValueKind;
    use riptide_common::key::internal_key;

    fn meta(number: u64, a: &[u8], b: &[u8], seq: SeqNo) -> FileMeta {
        FileMeta {
            number,
            file_size: 100,
            smallest: internal_key(a, seq, ValueKind::Put),
            largest: internal_key(b, seq, ValueKind::Put),
            min_seqno: seq,
            max_seqno: seq,
            entries: 2,
            tombstones: 0,
        }
    }

    #[test]
    fn add_delete_and_bumps() {
        let s = ManifestState::new_database();
        let s = s
            .apply_edits(&[
                VersionEdit::AddFile {
                    cf: 0,
                    level: 0,
                    meta: meta(4, b"a", b"c", 10),
                },
                VersionEdit::AddFile {
                    cf: 0,
                    level: 0,
                    meta: meta(5, b"b", b"d", 20),
                },
            ])
            .unwrap();
        assert_eq!(s.next_file_number, 6);
        assert_eq!(s.last_seqno, 20);
        let l0: Vec<u64> = s.column_families[0].levels[0]
            .iter()
            .map(|f| f.number)
            .collect();
        assert_eq!(l0, vec![5, 4]);
        let err = s
            .apply_edits(&[VersionEdit::DeleteFile {
                cf: 0,
                level: 1,
                number: 5,
            }])
            .unwrap_err();
        assert!(err.to_string().contains("file 5 is not in"), "{err}");
        let err = s
            .apply_edits(&[
                VersionEdit::AddFile {
                    cf: 0,
                    level: 1,
                    meta: meta(7, b"a", b"c", 1),
                },
                VersionEdit::AddFile {
                    cf: 0,
                    level: 1,
                    meta: meta(8, b"c", b"e", 1),
                },
            ])
            .unwrap_err();
        assert!(err.to_string().contains("overlap"), "{err}");
        // A trivial move: same number, new level.
        let s = s
            .apply_edits(&[
                VersionEdit::DeleteFile {
                    cf: 0,
                    level: 0,
                    number: 4,
                },
                VersionEdit::AddFile {
                    cf: 0,
                    level: 3,
                    meta: meta(4, b"a", b"c", 10),
                },
            ])
            .unwrap();
        assert_eq!(s.column_families[0].levels[3].len(), 1);
    }

    #[test]
    fn column_families() {
        let s = ManifestState::new_database();
        let s = s
            .apply_edits(&[VersionEdit::AddCf {
                id: 1,
                name: "users".into(),
            }])
            .unwrap();
        assert_eq!(s.next_cf_id, 2);
        assert!(
            s.apply_edits(&[VersionEdit::AddCf {
                id: 2,
                name: "users".into()
            }])
            .is_err()
        );
        assert!(
            s.apply_edits(&[VersionEdit::AddCf {
                id: 0,
                name: "x".into()
            }])
            .is_err()
        );
        assert!(s.apply_edits(&[VersionEdit::DropCf { id: 0 }]).is_err());
        let s = s.apply_edits(&[VersionEdit::DropCf { id: 1 }]).unwrap();
        assert!(s.cf(1).is_none());
        // Ids are never reused.
        assert!(
            s.apply_edits(&[VersionEdit::AddCf {
                id: 1,
                name: "again".into()
            }])
            .is_err()
        );
    }
}
