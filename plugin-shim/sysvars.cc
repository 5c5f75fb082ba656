/*
  The plugin's system variables (SHOW VARIABLES LIKE 'riptide%') and status variables (SHOW
  GLOBAL STATUS LIKE 'riptide%'), and how the variables become engine options at init.
  README.md, "Configuration" and "Status variables", lists them.
*/
#include <my_global.h>
#include "sql_class.h"
#include "log.h"
#include <mysql/plugin.h>

#include "riptide_shim.h"

namespace {

/* ---------------------------------------------------------------------------------------
   System variables (README.md, "Configuration"). Every default equals the engine's own
   default (or, for the sync mode, what the plugin always used), so a server without any
   riptide_* setting behaves as before. Read-only ones are applied when the plugin opens the
   database at init. */

constexpr ulonglong KiB= 1024, MiB= KiB * 1024, GiB= MiB * 1024, TiB= GiB * 1024;

ulonglong sv_block_cache_size;
ulonglong sv_write_buffer_size;
ulonglong sv_db_write_buffer_size;
ulong sv_sync_mode;
ulong sv_sync_interval_ms;
ulong sv_compression;
uint sv_max_background_compactions;
uint sv_max_background_flushes;
uint sv_l0_slowdown_trigger;
uint sv_l0_stop_trigger;
uint sv_bloom_bits_per_key;
uint sv_max_open_files;
ulonglong sv_target_file_size;
ulonglong sv_max_total_wal_size;
my_bool sv_young_space_bound;
char *sv_data_dir;

/* riptide_sync_mode values, in this order. */
enum
{
  SYNC_MODE_NONE,
  SYNC_MODE_INTERVAL,
  SYNC_MODE_FULL
};
const char *sync_mode_names[]= {"none", "interval", "full", NullS};
TYPELIB sync_mode_typelib= {array_elements(sync_mode_names) - 1, "sync_mode_typelib",
                            sync_mode_names, nullptr};

/* riptide_compression values, in this order. */
enum
{
  COMPRESSION_NONE,
  COMPRESSION_ZSTD
};
const char *compression_names[]= {"none", "zstd", NullS};
TYPELIB compression_typelib= {array_elements(compression_names) - 1, "compression_typelib",
                              compression_names, nullptr};
/* zstd level of riptide_compression=zstd (the table format's default level). */
constexpr int32_t ZSTD_LEVEL= 1;

constexpr int RO_VAR= PLUGIN_VAR_RQCMDARG | PLUGIN_VAR_READONLY;

MYSQL_SYSVAR_ULONGLONG(block_cache_size, sv_block_cache_size, RO_VAR,
                       "Capacity of the shared block cache, in bytes (RocksDB block_cache)",
                       nullptr, nullptr, 64 * MiB, 1 * MiB, TiB, 0);
MYSQL_SYSVAR_ULONGLONG(write_buffer_size, sv_write_buffer_size, RO_VAR,
                       "Memtable size at which it is frozen and flushed, in bytes (RocksDB "
                       "write_buffer_size)",
                       nullptr, nullptr, 64 * MiB, 4 * KiB, TiB, 0);
MYSQL_SYSVAR_ULONGLONG(db_write_buffer_size, sv_db_write_buffer_size, RO_VAR,
                       "Memory budget of all memtables together, in bytes (RocksDB "
                       "db_write_buffer_size)",
                       nullptr, nullptr, 256 * MiB, 4 * KiB, TiB, 0);
MYSQL_SYSVAR_ENUM(sync_mode, sv_sync_mode, RO_VAR,
                  "When the WAL is fsynced: none (never; survives a mariadbd crash, not a "
                  "power loss), interval (every riptide_sync_interval_ms in the background) "
                  "or full (before every commit returns)",
                  nullptr, nullptr, SYNC_MODE_INTERVAL, &sync_mode_typelib);
MYSQL_SYSVAR_ULONG(sync_interval_ms, sv_sync_interval_ms, RO_VAR,
                   "Milliseconds between WAL fsyncs with riptide_sync_mode=interval",
                   nullptr, nullptr, 1000, 1, 3600 * 1000, 0);
MYSQL_SYSVAR_ENUM(compression, sv_compression, RO_VAR,
                  "Compression of table blocks written from now on: none or zstd (RocksDB "
                  "compression)",
                  nullptr, nullptr, COMPRESSION_NONE, &compression_typelib);
MYSQL_SYSVAR_UINT(max_background_compactions, sv_max_background_compactions, RO_VAR,
                  "Threads running compactions in parallel (RocksDB "
                  "max_background_compactions)",
                  nullptr, nullptr, 2, 1, 64, 0);
MYSQL_SYSVAR_UINT(max_background_flushes, sv_max_background_flushes, RO_VAR,
                  "Threads flushing memtables; each column family is flushed by one "
                  "thread at a time (RocksDB max_background_flushes)",
                  nullptr, nullptr, 1, 1, 64, 0);
MYSQL_SYSVAR_UINT(l0_slowdown_trigger, sv_l0_slowdown_trigger, RO_VAR,
                  "Number of L0 tables at which writes slow down (RocksDB "
                  "level0_slowdown_writes_trigger)",
                  nullptr, nullptr, 20, 1, 65536, 0);
MYSQL_SYSVAR_UINT(l0_stop_trigger, sv_l0_stop_trigger, RO_VAR,
                  "Number of L0 tables at which writes stop until compaction catches up "
                  "(RocksDB level0_stop_writes_trigger; kept above riptide_l0_slowdown_trigger)",
                  nullptr, nullptr, 36, 2, 65536, 0);
MYSQL_SYSVAR_UINT(bloom_bits_per_key, sv_bloom_bits_per_key, RO_VAR,
                  "Bloom filter bits per key of tables written from now on, 0 for no filter "
                  "(RocksDB NewBloomFilterPolicy)",
                  nullptr, nullptr, 10, 0, 64, 0);
MYSQL_SYSVAR_UINT(max_open_files, sv_max_open_files, RO_VAR,
                  "Most table files kept open at once (RocksDB max_open_files)", nullptr,
                  nullptr, 512, 2, 1024 * 1024, 0);
MYSQL_SYSVAR_ULONGLONG(target_file_size, sv_target_file_size, RO_VAR,
                       "Target size of tables written by compaction, in bytes (RocksDB "
                       "target_file_size_base)",
                       nullptr, nullptr, 64 * MiB, 4 * KiB, TiB, 0);
MYSQL_SYSVAR_ULONGLONG(max_total_wal_size, sv_max_total_wal_size, RO_VAR,
                       "WAL bytes a column family's memtable may hold back before it is "
                       "flushed; 0: 4x riptide_db_write_buffer_size (RocksDB "
                       "max_total_wal_size)",
                       nullptr, nullptr, 0, 0, TiB, 0);
MYSQL_SYSVAR_BOOL(young_space_bound, sv_young_space_bound, PLUGIN_VAR_READONLY,
                  "While a table space is small next to riptide_write_buffer_size, flush "
                  "and merge earlier so the disk holds at most about 1.5x the data (costs "
                  "more compaction writes until about 1 GiB of data)",
                  nullptr, nullptr, TRUE);
MYSQL_SYSVAR_STR(data_dir, sv_data_dir, RO_VAR,
                 "Directory of the Riptide database (default: #riptide in the datadir; a "
                 "relative path is relative to the datadir)",
                 nullptr, nullptr, nullptr);
MYSQL_THDVAR_ULONG(lock_wait_timeout, PLUGIN_VAR_RQCMDARG,
                   "Seconds a statement waits for a row lock before giving up with "
                   "ER_LOCK_WAIT_TIMEOUT (innodb_lock_wait_timeout); read at each "
                   "statement's start (NOWAIT and WAIT n override it for one statement)",
                   nullptr, nullptr, 50, 1, 1024 * 1024 * 1024, 0);

} // namespace

