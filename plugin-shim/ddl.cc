/*
  The handler's table-level operations: opening a table (its share), CREATE, DROP, RENAME,
  TRUNCATE, the ALTER TABLE copy, and CHECK / ANALYZE / OPTIMIZE TABLE.
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_lex.h"
#include "log.h"
#include "key.h"
#include <mysql/plugin.h>
#include <algorithm>
#include <cstring>

#include "ha_riptide.h"
#include "riptide_shim.h"
#include "transactions.h"

namespace {

/* CHECK TABLE reports at most this many inconsistencies one by one. */
constexpr size_t CHECK_REPORT_LIMIT= 20;

/* The handler error for a failed DDL call (riptide_ha_error); a failure the server has no
   error of its own for (not a missing or existing table) is reported to the client with
   the engine's message. */
int ddl_error(const char *what, riptide_status_t st, char *err)
{
  std::string msg= riptide_take_message(st, err);
  int error= riptide_ha_error(st, Riptide_call::DDL);
  if (error == HA_ERR_INTERNAL_ERROR)
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: %s: %s", MYF(0), what, msg.c_str());
  return error;
}

} // namespace

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
      last_error= riptide_take_message(st, err);
      *error= HA_ERR_RIPTIDE;
    }
    else
    {
      s= new Riptide_share;
      s->table= t;
      /* The server checks these keys itself by reading the table, which would not see the
         rows a bulk load holds until its commit. */
      if (table_share->long_unique_table || table_share->period.unique_keys)
        riptide_htable_forbid_bulk_load(t);
      s->key_format= riptide_htable_key_format(t);
      const uint8_t *layout= nullptr;
      size_t layout_len= 0;
      riptide_htable_caller_data(t, &layout, &layout_len);
      std::string layout_error;
      if (!s->layout.parse(layout, layout_len, &layout_error))
      {
        last_error= std::string("the table ") + name + ": " + layout_error;
        sql_print_error("RIPTIDE: %s", last_error.c_str());
        *error= HA_ERR_RIPTIDE;
      }
      else if (s->layout.recorded && !s->layout.fits(table_share->fields))
      {
        last_error= std::string("the row layout of ") + name + " in the data dictionary (" +
                    std::to_string(s->layout.columns.size()) +
                    " columns) does not fit the table definition's " +
                    std::to_string(table_share->fields) + " columns";
        sql_print_error("RIPTIDE: %s", last_error.c_str());
        *error= HA_ERR_RIPTIDE;
      }
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
  codec.bind(table, share->key_format, share->layout);
  if (has_pk)
    ref_length= codec.tuple_width(table->s->primary_key);
  else
    ref_length= 8;
  return 0;
}

int ha_riptide::close(void)
{
  close_cursor();
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
                                                     riptide_lock_wait_timeout_ms(ha_thd()), &err);
  if (st == RIPTIDE_OK)
    return 0;
  std::string msg= riptide_take_message(st, err);
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
       read safe against concurrent inserts (the value is locked first and the cursor
       reads the newest committed entries: ha_riptide.cc, index_read_map). */
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
  /* The cursor reads the table's old indexes. */
  close_cursor();
  char *err= nullptr;
  riptide_status_t st= riptide_handler_truncate_table(riptide_handler, open_name.data(),
                                                      open_name.size(), &err);
  if (st != RIPTIDE_OK)
    return ddl_error("truncate", st, err);
  riptide_htable_t *t= nullptr;
  st= riptide_handler_open_table(riptide_handler, open_name.data(), open_name.size(), &t, &err);
  if (st != RIPTIDE_OK)
    return ddl_error("reopen after truncate", st, err);
  lock_shared_ha_data();
  riptide_htable_release(share->table);
  share->table= t;
  share->key_format= riptide_htable_key_format(t);
  unlock_shared_ha_data();
  cur_ref.clear();
  return 0;
}

int ha_riptide::delete_table(const char *name)
{
  /* The connection's own bulk load spanning statements ends first (its rows are the
     table's before it goes). */
  if (!finish_held_bulk_load(ha_thd(), true))
    return HA_ERR_INTERNAL_ERROR;
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
  if (st != RIPTIDE_OK)
    return ddl_error("rename", st, err);
  return 0;
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
                      riptide_take_message(st, err).c_str());
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

