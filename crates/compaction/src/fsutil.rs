//! Small file-system helpers shared by the manifest, flush and compaction.

use std::fs::File;
use std::path::Path;

use riptide_common::{IoResultExt, Result};

/// Fsyncs directory `dir`, making renames and new files in it durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .at("open directory", dir)?
        .sync_all()
        .at("fsync directory", dir)
}

/// Removes `path`, logging (not returning) a failure. Used on cleanup paths.
pub fn remove_quietly(path: &Path) {
    if let Err(e) = std::fs::remove_file(path)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        log::warn!("could not remove {}: {e}", path.display());
    }
}
