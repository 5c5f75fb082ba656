//! The directory lock that keeps two processes (or two `Db`s) off one database.

use std::fs::{File, OpenOptions};
use std::path::Path;

use riptide_common::{Error, IoResultExt, Result};
use std::fs::TryLockError;

/// Name of the lock file inside the database directory.
pub(crate) const LOCK_FILE: &str = "LOCK";

/// An exclusive advisory lock (`flock`) on `<dir>/LOCK`, held until dropped.
#[derive(Debug)]
pub(crate) struct DirLock {
    _file: File,
}

impl DirLock {
    pub(crate) fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&path)
            .at("open lock file", &path)?;
        match file.try_lock() {
            Ok(()) => Ok(DirLock { _file: file }),
            Err(TryLockError::WouldBlock) => Err(Error::busy(format!(
                "database {} is already open in this or another process (lock {} is held)",
                dir.display(),
                path.display()
            ))),
            Err(TryLockError::Error(e)) => Err(Error::io_at("lock", &path, e)),
        }
    }
}