struct st_mysql_sys_var *riptide_system_variables[]= {
    MYSQL_SYSVAR(block_cache_size),
    MYSQL_SYSVAR(write_buffer_size),
    MYSQL_SYSVAR(db_write_buffer_size),
    MYSQL_SYSVAR(sync_mode),
    MYSQL_SYSVAR(sync_interval_ms),
    MYSQL_SYSVAR(compression),
    MYSQL_SYSVAR(max_background_compactions),
    MYSQL_SYSVAR(max_background_flushes),
    MYSQL_SYSVAR(l0_slowdown_trigger),
    MYSQL_SYSVAR(l0_stop_trigger),
    MYSQL_SYSVAR(bloom_bits_per_key),
    MYSQL_SYSVAR(max_open_files),
    MYSQL_SYSVAR(target_file_size),
    MYSQL_SYSVAR(max_total_wal_size),
    MYSQL_SYSVAR(young_space_bound),
    MYSQL_SYSVAR(data_dir),
    MYSQL_SYSVAR(lock_wait_timeout),
    nullptr};

/* The lock wait limit of a session begun now by `thd`, in milliseconds. */
uint64_t riptide_lock_wait_timeout_ms(THD *thd)
{
  return uint64_t(THDVAR(thd, lock_wait_timeout)) * 1000;
}

