//! Column families: independent key spaces that share one WAL, so a batch across them is
//! atomic. Each has its own memtables and its own levels of tables.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::RwLock;
use riptide_common::key::user_key;
use riptide_common::merge::MergingIterator;
use riptide_common::{BoxedIterator, CfId, Result, SeqNo, ValueKind};
use riptide_compaction::{TableHandle, Version};
use riptide_memtable::Memtable;

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

/// The newest visible version of a key in one source: `Some(Some(v))` a value,
/// `Some(None)` a tombstone, `None` nothing here (look in older sources).
type Lookup = Option<Option<Vec<u8>>>;

fn resolve(kind: ValueKind, value: Vec<u8>) -> Lookup {
    match kind {
        ValueKind::Put => Some(Some(value)),
        _ => Some(None),
    }
}

/// One stored version of a key, as reported by [`crate::Db::key_versions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyVersion {
    /// Where it is: `memtable N`, `frozen memtable N` or `L<level> table N`.
    pub source: String,
    /// Its sequence number.
    pub seqno: SeqNo,
    /// Put, delete or single delete.
    pub kind: ValueKind,
    /// Length of its value.
    pub value_len: usize,
}

/// True when `key` lies within the user-key range of a table.
fn covers(handle: &TableHandle, key: &[u8]) -> bool {
    user_key(&handle.meta.smallest) <= key && key <= user_key(&handle.meta.largest)
}

impl CfView {
    /// The table levels of this column family (L0 newest first, then L1...).
    pub(crate) fn levels(&self) -> &[Vec<Arc<TableHandle>>] {
        self.version.levels(self.cf_id)
    }

    /// Point lookup at `snapshot`, newest source first.
    pub(crate) fn get(&self, key: &[u8], snapshot: SeqNo) -> Result<Option<Vec<u8>>> {
        for mem in std::iter::once(&self.mem).chain(self.imms.iter()) {
            if let Some(v) = mem.get(key, snapshot) {
                return Ok(resolve(v.kind, v.value).flatten());
            }
        }
        let mut levels = self.levels().iter();
        if let Some(l0) = levels.next() {
            for handle in l0.iter().filter(|h| covers(h, key)) {
                if let Some(v) = handle.table.get(key, snapshot)? {
                    return Ok(resolve(v.kind, v.value).flatten());
                }
            }
        }
        for level in levels {
            // Sorted, non-overlapping: the only candidate is the first table whose largest
            // user key is >= key.
            let i = level.partition_point(|h| user_key(&h.meta.largest) < key);
            if let Some(handle) = level.get(i).filter(|h| covers(h, key))
                && let Some(v) = handle.table.get(key, snapshot)?
            {
                return Ok(resolve(v.kind, v.value).flatten());
            }
        }
        Ok(None)
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
        let mut out = Vec::new();
        collect(
            format!("memtable {}", self.mem.id()),
            &mut self.mem.iter(),
            key,
            &mut out,
        )?;
        for m in &self.imms {
            collect(
                format!("frozen memtable {}", m.id()),
                &mut m.iter(),
                key,
                &mut out,
            )?;
        }
        for (level, files) in self.levels().iter().enumerate() {
            for h in files {
                collect(
                    format!("L{level} table {}", h.meta.number),
                    &mut h.iter(),
                    key,
                    &mut out,
                )?;
            }
        }
        Ok(out)
    }

    /// A merge of every source, newest first.
    pub(crate) fn merged_iter(&self) -> MergingIterator {
        let mut children: Vec<BoxedIterator> = Vec::new();
        children.push(Box::new(self.mem.iter()));
        for m in &self.imms {
            children.push(Box::new(m.iter()));
        }
        for level in self.levels() {
            for handle in level {
                children.push(Box::new(handle.iter()));
            }
        }
        MergingIterator::new(children)
    }
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
}

impl CfData {
    pub(crate) fn new(id: CfId, name: String, view: CfView) -> Arc<CfData> {
        Arc::new(CfData {
            id,
            name,
            dropped: AtomicBool::new(false),
            view: RwLock::new(Arc::new(view)),
            pending_compaction_bytes: AtomicU64::new(0),
        })
    }

    /// The current view (cheap: one Arc clone under a read lock).
    pub(crate) fn view(&self) -> Arc<CfView> {
        Arc::clone(&self.view.read())
    }

    /// Replaces the view with `f(current)`.
    pub(crate) fn update_view(&self, f: impl FnOnce(&CfView) -> CfView) {
        let mut guard = self.view.write();
        let next = f(&guard);
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
