/*
  ha_riptide: the MariaDB handler of Riptide, its reads (a cursor per scan) and what every
  call shares (flags, errors, the connection's session). Writes: writes.cc; statements and
  locks: statement.cc. See ha_riptide.h and README.md.

  The data dictionary, key spaces, cursors, secondary index maintenance, unique checks,
  hidden row ids, auto-increment, statements and savepoints live in Rust (crates/handler,
  through the riptide_handler_* / riptide_htable_* / riptide_hsession_* / riptide_hcursor_*
  C ABI). This file hands Rust what only MariaDB can compute: key tuples and row bytes
  (record_codec.h), and turns the rows cursors return back into records.
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_lex.h"
#include "key.h"
#include "log.h"
#include <mysql/plugin.h>

#include <algorithm>

#include "ha_riptide.h"
#include "record_codec.h"
#include "riptide_shim.h"
#include "transactions.h"

namespace {

/* records_in_range: a range the tables' index blocks put at this many keys or more is
   answered with that approximation; a smaller one is counted exactly, up to this many
   (Table::estimate_range). It was 1000 with every range counted, a fifth of the server's CPU
   in TPC-C (benches/RESULTS.md, issue 17). */
constexpr uint64_t RANGE_COUNT_LIMIT= 256;
/* read_time: a seek into the primary key, and each row read from it in key order, in
   MariaDB's cost unit (one random row read). */
constexpr double PK_SEEK_COST= 0.5;
constexpr double PK_ROW_COST= 1.0 / 20;

/* The cursor seek of a positioning read (RIPTIDE_HSEEK_*). */
int32_t seek_of(enum ha_rkey_function find_flag)
{
  switch (find_flag)
  {
  case HA_READ_AFTER_KEY:
    return RIPTIDE_HSEEK_AFTER;
  case HA_READ_BEFORE_KEY:
    return RIPTIDE_HSEEK_BEFORE;
  case HA_READ_KEY_OR_PREV:
  case HA_READ_PREFIX_LAST:
  case HA_READ_PREFIX_LAST_OR_PREV:
    return RIPTIDE_HSEEK_AT_OR_BEFORE;
  default:
    return RIPTIDE_HSEEK_AT_OR_AFTER;
  }
}

} // namespace

/* ---------------------------------------------------------------------------------------
   The handler */

ha_riptide::ha_riptide(handlerton *hton, TABLE_SHARE *table_arg) : handler(hton, table_arg) {}

