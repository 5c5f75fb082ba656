//! A bump allocator that hands out 8-byte-aligned blocks from large chunks and frees them all at
//! once when it is dropped.
//!
//! This module contains no `unsafe`: chunks are [`Chunk`]s (memory mapped from the kernel, so
//! that dropping the arena returns it to the OS; see `chunk.rs`) handed out as raw pointers into
//! them. A chunk is never touched again except to be unmapped with the arena; the caller (the
//! skiplist) is the only one that reads or writes the memory, and it writes every byte before it
//! reads it.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::chunk::Chunk;

/// Size of a regular chunk in bytes.
pub(crate) const CHUNK_SIZE: usize = 1 << 20;

/// Requests larger than this get a dedicated chunk of their own, so that a huge entry neither
/// wastes the tail of the current chunk nor forces a chunk switch that wastes it.
const DEDICATED_THRESHOLD: usize = CHUNK_SIZE / 8;

/// Alignment of every block handed out (that of `u64` and of pointers).
pub(crate) const ALIGN: usize = std::mem::align_of::<u64>();

const _: () = assert!(ALIGN == 8 && ALIGN >= std::mem::align_of::<usize>());

/// The mutable state of the arena, behind its mutex.
#[derive(Debug, Default)]
struct Inner {
    /// The regular chunks; the last one is the one being bump-allocated from.
    chunks: Vec<Chunk>,
    /// Dedicated chunks of huge blocks.
    dedicated: Vec<Chunk>,
    /// Offset in bytes of the first free byte of the current chunk.
    offset: usize,
    /// Bytes of the current chunk still free.
    remaining: usize,
    /// Bytes reserved from the allocator by all chunks.
    reserved: usize,
}

/// A concurrent bump allocator. Blocks live as long as the arena.
#[derive(Debug, Default)]
pub(crate) struct Arena {
    inner: Mutex<Inner>,
    /// Bytes reserved minus the free tail of the current chunk: what the blocks handed out
    /// occupy, including alignment padding and the tails of abandoned chunks.
    usage: AtomicUsize,
    /// Copy of `Inner::reserved`, readable without the lock.
    reserved: AtomicUsize,
}

impl Arena {
    /// An empty arena; the first chunk is reserved on the first allocation.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A block of `size` bytes (at least 1), aligned to [`ALIGN`], valid for reads and writes
    /// until the arena is dropped and handed out to no one else. Its content is uninitialised.
    pub(crate) fn alloc(&self, size: usize) -> NonNull<u8> {
        let size = size.max(1).saturating_add(ALIGN - 1) & !(ALIGN - 1);
        let words = size / ALIGN;
        let mut inner = self.inner.lock();
        let ptr = if size > DEDICATED_THRESHOLD {
            let chunk = Chunk::new(words);
            let ptr = chunk.as_mut_ptr().cast::<u8>();
            inner.dedicated.push(chunk);
            inner.reserved = inner.reserved.saturating_add(size);
            ptr
        } else {
            if size > inner.remaining {
                inner.chunks.push(Chunk::new(CHUNK_SIZE / ALIGN));
                inner.offset = 0;
                inner.remaining = CHUNK_SIZE;
                inner.reserved = inner.reserved.saturating_add(CHUNK_SIZE);
            }
            let offset = inner.offset;
            inner.offset += size;
            inner.remaining -= size;
            match inner.chunks.last() {
                // `offset + size <= CHUNK_SIZE`, so the block lies inside the chunk's capacity.
                Some(chunk) => chunk.as_mut_ptr().cast::<u8>().wrapping_add(offset),
                // Unreachable: a chunk was pushed above if there was none (remaining was 0).
                None => std::process::abort(),
            }
        };
        self.usage
            .store(inner.reserved - inner.remaining, Ordering::Relaxed);
        self.reserved.store(inner.reserved, Ordering::Relaxed);
        drop(inner);
        match NonNull::new(ptr) {
            Some(p) => p,
            // A chunk's base pointer is never null.
            None => std::process::abort(),
        }
    }

    /// Bytes occupied by the blocks handed out so far (including padding and the unused tails
    /// of full chunks, excluding the free tail of the current chunk).
    pub(crate) fn memory_usage(&self) -> usize {
        self.usage.load(Ordering::Relaxed)
    }

    /// Bytes reserved from the system (mapped chunks).
    pub(crate) fn reserved(&self) -> usize {
        self.reserved.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_disjoint_and_counted() {
        let a = Arena::new();
        assert_eq!(a.memory_usage(), 0);
        let p1 = a.alloc(3).as_ptr() as usize;
        let p2 = a.alloc(17).as_ptr() as usize;
        assert_eq!(p1 % ALIGN, 0);
        assert_eq!(p2 % ALIGN, 0);
        assert!(p2 >= p1 + 8);
        assert_eq!(a.memory_usage(), 8 + 24);
        assert_eq!(a.reserved(), CHUNK_SIZE);
    }

    #[test]
    fn huge_blocks_get_dedicated_chunks() {
        let a = Arena::new();
        a.alloc(16);
        a.alloc(CHUNK_SIZE * 3);
        assert_eq!(a.reserved(), CHUNK_SIZE * 4);
        assert_eq!(a.memory_usage(), CHUNK_SIZE * 3 + 16);
        // The current chunk still serves small blocks.
        a.alloc(16);
        assert_eq!(a.reserved(), CHUNK_SIZE * 4);
    }

    #[test]
    fn full_chunks_are_replaced() {
        let a = Arena::new();
        for _ in 0..(CHUNK_SIZE / 4096) * 2 + 1 {
            a.alloc(4096);
        }
        assert_eq!(a.reserved(), CHUNK_SIZE * 3);
        assert_eq!(a.memory_usage(), CHUNK_SIZE * 2 + 4096);
    }
}
