//! The first, simple picker (all of L0 into L1) and [`compaction_edits`]. Leveled
//! compaction picks with [`crate::picker::pick_compaction`] and installs with
//! [`crate::job::CompactionJob::edits`].

use std::sync::Arc;

use riptide_common::{CfId, Error, Result};

use crate::compact::CompactionOutput;
use crate::edit::VersionEdit;
use crate::table_handle::TableHandle;
use crate::version::Version;

/// When `cf` has at least `l0_trigger` files in L0, all of them (newest first) followed by
/// every L1 file overlapping their user-key range (in key order). The output goes to L1;
/// see [`l1_is_bottommost`].
pub fn pick_l0_compaction(
    version: &Version,
    cf: CfId,
    l0_trigger: usize,
) -> Option<Vec<Arc<TableHandle>>> {
    let l0 = version.files(cf, 0);
    if l0.is_empty() || l0.len() < l0_trigger {
        return None;
    }
    let smallest = l0.iter().map(|f| f.meta.smallest_user_key()).min()?;
    let largest = l0.iter().map(|f| f.meta.largest_user_key()).max()?;
    let mut inputs = l0.to_vec();
    inputs.extend(version.overlapping_files(cf, 1, smallest, largest));
    Some(inputs)
}

/// True if no level below L1 of `cf` holds a file: a compaction into L1 is then bottommost.
pub fn l1_is_bottommost(version: &Version, cf: CfId) -> bool {
    version
        .cf(cf)
        .is_none_or(|c| c.levels.iter().skip(2).all(|l| l.is_empty()))
}

/// The version edits that install a compaction of `inputs` (all files of `cf` in `version`)
/// whose `output` goes to `output_level`. Pass `output.new_files` as the tables of
/// [`crate::version::VersionSet::apply_with_tables`].
pub fn compaction_edits(
    version: &Version,
    cf: CfId,
    inputs: &[Arc<TableHandle>],
    output_level: usize,
    output: &CompactionOutput,
) -> Result<Vec<VersionEdit>> {
    let mut edits = Vec::with_capacity(inputs.len() + output.new_files.len());
    for h in inputs {
        let level = version.level_of(cf, h.number()).ok_or_else(|| {
            Error::invalid_argument(format!(
                "compaction input {} is not in column family {cf} of this version",
                h.number()
            ))
        })?;
        edits.push(VersionEdit::DeleteFile {
            cf,
            level,
            number: h.number(),
        });
    }
    for h in &output.new_files {
        edits.push(VersionEdit::AddFile {
            cf,
            level: output_level,
            meta: h.meta.clone(),
        });
    }
    Ok(edits)
}