/* ---------------------------------------------------------------------------------------
   CHECK / ANALYZE / OPTIMIZE TABLE */

extern "C" {
static bool riptide_check_keys_cb(void *ctx, const char *pk, size_t pk_len, const char *row,
                                  size_t row_len, riptide_hkey_t *keys, size_t nkeys)
{
  return static_cast<ha_riptide *>(ctx)->keys_of_stored_row(pk, pk_len, row, row_len, keys,
                                                            nkeys);
}
}

/* The secondary keys of a stored row, computed exactly as write_row computes them (into
   scratch buffers, so the current row and its blob bodies stay untouched); false if the
   row cannot be decoded (CHECK TABLE reports it against the primary key). */
bool ha_riptide::keys_of_stored_row(const char *pk, size_t pk_len, const char *row,
                                    size_t row_len, riptide_hkey_t *keys, size_t nkeys)
{
  check_rec.assign(table->s->reclength, 0);
  if (unpack_row(row, row_len, pk, pk_len, check_rec.data(), &check_blobs))
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
    std::string msg= riptide_take_message(st, err);
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

/* ANALYZE TABLE. A table of at most 64 entries per sample point (riptide_analyze_sample_points,
   by the primary key's estimate, which counts versions and tombstones too) is read whole:
   the rows are recounted (the estimate info() reports, persisted) and every index's distinct
   key prefixes counted exactly. A larger one keeps its maintained row count (committed
   inserts minus deletes) and has each index sampled (analyze_indexes), so ANALYZE costs the
   same on a billion rows as on a million. */
int ha_riptide::analyze(THD *thd, HA_CHECK_OPT *)
{
  uint points= riptide_analyze_sample_points(thd);
  char *err= nullptr;
  riptide_status_t st;
  bool sample= false;
  if (points)
  {
    uint64_t limit= uint64_t(points) * 64, entries= 0;
    st= riptide_htable_estimate_range(share->table, 0, nullptr, 0, false, nullptr, 0, false,
                                      limit, &entries, &err);
    if (st != RIPTIDE_OK)
    {
      std::string msg= riptide_take_message(st, err);
      push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                          "RIPTIDE: the size estimate of %s failed: %s",
                          table->s->table_name.str, msg.c_str());
      return HA_ADMIN_FAILED;
    }
    sample= entries >= limit;
  }
  uint64_t rows= 0;
  if (sample)
    rows= riptide_htable_row_estimate(share->table);
  else if ((st= riptide_htable_refresh_statistics(share->table, &rows, &err)) != RIPTIDE_OK)
  {
    std::string msg= riptide_take_message(st, err);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: the row count failed: %s", msg.c_str());
    return HA_ADMIN_FAILED;
  }
  if (int error= analyze_indexes(thd, rows, sample ? points : 0))
  {
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: the index statistics of %s failed (handler error %d)%s%s",
                        table->s->table_name.str, error,
                        error == HA_ERR_RIPTIDE ? ": " : "",
                        error == HA_ERR_RIPTIDE ? last_error.c_str() : "");
    return HA_ADMIN_FAILED;
  }
  info(HA_STATUS_VARIABLE | HA_STATUS_CONST);
  return HA_ADMIN_OK;
}

namespace {

/* Entries ANALYZE reads at each sample point; at every LONG_RUN_EVERY-th, LONG_RUN: the
   short runs see values that repeat over a few dozen entries, the long ones (64 of the 512
   places by default, another ~65,000 pairs of entries) those that repeat over up to ~10,000,
   and the places themselves the longer ones (see analyze_indexes). */
constexpr uint SAMPLE_RUN= 32;
constexpr uint LONG_RUN= 1024;
constexpr size_t LONG_RUN_EVERY= 8;

/* The distinct prefixes of one index, counted as its entries come in key order: `add`
   takes each entry's key (key_copy format) and says from which part on it differs from the
   entry before (every part for the first). */
class Prefix_counter
{
public:
  explicit Prefix_counter(KEY *key)
      : key_(key), parts_(key->user_defined_key_parts), prev_(key->key_length)
  {}