namespace {

/* ---------------------------------------------------------------------------------------
   Status variables: SHOW GLOBAL STATUS LIKE 'riptide%'. One SHOW_FUNC entry "riptide" that,
   at query time, copies riptide_stats into the server's scratch buffer and returns an array
   of SHOW_LONGLONG entries pointing into that copy (names get the "riptide_" prefix). */

#define RIPTIDE_STAT(name, field) {name, offsetof(riptide_stats_t, field)}
struct Riptide_stat_field
{
  const char *name;
  size_t offset;
};
/* Sorted by name, as SHOW STATUS lists the server's own variables. */
const Riptide_stat_field riptide_stat_fields[]= {
    RIPTIDE_STAT("block_cache_capacity", block_cache_capacity),
    RIPTIDE_STAT("block_cache_hits", block_cache_hits),
    RIPTIDE_STAT("block_cache_misses", block_cache_misses),
    RIPTIDE_STAT("block_cache_usage", block_cache_usage),
    RIPTIDE_STAT("bytes_written", user_bytes_written),
    RIPTIDE_STAT("compaction_bytes_read", compaction_bytes_read),
    RIPTIDE_STAT("compaction_bytes_written", compaction_bytes_written),
    RIPTIDE_STAT("compaction_files_moved", compaction_files_moved),
    RIPTIDE_STAT("compactions", compactions),
    RIPTIDE_STAT("flush_bytes_written", flush_bytes_written),
    RIPTIDE_STAT("flushes", flushes),
    RIPTIDE_STAT("gets", gets),
    RIPTIDE_STAT("immutable_memtables", immutable_memtables),
    RIPTIDE_STAT("keys_written", keys_written),
    RIPTIDE_STAT("live_snapshots", live_snapshots),
    RIPTIDE_STAT("lock_deadlocks", lock_deadlocks),
    RIPTIDE_STAT("lock_granted", lock_granted),
    RIPTIDE_STAT("lock_timeouts", lock_timeouts),
    RIPTIDE_STAT("lock_wait_micros", lock_wait_micros),
    RIPTIDE_STAT("lock_waits", lock_waits),
    RIPTIDE_STAT("locked_keys", locked_keys),
    RIPTIDE_STAT("memtable_bytes", memtable_bytes),
    RIPTIDE_STAT("open_table_files", open_table_files),
    RIPTIDE_STAT("pending_compaction_bytes", pending_compaction_bytes),
    RIPTIDE_STAT("running_compactions", running_compactions),
    RIPTIDE_STAT("table_opens", table_opens),
    RIPTIDE_STAT("wal_bytes_written", wal_bytes_written),
    RIPTIDE_STAT("wal_syncs", wal_syncs),
    RIPTIDE_STAT("write_groups", write_groups),
    RIPTIDE_STAT("write_slowdown_micros", write_slowdown_micros),
    RIPTIDE_STAT("write_slowdowns", write_slowdowns),
    RIPTIDE_STAT("write_stop_micros", write_stop_micros),
    RIPTIDE_STAT("write_stops", write_stops),
};
#undef RIPTIDE_STAT
constexpr size_t RIPTIDE_STAT_COUNT= array_elements(riptide_stat_fields);

/* What show_riptide_vars lays out in the server's buffer. */
struct Riptide_status_buffer
{
  riptide_stats_t stats;
  SHOW_VAR vars[RIPTIDE_STAT_COUNT + 1];
};
static_assert(sizeof(Riptide_status_buffer) <= SHOW_VAR_FUNC_BUFF_SIZE,
              "the status variables do not fit SHOW_VAR_FUNC_BUFF_SIZE");
static_assert(alignof(Riptide_status_buffer) <= alignof(long),
              "the server's buffer is only aligned for long");

int show_riptide_vars(THD *, SHOW_VAR *var, void *buff, struct system_status_var *,
                      enum enum_var_type)
{
  Riptide_status_buffer *b= new (buff) Riptide_status_buffer;
  var->type= SHOW_ARRAY;
  var->value= b->vars;
  b->vars[0]= {NullS, NullS, SHOW_LONG};
  if (!riptide_db)
    return 0;
  char *err= nullptr;
  riptide_status_t st= riptide_stats(riptide_db, &b->stats, sizeof b->stats, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_warning("RIPTIDE: statistics: %s", riptide_take_message(st, err).c_str());
    return 0;
  }
  for (size_t i= 0; i < RIPTIDE_STAT_COUNT; i++)
  {
    b->vars[i].name= riptide_stat_fields[i].name;
    b->vars[i].value= reinterpret_cast<char *>(&b->stats) + riptide_stat_fields[i].offset;
    b->vars[i].type= SHOW_LONGLONG;
  }
  b->vars[RIPTIDE_STAT_COUNT]= {NullS, NullS, SHOW_LONG};
  return 0;
}

/* The resolved riptide_data_dir (what SHOW VARIABLES prints). */
std::string data_dir_value;

} // namespace

