//! The library's heap as its allocator sees it: with the `jemalloc` feature (the MariaDB
//! plugin's build), jemalloc's own statistics of every Rust allocation of the library, as
//! library statistics ([`crate::calls::LIBRARY_STATS`]: the plugin's status variables
//! `Riptide_heap_allocated_bytes` and `Riptide_heap_resident_bytes`). They tell a DBA (and
//! a memory investigation) how much of the server's resident memory is the engine's, and how
//! much of that is live data against what the allocator holds for it. Without the feature
//! the library uses the host's allocator, which it cannot ask: both read 0.

/// Bytes the library has allocated and not freed (jemalloc `stats.allocated`): blocks in the
/// block cache, memtables, write buffers, open tables' metadata, everything live.
pub(crate) fn allocated() -> u64 {
    imp::allocated()
}

/// Bytes of physical memory the library's allocator holds (jemalloc `stats.resident`): the
/// live bytes plus its metadata, the free pages it has not yet given back, and
/// fragmentation. Resident minus allocated is the allocator's overhead.
pub(crate) fn resident() -> u64 {
    imp::resident()
}

#[cfg(feature = "jemalloc")]
mod imp {
    use tikv_jemalloc_ctl::{epoch, stats};

    /// jemalloc caches its statistics; advancing the epoch refreshes them. A failure leaves
    /// the last refreshed values, which is all a status variable can show then.
    fn refresh() {
        let _ = epoch::advance();
    }

    pub(super) fn allocated() -> u64 {
        refresh();
        stats::allocated::read().map_or(0, |b| b as u64)
    }

    pub(super) fn resident() -> u64 {
        refresh();
        stats::resident::read().map_or(0, |b| b as u64)
    }
}

#[cfg(not(feature = "jemalloc"))]
mod imp {
    pub(super) fn allocated() -> u64 {
        0
    }

    pub(super) fn resident() -> u64 {
        0
    }
}

#[cfg(all(test, feature = "jemalloc"))]
mod tests {
    use super::*;

    #[test]
    fn a_large_allocation_is_counted_while_it_lives() {
        let before = allocated();
        let buf = vec![1u8; 64 << 20];
        let during = allocated();
        assert!(
            during >= before + (60 << 20),
            "64 MiB live: allocated {before} -> {during}"
        );
        assert!(
            resident() >= during,
            "resident {} < allocated {during}",
            resident()
        );
        drop(buf);
        assert!(allocated() + (60 << 20) <= during);
    }
}
