//! The engines under test behind one small interface.

use std::path::Path;

use anyhow::Result;

/// Which engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// This project.
    Riptide,
    /// RocksDB through the `rocksdb` crate (feature `rocksdb`).
    #[cfg(feature = "rocksdb")]
    RocksDb,
}

impl Kind {
    /// Short name used in tables and directories.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Riptide => "riptide",
            #[cfg(feature = "rocksdb")]
            Kind::RocksDb => "rocksdb",
        }
    }
}

/// Engines compiled into this binary.
pub fn available() -> Vec<Kind> {
    vec![
        Kind::Riptide,
        #[cfg(feature = "rocksdb")]
        Kind::RocksDb,
    ]
}

/// Memory given to every engine alike.
const WRITE_BUFFER: usize = 64 << 20;
const BLOCK_CACHE: usize = 64 << 20;

/// A key-value engine as the benchmark drives it.
pub trait Engine {
    /// Writes one key without fsync.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
}

/// Opens `kind` in `dir` with the shared settings.
pub fn open(kind: Kind, dir: &Path) -> Result<Box<dyn Engine>> {
    Ok(match kind {
        Kind::Riptide => Box::new(riptide::Db::open(
            dir,
            riptide::Options::default()
                .sync_mode(riptide::SyncMode::None)
                .write_buffer_size(WRITE_BUFFER)
                .block_cache_size(BLOCK_CACHE as u64),
        )?),
        #[cfg(feature = "rocksdb")]
        Kind::RocksDb => {
            let mut o = rocksdb::Options::default();
            o.create_if_missing(true);
            o.set_write_buffer_size(WRITE_BUFFER);
            let mut t = rocksdb::BlockBasedOptions::default();
            t.set_block_cache(&rocksdb::Cache::new_lru_cache(BLOCK_CACHE));
            t.set_bloom_filter(10.0, false);
            o.set_block_based_table_factory(&t);
            o.set_compression_type(rocksdb::DBCompressionType::None);
            Box::new(RocksEngine(rocksdb::DB::open(&o, dir)?))
        }
    })
}

impl Engine for riptide::Db {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(riptide::Db::put(self, key, value)?)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(riptide::Db::get(self, key)?)
    }
}

/// RocksDB with `WriteOptions::sync = false` (its default).
#[cfg(feature = "rocksdb")]
struct RocksEngine(rocksdb::DB);

#[cfg(feature = "rocksdb")]
impl Engine for RocksEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.0.put(key, value)?)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.0.get(key)?)
    }
}
