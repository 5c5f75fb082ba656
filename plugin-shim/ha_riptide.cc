/*
  ha_riptide: the MariaDB handler of Riptide. See ha_riptide.h and README.md.

  The data dictionary, key spaces, secondary index maintenance, unique checks, hidden row
  ids, auto-increment and statement savepoints live in Rust (crates/handler, through the
  riptide_handler_* / riptide_htable_* / riptide_hsession_* C ABI). This file only turns
  MariaDB rows and keys into bytes:
    primary key      -> the key parts' sort keys (Field::make_sort_key_part), concatenated
    hidden row id    -> 8 bytes big-endian, from riptide_htable_next_row_id
    secondary key    -> the index's key parts encoded the same way (a nullable part starts
                        with a NULL-indicator byte, 0 for NULL, so NULLs sort first)
    row              -> 0x01 + the MariaDB record buffer (reclength bytes); a table with
                        BLOB/TEXT columns: 0x02 + the record buffer (blob pointers zeroed)
                        + per blob column, in field order, u32 LE length + the bytes
    prefix key part  -> the first N characters' collation weights, padded to the prefix's
                        fixed width (binary strings: the bytes, zero-padded, + u16 BE length)
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_lex.h"
#include "set_var.h"
#include "sql_plugin.h"
#include "key.h"
#include "log.h"
#include <mysql/plugin.h>

#include "ha_riptide.h"

#include <mutex>
#include <set>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* sql_show.cc: directories in the datadir that are not databases (as MyRocks' #rocksdb). */
void ignore_db_dirs_append(const char *dirname_arg);

namespace {

/* Handler error for every Riptide failure without a closer MariaDB code; the message is
   kept by the handler and printed by get_error_message(). */
constexpr int HA_ERR_RIPTIDE= HA_ERR_LAST + 1;
/* First byte of every row value: the format of what follows. V1: the record buffer alone
   (tables without BLOB/TEXT columns); V2: the record buffer and the blob bodies. */
constexpr char ROW_FORMAT_V1= 1;
constexpr char ROW_FORMAT_V2= 2;
/* Key formats of the shim: the per-table number the data dictionary keeps
   (riptide_htable_key_format); a table keeps the format it was created with, and ALTER
   TABLE ... FORCE rebuilds it in the current one.
   0, 1: the original encoding;
   2: a VARCHAR/TEXT/BLOB part in a NO PAD collation also stores the length of its
      collation weights (is_nopad_string_part). */
constexpr uint32_t KEY_FORMAT_NOPAD_LENGTH= 2;
constexpr uint32_t KEY_FORMAT_CURRENT= KEY_FORMAT_NOPAD_LENGTH;
/* CHECK TABLE reports at most this many inconsistencies one by one. */
constexpr size_t CHECK_REPORT_LIMIT= 20;
/* records_in_range counts at most this many keys (then extrapolates). */
constexpr uint64_t RANGE_COUNT_LIMIT= 1000;
/* read_time: a seek into the primary key, and each row read from it in key order, in
   MariaDB's cost unit (one random row read). */
constexpr double PK_SEEK_COST= 0.5;
constexpr double PK_ROW_COST= 1.0 / 20;

handlerton *riptide_hton= nullptr;
riptide_db_t *riptide_db= nullptr;
riptide_handler_t *riptide_handler= nullptr;

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
uint64_t lock_wait_timeout_ms(THD *thd)
{
  return uint64_t(THDVAR(thd, lock_wait_timeout)) * 1000;
}

std::string be64(uint64_t v)
{
  std::string out;
  for (int i= 7; i >= 0; i--)
    out.push_back(char(v >> (8 * i)));
  return out;
}

/* The smallest key greater than every key starting with `prefix` (empty: none). */
std::string prefix_successor(std::string p)
{
  while (!p.empty())
  {
    uchar last= uchar(p.back());
    if (last != 0xff)
    {
      p.back()= char(last + 1);
      return p;
    }
    p.pop_back();
  }
  return p;
}

/* Takes ownership of a message from the C ABI. */
std::string take_message(riptide_status_t st, char *msg)
{
  std::string out= msg ? msg : riptide_status_name(int32_t(st));
  riptide_free(msg);
  return out;
}

/* Reports a DDL failure to the client and returns the handler error for it. */
int ddl_error(const char *what, riptide_status_t st, char *err)
{
  std::string msg= take_message(st, err);
  my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: %s: %s", MYF(0), what, msg.c_str());
  return HA_ERR_INTERNAL_ERROR;
}

/* ---------------------------------------------------------------------------------------
   Transactions: one Riptide session (crates/handler: a pessimistic transaction with a
   savepoint stack) per connection.

   The session begins at the first table lock of a statement and is registered for the
   statement and, outside autocommit, for the whole transaction. Inside a multi-statement
   transaction every statement pushes a savepoint, so a failing statement rolls back only
   itself. SQL savepoints are session savepoints too; `savepoints` mirrors the stack.
*/
struct Riptide_trx
{
  riptide_hsession_t *txn= nullptr;
  /* The session's savepoints, oldest first: a statement's is 0, an SQL savepoint's its id
     (what the server keeps for it, riptide_savepoint_set). */
  std::vector<uint64_t> savepoints;
  uint64_t last_savepoint_id= 0;
  bool stmt_savepoint= false;
  /* Interrupts the session's lock waits from another thread (KILL QUERY, shutdown:
     riptide_kill_query). Made with the session and freed before it, under
     interrupter_mutex, which the killing thread holds while it fires. */
  riptide_hinterrupt_t *interrupter= nullptr;
  std::mutex interrupter_mutex;
  /* An interrupt was fired since the session's last statement began (cleared then). */
  std::atomic<bool> interrupted{false};
  /* The lock wait limit last given to the session (riptide_hsession_set_lock_timeout), in
     milliseconds. */
  uint64_t lock_timeout_ms= 0;
  /* Handlers with a live iterator on `txn` (freed before the transaction). */
  std::set<ha_riptide *> iterators;
  /* MariaDB key number of the connection's last duplicate-key failure (info(ERRKEY)).
     Kept per connection, as InnoDB keeps it per transaction: a partitioned table asks the
     partition it used last, which is not the one that failed when a row moving to another
     partition met a duplicate there. */
  uint dup_key= uint(-1);
};

Riptide_trx *get_trx(THD *thd)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx)
  {
    trx= new Riptide_trx;
    thd_set_ha_data(thd, riptide_hton, trx);
  }
  return trx;
}

bool in_multi_statement(THD *thd)
{
  return thd_test_options(thd, OPTION_NOT_AUTOCOMMIT | OPTION_BEGIN);
}

void drop_iterators(Riptide_trx *trx)
{
  for (ha_riptide *h : std::set<ha_riptide *>(trx->iterators))
    h->drop_iterator();
  trx->iterators.clear();
}

void end_txn(Riptide_trx *trx)
{
  drop_iterators(trx);
  {
    std::lock_guard<std::mutex> guard(trx->interrupter_mutex);
    riptide_hinterrupt_destroy(trx->interrupter);
    trx->interrupter= nullptr;
  }
  riptide_hsession_destroy(trx->txn);
  trx->txn= nullptr;
  trx->savepoints.clear();
  trx->stmt_savepoint= false;
}

/* Begins the connection's Riptide session with the connection's isolation level; with
   `snapshot` the read snapshot is taken now (START TRANSACTION WITH CONSISTENT SNAPSHOT). */
riptide_status_t begin_trx(THD *thd, Riptide_trx *trx, bool snapshot, char **err)
{
  int iso= thd_tx_isolation(thd);
  int32_t level= iso == ISO_READ_UNCOMMITTED ? RIPTIDE_HISO_READ_UNCOMMITTED
                 : iso == ISO_READ_COMMITTED ? RIPTIDE_HISO_READ_COMMITTED
                 : iso == ISO_REPEATABLE_READ ? RIPTIDE_HISO_REPEATABLE_READ
                                              : RIPTIDE_HISO_SERIALIZABLE;
  riptide_status_t st=
      snapshot ? riptide_hsession_begin_snapshot(riptide_handler, level,
                                                 lock_wait_timeout_ms(thd), &trx->txn, err)
               : riptide_hsession_begin(riptide_handler, level, lock_wait_timeout_ms(thd),
                                        &trx->txn, err);
  if (st != RIPTIDE_OK)
  {
    trx->txn= nullptr;
    return st;
  }
  trx->savepoints.clear();
  trx->stmt_savepoint= false;
  trx->lock_timeout_ms= lock_wait_timeout_ms(thd);
  riptide_hinterrupt_t *interrupter= nullptr;
  st= riptide_hsession_interrupter(trx->txn, &interrupter, err);
  if (st != RIPTIDE_OK)
  {
    riptide_hsession_destroy(trx->txn);
    trx->txn= nullptr;
    return st;
  }
  std::lock_guard<std::mutex> guard(trx->interrupter_mutex);
  trx->interrupter= interrupter;
  return st;
}

/* The row lock wait limit of the statement `thd` runs, in milliseconds: the statement's own
   lock_wait_timeout when it sets one (SELECT ... FOR UPDATE NOWAIT / WAIT n, which the
   server turns into SET STATEMENT lock_wait_timeout = 0 / n, as it does for
   innodb_lock_wait_timeout), else riptide_lock_wait_timeout. */
uint64_t statement_lock_timeout_ms(THD *thd)
{
  List_iterator_fast<set_var_base> it(thd->lex->stmt_var_list);
  while (set_var_base *v= it++)
  {
    if (!v->is_system())
      continue;
    const sys_var *var= static_cast<set_var *>(v)->var;
    if (var && var->name.length == 17 &&
        !strncasecmp(var->name.str, "lock_wait_timeout", 17))
      return uint64_t(thd->variables.lock_wait_timeout) * 1000;
  }
  return lock_wait_timeout_ms(thd);
}

/* At the start of each statement: re-arms the session after an interrupt (the killed
   statement has ended) and applies the statement's lock wait limit. */
riptide_status_t begin_statement_waits(THD *thd, Riptide_trx *trx, char **err)
{
  if (trx->interrupted.exchange(false))
    riptide_hsession_clear_interrupt(trx->txn);
  uint64_t timeout= statement_lock_timeout_ms(thd);
  if (timeout == trx->lock_timeout_ms)
    return RIPTIDE_OK;
  riptide_status_t st= riptide_hsession_set_lock_timeout(trx->txn, timeout, err);
  if (st == RIPTIDE_OK)
    trx->lock_timeout_ms= timeout;
  return st;
}

/* KILL QUERY / KILL CONNECTION / shutdown of `thd` (handlerton::kill_query, called with
   the victim's LOCK_thd_kill held): its current row lock wait, if any, ends at once with
   RIPTIDE_INTERRUPTED (HA_ERR_ABORTED_BY_USER), as InnoDB cancels a lock wait. */
void riptide_kill_query(handlerton *, THD *thd, enum thd_kill_levels)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx)
    return;
  std::lock_guard<std::mutex> guard(trx->interrupter_mutex);
  if (trx->interrupter)
  {
    trx->interrupted= true;
    riptide_hinterrupt_fire(trx->interrupter);
  }
}

/* Pushes a savepoint (`id`: 0 for a statement's, else an SQL savepoint's); false on
   failure (logged). */
bool push_savepoint(Riptide_trx *trx, uint64_t id= 0)
{
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_set_savepoint(trx->txn, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: set savepoint: %s", take_message(st, err).c_str());
    return false;
  }
  trx->savepoints.push_back(id);
  return true;
}

/* Pops the newest savepoint, undoing (rollback) or keeping (release) its writes. */
bool pop_savepoint(Riptide_trx *trx, bool rollback)
{
  char *err= nullptr;
  riptide_status_t st= rollback ? riptide_hsession_rollback_to_savepoint(trx->txn, &err)
                                : riptide_hsession_release_savepoint(trx->txn, &err);
  if (!trx->savepoints.empty())
    trx->savepoints.pop_back();
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: %s savepoint: %s", rollback ? "rollback to" : "release",
                    take_message(st, err).c_str());
    return false;
  }
  return true;
}

/* A transaction that held at least this much memory for its writes and locks gives it
   back to the system when it ends (trim_after). */
constexpr size_t TRIM_AFTER_BYTES= 64 * 1024 * 1024;

/* After a transaction that held `held` bytes ended: the C library keeps the memory freed
   (glibc's arenas), so mariadbd's RSS stayed at the peak of the biggest statement (1M rows:
   about 1 GB). malloc_trim gives the free pages back; it walks the heap, so only after big
   transactions. */
void trim_after(size_t held)
{
#ifdef __GLIBC__
  if (held >= TRIM_AFTER_BYTES)
    malloc_trim(0);
#else
  (void) held;
#endif
}

int riptide_commit(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  if (all || !in_multi_statement(thd))
  {
    drop_iterators(trx);
    char *err= nullptr;
    size_t held= riptide_hsession_approximate_memory(trx->txn);
    riptide_status_t st= riptide_hsession_commit(trx->txn, &err);
    end_txn(trx);
    trim_after(held);
    if (st != RIPTIDE_OK)
    {
      std::string msg= take_message(st, err);
      push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                          "RIPTIDE: commit failed: %s", msg.c_str());
      sql_print_warning("RIPTIDE: commit failed: %s", msg.c_str());
      return st == RIPTIDE_CONFLICT || st == RIPTIDE_DEADLOCK ? HA_ERR_LOCK_DEADLOCK
                                                              : HA_ERR_INTERNAL_ERROR;
    }
    return 0;
  }
  /* The end of a statement inside a transaction: keep its writes. */
  if (trx->stmt_savepoint)
  {
    trx->stmt_savepoint= false;
    pop_savepoint(trx, false);
  }
  return 0;
}