SHOW_VAR riptide_status_variables[]= {
    {"riptide", reinterpret_cast<char *>(&show_riptide_vars), SHOW_FUNC},
    {NullS, NullS, SHOW_LONG}};

/* The database directory: riptide_data_dir, by default <datadir>/#riptide (the '#' keeps
   the server from taking the folder for a database, as MyRocks' #rocksdb); a relative path
   is relative to the datadir. */
std::string riptide_resolve_data_dir()
{
  std::string home(mysql_real_data_home);
  if (!home.empty() && home.back() != FN_LIBCHAR)
    home.push_back(FN_LIBCHAR);
  if (!sv_data_dir || !*sv_data_dir)
    data_dir_value= home + "#riptide";
  else if (sv_data_dir[0] == FN_LIBCHAR)
    data_dir_value= sv_data_dir;
  else
    data_dir_value= home + sv_data_dir;
  sv_data_dir= const_cast<char *>(data_dir_value.c_str());
  return data_dir_value;
}

/* The engine options from the system variables. On failure, logs which variable the
   engine refused and returns false. */
bool riptide_apply_options(riptide_options_t *opts)
{
  char *err= nullptr;
  auto check= [&](const char *var, riptide_status_t st) {
    if (st == RIPTIDE_OK)
      return true;
    sql_print_error("RIPTIDE: invalid riptide_%s: %s", var, riptide_take_message(st, err).c_str());
    err= nullptr;
    return false;
  };
  int32_t sync= sv_sync_mode == SYNC_MODE_NONE       ? RIPTIDE_SYNC_NONE
                : sv_sync_mode == SYNC_MODE_INTERVAL ? RIPTIDE_SYNC_INTERVAL
                                                     : RIPTIDE_SYNC_FULL;
  int32_t compression=
      sv_compression == COMPRESSION_ZSTD ? RIPTIDE_COMPRESSION_ZSTD : RIPTIDE_COMPRESSION_NONE;
  return check("create_if_missing", riptide_options_set_create_if_missing(opts, true, &err)) &&
         check("sync_mode",
               riptide_options_set_sync_mode(opts, sync, sv_sync_interval_ms, &err)) &&
         check("block_cache_size",
               riptide_options_set_block_cache_size(opts, sv_block_cache_size, &err)) &&
         check("write_buffer_size",
               riptide_options_set_write_buffer_size(opts, size_t(sv_write_buffer_size),
                                                     &err)) &&
         check("db_write_buffer_size",
               riptide_options_set_db_write_buffer_size(opts, size_t(sv_db_write_buffer_size),
                                                        &err)) &&
         check("compression",
               riptide_options_set_compression(opts, compression, ZSTD_LEVEL, &err)) &&
         check("max_background_compactions",
               riptide_options_set_max_background_compactions(
                   opts, sv_max_background_compactions, &err)) &&
         check("max_background_flushes",
               riptide_options_set_max_background_flushes(opts, sv_max_background_flushes,
                                                          &err)) &&
         check("l0_slowdown_trigger",
               riptide_options_set_l0_slowdown_trigger(opts, sv_l0_slowdown_trigger, &err)) &&
         check("l0_stop_trigger",
               riptide_options_set_l0_stop_trigger(opts, sv_l0_stop_trigger, &err)) &&
         check("bloom_bits_per_key",
               riptide_options_set_bloom_bits_per_key(opts, sv_bloom_bits_per_key, &err)) &&
         check("max_open_files",
               riptide_options_set_max_open_files(opts, sv_max_open_files, &err)) &&
         check("target_file_size",
               riptide_options_set_target_file_size(opts, sv_target_file_size, &err)) &&
         check("max_total_wal_size",
               riptide_options_set_max_total_wal_size(opts, sv_max_total_wal_size, &err)) &&
         check("young_space_bound",
               riptide_options_set_young_space_bound(opts, sv_young_space_bound, &err));
}