ha_riptide::~ha_riptide() { close_cursor(); }

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
   plan_keyread, Riptide_codec::decode_tuple), else from the row the entry points to (read by primary
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

bool ha_riptide::get_error_message(int error, String *buf)
{
  if (error == HA_ERR_RIPTIDE)
    buf->copy(last_error.data(), last_error.size(), system_charset_info);
  return false;
}

/* Maps a failed C ABI call of a row operation to a handler error (riptide_ha_error),
   keeping the message of HA_ERR_RIPTIDE for get_error_message. */
int ha_riptide::status_error(riptide_status_t st, char *msg)
{
  std::string m= riptide_take_message(st, msg);
  int error= riptide_ha_error(st, Riptide_call::ROW);
  if (error == HA_ERR_LOCK_DEADLOCK)
  {
    /* The engine picked this transaction as the victim (deadlock), or it lost a write
       conflict under snapshot isolation and was rolled back: the whole transaction goes. */
    THD *thd= ha_thd();
    thd->mark_transaction_to_rollback(true);
    riptide_record_deadlock(thd, st == RIPTIDE_CONFLICT, m);
    if (riptide_print_all_deadlocks())
    {
      const char *query= thd->query();
      const size_t query_length= query ? std::min<size_t>(thd->query_length(), 1024) : 0;
      sql_print_information("RIPTIDE: deadlock, connection %lu rolled back: %s; its statement: "
                            "%.*s",
                            ulong(thd_get_thread_id(thd)), m.c_str(), int(query_length),
                            query ? query : "");
    }
  }
  else if (error == HA_ERR_RIPTIDE)
  {
    last_error= m;
    /* A write past riptide_max_txn_write_set_bytes is the user's statement meeting a
       configured limit (counted in Riptide_txn_write_set_limit_hits), not a fault of the
       engine: the client gets the message, the error log does not. */
    if (st != RIPTIDE_LIMIT_EXCEEDED)
      sql_print_warning("RIPTIDE: %s", m.c_str());
  }
  return error;
}

/* A failed row write: a duplicate key names MariaDB's key number for info(ERRKEY). */
int ha_riptide::row_error(riptide_status_t st, char *err, size_t dup_index)
{
  if (st == RIPTIDE_DUPLICATE_KEY)
    get_trx(ha_thd())->dup_key=
        dup_index < table->s->keys + (has_pk ? 0 : 1) ? keynr_of(dup_index) : uint(-1);
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

int ha_riptide::unpack_row(const char *value, size_t len, const char *pk, size_t pk_len,
                           uchar *buf, std::string *blobs)
{
  if (codec.unpack_row(value, len, pk, pk_len, buf, blobs, &last_error))
    return 0;
  sql_print_error("RIPTIDE: %s", last_error.c_str());
  return HA_ERR_RIPTIDE;
}

/* ---------------------------------------------------------------------------------------
   Reads: one cursor (riptide_hcursor_t) per scan, fed key tuples; each call returns a row
   (its reference, its key tuple and its bytes). */

/* Makes the cursor read Riptide index `index` (a new cursor when it read another one) and
   starts a new scan on it: no iterator, no moved rows, no range end. */
int ha_riptide::use_cursor(uint index)
{
  if (cursor && cursor_index == index)
  {
    reset_cursor();
    return 0;
  }
  close_cursor();
  char *err= nullptr;
  riptide_status_t st= riptide_hcursor_create(share->table, index, &cursor, &err);
  if (st != RIPTIDE_OK)
  {
    cursor= nullptr;
    return status_error(st, err);
  }
  cursor_index= index;
  cursor_mode= RIPTIDE_HCURSOR_SNAPSHOT;
  cursor_dirty= false;
  range_end_set= false;
  keys_only= false;
  return 0;
}

/* Ends the statement's use of the cursor (riptide_hcursor_reset: no iterator, moved rows,
   range end or keys-only read), if it has any of them (cursor_dirty): a statement that only
   reads rows by primary key costs no call here. */
void ha_riptide::reset_cursor()
{
  if (cursor && cursor_dirty)
    riptide_hcursor_reset(cursor);
  cursor_dirty= false;
  keys_only= false;
  range_end_set= false;
}

void ha_riptide::close_cursor()
{
  riptide_hcursor_destroy(cursor);
  cursor= nullptr;
  row_= riptide_hrow_t();
  keys_only= false;
}

/* The RIPTIDE_HCURSOR_* mode of this statement's reads. A locking read (FOR UPDATE, LOCK IN
   SHARE MODE, SERIALIZABLE, the source rows of INSERT ... SELECT, UPDATE, DELETE) reads as
   InnoDB does: the newest committed rows, each locked, and next-key locks on what it
   walks, so that other sessions' inserts there wait; SKIP LOCKED steps over rows others
   hold. Plain reads read the snapshot. */
int32_t ha_riptide::wanted_cursor_mode() const
{
  switch (lock_rows)
  {
  case Riptide_row_lock::NONE:
    return RIPTIDE_HCURSOR_SNAPSHOT;
  case Riptide_row_lock::SHARED:
    return skip_locked ? RIPTIDE_HCURSOR_SHARED_SKIP_LOCKED : RIPTIDE_HCURSOR_SHARED;
  case Riptide_row_lock::EXCLUSIVE:
    break;
  }
  return skip_locked ? RIPTIDE_HCURSOR_EXCLUSIVE_SKIP_LOCKED : RIPTIDE_HCURSOR_EXCLUSIVE;
}

int ha_riptide::set_cursor_mode(int32_t mode)
{
  if (mode == cursor_mode)
    return 0;
  char *err= nullptr;
  riptide_status_t st= riptide_hcursor_set_mode(cursor, mode, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  cursor_mode= mode;
  keys_only= false;
  return 0;
}

/* Decides, at the start of an index read, whether rows can be filled in from the key
   tuples alone: an index-only read (HA_EXTRA_KEYREAD) of a secondary index where every
   column the statement reads is a decodable part of that index or of the primary key
   (Riptide_codec::tuples_cover). The cursor grants it only to a plain read of a session
   that has not written the index (riptide_hcursor_set_keys_only). */
void ha_riptide::plan_keyread(riptide_hsession_t *s)
{
  bool want= rindex(active_index) != 0 && keyread_enabled() && keyread == active_index &&
             active_index < table->s->keys && cursor_mode == RIPTIDE_HCURSOR_SNAPSHOT;
  if (want)
  {
    const KEY *pk= has_pk ? &table->key_info[table->s->primary_key] : nullptr;
    want= codec.tuples_cover(&table->key_info[active_index], pk, table->read_set);
  }
  if (want || keys_only)
  {
    keys_only= riptide_hcursor_set_keys_only(s, cursor, want);
    cursor_dirty= true;
  }
}

/* Tells the cursor where a forward read's range ends (handler::end_range, set by
   read_range_first before it positions, reset by ha_index_init): up to and including the
   end key for HA_READ_AFTER_KEY (and EXACT), below it for HA_READ_BEFORE_KEY, as
   compare_key decides. A locking read's forward steps do not lock past it; every read
   takes it as its read-ahead limit (the blocks of the range are read at once), and plain
   reads still step past it (HANDLER reads go on past a range). A backward read (`forward`
   false) has none: the steps after it go on to the end. A call only when the end is or
   was set. */
int ha_riptide::set_range_end(bool forward)
{
  bool has_end= forward && end_range;
  if (!has_end && !range_end_set)
    return 0;
  std::string end;
  bool inclusive= false;
  if (has_end)
  {
    codec.encode_key_image(ha_thd(), active_index, end_range->key, end_range->keypart_map,
                           &end);
    inclusive= end_range->flag != HA_READ_BEFORE_KEY;
  }
  char *err= nullptr;
  cursor_dirty= true;
  riptide_status_t st= riptide_hcursor_set_range_end(
      cursor, has_end ? end.data() : nullptr, end.size(), inclusive, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  range_end_set= has_end;
  return 0;
}

/* Fills record `buf` from the cursor's row (row_): from its key tuples for a keys-only
   read, else from the row bytes. A row reached through a secondary entry must be that
   entry's row: the entry of a snapshot can point to a row the transaction has since
   changed (or, for a locking read, another transaction changed before the lock was
   granted); InnoDB skips such an entry too (the row is found through its own entry).
   `*rejected` then says so. */
int ha_riptide::row_from_cursor(uchar *buf, bool *rejected)
{
  *rejected= false;
  cur_ref.assign(row_.pk, row_.pk_len);
  last_read= Last_read::CURSOR;
  if (!row_.row)
  {
    const uchar *k= reinterpret_cast<const uchar *>(row_.key);
    const uchar *p= reinterpret_cast<const uchar *>(row_.pk);
    if (!codec.decode_tuple(&table->key_info[active_index], k, k + row_.key_len, buf) ||
        (has_pk && !codec.decode_tuple(&table->key_info[table->s->primary_key], p,
                                       p + row_.pk_len, buf)))
    {
      last_error= "a malformed key of index " + std::to_string(cursor_index) + " in " +
                  std::string(table->s->path.str);
      sql_print_error("RIPTIDE: %s", last_error.c_str());
      return HA_ERR_RIPTIDE;
    }
    return 0;
  }
  if (int error= unpack_row(row_.row, row_.row_len, row_.pk, row_.pk_len, buf, &blob_buf))
    return error;
  if (cursor_index != 0)
  {
    bool has_null= false;
    codec.encode_key(keynr_of(cursor_index), buf, &entry_check_buf, &has_null);
    *rejected= entry_check_buf.size() != row_.key_len ||
               memcmp(entry_check_buf.data(), row_.key, row_.key_len) != 0;
  }
  return 0;
}

int ha_riptide::cursor_status(riptide_status_t st, char *err)
{
  last_read= Last_read::NONE;
  return status_error(st, err);
}

/* Returns the row the cursor just read (row_) in `buf`, moving on in the given direction
   (within the key tuple `within`, if given) past rows rejected by their entry check or by
   the pushed index condition; HA_ERR_END_OF_FILE when there is none. */
int ha_riptide::deliver(riptide_hsession_t *s, uchar *buf, bool forward,
                        const std::string *within)
{
  for (;;)
  {
    if (!row_.found)
    {
      last_read= Last_read::NONE;
      return HA_ERR_END_OF_FILE;
    }
    bool rejected= false;
    if (int error= row_from_cursor(buf, &rejected))
      return error;
    int icp= rejected ? CHECK_NEG : pushed_condition(buf);
    if (icp != CHECK_NEG)
      return icp_error(icp);
    /* Not wanted: as if the server had called unlock_row. */
    unlock_row();
    char *err= nullptr;
    const char *w= within ? within->data() : nullptr;
    size_t wlen= within ? within->size() : 0;
    riptide_status_t st= forward ? riptide_hcursor_next(s, cursor, w, wlen, &row_, &err)
                                 : riptide_hcursor_prev(s, cursor, w, wlen, &row_, &err);
    if (st != RIPTIDE_OK)
      return cursor_status(st, err);
  }
}

/* The server no longer wants the row read last (the WHERE clause rejected it, or it lies
   past the range): under READ COMMITTED its row locks go, as InnoDB's unlock_row (the
   session decides what may go). A failure only leaves the row locked: logged. */
void ha_riptide::unlock_row()
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(ha_thd(), riptide_hton));
  if (!trx || !trx->txn || last_read == Last_read::NONE)
    return;
  char *err= nullptr;
  riptide_status_t st= RIPTIDE_OK;
  if (last_read == Last_read::CURSOR && cursor && cursor_mode != RIPTIDE_HCURSOR_SNAPSHOT)
    st= riptide_hcursor_unlock_current(trx->txn, cursor, &err);
  else if (last_read == Last_read::POINT && lock_rows != Riptide_row_lock::NONE)
    st= riptide_hsession_unlock_row(trx->txn, share->table, cur_ref.data(), cur_ref.size(),
                                    nullptr, &err);
  last_read= Last_read::NONE;
  if (st != RIPTIDE_OK)
    sql_print_warning("RIPTIDE: releasing a row lock of %s: %s (the row stays locked)",
                      table->s->path.str, riptide_take_message(st, err).c_str());
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

int ha_riptide::rnd_init(bool)
{
  scan_positioned= false;
  return use_cursor(0);
}

int ha_riptide::rnd_end()
{
  reset_cursor();
  return 0;
}

int ha_riptide::rnd_next(uchar *buf)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (!cursor)
    if (int error= use_cursor(0))
      return error;
  if (int error= set_cursor_mode(wanted_cursor_mode()))
    return error;
  char *err= nullptr;
  cursor_dirty= true;
  /* The first call after rnd_init starts at the first row; later ones go on after the row
     read last (also in a later transaction: HANDLER ... READ NEXT). */
  riptide_status_t st= scan_positioned
                           ? riptide_hcursor_next(s, cursor, nullptr, 0, &row_, &err)
                           : riptide_hcursor_first(s, cursor, &row_, &err);
  scan_positioned= true;
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  return deliver(s, buf, true, nullptr);
}

/* Reads the row `pos` refers to (position()); the scan's cursor stays where it was. */
int ha_riptide::rnd_pos(uchar *buf, uchar *pos)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  int32_t lock= lock_rows == Riptide_row_lock::NONE     ? RIPTIDE_ROW_LOCK_NONE
                : lock_rows == Riptide_row_lock::SHARED ? RIPTIDE_ROW_LOCK_SHARED
                                                        : RIPTIDE_ROW_LOCK_EXCLUSIVE;
  char *v= nullptr, *err= nullptr;
  size_t len= 0;
  bool found= false;
  riptide_status_t st= riptide_hsession_get_row(s, share->table,
                                                reinterpret_cast<const char *>(pos),
                                                ref_length, lock, &v, &len, &found, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  if (found)
  {
    error= unpack_row(v, len, reinterpret_cast<const char *>(pos), ref_length, buf, &blob_buf);
    cur_ref.assign(reinterpret_cast<const char *>(pos), ref_length);
    last_read= Last_read::POINT;
  }
  riptide_free_value(v, len);
  if (error)
    return error;
  return found ? 0 : HA_ERR_KEY_NOT_FOUND;
}

void ha_riptide::position(const uchar *record)
{
  if (has_pk)
  {
    encode_pk(record, &key_buf);
    memcpy(ref, key_buf.data(), ref_length);
  }
  else if (cur_ref.size() == ref_length)
    memcpy(ref, cur_ref.data(), ref_length);
}

int ha_riptide::index_init(uint idx, bool)
{
  active_index= idx;
  return use_cursor(rindex(idx));
}

int ha_riptide::index_end()
{
  reset_cursor();
  active_index= MAX_KEY;
  return 0;
}

int ha_riptide::index_read_map(uchar *buf, const uchar *key, key_part_map keypart_map,
                               enum ha_rkey_function find_flag)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  uint ri= rindex(active_index);
  if (!cursor || cursor_index != ri)
    if (int error= use_cursor(ri))
      return error;
  bool full= codec.encode_key_image(ha_thd(), active_index, key, keypart_map, &key_buf);
  char *err= nullptr;
  riptide_status_t st;
  if (full && find_flag == HA_READ_KEY_EXACT &&
      table->key_info[active_index].algorithm == HA_KEY_ALG_LONG_HASH)
  {
    /* The server's duplicate check of a long UNIQUE key (check_duplicate_long_entry_key;
       the optimizer never reads these keys), an exact read of the key's hash. Its read
       alone would be a race: two sessions inserting one value could both find no row, the
       other's being uncommitted (and, under REPEATABLE READ, not in the snapshot even once
       committed). So the hash value is locked first, exclusively, until the transaction
       ends (the same lock-only key the engine's own unique checks take), and the read
       goes to the newest committed entries merged with the session's own: a second
       session checking the value waits for the first to end, then sees its row. The rows
       it finds are locked as InnoDB locks the duplicates its unique checks find: shared
       for an INSERT, exclusive when the statement goes on to replace or update the
       duplicate (REPLACE, INSERT ... ON DUPLICATE KEY UPDATE). No gap locks: inserts of
       other values never wait. */
    st= riptide_hsession_lock_value(s, share->table, ri, key_buf.data(), key_buf.size(), &err);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
    error= set_cursor_mode(ha_thd()->lex->duplicates == DUP_ERROR
                               ? RIPTIDE_HCURSOR_CURRENT_SHARED
                               : RIPTIDE_HCURSOR_CURRENT_EXCLUSIVE);
  }
  else
    error= set_cursor_mode(wanted_cursor_mode());
  if (error)
    return error;
  plan_keyread(s);
  if (full && ri == 0 && (find_flag == HA_READ_KEY_EXACT || find_flag == HA_READ_PREFIX))
  {
    /* A whole primary key read exactly: a point read (no iterator), which also positions
       the cursor for an index_next after it. */
    st= riptide_hcursor_get(s, cursor, key_buf.data(), key_buf.size(), &row_, &err);
    if (st != RIPTIDE_OK)
      return cursor_status(st, err);
    if (!row_.found)
    {
      last_read= Last_read::NONE;
      return HA_ERR_KEY_NOT_FOUND;
    }
    bool rejected= false;
    if (int error= row_from_cursor(buf, &rejected))
      return error;
    int icp= pushed_condition(buf);
    return icp == CHECK_NEG || icp == CHECK_OUT_OF_RANGE ? HA_ERR_KEY_NOT_FOUND
                                                         : icp_error(icp);
  }
  int32_t how= seek_of(find_flag);
  bool forward= how == RIPTIDE_HSEEK_AT_OR_AFTER || how == RIPTIDE_HSEEK_AFTER;
  if (int error= set_range_end(forward))
    return error;
  /* An exact read (of one key prefix) only returns rows of that prefix; a forward one
     ends with it (no lock past it, nor past the range). */
  bool exact= find_flag == HA_READ_KEY_EXACT || find_flag == HA_READ_PREFIX ||
              find_flag == HA_READ_PREFIX_LAST;
  cursor_dirty= true;
  st= riptide_hcursor_seek(s, cursor, key_buf.data(), key_buf.size(), how, exact, &row_, &err);
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  error= deliver(s, buf, forward, exact ? &key_buf : nullptr);
  return error == HA_ERR_END_OF_FILE ? HA_ERR_KEY_NOT_FOUND : error;
}

/* index_next / index_prev: one step of the scan in `forward`'s direction (a forward step
   of a locking read ends at the range end). */
int ha_riptide::index_step(uchar *buf, bool forward)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (!cursor)
    if (int error= use_cursor(rindex(active_index)))
      return error;
  if (int error= set_cursor_mode(wanted_cursor_mode()))
    return error;
  char *err= nullptr;
  cursor_dirty= true;
  riptide_status_t st= forward ? riptide_hcursor_next(s, cursor, nullptr, 0, &row_, &err)
                               : riptide_hcursor_prev(s, cursor, nullptr, 0, &row_, &err);
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  return deliver(s, buf, forward, nullptr);
}