int riptide_rollback(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  if (all || !in_multi_statement(thd))
  {
    drop_iterators(trx);
    char *err= nullptr;
    size_t held= riptide_hsession_approximate_memory(trx->txn);
    /* A transaction that lost a conflict is already rolled back: not an error. */
    riptide_status_t st= riptide_hsession_rollback(trx->txn, &err);
    if (st != RIPTIDE_OK)
      sql_print_warning("RIPTIDE: rollback: %s", take_message(st, err).c_str());
    end_txn(trx);
    trim_after(held);
    return 0;
  }
  if (trx->stmt_savepoint)
  {
    drop_iterators(trx);
    trx->stmt_savepoint= false;
    if (!pop_savepoint(trx, true))
      return HA_ERR_INTERNAL_ERROR;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------
   XA / two-phase commit. XA PREPARE (or the server's own two-phase commit with the binary
   log) prepares the connection's session under the transaction's XID: its writes are
   durable in the WAL, not visible, and its locks stay held. XA COMMIT / ROLLBACK in the same
   connection then end the session as usual (riptide_commit / riptide_rollback). A prepared
   transaction whose connection went away (MariaDB detaches it) or that was found in the WAL
   after a restart is finished by XID (commit_by_xid / rollback_by_xid); recover() lists
   them for the server at startup. */

/* X/Open XA return codes of commit_by_xid / rollback_by_xid (xa.h of the XA
   specification; the server does not export them, InnoDB defines its own in trx0xa.h). */
constexpr int RIPTIDE_XA_OK= 0;
constexpr int RIPTIDE_XAER_RMERR= -3;
constexpr int RIPTIDE_XAER_NOTA= -4;

int riptide_prepare(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  /* The end of a statement inside a transaction: nothing to prepare yet (commit(all=false)
     follows and keeps the statement's writes). */
  if (!all && in_multi_statement(thd))
    return 0;
  drop_iterators(trx);
  if (trx->stmt_savepoint)
  {
    trx->stmt_savepoint= false;
    pop_savepoint(trx, false);
  }
  MYSQL_XID xid;
  thd_get_xid(thd, &xid);
  long glen= xid.gtrid_length, blen= xid.bqual_length;
  if (glen < 0 || blen < 0 || glen + blen > long(sizeof xid.data))
  {
    sql_print_error("RIPTIDE: XA PREPARE: malformed XID (gtrid %ld, bqual %ld bytes)", glen,
                    blen);
    return HA_ERR_INTERNAL_ERROR;
  }
  char *err= nullptr;
  riptide_status_t st=
      riptide_hsession_prepare(trx->txn, int32_t(xid.formatID), xid.data, size_t(glen),
                               xid.data + glen, size_t(blen), &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= take_message(st, err);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: prepare failed: %s", msg.c_str());
    sql_print_warning("RIPTIDE: prepare failed: %s", msg.c_str());
    return st == RIPTIDE_CONFLICT || st == RIPTIDE_DEADLOCK ? HA_ERR_LOCK_DEADLOCK
           : st == RIPTIDE_TIMED_OUT                       ? HA_ERR_LOCK_WAIT_TIMEOUT
                                                           : HA_ERR_INTERNAL_ERROR;
  }
  return 0;
}

/* Commits or rolls back the prepared transaction `xid` of no live connection. */
int finish_by_xid(XID *xid, bool commit)
{
  if (!riptide_db || !xid || xid->gtrid_length < 0 || xid->bqual_length < 0 ||
      xid->gtrid_length + xid->bqual_length > long(sizeof xid->data))
    return RIPTIDE_XAER_NOTA;
  char *err= nullptr;
  riptide_status_t st=
      (commit ? riptide_commit_prepared : riptide_rollback_prepared)(
          riptide_db, int32_t(xid->formatID), xid->data, size_t(xid->gtrid_length),
          xid->data + xid->gtrid_length, size_t(xid->bqual_length), &err);
  if (st == RIPTIDE_OK)
    return RIPTIDE_XA_OK;
  std::string msg= take_message(st, err);
  if (st == RIPTIDE_NOT_FOUND)
    return RIPTIDE_XAER_NOTA;
  sql_print_error("RIPTIDE: XA %s: %s", commit ? "COMMIT" : "ROLLBACK", msg.c_str());
  return RIPTIDE_XAER_RMERR;
}

int riptide_commit_by_xid(handlerton *, XID *xid) { return finish_by_xid(xid, true); }

int riptide_rollback_by_xid(handlerton *, XID *xid) { return finish_by_xid(xid, false); }

/* XIDs recover() returned already: the server calls it until it returns fewer than `len`,
   and the ones it keeps prepared (external XA) would otherwise come back each time. */
std::set<std::string> recovered_xids;

int riptide_recover(handlerton *, XID *xid_list, uint len)
{
  if (!riptide_db || !xid_list || !len)
    return 0;
  riptide_xid_t *xids= nullptr;
  size_t count= 0;
  char *err= nullptr;
  riptide_status_t st= riptide_prepared_list(riptide_db, &xids, &count, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: listing prepared transactions: %s",
                    take_message(st, err).c_str());
    return 0;
  }
  uint got= 0;
  for (size_t i= 0; i < count && got < len; i++)
  {
    const riptide_xid_t &x= xids[i];
    if (x.gtrid_len > sizeof x.gtrid || x.bqual_len > sizeof x.bqual ||
        x.gtrid_len + x.bqual_len > sizeof xid_list[got].data)
      continue;
    std::string id= std::to_string(x.format_id) + ":" +
                    std::string(reinterpret_cast<const char *>(x.gtrid), x.gtrid_len) + ":" +
                    std::string(reinterpret_cast<const char *>(x.bqual), x.bqual_len);
    if (!recovered_xids.insert(id).second)
      continue;
    XID &out= xid_list[got++];
    out.null();
    out.formatID= x.format_id;
    out.gtrid_length= long(x.gtrid_len);
    out.bqual_length= long(x.bqual_len);
    memcpy(out.data, x.gtrid, x.gtrid_len);
    memcpy(out.data + x.gtrid_len, x.bqual, x.bqual_len);
  }
  riptide_free(xids);
  return int(got);
}

int riptide_close_connection(handlerton *, THD *thd)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (trx)
  {
    end_txn(trx);
    /* riptide_kill_query runs under the connection's LOCK_thd_kill: not while the
       Riptide_trx goes. */
    mysql_mutex_lock(&thd->LOCK_thd_kill);
    thd_set_ha_data(thd, riptide_hton, nullptr);
    mysql_mutex_unlock(&thd->LOCK_thd_kill);
    delete trx;
  }
  return 0;
}

/* SQL savepoints: `sv` holds the savepoint's id (0: set before the session began), which
   Riptide_trx::savepoints finds in the session's savepoint stack. */
int riptide_savepoint_set(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  if (!trx->txn)
  {
    *static_cast<uint64_t *>(sv)= 0;
    return 0;
  }
  uint64_t id= ++trx->last_savepoint_id;
  if (!push_savepoint(trx, id))
    return HA_ERR_INTERNAL_ERROR;
  *static_cast<uint64_t *>(sv)= id;
  return 0;
}

/* Where SQL savepoint `id` is in the session's stack (SIZE_MAX: not there). */
static size_t savepoint_index(const Riptide_trx *trx, uint64_t id)
{
  for (size_t i= trx->savepoints.size(); id && i-- > 0;)
    if (trx->savepoints[i] == id)
      return i;
  return SIZE_MAX;
}

int riptide_savepoint_rollback(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  uint64_t id= *static_cast<uint64_t *>(sv);
  size_t at= trx->txn ? savepoint_index(trx, id) : SIZE_MAX;
  if (at == SIZE_MAX)
    return 0;
  drop_iterators(trx);
  while (trx->savepoints.size() > at + 1)
    if (!pop_savepoint(trx, true))
      return HA_ERR_INTERNAL_ERROR;
  /* Undo the writes after the savepoint and keep the savepoint itself. */
  if (!pop_savepoint(trx, true) || !push_savepoint(trx, id))
    return HA_ERR_INTERNAL_ERROR;
  return 0;
}

bool riptide_savepoint_rollback_can_release_mdl(handlerton *, THD *) { return true; }

/* RELEASE SAVEPOINT, and the server's release of an older savepoint of the same name when a
   SAVEPOINT reuses it: only that savepoint goes, the ones set after it stay (InnoDB's
   trx_release_savepoint_for_mysql). Releasing every later one too undid nothing wrong for
   RELEASE, but after `SAVEPOINT a; SAVEPOINT b; SAVEPOINT a` a ROLLBACK TO b found b gone
   and undid nothing. */
int riptide_savepoint_release(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  uint64_t id= *static_cast<uint64_t *>(sv);
  size_t at= trx->txn ? savepoint_index(trx, id) : SIZE_MAX;
  if (at == SIZE_MAX)
    return 0;
  if (at + 1 == trx->savepoints.size())
    return pop_savepoint(trx, false) ? 0 : HA_ERR_INTERNAL_ERROR;
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_release_savepoint_at(trx->txn, at, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: release savepoint: %s", take_message(st, err).c_str());
    return HA_ERR_INTERNAL_ERROR;
  }
  trx->savepoints.erase(trx->savepoints.begin() + at);
  return 0;
}

/* START TRANSACTION WITH CONSISTENT SNAPSHOT: the connection's session begins now and
   takes its snapshot now (not at the first read). As in InnoDB, only under REPEATABLE READ
   (and SERIALIZABLE, which runs as it); other levels get a warning. */
int riptide_start_consistent_snapshot(handlerton *hton, THD *thd)
{
  Riptide_trx *trx= get_trx(thd);
  int iso= thd_tx_isolation(thd);
  if (iso != ISO_REPEATABLE_READ && iso != ISO_SERIALIZABLE)
  {
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, HA_ERR_UNSUPPORTED,
                        "RIPTIDE: WITH CONSISTENT SNAPSHOT was ignored because this phrase "
                        "can only be used with REPEATABLE READ isolation level.");
    return 0;
  }
  if (trx->txn && riptide_hsession_has_snapshot(trx->txn))
    return 0;
  if (trx->txn)
  {
    /* A session without a snapshot has read nothing: begin it again with one. */
    char *err= nullptr;
    riptide_status_t st= riptide_hsession_rollback(trx->txn, &err);
    if (st != RIPTIDE_OK)
      sql_print_warning("RIPTIDE: rollback: %s", take_message(st, err).c_str());
    end_txn(trx);
  }
  char *err= nullptr;
  riptide_status_t st= begin_trx(thd, trx, true, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= take_message(st, err);
    sql_print_error("RIPTIDE: START TRANSACTION WITH CONSISTENT SNAPSHOT: %s", msg.c_str());
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: cannot begin a transaction: %s", MYF(0),
                    msg.c_str());
    return 1;
  }
  trans_register_ha(thd, true, hton, 0);
  return 0;
}

bool riptide_show_status(handlerton *, THD *thd, stat_print_fn *print, enum ha_stat_type type)
{
  if (type != HA_ENGINE_STATUS || !riptide_db)
    return false;
  char *report= nullptr, *err= nullptr;
  riptide_status_t st= riptide_stats_report(riptide_db, &report, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= take_message(st, err);
    return print(thd, "RIPTIDE", 7, "", 0, msg.c_str(), msg.size());
  }
  bool res= print(thd, "RIPTIDE", 7, "", 0, report, strlen(report));
  riptide_free(report);
  return res;
}

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
    sql_print_warning("RIPTIDE: statistics: %s", take_message(st, err).c_str());
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

SHOW_VAR riptide_status_variables[]= {
    {"riptide", reinterpret_cast<char *>(&show_riptide_vars), SHOW_FUNC},
    {NullS, NullS, SHOW_LONG}};

handler *riptide_create_handler(handlerton *hton, TABLE_SHARE *table, MEM_ROOT *mem_root)
{
  return new (mem_root) ha_riptide(hton, table);
}

/* The database directory: riptide_data_dir, by default <datadir>/#riptide (the '#' keeps
   the server from taking the folder for a database, as MyRocks' #rocksdb); a relative path
   is relative to the datadir. */
std::string data_dir()
{
  std::string home(mysql_real_data_home);
  if (!home.empty() && home.back() != FN_LIBCHAR)
    home.push_back(FN_LIBCHAR);
  if (!sv_data_dir || !*sv_data_dir)
    return home + "#riptide";
  if (sv_data_dir[0] == FN_LIBCHAR)
    return sv_data_dir;
  return home + sv_data_dir;
}

/* The resolved riptide_data_dir (what SHOW VARIABLES prints). */
std::string data_dir_value;

/* The engine options from the system variables. On failure, logs which variable the
   engine refused and returns false. */
bool apply_options(riptide_options_t *opts)
{
  char *err= nullptr;
  auto check= [&](const char *var, riptide_status_t st) {
    if (st == RIPTIDE_OK)
      return true;
    sql_print_error("RIPTIDE: invalid riptide_%s: %s", var, take_message(st, err).c_str());
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

int riptide_init(void *p)
{
  riptide_hton= static_cast<handlerton *>(p);
  if (riptide_abi_version() != RIPTIDE_ABI_VERSION)
  {
    sql_print_error("RIPTIDE: the library has C ABI %u, the plugin was built for %u",
                    riptide_abi_version(), unsigned(RIPTIDE_ABI_VERSION));
    return 1;
  }
  riptide_options_t *opts= riptide_options_create();
  if (!opts)
    return 1;
  /* By default the WAL is fsynced once a second in the background: a mariadbd crash loses
     no committed transaction, a power loss at most the last second
     (innodb_flush_log_at_trx_commit=2). */
  if (!apply_options(opts))
  {
    riptide_options_destroy(opts);
    sql_print_error("RIPTIDE: not started: fix the riptide_* option named above");
    return 1;
  }
  std::string dir= data_dir();
  data_dir_value= dir;
  sv_data_dir= const_cast<char *>(data_dir_value.c_str());
  char *err= nullptr;
  /* The engine's own notes and warnings (recovery, background errors) go to the error log. */
  riptide_log_to_stderr();
  riptide_status_t st= riptide_db_open(dir.c_str(), opts, &riptide_db, &err);
  riptide_options_destroy(opts);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: cannot open %s (riptide_data_dir and the other riptide_* "
                    "options): %s",
                    dir.c_str(), take_message(st, err).c_str());
    riptide_db= nullptr;
    return 1;
  }
  st= riptide_handler_open(riptide_db, &riptide_handler, &err);
  if (st == RIPTIDE_OK)
    st= riptide_handler_set_key_format(riptide_handler, KEY_FORMAT_CURRENT, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: cannot open the data dictionary in %s: %s", dir.c_str(),
                    take_message(st, err).c_str());
    riptide_handler_destroy(riptide_handler);
    riptide_handler= nullptr;
    riptide_db_destroy(riptide_db);
    riptide_db= nullptr;
    return 1;
  }
  /* The database folder, when it is directly in the datadir, is not a database. */
  ignore_db_dirs_append("#riptide");
  size_t slash= dir.find_last_of(FN_LIBCHAR);
  std::string parent= dir.substr(0, slash + 1), folder= dir.substr(slash + 1);
  std::string home(mysql_real_data_home);
  if (!home.empty() && home.back() != FN_LIBCHAR)
    home.push_back(FN_LIBCHAR);
  if (parent == home && !folder.empty() && folder != "#riptide")
    ignore_db_dirs_append(folder.c_str());
  riptide_hton->create= riptide_create_handler;
  riptide_hton->flags= HTON_CAN_RECREATE;
  riptide_hton->commit= riptide_commit;
  riptide_hton->rollback= riptide_rollback;
  riptide_hton->close_connection= riptide_close_connection;
  riptide_hton->savepoint_offset= sizeof(uint64_t);
  riptide_hton->savepoint_set= riptide_savepoint_set;
  riptide_hton->savepoint_rollback= riptide_savepoint_rollback;
  riptide_hton->savepoint_rollback_can_release_mdl=
      riptide_savepoint_rollback_can_release_mdl;
  riptide_hton->savepoint_release= riptide_savepoint_release;
  riptide_hton->show_status= riptide_show_status;
  riptide_hton->prepare= riptide_prepare;
  riptide_hton->commit_by_xid= riptide_commit_by_xid;
  riptide_hton->rollback_by_xid= riptide_rollback_by_xid;
  riptide_hton->recover= riptide_recover;
  riptide_hton->start_consistent_snapshot= riptide_start_consistent_snapshot;
  riptide_hton->kill_query= riptide_kill_query;
  sql_print_information("RIPTIDE: %s opened (Riptide %s)", dir.c_str(), riptide_version());
  return 0;
}

