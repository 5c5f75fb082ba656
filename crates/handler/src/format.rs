//! Byte layouts: dictionary keys and values, index key spaces, secondary index entries.
//! Every layout is documented byte by byte in `FORMAT.md`; keep the two in step.

use riptide::Error;

/// Name of the column family that holds the data dictionary.
pub const DD_CF_NAME: &str = "__riptide_dd";
/// Version of the dictionary format (the value of the `V` key, and the first byte of every
/// dictionary value).
pub const FORMAT_VERSION: u8 = 1;
/// Magic bytes after the version in the `V` key's value.
pub(crate) const MAGIC: &[u8; 4] = b"RTDD";

/// Key of the format record.
pub(crate) const VERSION_KEY: &[u8] = b"V";
/// Key of the next unused id (index ids and table ids share one sequence).
pub(crate) const NEXT_ID_KEY: &[u8] = b"N";
/// First id handed out (0 is never used).
pub(crate) const FIRST_ID: u32 = 1;

const TABLE_TAG: u8 = b'T';
const TEMPORARY_TAG: u8 = b'P';
const COUNTERS_TAG: u8 = b'C';
const BUILD_TAG: u8 = b'B';
const DEFINITION_VERSION_TAG: u8 = b'D';
pub(crate) const LOCK_TAG: u8 = b'L';
pub(crate) const WRITE_LOCK_TAG: u8 = b'W';
/// Legacy "taint record" tag: no longer written, migrated away at open (see FORMAT.md).
const LEGACY_TAINT_TAG: u8 = b'X';

/// Largest primary key a secondary index entry can carry (its length is stored in 2 bytes).
pub const MAX_PK_LEN: usize = u16::MAX as usize;

/// What an index is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    /// The table's primary key (always unique): key = id + pk, value = row.
    Primary,
    /// The hidden 8-byte row id of a table without a primary key: key = id + row id, value =
    /// row.
    HiddenPk,
    /// A secondary index: key = id + secondary key + pk + pk length (2 bytes BE), empty value.
    Secondary,
}

impl IndexKind {
    fn code(self) -> u8 {
        match self {
            IndexKind::Primary => 1,
            IndexKind::HiddenPk => 2,
            IndexKind::Secondary => 3,
        }
    }

    fn from_code(c: u8) -> Option<IndexKind> {
        match c {
            1 => Some(IndexKind::Primary),
            2 => Some(IndexKind::HiddenPk),
            3 => Some(IndexKind::Secondary),
            _ => None,
        }
    }
}

/// An index as the caller describes it at CREATE (the id is allocated by the dictionary).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// Primary, hidden primary key or secondary.
    pub kind: IndexKind,
    /// Unique (ignored for the primary key, which always is; a hidden pk never conflicts).
    pub unique: bool,
    /// Number of key parts (informational: the handler treats keys as bytes).
    pub key_parts: u16,
    /// The index's name, for error messages.
    pub name: String,
}

/// An index as the dictionary stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    /// The 4-byte id that prefixes every key of the index; never reused.
    pub id: u32,
    /// Primary, hidden primary key or secondary.
    pub kind: IndexKind,
    /// Whether duplicates are refused (always true for [`IndexKind::Primary`]).
    pub unique: bool,
    /// Number of key parts.
    pub key_parts: u16,
    /// The index's name.
    pub name: String,
}

/// Largest caller key format a table definition can record (7 bits).
pub const MAX_KEY_FORMAT: u8 = 0x7f;

/// A table as the dictionary stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableDef {
    /// The table's id (from the same sequence as index ids; keys its counters).
    pub table_id: u32,
    /// The version of the caller's key encoding the table was created with (see
    /// [`crate::HandlerEngine::set_key_format`]); 0 for tables created before it was
    /// recorded. The handler treats keys as bytes: the number is kept for the caller, so
    /// that a table keeps the encoding its keys were written in.
    pub key_format: u8,
    /// Index 0 is the primary key or the hidden primary key; the rest are secondary, in the
    /// caller's order.
    pub indexes: Vec<IndexDef>,
    /// Bytes the caller keeps with the table (the MariaDB plugin: the history of its row
    /// layout after instant column changes); empty for none. The handler never reads them.
    pub caller_data: Vec<u8>,
}

