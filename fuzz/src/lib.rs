//! Helpers shared by Riptide's fuzz targets (`fuzz_targets/*.rs`): temporary directories,
//! checksum repair (so mutated inputs get past the checksums into the decoders), the seed
//! corpus each target writes of itself, and (module [`capi`]) what the C ABI targets share.
//!
//! # Seeds
//!
//! Every target is built with `fuzz_target!(init: riptide_fuzz::seed_hook(..), ...)`. When
//! the environment variable [`SEEDS_ENV`] names a directory, the target writes valid inputs
//! made by the engine itself (WAL segments, tables, manifests, batches) into it and exits
//! without fuzzing. `cargo xtask fuzz` does that once per target before fuzzing, so the fuzzer
//! starts from deep, valid inputs instead of from nothing.

use std::path::{Path, PathBuf};

pub mod capi;

use riptide_common::checksum::{checksum, checksum_parts};

/// Environment variable: when set to a directory, a target writes its seed corpus there and
/// exits instead of fuzzing.
pub const SEEDS_ENV: &str = "RIPTIDE_FUZZ_SEEDS";

/// Called from each target's `init`: if [`SEEDS_ENV`] is set, creates that directory, calls
/// `make` to get the seeds, writes each as a file named after its label, and exits the
/// process (status 0, or 1 if a seed could not be written).
pub fn seed_hook(make: impl FnOnce() -> Vec<(String, Vec<u8>)>) {
    let Some(dir) = std::env::var_os(SEEDS_ENV) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let seeds = make();
    let mut status = 0;
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        std::process::exit(1);
    }
    for (name, bytes) in &seeds {
        let path = dir.join(format!("seed-{name}"));
        if let Err(e) = std::fs::write(&path, bytes) {
            eprintln!("cannot write {}: {e}", path.display());
            status = 1;
        }
    }
    eprintln!("wrote {} seeds to {}", seeds.len(), dir.display());
    std::process::exit(status);
}

/// A fresh, empty directory, in memory (under /dev/shm) when the machine has it.
pub fn temp_dir() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    let mut b = tempfile::Builder::new();
    b.prefix("riptide-fuzz-");
    let dir = if shm.is_dir() {
        b.tempdir_in(shm)
    } else {
        b.tempdir()
    };
    match dir {
        Ok(d) => d,
        Err(e) => panic!("cannot create a temporary directory: {e}"),
    }
}