int riptide_deinit(void *)
{
  char *err= nullptr;
  if (riptide_handler)
  {
    /* Exact auto-increment and row id counters, so a clean restart leaves no gap. */
    riptide_status_t st= riptide_handler_close(riptide_handler, &err);
    if (st != RIPTIDE_OK)
      sql_print_error("RIPTIDE: close the data dictionary: %s", take_message(st, err).c_str());
    riptide_handler_destroy(riptide_handler);
    riptide_handler= nullptr;
  }
  if (riptide_db)
  {
    riptide_status_t st= riptide_db_close(riptide_db, &err);
    if (st != RIPTIDE_OK)
      sql_print_error("RIPTIDE: close: %s", take_message(st, err).c_str());
    riptide_db_destroy(riptide_db);
    riptide_db= nullptr;
  }
  return 0;
}

} // namespace

/* ---------------------------------------------------------------------------------------
   The handler */

ha_riptide::ha_riptide(handlerton *hton, TABLE_SHARE *table_arg) : handler(hton, table_arg) {}

ha_riptide::~ha_riptide() { drop_iterator(); }

/* Generated columns (HA_CAN_VIRTUAL_COLUMNS: VIRTUAL and STORED, indexes on STORED ones
   only) and GEOMETRY columns (HA_CAN_GEOMETRY: stored like BLOBs; SPATIAL indexes stay
   refused in create()). */
constexpr ulonglong GCOL_GEOMETRY_FLAGS= HA_CAN_VIRTUAL_COLUMNS | HA_CAN_GEOMETRY;

ulonglong ha_riptide::table_flags() const
{
  /* HA_PRIMARY_KEY_IN_READ_INDEX: every secondary entry carries the whole primary key, so
     an index-only read of a secondary index also gives the primary key columns (filled in
     from the entry or from the row, plan_keyread), and the server knows that an UPDATE of
     a primary key column changes the entries of every index it might be scanning. */
  return HA_REC_NOT_IN_SEQ | HA_NULL_IN_KEY | HA_TABLE_SCAN_ON_INDEX | HA_CAN_INDEX_BLOBS |
         HA_PRIMARY_KEY_REQUIRED_FOR_POSITION | HA_PRIMARY_KEY_IN_READ_INDEX |
         HA_CAN_SQL_HANDLER | HA_CAN_SKIP_LOCKED | GCOL_GEOMETRY_FLAGS |
         HA_BINLOG_ROW_CAPABLE | HA_BINLOG_STMT_CAPABLE | HA_CAN_ONLINE_BACKUPS;
}

/* Index condition pushdown (idx_cond_push, pushed_condition). */
constexpr ulong ICP_FLAG= HA_DO_INDEX_COND_PUSHDOWN;

/* HA_KEYREAD_ONLY on every index: an index-only read (extra(HA_EXTRA_KEYREAD)) fills
   every column the statement reads: from the index entry when they are all decodable parts
   of the index or of the primary key (integers, DATE, DATETIME, TIMESTAMP, TIME, DECIMAL:
   plan_keyread, decode_key_parts), else from the row the entry points to (read by primary
   key), whatever the columns' types. The server only counts a column as covered when the
   key holds all of it (no column prefixes, no BLOB/TEXT parts). */
ulong ha_riptide::index_flags(uint inx, uint, bool) const
{
  ulong flags= HA_READ_NEXT | HA_READ_PREV | HA_READ_ORDER | HA_READ_RANGE | HA_KEYREAD_ONLY |
               ICP_FLAG;
  if (table_share && inx == table_share->primary_key)
    flags|= HA_CLUSTERED_INDEX;
  return flags;
}

void ha_riptide::drop_iterator()
{
  if (iter)
  {
    riptide_txn_iter_destroy(iter);
    iter= nullptr;
    THD *thd= ha_thd();
    if (thd)
    {
      Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
      if (trx)
        trx->iterators.erase(this);
    }
  }
  iter_stale= false;
  /* point_read locks as a duplicate check only while the hash lookup's iterator is open. */
  iter_current= false;
}

bool ha_riptide::get_error_message(int error, String *buf)
{
  if (error == HA_ERR_RIPTIDE)
    buf->copy(last_error.data(), last_error.size(), system_charset_info);
  return false;
}

/* Maps a failed C ABI call to a handler error. */
int ha_riptide::status_error(riptide_status_t st, char *msg)
{
  std::string m= take_message(st, msg);
  switch (st)
  {
  case RIPTIDE_OK:
    return 0;
  case RIPTIDE_TIMED_OUT:
    return HA_ERR_LOCK_WAIT_TIMEOUT;
  case RIPTIDE_INTERRUPTED:
    /* KILL QUERY (or shutdown) ended a lock wait (riptide_kill_query), as InnoDB's
       DB_INTERRUPTED. */
    return HA_ERR_ABORTED_BY_USER;
  case RIPTIDE_DEADLOCK:
  case RIPTIDE_CONFLICT:
    /* The engine picked this transaction as the victim (deadlock), or it lost a write
       conflict under snapshot isolation and was rolled back: the whole transaction goes. */
    ha_thd()->mark_transaction_to_rollback(true);
    return HA_ERR_LOCK_DEADLOCK;
  default:
    last_error= m;
    sql_print_warning("RIPTIDE: %s", m.c_str());
    return HA_ERR_RIPTIDE;
  }
}

/* A failed row write: a duplicate key names MariaDB's key number for info(ERRKEY). */
int ha_riptide::row_error(riptide_status_t st, char *err, size_t dup_index)
{
  if (st == RIPTIDE_DUPLICATE_KEY)
  {
    riptide_free(err);
    get_trx(ha_thd())->dup_key=
        dup_index < table->s->keys + (has_pk ? 0 : 1) ? keynr_of(dup_index) : uint(-1);
    return HA_ERR_FOUND_DUPP_KEY;
  }
  return status_error(st, err);
}

/* The connection's session, begun if needed. */
riptide_hsession_t *ha_riptide::session(int *error)
{
  *error= 0;
  /* During an ALTER copy into this table: the copy's session (Riptide_share::active_copy). */
  if (share && share->active_copy && share->active_copy->active())
    return share->active_copy->session();
  THD *thd= ha_thd();
  Riptide_trx *trx= get_trx(thd);
  if (trx->txn)
    return trx->txn;
  char *err= nullptr;
  riptide_status_t st= begin_trx(thd, trx, false, &err);
  if (st != RIPTIDE_OK)
  {
    *error= status_error(st, err);
    return nullptr;
  }
  return trx->txn;
}

/* Memcomparable bytes of index `keynr`'s key parts of `record` (record[0] or another
   buffer): each part is MariaDB's own sort key (collation weights; a nullable part starts
   with a NULL-indicator byte, 0 for NULL). */
void ha_riptide::encode_key(uint keynr, const uchar *record, std::string *out, bool *has_null)
{
  out->clear();
  *has_null= false;
  KEY *key= &table->key_info[keynr];
  my_ptrdiff_t diff= record - table->record[0];
  for (uint i= 0; i < key->user_defined_key_parts; i++)
    append_key_part(&key->key_part[i], diff, out, has_null);
}

/* Whether a key part indexes a prefix of its column (KEY (v(10)), any BLOB/TEXT part). */
static bool is_prefix_part(const KEY_PART_INFO *kp)
{
  return (kp->key_part_flag & (HA_PART_KEY_SEG | HA_BLOB_PART)) ||
         kp->length < kp->field->key_length();
}

/* Whether key part `kp` is a VARCHAR/TEXT/BLOB part in a NO PAD collation: its collation
   weights are padded with zero bytes, so 'a' and 'a' + CHAR(0) have the same padded weights
   although the collation tells them apart (a shorter string sorts first). Such a part also
   stores the length of its weights (key format 2). CHAR keeps the stored spaces, which NO
   PAD weighs like any character, and binary strings store their length already. */
static bool is_nopad_string_part(const KEY_PART_INFO *kp)
{
  const Field *f= kp->field;
  const CHARSET_INFO *cs= f->charset();
  bool variable= f->real_type() == MYSQL_TYPE_VARCHAR || (f->flags & BLOB_FLAG);
  return variable && cs != &my_charset_bin && (cs->state & MY_CS_NOPAD);
}

/* The width of key part `kp`'s value bytes, without the NULL-indicator byte (the same for
   every value: what append_key_part writes), in key format `format`. */
static uint key_part_width(const KEY_PART_INFO *kp, uint32_t format)
{
  Field *f= kp->field;
  uint weight_length= format >= KEY_FORMAT_NOPAD_LENGTH && is_nopad_string_part(kp) ? 2 : 0;
  if (!is_prefix_part(kp))
  {
    uint len= f->sort_length();
    CHARSET_INFO *cs= f->sort_charset();
    return (use_strnxfrm(cs) ? uint(cs->strnxfrmlen(len)) : len) + weight_length;
  }
  CHARSET_INFO *cs= f->charset();
  if (cs == &my_charset_bin)
    return kp->length + 2;
  return (use_strnxfrm(cs) ? uint(cs->strnxfrmlen(kp->length)) : kp->length) + weight_length;
}

/* The collation weights of `len` bytes at `from` (at most `nweights` characters) into
   `to`, `width` bytes: zero-padded, then the weights' length as 2 bytes big-endian, so a
   NO PAD string sorts before any longer one with the same padded weights. */
static void nopad_weights(CHARSET_INFO *cs, uchar *to, uint width, uint nweights,
                          const char *from, size_t len)
{
  size_t n= cs->strnxfrm(to, width - 2, nweights, reinterpret_cast<const uchar *>(from), len,
                         0);
  if (n > width - 2)
    n= width - 2;
  memset(to + n, 0, width - 2 - n);
  to[width - 2]= uchar(n >> 8);
  to[width - 1]= uchar(n);
}

/* Appends the memcomparable bytes of key part `kp` of the record `diff` bytes away from
   record[0] (fixed length per part, so a prefix of parts is a byte prefix). A whole column
   is MariaDB's sort key (Field::sort_string). A column prefix of N characters
   (key_part->length is N * mbmaxlen bytes) is the collation weights of the value's first N
   characters only, padded as the collation pads (PAD SPACE: 'ab' = 'ab '), to the width of
   N characters; a binary string's prefix is its first N bytes, zero-padded, then their
   count (u16 BE), so 'a' sorts before 'a\0' as in the server. A string in a NO PAD
   collation (key format 2) is its weights, zero-padded, then their length (u16 BE). A
   nullable part starts with 0x00 (NULL, the rest zero) or 0x01. */
void ha_riptide::append_key_part(const KEY_PART_INFO *kp, my_ptrdiff_t diff, std::string *out,
                                 bool *has_null)
{
  Field *f= kp->field;
  /* real_maybe_null(), not maybe_null(): the latter is also true for every column of a
     table on the inner side of an outer join (TABLE::maybe_null), and is_null() then
     follows TABLE::null_row. The encoding must depend on the column's definition alone. */
  bool nullable= f->real_maybe_null();
  size_t at= out->size();
  uint32_t format= share->key_format;
  uint len= key_part_width(kp, format);
  bool nopad= format >= KEY_FORMAT_NOPAD_LENGTH && is_nopad_string_part(kp);
  f->move_field_offset(diff);
  bool null= nullable && f->is_null();
  if (null)
    *has_null= true;
  out->resize(at + len + (nullable ? 1 : 0), '\0');
  uchar *to= reinterpret_cast<uchar *>(&(*out)[at]);
  if (nullable)
    *to++= null ? 0 : 1;
  if (!null && !is_prefix_part(kp) && !nopad)
  {
    /* Field::make_sort_key_part's layout, without its use of maybe_null() / is_null()
       (which follow TABLE::maybe_null and TABLE::null_row, see above): NULL is a zero
       byte and zeros, a value a one byte and its sort string. */
    f->sort_string(to, len);
  }
  else if (!null)
  {
    CHARSET_INFO *cs= f->charset();
    String buf;
    f->val_str(&buf, &buf);
    size_t plen= buf.length();
    uint nchars= f->char_length();
    if (is_prefix_part(kp))
    {
      nchars= kp->length / cs->mbmaxlen;
      plen= cs->charpos(buf.ptr(), buf.ptr() + buf.length(), nchars);
      if (plen > buf.length())
        plen= buf.length();
    }
    if (cs == &my_charset_bin)
    {
      memcpy(to, buf.ptr(), plen);
      to[len - 2]= uchar(plen >> 8);
      to[len - 1]= uchar(plen);
    }
    else if (nopad)
      nopad_weights(cs, to, len, nchars * cs->strxfrm_multiply, buf.ptr(), plen);
    else
      cs->strnxfrm(to, len, nchars * cs->strxfrm_multiply,
                   reinterpret_cast<const uchar *>(buf.ptr()), plen,
                   MY_STRXFRM_PAD_WITH_SPACE | MY_STRXFRM_PAD_TO_MAXLEN);
  }
  f->move_field_offset(-diff);
}

