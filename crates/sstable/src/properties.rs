//! The properties block: what a table holds, written by the writer, read at open.
//!
//! It is a block in the usual [block format](crate::block) whose keys are property names
//! (ASCII, sorted) and whose values are: varints for counts, sizes and seqnos; raw bytes for
//! keys; the name (`"none"`/`"zstd"`) for the compression; a 4-byte LE i32 for the zstd level.
//! Readers skip names they do not know and fail on missing required ones.

use riptide_common::coding::{Decoder, put_varint64};
use riptide_common::{Error, Result, SeqNo};

use crate::block::{Block, BlockBuilder};
use crate::format::FORMAT_VERSION;
use crate::options::Compression;

/// Facts about one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableProperties {
    /// Number of entries (every version and tombstone counts).
    pub entries: u64,
    /// Point tombstones: deletes and single deletes.
    pub tombstones: u64,
    /// Range-delete entries.
    pub range_deletes: u64,
    /// Sum of the internal key lengths of all entries.
    pub raw_key_bytes: u64,
    /// Sum of the value lengths of all entries.
    pub raw_value_bytes: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Bytes of data blocks on disk, trailers included.
    pub data_size: u64,
    /// Bytes of the index block on disk, trailer included.
    pub index_size: u64,
    /// Bytes of the filter block on disk, trailer included.
    pub filter_size: u64,
    /// Size of the whole file (from the file itself, not stored in the block).
    pub file_size: u64,
    /// Smallest internal key (empty for an empty table).
    pub smallest_key: Vec<u8>,
    /// Largest internal key (empty for an empty table).
    pub largest_key: Vec<u8>,
    /// Smallest seqno of any entry (0 for an empty table).
    pub min_seqno: SeqNo,
    /// Largest seqno of any entry (0 for an empty table).
    pub max_seqno: SeqNo,
    /// Compression the writer was configured with (blocks that did not shrink are stored
    /// uncompressed regardless).
    pub compression: Compression,
    /// Bloom filter bits per key (0: no filter).
    pub bloom_bits_per_key: u32,
    /// Target data block size the writer used.
    pub block_size: u64,
    /// Restart interval of the data blocks.
    pub restart_interval: u64,
    /// The alignment of the data blocks: each starts at a multiple of it, zero bytes padding
    /// the gap after the one before (`TableOptions::block_align`); 0 when blocks are packed
    /// one after another. Optional (absent: 0); nonzero only in format version 3.
    pub block_align: u64,
    /// When the writer finished, in seconds since the Unix epoch.
    pub creation_time: u64,
    /// Format version of the file.
    pub format_version: u32,
}

impl Default for TableProperties {
    fn default() -> Self {
        TableProperties {
            entries: 0,
            tombstones: 0,
            range_deletes: 0,
            raw_key_bytes: 0,
            raw_value_bytes: 0,
            data_blocks: 0,
            data_size: 0,
            index_size: 0,
            filter_size: 0,
            file_size: 0,
            smallest_key: Vec::new(),
            largest_key: Vec::new(),
            min_seqno: 0,
            max_seqno: 0,
            compression: Compression::None,
            bloom_bits_per_key: 0,
            block_size: 0,
            restart_interval: 0,
            block_align: 0,
            creation_time: 0,
            format_version: FORMAT_VERSION,
        }
    }
}

const P_BLOCK_ALIGN: &str = "riptide.block_align";
const P_BLOCK_SIZE: &str = "riptide.block_size";
const P_BLOOM_BITS: &str = "riptide.bloom_bits_per_key";
const P_COMPRESSION: &str = "riptide.compression";
const P_COMPRESSION_LEVEL: &str = "riptide.compression_level";
const P_CREATION_TIME: &str = "riptide.creation_time";
const P_DATA_BLOCKS: &str = "riptide.data_blocks";
const P_DATA_SIZE: &str = "riptide.data_size";
const P_ENTRIES: &str = "riptide.entries";
const P_FILTER_SIZE: &str = "riptide.filter_size";
const P_INDEX_SIZE: &str = "riptide.index_size";
const P_LARGEST_KEY: &str = "riptide.largest_key";
const P_MAX_SEQNO: &str = "riptide.max_seqno";
const P_MIN_SEQNO: &str = "riptide.min_seqno";
const P_RANGE_DELETES: &str = "riptide.range_deletes";
const P_RAW_KEY_BYTES: &str = "riptide.raw_key_bytes";
const P_RAW_VALUE_BYTES: &str = "riptide.raw_value_bytes";
const P_RESTART_INTERVAL: &str = "riptide.restart_interval";
const P_SMALLEST_KEY: &str = "riptide.smallest_key";
const P_TOMBSTONES: &str = "riptide.tombstones";

