//! How many times the handler layer's C functions (`riptide_handler_*`, `riptide_htable_*`,
//! `riptide_hsession_*`, `riptide_hcursor_*`) were called: what the MariaDB plugin costs in
//! calls across the boundary per row (each call also checks its handles and runs under the
//! panic guard). It is a statistic of the library ([`LIBRARY_STATS`], after the engine's in
//! the statistics table), so the MariaDB plugin shows it as the status variable
//! `Riptide_handler_calls`; an mtr test (`ffi_calls`) bounds the calls per row of everyday
//! statements.
//!
//! A striped counter: each thread adds to one of [`STRIPES`] cache-line-sized cells, so
//! connections counting at the same time do not fight over one cache line.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use riptide::StatKind;

/// Number of cells.
const STRIPES: usize = 16;

/// One cell, alone on its cache line.
#[repr(align(64))]
struct Cell64(AtomicU64);

static COUNTS: [Cell64; STRIPES] = [const { Cell64(AtomicU64::new(0)) }; STRIPES];
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's cell (assigned round-robin at its first call).
    static STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Counts one call.
pub(crate) fn count() {
    let i = STRIPE.with(|s| {
        let mut i = s.get();
        if i == usize::MAX {
            i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
            s.set(i);
        }
        i
    });
    if let Some(c) = COUNTS.get(i) {
        c.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// A statistic the C library keeps itself: name, one-line doc, kind, current value.
pub(crate) type LibraryStat = (&'static str, &'static str, StatKind, fn() -> u64);

/// The library's own statistics, listed after the engine's in the statistics table
/// (`riptide_stat_at`, `riptide_stats_fill`). A new one is one line here.
pub(crate) const LIBRARY_STATS: &[LibraryStat] = &[
    (
        "handler_calls",
        "calls of the handler layer's C functions (riptide_handler_*, _htable_*, _hsession_*, \
         _hcursor_*) since the library was loaded",
        StatKind::Counter,
        total,
    ),
    (
        "heap_allocated_bytes",
        "bytes the library has allocated and not freed, by its allocator's count (jemalloc \
         stats.allocated; 0 when the library is built without jemalloc)",
        StatKind::Gauge,
        crate::heap::allocated,
    ),
    (
        "heap_resident_bytes",
        "bytes of memory the library's allocator holds: the allocated bytes plus its free \
         pages not yet returned, metadata and fragmentation (jemalloc stats.resident; 0 \
         without jemalloc)",
        StatKind::Gauge,
        crate::heap::resident,
    ),
    (
        "memtable_mapped_bytes",
        "bytes of memtable memory mapped now, outside the allocator's count: memtables being \
         written, waiting for their flush, and flushed ones a reader still holds (every \
         database of the process)",
        StatKind::Gauge,
        riptide::memtable_mapped_bytes,
    ),
];

/// The count, summed over the cells.
fn total() -> u64 {
    COUNTS.iter().map(|c| c.0.load(Ordering::Relaxed)).sum()
}

/// Calls of the handler layer's C functions since the library was loaded (all threads).
#[unsafe(no_mangle)]
pub extern "C" fn riptide_handler_calls() -> u64 {
    total()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_from_every_thread_are_summed() {
        let before = riptide_handler_calls();
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..1000 {
                        count();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("counting thread");
        }
        assert!(riptide_handler_calls() >= before + 4000);
    }
}
