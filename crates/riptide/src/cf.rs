//! Column families: independent key spaces that share one WAL, so a batch across them is
//! atomic. Each has its own memtables and its own levels of tables.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::RwLock;
use riptide_common::key::{MAX_SEQNO, seek_key, user_key};
use riptide_common::merge::MergingIterator;
use riptide_common::range_del::{RangeTombstone, RangeTombstoneSet};
use riptide_common::{BoxedIterator, CfId, InternalIterator, Result, SeqNo, ValueKind};
use riptide_compaction::{LevelIterator, TableHandle, Version};
use riptide_memtable::Memtable;
use riptide_sstable::{EntryEstimate, Table};

/// What a reader of one column family sees: the active memtable, the frozen ones (newest
/// first) and the version of tables. Immutable; replaced as a whole when any part changes,
/// so a reader holding one `Arc<CfView>` has a consistent picture.
#[derive(Debug)]
pub(crate) struct CfView {
    pub(crate) cf_id: CfId,
    pub(crate) mem: Arc<Memtable>,
    pub(crate) imms: Vec<Arc<Memtable>>,
    pub(crate) version: Arc<Version>,
}

/// The user's answer for the newest visible version `(seqno, kind, value)` of a key, given
/// the largest seqno of the range tombstones covering the key in this source and the newer
/// ones (`covered`): the value of a put that no newer range tombstone hides, else `None`.
fn resolve(covered: Option<SeqNo>, seqno: SeqNo, kind: ValueKind, value: &[u8]) -> Option<Vec<u8>> {
    if covered.is_some_and(|t| t > seqno) {
        return None;
    }
    match kind {
        ValueKind::Put => Some(value.to_vec()),
        _ => None,
    }
}

/// True when a source whose newest seqno is `max_seqno` holds only versions that the range
/// tombstone seqno `covered` hides: its versions of the key (and, the sources being newest
/// first, those of every older source) are all deleted, so it need not be read.
fn hidden_below(covered: Option<SeqNo>, max_seqno: Option<SeqNo>) -> bool {
    covered.is_some_and(|t| max_seqno.is_none_or(|m| m < t))
}

/// One stored version of a key, as reported by [`crate::Db::key_versions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyVersion {
    /// Where it is: `memtable N`, `frozen memtable N` or `L<level> table N`.
    pub source: String,
    /// Its sequence number.
    pub seqno: SeqNo,
    /// Put, delete, single delete, or a range delete covering the key (then `source` also
    /// names the range).
    pub kind: ValueKind,
    /// Length of its value (for a range delete: of its end key).
    pub value_len: usize,
}

/// True when `key` lies within the key range of a table (its entries and range tombstones;
/// a largest key that is a range end is exclusive).
fn covers(handle: &TableHandle, key: &[u8]) -> bool {
    handle.meta.contains_user_key(key)
}

/// Folds the range tombstones of `handle` covering `key` (seqno <= `snapshot`) into
/// `covered`; a table without range tombstones costs one branch.
#[inline]
fn fold_table_tombstones(
    covered: &mut Option<SeqNo>,
    handle: &TableHandle,
    table: &Table,
    key: &[u8],
    snapshot: SeqNo,
) {
    if handle.has_range_tombstones() {
        *covered = (*covered).max(table.max_covering_tombstone_seqno(key, snapshot));
    }
}

impl CfView {
    /// The table levels of this column family (L0 newest first, then L1...).
    pub(crate) fn levels(&self) -> &[Vec<Arc<TableHandle>>] {
        self.version.levels(self.cf_id)
    }