/* The full key of the entry of Riptide secondary index `index` for secondary key `key` and
   primary key `pk`, as an iterator returns it (crates/handler FORMAT.md: index prefix,
   key, pk, pk length as 2 bytes big-endian). */
std::string ha_riptide::secondary_entry(uint index, const std::string &key,
                                        const std::string &pk) const
{
  std::string e= share->prefixes[index] + key + pk;
  e.push_back(char(pk.size() >> 8));
  e.push_back(char(pk.size()));
  return e;
}

void ha_riptide::encode_pk(const uchar *record, std::string *out)
{
  bool has_null= false;
  encode_key(table->s->primary_key, record, out, &has_null);
}

/* The secondary keys of `record`, one per Riptide secondary index, in `keys` (views of
   `bufs`). */
void ha_riptide::encode_secondary(const uchar *record, std::vector<std::string> *bufs,
                                  std::vector<riptide_hkey_t> *keys)
{
  uint n= table->s->keys - (has_pk ? 1 : 0);
  bufs->resize(n);
  keys->resize(n);
  for (uint i= 0; i < n; i++)
  {
    bool has_null= false;
    encode_key(keynr_of(i + 1), record, &(*bufs)[i], &has_null);
    (*keys)[i].data= (*bufs)[i].data();
    (*keys)[i].len= (*bufs)[i].size();
    (*keys)[i].has_null= has_null;
  }
}

/* Encodes the first key parts of a key tuple (key_copy format) of index `keynr` like
   encode_key, with the index's prefix in front. Returns 1 if every part was given. */
int ha_riptide::encode_key_tuple(uint keynr, const uchar *key, key_part_map keypart_map,
                                 std::string *out)
{
  KEY *key_info= &table->key_info[keynr];
  uint key_len= calculate_key_len(table, keynr, key, keypart_map);
  rec_buf.assign(table->s->reclength, 0);
  memcpy(rec_buf.data(), table->s->default_values, table->s->reclength);
  {
    /* A key image need not be a value the column holds: the range optimizer makes the end
       of LIKE 'A%' by filling the key with the collation's largest character, more
       characters than the column has. Restoring it into the scratch record cuts it to the
       column (which keeps it an upper bound of every stored value); the cut must not raise
       a warning, which a data-changing statement in strict mode turns into an error
       (ER_DATA_TOO_LONG for an UPDATE ... WHERE v LIKE 'A%'). */
    Check_level_instant_set no_cut_warnings(ha_thd(), CHECK_FIELD_IGNORE);
    key_restore(rec_buf.data(), key, key_info, key_len);
  }
  uint parts= 0;
  while (parts < key_info->user_defined_key_parts && (keypart_map & (key_part_map(1) << parts)))
    parts++;
  out->assign(share->prefixes[rindex(keynr)]);
  my_ptrdiff_t diff= rec_buf.data() - table->record[0];
  bool has_null= false;
  for (uint i= 0; i < parts; i++)
    append_key_part(&key_info->key_part[i], diff, out, &has_null);
  return parts == key_info->user_defined_key_parts ? 1 : 0;
}

/* Refuses a row the engine could not store as one entry (riptide_max_key_value_len, 1 GiB:
   a row with BLOB/TEXT bodies that large) before its value is built: primary key + format
   byte + record + per BLOB a 4-byte length and its bytes. Such a write used to be accepted,
   then failed every flush and the next start. 0 or HA_ERR_RIPTIDE with the sizes. */
int ha_riptide::check_row_size(const uchar *buf, size_t key_len)
{
  TABLE_SHARE *s= table->s;
  size_t len= key_len + 1 + s->reclength;
  my_ptrdiff_t diff= buf - table->record[0];
  for (uint i= 0; i < s->blob_fields; i++)
  {
    Field_blob *b= static_cast<Field_blob *>(table->field[s->blob_field[i]]);
    b->move_field_offset(diff);
    len+= 4 + (b->is_null() || !b->stored_in_db() ? 0 : b->get_length());
    b->move_field_offset(-diff);
  }
  size_t limit= riptide_max_key_value_len();
  if (len <= limit)
    return 0;
  last_error= "a row of " + std::to_string(len) + " bytes (primary key, record and BLOB/TEXT " +
              "bodies) for table " + std::string(s->path.str) + " is larger than RIPTIDE's " +
              "limit of " + std::to_string(limit) + " bytes for one row";
  return HA_ERR_RIPTIDE;
}

/* The row value of record `buf` (README.md, "row"): V1 for a table without BLOB/TEXT
   columns, else V2 with the blob bodies after the record buffer. */
void ha_riptide::pack_row(const uchar *buf, std::string *out)
{
  TABLE_SHARE *s= table->s;
  out->assign(1, s->blob_fields ? ROW_FORMAT_V2 : ROW_FORMAT_V1);
  out->append(reinterpret_cast<const char *>(buf), s->reclength);
  if (!s->blob_fields)
    return;
  my_ptrdiff_t diff= buf - table->record[0];
  for (uint i= 0; i < s->blob_fields; i++)
  {
    Field_blob *b= static_cast<Field_blob *>(table->field[s->blob_field[i]]);
    b->move_field_offset(diff);
    /* A VIRTUAL column's value is computed on read: its bytes in the record mean nothing
       (the pointer may be stale), so no body is stored. */
    uint32 len= b->is_null() || !b->stored_in_db() ? 0 : b->get_length();
    const uchar *data= b->get_ptr();
    b->move_field_offset(-diff);
    /* The pointer in the stored record means nothing once read back: zero it. */
    size_t ptr_at= 1 + size_t(b->ptr - table->record[0]) + b->pack_length_no_ptr();
    memset(&(*out)[ptr_at], 0, sizeof(uchar *));
    char len_le[4]= {char(len), char(len >> 8), char(len >> 16), char(len >> 24)};
    out->append(len_le, 4);
    if (len)
      out->append(reinterpret_cast<const char *>(data), len);
  }
}

/* Unpacks a row value into record `buf`; blob bodies go to `blobs`, which the record's
   blob pointers then point into (valid until `blobs` is next written). */
int ha_riptide::unpack_row(const char *value, size_t len, uchar *buf, std::string *blobs)
{
  TABLE_SHARE *s= table->s;
  size_t rec= s->reclength;
  char want= s->blob_fields ? ROW_FORMAT_V2 : ROW_FORMAT_V1;
  bool ok= len >= rec + 1 && value[0] == want && (s->blob_fields || len == rec + 1);
  if (ok && s->blob_fields)
  {
    blobs->assign(value + 1 + rec, len - 1 - rec);
    my_ptrdiff_t diff= buf - table->record[0];
    size_t pos= 0;
    memcpy(buf, value + 1, rec);
    for (uint i= 0; ok && i < s->blob_fields; i++)
    {
      Field_blob *b= static_cast<Field_blob *>(table->field[s->blob_field[i]]);
      if (blobs->size() - pos < 4)
      {
        ok= false;
        break;
      }
      const uchar *p= reinterpret_cast<const uchar *>(blobs->data()) + pos;
      uint32 blen= uint32(p[0]) | uint32(p[1]) << 8 | uint32(p[2]) << 16 | uint32(p[3]) << 24;
      pos+= 4;
      if (blobs->size() - pos < blen)
      {
        ok= false;
        break;
      }
      b->set_ptr_offset(diff, blen, p + 4);
      pos+= blen;
    }
    ok= ok && pos == blobs->size();
    if (ok)
      return 0;
  }
  if (!ok)
  {
    last_error= "a row of table " + std::string(s->path.str) + " is malformed: " +
                std::to_string(len) + " bytes, format " + std::to_string(len ? value[0] : -1) +
                "; expected format " + std::to_string(int(want)) +
                (s->blob_fields ? " with " + std::to_string(s->blob_fields) + " blob bodies after "
                                : " of exactly ") +
                std::to_string(rec + 1) + " bytes";
    sql_print_error("RIPTIDE: %s", last_error.c_str());
    return HA_ERR_RIPTIDE;
  }
  memcpy(buf, value + 1, rec);
  return 0;
}

Riptide_share *ha_riptide::get_share(const char *name, int *error)
{
  *error= 0;
  lock_shared_ha_data();
  Riptide_share *s= static_cast<Riptide_share *>(get_ha_share_ptr());
  if (!s)
  {
    riptide_htable_t *t= nullptr;
    char *err= nullptr;
    riptide_status_t st= riptide_handler_open_table(riptide_handler, name, strlen(name), &t, &err);
    if (st == RIPTIDE_NOT_FOUND)
    {
      sql_print_warning("RIPTIDE: table %s has no data dictionary entry", name);
      riptide_free(err);
      *error= HA_ERR_NO_SUCH_TABLE;
    }
    else if (st != RIPTIDE_OK)
    {
      last_error= take_message(st, err);
      *error= HA_ERR_RIPTIDE;
    }
    else
    {
      s= new Riptide_share;
      s->table= t;
      s->key_format= riptide_htable_key_format(t);
      size_t n= riptide_htable_index_count(t);
      bool pk= table_share->primary_key < MAX_KEY;
      if (n != table_share->keys + (pk ? 0 : 1))
      {
        last_error= std::string("the data dictionary entry of ") + name + " has " +
                    std::to_string(n) + " indexes, the table definition " +
                    std::to_string(table_share->keys + (pk ? 0 : 1));
        sql_print_error("RIPTIDE: %s", last_error.c_str());
        *error= HA_ERR_RIPTIDE;
      }
      for (size_t i= 0; i < n && !*error; i++)
      {
        char buf[16];
        size_t len= 0;
        st= riptide_htable_index_prefix(t, i, buf, sizeof buf, &len, &err);
        if (st != RIPTIDE_OK)
        {
          last_error= take_message(st, err);
          *error= HA_ERR_RIPTIDE;
        }
        else
          s->prefixes.emplace_back(buf, len);
      }
      if (*error)
      {
        delete s;
        s= nullptr;
      }
      else
        set_ha_share_ptr(s);
    }
  }
  unlock_shared_ha_data();
  return s;
}

int ha_riptide::open(const char *name, int, uint)
{
  int error= 0;
  if (!(share= get_share(name, &error)))
    return error;
  thr_lock_data_init(&share->lock, &lock_data, nullptr);
  open_name= name;
  has_pk= table->s->primary_key < MAX_KEY;
  if (has_pk)
  {
    /* From the key's definition: record[0] holds no row yet (a blob pointer in it could
       be anything). */
    KEY *pk= &table->key_info[table->s->primary_key];
    ref_length= 0;
    for (uint i= 0; i < pk->user_defined_key_parts; i++)
      ref_length+= key_part_width(&pk->key_part[i], share->key_format) +
                   (pk->key_part[i].field->real_maybe_null() ? 1 : 0);
  }
  else
    ref_length= 8;
  return 0;
}

int ha_riptide::close(void)
{
  drop_iterator();
  abort_alter_copy();
  return 0;
}

/* Rolls back an ALTER copy into this table still running (alter_copy.h) and stops sharing
   its session. */
void ha_riptide::abort_alter_copy()
{
  alter_copy.abort();
  if (share && share->active_copy == &alter_copy)
    share->active_copy= nullptr;
}

/* Waits (up to riptide_lock_wait_timeout) until no prepared XA transaction holds a write
   to table `name`, before DDL that would replace or remove its keys (DROP, TRUNCATE,
   RENAME, the copy of ALTER TABLE): a prepared transaction's rows must survive its later
   XA COMMIT. As InnoDB, the DDL then fails with ER_LOCK_WAIT_TIMEOUT. The caller holds the
   table's exclusive metadata lock, so no transaction can prepare a write to it meanwhile. */
int ha_riptide::wait_for_prepared(const char *name)
{
  char *err= nullptr;
  riptide_status_t st= riptide_handler_wait_prepared(riptide_handler, name, strlen(name),
                                                     lock_wait_timeout_ms(ha_thd()), &err);
  if (st == RIPTIDE_OK)
    return 0;
  std::string msg= take_message(st, err);
  if (st == RIPTIDE_TIMED_OUT)
  {
    /* An expected outcome the client is told of; the log keeps which transaction. */
    sql_print_information("RIPTIDE: %s", msg.c_str());
    push_warning_printf(ha_thd(), Sql_condition::WARN_LEVEL_NOTE, ER_LOCK_WAIT_TIMEOUT,
                        "RIPTIDE: %s", msg.c_str());
    my_error(ER_LOCK_WAIT_TIMEOUT, MYF(0));
    return HA_ERR_LOCK_WAIT_TIMEOUT;
  }
  sql_print_warning("RIPTIDE: %s", msg.c_str());
  last_error= msg;
  return HA_ERR_RIPTIDE;
}

