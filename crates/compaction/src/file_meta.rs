//! [`FileMeta`]: what the manifest records about one table file.

use std::path::{Path, PathBuf};

use riptide_common::SeqNo;
use riptide_common::range_del::is_range_end_key;

/// The description of one table file, as recorded in the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileMeta {
    /// The file number; the file is `{number:06}.sst` in the database directory.
    pub number: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The smallest internal key in the file: its first point entry, or the start
    /// `(start, seqno, RangeDelete)` of a range tombstone beginning before it.
    pub smallest: Vec<u8>,
    /// The largest internal key in the file: its last point entry or, when a range tombstone
    /// reaches past it, the tombstone's exclusive end as
    /// [`range_end_key`](riptide_common::range_del::range_end_key) (see
    /// [`FileMeta::largest_is_range_end`]).
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

    /// The user key of [`Self::largest`]. An inclusive bound of the file's keys, except when
    /// [`Self::largest_is_range_end`]: then no key of the file reaches it (using it as an
    /// inclusive bound is conservative: it may only make ranges look wider).
    pub fn largest_user_key(&self) -> &[u8] {
        riptide_common::key::user_key(&self.largest)
    }

    /// True when [`Self::largest`] is a range tombstone's exclusive end: the file covers the
    /// user keys `[smallest_user_key, largest_user_key)`.
    pub fn largest_is_range_end(&self) -> bool {
        is_range_end_key(&self.largest)
    }

    /// True when every user key the file covers (entries and range tombstones) is below
    /// `user_key`.
    pub fn ends_before(&self, user_key: &[u8]) -> bool {
        let largest = self.largest_user_key();
        largest < user_key || (largest == user_key && self.largest_is_range_end())
    }

    /// True when `user_key` lies within the file's key range (its entries and range
    /// tombstones), so the file may hold a version of it or a tombstone covering it.
    pub fn contains_user_key(&self, user_key: &[u8]) -> bool {
        self.smallest_user_key() <= user_key && !self.ends_before(user_key)
    }

    /// True if the file's user-key range intersects `[smallest, largest]` (user keys,
    /// inclusive), honouring an exclusive range end (see [`Self::ends_before`]).
    pub fn overlaps_user_range(&self, smallest: &[u8], largest: &[u8]) -> bool {
        self.smallest_user_key() <= largest && !self.ends_before(smallest)
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
    fn a_range_end_is_an_exclusive_bound() {
        use riptide_common::ValueKind;
        use riptide_common::key::internal_key;
        use riptide_common::range_del::range_end_key;
        let meta = |largest: Vec<u8>| FileMeta {
            number: 1,
            file_size: 1,
            smallest: internal_key(b"c", 5, ValueKind::Put),
            largest,
            min_seqno: 1,
            max_seqno: 5,
            entries: 1,
            tombstones: 0,
        };
        let inclusive = meta(internal_key(b"k", 5, ValueKind::Put));
        let exclusive = meta(range_end_key(b"k"));
        assert!(!inclusive.largest_is_range_end());
        assert!(exclusive.largest_is_range_end());
        assert!(inclusive.contains_user_key(b"k"));
        assert!(!exclusive.contains_user_key(b"k"));
        assert!(exclusive.contains_user_key(b"j\xff"));
        assert!(!exclusive.contains_user_key(b"b"));
        assert!(exclusive.ends_before(b"k") && !inclusive.ends_before(b"k"));
        assert!(!exclusive.overlaps_user_range(b"k", b"z"));
        assert!(inclusive.overlaps_user_range(b"k", b"z"));
        assert!(exclusive.overlaps_user_range(b"a", b"c"));
        assert!(!exclusive.overlaps_user_range(b"a", b"b"));
    }

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
