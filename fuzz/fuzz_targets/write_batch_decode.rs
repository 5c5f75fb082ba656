//! `write_batch_decode`: the write-batch format (`riptide_common::write_batch`) on arbitrary
//! bytes, two-phase-commit markers included.
//!
//! The input is one encoded batch (a WAL record payload). `WriteBatch::from_data` must accept
//! or refuse it without panicking; a batch it accepts must iterate without error, hold as many
//! entries as its header says, and survive a rebuild through the public builder API (entries,
//! marker and seqno read back equal), an `append` and a `clear`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use riptide_common::write_batch::BATCH_HEADER_LEN;
use riptide_common::{BatchEntry, ValueKind, WriteBatch};

fuzz_target!(
    init: riptide_fuzz::seed_hook(|| {
        riptide_fuzz::sample_batches()
            .into_iter()
            .enumerate()
            .map(|(i, b)| (format!("batch-{i}"), b))
            .collect()
    }),
    |data: &[u8]| {
    let Ok(batch) = WriteBatch::from_data(data.to_vec()) else {
        return;
    };
    let entries: Vec<BatchEntry<'_>> = batch
        .iter()
        .map(|e| e.expect("an accepted batch iterates without error"))
        .collect();
    assert_eq!(entries.len(), batch.len(), "entry count");
    assert_eq!(batch.is_empty(), entries.is_empty());
    assert_eq!(batch.data(), data);
    assert_eq!(batch.size_in_bytes(), data.len());
    assert!(batch.size_in_bytes() >= BATCH_HEADER_LEN);
    let marker = batch.marker();

    // Rebuild it with the public API: the same entries, marker and seqno read back.
    let mut rebuilt = WriteBatch::new();
    for e in &entries {
        match e.kind {
            ValueKind::Put => rebuilt.put_cf(e.cf, e.key, e.value),
            ValueKind::Delete => rebuilt.delete_cf(e.cf, e.key),
            ValueKind::SingleDelete => rebuilt.single_delete_cf(e.cf, e.key),
            ValueKind::RangeDelete => rebuilt.delete_range_cf(e.cf, e.key, e.value),
        }
    }
    if let Some((kind, xid)) = marker {
        rebuilt.set_marker(kind, xid);
    }
    rebuilt.set_seqno(batch.seqno());
    let again = WriteBatch::from_data(rebuilt.data().to_vec()).expect("a rebuilt batch decodes");
    assert_eq!(again.seqno(), batch.seqno(), "seqno");
    assert_eq!(again.marker(), marker, "marker");
    let again_entries: Vec<BatchEntry<'_>> = again
        .iter()
        .map(|e| e.expect("rebuilt batch iterates"))
        .collect();
    assert_eq!(again_entries, entries, "entries after rebuild");

    // Appending drops the marker and keeps the entries, in order.
    let mut doubled = WriteBatch::new();
    doubled.append(&batch);
    doubled.append(&again);
    assert_eq!(doubled.marker(), None);
    assert_eq!(doubled.len(), 2 * entries.len());
    let decoded = WriteBatch::from_data(doubled.data().to_vec()).expect("an appended batch decodes");
    let doubled_entries: Vec<BatchEntry<'_>> = decoded
        .iter()
        .map(|e| e.expect("appended batch iterates"))
        .collect();
    assert_eq!(&doubled_entries[..entries.len()], &entries[..]);
    assert_eq!(&doubled_entries[entries.len()..], &entries[..]);

    let mut cleared = again.clone();
    cleared.clear();
    assert!(cleared.is_empty());
    assert_eq!(cleared.marker(), None);
    assert_eq!(cleared.data(), WriteBatch::new().data());
}
);
