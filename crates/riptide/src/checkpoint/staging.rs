//! Where a checkpoint is written: the target directory checked, a staging directory beside it
//! that becomes the target only once complete and synced, and the file operations that fill
//! it (a table hard-linked or copied, a file or a prefix of one copied, bytes written), every
//! file written synced, every error naming the file and the step. A staging directory that
//! is not published is removed when dropped, so a failed checkpoint leaves nothing at the
//! target and nothing behind it.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use riptide_common::fs::{CreateMode, FileSystem, WritableFile};
use riptide_common::{Error, IoResultExt, Result};

/// The suffix of the staging directory's name (`<target>.checkpoint-tmp`).
pub(crate) const STAGING_SUFFIX: &str = ".checkpoint-tmp";

/// The largest piece a copy reads and writes at once.
const COPY_CHUNK: u64 = 1 << 20;

/// How a table file got into the checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placed {
    /// A hard link: no byte written.
    Linked,
    /// A copy of this many bytes (the file system could not link it there).
    Copied(u64),
}

/// A checkpoint being written: its staging directory, removed on drop unless published.
pub(crate) struct Staging<'a> {
    fs: &'a dyn FileSystem,
    /// Where the checkpoint goes.
    target: PathBuf,
    /// The target's parent (`.` for a bare name).
    parent: PathBuf,
    /// The staging directory, a sibling of the target.
    dir: PathBuf,
    /// Set once the staging directory became the target (or was removed).
    finished: bool,
}

