//! [`FileMeta`]: what the manifest records about one table file.

use std::path::{Path, PathBuf};

use riptide_common::SeqNo;

/// The description of one table file, as recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileMeta {
    /// The file number; the file is `{number:06}.sst` in the database directory.
    pub number: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// The largest internal key in the file.
    pub largest: Vec<u8>,
    /// The smallest sequence number in the file.
    pub min_seqno: SeqNo,
    /// The largest sequence number in the file.
    pub max_seqno: SeqNo,
    /// Number of entries (all kinds).
    pub entries: u64,
    /// Number of point tombstones among the entries.
    pub tombstones: u64,
}

impl FileMeta {
    /// The user key of [`Self::smallest`].
    pub fn smallest_user_key(&self) -> &[u8] {
        riptide_common::key::user_key(&self.smallest)
    }

    /// The user key of [`Self::largest`].
    pub fn largest_user_key(&self) -> &[u8] {
        riptide_common::key::user_key(&self.largest)
    }

    /// True if the file's user-key range intersects `[smallest, largest]` (user keys, inclusive).
    pub fn overlaps_user_range(&self, smallest: &[u8], largest: &[u8]) -> bool {
        self.smallest_user_key() <= largest && smallest <= self.largest_user_key()
    }
}

/// The file name of table `number`: six or more digits and `.sst`.
pub fn table_file_name(number: u64) -> String {
    format!("{number:06}.sst")
}

/// The path of table `number` in `dir`.
pub fn table_file_path(dir: &Path, number: u64) -> PathBuf {
    dir.join(table_file_name(number))
}

/// The number in a file name of the form `<digits>.<extension>` (any extension), if it is one.
pub fn parse_numbered_file_name(name: &str) -> Option<(u64, &str)> {
    let (stem, ext) = name.split_once('.')?;
    if stem.is_empty() || !stem.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stem.parse().ok()?, ext))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(table_file_name(7), "000007.sst");
        assert_eq!(table_file_name(1234567), "1234567.sst");
        assert_eq!(parse_numbered_file_name("000007.sst"), Some((7, "sst")));
        assert_eq!(parse_numbered_file_name("000012.log"), Some((12, "log")));
        assert_eq!(parse_numbered_file_name("MANIFEST"), None);
        assert_eq!(parse_numbered_file_name("12a.sst"), None);
        assert_eq!(parse_numbered_file_name(".sst"), None);
    }
}