int ha_riptide::index_next(uchar *buf) { return index_step(buf, true); }

int ha_riptide::index_prev(uchar *buf) { return index_step(buf, false); }

/* The next row while its key starts with `key` (key_copy format, `keylen` bytes): compared
   on the key tuples, so it holds also when the record's key columns were not filled (an
   index-only read that needs no column); a locking read does not lock the next key's row. */
int ha_riptide::index_next_same(uchar *buf, const uchar *key, uint keylen)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (!cursor)
    return HA_ERR_END_OF_FILE;
  KEY *ki= &table->key_info[active_index];
  key_part_map map= 0;
  uint len= 0;
  for (uint i= 0; i < ki->user_defined_key_parts && len < keylen; i++)
  {
    len+= ki->key_part[i].store_length;
    map|= key_part_map(1) << i;
  }
  codec.encode_key_image(ha_thd(), active_index, key, map, &key_buf);
  char *err= nullptr;
  cursor_dirty= true;
  riptide_status_t st=
      riptide_hcursor_next(s, cursor, key_buf.data(), key_buf.size(), &row_, &err);
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  return deliver(s, buf, true, &key_buf);
}

int ha_riptide::index_first(uchar *buf)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (!cursor)
    if (int error= use_cursor(rindex(active_index)))
      return error;
  if (int error= set_cursor_mode(wanted_cursor_mode()))
    return error;
  plan_keyread(s);
  if (int error= set_range_end(true))
    return error;
  char *err= nullptr;
  cursor_dirty= true;
  riptide_status_t st= riptide_hcursor_first(s, cursor, &row_, &err);
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  return deliver(s, buf, true, nullptr);
}

