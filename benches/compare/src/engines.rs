//! The engines under test behind one interface: Riptide, fjall (always compiled in) and
//! RocksDB (feature `rocksdb`). Every engine gets the same memory: a 64 MiB block cache and a
//! 64 MiB write buffer (memtable), no compression, a bloom filter of about 10 bits per key,
//! and the same durability: with `sync = none` a write reaches the OS (the WAL / journal is
//! written, not fsynced); with `sync = full` every acknowledged write is fsynced.

use std::path::Path;

use anyhow::{Context, Result};

/// Which engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// This project.
    Riptide,
    /// fjall (a database with one keyspace), always compiled in.
    Fjall,
    /// RocksDB through the `rocksdb` crate (feature `rocksdb`).
    #[cfg(feature = "rocksdb")]
    RocksDb,
}

impl Kind {
    /// Short name used in tables, files and the `--engine` flag.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Riptide => "riptide",
            Kind::Fjall => "fjall",
            #[cfg(feature = "rocksdb")]
            Kind::RocksDb => "rocksdb",
        }
    }

    /// The engine called `name`, if it is compiled into this binary.
    pub fn parse(name: &str) -> Result<Kind> {
        available()
            .into_iter()
            .find(|k| k.name() == name)
            .with_context(|| {
                format!(
                    "engine {name:?} is not compiled in (have: {}; RocksDB needs --features rocksdb)",
                    available()
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

/// Engines compiled into this binary, in table order: Riptide, RocksDB, fjall.
pub fn available() -> Vec<Kind> {
    vec![
        Kind::Riptide,
        #[cfg(feature = "rocksdb")]
        Kind::RocksDb,
        Kind::Fjall,
    ]
}

/// Memory given to every engine alike.
pub const WRITE_BUFFER: usize = 64 << 20;
/// Block cache given to every engine alike.
pub const BLOCK_CACHE: usize = 64 << 20;

/// A positioned iterator over one engine's keys, in key order.
pub trait Cursor {
    /// Positions at the first key `>= key` (the empty key: the first key).
    fn seek(&mut self, key: &[u8]) -> Result<()>;
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// The current key (empty when not valid).
    fn key(&self) -> &[u8];
    /// The current value (empty when not valid).
    fn value(&self) -> &[u8];
    /// Moves to the next key.
    fn next(&mut self) -> Result<()>;
}

/// A key-value engine as the benchmark drives it. `Sync` so readers and a writer can share
/// it across threads.
pub trait Engine: Sync {
    /// Writes one key.
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()>;
    /// Reads one key.
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Deletes one key.
    fn delete(&self, key: &[u8]) -> Result<()>;
    /// Writes `pairs` as one atomic batch.
    fn write_batch(&self, pairs: &[(&[u8], &[u8])]) -> Result<()>;
    /// A cursor over a consistent view of the engine (position it with [`Cursor::seek`]).
    fn cursor(&self) -> Result<Box<dyn Cursor + '_>>;
    /// Writes the memtable out as a table and waits for that (not for compactions).
    fn flush(&self) -> Result<()>;
    /// Closes the engine cleanly.
    fn close(self: Box<Self>) -> Result<()>;
}

/// Durability of each write.
#[derive(
    clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Written to the OS, not fsynced (survives a process crash, not a power loss).
    None,
    /// fsynced (fdatasync) before the write returns.
    Full,
}

impl SyncMode {
    /// The flag value: `none` or `full`.
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::None => "none",
            SyncMode::Full => "full",
        }
    }
}

/// Opens `kind` in the empty directory `dir` with the shared settings (`young_space_bound`
/// is Riptide's option of that name; the other engines have nothing like it), then, for
/// Riptide, `riptide_options` (each `NAME=VALUE`, a name of `riptide::Options::TABLE`).
pub fn open(
    kind: Kind,
    dir: &Path,
    sync: SyncMode,
    young_space_bound: bool,
    riptide_options: &[String],
) -> Result<Box<dyn Engine>> {
    let what = || format!("open {} in {}", kind.name(), dir.display());
    Ok(match kind {
        Kind::Riptide => {
            let mut opts = riptide::Options::default()
                .sync_mode(match sync {
                    SyncMode::None => riptide::SyncMode::None,
                    SyncMode::Full => riptide::SyncMode::Full,
                })
                .write_buffer_size(WRITE_BUFFER)
                .block_cache_size(BLOCK_CACHE as u64)
                .compression(riptide::Compression::None)
                .bloom_bits_per_key(10)
                .young_space_bound(young_space_bound);
            for option in riptide_options {
                let (name, value) = option
                    .split_once('=')
                    .with_context(|| format!("--riptide-option `{option}`: expected NAME=VALUE"))?;
                opts = opts
                    .set_by_name(name.trim(), value.trim())
                    .with_context(|| format!("--riptide-option `{option}`"))?;
            }
            Box::new(RiptideEngine(
                riptide::Db::open(dir, opts).with_context(what)?,
            ))
        }
        Kind::Fjall => {
            let db = fjall::Database::builder(dir)
                .cache_size(BLOCK_CACHE as u64)
                .open()
                .with_context(what)?;
            let ks = db
                .keyspace("bench", || {
                    fjall::KeyspaceCreateOptions::default()
                        .max_memtable_size(WRITE_BUFFER as u64)
                        .data_block_compression_policy(fjall::config::CompressionPolicy::disabled())
                })
                .with_context(what)?;
            Box::new(FjallEngine { db, ks, sync })
        }
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
            let mut wo = rocksdb::WriteOptions::default();
            wo.set_sync(sync == SyncMode::Full);
            Box::new(RocksEngine {
                db: rocksdb::DB::open(&o, dir).with_context(what)?,
                wo,
            })
        }
    })
}

