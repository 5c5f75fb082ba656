//! The MANIFEST file: the whole [`ManifestState`], rewritten atomically on every change.
//!
//! [`store`] writes `MANIFEST.tmp`, fsyncs it, renames it over `MANIFEST` and fsyncs the
//! directory, so a crash leaves either the old or the new state. [`load`] reads `MANIFEST`
//! (ignoring and removing a leftover `MANIFEST.tmp`) and checks every byte. The byte format is
//! described in `crates/compaction/FORMAT.md`.

use std::path::{Path, PathBuf};

use riptide_common::checksum::{checksum, checksum_parts};
use riptide_common::coding::{
    Decoder, put_length_prefixed, put_u32_le, put_u64_le, put_varint32, put_varint64,
};
use riptide_common::fs::{CreateMode, FileSystem};
use riptide_common::{Error, ErrorKind, IoResultExt, Result, ResultExt};

use crate::edit::{CfState, MAX_LEVELS, ManifestState};
use crate::file_meta::FileMeta;
use crate::fsutil::{remove_quietly, sync_dir};

/// Name of the manifest file in the database directory.
pub const MANIFEST_FILE_NAME: &str = "MANIFEST";
/// Name of the temporary file a new manifest is written to before the rename.
pub const MANIFEST_TMP_FILE_NAME: &str = "MANIFEST.tmp";
/// The first eight bytes of every manifest.
pub const MANIFEST_MAGIC: [u8; 8] = *b"RIPTMANI";
/// The format version this build writes. It also reads version 1 (which has no
/// compaction-cursor records).
pub const MANIFEST_FORMAT_VERSION: u32 = 2;

/// Length of the file header (magic and version).
const HEADER_LEN: usize = 20;

/// Record kinds.
const REC_STATE: u8 = 1;
const REC_CF: u8 = 2;
const REC_FILE: u8 = 3;
const REC_END: u8 = 4;
/// Since version 2.
const REC_CURSOR: u8 = 5;

/// The path of the manifest in `dir`.
pub fn manifest_path(dir: &Path) -> PathBuf {
    dir.join(MANIFEST_FILE_NAME)
}

/// Appends one record: kind, payload length, payload, checksum.
fn put_record(out: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    let len = u32::try_from(payload.len())
        .unwrap_or(u32::MAX)
        .to_le_bytes();
    out.push(kind);
    out.extend_from_slice(&len);
    out.extend_from_slice(payload);
    put_u64_le(out, checksum_parts(&[&[kind], &len, payload]));
}

/// Encodes `state` as the full contents of a manifest file.
pub fn encode_state(state: &ManifestState) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(&MANIFEST_MAGIC);
    put_u32_le(&mut out, MANIFEST_FORMAT_VERSION);
    let header_checksum = checksum(&out);
    put_u64_le(&mut out, header_checksum);
    let mut records: u64 = 0;
    let mut p = Vec::new();

    put_varint64(&mut p, state.next_file_number);
    put_varint64(&mut p, state.last_seqno);
    put_varint32(&mut p, state.next_cf_id);
    put_record(&mut out, REC_STATE, &p);
    records += 1;

    for cf in &state.column_families {
        p.clear();
        put_varint32(&mut p, cf.id);
        put_length_prefixed(&mut p, cf.name.as_bytes());
        put_varint64(&mut p, cf.log_number);
        put_varint64(&mut p, cf.levels.len() as u64);
        put_record(&mut out, REC_CF, &p);
        records += 1;
        for (level, f) in cf.files() {
            p.clear();
            put_varint32(&mut p, cf.id);
            put_varint64(&mut p, level as u64);
            put_varint64(&mut p, f.number);
            put_varint64(&mut p, f.file_size);
            put_length_prefixed(&mut p, &f.smallest);
            put_length_prefixed(&mut p, &f.largest);
            put_varint64(&mut p, f.min_seqno);
            put_varint64(&mut p, f.max_seqno);
            put_varint64(&mut p, f.entries);
            put_varint64(&mut p, f.tombstones);
            put_record(&mut out, REC_FILE, &p);
            records += 1;
        }
        for (level, key) in &cf.compact_cursors {
            p.clear();
            put_varint32(&mut p, cf.id);
            put_varint64(&mut p, *level as u64);
            put_length_prefixed(&mut p, key);
            put_record(&mut out, REC_CURSOR, &p);
            records += 1;
        }
    }
    p.clear();
    put_varint64(&mut p, records);
    put_record(&mut out, REC_END, &p);
    out
}