fn varint(v: u64) -> Vec<u8> {
    let mut b = Vec::with_capacity(10);
    put_varint64(&mut b, v);
    b
}

fn decode_varint(name: &str, bytes: &[u8]) -> Result<u64> {
    let mut d = Decoder::new(bytes);
    let v = d.varint64(name)?;
    if !d.is_empty() {
        return Err(Error::corruption(format!(
            "property {name} has {} trailing bytes",
            d.remaining()
        )));
    }
    Ok(v)
}

impl TableProperties {
    /// The properties block's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let (comp, level) = match self.compression {
            Compression::None => ("none", 0),
            Compression::Zstd { level } => ("zstd", level),
        };
        let mut props: Vec<(&str, Vec<u8>)> = vec![
            (P_BLOCK_SIZE, varint(self.block_size)),
            (P_BLOOM_BITS, varint(u64::from(self.bloom_bits_per_key))),
            (P_COMPRESSION, comp.as_bytes().to_vec()),
            (P_COMPRESSION_LEVEL, level.to_le_bytes().to_vec()),
            (P_CREATION_TIME, varint(self.creation_time)),
            (P_DATA_BLOCKS, varint(self.data_blocks)),
            (P_DATA_SIZE, varint(self.data_size)),
            (P_ENTRIES, varint(self.entries)),
            (P_FILTER_SIZE, varint(self.filter_size)),
            (P_INDEX_SIZE, varint(self.index_size)),
            (P_LARGEST_KEY, self.largest_key.clone()),
            (P_MAX_SEQNO, varint(self.max_seqno)),
            (P_MIN_SEQNO, varint(self.min_seqno)),
            (P_RANGE_DELETES, varint(self.range_deletes)),
            (P_RAW_KEY_BYTES, varint(self.raw_key_bytes)),
            (P_RAW_VALUE_BYTES, varint(self.raw_value_bytes)),
            (P_RESTART_INTERVAL, varint(self.restart_interval)),
            (P_SMALLEST_KEY, self.smallest_key.clone()),
            (P_TOMBSTONES, varint(self.tombstones)),
        ];
        if self.block_align != 0 {
            props.push((P_BLOCK_ALIGN, varint(self.block_align)));
        }
        props.sort_by(|a, b| a.0.cmp(b.0));
        let mut b = BlockBuilder::new(1);
        for (name, value) in &props {
            b.add(name.as_bytes(), value);
        }
        b.finish().to_vec()
    }

    /// Decodes a properties block. `file_size` and `format_version` are filled in by the
    /// caller.
    pub fn decode(block: &Block) -> Result<TableProperties> {
        let mut p = TableProperties::default();
        let mut seen: Vec<String> = Vec::new();
        let mut level = 0i32;
        let mut comp: Option<Vec<u8>> = None;
        // Known names that are not required.
        let mut optional = 0usize;
        let mut it = block.iter();
        it.seek_to_first()?;
        while it.valid() {
            let name = std::str::from_utf8(it.key()).unwrap_or("");
            let v = it.value();
            let num = |field: &mut u64| -> Result<()> {
                *field = decode_varint(name, v)?;
                Ok(())
            };
            let known = match name {
                P_BLOCK_ALIGN => {
                    num(&mut p.block_align)?;
                    optional += 1;
                    true
                }
                P_BLOCK_SIZE => num(&mut p.block_size).map(|()| true)?,
                P_BLOOM_BITS => {
                    let n = decode_varint(name, v)?;
                    p.bloom_bits_per_key = u32::try_from(n).map_err(|_| {
                        Error::corruption(format!("property {name} = {n} is out of range"))
                    })?;
                    true
                }
                P_COMPRESSION => {
                    comp = Some(v.to_vec());
                    true
                }
                P_COMPRESSION_LEVEL => {
                    let b: [u8; 4] = v.try_into().map_err(|_| {
                        Error::corruption(format!("property {name} is not 4 bytes"))
                    })?;
                    level = i32::from_le_bytes(b);
                    true
                }
                P_CREATION_TIME => num(&mut p.creation_time).map(|()| true)?,
                P_DATA_BLOCKS => num(&mut p.data_blocks).map(|()| true)?,
                P_DATA_SIZE => num(&mut p.data_size).map(|()| true)?,
                P_ENTRIES => num(&mut p.entries).map(|()| true)?,
                P_FILTER_SIZE => num(&mut p.filter_size).map(|()| true)?,
                P_INDEX_SIZE => num(&mut p.index_size).map(|()| true)?,
                P_LARGEST_KEY => {
                    p.largest_key = v.to_vec();
                    true
                }
                P_MAX_SEQNO => num(&mut p.max_seqno).map(|()| true)?,
                P_MIN_SEQNO => num(&mut p.min_seqno).map(|()| true)?,
                P_RANGE_DELETES => num(&mut p.range_deletes).map(|()| true)?,
                P_RAW_KEY_BYTES => num(&mut p.raw_key_bytes).map(|()| true)?,
                P_RAW_VALUE_BYTES => num(&mut p.raw_value_bytes).map(|()| true)?,
                P_RESTART_INTERVAL => num(&mut p.restart_interval).map(|()| true)?,
                P_SMALLEST_KEY => {
                    p.smallest_key = v.to_vec();
                    true
                }
                P_TOMBSTONES => num(&mut p.tombstones).map(|()| true)?,
                _ => false,
            };
            if known {
                if seen.iter().any(|s| s == name) {
                    return Err(Error::corruption(format!("property {name} appears twice")));
                }
                seen.push(name.to_string());
            }
            it.next()?;
        }
        p.compression = match comp.as_deref() {
            Some(b"none") => Compression::None,
            Some(b"zstd") => Compression::Zstd { level },
            Some(other) => {
                return Err(Error::corruption(format!(
                    "unknown compression {:?} in properties",
                    String::from_utf8_lossy(other)
                )));
            }
            None => {
                return Err(Error::corruption(
                    "properties block lacks riptide.compression".to_string(),
                ));
            }
        };
        const REQUIRED: usize = 19;
        if seen.len() - optional < REQUIRED {
            return Err(Error::corruption(format!(
                "properties block has {} of the {REQUIRED} required properties",
                seen.len() - optional
            )));
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let p = TableProperties {
            entries: 10,
            tombstones: 2,
            range_deletes: 1,
            raw_key_bytes: 100,
            raw_value_bytes: 1000,
            data_blocks: 3,
            data_size: 999,
            index_size: 77,
            filter_size: 20,
            smallest_key: b"a\0\0\0\0\0\0\0\0".to_vec(),
            largest_key: b"z\0\0\0\0\0\0\0\0".to_vec(),
            min_seqno: 4,
            max_seqno: 99,
            compression: Compression::Zstd { level: -3 },
            bloom_bits_per_key: 10,
            block_size: 4096,
            restart_interval: 16,
            creation_time: 1_700_000_000,
            ..TableProperties::default()
        };
        let block = Block::new(p.encode()).unwrap();
        assert_eq!(TableProperties::decode(&block).unwrap(), p);
        // The optional alignment: written only when nonzero, read back, not counted among
        // the required names.
        assert!(!p.encode().windows(19).any(|w| w == b"riptide.block_align"));
        let aligned = TableProperties {
            block_align: 4096,
            ..p.clone()
        };
        let block = Block::new(aligned.encode()).unwrap();
        assert_eq!(TableProperties::decode(&block).unwrap(), aligned);
    }
}
