//! Riptide's stable C ABI: `extern "C"` functions over the [`riptide`] engine, for the
//! MariaDB plugin (a C++ handler links the static library `libriptide_capi.a`) and for C
//! users. The header `include/riptide.h` is generated from this crate by cbindgen (see
//! `tests/header_is_fresh.rs`); `README.md` beside it gives the linking, ownership and
//! threading rules.
//!
//! Conventions of every function:
//!
//! - Handles are opaque pointers (`riptide_db_t *`...), made by a `_create`/`_open`/`_begin`
//!   function and freed by the matching `_destroy`/`_release`; freeing NULL is a no-op.
//! - A fallible function returns [`riptide_status_t`] and takes `char **errmsg` last: on
//!   success `*errmsg` is set to NULL, on failure to a `malloc`'d message the caller frees
//!   with [`riptide_free`]. `errmsg` itself may be NULL.
//! - Byte strings are `(const char *data, size_t len)` and may contain NULs; NULL data with
//!   length 0 is the empty string, NULL data with a nonzero length is
//!   `RIPTIDE_INVALID_ARGUMENT`. A NULL handle is `RIPTIDE_INVALID_ARGUMENT` naming the
//!   parameter, except where NULL is documented to mean a default (column family, snapshot,
//!   options, bounds).
//! - No panic crosses the boundary: each body runs under `catch_unwind`, and a panic becomes
//!   `RIPTIDE_INTERNAL` with the panic's message.
//! - Pointer parameters: each function's `# Safety` section gives every pointer parameter one
//!   of a few rules (handle, exclusive handle, freed handle, byte string, C string,
//!   out-parameter, array), stated once in the module docs of `src/ffi_util.rs` together with
//!   the guide to writing an exported function; `README.md` ("Pointer arguments") says the
//!   same to C users.

// The C ABI names its types the C way (`riptide_db_t`, `RIPTIDE_OK`).
#![allow(non_camel_case_types)]
// C functions take flat parameter lists (pointer + length pairs, out-parameters, errmsg).
#![allow(clippy::too_many_arguments)]

/// With the `jemalloc` feature every Rust allocation of the library goes to jemalloc (its
/// prefixed `_rjem_` symbols, so the host's `malloc` and `free` stay the host's). Buffers
/// handed to C that C frees with `free` are allocated with `libc::malloc` (`riptide_free`),
/// never with the global allocator.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

mod batch;
mod calls;
mod cf;
mod checkpoint;
mod cursor;
mod db;
mod ffi_util;
mod handler_alter;
mod handler_cursor;
mod handler_engine;
mod handler_session;
mod handler_table;
mod handler_util;
mod heap;
mod introspect;
mod iter;
mod kv;
mod lock_wait;
mod logging;
mod memory;
mod options;
mod snapshot;
mod stats;
mod status;
mod table_info;
mod txn;
mod txn_iter;
mod txn_options;
mod xid;

pub use batch::*;
pub use calls::riptide_handler_calls;
pub use cf::*;
pub use checkpoint::*;
pub use db::*;
pub use handler_alter::*;
pub use handler_cursor::*;
pub use handler_engine::*;
pub use handler_session::*;
pub use handler_table::*;
pub use introspect::*;
pub use iter::*;
pub use kv::*;
pub use lock_wait::*;
pub use logging::*;
pub use memory::*;
pub use options::*;
pub use snapshot::*;
pub use stats::*;
pub use status::*;
pub use table_info::*;
pub use txn::*;
pub use txn_iter::*;
pub use txn_options::*;
pub use xid::*;