/// Riptide's `Db`.
struct RiptideEngine(riptide::Db);

impl Engine for RiptideEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.0.put(key, value)?)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.0.get(key)?)
    }
    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(self.0.delete(key)?)
    }
    fn write_batch(&self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut b = riptide::WriteBatch::new();
        for (k, v) in pairs {
            b.put(k, v);
        }
        Ok(self.0.write(b)?)
    }
    fn cursor(&self) -> Result<Box<dyn Cursor + '_>> {
        Ok(Box::new(RiptideCursor(
            self.0.iter(riptide::ReadOptions::default())?,
        )))
    }
    fn flush(&self) -> Result<()> {
        Ok(self.0.flush()?)
    }
    fn close(self: Box<Self>) -> Result<()> {
        Ok(self.0.close()?)
    }
}

struct RiptideCursor(riptide::DbIterator);

impl Cursor for RiptideCursor {
    fn seek(&mut self, key: &[u8]) -> Result<()> {
        Ok(self.0.seek(key)?)
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        if self.0.valid() { self.0.key() } else { &[] }
    }
    fn value(&self) -> &[u8] {
        if self.0.valid() { self.0.value() } else { &[] }
    }
    fn next(&mut self) -> Result<()> {
        Ok(self.0.next()?)
    }
}

/// fjall: one database with one keyspace (what fjall 2 called a keyspace and a partition).
/// Writes go to the journal and the OS (fjall's default); `sync = full` adds
/// `persist(SyncData)` after each write.
struct FjallEngine {
    db: fjall::Database,
    ks: fjall::Keyspace,
    sync: SyncMode,
}

impl FjallEngine {
    fn synced(&self) -> Result<()> {
        if self.sync == SyncMode::Full {
            self.db.persist(fjall::PersistMode::SyncData)?;
        }
        Ok(())
    }
}

impl Engine for FjallEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.ks.insert(key, value)?;
        self.synced()
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.ks.get(key)?.map(|v| v.to_vec()))
    }
    fn delete(&self, key: &[u8]) -> Result<()> {
        self.ks.remove(key)?;
        self.synced()
    }
    fn write_batch(&self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut b = self.db.batch();
        for (k, v) in pairs {
            b.insert(&self.ks, *k, *v);
        }
        b.commit()?;
        self.synced()
    }
    fn cursor(&self) -> Result<Box<dyn Cursor + '_>> {
        Ok(Box::new(FjallCursor {
            ks: &self.ks,
            iter: None,
            current: None,
        }))
    }
    fn flush(&self) -> Result<()> {
        // fjall has no public flush; this is what its own tests use.
        Ok(self.ks.rotate_memtable_and_wait()?)
    }
    fn close(self: Box<Self>) -> Result<()> {
        self.db.persist(fjall::PersistMode::SyncAll)?;
        drop(self);
        Ok(())
    }
}

/// fjall's iterators are not seekable: a seek opens a new range iterator.
struct FjallCursor<'a> {
    ks: &'a fjall::Keyspace,
    iter: Option<fjall::Iter>,
    current: Option<(fjall::UserKey, fjall::UserValue)>,
}

impl Cursor for FjallCursor<'_> {
    fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.iter = Some(self.ks.range::<&[u8], _>(key..));
        self.next()
    }
    fn valid(&self) -> bool {
        self.current.is_some()
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(k, _)| k)
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, v)| v)
    }
    fn next(&mut self) -> Result<()> {
        self.current = match self.iter.as_mut().and_then(Iterator::next) {
            Some(guard) => Some(guard.into_inner()?),
            None => None,
        };
        Ok(())
    }
}

/// RocksDB with `WriteOptions::sync` per the sync mode.
#[cfg(feature = "rocksdb")]
struct RocksEngine {
    db: rocksdb::DB,
    wo: rocksdb::WriteOptions,
}

#[cfg(feature = "rocksdb")]
impl Engine for RocksEngine {
    fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        Ok(self.db.put_opt(key, value, &self.wo)?)
    }
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.db.get(key)?)
    }
    fn delete(&self, key: &[u8]) -> Result<()> {
        Ok(self.db.delete_opt(key, &self.wo)?)
    }
    fn write_batch(&self, pairs: &[(&[u8], &[u8])]) -> Result<()> {
        let mut b = rocksdb::WriteBatch::default();
        for (k, v) in pairs {
            b.put(k, v);
        }
        Ok(self.db.write_opt(b, &self.wo)?)
    }
    fn cursor(&self) -> Result<Box<dyn Cursor + '_>> {
        Ok(Box::new(RocksCursor(self.db.raw_iterator())))
    }
    fn flush(&self) -> Result<()> {
        Ok(self.db.flush()?)
    }
    fn close(self: Box<Self>) -> Result<()> {
        self.db.flush_wal(true)?;
        drop(self);
        Ok(())
    }
}

#[cfg(feature = "rocksdb")]
struct RocksCursor<'a>(rocksdb::DBRawIterator<'a>);

#[cfg(feature = "rocksdb")]
impl Cursor for RocksCursor<'_> {
    fn seek(&mut self, key: &[u8]) -> Result<()> {
        self.0.seek(key);
        Ok(self.0.status()?)
    }
    fn valid(&self) -> bool {
        self.0.valid()
    }
    fn key(&self) -> &[u8] {
        self.0.key().unwrap_or(&[])
    }
    fn value(&self) -> &[u8] {
        self.0.value().unwrap_or(&[])
    }
    fn next(&mut self) -> Result<()> {
        self.0.next();
        Ok(self.0.status()?)
    }
}