/// 4 bytes big-endian.
pub(crate) fn be32(v: u32) -> [u8; 4] {
    v.to_be_bytes()
}

/// Reads a big-endian u32 at `at`.
fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes(s.try_into().ok()?))
}

/// The index id an entry's key starts with (every key of the data column family does).
pub(crate) fn entry_index_id(entry: &[u8]) -> Option<u32> {
    read_u32(entry, 0)
}

/// The previous key of a unique index while its entries pass in key order (an index build's
/// or a bulk load's merge): two equal keys in a row are a duplicate. One buffer for the
/// whole walk.
#[derive(Debug, Default)]
pub(crate) struct KeyRepeat {
    previous: Option<Vec<u8>>,
}

impl KeyRepeat {
    /// True when `key` equals the key seen last; otherwise remembers it.
    pub(crate) fn repeats(&mut self, key: &[u8]) -> bool {
        match &mut self.previous {
            Some(p) if p.as_slice() == key => true,
            Some(p) => {
                p.clear();
                p.extend_from_slice(key);
                false
            }
            None => {
                self.previous = Some(key.to_vec());
                false
            }
        }
    }

    /// Forgets the key seen last (a new index begins, or a key with a NULL part).
    pub(crate) fn reset(&mut self) {
        self.previous = None;
    }
}

/// Reads a big-endian u16 at `at`.
fn read_u16(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_be_bytes(s.try_into().ok()?))
}

/// Reads a big-endian u64 at `at`.
fn read_u64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    Some(u64::from_be_bytes(s.try_into().ok()?))
}

fn tagged(tag: u8, rest: &[&[u8]]) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + rest.iter().map(|r| r.len()).sum::<usize>());
    k.push(tag);
    for r in rest {
        k.extend_from_slice(r);
    }
    k
}

/// `T` + table name: the table's definition.
pub(crate) fn table_key(name: &[u8]) -> Vec<u8> {
    tagged(TABLE_TAG, &[name])
}

/// `P` + table name: marks a temporary table (`CREATE TEMPORARY TABLE`), dropped when the
/// handler engine next opens the database.
pub(crate) fn temporary_key(name: &[u8]) -> Vec<u8> {
    tagged(TEMPORARY_TAG, &[name])
}

/// `B` + index id: an index an in-place `ALTER TABLE` is building (value: the table's
/// name); its entries are range-deleted at the next open unless the build committed.
pub(crate) fn build_key(index_id: u32) -> Vec<u8> {
    tagged(BUILD_TAG, &[&be32(index_id)])
}

/// The prefix of every [`build_key`].
pub(crate) fn build_prefix() -> Vec<u8> {
    vec![BUILD_TAG]
}

/// `D` + table name: the caller's version of the table's definition, recorded by the
/// in-place index change that last committed (MariaDB: the `.frm`'s `tabledef_version`).
pub(crate) fn definition_version_key(name: &[u8]) -> Vec<u8> {
    tagged(DEFINITION_VERSION_TAG, &[name])
}

/// `C` + table id: the table's counters.
pub(crate) fn counters_key(table_id: u32) -> Vec<u8> {
    tagged(COUNTERS_TAG, &[&be32(table_id)])
}

/// `L` + index id + secondary key: the lock-only key of a unique value (never written).
pub(crate) fn lock_key(index_id: u32, key: &[u8]) -> Vec<u8> {
    tagged(LOCK_TAG, &[&be32(index_id), key])
}

/// `W` + table id: the lock-only key of a table's *write lock* (never written). Ordinary
/// inserts take it shared, a bulk load's ingest exclusive (see [`crate::bulk`]).
pub(crate) fn write_lock_key(table_id: u32) -> Vec<u8> {
    tagged(WRITE_LOCK_TAG, &[&be32(table_id)])
}