/// Reads a little-endian u32 at `at`, if the bytes are there.
pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        b.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// Reads a little-endian u64 at `at`, if the bytes are there.
pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// Writes `v` little-endian at `at`, if the bytes are there.
pub fn put_u64_at(b: &mut [u8], at: usize, v: u64) {
    if let Some(s) = at.checked_add(8).and_then(|end| b.get_mut(at..end)) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

/// Makes `seg` a WAL segment numbered `n` whose header and reachable records carry valid
/// checksums (format: `crates/wal/FORMAT.md`).
pub fn fix_wal_checksums(seg: &mut [u8], n: u64) {
    const HEADER: usize = riptide_wal::SEGMENT_HEADER_LEN;
    const RECORD: usize = riptide_wal::RECORD_HEADER_LEN;
    if seg.len() < HEADER {
        return;
    }
    put_u64_at(seg, 16, n);
    let c = checksum(&seg[..24]);
    put_u64_at(seg, 24, c);
    let mut at = HEADER;
    while let Some(len) = u32_at(seg, at + 8) {
        let end = at + RECORD + len as usize;
        if end > seg.len() {
            return;
        }
        let c = checksum_parts(&[&seg[at + 8..at + RECORD], &seg[at + RECORD..end]]);
        put_u64_at(seg, at, c);
        at = end;
    }
}

/// Recomputes the header checksum and the checksum of every record the framing reaches in
/// a manifest (format: `crates/compaction/FORMAT.md`).
pub fn fix_manifest_checksums(bytes: &mut [u8]) {
    const HEADER: usize = 20;
    if bytes.len() < HEADER {
        return;
    }
    let c = checksum(&bytes[..12]);
    put_u64_at(bytes, 12, c);
    let mut at = HEADER;
    // record := kind:u8 len:u32 payload:[len] checksum:u64
    while let Some(len) = u32_at(bytes, at + 1) {
        let payload_end = at + 5 + len as usize;
        if payload_end + 8 > bytes.len() {
            return;
        }
        let c = checksum_parts(&[
            &bytes[at..at + 1],
            &bytes[at + 1..at + 5],
            &bytes[at + 5..payload_end],
        ]);
        put_u64_at(bytes, payload_end, c);
        at = payload_end + 8;
    }
}

/// Recomputes the footer checksum of a table and the trailer checksum of every block the
/// footer and the index name (format: `crates/sstable/FORMAT.md`).
pub fn fix_table_checksums(file: &mut [u8]) {
    const TRAILER: usize = riptide_sstable::format::BLOCK_TRAILER_LEN;
    let len = file.len();
    let Some(version) = len.checked_sub(12).and_then(|at| u32_at(file, at)) else {
        return;
    };
    let (footer_len, handles) = match version {
        1 => (68usize, 3usize),
        2 => (84, 4),
        _ => return,
    };
    let Some(start) = len.checked_sub(footer_len) else {
        return;
    };
    let sum_at = start + 16 * handles;
    let mut blocks: Vec<(usize, usize)> = (0..handles)
        .filter_map(|i| {
            let offset = usize::try_from(u64_at(file, start + 16 * i)?).ok()?;
            let size = usize::try_from(u64_at(file, start + 16 * i + 8)?).ok()?;
            Some((offset, size))
        })
        .collect();
    // The index block (handle 0), when stored uncompressed, names the data blocks.
    if let Some(&(offset, size)) = blocks.first()
        && let Some(index) = offset
            .checked_add(size)
            .and_then(|end| file.get(offset..end))
        && file.get(offset + size) == Some(&0)
        && let Ok(block) = riptide_sstable::block::Block::new(index.to_vec())
    {
        let mut it = block.iter();
        let mut ok = it.seek_to_first().is_ok();
        while ok && it.valid() && blocks.len() < 100_000 {
            if let Ok(h) = riptide_sstable::format::BlockHandle::decode(it.value())
                && let (Ok(o), Ok(s)) = (usize::try_from(h.offset), usize::try_from(h.size))
            {
                blocks.push((o, s));
            }
            ok = it.next().is_ok();
        }
    }
    for (offset, size) in blocks {
        let Some(end) = offset.checked_add(size) else {
            continue;
        };
        if end.checked_add(TRAILER).is_none_or(|e| e > len) {
            continue;
        }
        let c = checksum_parts(&[&file[offset..end], &file[end..end + 1]]);
        put_u64_at(file, end + 1, c);
    }
    // Last: a block trailer may overlap the footer.
    let c = checksum_parts(&[&file[start..sum_at], &file[len - 12..]]);
    put_u64_at(file, sum_at, c);
}

/// Files an engine wrote: WAL segments (with their numbers), tables and the manifest.
#[derive(Debug, Default)]
pub struct EngineFiles {
    /// `(segment number, bytes)` of every WAL segment, in order.
    pub wal_segments: Vec<(u64, Vec<u8>)>,
    /// Every table file.
    pub tables: Vec<Vec<u8>>,
    /// The MANIFEST file.
    pub manifest: Vec<u8>,
}

/// Runs a small workload on a real `riptide::Db` (tiny memtables, two column families, puts,
/// deletes, single deletes, range deletes, a two-phase-commit transaction, flushes and a
/// compaction) and returns the files it left, read while the database is open so the WAL
/// still holds unflushed records.
pub fn engine_files() -> EngineFiles {
    let dir = temp_dir();
    let opts = riptide::Options::default()
        .write_buffer_size(4096)
        .target_file_size(8192)
        .block_size(256)
        .sync_mode(riptide::SyncMode::None)
        .compression(riptide::Compression::Zstd { level: 1 });
    let db = match riptide::Db::open(dir.path(), opts) {
        Ok(db) => db,
        Err(e) => panic!("seed database: {e}"),
    };
    let run = || -> riptide::Result<()> {
        let cf = db.create_cf("second")?;
        for i in 0..300u32 {
            let k = format!("key{:05}", i * 7 % 300);
            db.put(
                k.as_bytes(),
                format!("value-{i}-{}", "x".repeat((i % 40) as usize)).as_bytes(),
            )?;
            if i % 5 == 0 {
                db.delete(format!("key{:05}", i / 2).as_bytes())?;
            }
            if i % 50 == 0 {
                db.delete_range(
                    format!("key{:05}", i).as_bytes(),
                    format!("key{:05}", i + 9).as_bytes(),
                )?;
            }
            if i % 3 == 0 {
                db.put_cf(&cf, format!("cf{i}").as_bytes(), b"v")?;
            }
        }
        db.put(b"once", b"v")?;
        db.single_delete(b"once")?;
        db.flush()?;
        db.compact_range(&db.default_cf(), None)?;
        let mut b = riptide::WriteBatch::new();
        b.put(b"batch-a", b"1")
            .delete(b"batch-b")
            .delete_range(b"r0", b"r9");
        db.write(b)?;
        let t = db.begin_transaction(riptide::TransactionOptions::default())?;
        t.put(&db.default_cf(), b"txn-key", b"txn-value")?;
        t.prepare(&riptide::Xid::new(1, b"gtrid", b"bqual")?)?;
        t.commit()?;
        for i in 0..20u32 {
            db.put(format!("tail{i}").as_bytes(), b"unflushed")?;
        }
        Ok(())
    };
    if let Err(e) = run() {
        panic!("seed workload: {e}");
    }
    let mut files = EngineFiles::default();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    names.sort();
    for p in names {
        let Some(name) = p.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        if let Some(n) = riptide_wal::parse_segment_file_name(&name) {
            files.wal_segments.push((n, bytes));
        } else if name.ends_with(".sst") {
            files.tables.push(bytes);
        } else if name == "MANIFEST" {
            files.manifest = bytes;
        }
    }
    drop(db);
    files
}

/// A few encoded write batches: plain, with each two-phase-commit marker, empty.
pub fn sample_batches() -> Vec<Vec<u8>> {
    use riptide_common::{BatchMarker, WriteBatch};
    let mut plain = WriteBatch::new();
    plain.put(b"a", b"1");
    plain.delete_cf(3, b"b");
    plain.single_delete(b"c");
    plain.delete_range_cf(5, b"d", b"f");
    plain.set_seqno(77);
    let mut out = vec![WriteBatch::new().data().to_vec(), plain.data().to_vec()];
    for m in [
        BatchMarker::Prepare,
        BatchMarker::Commit,
        BatchMarker::Rollback,
    ] {
        let mut b = if m == BatchMarker::Rollback {
            WriteBatch::new()
        } else {
            plain.clone()
        };
        b.set_marker(m, b"\x01\x00\x00\x00xid-gtrid");
        out.push(b.data().to_vec());
    }
    out
}

/// A WAL segment written by `riptide_wal::Wal` holding `payloads`, numbered 1.
pub fn wal_segment(payloads: &[Vec<u8>]) -> Vec<u8> {
    let dir = temp_dir();
    let opts = riptide_wal::WalOptions {
        sync_mode: riptide_wal::SyncMode::None,
        ..Default::default()
    };
    let res = riptide_wal::Wal::open(dir.path(), opts, 1, |_, _| Ok(())).and_then(|(wal, _)| {
        for p in payloads {
            wal.append(p)?;
        }
        wal.close()?;
        Ok(wal.current_segment())
    });
    match res {
        Ok(n) => {
            std::fs::read(dir.path().join(riptide_wal::segment_file_name(n))).unwrap_or_default()
        }
        Err(e) => panic!("seed WAL: {e}"),
    }
}

/// A table written by `TableWriter` with `n` entries (puts and tombstones), optionally zstd
/// and with range tombstones.
pub fn sample_table(n: u32, zstd: bool, range_dels: bool) -> Vec<u8> {
    use riptide_common::ValueKind;
    use riptide_common::key::internal_key;
    let dir = temp_dir();
    let path = dir.path().join("000001.sst");
    let opts = riptide_sstable::TableOptions {
        block_size: 256,
        restart_interval: 4,
        compression: if zstd {
            riptide_sstable::Compression::Zstd { level: 1 }
        } else {
            riptide_sstable::Compression::None
        },
        bloom_bits_per_key: 10,
        ..riptide_sstable::TableOptions::default()
    };
    let res = riptide_sstable::TableWriter::create(&path, opts).and_then(|mut w| {
        for i in 0..n {
            let kind = if i % 7 == 3 {
                ValueKind::Delete
            } else {
                ValueKind::Put
            };
            let k = internal_key(format!("k{i:04}").as_bytes(), u64::from(n - i), kind);
            w.add(&k, format!("value{i}").as_bytes())?;
        }
        if range_dels {
            w.add_range_tombstone(b"k0002", b"k0005", 1000)?;
            w.add_range_tombstone(b"k0001", b"k0003", 999)?;
        }
        w.finish()
    });
    if let Err(e) = res {
        panic!("seed table: {e}");
    }
    std::fs::read(&path).unwrap_or_default()
}

/// Prefixes `bytes` with `prefix`.
pub fn with_prefix(prefix: &[u8], bytes: &[u8]) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.extend_from_slice(bytes);
    v
}