int ha_riptide::create(const char *name, TABLE *form, HA_CREATE_INFO *create_info)
{
  /* TRUNCATE TABLE recreates the table (HTON_CAN_RECREATE): its old keys go. */
  if (int error= wait_for_prepared(name))
    return error;
  /* Options RIPTIDE cannot honour are refused, not silently dropped (as MyRocks): rows
     live in riptide_data_dir, and no foreign key would be enforced. */
  const char *refused= create_info->data_file_name    ? "DATA DIRECTORY"
                       : create_info->index_file_name ? "INDEX DIRECTORY"
                                                      : nullptr;
  if (!refused)
  {
    List_iterator_fast<Key> keys(ha_thd()->lex->alter_info.key_list);
    while (Key *key= keys++)
      if (key->type == Key::FOREIGN_KEY)
      {
        refused= "FOREIGN KEY";
        break;
      }
  }
  if (refused)
  {
    my_error(ER_ILLEGAL_HA_CREATE_OPTION, MYF(0), "RIPTIDE", refused);
    return HA_WRONG_CREATE_OPTION;
  }
  bool pk= form->s->primary_key < MAX_KEY;
  if (pk && form->s->primary_key != 0)
  {
    my_error(ER_NOT_SUPPORTED_YET, MYF(0), "a primary key that is not the first index");
    return HA_ERR_UNSUPPORTED;
  }
  std::vector<riptide_index_spec_t> specs;
  if (!pk)
    specs.push_back({RIPTIDE_INDEX_HIDDEN_PK, false, 1, "HIDDEN_PK"});
  for (uint i= 0; i < form->s->keys; i++)
  {
    KEY *k= &form->key_info[i];
    char what[300];
    if (k->flags & (HA_FULLTEXT | HA_SPATIAL))
    {
      snprintf(what, sizeof what, "FULLTEXT and SPATIAL indexes in "
               "ENGINE=RIPTIDE (index `%s`)", k->name.str);
      my_error(ER_NOT_SUPPORTED_YET, MYF(0), what);
      return HA_ERR_UNSUPPORTED;
    }
    /* A long UNIQUE key (over a whole BLOB/TEXT, wider than max_supported_key_length(),
       or USING HASH): the server indexes its hidden VIRTUAL hash column DB_ROW_HASH_<n>
       (computed into the record before every write) and checks duplicates itself with an
       exact index read of the hash (handler::check_duplicate_long_entry_key). Riptide
       stores it as a NON-unique index (rows may share a hash); index_read_map makes that
       read safe against concurrent inserts (hash_lookup_prepare). */
    bool long_hash= k->algorithm == HA_KEY_ALG_LONG_HASH;
    for (uint j= 0; j < k->user_defined_key_parts; j++)
      if (!k->key_part[j].field->stored_in_db() &&
          !(k->key_part[j].field->flags & LONG_UNIQUE_HASH_FIELD))
      {
        snprintf(what, sizeof what, "indexes on VIRTUAL generated columns in "
                 "ENGINE=RIPTIDE (index `%s`; make the column STORED)", k->name.str);
        my_error(ER_NOT_SUPPORTED_YET, MYF(0), what);
        return HA_ERR_UNSUPPORTED;
      }
    bool primary= pk && i == form->s->primary_key;
    specs.push_back({primary ? RIPTIDE_INDEX_PRIMARY : RIPTIDE_INDEX_SECONDARY,
                     primary || (!long_hash && (k->flags & HA_NOSAME) != 0),
                     uint16_t(k->user_defined_key_parts), k->name.str});
  }
  char *err= nullptr;
  /* CREATE TEMPORARY TABLE: the engine marks it, and drops it with its rows at the next
     start (the server forgets its temporary tables at a crash or restart). */
  auto create_fn= create_info->tmp_table() ? riptide_handler_create_temporary_table
                                           : riptide_handler_create_table;
  riptide_status_t st= create_fn(riptide_handler, name, strlen(name), specs.data(),
                                 specs.size(), create_info->auto_increment_value, &err);
  if (st != RIPTIDE_OK)
    return ddl_error("create", st, err);
  return 0;
}

/* TRUNCATE of one partition of a partitioned table (ha_partition calls it per partition;
   an unpartitioned table is dropped and recreated instead, HTON_CAN_RECREATE): the table
   gets new index ids with the old keys range-deleted, and auto-increment starts again at 1
   (as InnoDB). The server holds an exclusive lock on the table, so this handler's share is
   the only user of the old ids. */
int ha_riptide::truncate()
{
  if (int error= wait_for_prepared(open_name.c_str()))
    return error;
  drop_iterator();
  char *err= nullptr;
  riptide_status_t st= riptide_handler_truncate_table(riptide_handler, open_name.data(),
                                                      open_name.size(), &err);
  if (st != RIPTIDE_OK)
    return ddl_error("truncate", st, err);
  riptide_htable_t *t= nullptr;
  st= riptide_handler_open_table(riptide_handler, open_name.data(), open_name.size(), &t, &err);
  if (st != RIPTIDE_OK)
    return ddl_error("reopen after truncate", st, err);
  std::vector<std::string> prefixes;
  size_t n= riptide_htable_index_count(t);
  for (size_t i= 0; i < n; i++)
  {
    char buf[16];
    size_t len= 0;
    st= riptide_htable_index_prefix(t, i, buf, sizeof buf, &len, &err);
    if (st != RIPTIDE_OK)
    {
      riptide_htable_release(t);
      return ddl_error("reopen after truncate", st, err);
    }
    prefixes.emplace_back(buf, len);
  }
  lock_shared_ha_data();
  riptide_htable_release(share->table);
  share->table= t;
  share->key_format= riptide_htable_key_format(t);
  share->prefixes= std::move(prefixes);
  unlock_shared_ha_data();
  cur_key.clear();
  cur_pk.clear();
  return 0;
}

int ha_riptide::delete_table(const char *name)
{
  if (int error= wait_for_prepared(name))
    return error;
  char *err= nullptr;
  bool existed= false;
  riptide_status_t st=
      riptide_handler_drop_table(riptide_handler, name, strlen(name), &existed, &err);
  if (st != RIPTIDE_OK)
    return ddl_error("drop", st, err);
  /* The server asks every engine to drop a table it cannot find (ha_delete_table_force):
     0 would claim it, and DROP TABLE of a missing table would succeed silently. */
  return existed ? 0 : HA_ERR_NO_SUCH_TABLE;
}

int ha_riptide::rename_table(const char *from, const char *to)
{
  if (int error= wait_for_prepared(from))
    return error;
  char *err= nullptr;
  riptide_status_t st= riptide_handler_rename_table(riptide_handler, from, strlen(from), to,
                                                    strlen(to), &err);
  if (st == RIPTIDE_NOT_FOUND || st == RIPTIDE_BUSY)
  {
    riptide_free(err);
    return st == RIPTIDE_NOT_FOUND ? HA_ERR_NO_SUCH_TABLE : HA_ERR_TABLE_EXIST;
  }
  if (st != RIPTIDE_OK)
    return ddl_error("rename", st, err);
  return 0;
}

/* Records an auto-increment value stored explicitly, so later ones come after it. */
void ha_riptide::observe_autoinc(const uchar *record)
{
  Field *f= table->found_next_number_field;
  if (!f || record != table->record[0] || f->is_null())
    return;
  longlong v= f->val_int();
  if (!f->is_unsigned() && v <= 0)
    return;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_observe_autoinc(share->table, ulonglong(v), &err);
  if (st != RIPTIDE_OK)
    sql_print_warning("RIPTIDE: auto-increment of %s: %s", table->s->path.str,
                      take_message(st, err).c_str());
}

/* SHOW CREATE TABLE and ALTER TABLE (copy) see Riptide's auto-increment counter. */
void ha_riptide::update_create_info(HA_CREATE_INFO *create_info)
{
  if (!(create_info->used_fields & HA_CREATE_USED_AUTO))
  {
    info(HA_STATUS_AUTO);
    create_info->auto_increment_value= stats.auto_increment_value;
  }
}

void ha_riptide::get_auto_increment(ulonglong offset, ulonglong increment,
                                    ulonglong nb_desired_values, ulonglong *first_value,
                                    ulonglong *nb_reserved_values)
{
  /* As InnoDB: the server's nb_desired_values is only right at the statement's first call
     (the rows of a multi-row INSERT); later calls in the statement (after an explicit value
     moved the counter past the reserved interval) ask for a growing default. So the first
     call's count is kept and counted down as rows are written, and a later call reserves
     only the rows still to come: INSERT ... VALUES (NULL), (100), (NULL) leaves the
     counter at 102, not 103. */
  if (autoinc_rows_left == 0)
    autoinc_rows_left= nb_desired_values ? nb_desired_values : 1;
  ulonglong n= autoinc_rows_left;
  uint64_t first= 0;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_reserve_autoinc(share->table, n, offset, increment,
                                                      &first, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: reserve auto-increment of %s: %s", table->s->path.str,
                    take_message(st, err).c_str());
    /* The server turns this into ER_AUTOINC_READ_FAILED. */
    *first_value= ULONGLONG_MAX;
    *nb_reserved_values= 0;
    return;
  }
  /* As InnoDB: the counter never passes the column's largest value + 1 (a reservation
     beyond it ends in "Out of range" and must not move AUTO_INCREMENT=). */
  riptide_htable_cap_autoinc(share->table, table->next_number_field->get_max_int_value());
  *first_value= first;
  *nb_reserved_values= n;
}

int ha_riptide::write_row(const uchar *buf)
{
  if (table->next_number_field && buf == table->record[0])
  {
    int error= update_auto_increment();
    /* One row of the statement's auto-increment count is used (get_auto_increment). */
    if (autoinc_rows_left > 0)
      autoinc_rows_left--;
    if (error)
      return error;
  }
  if (alter_copy.failed_marked())
  {
    last_error= "ALTER TABLE copy into " + open_name +
                ": the table is marked temporary and its copy session could not begin";
    return HA_ERR_RIPTIDE;
  }
  int error= 0;
  /* Rows of an ALTER TABLE copy go to the copy's own session (session() returns it),
     committed in pieces. */
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  char *err= nullptr;
  if (has_pk)
    encode_pk(buf, &key_buf);
  else
  {
    uint64_t id= 0;
    riptide_status_t st= riptide_htable_next_row_id(share->table, &id, &err);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
    key_buf= be64(id);
  }
  if (int error= check_row_size(buf, key_buf.size()))
    return error;
  encode_secondary(buf, &sec_bufs, &sec_keys);
  pack_row(buf, &val_buf);
  size_t dup= SIZE_MAX;
  riptide_status_t st= riptide_hsession_insert(s, share->table, key_buf.data(), key_buf.size(),
                                               sec_keys.data(), sec_keys.size(), val_buf.data(),
                                               val_buf.size(), &dup, &err);
  if (st != RIPTIDE_OK)
    return row_error(st, err, dup);
  observe_autoinc(buf);
  if (alter_copy.active())
  {
    size_t bytes= key_buf.size() + val_buf.size();
    for (const std::string &k : sec_bufs)
      bytes+= k.size() + key_buf.size();
    st= alter_copy.row_written(bytes, &err);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
  }
  return 0;
}

int ha_riptide::update_row(const uchar *old_data, const uchar *new_data)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  std::string old_pk;
  if (has_pk)
  {
    encode_pk(old_data, &old_pk);
    encode_pk(new_data, &key_buf);
  }
  else
  {
    old_pk= cur_pk;
    key_buf= cur_pk;
  }
  if (int error= check_row_size(new_data, key_buf.size()))
    return error;
  encode_secondary(old_data, &old_sec_bufs, &old_sec_keys);
  encode_secondary(new_data, &sec_bufs, &sec_keys);
  pack_row(new_data, &val_buf);
  size_t dup= SIZE_MAX;
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_update(
      s, share->table, old_pk.data(), old_pk.size(), old_sec_keys.data(), key_buf.data(),
      key_buf.size(), sec_keys.data(), sec_keys.size(), val_buf.data(), val_buf.size(), &dup,
      &err);
  if (st != RIPTIDE_OK)
    return row_error(st, err, dup);
  /* The row's key in the index being scanned changed (the primary key, or a secondary
     entry: its key parts or the primary key it ends with): the scan must not meet the row
     again under its new key (the Halloween problem). */
  if (iter && iter_index == 0 && old_pk != key_buf)
    moved_keys.insert(share->prefixes[0] + key_buf);
  else if (iter && iter_index != 0 &&
           (old_pk != key_buf || old_sec_bufs[iter_index - 1] != sec_bufs[iter_index - 1]))
    moved_keys.insert(secondary_entry(iter_index, sec_bufs[iter_index - 1], key_buf));
  observe_autoinc(new_data);
  return 0;
}

int ha_riptide::delete_row(const uchar *buf)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (has_pk)
    encode_pk(buf, &key_buf);
  else
    key_buf= cur_pk;
  encode_secondary(buf, &sec_bufs, &sec_keys);
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_delete(s, share->table, key_buf.data(), key_buf.size(),
                                               sec_keys.data(), sec_keys.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return 0;
}

/* An iterator over Riptide index `index` of this table, within the connection's session;
   `current`: a long UNIQUE key's duplicate check (hash_lookup_prepare). */
int ha_riptide::make_iterator(uint index, bool current)
{
  drop_iterator();
  moved_keys.clear();
  scan_positioned= false;
  decode_from_key= false;
  iter_stop.clear();
  row_locked= false;
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  char *err= nullptr;
  /* A locking read (FOR UPDATE, LOCK IN SHARE MODE, SERIALIZABLE, the source rows of
     INSERT ... SELECT, UPDATE, DELETE) scans with InnoDB's semantics: the newest committed
     rows, each locked, and next-key locks on what it walks, so that other sessions' inserts
     there wait. Plain reads scan the snapshot. */
  riptide_status_t st=
      current ? riptide_hsession_iter_create_current(s, share->table, index, &iter, &err)
              : riptide_hsession_iter_create_locking(s, share->table, index, row_lock_code(),
                                                     &iter, &err);
  if (st != RIPTIDE_OK)
  {
    iter= nullptr;
    return status_error(st, err);
  }
  iter_index= index;
  iter_current= current;
  iter_locking= !current && lock_rows != Riptide_row_lock::NONE;
  get_trx(ha_thd())->iterators.insert(this);
  return 0;
}

int ha_riptide::step(bool forward)
{
  char *err= nullptr;
  riptide_status_t st=
      forward ? riptide_txn_iter_next(iter, &err) : riptide_txn_iter_prev(iter, &err);
  return st == RIPTIDE_OK ? 0 : status_error(st, err);
}

/* The smaller of two stop keys (empty: none). */
static const std::string &min_stop(const std::string &a, const std::string &b)
{
  if (a.empty())
    return b;
  if (b.empty())
    return a;
  return a.compare(b) <= 0 ? a : b;
}

/* Where the current range of MariaDB key `keynr` ends, as a stop key for forward steps of
   a locking iterator: handler::end_range (set by read_range_first before it positions,
   reset by ha_index_init) encoded as the index's keys are; up to and including the end key
   for HA_READ_AFTER_KEY (and EXACT), below it for HA_READ_BEFORE_KEY, as compare_key
   decides. Empty (no stop) without an end or for a plain read. */