/// The prefix (`X`) of the legacy taint records, which older builds wrote for secondary
/// entries put twice without a delete in between. No longer written; `HandlerEngine::open`
/// migrates any it finds (see FORMAT.md).
pub(crate) fn legacy_taint_prefix() -> Vec<u8> {
    vec![LEGACY_TAINT_TAG]
}

/// The secondary entry key inside a legacy taint key.
pub(crate) fn legacy_taint_entry(key: &[u8]) -> Option<&[u8]> {
    match key.split_first() {
        Some((&LEGACY_TAINT_TAG, rest)) => Some(rest),
        _ => None,
    }
}

/// The smallest key greater than every key that starts with `p`; `None` if there is none
/// (`p` is empty or all 0xff).
pub fn prefix_successor(p: &[u8]) -> Option<Vec<u8>> {
    let mut v = p.to_vec();
    while let Some(last) = v.pop() {
        if last != 0xff {
            v.push(last.wrapping_add(1));
            return Some(v);
        }
    }
    None
}

/// The key range `[lo, hi)` of every entry of index `index_id`: its 4-byte prefix and that
/// prefix's successor (past every 4-byte prefix for the last id).
pub(crate) fn index_key_range(index_id: u32) -> (Vec<u8>, Vec<u8>) {
    let lo = be32(index_id).to_vec();
    let hi = prefix_successor(&lo).unwrap_or_else(|| vec![0xff; 5]);
    (lo, hi)
}

/// Primary (or hidden pk) key: index id + pk.
pub(crate) fn primary_key(index_id: u32, pk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + pk.len());
    k.extend_from_slice(&be32(index_id));
    k.extend_from_slice(pk);
    k
}

/// Secondary entry key: index id + secondary key + pk + pk length (2 bytes BE).
pub(crate) fn secondary_entry(index_id: u32, key: &[u8], pk: &[u8]) -> Result<Vec<u8>, Error> {
    let pk_len = u16::try_from(pk.len()).map_err(|_| {
        Error::invalid_argument(format!(
            "primary key of {} bytes is longer than {MAX_PK_LEN}",
            pk.len()
        ))
    })?;
    let mut k = Vec::with_capacity(4 + key.len() + pk.len() + 2);
    k.extend_from_slice(&be32(index_id));
    k.extend_from_slice(key);
    k.extend_from_slice(pk);
    k.extend_from_slice(&pk_len.to_be_bytes());
    Ok(k)
}

/// Splits a secondary entry key (index id included) into (secondary key, pk); `None` if it is
/// too short for its stored pk length.
pub fn decode_secondary_entry(entry: &[u8]) -> Option<(&[u8], &[u8])> {
    let n = entry.len();
    let pk_len = usize::from(read_u16(entry, n.checked_sub(2)?)?);
    let pk_start = n.checked_sub(2)?.checked_sub(pk_len)?;
    if pk_start < 4 {
        return None;
    }
    Some((entry.get(4..pk_start)?, entry.get(pk_start..n - 2)?))
}

/// The value of the `V` key.
pub(crate) fn version_value() -> Vec<u8> {
    let mut v = vec![FORMAT_VERSION];
    v.extend_from_slice(MAGIC);
    v
}

/// Checks the value of the `V` key.
pub(crate) fn check_version(v: &[u8]) -> Result<(), Error> {
    match v.split_first() {
        Some((&FORMAT_VERSION, rest)) if rest == MAGIC => Ok(()),
        Some((ver, rest)) if rest == MAGIC => Err(Error::not_supported(format!(
            "data dictionary format version {ver}; this build reads version {FORMAT_VERSION}"
        ))),
        _ => Err(Error::corruption(format!(
            "data dictionary version record {v:02x?} is not a Riptide dictionary"
        ))),
    }
}

/// Encodes a u32 id value (the `N` key).
pub(crate) fn encode_next_id(id: u32) -> [u8; 4] {
    be32(id)
}

/// Decodes the `N` key's value.
pub(crate) fn decode_next_id(v: &[u8]) -> Result<u32, Error> {
    match (v.len(), read_u32(v, 0)) {
        (4, Some(id)) if id >= FIRST_ID => Ok(id),
        _ => Err(Error::corruption(format!(
            "data dictionary next-id record {v:02x?} is malformed"
        ))),
    }
}

