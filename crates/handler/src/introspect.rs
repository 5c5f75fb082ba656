//! The engine's locks in the handler's terms, for `information_schema.RIPTIDE_LOCKS`: each
//! lock of [`riptide::Db::lock_table`] with the table and index its key belongs to (read from
//! the data dictionary), what kind of key it is, the key without its index id, and the owner
//! of the transaction (MariaDB: the connection id, from [`riptide::Db::transactions`]).
//! Also every table's indexes with their sizes on disk by level, for
//! `information_schema.RIPTIDE_TABLES` ([`HandlerEngine::table_indexes`]).

use std::collections::HashMap;
use std::ops::Bound;
use std::time::Duration;

use riptide::{LockKind, LockMode};

use crate::engine::HandlerEngine;
use crate::error::Result;
use crate::format::{IndexKind, LOCK_TAG, WRITE_LOCK_TAG};

/// What the key of a [`HandlerLock`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockTarget {
    /// A row, by its key in an index (primary key, or a secondary entry).
    Record,
    /// A value of a UNIQUE secondary index (the lock-only key that serializes its unique
    /// checks; never written).
    UniqueValue,
    /// A table's write lock (ordinary writers take it shared, a bulk load's ingest
    /// exclusive).
    TableWrite,
    /// A key range of an index (gap lock).
    Gap,
    /// An insert waiting for a gap lock.
    InsertIntention,
    /// A key the handler does not know (another column family, or an index no table has).
    Other,
}

impl LockTarget {
    /// As `information_schema.RIPTIDE_LOCKS.LOCK_TYPE` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            LockTarget::Record => "RECORD",
            LockTarget::UniqueValue => "UNIQUE_VALUE",
            LockTarget::TableWrite => "TABLE_WRITE",
            LockTarget::Gap => "GAP",
            LockTarget::InsertIntention => "INSERT_INTENTION",
            LockTarget::Other => "OTHER",
        }
    }
}

/// One lock held, or one request waiting, in handler terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandlerLock {
    /// The transaction ([`riptide::Transaction::id`]).
    pub txn: u64,
    /// Its owner ([`crate::SessionOptions::owner`]); 0 when unknown (the transaction ended
    /// between the two reads, or had no owner).
    pub owner: u64,
    /// What the key is.
    pub target: LockTarget,
    /// `S` or `X` for row locks; `None` for gap locks and insert intentions.
    pub mode: Option<LockMode>,
    /// The table's name as the caller gave it (MariaDB: `./db/table`), when known.
    pub table: Option<String>,
    /// The index's name, when known (not for a table's write lock).
    pub index: Option<String>,
    /// The key (or the range's start) without its index id or dictionary tag.
    pub start: Bound<Vec<u8>>,
    /// The key again, or the range's end.
    pub end: Bound<Vec<u8>>,
    /// How long the request has waited; `None` for a held lock.
    pub waiting: Option<Duration>,
    /// For a waiting request: the transactions it waits for.
    pub blocked_by: Vec<u64>,
}

/// Names of indexes and tables by id, read from the dictionary once per listing.
struct Names {
    /// Index id: (table name, index name).
    indexes: HashMap<u32, (String, String)>,
    /// Table id: table name.
    tables: HashMap<u32, String>,
}

impl Names {
    fn read(engine: &HandlerEngine) -> Result<Names> {
        let mut names = Names {
            indexes: HashMap::new(),
            tables: HashMap::new(),
        };
        for name in engine.table_names()? {
            let Some(def) = engine.read_def(&name)? else {
                continue;
            };
            let table = String::from_utf8_lossy(&name).into_owned();
            for ix in &def.indexes {
                names
                    .indexes
                    .insert(ix.id, (table.clone(), ix.name.clone()));
            }
            names.tables.insert(def.table_id, table);
        }
        Ok(names)
    }
}

/// The big-endian id at the start of `b` and what follows it.
fn split_id(b: &[u8]) -> Option<(u32, &[u8])> {
    let (id, rest) = b.split_first_chunk::<4>()?;
    Some((u32::from_be_bytes(*id), rest))
}