std::string ha_riptide::range_stop_of(uint keynr)
{
  if (!end_range || !iter_locking)
    return std::string();
  std::string end;
  encode_key_tuple(keynr, end_range->key, end_range->keypart_map, &end);
  return end_range->flag == HA_READ_BEFORE_KEY ? end : prefix_successor(end);
}

/* Sets the locking iterator's stop key (empty: none), so that a forward step ends before
   the first key at or past it without locking that key under READ COMMITTED (under
   REPEATABLE READ and SERIALIZABLE it is still next-key locked, as InnoDB does); the
   server would only find the row out of range. Plain iterators keep none (HANDLER reads
   go on past a range). */
int ha_riptide::set_stop(const std::string &stop)
{
  if (!iter || !iter_locking || stop == iter_stop)
    return 0;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_iter_set_stop(iter, stop.empty() ? nullptr : stop.data(),
                                                 stop.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  iter_stop= stop;
  return 0;
}

/* Releases the row locks of the row read last if the connection's session may (READ
   COMMITTED, taken by this statement, not written: riptide_hsession_unlock_row decides).
   A failure only leaves the row locked: logged. */
void ha_riptide::release_row_locks()
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(ha_thd(), riptide_hton));
  if (!trx || !trx->txn || !share || cur_pk.empty())
    return;
  /* The locks this statement took: those since its savepoint, or with none (autocommit)
     every lock of the transaction. */
  size_t since= trx->stmt_savepoint ? trx->savepoints.size() : 0;
  bool by_entry= locked_index != 0 && !locked_entry.empty();
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_unlock_row(
      trx->txn, share->table, by_entry ? locked_index : 0,
      by_entry ? locked_entry.data() : nullptr, by_entry ? locked_entry.size() : 0,
      cur_pk.data(), cur_pk.size(), since, nullptr, &err);
  if (st != RIPTIDE_OK)
    sql_print_warning("RIPTIDE: releasing a row lock of %s: %s (the row stays locked)",
                      table->s->path.str, take_message(st, err).c_str());
}

/* The server no longer wants the row read last (the WHERE clause rejected it, or it lies
   past the range): under READ COMMITTED its row locks go, as InnoDB's unlock_row. */
void ha_riptide::unlock_row()
{
  if (!row_locked)
    return;
  row_locked= false;
  release_row_locks();
}

/* How the sort key of a field (Field::make_sort_key_part, after the NULL byte) maps back
   to the record bytes, for the types where it is exactly reversible (field.cc):
   SORT_INT: the little-endian integer reversed, sign bit flipped when signed
     (Field_tiny .. Field_longlong, and YEAR, a Field_tiny);
   SORT_REVERSED: the little-endian bytes reversed (Field_newdate, DATE);
   SORT_COPY: the record bytes as they are (Field_new_decimal, Field_datetimef,
     Field_timestampf, Field_timef: binary formats that already sort as bytes).
   Other types (strings, FLOAT/DOUBLE, ENUM/SET, BIT, old temporal formats) read the row. */
enum Sort_decoding
{
  SORT_NONE,
  SORT_INT,
  SORT_REVERSED,
  SORT_COPY
};

static Sort_decoding sort_decoding(const Field *f)
{
  switch (f->real_type())
  {
  case MYSQL_TYPE_TINY:
  case MYSQL_TYPE_SHORT:
  case MYSQL_TYPE_INT24:
  case MYSQL_TYPE_LONG:
  case MYSQL_TYPE_LONGLONG:
  case MYSQL_TYPE_YEAR:
    return SORT_INT;
  case MYSQL_TYPE_NEWDATE:
    return SORT_REVERSED;
  case MYSQL_TYPE_NEWDECIMAL:
  case MYSQL_TYPE_DATETIME2:
  case MYSQL_TYPE_TIMESTAMP2:
  case MYSQL_TYPE_TIME2:
    return SORT_COPY;
  default:
    return SORT_NONE;
  }
}

/* Whether key part `kp` can be decoded from its bytes into its whole column. */
static bool is_decodable_part(const KEY_PART_INFO *kp)
{
  return !is_prefix_part(kp) && sort_decoding(kp->field) != SORT_NONE &&
         key_part_width(kp, KEY_FORMAT_NOPAD_LENGTH) == kp->field->pack_length();
}

/* Whether field `f` is a decodable key part of `key`. */
static bool is_decodable_part_of(const KEY *key, const Field *f)
{
  for (uint i= 0; i < key->user_defined_key_parts; i++)
    if (key->key_part[i].field == f && is_decodable_part(&key->key_part[i]))
      return true;
  return false;
}

/* Decides, at the start of an index read, whether rows can be filled in from the index
   entries alone: an index-only read (HA_EXTRA_KEYREAD) of a secondary index where every
   column the statement reads is a decodable part (sort_decoding) of that index or of the
   primary key. */
void ha_riptide::plan_keyread()
{
  decode_from_key= false;
  if (rindex(active_index) == 0 || !keyread_enabled() || keyread != active_index ||
      active_index >= table->s->keys)
    return;
  const KEY *key= &table->key_info[active_index];
  const KEY *pk= has_pk ? &table->key_info[table->s->primary_key] : nullptr;
  for (uint i= 0; i < table->s->fields; i++)
  {
    const Field *f= table->field[i];
    if (!bitmap_is_set(table->read_set, f->field_index))
      continue;
    if (!is_decodable_part_of(key, f) && !(pk && is_decodable_part_of(pk, f)))
      return;
  }
  /* Once the transaction has changed entries of this index, an entry of its snapshot may
     point to a row it has since changed (or moved to another entry): rows are then read
     and checked against their entries (read_from_iterator). */
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s || riptide_hsession_wrote_index(s, share->table, rindex(active_index)))
    return;
  decode_from_key= true;
}

/* Fills the decodable parts of `key` into record `buf` from their encoded bytes [p, end)
   (the other parts are skipped by width); false if the bytes are too short. */
bool ha_riptide::decode_key_parts(const KEY *key, const uchar *p, const uchar *end, uchar *buf)
{
  my_ptrdiff_t diff= buf - table->record[0];
  for (uint i= 0; i < key->user_defined_key_parts; i++)
  {
    const KEY_PART_INFO *kp= &key->key_part[i];
    Field *f= kp->field;
    bool nullable= f->real_maybe_null();
    size_t width= key_part_width(kp, share->key_format);
    if (size_t(end - p) < width + (nullable ? 1 : 0))
      return false;
    if (is_decodable_part(kp))
    {
      if (nullable && *p == 0)
        f->set_null(diff);
      else
      {
        if (nullable)
          f->set_notnull(diff);
        const uchar *v= p + (nullable ? 1 : 0);
        uchar *to= f->ptr + diff;
        Sort_decoding how= sort_decoding(f);
        if (how == SORT_COPY)
          memcpy(to, v, width);
        else
        {
          for (size_t b= 0; b < width; b++)
            to[width - 1 - b]= v[b];
          if (how == SORT_INT && !static_cast<const Field_num *>(f)->unsigned_flag)
            to[width - 1]^= 0x80;
        }
      }
    }
    p+= width + (nullable ? 1 : 0);
  }
  return true;
}

/* Whether the secondary entry `entry` (its key bytes run from `key_off` to `pk_off`) is the
   entry of the row in `buf` for the iterator's index. */
bool ha_riptide::entry_matches_row(const uchar *buf, const char *entry, size_t key_off,
                                   size_t pk_off)
{
  bool has_null= false;
  encode_key(keynr_of(iter_index), buf, &entry_check_buf, &has_null);
  return entry_check_buf.size() == pk_off - key_off &&
         memcmp(entry_check_buf.data(), entry + key_off, entry_check_buf.size()) == 0;
}

/* Returns the row under the iterator (moving on in the given direction past rows this
   statement moved, and rows deleted before a locking read could lock them). A secondary
   index entry gives the primary key; the row is then read by it. */
int ha_riptide::read_from_iterator(uchar *buf, bool forward)
{
  const std::string &prefix= share->prefixes[iter_index];
  for (;;)
  {
    if (!riptide_txn_iter_valid(iter))
      return HA_ERR_END_OF_FILE;
    size_t klen= 0, vlen= 0;
    const char *k= riptide_txn_iter_key(iter, &klen);
    std::string key(k, klen);
    if (!moved_keys.empty() && moved_keys.count(key))
    {
      if (int error= step(forward))
        return error;
      continue;
    }
    std::string pk;
    /* Where the primary key starts in the entry: after the index prefix (primary key), or
       after the secondary key parts (a secondary entry ends with pk + its 2-byte length). */
    size_t pk_off= prefix.size();
    if (iter_index == 0)
    {
      if (klen < prefix.size())
        return HA_ERR_END_OF_FILE;
      pk.assign(k + prefix.size(), klen - prefix.size());
    }
    else
    {
      size_t len= 0;
      if (!riptide_handler_entry_pk(k, klen, &pk_off, &len))
      {
        last_error= "a malformed secondary index entry in " + std::string(table->s->path.str);
        sql_print_error("RIPTIDE: %s", last_error.c_str());
        return HA_ERR_RIPTIDE;
      }
      pk.assign(k + pk_off, len);
    }
    bool from_key= false;
    if (decode_from_key && iter_index != 0 && lock_rows == Riptide_row_lock::NONE)
    {
      /* An index-only read whose columns are all decodable parts of this key or of the
         primary key: filled in from the entry's bytes, the row is not fetched. */
      const uchar *kb= reinterpret_cast<const uchar *>(k);
      const uchar *pk_end= kb + pk_off + pk.size();
      from_key= decode_key_parts(&table->key_info[active_index], kb + prefix.size(),
                                 kb + pk_off, buf) &&
                (!has_pk || decode_key_parts(&table->key_info[table->s->primary_key],
                                             kb + pk_off, pk_end, buf));
    }
    if (from_key)
    {
      cur_key= key;
      cur_pk= pk;
    }
    else if (iter_index != 0 || (lock_rows != Riptide_row_lock::NONE && !iter_locking))
    {
      bool found= false;
      if (int error= point_read(buf, pk, &found))
        return error;
      if (found && iter_index != 0 && !entry_matches_row(buf, k, prefix.size(), pk_off))
      {
        /* The entry is not the row's: an entry of the snapshot for a row this transaction
           has since changed, or (locking read) one another transaction changed before the
           lock was granted. InnoDB skips it too (the row is found through its own entry).
           A row this read locked for nothing is released where the isolation allows. */
        if (lock_rows != Riptide_row_lock::NONE)
        {
          locked_index= iter_index;
          locked_entry= key;
          unlock_row();
        }
        found= false;
      }
      if (!found)
      {
        if (int error= step(forward))
          return error;
        continue;
      }
      cur_key= key;
    }
    else
    {
      const char *v= riptide_txn_iter_value(iter, &vlen);
      if (int error= unpack_row(v, vlen, buf))
        return error;
      cur_key= key;
      cur_pk= pk;
    }
    row_locked= lock_rows != Riptide_row_lock::NONE && !from_key;
    locked_index= iter_index;
    if (iter_index != 0)
      locked_entry= key;
    else
      locked_entry.clear();
    int icp= pushed_condition(buf);
    if (icp == CHECK_NEG)
    {
      /* Rejected by the pushed condition: as if the server had called unlock_row. */
      unlock_row();
      if (int error= step(forward))
        return error;
      continue;
    }
    return icp_error(icp);
  }
}

/* Index condition pushdown: the server hands the part of the WHERE clause that only uses
   the index's columns to the engine, which must then filter every row it returns from that
   index (the condition's columns are in the read set, so the row read has them). */
Item *ha_riptide::idx_cond_push(uint keyno, Item *idx_cond)
{
  pushed_idx_cond_keyno= keyno;
  pushed_idx_cond= idx_cond;
  in_range_check_pushed_down= TRUE;
  return nullptr;
}

/* The pushed index condition on the row just read into `buf` (a check_result_t; CHECK_POS
   when no condition applies to this read). */
int ha_riptide::pushed_condition(uchar *buf)
{
  if (!pushed_idx_cond || inited != INDEX || active_index != pushed_idx_cond_keyno ||
      buf != table->record[0])
    return CHECK_POS;
  return handler_index_cond_check(this);
}

/* The handler error for a pushed condition's verdict other than CHECK_NEG (0 for
   CHECK_POS). */
int ha_riptide::icp_error(int verdict)
{
  switch (verdict)
  {
  case CHECK_POS:
    return 0;
  case CHECK_OUT_OF_RANGE:
    return HA_ERR_END_OF_FILE;
  case CHECK_ABORTED_BY_USER:
    return HA_ERR_ABORTED_BY_USER;
  default:
    return HA_ERR_INTERNAL_ERROR;
  }
}

/* The RIPTIDE_ROW_LOCK_* value of lock_rows. */
int32_t ha_riptide::row_lock_code() const
{
  /* SKIP LOCKED: rows another transaction holds are skipped, never waited for (the
     iterator steps over them; a row read by primary key answers RIPTIDE_BUSY). */
  if (skip_locked && lock_rows != Riptide_row_lock::NONE)
    return lock_rows == Riptide_row_lock::SHARED ? RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED
                                                 : RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED;
  return lock_rows == Riptide_row_lock::NONE     ? RIPTIDE_ROW_LOCK_NONE
         : lock_rows == Riptide_row_lock::SHARED ? RIPTIDE_ROW_LOCK_SHARED
                                                 : RIPTIDE_ROW_LOCK_EXCLUSIVE;
}

/* Reads the row with primary key `pk` through the session (locking it for a locking
   read); it becomes the current row. */