/// Encodes a table definition (the `T` key's value).
pub(crate) fn encode_table(def: &TableDef) -> Result<Vec<u8>, Error> {
    let n = u16::try_from(def.indexes.len())
        .map_err(|_| Error::invalid_argument("more than 65535 indexes"))?;
    let mut v = vec![FORMAT_VERSION];
    v.extend_from_slice(&be32(def.table_id));
    v.extend_from_slice(&n.to_be_bytes());
    if def.key_format > MAX_KEY_FORMAT {
        return Err(Error::invalid_argument(format!(
            "key format {} is above {MAX_KEY_FORMAT}",
            def.key_format
        )));
    }
    for (i, ix) in def.indexes.iter().enumerate() {
        let name_len = u16::try_from(ix.name.len())
            .map_err(|_| Error::invalid_argument("index name longer than 65535 bytes"))?;
        v.extend_from_slice(&be32(ix.id));
        v.push(ix.kind.code());
        // Bit 0: unique; bits 1..7 of index 0: the table's key format.
        let format = if i == 0 { def.key_format << 1 } else { 0 };
        v.push(u8::from(ix.unique) | format);
        v.extend_from_slice(&ix.key_parts.to_be_bytes());
        v.extend_from_slice(&name_len.to_be_bytes());
        v.extend_from_slice(ix.name.as_bytes());
    }
    if !def.caller_data.is_empty() {
        let len = u32::try_from(def.caller_data.len())
            .map_err(|_| Error::invalid_argument("caller data longer than 4 GiB"))?;
        v.extend_from_slice(&be32(len));
        v.extend_from_slice(&def.caller_data);
    }
    Ok(v)
}

/// Decodes a table definition; `what` names it in errors.
pub(crate) fn decode_table(v: &[u8], what: &str) -> Result<TableDef, Error> {
    let bad = |why: &str| Error::corruption(format!("data dictionary entry of {what}: {why}"));
    match v.first() {
        Some(&FORMAT_VERSION) => {}
        Some(other) => {
            return Err(Error::not_supported(format!(
                "data dictionary entry of {what} has format version {other}; this build \
                 reads version {FORMAT_VERSION}"
            )));
        }
        None => return Err(bad("empty")),
    }
    let table_id = read_u32(v, 1).ok_or_else(|| bad("truncated table id"))?;
    let n = read_u16(v, 5).ok_or_else(|| bad("truncated index count"))?;
    let mut at = 7usize;
    let mut key_format = 0;
    let mut indexes = Vec::with_capacity(usize::from(n));
    for i in 0..n {
        let id = read_u32(v, at).ok_or_else(|| bad("truncated index id"))?;
        let kind = v
            .get(at + 4)
            .and_then(|c| IndexKind::from_code(*c))
            .ok_or_else(|| bad("bad index kind"))?;
        let flags = *v.get(at + 5).ok_or_else(|| bad("truncated index flags"))?;
        let key_parts = read_u16(v, at + 6).ok_or_else(|| bad("truncated key parts"))?;
        let name_len = usize::from(read_u16(v, at + 8).ok_or_else(|| bad("truncated name"))?);
        let name = v
            .get(at + 10..at + 10 + name_len)
            .ok_or_else(|| bad("truncated name"))?;
        let name = String::from_utf8_lossy(name).into_owned();
        at += 10 + name_len;
        let want_primary = i == 0;
        if want_primary {
            key_format = flags >> 1;
        }
        if want_primary == (kind == IndexKind::Secondary)
            || id < FIRST_ID
            || (!want_primary && flags > 1)
        {
            return Err(bad(&format!("index #{i} is inconsistent")));
        }
        indexes.push(IndexDef {
            id,
            kind,
            unique: flags & 1 == 1,
            key_parts,
            name,
        });
    }
    let mut caller_data = Vec::new();
    if at < v.len() {
        let len = read_u32(v, at).ok_or_else(|| bad("truncated caller data length"))?;
        let start = at + 4;
        let end = usize::try_from(len)
            .ok()
            .and_then(|len| start.checked_add(len))
            .ok_or_else(|| bad("caller data length overflows"))?;
        caller_data = v
            .get(start..end)
            .ok_or_else(|| bad("truncated caller data"))?
            .to_vec();
        if caller_data.is_empty() {
            return Err(bad("empty caller data is never written"));
        }
        at = end;
    }
    if at != v.len() || indexes.is_empty() {
        return Err(bad("wrong length"));
    }
    Ok(TableDef {
        table_id,
        key_format,
        indexes,
        caller_data,
    })
}