    /// About how many entries (versions and tombstones) lie from `lower` (inclusive) to
    /// `upper` (exclusive; `None`: no end): the tables' share by their index blocks
    /// ([`riptide_sstable::Table::approximate_entries`]: a block's resolution, one data block
    /// per table sampled for the density; with the lower bound that leaves out each table's
    /// first block of the range), plus the memtables' entries, counted one by one (into both
    /// figures) only while the lower bound is below `memtable_limit`: a range the tables
    /// surely put at the limit or more is not walked in the memtables at all (walking up to
    /// the limit in each memtable was most of the cost of the optimizer's estimates in
    /// TPC-C's Payment, whose customer ranges have hundreds of fresh versions in the
    /// memtable), and the walk stops when the lower bound reaches the limit. Once a walk
    /// stops there, what that memtable holds beyond it and what the memtables not walked
    /// hold is estimated from their skiplists' upper levels (`Memtable::estimate_entries`,
    /// into `about` only): without it, a table whose rows were all in the memtables had
    /// every large range put at the limit, and MariaDB preferred an index range over 99%
    /// of the rows to a table scan.
    pub(crate) fn approximate_entries(
        &self,
        lower: &[u8],
        upper: Option<&[u8]>,
        memtable_limit: u64,
    ) -> Result<EntryEstimate> {
        let mut total = EntryEstimate::default();
        for handle in self.tables_within(Some(lower), upper) {
            total = total + handle.table()?.approximate_entries(lower, upper)?;
        }
        let target = seek_key(lower, MAX_SEQNO);
        // The tables alone put the range at the limit: the memtables are left out (the
        // range is large whatever they add, and this is the common case the optimizer asks
        // about, so it stays cheap).
        if total.at_least >= memtable_limit {
            return Ok(total);
        }
        let mut counted = 0u64;
        let mut walk_hit_limit = false;
        for mem in std::iter::once(&self.mem).chain(self.imms.iter()) {
            // Counted while below the limit; once a walk reaches it, the rest of that
            // memtable and the other memtables are estimated from their skiplists' upper
            // levels, so a large range that lives in the memtables is not put at the limit.
            let mut walked = 0u64;
            if !walk_hit_limit {
                let mut it = mem.iter();
                it.seek(&target)?;
                while it.valid() {
                    if upper.is_some_and(|u| user_key(it.key()) >= u) {
                        break;
                    }
                    if total.at_least.saturating_add(counted + walked) >= memtable_limit {
                        walk_hit_limit = true;
                        break;
                    }
                    walked += 1;
                    it.next()?;
                }
            }
            counted += walked;
            let about = if walk_hit_limit {
                walked.max(mem.estimate_entries(lower, upper))
            } else {
                walked
            };
            total = total
                + EntryEstimate {
                    about,
                    at_least: walked,
                };
        }
        Ok(total)
    }

    /// About how many bytes of table files hold keys from `lower` (inclusive) to `upper`
    /// (exclusive; `None`: no end), per level (`[0]` is L0; one entry per level of the
    /// view): a file wholly inside the range counts whole, one that straddles a bound by the
    /// data-block offsets of the bounds in its index block
    /// ([`riptide_sstable::Table::approximate_offset_of`], RocksDB's approximate sizes).
    /// Reads index blocks only.
    pub(crate) fn approximate_bytes_by_level(
        &self,
        lower: &[u8],
        upper: Option<&[u8]>,
    ) -> Result<Vec<u64>> {
        let levels = self.levels();
        let mut bytes = vec![0u64; levels.len()];
        for (n, level) in levels.iter().enumerate() {
            let files: Box<dyn Iterator<Item = &Arc<TableHandle>>> = if n == 0 {
                Box::new(Self::l0_within(level, Some(lower), upper))
            } else {
                Box::new(Self::run_within(level, Some(lower), upper).iter())
            };
            for h in files {
                let share = Self::bytes_within(h, lower, upper)?;
                if let Some(b) = bytes.get_mut(n) {
                    *b = b.saturating_add(share);
                }
            }
        }
        Ok(bytes)
    }

    /// About how many bytes of table `h` hold keys in [`lower`, `upper`): the whole file when
    /// it lies inside the range, else cut at the data blocks the bounds fall in.
    fn bytes_within(h: &TableHandle, lower: &[u8], upper: Option<&[u8]>) -> Result<u64> {
        let starts_inside = h.meta.smallest_user_key() >= lower;
        let ends_inside = upper.is_none_or(|u| h.meta.ends_before(u));
        if starts_inside && ends_inside {
            return Ok(h.meta.file_size);
        }
        let table = h.table()?;
        let start = if starts_inside {
            0
        } else {
            table.approximate_offset_of(lower)?
        };
        let end = match upper {
            Some(u) if !ends_inside => table.approximate_offset_of(u)?,
            _ => h.meta.file_size,
        };
        Ok(end.saturating_sub(start))
    }