impl<'a> Staging<'a> {
    /// Checks `target` (it must not exist, its parent must be a directory) and creates the
    /// staging directory `<target>.checkpoint-tmp` beside it, which must not exist either:
    /// another checkpoint to the same target is writing it, or one was interrupted (a crash)
    /// and left it; it is never removed here, since it is not known to be this call's.
    pub(crate) fn create(fs: &'a dyn FileSystem, target: &Path) -> Result<Staging<'a>> {
        let Some(name) = target.file_name() else {
            return Err(Error::invalid_argument(
                "the path names no directory (it ends in `..` or is a root)",
            ));
        };
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        match fs.metadata(target) {
            Ok(_) => {
                return Err(Error::invalid_argument(format!(
                    "{} already exists (a checkpoint goes into a new directory)",
                    target.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io_at("stat", target, e)),
        }
        match fs.metadata(&parent) {
            Ok(m) if m.is_dir => {}
            Ok(_) => {
                return Err(Error::invalid_argument(format!(
                    "parent {} is not a directory",
                    parent.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(Error::not_found(format!(
                    "parent directory {} does not exist",
                    parent.display()
                )));
            }
            Err(e) => return Err(Error::io_at("stat", &parent, e)),
        }
        let mut staging_name = OsString::from(name);
        staging_name.push(STAGING_SUFFIX);
        let dir = parent.join(staging_name);
        match fs.create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                return Err(Error::busy(format!(
                    "staging directory {} exists: another checkpoint to the same path is \
                     running, or an interrupted one left it (remove it)",
                    dir.display()
                )));
            }
            Err(e) => return Err(Error::io_at("create staging directory", &dir, e)),
        }
        Ok(Staging {
            fs,
            target: target.to_path_buf(),
            parent,
            dir,
            finished: false,
        })
    }

    /// The path of file `name` in the staging directory.
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Puts table file `from` into the checkpoint as `name`: a hard link, or a copy (synced)
    /// when the file system cannot link there (`EXDEV`: another file system; or no links at
    /// all). A linked file needs no sync: its bytes were synced before its version was
    /// installed, and the directory sync makes the new name durable.
    pub(crate) fn link_or_copy(&self, from: &Path, name: &str) -> Result<Placed> {
        let to = self.path(name);
        match self.fs.hard_link(from, &to) {
            Ok(()) => Ok(Placed::Linked),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::CrossesDevices | io::ErrorKind::Unsupported
                ) =>
            {
                log::debug!(
                    "cannot hard-link {} to {} ({e}); copying it",
                    from.display(),
                    to.display()
                );
                self.copy(from, name, None).map(Placed::Copied)
            }
            Err(e) => Err(Error::io(
                format!("hard-link {} to {}", from.display(), to.display()),
                e,
            )),
        }
    }

    /// Copies the first `len` bytes of `from` (all of it for `None`) into the checkpoint as
    /// `name`, synced. Returns the bytes copied.
    pub(crate) fn copy(&self, from: &Path, name: &str, len: Option<u64>) -> Result<u64> {
        let to = self.path(name);
        let src = self.fs.open_read(from).at("open", from)?;
        let len = match len {
            Some(len) => len,
            None => src.len().at("stat", from)?,
        };
        let dst = self
            .fs
            .create(&to, CreateMode::New)
            .at("create copy", &to)?;
        let mut buf = vec![0u8; usize::try_from(len.min(COPY_CHUNK)).unwrap_or(0)];
        let mut at = 0u64;
        while at < len {
            let n = (len - at).min(COPY_CHUNK);
            let piece = usize::try_from(n)
                .ok()
                .and_then(|n| buf.get_mut(..n))
                .ok_or_else(|| {
                    Error::new(
                        riptide_common::ErrorKind::Internal,
                        format!("copy buffer too small for {n} bytes"),
                    )
                })?;
            src.read_exact_at(piece, at)
                .at(&format!("read {n} bytes at offset {at} of"), from)?;
            dst.append(piece)
                .at(&format!("write {n} bytes at offset {at} of"), &to)?;
            at += n;
        }
        sync(&*dst, &to)?;
        Ok(len)
    }

    /// Writes `bytes` into the checkpoint as the new file `name`, synced.
    pub(crate) fn write(&self, name: &str, bytes: &[u8]) -> Result<()> {
        let to = self.path(name);
        let file = self.fs.create(&to, CreateMode::New).at("create", &to)?;
        file.append(bytes).at("write", &to)?;
        sync(&*file, &to)
    }

    /// Makes the checkpoint the target: syncs the staging directory, renames it to the
    /// target (which must still not exist) and syncs the parent. If that last sync fails, the
    /// target is removed again: a checkpoint whose name may not survive a crash is not
    /// reported as made.
    pub(crate) fn publish(mut self) -> Result<()> {
        self.fs
            .sync_dir(&self.dir)
            .at("fsync staging directory", &self.dir)?;
        match self.fs.metadata(&self.target) {
            Ok(_) => {
                return Err(Error::invalid_argument(format!(
                    "{} was created while the checkpoint was written",
                    self.target.display()
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io_at("stat", &self.target, e)),
        }
        self.fs.rename(&self.dir, &self.target).map_err(|e| {
            Error::io(
                format!("rename {} to {}", self.dir.display(), self.target.display()),
                e,
            )
        })?;
        let synced = self
            .fs
            .sync_dir(&self.parent)
            .at("fsync parent directory", &self.parent);
        if synced.is_err() {
            remove_tree(self.fs, &self.target);
        }
        // Published, or removed: nothing left for `drop`.
        self.finished = true;
        synced
    }
}

impl Drop for Staging<'_> {
    fn drop(&mut self) {
        if !self.finished {
            remove_tree(self.fs, &self.dir);
        }
    }
}

/// Syncs `file` (at `path`, for the message).
fn sync(file: &dyn WritableFile, path: &Path) -> Result<()> {
    file.sync_all().at("fsync", path)
}

/// Removes directory `dir` and the files in it (a checkpoint has no subdirectories),
/// logging what it cannot remove: a cleanup path, after the error that matters.
fn remove_tree(fs: &dyn FileSystem, dir: &Path) {
    let entries = match fs.list_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            log::warn!(
                "cannot list {} to remove a failed checkpoint: {e}",
                dir.display()
            );
            return;
        }
    };
    for entry in entries {
        let path = dir.join(&entry.name);
        if let Err(e) = fs.remove_file(&path) {
            log::warn!(
                "cannot remove {} of a failed checkpoint: {e}",
                path.display()
            );
        }
    }
    if let Err(e) = fs.remove_dir(dir) {
        log::warn!(
            "cannot remove the directory {} of a failed checkpoint: {e}",
            dir.display()
        );
    }
}