int ha_riptide::point_read(uchar *buf, const std::string &pk, bool *found)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  char *v= nullptr, *err= nullptr;
  size_t len= 0;
  /* The rows a long UNIQUE key's duplicate check finds are read as committed now (a
     locking read: current reads), not in the snapshot, and stay locked: shared for an
     INSERT, exclusive when the statement goes on to replace or update the duplicate
     (REPLACE, INSERT ... ON DUPLICATE KEY UPDATE), as InnoDB locks the duplicates its
     unique checks find. */
  int32_t lock= row_lock_code();
  if (iter_current)
    lock= ha_thd()->lex->duplicates == DUP_ERROR ? RIPTIDE_ROW_LOCK_SHARED
                                                 : RIPTIDE_ROW_LOCK_EXCLUSIVE;
  riptide_status_t st= riptide_hsession_get_row(s, share->table, pk.data(), pk.size(), lock,
                                                &v, &len, found, &err);
  if (st == RIPTIDE_BUSY && (lock == RIPTIDE_ROW_LOCK_SHARED_SKIP_LOCKED ||
                             lock == RIPTIDE_ROW_LOCK_EXCLUSIVE_SKIP_LOCKED))
  {
    /* SKIP LOCKED: another transaction holds the row; the read goes on without it. */
    riptide_free(err);
    *found= false;
    return 0;
  }
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  if (*found)
  {
    error= unpack_row(v, len, buf);
    cur_pk= pk;
    row_locked= lock_rows != Riptide_row_lock::NONE;
    locked_index= 0;
    locked_entry.clear();
  }
  riptide_free_value(v, len);
  return error;
}

int ha_riptide::rnd_init(bool)
{
  cur_key.clear();
  return make_iterator(0);
}

int ha_riptide::rnd_end()
{
  drop_iterator();
  moved_keys.clear();
  return 0;
}

int ha_riptide::rnd_next(uchar *buf)
{
  if (!iter)
  {
    /* The iterator went with the transaction that made it (HANDLER ... READ NEXT in a
       later statement): continue after the row read last. */
    if (int error= make_iterator(0))
      return error;
    if (!cur_key.empty())
    {
      scan_positioned= true;
      if (int error= resync_iterator(true))
        return error;
      return read_from_iterator(buf, true);
    }
  }
  char *err= nullptr;
  riptide_status_t st;
  if (!scan_positioned)
  {
    /* First call after rnd_init: position at the start. */
    st= riptide_txn_iter_seek_to_first(iter, &err);
    scan_positioned= true;
  }
  else
    st= riptide_txn_iter_next(iter, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return read_from_iterator(buf, true);
}

int ha_riptide::rnd_pos(uchar *buf, uchar *pos)
{
  std::string pk(reinterpret_cast<const char *>(pos), ref_length);
  bool found= false;
  if (int error= point_read(buf, pk, &found))
    return error;
  if (!found)
    return HA_ERR_KEY_NOT_FOUND;
  /* The scan's iterator stays where it was: rnd_next continues from there. */
  return 0;
}

void ha_riptide::position(const uchar *record)
{
  if (has_pk)
  {
    encode_pk(record, &key_buf);
    memcpy(ref, key_buf.data(), ref_length);
  }
  else if (cur_pk.size() == 8)
    memcpy(ref, cur_pk.data(), 8);
}

/* The iterator is made by the first read that needs one: a primary key point read
   (index_read_map of a whole primary key) is a get, and building a cursor over every table
   of the index for it cost more than the get itself. */
int ha_riptide::index_init(uint idx, bool)
{
  drop_iterator();
  moved_keys.clear();
  active_index= idx;
  cur_key.clear();
  iter_stale= false;
  return 0;
}

int ha_riptide::index_end()
{
  drop_iterator();
  moved_keys.clear();
  active_index= MAX_KEY;
  return 0;
}

/* Before the exact read of a long UNIQUE key's hash `prefix` (index prefix included):
   the server's duplicate check (check_duplicate_long_entry_key; the optimizer never reads
   these keys). Its read alone would be a race: two sessions inserting one value could both
   find no row, the other's being uncommitted (and, under REPEATABLE READ, not in the
   snapshot even once committed). So the hash value is locked first, exclusively, until
   the transaction ends (riptide_hsession_lock_value: the same lock-only key the engine's
   own unique checks take), and the read goes to a new iterator over the newest committed
   entries merged with the session's own (riptide_hsession_iter_create_current), made
   after the lock: a second session checking the value waits for the first to end, then
   sees its row. No gap locks: inserts of other values never wait. */
int ha_riptide::hash_lookup_prepare(const std::string &prefix)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  uint ri= rindex(active_index);
  size_t skip= share->prefixes[ri].size();
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_lock_value(s, share->table, ri, prefix.data() + skip,
                                                   prefix.size() - skip, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return make_iterator(ri, true);
}

int ha_riptide::index_read_map(uchar *buf, const uchar *key, key_part_map keypart_map,
                               enum ha_rkey_function find_flag)
{
  std::string prefix;
  bool full= encode_key_tuple(active_index, key, keypart_map, &prefix);
  /* A whole primary key read exactly is a get: no iterator needed. */
  bool point_get= full && rindex(active_index) == 0 &&
                  (find_flag == HA_READ_KEY_EXACT || find_flag == HA_READ_PREFIX);
  if (full && find_flag == HA_READ_KEY_EXACT &&
      table->key_info[active_index].algorithm == HA_KEY_ALG_LONG_HASH)
  {
    if (int error= hash_lookup_prepare(prefix))
      return error;
  }
  else if (!point_get && (!iter || iter_current))
    if (int error= make_iterator(rindex(active_index)))
      return error;
  plan_keyread();
  bool backward= find_flag == HA_READ_BEFORE_KEY || find_flag == HA_READ_KEY_OR_PREV ||
                 find_flag == HA_READ_PREFIX_LAST ||
                 find_flag == HA_READ_PREFIX_LAST_OR_PREV;
  range_stop= backward ? std::string() : range_stop_of(active_index);
  if (point_get)
  {
    /* A primary key point read: no iterator move (index_next re-seeks from cur_key). */
    bool found= false;
    std::string pk= prefix.substr(share->prefixes[0].size());
    if (int error= point_read(buf, pk, &found))
      return error;
    cur_key= prefix;
    iter_stale= true;
    if (!found)
      return HA_ERR_KEY_NOT_FOUND;
    int icp= pushed_condition(buf);
    return icp == CHECK_NEG || icp == CHECK_OUT_OF_RANGE ? HA_ERR_KEY_NOT_FOUND
                                                         : icp_error(icp);
  }
  iter_stale= false;
  std::string succ= prefix_successor(prefix);
  /* A forward read of one prefix ends with it: no lock past it (nor past the range). */
  bool one_prefix= find_flag == HA_READ_KEY_EXACT || find_flag == HA_READ_PREFIX;
  if (int error= set_stop(one_prefix ? min_stop(range_stop, succ) : range_stop))
    return error;
  char *err= nullptr;
  riptide_status_t st= RIPTIDE_OK;
  bool forward= true;
  switch (find_flag)
  {
  case HA_READ_KEY_EXACT:
  case HA_READ_PREFIX:
  case HA_READ_KEY_OR_NEXT:
    st= riptide_txn_iter_seek(iter, prefix.data(), prefix.size(), &err);
    break;
  case HA_READ_AFTER_KEY:
    st= riptide_txn_iter_seek(iter, succ.data(), succ.size(), &err);
    break;
  case HA_READ_BEFORE_KEY:
    forward= false;
    st= riptide_txn_iter_seek_for_prev(iter, prefix.data(), prefix.size(), &err);
    if (st == RIPTIDE_OK && riptide_txn_iter_valid(iter))
    {
      size_t klen= 0;
      const char *k= riptide_txn_iter_key(iter, &klen);
      if (klen >= prefix.size() && memcmp(k, prefix.data(), prefix.size()) == 0)
        st= riptide_txn_iter_prev(iter, &err);
    }
    break;
  case HA_READ_KEY_OR_PREV:
  case HA_READ_PREFIX_LAST:
  case HA_READ_PREFIX_LAST_OR_PREV:
    forward= false;
    st= riptide_txn_iter_seek(iter, succ.data(), succ.size(), &err);
    if (st == RIPTIDE_OK)
      st= riptide_txn_iter_valid(iter) ? riptide_txn_iter_prev(iter, &err)
                                       : riptide_txn_iter_seek_to_last(iter, &err);
    break;
  default:
    return HA_ERR_UNSUPPORTED;
  }
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  int error= read_from_iterator(buf, forward);
  if (error == HA_ERR_END_OF_FILE)
    return HA_ERR_KEY_NOT_FOUND;
  if (error)
    return error;
  bool need_prefix= find_flag == HA_READ_KEY_EXACT || find_flag == HA_READ_PREFIX ||
                    find_flag == HA_READ_PREFIX_LAST;
  if (need_prefix && cur_key.compare(0, prefix.size(), prefix) != 0)
    return HA_ERR_KEY_NOT_FOUND;
  return 0;
}

/* After a point read the iterator is elsewhere: put it back on (or next to) cur_key. */
int ha_riptide::resync_iterator(bool forward)
{
  iter_stale= false;
  char *err= nullptr;
  riptide_status_t st= forward
                           ? riptide_txn_iter_seek(iter, cur_key.data(), cur_key.size(), &err)
                           : riptide_txn_iter_seek_for_prev(iter, cur_key.data(),
                                                            cur_key.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  if (riptide_txn_iter_valid(iter))
  {
    size_t klen= 0;
    const char *k= riptide_txn_iter_key(iter, &klen);
    if (std::string(k, klen) == cur_key)
      return step(forward);
  }
  return 0;
}

/* index_next / index_prev: one step of the open iterator in `forward`'s direction; a
   forward step ends at `stop` (set_stop). */
int ha_riptide::index_step(uchar *buf, bool forward, const std::string &stop)
{
  if (!iter)
  {
    /* A new transaction (HANDLER ... READ in a later statement): continue from the key
       read last, or from the end the direction starts at if none was. */
    if (int error= make_iterator(rindex(active_index)))
      return error;
    if (cur_key.empty())
      return forward ? index_first(buf) : index_last(buf);
    plan_keyread();
    iter_stale= true;
  }
  if (forward)
    if (int error= set_stop(stop))
      return error;
  if (iter_stale)
  {
    if (int error= resync_iterator(forward))
      return error;
  }
  else if (int error= step(forward))
    return error;
  return read_from_iterator(buf, forward);
}

int ha_riptide::index_next(uchar *buf) { return index_step(buf, true, range_stop); }

/* The next row while its key starts with `key` (key_copy format, `keylen` bytes): compared
   on the encoded key bytes, so it holds also when the record's key columns were not filled
   (an index-only read that needs no column). */
int ha_riptide::index_next_same(uchar *buf, const uchar *key, uint keylen)
{
  KEY *ki= &table->key_info[active_index];
  key_part_map map= 0;
  uint len= 0;
  for (uint i= 0; i < ki->user_defined_key_parts && len < keylen; i++)
  {
    len+= ki->key_part[i].store_length;
    map|= key_part_map(1) << i;
  }
  std::string prefix;
  encode_key_tuple(active_index, key, map, &prefix);
  /* The step ends with the prefix: a locking read does not lock the next key's row. */
  if (int error= index_step(buf, true, min_stop(range_stop, prefix_successor(prefix))))
    return error;
  if (cur_key.compare(0, prefix.size(), prefix) != 0)
    return HA_ERR_END_OF_FILE;
  return 0;
}

int ha_riptide::index_prev(uchar *buf) { return index_step(buf, false, range_stop); }

int ha_riptide::index_first(uchar *buf)
{
  if (!iter)
    if (int error= make_iterator(rindex(active_index)))
      return error;
  plan_keyread();
  iter_stale= false;
  range_stop= range_stop_of(active_index);
  if (int error= set_stop(range_stop))
    return error;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_iter_seek_to_first(iter, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return read_from_iterator(buf, true);
}

int ha_riptide::index_last(uchar *buf)
{
  if (!iter)
    if (int error= make_iterator(rindex(active_index)))
      return error;
  plan_keyread();
  iter_stale= false;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_iter_seek_to_last(iter, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return read_from_iterator(buf, false);
}

int ha_riptide::info(uint flag)
{
  if (flag & HA_STATUS_VARIABLE)
  {
    /* Riptide's estimate (committed inserts minus deletes, persisted lazily), never
       exact (no HA_STATS_RECORDS_IS_EXACT, so the optimizer never reads a table of 0 or 1
       rows as a constant). As InnoDB and MyRocks: SHOW TABLE STATUS and
       information_schema.TABLES (HA_STATUS_TIME) and open (HA_STATUS_OPEN) get the
       estimate as is; the optimizer never sees 0, which it would take for an empty table. */
    uint64_t rows= share ? riptide_htable_row_estimate(share->table) : 0;
    if (rows == 0 && !(flag & (HA_STATUS_TIME | HA_STATUS_OPEN)))
      rows= 1;
    stats.records= ha_rows(rows);
    stats.deleted= 0;
    stats.mean_rec_length= table->s->reclength;
    stats.data_file_length= stats.records * table->s->reclength;
    stats.index_file_length= 0;
  }
  if (flag & HA_STATUS_CONST)
  {
    for (uint i= 0; i < table->s->keys; i++)
    {
      KEY *k= &table->key_info[i];
      for (uint j= 0; j < k->ext_key_parts; j++)
        k->rec_per_key[j]= (j + 1 == k->user_defined_key_parts) ? 1 : 0;
    }
  }
  if (flag & HA_STATUS_ERRKEY)
  {
    /* The key of the connection's last duplicate-key failure (get_dup_key() resets errkey
       first). */
    errkey= get_trx(ha_thd())->dup_key;
  }
  if ((flag & HA_STATUS_AUTO) && share)
    stats.auto_increment_value= riptide_htable_autoinc_next(share->table);
  return 0;
}

int ha_riptide::extra(enum ha_extra_function operation)
{
  switch (operation)
  {
  case HA_EXTRA_BEGIN_COPY:
  case HA_EXTRA_BEGIN_ALTER_IGNORE_COPY:
    return begin_alter_copy();
  case HA_EXTRA_END_COPY:
    return end_alter_copy();
  case HA_EXTRA_ABORT_COPY:
    /* The server drops the table next, with the pieces committed so far. */
    abort_alter_copy();
    return 0;
  default:
    return 0;
  }
}

/* extra(HA_EXTRA_BEGIN_COPY) on the new table of an ALTER TABLE copy (alter_copy.h). Also
   sent for CREATE TABLE ... SELECT, which stays one transaction (a #sql-alter name only
   ever names an ALTER's table). The server ignores the result: if the copy session cannot
   begin, the rows go to the connection's transaction as before (logged), unless the
   table stays marked temporary: then write_row and END_COPY fail the ALTER. */
int ha_riptide::begin_alter_copy()
{
  if (!riptide_is_alter_copy_name(open_name))
    return 0;
  char *err= nullptr;
  /* Marked temporary while the copy runs: only the new table of an ALTER of a base table
     gets a #sql-alter name (an ALTER of a TEMPORARY table copies into a
     build_tmptable_filename() name, created temporary; sql_alter.cc). table->s->tmp_table
     cannot tell: the server opens every #sql-alter table as an internal temporary one. */
  riptide_status_t st= alter_copy.begin(riptide_handler, open_name, true, &err);
  if (st == RIPTIDE_OK)
    share->active_copy= &alter_copy;
  else
    sql_print_warning("RIPTIDE: ALTER TABLE copy into %s: cannot commit in pieces%s: %s",
                      open_name.c_str(),
                      alter_copy.failed_marked() ? " (the ALTER fails)"
                                                 : ", copying in one transaction",
                      take_message(st, err).c_str());
  return 0;
}

/* extra(HA_EXTRA_END_COPY): the last piece is committed and the table unmarked; an error
   makes the server abort the ALTER (and drop this table). */
int ha_riptide::end_alter_copy()
{
  if (alter_copy.failed_marked())
  {
    last_error= "ALTER TABLE copy into " + open_name +
                ": the table is marked temporary and its copy session could not begin";
    return HA_ERR_RIPTIDE;
  }
  if (!alter_copy.active())
    return 0;
  char *err= nullptr;
  riptide_status_t st= alter_copy.finish(&err);
  abort_alter_copy(); /* after finish(): nothing left to roll back, stops the sharing */
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return 0;
}

int ha_riptide::reset()
{
  drop_iterator();
  moved_keys.clear();
  lock_rows= Riptide_row_lock::NONE;
  skip_locked= false;
  row_locked= false;
  range_stop.clear();
  return 0;
}

int ha_riptide::external_lock(THD *thd, int lock_type)
{
  if (lock_type == F_UNLCK)
  {
    /* A copy that ended without HA_EXTRA_END_COPY failed (or was killed): the server
       drops the table. */
    abort_alter_copy();
    return 0;
  }
  /* The table an ALTER TABLE copies from is replaced at its end: fail before the copy, not
     after it, while a prepared transaction holds a write to it (wait_for_prepared). */
  if (thd_sql_command(thd) == SQLCOM_ALTER_TABLE && !riptide_is_alter_copy_name(open_name))
    if (int error= wait_for_prepared(open_name.c_str()))
      return error;
  return start_stmt(thd, TL_UNLOCK);
}

/* Begins the statement: session, statement savepoint, registration with the server. */
int ha_riptide::start_stmt(THD *thd, thr_lock_type lock_type)
{
  autoinc_rows_left= 0;
  if (lock_type >= TL_WRITE_ALLOW_WRITE)
    lock_rows= Riptide_row_lock::EXCLUSIVE;
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  Riptide_trx *trx= get_trx(thd);
  /* Not for an ALTER TABLE copy's own session (session() returns it). */
  if (s == trx->txn)
  {
    char *err= nullptr;
    riptide_status_t st= begin_statement_waits(thd, trx, &err);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
  }
  bool multi= in_multi_statement(thd);
  if (multi && !trx->stmt_savepoint)
  {
    if (!push_savepoint(trx))
      return HA_ERR_INTERNAL_ERROR;
    trx->stmt_savepoint= true;
  }
  trans_register_ha(thd, false, riptide_hton, 0);
  if (multi)
    trans_register_ha(thd, true, riptide_hton, 0);
  return 0;
}

THR_LOCK_DATA **ha_riptide::store_lock(THD *thd, THR_LOCK_DATA **to,
                                       enum thr_lock_type lock_type)
{
  if (lock_type != TL_IGNORE)
  {
    /* Reads of writing statements and SELECT ... FOR UPDATE lock each row they return;
       LOCK IN SHARE MODE takes shared row locks. As InnoDB (ha_innobase::store_lock and
       external_lock), these reads take shared row locks too: under REPEATABLE READ and
       SERIALIZABLE, the tables a data-changing statement only reads (the source rows of
       INSERT ... SELECT, CREATE TABLE ... SELECT, the other tables of a multi-table UPDATE
       or DELETE, subqueries); and every read of a SERIALIZABLE multi-statement transaction
       (autocommit SELECTs stay snapshot reads: they are read-only transactions,
       serializable as they are). CHECKSUM and ANALYZE TABLE never lock. Other reads take
       none. */
    int iso= thd_tx_isolation(thd);
    int cmd= thd_sql_command(thd);
    bool changes_data= cmd == SQLCOM_INSERT_SELECT || cmd == SQLCOM_REPLACE_SELECT ||
                       cmd == SQLCOM_CREATE_TABLE || cmd == SQLCOM_INSERT ||
                       cmd == SQLCOM_REPLACE || cmd == SQLCOM_UPDATE ||
                       cmd == SQLCOM_UPDATE_MULTI || cmd == SQLCOM_DELETE ||
                       cmd == SQLCOM_DELETE_MULTI;
    skip_locked= lock_type == TL_WRITE_SKIP_LOCKED || lock_type == TL_READ_SKIP_LOCKED;
    if (lock_type >= TL_WRITE_ALLOW_WRITE)
      lock_rows= Riptide_row_lock::EXCLUSIVE;
    else if (lock_type == TL_READ_WITH_SHARED_LOCKS || lock_type == TL_READ_SKIP_LOCKED)
      lock_rows= Riptide_row_lock::SHARED;
    else if (changes_data && iso >= ISO_REPEATABLE_READ)
      lock_rows= Riptide_row_lock::SHARED;
    else if (iso == ISO_SERIALIZABLE && in_multi_statement(thd) &&
             cmd != SQLCOM_CHECKSUM && cmd != SQLCOM_ANALYZE)
      lock_rows= Riptide_row_lock::SHARED;
    else
      lock_rows= Riptide_row_lock::NONE;
  }
  if (lock_type != TL_IGNORE && lock_data.type == TL_UNLOCK)
  {
    /* Row-level locking: let concurrent writers in (as InnoDB and MyRocks do). */
    if (lock_type >= TL_WRITE_CONCURRENT_INSERT && lock_type <= TL_WRITE &&
        !thd_in_lock_tables(thd) && !thd_tablespace_op(thd))
      lock_type= TL_WRITE_ALLOW_WRITE;
    if (lock_type == TL_READ_NO_INSERT && !thd_in_lock_tables(thd))
      lock_type= TL_READ;
    lock_data.type= lock_type;
  }
  *to++= &lock_data;
  return to;
}

/* Counts the index keys in the range (up to RANGE_COUNT_LIMIT, then extrapolates from the
   row estimate); never 0, which the optimizer would take as proof of an empty range. */
ha_rows ha_riptide::records_in_range(uint inx, const key_range *min_key,
                                     const key_range *max_key, page_range *)
{
  if (!share)
    return 10;
  uint ri= rindex(inx);
  const std::string &prefix= share->prefixes[ri];
  std::string lo, hi;
  bool has_hi= false;
  if (min_key)
  {
    encode_key_tuple(inx, min_key->key, min_key->keypart_map, &lo);
    if (min_key->flag == HA_READ_AFTER_KEY)
      lo= prefix_successor(lo);
  }
  else
    lo= prefix;
  if (max_key)
  {
    encode_key_tuple(inx, max_key->key, max_key->keypart_map, &hi);
    /* HA_READ_AFTER_KEY: up to and including the key; HA_READ_BEFORE_KEY: below it. */
    if (max_key->flag == HA_READ_AFTER_KEY)
      hi= prefix_successor(hi);
    has_hi= !hi.empty();
  }
  if (lo.size() < prefix.size() || lo.compare(0, prefix.size(), prefix) != 0)
    return 1;
  std::string lo_rel= lo.substr(prefix.size());
  std::string hi_rel;
  if (has_hi)
  {
    if (hi.size() >= prefix.size() && hi.compare(0, prefix.size(), prefix) == 0)
      hi_rel= hi.substr(prefix.size());
    else
      has_hi= false; /* past the end of the index */
  }
  uint64_t count= 0;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_estimate_range(
      share->table, ri, lo_rel.data(), lo_rel.size(), has_hi ? hi_rel.data() : nullptr,
      has_hi ? hi_rel.size() : 0, RANGE_COUNT_LIMIT, &count, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_warning("RIPTIDE: records_in_range: %s", take_message(st, err).c_str());
    return 10;
  }
  return ha_rows(count ? count : 1);
}

/* The cost of reading `rows` rows in `ranges` ranges of index `index`, in MariaDB's unit
   (one random row read). A secondary index: the handler's default, ranges + rows (every
   row is a primary key lookup after its index entry). The primary key is clustered (the
   row is the index entry): a seek per range, then the rows follow in key order (1/20 of a
   random read each, as MyRocks' ha_rocksdb::read_time). The seek costs less than a row
   read so that an equality on the whole primary key (one seek, one row) always costs less
   than any row found through a secondary index (MariaDB charges that one row read plus the
   secondary seek): with the default (ranges + rows = 2 for a point read), UPDATE t SET ..
   WHERE <every primary key part> = .. picked a secondary index on one of the key parts
   whenever its range held a row or two, and that index's locking scan then row-locked
   other rows with the same value (other connections' rows: deadlocks). */
double ha_riptide::read_time(uint index, uint ranges, ha_rows rows)
{
  if (!table || index != table->s->primary_key)
    return handler::read_time(index, ranges, rows);
  return rows2double(ranges) * PK_SEEK_COST + rows2double(rows) * PK_ROW_COST;
}

/* ---------------------------------------------------------------------------------------
   CHECK / ANALYZE / OPTIMIZE TABLE */

extern "C" {
static bool riptide_check_keys_cb(void *ctx, const char *, size_t, const char *row,
                                  size_t row_len, riptide_hkey_t *keys, size_t nkeys)
{
  return static_cast<ha_riptide *>(ctx)->keys_of_stored_row(row, row_len, keys, nkeys);
}
}

/* The secondary keys of a stored row, computed exactly as write_row computes them (into
   scratch buffers, so the current row and its blob bodies stay untouched); false if the
   row cannot be decoded (CHECK TABLE reports it against the primary key). */
bool ha_riptide::keys_of_stored_row(const char *row, size_t row_len, riptide_hkey_t *keys,
                                    size_t nkeys)
{
  check_rec.assign(table->s->reclength, 0);
  if (unpack_row(row, row_len, check_rec.data(), &check_blobs))
    return false;
  encode_secondary(check_rec.data(), &old_sec_bufs, &old_sec_keys);
  if (old_sec_keys.size() != nkeys)
    return false;
  for (size_t i= 0; i < nkeys; i++)
    keys[i]= old_sec_keys[i];
  return true;
}

/* Every secondary index entry points to an existing row whose key for that index matches,
   and every row has its entry in every secondary index (crates/handler, check.rs), as the
   connection's transaction sees the table. Each inconsistency is a warning naming the
   index; the result is then HA_ADMIN_CORRUPT. */
int ha_riptide::check(THD *thd, HA_CHECK_OPT *)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return HA_ADMIN_FAILED;
  uint64_t problems= 0;
  char *report= nullptr, *err= nullptr;
  riptide_status_t st= riptide_hsession_check_table(s, share->table, riptide_check_keys_cb, this,
                                                    CHECK_REPORT_LIMIT, &problems, &report,
                                                    &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= take_message(st, err);
    sql_print_warning("RIPTIDE: CHECK TABLE %s: %s", table->s->path.str, msg.c_str());
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_NOT_KEYFILE,
                        "RIPTIDE: the check failed: %s", msg.c_str());
    return HA_ADMIN_FAILED;
  }
  if (!problems)
    return HA_ADMIN_OK;
  std::string text= report ? report : "";
  riptide_free(report);
  size_t start= 0, shown= 0;
  while (start < text.size())
  {
    size_t end= text.find('\n', start);
    if (end == std::string::npos)
      end= text.size();
    std::string line= text.substr(start, end - start);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_NOT_KEYFILE,
                        "RIPTIDE: table %s: %s", table->s->table_name.str, line.c_str());
    sql_print_error("RIPTIDE: CHECK TABLE %s: %s", table->s->path.str, line.c_str());
    shown++;
    start= end + 1;
  }
  if (problems > shown)
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_NOT_KEYFILE,
                        "RIPTIDE: table %s: %llu more inconsistencies",
                        table->s->table_name.str, (unsigned long long) (problems - shown));
  return HA_ADMIN_CORRUPT;
}

