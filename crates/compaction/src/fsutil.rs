//! Small file-system helpers shared by the manifest, flush and compaction.

use std::path::Path;

use riptide_common::fs::FileSystem;
use riptide_common::{IoResultExt, Result};

/// Fsyncs directory `dir`, making renames and new files in it durable.
pub fn sync_dir(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    fs.sync_dir(dir).at("fsync directory", dir)
}

/// Removes `path`, logging (not returning) a failure. Used on cleanup paths.
pub fn remove_quietly(fs: &dyn FileSystem, path: &Path) {
    if let Err(e) = fs.remove_file(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        log::warn!("could not remove {}: {e}", path.display());
    }
}
