//! A dropped memtable gives its memory back to the OS, even when other allocations were made
//! between its chunks (as the block cache's and the connections' are in a server).

use riptide_common::ValueKind;
use riptide_memtable::Memtable;

/// Resident memory of this process in bytes (`/proc/self/statm`, second field, in pages).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Fills a memtable with about `mib` MiB, keeping a small heap allocation alive after every
/// 64 KiB of entries (they end up between the memtable's chunks if those come from the heap).
fn fill(m: &Memtable, mib: usize, keep: &mut Vec<Vec<u8>>) {
    let value = vec![7u8; 1000];
    for i in 0..mib * 1024 {
        m.insert(
            format!("key{i:010}").as_bytes(),
            i as u64 + 1,
            ValueKind::Put,
            &value,
        );
        if i % 64 == 0 {
            keep.push(vec![1u8; 256]);
        }
    }
}

#[test]
fn dropping_a_memtable_returns_its_memory() {
    let mut keep = Vec::new();
    // A first memtable, dropped: with malloc'd chunks this raises glibc's mmap threshold
    // above the chunk size, so later chunks would come from the heap.
    let warm = Memtable::new(0);
    fill(&warm, 4, &mut keep);
    drop(warm);
    let before = rss();
    let m = Memtable::new(0);
    fill(&m, 64, &mut keep);
    let full = rss();
    drop(m);
    let after = rss();
    assert!(
        full > before + 48 * 1024 * 1024,
        "{before} -> {full}: memtable not resident?"
    );
    assert!(
        after < before + 8 * 1024 * 1024,
        "dropping a 64 MiB memtable left {} MiB resident ({before} -> {full} -> {after})",
        (after.saturating_sub(before)) >> 20
    );
    assert!(!keep.is_empty());
}