/* Recounts the rows (the estimate info() reports) and persists the count. */
int ha_riptide::analyze(THD *thd, HA_CHECK_OPT *)
{
  uint64_t rows= 0;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_refresh_statistics(share->table, &rows, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= take_message(st, err);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: the row count failed: %s", msg.c_str());
    return HA_ADMIN_FAILED;
  }
  info(HA_STATUS_VARIABLE | HA_STATUS_CONST);
  return HA_ADMIN_OK;
}

/* Compacts the key ranges of every index of the table (deleted rows, old versions and
   tombstones go away). */
int ha_riptide::optimize(THD *thd, HA_CHECK_OPT *)
{
  char *err= nullptr;
  riptide_status_t st= riptide_htable_compact(share->table, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= take_message(st, err);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: compaction failed: %s", msg.c_str());
    return HA_ADMIN_FAILED;
  }
  return HA_ADMIN_OK;
}

/* ---------------------------------------------------------------------------------------
   Plugin declaration: the only symbols the .so exports (with the service slots). */

static struct st_mysql_storage_engine riptide_storage_engine= {
    MYSQL_HANDLERTON_INTERFACE_VERSION};

#pragma GCC visibility push(default)
maria_declare_plugin(riptide){
    MYSQL_STORAGE_ENGINE_PLUGIN,
    &riptide_storage_engine,
    "RIPTIDE",
    "The Riptide authors",
    "Riptide: an LSM-tree storage engine written in Rust",
    PLUGIN_LICENSE_GPL,
    riptide_init,
    riptide_deinit,
    0x0001,
    riptide_status_variables,
    riptide_system_variables,
    "0.1",
    MariaDB_PLUGIN_MATURITY_EXPERIMENTAL} maria_declare_plugin_end;
#pragma GCC visibility pop