  /* The first key part in which `image` differs from the previous image given (0 for the
     first image), comparing with each part's collation (key_cmp); remembers `image`. */
  uint first_new(const uchar *image)
  {
    uint j= 0;
    if (have_prev_)
    {
      uint offset= 0;
      for (; j < parts_; j++)
      {
        KEY_PART_INFO *kp= key_->key_part + j;
        if (key_cmp(kp, prev_.data() + offset, kp->store_length))
          break;
        offset+= kp->store_length;
      }
    }
    memcpy(prev_.data(), image, key_->key_length);
    have_prev_= true;
    return j;
  }

  /* Forgets the previous image: the next one starts a new run. */
  void restart() { have_prev_= false; }

private:
  KEY *key_;
  uint parts_;
  std::vector<uchar> prev_;
  bool have_prev_= false;
};

/* Splits riptide_htable_sample_index's buffer (each tuple a 4-byte little-endian length,
   then its bytes) into tuples; false if it is malformed. */
bool split_sample_keys(const char *buf, size_t len, std::vector<std::string> *out)
{
  size_t at= 0;
  while (at < len)
  {
    if (len - at < 4)
      return false;
    uint32_t n= uint32_t(uchar(buf[at])) | uint32_t(uchar(buf[at + 1])) << 8 |
                uint32_t(uchar(buf[at + 2])) << 16 | uint32_t(uchar(buf[at + 3])) << 24;
    at+= 4;
    if (len - at < n)
      return false;
    out->emplace_back(buf + at, n);
    at+= n;
  }
  return true;
}

} // namespace

/* Index statistics for ANALYZE: for each index and each key part j, the distinct values of
   the key's first j+1 parts (a change in part j or an earlier one starts a new value),
   comparing keys part by part with the parts' own collations (key_cmp), as the connection's
   transaction sees them. Stored with the row count `rows` (riptide_htable_set_index_stats:
   persisted, kept until the table's indexes change); info(HA_STATUS_CONST) turns them into
   rec_per_key.

   With `points` 0 every index is read whole (covering) and counted exactly. Otherwise each
   index is read at up to `points` places spread evenly over its bytes
   (riptide_htable_sample_index), SAMPLE_RUN entries at each (LONG_RUN at every
   LONG_RUN_EVERY-th), and part j's distinct values
   are estimated on two scales:
   - between the runs: 1 + the number of consecutive sample places whose first entries
     differ, when fewer than half of them do (a value spans more entries than lie between
     two places, and the runs rarely see a change);
   - else within the runs: the share of adjacent entries that differ in the first j+1
     parts, times the rows (at least the estimate between the runs);
   at least the previous part's and at most the rows. An index whose
   entries are all still in the memtables gives no places and is read whole. InnoDB samples
   20 leaf pages per index (innodb_stats_persistent_sample_pages). */
