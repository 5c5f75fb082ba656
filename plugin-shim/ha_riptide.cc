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
#include "record_codec.h"
#include "riptide_shim.h"
#include "transactions.h"

namespace {

/* First byte of every row value: the format of what follows. V1: the record buffer alone
   (tables without BLOB/TEXT columns); V2: the record buffer and the blob bodies. */
constexpr char ROW_FORMAT_V1= 1;
constexpr char ROW_FORMAT_V2= 2;
/* records_in_range counts at most this many keys (then extrapolates). */
constexpr uint64_t RANGE_COUNT_LIMIT= 1000;
/* read_time: a seek into the primary key, and each row read from it in key order, in
   MariaDB's cost unit (one random row read). */
constexpr double PK_SEEK_COST= 0.5;
constexpr double PK_ROW_COST= 1.0 / 20;


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
  std::string m= riptide_take_message(st, msg);
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
  codec.encode_key(table->s->primary_key, record, out, &has_null);
}

/* The secondary keys of `record`, one per Riptide secondary index, in `keys` (views of
   `bufs`). */
void ha_riptide::encode_secondary(const uchar *record, std::vector<std::string> *bufs,
                                  std::vector<riptide_hkey_t> *keys)
{
  codec.encode_secondary(record, has_pk ? 1 : 0, bufs, keys);
}

/* Encodes the first key parts of a key tuple (key_copy format) of index `keynr` like
   encode_key, with the index's prefix in front. Returns 1 if every part was given. */
int ha_riptide::encode_key_tuple(uint keynr, const uchar *key, key_part_map keypart_map,
                                 std::string *out)
{
  std::string tuple;
  bool full= codec.encode_key_image(ha_thd(), keynr, key, keypart_map, &tuple);
  out->assign(share->prefixes[rindex(keynr)]);
  out->append(tuple);
  return full ? 1 : 0;
}

/* Refuses a row the engine could not store as one entry (riptide_max_key_value_len, 1 GiB:
   a row with BLOB/TEXT bodies that large) before its value is built. Such a write used to
   be accepted, then failed every flush and the next start. 0 or HA_ERR_RIPTIDE with the
   sizes. */
int ha_riptide::check_row_size(const uchar *buf, size_t key_len)
{
  size_t len= codec.entry_size(buf, key_len);
  size_t limit= riptide_max_key_value_len();
  if (len <= limit)
    return 0;
  last_error= "a row of " + std::to_string(len) + " bytes (primary key, record and BLOB/TEXT " +
              "bodies) for table " + std::string(table->s->path.str) + " is larger than " +
              "RIPTIDE's limit of " + std::to_string(limit) + " bytes for one row";
  return HA_ERR_RIPTIDE;
}

void ha_riptide::pack_row(const uchar *buf, std::string *out) { codec.pack_row(buf, out); }

int ha_riptide::unpack_row(const char *value, size_t len, uchar *buf, std::string *blobs)
{
  if (codec.unpack_row(value, len, buf, blobs, &last_error))
    return 0;
  sql_print_error("RIPTIDE: %s", last_error.c_str());
  return HA_ERR_RIPTIDE;
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
                      riptide_take_message(st, err).c_str());
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
                    riptide_take_message(st, err).c_str());
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
                      table->s->path.str, riptide_take_message(st, err).c_str());
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
  const KEY *pk= has_pk ? &table->key_info[table->s->primary_key] : nullptr;
  if (!codec.tuples_cover(&table->key_info[active_index], pk, table->read_set))
    return;
  /* Once the transaction has changed entries of this index, an entry of its snapshot may
     point to a row it has since changed (or moved to another entry): rows are then read
     and checked against their entries (read_from_iterator). */
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s || riptide_hsession_wrote_index(s, share->table, rindex(active_index)))
    return;
  decode_from_key= true;
}

/* Whether the secondary entry `entry` (its key bytes run from `key_off` to `pk_off`) is the
   entry of the row in `buf` for the iterator's index. */
bool ha_riptide::entry_matches_row(const uchar *buf, const char *entry, size_t key_off,
                                   size_t pk_off)
{
  bool has_null= false;
  codec.encode_key(keynr_of(iter_index), buf, &entry_check_buf, &has_null);
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
      from_key= codec.decode_tuple(&table->key_info[active_index], kb + prefix.size(),
                                 kb + pk_off, buf) &&
                (!has_pk || codec.decode_tuple(&table->key_info[table->s->primary_key],
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
