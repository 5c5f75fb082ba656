//! The memtable of the Riptide storage engine: an ordered, concurrent, in-memory table of
//! internal keys, and the list of memtables (active + immutable) the engine keeps.
//!
//! # Design
//!
//! A [`Memtable`] is an insert-only skiplist of entries `(encoded internal key, value)` ordered
//! by [`riptide_common::key::compare_internal_keys`] (user key ascending, newest version first).
//!
//! **Arena.** Nodes are not individually allocated. Each node is one block bump-allocated from
//! 1 MiB chunks (an entry bigger than 128 KiB gets a dedicated chunk of its own), mapped from
//! the kernel rather than taken from `malloc`, so a dropped memtable returns its memory to the
//! OS instead of leaving holes in the heap. A node holds its tower of next-pointers, a 16-byte
//! header (key and value lengths), the encoded internal key, and the value, contiguously. An
//! iterator's `key()`/`value()` are slices into the arena, no copy.
//! Nothing is freed before the memtable is dropped, then every chunk at once; this is what makes
//! lock-free reading simple: a node, once seen, stays valid for as long as the list is alive
//! (iterators own an `Arc` of it). The arena takes a short mutex per allocation; everything else
//! is lock-free. [`Memtable::approximate_memory_usage`] reports the arena bytes in use.
//!
//! **Concurrency.** [`Memtable::insert`] takes `&self` and may run on many threads at once,
//! concurrently with readers ([`Memtable::get`], [`MemtableIterator`]), which never block. An
//! insert draws a random height (each level kept with probability 1/4, at most 12), allocates
//! and fully initialises its node, finds its predecessor and successor at every level, and then
//! links the node bottom-up, one compare-and-swap per level on the predecessor's link (as in
//! RocksDB's `InlineSkipList::InsertConcurrently`). When a CAS fails because another node was
//! linked there meanwhile, the search for that level resumes from the same predecessor (keys
//! never change and nodes are never removed, so it is still before the new key). Linking level
//! 0 is the moment the entry becomes visible; the higher levels are only shortcuts. An insert of
//! an internal key that is already present (same user key, seqno and kind; never done by the
//! engine) is detected at level 0 and dropped; its node stays unreachable in the arena.
//!
//! **Where a search starts.** Each thread remembers where its last insert went (per level, the
//! node before and after it: RocksDB's splice). The next insert starts there when, at the lowest
//! level where nothing was inserted between those two nodes since, the new key falls between
//! them; otherwise it walks from the top. Ascending keys (auto-increment primary keys, sorted
//! loads, one thread per key range) then cost a few comparisons instead of a walk from the
//! head: 1.56x the inserts per second in `benches/micro`
//! (`memtable_insert/1_thread_100k_ascending`, 8.65 against 5.53 M/s), for about 4% less on random keys (1.85 against 1.93 M/s), whose
//! insert checks the splice and finds it does not fit.
//!
//! **Memory ordering.** A node's bytes are written with plain stores before it is published;
//! the publishing CAS uses `Release` and readers load every link with `Acquire`, so a reader that
//! reaches a node sees it fully initialised. Only links are ever written after publication, and
//! only atomically. The list height is a `Relaxed` hint: a stale value only makes a search start
//! lower, and a new one whose tall node is not linked yet only shows null links at the top of
//! the head, which the search descends past. Readers therefore always see a sorted list in which
//! every insert that finished before they started is present.
//!
//! **Iteration.** `next` follows level 0; `prev` searches for the predecessor from the top
//! (O(log n), as in LevelDB) instead of keeping back-pointers.
//!
//! `unsafe` code lives in two modules, each block with the invariant that justifies it:
//! `skiplist` (node layout and access, and the list's and cursor's `Send`/`Sync`) and `chunk`
//! (mapping and unmapping the arena's memory with `mmap`/`munmap`, and the chunk's
//! `Send`/`Sync`). The arena between them is safe code: it hands out raw pointers into its
//! chunks, and only the skiplist dereferences them.
//!
//! **Range tombstones.** A [`ValueKind::RangeDelete`] entry is not put in the skiplist: it goes
//! to a small lock-protected vector beside it ([`Memtable::range_tombstones`]), with an atomic
//! count so that readers of a memtable without range tombstones never take the lock. Lookups
//! use a fragmented [`RangeTombstoneSet`] cached until the next range tombstone arrives.
//!
//! [`ValueKind::RangeDelete`]: riptide_common::ValueKind::RangeDelete
//! [`RangeTombstoneSet`]: riptide_common::range_del::RangeTombstoneSet
//!
//! **Key filter.** A memtable made with [`Memtable::with_key_filter`] keeps a blocked bloom
//! filter over its point entries' user keys (one cache line per key), so a point lookup of a
//! key it does not hold (most lookups of a database bigger than its memtables) skips the
//! skiplist search, a dozen or more cache misses. Iterators do not use it.
//!
//! [`MemtableList`] holds the active memtable and the queue of immutable ones awaiting flush.

mod arena;
mod chunk;
mod filter;
mod iter;
mod list;
mod memtable;
mod range_tombstones;
mod skiplist;

pub use chunk::mapped_bytes;
pub use iter::MemtableIterator;
pub use list::MemtableList;
pub use memtable::{Memtable, MemtableValue};