int ha_riptide::analyze_indexes(THD *thd, uint64_t rows, uint points)
{
  std::vector<uint64_t> values;
  values.push_back(rows);
  MY_BITMAP *old_read= tmp_use_all_columns(table, &table->read_set);
  int error= 0;
  for (uint i= 0; i < table->s->keys && !error; i++)
  {
    KEY *key= &table->key_info[i];
    uint parts= key->user_defined_key_parts;
    std::vector<std::string> places;
    if (points)
    {
      char *buf= nullptr, *err= nullptr;
      size_t len= 0;
      riptide_status_t st=
          riptide_htable_sample_index(share->table, rindex(i), points, &buf, &len, &err);
      if (st != RIPTIDE_OK)
      {
        error= status_error(st, err);
        break;
      }
      bool ok= split_sample_keys(buf, len, &places);
      riptide_free_value(buf, len);
      if (!ok)
      {
        last_error= "the sample places of an index came back malformed";
        error= HA_ERR_RIPTIDE;
        break;
      }
    }
    bool sampled= places.size() >= 2;
    std::vector<uint64_t> changes(parts, 0), gaps(parts, 0);
    uint64_t pairs= 0, runs= 0;
    Prefix_counter adjacent(key), firsts(key);
    std::vector<uchar> image(key->key_length);
    if ((error= ha_start_keyread(i)) || (error= ha_index_init(i, true)))
    {
      ha_end_keyread();
      break;
    }
    /* Counts one entry just read into record[0]: `first` says it opens a run. */
    auto count= [&](bool first) {
      key_copy(image.data(), table->record[0], key, key->key_length);
      if (first)
      {
        adjacent.restart();
        adjacent.first_new(image.data());
        /* Between runs: the parts in which this run's first entry differs from the
           previous run's (none counted for the first run). */
        uint from= firsts.first_new(image.data());
        if (runs++ > 0)
          for (uint j= from; j < parts; j++)
            gaps[j]++;
        return;
      }
      pairs++;
      for (uint j= adjacent.first_new(image.data()); j < parts; j++)
        changes[j]++;
    };
    if (!sampled)
    {
      /* The whole index: one run, every change counted. */
      bool first= true;
      for (error= ha_index_first(table->record[0]); !error;
           error= ha_index_next(table->record[0]))
      {
        if (thd_killed(thd))
        {
          error= HA_ERR_ABORTED_BY_USER;
          break;
        }
        count(first);
        first= false;
      }
      if (!first)
        for (uint j= 0; j < parts; j++)
          changes[j]++; /* the first entry's value */
    }
    else
    {
      for (size_t p= 0; p < places.size(); p++)
      {
        if (thd_killed(thd))
        {
          error= HA_ERR_ABORTED_BY_USER;
          break;
        }
        uint run= p % LONG_RUN_EVERY == 0 ? LONG_RUN : SAMPLE_RUN;
        error= sample_seek(table->record[0], places[p]);
        for (uint n= 0; !error && n < run; n++)
        {
          count(n == 0);
          if (n + 1 < run)
            error= ha_index_next(table->record[0]);
        }
        if (error == HA_ERR_END_OF_FILE || error == HA_ERR_KEY_NOT_FOUND)
          error= 0;
        if (error)
          break;
      }
    }
    ha_index_end();
    ha_end_keyread();
    if (error == HA_ERR_END_OF_FILE)
      error= 0;
    if (error)
      break;
    uint64_t floor= 1;
    for (uint j= 0; j < parts; j++)
    {
      uint64_t distinct= changes[j];
      if (sampled)
      {
        /* Fewer than half the runs start in another value than the run before: values
           span more entries than lie between two places, the runs see a change only by
           chance (one change in all of them would put a 100-value index at 315), and the
           count between runs is the estimate. Otherwise values are shorter than the gaps
           and the runs measure them. */
        uint64_t between= gaps[j] + 1;
        double within= pairs ? double(rows) * double(changes[j]) / double(pairs) : 0;
        distinct= runs < 2 || 2 * gaps[j] < runs - 1
                      ? between
                      : std::max<uint64_t>(uint64_t(within + 0.5), between);
        distinct= std::min<uint64_t>(std::max<uint64_t>(distinct, floor),
                                     std::max<uint64_t>(rows, 1));
        floor= distinct;
      }
      values.push_back(distinct);
    }
  }
  tmp_restore_column_map(&table->read_set, old_read);
  if (error)
    return error;
  char *err= nullptr;
  riptide_status_t st=
      riptide_htable_set_index_stats(share->table, values.data(), values.size(), &err);
  if (st != RIPTIDE_OK)
  {
    last_error= riptide_take_message(st, err);
    return HA_ERR_RIPTIDE;
  }
  return 0;
}

/* Compacts the key ranges of every index of the table (deleted rows, old versions and
   tombstones go away). */
int ha_riptide::optimize(THD *thd, HA_CHECK_OPT *)
{
  char *err= nullptr;
  riptide_status_t st= riptide_htable_compact(share->table, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= riptide_take_message(st, err);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: compaction failed: %s", msg.c_str());
    return HA_ADMIN_FAILED;
  }
  return HA_ADMIN_OK;
}