/// The persistent counters of a table (the `C` key's value).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct StoredCounters {
    /// Every auto-increment value below this may have been handed out.
    pub autoinc_ceiling: u64,
    /// Every hidden row id below this may have been handed out.
    pub rowid_ceiling: u64,
    /// The row count estimate.
    pub rows: u64,
    /// The statistics the caller last stored for the table's indexes, if any.
    pub index_stats: Option<IndexStats>,
}

/// Numbers the caller computed about a table's indexes (the MariaDB plugin: `ANALYZE
/// TABLE`'s row count and distinct key prefixes), opaque to the handler, kept with the ids
/// of the indexes they describe: once the indexes change (an in-place ADD or DROP INDEX),
/// they no longer apply and are dropped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexStats {
    /// The ids of the table's indexes when the numbers were stored, in table order.
    pub index_ids: Vec<u32>,
    /// The caller's numbers.
    pub values: Vec<u64>,
}

/// Encodes counters.
pub(crate) fn encode_counters(c: &StoredCounters) -> Vec<u8> {
    let mut v = vec![FORMAT_VERSION];
    v.extend_from_slice(&c.autoinc_ceiling.to_be_bytes());
    v.extend_from_slice(&c.rowid_ceiling.to_be_bytes());
    v.extend_from_slice(&c.rows.to_be_bytes());
    // Index statistics follow the 25 bytes of the first format (absent: none stored).
    if let Some(stats) = &c.index_stats {
        put_count(&mut v, stats.index_ids.len());
        for id in &stats.index_ids {
            v.extend_from_slice(&id.to_be_bytes());
        }
        put_count(&mut v, stats.values.len());
        for n in &stats.values {
            v.extend_from_slice(&n.to_be_bytes());
        }
    }
    v
}

/// Appends a count as 4 bytes big-endian (counts are far below `u32::MAX`: index ids and
/// key parts of one table).
fn put_count(v: &mut Vec<u8>, n: usize) {
    v.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes());
}

/// Decodes the index statistics after a counters record's first 25 bytes.
fn decode_index_stats(rest: &[u8]) -> Option<IndexStats> {
    let ids = usize::try_from(read_u32(rest, 0)?).ok()?;
    let mut at = 4usize;
    let mut index_ids = Vec::with_capacity(ids.min(1024));
    for _ in 0..ids {
        index_ids.push(read_u32(rest, at)?);
        at = at.checked_add(4)?;
    }
    let n = usize::try_from(read_u32(rest, at)?).ok()?;
    at = at.checked_add(4)?;
    let mut values = Vec::with_capacity(n.min(1 << 16));
    for _ in 0..n {
        values.push(read_u64(rest, at)?);
        at = at.checked_add(8)?;
    }
    (at == rest.len()).then_some(IndexStats { index_ids, values })
}