/// Decodes the contents of a manifest file. `path` only names the file in errors.
///
/// Damaged or malformed bytes are `Corruption` naming the file and the offset of the bad
/// record; an unknown format version is `NotSupported`.
pub fn decode_state(bytes: &[u8], path: &Path) -> Result<ManifestState> {
    decode_inner(bytes).context_with(|| format!("manifest {}", path.display()))
}

fn decode_inner(bytes: &[u8]) -> Result<ManifestState> {
    let mut d = Decoder::new(bytes);
    let magic = d.bytes(MANIFEST_MAGIC.len(), "magic")?;
    if magic != MANIFEST_MAGIC {
        return Err(Error::corruption(
            "bad magic at offset 0: not a Riptide manifest",
        ));
    }
    let version = d.u32_le("format version")?;
    let stored = d.u64_le("header checksum")?;
    let header = bytes.get(..MANIFEST_MAGIC.len() + 4).unwrap_or_default();
    if checksum(header) != stored {
        return Err(Error::corruption(
            "header checksum mismatch at offset 12 (magic and format version are damaged)",
        ));
    }
    // A version with an intact checksum really was written that way: a newer format.
    if version != MANIFEST_FORMAT_VERSION && version != 1 {
        return Err(Error::not_supported(format!(
            "format version {version} at offset 8 is not supported (this build reads version \
             versions 1 to {MANIFEST_FORMAT_VERSION}); was it written by a newer Riptide?"
        )));
    }
    debug_assert_eq!(d.position(), HEADER_LEN);

    let mut state: Option<ManifestState> = None;
    let mut records: u64 = 0;
    loop {
        let offset = d.position();
        let at = |e: Error| e.with_context(format_args!("record at offset {offset}"));
        let (kind, payload) = read_record(&mut d).map_err(at)?;
        let mut p = Decoder::new(payload);
        match kind {
            REC_STATE if state.is_none() && records == 0 => {
                state = Some(ManifestState {
                    next_file_number: p.varint64("next file number").map_err(at)?,
                    last_seqno: p.varint64("last seqno").map_err(at)?,
                    next_cf_id: p.varint32("next column family id").map_err(at)?,
                    column_families: Vec::new(),
                });
            }
            REC_CF => {
                let st = state.as_mut().ok_or_else(|| at(misplaced(kind)))?;
                let cf = decode_cf(&mut p).map_err(at)?;
                st.column_families.push(cf);
            }
            REC_FILE => {
                let st = state.as_mut().ok_or_else(|| at(misplaced(kind)))?;
                decode_file(&mut p, st).map_err(at)?;
            }
            REC_CURSOR if version >= 2 => {
                let st = state.as_mut().ok_or_else(|| at(misplaced(kind)))?;
                decode_cursor(&mut p, st).map_err(at)?;
            }
            REC_END => {
                let count = p.varint64("record count").map_err(at)?;
                if count != records {
                    return Err(at(Error::corruption(format!(
                        "end record counts {count} records but {records} precede it"
                    ))));
                }
                if !d.is_empty() {
                    return Err(Error::corruption(format!(
                        "{} unexpected bytes after the end record at offset {}",
                        d.remaining(),
                        d.position()
                    )));
                }
                if !p.is_empty() {
                    return Err(at(Error::corruption("trailing bytes in end record")));
                }
                let mut st = state.ok_or_else(|| at(misplaced(kind)))?;
                st.sort_levels();
                st.validate()
                    .map_err(|m| Error::corruption(format!("invalid state: {m}")))?;
                return Ok(st);
            }
            other => return Err(at(misplaced(other))),
        }
        if !p.is_empty() {
            return Err(at(Error::corruption(format!(
                "{} trailing bytes in record of kind {kind}",
                p.remaining()
            ))));
        }
        records += 1;
    }
}

fn misplaced(kind: u8) -> Error {
    Error::corruption(format!("unexpected record of kind {kind}"))
}

/// Reads one record and checks its checksum.
fn read_record<'a>(d: &mut Decoder<'a>) -> Result<(u8, &'a [u8])> {
    if d.is_empty() {
        return Err(Error::corruption(
            "file ends without an end record (truncated?)",
        ));
    }
    let kind_b = d.bytes(1, "record kind")?;
    let len_b = d.bytes(4, "record length")?;
    let len = u32::from_le_bytes(
        len_b
            .try_into()
            .map_err(|_| Error::corruption("bad record length"))?,
    );
    let payload = d.bytes(len as usize, "record payload")?;
    let stored = d.u64_le("record checksum")?;
    let actual = checksum_parts(&[kind_b, len_b, payload]);
    if stored != actual {
        return Err(Error::corruption(format!(
            "checksum mismatch (stored {stored:#018x}, computed {actual:#018x})"
        )));
    }
    Ok((kind_b.first().copied().unwrap_or(0), payload))
}