int ha_riptide::sample_seek(uchar *buf, const std::string &tuple)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (!cursor)
    if (int error= use_cursor(rindex(active_index)))
      return error;
  if (int error= set_cursor_mode(wanted_cursor_mode()))
    return error;
  plan_keyread(s);
  if (int error= set_range_end(true))
    return error;
  char *err= nullptr;
  cursor_dirty= true;
  riptide_status_t st= riptide_hcursor_seek(s, cursor, tuple.data(), tuple.size(),
                                            RIPTIDE_HSEEK_AT_OR_AFTER, false, &row_, &err);
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  return deliver(s, buf, true, nullptr);
}

int ha_riptide::index_last(uchar *buf)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (!cursor)
    if (int error= use_cursor(rindex(active_index)))
      return error;
  if (int error= set_cursor_mode(wanted_cursor_mode()))
    return error;
  plan_keyread(s);
  if (int error= set_range_end(false))
    return error;
  char *err= nullptr;
  cursor_dirty= true;
  riptide_status_t st= riptide_hcursor_last(s, cursor, &row_, &err);
  if (st != RIPTIDE_OK)
    return cursor_status(st, err);
  return deliver(s, buf, false, nullptr);
}

/* Counts the index keys in the range (up to RANGE_COUNT_LIMIT, then extrapolates from the
   row estimate); never 0, which the optimizer would take as proof of an empty range. The
   range starts at or (HA_READ_AFTER_KEY) after min_key's tuple, and ends up to and
   including (HA_READ_AFTER_KEY) or below (HA_READ_BEFORE_KEY) max_key's. */
ha_rows ha_riptide::records_in_range(uint inx, const key_range *min_key,
                                     const key_range *max_key, page_range *)
{
  if (!share)
    return 10;
  std::string lo, hi;
  if (min_key)
    codec.encode_key_image(ha_thd(), inx, min_key->key, min_key->keypart_map, &lo);
  if (max_key)
    codec.encode_key_image(ha_thd(), inx, max_key->key, max_key->keypart_map, &hi);
  uint64_t count= 0;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_estimate_range(
      share->table, rindex(inx), min_key ? lo.data() : nullptr, lo.size(),
      min_key && min_key->flag == HA_READ_AFTER_KEY, max_key ? hi.data() : nullptr, hi.size(),
      max_key && max_key->flag == HA_READ_AFTER_KEY, RANGE_COUNT_LIMIT, &count, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_warning("RIPTIDE: records_in_range: %s", riptide_take_message(st, err).c_str());
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