/// Decodes counters.
pub(crate) fn decode_counters(v: &[u8], table_id: u32) -> Result<StoredCounters, Error> {
    let malformed = || {
        Error::corruption(format!(
            "counters of table id {table_id}: {v:02x?} is malformed"
        ))
    };
    if v.len() < 25 || v.first() != Some(&FORMAT_VERSION) {
        return Err(malformed());
    }
    let index_stats = match v.get(25..) {
        Some([]) | None => None,
        Some(rest) => Some(decode_index_stats(rest).ok_or_else(malformed)?),
    };
    let get = |at| read_u64(v, at).unwrap_or_default();
    Ok(StoredCounters {
        autoinc_ceiling: get(1),
        rowid_ceiling: get(9),
        rows: get(17),
        index_stats,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn table_definitions_round_trip() {
        let def = TableDef {
            table_id: 7,
            key_format: 2,
            indexes: vec![
                IndexDef {
                    id: 8,
                    kind: IndexKind::Primary,
                    unique: true,
                    key_parts: 2,
                    name: "PRIMARY".into(),
                },
                IndexDef {
                    id: 9,
                    kind: IndexKind::Secondary,
                    unique: false,
                    key_parts: 1,
                    name: "k".into(),
                },
            ],
            caller_data: Vec::new(),
        };
        let v = encode_table(&def).unwrap();
        assert_eq!(decode_table(&v, "t").unwrap(), def);
        assert!(decode_table(&v[..v.len() - 1], "t").is_err());
        let mut newer = v.clone();
        newer[0] = 2;
        assert!(decode_table(&newer, "t").is_err());
        // A definition written before key formats were recorded reads as format 0.
        let old = TableDef {
            key_format: 0,
            ..def.clone()
        };
        let mut v0 = encode_table(&old).unwrap();
        assert_eq!(decode_table(&v0, "t").unwrap().key_format, 0);
        // Only index 0 carries the format: other bits on a secondary index are corruption.
        // The last index: id, kind, flags, key parts (2), name length (2), name "k".
        let flags_of_second = v0.len() - (1 + 2 + 2 + 1);
        v0[flags_of_second] = 0b10;
        assert!(decode_table(&v0, "t").is_err());
        assert!(
            encode_table(&TableDef {
                key_format: MAX_KEY_FORMAT + 1,
                ..def.clone()
            })
            .is_err()
        );
        // Caller data follows the indexes, with its length; a definition without it keeps
        // the bytes it always had.
        let with_data = TableDef {
            caller_data: vec![1, 2, 3],
            ..def
        };
        let v = encode_table(&with_data).unwrap();
        assert_eq!(v.len(), encode_table(&old).unwrap().len() + 4 + 3);
        assert_eq!(decode_table(&v, "t").unwrap(), with_data);
        assert!(decode_table(&v[..v.len() - 1], "t").is_err());
        let mut longer = v.clone();
        longer.push(0);
        assert!(decode_table(&longer, "t").is_err());
    }

    #[test]
    fn secondary_entries_give_back_key_and_pk() {
        let e = secondary_entry(5, b"abc", b"pk1").unwrap();
        assert_eq!(&e[..4], &[0, 0, 0, 5]);
        assert_eq!(decode_secondary_entry(&e), Some((&b"abc"[..], &b"pk1"[..])));
        let e = secondary_entry(5, b"", b"").unwrap();
        assert_eq!(decode_secondary_entry(&e), Some((&b""[..], &b""[..])));
        assert_eq!(decode_secondary_entry(&[0, 0, 0, 5, 0, 9]), None);
        assert_eq!(prefix_successor(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_successor(&[0xff]), None);
    }

    #[test]
    fn counters_round_trip() {
        let mut c = StoredCounters {
            autoinc_ceiling: 1 << 40,
            rowid_ceiling: 3,
            rows: 9,
            index_stats: None,
        };
        let plain = encode_counters(&c);
        assert_eq!(plain.len(), 25);
        assert_eq!(decode_counters(&plain, 1).unwrap(), c);
        c.index_stats = Some(IndexStats {
            index_ids: vec![8, 9],
            values: vec![1000, 10, 1000, 7],
        });
        let with_stats = encode_counters(&c);
        assert_eq!(decode_counters(&with_stats, 1).unwrap(), c);
        assert!(decode_counters(&[1, 2], 1).is_err());
        // A cut or padded statistics tail is corruption, not silently dropped.
        for bad in [&with_stats[..with_stats.len() - 1], &with_stats[..27]] {
            assert!(decode_counters(bad, 1).is_err());
        }
        let mut padded = with_stats.clone();
        padded.push(0);
        assert!(decode_counters(&padded, 1).is_err());
        check_version(&version_value()).unwrap();
        assert!(check_version(b"\x02RTDD").is_err());
    }
}
