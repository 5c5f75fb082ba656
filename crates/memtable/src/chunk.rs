//! The memory behind the arena's chunks, mapped straight from the kernel (anonymous `mmap`)
//! instead of taken from `malloc`, so that a dropped memtable gives every byte back to the OS
//! at once.
//!
//! Through `malloc`, a 1 MiB chunk is mmapped only while glibc's dynamic mmap threshold is
//! below 1 MiB; the first free of such a chunk raises the threshold past it, and from then on
//! chunks come from the heap, between the block cache's and the connections' small
//! allocations. A flushed memtable's chunks then become holes that the heap keeps: measured in
//! MariaDB (4 x 250,000 rows, `oltp_update_index`, 32 MiB memtables), the server's peak
//! resident memory was 27 MiB higher than with every chunk mapped.
//!
//! With `skiplist`, this is one of the two modules of the crate with `unsafe` code: the
//! `mmap`/`munmap` calls and the `Send`/`Sync` impls. The memory itself is only read and
//! written by the skiplist, through the blocks the arena hands out.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of every chunk mapped now, in the whole process.
static MAPPED_BYTES: AtomicU64 = AtomicU64::new(0);

/// Bytes of memtable memory mapped now in this process, every open database together: the
/// chunks of the memtables being written, of those waiting for their flush, and of flushed
/// ones that a reader (an iterator, a snapshot's view) still holds. Memtables take their
/// memory straight from the kernel, so the allocator's statistics do not include it.
pub fn mapped_bytes() -> u64 {
    MAPPED_BYTES.load(Ordering::Relaxed)
}

/// A zero-filled, page-aligned region of whole `u64` words, unmapped on drop.
#[derive(Debug)]
pub(crate) struct Chunk {
    ptr: NonNull<u64>,
    bytes: usize,
}

// SAFETY: a `Chunk` owns its mapping exclusively (no other handle to it exists); the arena
// hands out disjoint blocks of it and the skiplist synchronises every access to them.
unsafe impl Send for Chunk {}
// SAFETY: `&Chunk` only gives out the base pointer; see `Send`.
unsafe impl Sync for Chunk {}

impl Chunk {
    /// A new chunk of `words` words (at least one). Aborts the process, like every Rust
    /// allocation, if the system refuses the memory.
    pub(crate) fn new(words: usize) -> Chunk {
        let layout = match Layout::array::<u64>(words.max(1)) {
            Ok(l) => l,
            Err(_) => std::process::abort(),
        };
        let bytes = layout.size();
        // SAFETY: an anonymous private mapping at an address of the kernel's choosing touches
        // no existing memory; the result is checked below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        match NonNull::new(p.cast::<u64>()) {
            Some(ptr) if p != libc::MAP_FAILED => {
                MAPPED_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
                Chunk { ptr, bytes }
            }
            _ => std::alloc::handle_alloc_error(layout),
        }
    }

    /// The first word of the chunk; the chunk spans `words` words from here.
    pub(crate) fn as_mut_ptr(&self) -> *mut u64 {
        self.ptr.as_ptr()
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`bytes` are exactly the mapping `new` made, unmapped only here; the
        // arena drops its chunks only when no block of them can be reached any more.
        // A failure (impossible for a valid mapping) would only leak the region.
        let _ = unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.bytes) };
        MAPPED_BYTES.fetch_sub(self.bytes as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_page_aligned_zeroed_and_writable() {
        let c = Chunk::new(1000);
        let p = c.as_mut_ptr();
        assert_eq!(p as usize % 4096, 0);
        // SAFETY: the chunk holds 1000 words; 0 and 999 are inside it.
        unsafe {
            assert_eq!(p.read(), 0);
            p.add(999).write(7);
            assert_eq!(p.add(999).read(), 7);
        }
    }

    #[test]
    fn mapped_bytes_count_a_chunk_while_it_lives() {
        // Other tests map chunks at the same time: only this chunk's own 64 MiB are certain.
        let c = Chunk::new(8 << 20);
        assert!(mapped_bytes() >= 64 << 20);
        drop(c);
    }
}