fn decode_cf(p: &mut Decoder<'_>) -> Result<CfState> {
    let id = p.varint32("column family id")?;
    let name = p.length_prefixed("column family name")?;
    let name = String::from_utf8(name.to_vec())
        .map_err(|_| Error::corruption(format!("column family {id} name is not UTF-8")))?;
    let log_number = p.varint64("log number")?;
    let levels = p.varint64("level count")?;
    if levels > MAX_LEVELS as u64 {
        return Err(Error::corruption(format!(
            "column family {id} has {levels} levels, more than {MAX_LEVELS}"
        )));
    }
    Ok(CfState {
        id,
        name,
        log_number,
        levels: vec![Vec::new(); levels as usize],
        compact_cursors: std::collections::BTreeMap::new(),
    })
}

fn decode_cursor(p: &mut Decoder<'_>, st: &mut ManifestState) -> Result<()> {
    let cf = p.varint32("column family id")?;
    let level = p.varint64("level")?;
    let key = p.length_prefixed("cursor key")?.to_vec();
    let c = st
        .column_families
        .iter_mut()
        .find(|c| c.id == cf)
        .ok_or_else(|| {
            Error::corruption(format!(
                "compaction cursor for column family {cf}, which has no CF record before it"
            ))
        })?;
    if level >= c.levels.len() as u64 {
        return Err(Error::corruption(format!(
            "compaction cursor for level {level} of column family {cf}, which has {} levels",
            c.levels.len()
        )));
    }
    c.compact_cursors.insert(level as usize, key);
    Ok(())
}

fn decode_file(p: &mut Decoder<'_>, st: &mut ManifestState) -> Result<()> {
    let cf = p.varint32("column family id")?;
    let level = p.varint64("level")?;
    let meta = FileMeta {
        number: p.varint64("file number")?,
        file_size: p.varint64("file size")?,
        smallest: p.length_prefixed("smallest key")?.to_vec(),
        largest: p.length_prefixed("largest key")?.to_vec(),
        min_seqno: p.varint64("min seqno")?,
        max_seqno: p.varint64("max seqno")?,
        entries: p.varint64("entry count")?,
        tombstones: p.varint64("tombstone count")?,
    };
    let number = meta.number;
    let c = st
        .column_families
        .iter_mut()
        .find(|c| c.id == cf)
        .ok_or_else(|| {
            Error::corruption(format!("file {number} names unknown column family {cf}"))
        })?;
    let num_levels = c.levels.len();
    let files = usize::try_from(level)
        .ok()
        .and_then(|l| c.levels.get_mut(l))
        .ok_or_else(|| {
            Error::corruption(format!(
                "file {number} is in level {level} but column family {cf} has {num_levels} levels"
            ))
        })?;
    files.push(meta);
    Ok(())
}

/// Reads the manifest in `dir`. `Ok(None)` if there is none (a new database: the caller
/// decides). A leftover `MANIFEST.tmp` from an interrupted [`store`] is removed.
pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Option<ManifestState>> {
    remove_quietly(fs, &dir.join(MANIFEST_TMP_FILE_NAME));
    let path = manifest_path(dir);
    let bytes = match fs.read_all(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io_at("read", &path, e)),
    };
    decode_state(&bytes, &path).map(Some)
}

/// Atomically replaces the manifest in `dir` with `state`: write and fsync `MANIFEST.tmp`,
/// rename it over `MANIFEST`, fsync the directory. On error the old manifest is still in
/// place (unless the failure was the final directory fsync, after which either may be).
pub fn store(fs: &dyn FileSystem, dir: &Path, state: &ManifestState) -> Result<()> {
    let bytes = encode_state(state);
    let tmp = dir.join(MANIFEST_TMP_FILE_NAME);
    let res = write_synced(fs, &tmp, &bytes);
    if let Err(e) = res {
        if e.kind() == ErrorKind::Io {
            remove_quietly(fs, &tmp);
        }
        return Err(e);
    }
    let path = manifest_path(dir);
    riptide_common::kill_point::kill_point("manifest.before_rename");
    if let Err(e) = fs.rename(&tmp, &path) {
        remove_quietly(fs, &tmp);
        return Err(Error::io(
            format!("rename {} to {}", tmp.display(), path.display()),
            e,
        ));
    }
    riptide_common::kill_point::kill_point("manifest.after_rename");
    sync_dir(fs, dir)
}

fn write_synced(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Result<()> {
    let f = fs.create(path, CreateMode::Truncate).at("create", path)?;
    f.append(bytes).at("write", path)?;
    f.sync_all().at("fsync", path)
}
