//! File-system operations on segment files: listing, creating, truncating, setting aside.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use riptide_common::fs::{CreateMode, FileSystem, WritableFile};
use riptide_common::{Error, IoResultExt, Result};

use crate::format::{encode_segment_header, parse_segment_file_name, segment_file_name};

/// The path of segment `n` in `dir`.
pub(crate) fn segment_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(segment_file_name(n))
}

/// Every segment file in `dir`, sorted by number. Other files are ignored.
pub(crate) fn list_segments(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in fs.list_dir(dir).at("list WAL directory", dir)? {
        let Some(n) = entry.name.to_str().and_then(parse_segment_file_name) else {
            continue;
        };
        let path = dir.join(&entry.name);
        if entry.is_file {
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
pub(crate) fn sync_dir(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    fs.sync_dir(dir).at("fsync WAL directory", dir)
}

/// Creates segment `n` in `dir` (it must not exist), writes and fsyncs its header, and
/// fsyncs the directory. Returns the file, opened for appending, and its path.
pub(crate) fn create_segment(
    fs: &dyn FileSystem,
    dir: &Path,
    n: u64,
) -> Result<(Arc<dyn WritableFile>, PathBuf)> {
    let path = segment_path(dir, n);
    let file = fs
        .create(&path, CreateMode::New)
        .at("create WAL segment", &path)?;
    file.append(&encode_segment_header(n))
        .at("write header of WAL segment", &path)?;
    file.sync_all().at("fsync WAL segment", &path)?;
    sync_dir(fs, dir)?;
    Ok((Arc::from(file), path))
}

/// Cuts `path` to `len` bytes and fsyncs it.
pub(crate) fn truncate(fs: &dyn FileSystem, path: &Path, len: u64) -> Result<()> {
    fs.truncate(path, len)
        .at(&format!("truncate (and fsync) to {len} bytes"), path)
}

/// Replaces the content of segment `n` at `path` by a fresh header (the file held no
/// record) and fsyncs it.
pub(crate) fn rewrite_header(fs: &dyn FileSystem, path: &Path, n: u64) -> Result<()> {
    let file = fs
        .create(path, CreateMode::Truncate)
        .at("open to rewrite header", path)?;
    file.append(&encode_segment_header(n))
        .at("rewrite header of WAL segment", path)?;
    file.sync_all().at("fsync WAL segment", path)
}

/// Renames `path` to `<path>.discarded` (or `<path>.discarded.N` if taken) and returns the
/// new path. The caller fsyncs the directory.
pub(crate) fn set_aside(fs: &dyn FileSystem, path: &Path) -> Result<PathBuf> {
    let base = format!("{}.discarded", path.display());
    let mut target = PathBuf::from(&base);
    let mut i = 1u32;
    while fs.exists(&target).at("stat", &target)? {
        target = PathBuf::from(format!("{base}.{i}"));
        i = i.saturating_add(1);
    }
    fs.rename(path, &target).map_err(|e| {
        Error::io(
            format!("rename {} to {}", path.display(), target.display()),
            e,
        )
    })?;
    Ok(target)
}

/// Reads `path` from byte `from` to its end.
pub(crate) fn read_from(fs: &dyn FileSystem, path: &Path, from: u64) -> Result<Vec<u8>> {
    let file = fs.open_read(path).at("open", path)?;
    let len = file.len().at("stat", path)?;
    let n = usize::try_from(len.saturating_sub(from)).map_err(|_| {
        Error::io_at(
            &format!("read from offset {from} of"),
            path,
            std::io::Error::other("file too large"),
        )
    })?;
    let mut buf = vec![0u8; n];
    file.read_exact_at(&mut buf, from)
        .at(&format!("read from offset {from} of"), path)?;
    Ok(buf)
}