/// `bound` with its first `skip` bytes removed (when it is long enough).
fn strip(bound: &Bound<Vec<u8>>, skip: usize) -> Bound<Vec<u8>> {
    let cut = |k: &Vec<u8>| k.get(skip..).unwrap_or_default().to_vec();
    match bound {
        Bound::Included(k) => Bound::Included(cut(k)),
        Bound::Excluded(k) => Bound::Excluded(cut(k)),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// A gap's `bound` relative to the index whose 4-byte id is `prefix`: stripped of the id,
/// or unbounded when it lies outside the index (a scan to the end of an index locks up to
/// the next index's first key).
fn within_index(bound: &Bound<Vec<u8>>, prefix: &[u8]) -> Bound<Vec<u8>> {
    match bound {
        Bound::Included(k) | Bound::Excluded(k) if !k.starts_with(prefix) => Bound::Unbounded,
        _ => strip(bound, prefix.len()),
    }
}

impl HandlerEngine {
    /// The locks held and the requests waiting now (at most `limit`; the flag says whether
    /// there were more), each with its table, index and owner. See [`HandlerLock`].
    pub fn lock_table(&self, limit: usize) -> Result<(Vec<HandlerLock>, bool)> {
        let db = self.db();
        let table = db.lock_table(limit);
        let owners: HashMap<u64, u64> = db.transactions().iter().map(|t| (t.id, t.owner)).collect();
        let names = Names::read(self)?;
        let data_cf = db.default_cf().id();
        let dd_cf = self.dictionary_cf_id();
        let locks = table
            .locks
            .iter()
            .map(|l| {
                let mut out = HandlerLock {
                    txn: l.txn,
                    owner: owners.get(&l.txn).copied().unwrap_or(0),
                    target: LockTarget::Other,
                    mode: match l.kind {
                        LockKind::Row(m) => Some(m),
                        LockKind::Gap | LockKind::InsertIntention => None,
                    },
                    table: None,
                    index: None,
                    start: l.start.clone(),
                    end: l.end.clone(),
                    waiting: l.waiting,
                    blocked_by: l.blocked_by.clone(),
                };
                let key = l.key().unwrap_or_default();
                if l.cf == data_cf {
                    out.target = match l.kind {
                        LockKind::Row(_) => LockTarget::Record,
                        LockKind::Gap => LockTarget::Gap,
                        LockKind::InsertIntention => LockTarget::InsertIntention,
                    };
                    if let Some((id, _)) = split_id(key)
                        && let Some((t, i)) = names.indexes.get(&id)
                    {
                        out.table = Some(t.clone());
                        out.index = Some(i.clone());
                        let prefix = id.to_be_bytes();
                        out.start = within_index(&l.start, &prefix);
                        out.end = within_index(&l.end, &prefix);
                    }
                } else if l.cf == dd_cf {
                    let (tag, rest) = key.split_first().unwrap_or((&0, &[]));
                    match (*tag, split_id(rest)) {
                        (LOCK_TAG, Some((id, _))) => {
                            out.target = LockTarget::UniqueValue;
                            if let Some((t, i)) = names.indexes.get(&id) {
                                out.table = Some(t.clone());
                                out.index = Some(i.clone());
                            }
                            out.start = strip(&l.start, 5);
                            out.end = strip(&l.end, 5);
                        }
                        (WRITE_LOCK_TAG, Some((id, _))) => {
                            out.target = LockTarget::TableWrite;
                            out.table = names.tables.get(&id).cloned();
                            // The whole table: no key of its own.
                            out.start = Bound::Unbounded;
                            out.end = Bound::Unbounded;
                        }
                        _ => {}
                    }
                }
                out
            })
            .collect();
        Ok((locks, table.truncated))
    }
}

/// One index of one table, as `information_schema.RIPTIDE_TABLES` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableIndexInfo {
    /// The table's name as the caller created it (MariaDB: `./db/table`).
    pub table: Vec<u8>,
    /// The index's name.
    pub index: String,
    /// The index's id (the 4-byte prefix of its keys).
    pub index_id: u32,
    /// Primary key, hidden primary key or secondary index.
    pub kind: IndexKind,
    /// Whether duplicates are refused.
    pub unique: bool,
    /// Number of key parts.
    pub key_parts: u16,
    /// The table's row estimate (the same on every index of the table).
    pub rows: u64,
    /// Bytes of table files holding the index's keys, per level (`[0]` is L0).
    pub level_bytes: Vec<u64>,
}

impl HandlerEngine {
    /// Every index of every table of the dictionary, tables in name order, indexes in table
    /// order: the row estimate and the bytes on disk by level
    /// ([`crate::Table::index_bytes_by_level`], from index blocks). Opens each table (as a
    /// statement would); a table dropped meanwhile is left out. Reads the dictionary and one
    /// or two index blocks per file of each index's key range: meant for a DBA's query, not
    /// per-row work.
    pub fn table_indexes(&self) -> Result<Vec<TableIndexInfo>> {
        let mut out = Vec::new();
        for name in self.table_names()? {
            let Some(table) = self.open_table(&name)? else {
                continue;
            };
            let rows = table.row_estimate();
            for n in 0..table.index_count() {
                let def = table.index(n)?;
                out.push(TableIndexInfo {
                    table: name.clone(),
                    index: def.name.clone(),
                    index_id: def.id,
                    kind: def.kind,
                    unique: def.unique,
                    key_parts: def.key_parts,
                    rows,
                    level_bytes: table.index_bytes_by_level(n)?,
                });
            }
        }
        Ok(out)
    }
}
