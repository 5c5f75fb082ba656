//! Helpers shared by the fault-injection tests (`fault_*.rs`).
// Each test file uses some of them.
#![allow(dead_code)]

use riptide::fs::FaultFs;
use riptide::{Options, SyncMode};

/// Options for a database on `fs`: every write fsynced (so "acknowledged" means durable)
/// and a write buffer of `write_buffer` bytes (small, so flushes happen).
pub fn options(fs: &FaultFs, write_buffer: usize) -> Options {
    Options::default()
        .file_system(fs.as_dyn())
        .sync_mode(SyncMode::Full)
        .write_buffer_size(write_buffer)
}

/// Key `i`: `key` and five digits, so keys sort by `i`.
pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Value `i`: names `i`, padded with `width` copies of `fill`.
pub fn value(i: u32, fill: char, width: usize) -> Vec<u8> {
    format!("value-{i}-{}", fill.to_string().repeat(width)).into_bytes()
}