    /// Up to `n` distinct user keys in [`lower`, `upper`), in order, spread evenly over the
    /// bytes the tables hold in the range: each table gives index keys (data block
    /// boundaries, [`riptide_sstable::Table::index_keys`]) in proportion to its bytes in the
    /// range, each standing for an equal share of them; the answer is the keys at the
    /// middles of `n` equal shares of all those bytes in key order. Reads index blocks
    /// only; memtables are not sampled (they hold at most the write buffers' bytes).
    pub(crate) fn sample_keys(
        &self,
        lower: &[u8],
        upper: Option<&[u8]>,
        n: usize,
    ) -> Result<Vec<Vec<u8>>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let mut shares = Vec::new();
        for h in self.tables_within(Some(lower), upper) {
            let bytes = Self::bytes_within(h, lower, upper)?;
            if bytes > 0 {
                shares.push((h, bytes));
            }
        }
        let total: u64 = shares.iter().map(|(_, b)| *b).sum();
        // Each table's keys and the bytes each stands for.
        let mut weighted: Vec<(Vec<u8>, f64)> = Vec::new();
        for (h, bytes) in shares {
            let want = (n as f64 * bytes as f64 / total as f64).ceil() as usize;
            let keys = h.table()?.index_keys(lower, upper, want.max(1))?;
            let each = bytes as f64 / keys.len().max(1) as f64;
            weighted.extend(keys.into_iter().map(|k| (k, each)));
        }
        weighted.sort_by(|a, b| a.0.cmp(&b.0));
        let sum: f64 = weighted.iter().map(|(_, w)| w).sum();
        let mut picked: Vec<Vec<u8>> = Vec::with_capacity(n.min(weighted.len()));
        let mut below = 0.0;
        for (key, w) in weighted {
            below += w;
            // The next pick is the key where the bytes so far pass the middle of the next
            // of `n` equal shares.
            let next_mid = (picked.len() as f64 + 0.5) * sum / n as f64;
            if picked.len() < n
                && below >= next_mid
                && picked.last().is_none_or(|last| *last != key)
            {
                picked.push(key);
            }
        }
        Ok(picked)
    }

    /// Bytes of this column family's tables.
    pub(crate) fn table_bytes(&self) -> u64 {
        self.levels()
            .iter()
            .flatten()
            .map(|f| f.meta.file_size)
            .sum()
    }

    /// Point lookup at `snapshot`, newest source first; the first source holding a version
    /// `<= snapshot` decides.
    ///
    /// Range tombstones: `covered` is the largest seqno (`<= snapshot`) of the range tombstones
    /// covering `key` in the sources consulted so far. A tombstone hides older versions in its
    /// own source and in every older one, so the version found is deleted iff `covered`
    /// exceeds its seqno. A source whose newest seqno is below `covered` is skipped unread.
    /// Without range tombstones anywhere this costs one atomic load per memtable and one
    /// branch per table consulted, nothing more.
    pub(crate) fn get(&self, key: &[u8], snapshot: SeqNo) -> Result<Option<Vec<u8>>> {
        let mut covered: Option<SeqNo> = None;
        for mem in std::iter::once(&self.mem).chain(self.imms.iter()) {
            if mem.has_range_tombstones() {
                covered = covered.max(mem.max_covering_seqno(key, snapshot));
            }
            if covered.is_some() && hidden_below(covered, mem.max_seqno()) {
                continue;
            }
            if let Some(found) = mem.get_with(key, snapshot, |seqno, kind, value| {
                resolve(covered, seqno, kind, value)
            }) {
                return Ok(found);
            }
        }
        let mut levels = self.levels().iter();
        if let Some(l0) = levels.next() {
            for handle in l0.iter().filter(|h| covers(h, key)) {
                let table = handle.table()?;
                fold_table_tombstones(&mut covered, handle, &table, key, snapshot);
                if hidden_below(covered, Some(handle.meta.max_seqno)) {
                    continue;
                }
                // The version is resolved in place: its value is copied once, into the answer.
                if let Some(found) = table.get_with(key, snapshot, |seqno, kind, value| {
                    resolve(covered, seqno, kind, value)
                })? {
                    return Ok(found);
                }
            }
        }
        for level in levels {
            // Sorted, non-overlapping: the only candidate is the first table that does not
            // end before the key.
            let i = level.partition_point(|h| h.meta.ends_before(key));
            let Some(handle) = level.get(i).filter(|h| covers(h, key)) else {
                continue;
            };
            let table = handle.table()?;
            fold_table_tombstones(&mut covered, handle, &table, key, snapshot);
            if !hidden_below(covered, Some(handle.meta.max_seqno))
                && let Some(found) = table.get_with(key, snapshot, |seqno, kind, value| {
                    resolve(covered, seqno, kind, value)
                })?
            {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// Whether some version of `key` newer than `seqno` exists (a put, a delete or a covering
    /// range tombstone, committed or being committed), and if so whether the newest one
    /// deletes the key. `None`: nothing newer. Used to validate transactions: sources whose
    /// newest sequence number is not above `seqno` are skipped unread, and the search stops
    /// at the first source holding any version of `key` (older sources only hold older ones).
    pub(crate) fn newer_version(&self, key: &[u8], seqno: SeqNo) -> Result<Option<NewerVersion>> {
        use riptide_common::key::MAX_SEQNO;
        let mut covered: Option<SeqNo> = None;
        let decide = |covered: Option<SeqNo>, found: Option<(SeqNo, ValueKind)>| {
            let newest_point = found.map(|(s, k)| (s, k != ValueKind::Put));
            let newest = match (newest_point, covered) {
                (Some((s, _)), Some(c)) if c > s => Some((c, true)),
                (Some(p), _) => Some(p),
                (None, Some(c)) => Some((c, true)),
                (None, None) => None,
            };
            newest
                .filter(|(s, _)| *s > seqno)
                .map(|(_, deleted)| NewerVersion { deleted })
        };
        for mem in std::iter::once(&self.mem).chain(self.imms.iter()) {
            if mem.max_seqno().is_none_or(|m| m <= seqno) {
                continue;
            }
            if mem.has_range_tombstones() {
                covered = covered.max(mem.max_covering_seqno(key, MAX_SEQNO));
            }
            if let Some(found) = mem.get_with(key, MAX_SEQNO, |s, kind, _| (s, kind)) {
                return Ok(decide(covered, Some(found)));
            }
        }
        for handle in self.levels().iter().flatten() {
            if handle.meta.max_seqno <= seqno || !covers(handle, key) {
                continue;
            }
            let table = handle.table()?;
            fold_table_tombstones(&mut covered, handle, &table, key, MAX_SEQNO);
            if let Some(v) = table.get(key, MAX_SEQNO)? {
                return Ok(decide(covered, Some((v.seqno, v.kind))));
            }
        }
        Ok(decide(covered, None))
    }

    /// The range tombstones of every source (memtables and tables) visible at `snapshot`,
    /// fragmented into one set; `None` when there is none (the iterator's fast path: tables
    /// without tombstones cost one branch each). Call this only after loading `snapshot`
    /// (every tombstone at or below it is then in its memtable or table).
    pub(crate) fn range_tombstone_set(
        &self,
        snapshot: SeqNo,
    ) -> Result<Option<Arc<RangeTombstoneSet>>> {
        let mems = std::iter::once(&self.mem)
            .chain(self.imms.iter())
            .filter(|m| m.has_range_tombstones())
            .map(|m| m.range_tombstone_set(snapshot));
        let tables = self
            .levels()
            .iter()
            .flatten()
            .filter(|h| h.has_range_tombstones())
            .map(|h| h.table().map(|t| t.range_tombstone_set(snapshot)))
            .collect::<Result<Vec<_>>>()?;
        let mut sets: Vec<Arc<RangeTombstoneSet>> =
            mems.chain(tables).filter(|s| !s.is_empty()).collect();
        Ok(match sets.len() {
            0 => None,
            1 => sets.pop(),
            _ => Some(Arc::new(RangeTombstoneSet::new(
                sets.iter().flat_map(|s| s.fragments().iter()),
                snapshot,
            ))),
        })
    }

    /// True when some source may hold a version of a key in `[start, end)` with a seqno in
    /// `(seqno, snapshot]`: a version newer than a range tombstone at `seqno` that a reader at
    /// `snapshot` sees. When false, every version a reader at `snapshot` sees in the range is
    /// deleted by that tombstone, and an iterator may seek past the whole range.
    ///
    /// Per source: one whose sequence numbers are all `<= seqno` or all `> snapshot` cannot;
    /// one whose sequence numbers are all in `(seqno, snapshot]` can iff it has any entry in
    /// the range (one seek: the active memtable usually has none there, so a live database
    /// still skips deleted ranges); one that straddles `seqno` is assumed to (answering
    /// exactly would mean walking the range, which is what the skip avoids).
    pub(crate) fn may_hold_newer_in_range(
        &self,
        start: &[u8],
        end: &[u8],
        seqno: SeqNo,
        snapshot: SeqNo,
    ) -> Result<bool> {
        use riptide_common::InternalIterator;
        use riptide_common::key::{MAX_SEQNO, seek_key};
        /// What the sequence-number bounds of a source say.
        enum Bounds {
            Cannot,
            IfAnyInRange,
            Assume,
        }
        let bounds = |min: Option<SeqNo>, max: Option<SeqNo>| match (min, max) {
            (Some(min), Some(max)) => {
                if max <= seqno || min > snapshot {
                    Bounds::Cannot
                } else if min > seqno {
                    Bounds::IfAnyInRange
                } else {
                    Bounds::Assume
                }
            }
            _ => Bounds::Cannot,
        };
        let any_in_range = |it: &mut dyn InternalIterator| -> Result<bool> {
            it.seek(&seek_key(start, MAX_SEQNO))?;
            Ok(it.valid() && user_key(it.key()) < end)
        };
        for m in std::iter::once(&self.mem).chain(self.imms.iter()) {
            match bounds(m.min_seqno(), m.max_seqno()) {
                Bounds::Cannot => {}
                Bounds::Assume => return Ok(true),
                Bounds::IfAnyInRange => {
                    if any_in_range(&mut m.iter())? {
                        return Ok(true);
                    }
                }
            }
        }
        for h in self.levels().iter().flatten() {
            if user_key(&h.meta.smallest) >= end || h.meta.ends_before(start) {
                continue;
            }
            match bounds(Some(h.meta.min_seqno), Some(h.meta.max_seqno)) {
                Bounds::Cannot => {}
                Bounds::Assume => return Ok(true),
                Bounds::IfAnyInRange => {
                    if any_in_range(&mut h.iter())? {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Every stored version of `key` in every source, newest source first: (source name,
    /// seqno, kind). For debugging and tests, like RocksDB's `GetAllKeyVersions`.
    pub(crate) fn key_versions(&self, key: &[u8]) -> Result<Vec<KeyVersion>> {
        use riptide_common::InternalIterator;
        use riptide_common::key::{MAX_SEQNO, parse_internal_key, seek_key};
        fn collect(
            source: String,
            it: &mut dyn InternalIterator,
            key: &[u8],
            out: &mut Vec<KeyVersion>,
        ) -> Result<()> {
            it.seek(&seek_key(key, MAX_SEQNO))?;
            while it.valid() {
                let ikey = parse_internal_key(it.key())?;
                if ikey.user_key != key {
                    break;
                }
                out.push(KeyVersion {
                    source: source.clone(),
                    seqno: ikey.seqno,
                    kind: ikey.kind,
                    value_len: it.value().len(),
                });
                it.next()?;
            }
            Ok(())
        }
        fn range_deletes<'a>(
            source: &str,
            tombstones: impl Iterator<Item = &'a RangeTombstone>,
            key: &[u8],
            out: &mut Vec<KeyVersion>,
        ) {
            for t in tombstones.filter(|t| t.contains(key)) {
                out.push(KeyVersion {
                    source: format!(
                        "{source} range [{}, {})",
                        String::from_utf8_lossy(&t.start),
                        String::from_utf8_lossy(&t.end)
                    ),
                    seqno: t.seqno,
                    kind: ValueKind::RangeDelete,
                    value_len: t.end.len(),
                });
            }
        }
        let mut out = Vec::new();
        let mem_range_deletes = |source: &str, mem: &Memtable, out: &mut Vec<KeyVersion>| {
            if mem.has_range_tombstones() {
                range_deletes(source, mem.range_tombstones().iter(), key, out);
            }
        };
        let source = format!("memtable {}", self.mem.id());
        mem_range_deletes(&source, &self.mem, &mut out);
        collect(source, &mut self.mem.iter(), key, &mut out)?;
        for m in &self.imms {
            let source = format!("frozen memtable {}", m.id());
            mem_range_deletes(&source, m, &mut out);
            collect(source, &mut m.iter(), key, &mut out)?;
        }
        for (level, files) in self.levels().iter().enumerate() {
            for h in files {
                let source = format!("L{level} table {}", h.meta.number);
                if h.has_range_tombstones() {
                    let tombstones = h.table()?.range_tombstones()?;
                    range_deletes(&source, tombstones.iter(), key, &mut out);
                }
                collect(source, &mut h.iter(), key, &mut out)?;
            }
        }
        Ok(out)
    }

    /// A merge of every source, newest first.
    pub(crate) fn merged_iter(&self) -> MergingIterator {
        self.merged_iter_within(None, None)
    }

    /// [`CfView::merged_iter`] for an iterator that never leaves [`lower`, `upper`): the
    /// tables whose key range (range tombstones included) lies wholly outside are left out.
    /// Each L0 table within is a child of the merge; each deeper level's run within is one
    /// child, a [`LevelIterator`] that opens and seeks only the table holding the target, so
    /// a seek costs one table seek per level however many tables the bounds span (the
    /// handler bounds an iterator by a whole index, and a big index spans many tables of a
    /// level: TPC-C's stock at 42 warehouses, some twenty by its row sizes).
    pub(crate) fn merged_iter_within(
        &self,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> MergingIterator {
        let mut children: Vec<BoxedIterator> = Vec::new();
        children.push(Box::new(self.mem.iter()));
        for m in &self.imms {
            children.push(Box::new(m.iter()));
        }
        let mut levels = self.levels().iter();
        for handle in levels
            .next()
            .into_iter()
            .flat_map(|l0| Self::l0_within(l0, lower, upper))
        {
            children.push(Box::new(handle.iter()));
        }
        for level in levels {
            match Self::run_within(level, lower, upper) {
                [] => {}
                [one] => children.push(Box::new(one.iter())),
                run => children.push(Box::new(LevelIterator::new(run.to_vec()))),
            }
        }
        MergingIterator::new(children)
    }

    /// The L0 tables (`l0`, newest first) that may hold keys in [`lower`, `upper`).
    fn l0_within<'a>(
        l0: &'a [Arc<TableHandle>],
        lower: Option<&'a [u8]>,
        upper: Option<&'a [u8]>,
    ) -> impl Iterator<Item = &'a Arc<TableHandle>> + 'a {
        l0.iter().filter(move |h| {
            lower.is_none_or(|l| !h.meta.ends_before(l))
                && upper.is_none_or(|u| h.meta.smallest_user_key() < u)
        })
    }

    /// The run of a sorted, non-overlapping `level` that may hold keys in [`lower`,
    /// `upper`), found by binary search at both ends (a level holds hundreds of tables).
    fn run_within<'a>(
        level: &'a [Arc<TableHandle>],
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
    ) -> &'a [Arc<TableHandle>] {
        let first = lower.map_or(0, |l| level.partition_point(|h| h.meta.ends_before(l)));
        let end = upper.map_or(level.len(), |u| {
            level.partition_point(|h| h.meta.smallest_user_key() < u)
        });
        level.get(first..end.max(first)).unwrap_or_default()
    }

    /// The tables that may hold keys in [`lower`, `upper`) (`None`: unbounded), newest level
    /// first: every overlapping L0 table, then in each sorted, non-overlapping level the run
    /// that follows the first table not ending before `lower`, found by binary search (not a
    /// look at every table: iterators and range estimates are made per statement, and a
    /// level holds hundreds of tables).
    fn tables_within<'a>(
        &'a self,
        lower: Option<&'a [u8]>,
        upper: Option<&'a [u8]>,
    ) -> impl Iterator<Item = &'a Arc<TableHandle>> + 'a {
        let mut levels = self.levels().iter();
        let l0 = levels
            .next()
            .into_iter()
            .flat_map(move |l0| Self::l0_within(l0, lower, upper));
        let sorted = levels.flat_map(move |level| Self::run_within(level, lower, upper));
        l0.chain(sorted)
    }
}

/// What [`CfView::newer_version`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NewerVersion {
    /// The newest version deletes the key (a delete, single delete or range tombstone).
    pub(crate) deleted: bool,
}

/// Everything the engine keeps for one column family.
#[derive(Debug)]
pub(crate) struct CfData {
    pub(crate) id: CfId,
    pub(crate) name: String,
    pub(crate) dropped: AtomicBool,
    pub(crate) view: RwLock<Arc<CfView>>,
    /// Estimated bytes compaction must still rewrite, refreshed by the background worker.
    pub(crate) pending_compaction_bytes: AtomicU64,
    /// Bytes of the column family's tables in the current view's version (drives
    /// `Options::memtable_limit`).
    table_bytes: AtomicU64,
    /// Set while a flush thread flushes this column family (see [`CfData::claim_flush`]).
    flushing: AtomicBool,
}

/// A flush thread's exclusive right to flush one column family; released when dropped.
pub(crate) struct FlushClaim<'a>(&'a AtomicBool);

impl Drop for FlushClaim<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl CfData {
    pub(crate) fn new(id: CfId, name: String, view: CfView) -> Arc<CfData> {
        let table_bytes = AtomicU64::new(view.table_bytes());
        Arc::new(CfData {
            id,
            name,
            dropped: AtomicBool::new(false),
            view: RwLock::new(Arc::new(view)),
            pending_compaction_bytes: AtomicU64::new(0),
            table_bytes,
            flushing: AtomicBool::new(false),
        })
    }

    /// The right to flush this column family's memtables, unless another flush thread has
    /// it: one flush at a time per column family keeps its flushes in memtable order.
    pub(crate) fn claim_flush(&self) -> Option<FlushClaim<'_>> {
        self.flushing
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then_some(FlushClaim(&self.flushing))
    }

    /// True while a flush thread holds [`CfData::claim_flush`].
    pub(crate) fn is_flushing(&self) -> bool {
        self.flushing.load(Ordering::Acquire)
    }

    /// Bytes of the column family's tables now.
    pub(crate) fn table_bytes(&self) -> u64 {
        self.table_bytes.load(Ordering::Relaxed)
    }

    /// The current view (cheap: one Arc clone under a read lock).
    pub(crate) fn view(&self) -> Arc<CfView> {
        Arc::clone(&self.view.read())
    }

    /// Replaces the view with `f(current)`.
    pub(crate) fn update_view(&self, f: impl FnOnce(&CfView) -> CfView) {
        let mut guard = self.view.write();
        let next = f(&guard);
        if !Arc::ptr_eq(&next.version, &guard.version) {
            self.table_bytes
                .store(next.table_bytes(), Ordering::Relaxed);
        }
        *guard = Arc::new(next);
    }

    pub(crate) fn pending_compaction_bytes(&self) -> u64 {
        self.pending_compaction_bytes.load(Ordering::Relaxed)
    }

    pub(crate) fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }
}

/// A handle to a column family, cheap to clone. Obtained from [`crate::Db::create_cf`] or
/// [`crate::Db::cf`]. Using it after the column family was dropped fails with
/// `ErrorKind::NotFound`.
#[derive(Debug, Clone)]
pub struct ColumnFamily {
    pub(crate) data: Arc<CfData>,
}

impl ColumnFamily {
    /// The column family's name.
    pub fn name(&self) -> &str {
        &self.data.name
    }

    /// The column family's numeric id (stable for its lifetime, never reused).
    pub fn id(&self) -> CfId {
        self.data.id
    }
}
