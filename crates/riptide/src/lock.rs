//! The directory lock that keeps two processes (or two `Db`s) off one database.

use std::path::Path;

use riptide_common::fs::{FileLock, FileSystem};
use riptide_common::{Error, Result};

/// Name of the lock file inside the database directory.
pub(crate) const LOCK_FILE: &str = "LOCK";

/// An exclusive lock on `<dir>/LOCK` (`flock` on the real file system), held until dropped.
#[derive(Debug)]
pub(crate) struct DirLock {
    _lock: Box<dyn FileLock>,
}

impl DirLock {
    pub(crate) fn acquire(fs: &dyn FileSystem, dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK_FILE);
        match fs.lock_file(&path) {
            Ok(lock) => Ok(DirLock { _lock: lock }),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Err(Error::busy(format!(
                "database {} is already open in this or another process (lock {} is held)",
                dir.display(),
                path.display()
            ))),
            Err(e) => Err(Error::io_at("open and lock", &path, e)),
        }
    }
}
