//! File-system operations on segment files: listing, creating, truncating, setting aside.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use riptide_common::{Error, IoResultExt, Result};

use crate::format::{encode_segment_header, parse_segment_file_name, segment_file_name};

/// The path of segment `n` in `dir`.
pub(crate) fn segment_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(segment_file_name(n))
}

/// Every segment file in `dir`, sorted by number. Other files are ignored.
pub(crate) fn list_segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).at("list WAL directory", dir)? {
        let entry = entry.at("list WAL directory", dir)?;
        let name = entry.file_name();
        let Some(n) = name.to_str().and_then(parse_segment_file_name) else {
            continue;
        };
        let path = entry.path();
        let is_file = entry.file_type().at("stat", &path)?.is_file();
        if is_file {
            out.push((n, path));
        } else {
            log::warn!(
                "ignoring {}: named like a WAL segment but not a file",
                path.display()
            );
        }
    }
    out.sort_by_key(|&(n, _)| n);
    Ok(out)
}

/// Fsyncs a directory so that file creations, renames and removals in it are durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .at("fsync WAL directory", dir)
}

/// Creates segment `n` in `dir` (it must not exist), writes and fsyncs its header, and
/// fsyncs the directory. Returns the file, opened for appending, and its path.
pub(crate) fn create_segment(dir: &Path, n: u64) -> Result<(File, PathBuf)> {
    let path = segment_path(dir, n);
    let mut file = OpenOptions::new()
        .append(true)
        .create_new(true)
        .open(&path)
        .at("create WAL segment", &path)?;
    file.write_all(&encode_segment_header(n))
        .at("write header of WAL segment", &path)?;
    file.sync_all().at("fsync WAL segment", &path)?;
    sync_dir(dir)?;
    Ok((file, path))
}

/// Cuts `path` to `len` bytes and fsyncs it.
pub(crate) fn truncate(path: &Path, len: u64) -> Result<()> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .at("open for truncation", path)?;
    file.set_len(len)
        .at(&format!("truncate to {len} bytes"), path)?;
    file.sync_all().at("fsync after truncation", path)
}

/// Replaces the content of segment `n` at `path` by a fresh header (the file held no
/// record) and fsyncs it.
pub(crate) fn rewrite_header(path: &Path, n: u64) -> Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .at("open to rewrite header", path)?;
    file.write_all(&encode_segment_header(n))
        .at("rewrite header of WAL segment", path)?;
    file.sync_all().at("fsync WAL segment", path)
}

/// Renames `path` to `<path>.discarded` (or `<path>.discarded.N` if taken) and returns the
/// new path. The caller fsyncs the directory.
pub(crate) fn set_aside(path: &Path) -> Result<PathBuf> {
    let base = format!("{}.discarded", path.display());
    let mut target = PathBuf::from(&base);
    let mut i = 1u32;
    while target.try_exists().at("stat", &target)? {
        target = PathBuf::from(format!("{base}.{i}"));
        i = i.saturating_add(1);
    }
    fs::rename(path, &target).map_err(|e| {
        Error::io(
            format!("rename {} to {}", path.display(), target.display()),
            e,
        )
    })?;
    Ok(target)
}

/// Reads `path` from byte `from` to its end.
pub(crate) fn read_from(path: &Path, from: u64) -> Result<Vec<u8>> {
    let mut file = File::open(path).at("open", path)?;
    file.seek(SeekFrom::Start(from))
        .at(&format!("seek to offset {from} in"), path)?;
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)
        .at(&format!("read from offset {from} of"), path)?;
    Ok(buf)
}
