/*
  The engine's information_schema tables (issue 20, item 3). Each is an
  MYSQL_INFORMATION_SCHEMA_PLUGIN of this library, declared beside the storage engine in
  hton.cc, and filled from the C ABI at query time:

  RIPTIDE_OPTIONS  every engine option with the value the open engine runs with now (what it
                   was opened with, or what SET GLOBAL changed since), its default, whether
                   it changes at run time, the server variable that sets it, and its doc.
  RIPTIDE_TRX      every open transaction: its connection (THREAD_ID, to join with
                   information_schema.PROCESSLIST.ID), state (ACTIVE, LOCK WAIT, PREPARED),
                   isolation level, age, snapshot, write set, row locks, and whom it waits for.
  RIPTIDE_LOCKS    every row, unique-value, table-write and gap lock held and every lock
                   request waiting, with its table, index, key, and the transactions a waiting
                   request waits for.
  RIPTIDE_COMPACTIONS the flushes and compactions running now and the last 100 finished:
                   kind, reason, column family, levels, files, bytes in and out, state, timing.
  RIPTIDE_TABLES   every index of every RIPTIDE table: its kind, the table's row estimate,
                   and the bytes of table files holding its keys on each level (L0..L6, the
                   levels below L6 added to L6) and in all (riptide_handler_tables).
  RIPTIDE_DEADLOCKS the last DEADLOCK_HISTORY deadlocks (and write conflicts) whose victim
                   was rolled back: when, the victim's connection and statement, and the
                   engine's account of the cycle (riptide_record_deadlock, ha_riptide.cc).

  Before the engine is open (or if it failed to open) the tables are empty.
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_i_s.h"
#include "sql_show.h"
#include "sql_table.h"
#include "tztime.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "riptide_shim.h"

namespace {

/* Stores `text` into `f` as a string of the server's system character set. */
void store_text(Field *f, const char *text)
{
  f->store(text, strlen(text), system_charset_info);
}

/* The server variable that sets engine option `name` (riptide_<name>), or "" when the
   server exposes none for it. */
std::string server_variable_of(const char *name)
{
  for (size_t i= 0; i < riptide_server_option_count(); i++)
  {
    const riptide_option_t *o= riptide_server_option_at(i);
    if (o && (o->flags & RIPTIDE_OPTION_ENGINE) && strcmp(o->name, name) == 0)
      return std::string("riptide_") + name;
  }
  return std::string();
}

ST_FIELD_INFO riptide_options_fields[]= {
    Show::Column("NAME", Show::Varchar(64), NOT_NULL),
    Show::Column("VALUE", Show::Varchar(1024), NOT_NULL),
    Show::Column("DEFAULT_VALUE", Show::Varchar(1024), NOT_NULL),
    Show::Column("DYNAMIC", Show::Varchar(3), NOT_NULL),
    Show::Column("SYSTEM_VARIABLE", Show::Varchar(64), NULLABLE),
    Show::Column("DESCRIPTION", Show::Varchar(2048), NOT_NULL),
    Show::CEnd()};

enum Options_column
{
  OPT_NAME,
  OPT_VALUE,
  OPT_DEFAULT,
  OPT_DYNAMIC,
  OPT_SYSTEM_VARIABLE,
  OPT_DESCRIPTION
};

int riptide_options_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  if (!riptide_db)
    return 0;
  TABLE *table= tables->table;
  Field **field= table->field;
  for (size_t i= 0; i < riptide_option_count(); i++)
  {
    const riptide_option_t *o= riptide_option_at(i);
    if (!o)
      break;
    char *value= nullptr, *err= nullptr;
    riptide_status_t st= riptide_db_option_value(riptide_db, o->name, &value, &err);
    if (st != RIPTIDE_OK)
    {
      std::string msg= riptide_take_message(st, err);
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: reading option %s: %s", MYF(0), o->name,
                      msg.c_str());
      return 1;
    }
    store_text(field[OPT_NAME], o->name);
    store_text(field[OPT_VALUE], value);
    riptide_free(value);
    store_text(field[OPT_DEFAULT], o->default_text ? o->default_text : "");
    store_text(field[OPT_DYNAMIC], (o->flags & RIPTIDE_OPTION_DYNAMIC) ? "YES" : "NO");
    std::string var= server_variable_of(o->name);
    if (var.empty())
      field[OPT_SYSTEM_VARIABLE]->set_null();
    else
    {
      field[OPT_SYSTEM_VARIABLE]->set_notnull();
      field[OPT_SYSTEM_VARIABLE]->store(var.data(), var.size(), system_charset_info);
    }
    store_text(field[OPT_DESCRIPTION], o->doc ? o->doc : "");
    if (schema_table_store_record(thd, table))
      return 1;
  }
  return 0;
}

/* Stores `v` into the nullable column `f`, or NULL when `null`. */
void store_or_null(Field *f, longlong v, bool unsigned_v, bool null)
{
  if (null)
  {
    f->set_null();
    return;
  }
  f->set_notnull();
  f->store(v, unsigned_v);
}

/* Stores `text` into the nullable column `f`, or NULL for a NULL pointer. */
void store_text_or_null(Field *f, const char *text)
{
  if (!text)
  {
    f->set_null();
    return;
  }
  f->set_notnull();
  store_text(f, text);
}

/* "12,15": the ids of `ids`. */
std::string id_list(const uint64_t *ids, size_t n)
{
  std::string out;
  for (size_t i= 0; i < n; i++)
  {
    if (i)
      out+= ',';
    out+= std::to_string(ids[i]);
  }
  return out;
}

/* The bytes as upper-case hex. */
std::string hex(const uint8_t *b, size_t n)
{
  static const char digits[]= "0123456789ABCDEF";
  std::string out;
  out.reserve(2 * n);
  for (size_t i= 0; i < n; i++)
  {
    out+= digits[b[i] >> 4];
    out+= digits[b[i] & 15];
  }
  return out;
}

/* Fails the query with the engine's message. */
int engine_failure(const char *what, riptide_status_t st, char *err)
{
  std::string msg= riptide_take_message(st, err);
  my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: %s: %s", MYF(0), what, msg.c_str());
  return 1;
}

/* The lock list of the handler layer (owned; NULL on failure, after reporting it). */
struct Lock_list
{
  riptide_lock_list_t *list= nullptr;
  ~Lock_list() { riptide_lock_list_destroy(list); }
  size_t count() const { return riptide_lock_list_count(list); }
  const riptide_lock_info_t *at(size_t i) const { return riptide_lock_list_at(list, i); }
};

/* At most this many locks are listed by one query (the list is built in memory). */
constexpr size_t LOCKS_LIMIT= 100000;

/* ---- RIPTIDE_TRX ---------------------------------------------------------------------- */

ST_FIELD_INFO riptide_trx_fields[]= {
    Show::Column("TRANSACTION_ID", Show::ULonglong(), NOT_NULL),
    Show::Column("THREAD_ID", Show::ULonglong(), NULLABLE),
    Show::Column("STATE", Show::Varchar(16), NOT_NULL),
    Show::Column("ISOLATION_LEVEL", Show::Varchar(16), NOT_NULL),
    Show::Column("AGE_MS", Show::ULonglong(), NOT_NULL),
    Show::Column("SNAPSHOT_SEQNO", Show::ULonglong(), NULLABLE),
    Show::Column("WRITES", Show::SLonglong(), NULLABLE),
    Show::Column("WRITE_SET_BYTES", Show::SLonglong(), NULLABLE),
    Show::Column("ROW_LOCKS", Show::SLonglong(), NULLABLE),
    Show::Column("LOCK_WAIT_MS", Show::ULonglong(), NULLABLE),
    Show::Column("BLOCKING_TRANSACTIONS", Show::Varchar(1024), NULLABLE),
    Show::CEnd()};

enum Trx_column
{
  TRX_ID,
  TRX_THREAD,
  TRX_STATE,
  TRX_ISOLATION,
  TRX_AGE,
  TRX_SNAPSHOT,
  TRX_WRITES,
  TRX_WRITE_BYTES,
  TRX_ROW_LOCKS,
  TRX_WAIT_MS,
  TRX_BLOCKING
};

int riptide_trx_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  if (!riptide_db || !riptide_handler)
    return 0;
  char *err= nullptr;
  riptide_trx_list_t *list= nullptr;
  riptide_status_t st= riptide_db_transactions(riptide_db, &list, &err);
  if (st != RIPTIDE_OK)
    return engine_failure("listing transactions", st, err);
  /* Which transactions wait, for how long and for whom. */
  Lock_list locks;
  st= riptide_handler_locks(riptide_handler, LOCKS_LIMIT, &locks.list, &err);
  if (st != RIPTIDE_OK)
  {
    riptide_trx_list_destroy(list);
    return engine_failure("listing locks", st, err);
  }
  std::map<uint64_t, const riptide_lock_info_t *> waits;
  for (size_t i= 0; i < locks.count(); i++)
    if (const riptide_lock_info_t *l= locks.at(i); l && l->waiting)
      waits[l->txn]= l;

  TABLE *table= tables->table;
  Field **field= table->field;
  int res= 0;
  for (size_t i= 0; i < riptide_trx_list_count(list) && !res; i++)
  {
    const riptide_trx_info_t *t= riptide_trx_list_at(list, i);
    if (!t)
      break;
    auto wait= waits.find(t->id);
    const riptide_lock_info_t *w= wait == waits.end() ? nullptr : wait->second;
    field[TRX_ID]->store(longlong(t->id), true);
    store_or_null(field[TRX_THREAD], longlong(t->owner), true, t->owner == 0);
    store_text(field[TRX_STATE], w && strcmp(t->state, "ACTIVE") == 0 ? "LOCK WAIT" : t->state);
    store_text(field[TRX_ISOLATION], t->isolation);
    field[TRX_AGE]->store(longlong(t->age_ms), true);
    store_or_null(field[TRX_SNAPSHOT], longlong(t->snapshot_seqno), true, !t->has_snapshot);
    store_or_null(field[TRX_WRITES], t->writes, false, t->writes < 0);
    store_or_null(field[TRX_WRITE_BYTES], t->write_set_bytes, false, t->write_set_bytes < 0);
    store_or_null(field[TRX_ROW_LOCKS], t->row_locks, false, t->row_locks < 0);
    store_or_null(field[TRX_WAIT_MS], w ? longlong(w->waiting_ms) : 0, true, !w);
    std::string blocking= w ? id_list(w->blocked_by, w->blocked_by_count) : std::string();
    store_text_or_null(field[TRX_BLOCKING], w ? blocking.c_str() : nullptr);
    res= schema_table_store_record(thd, table);
  }
  riptide_trx_list_destroy(list);
  return res;
}

/* ---- RIPTIDE_LOCKS -------------------------------------------------------------------- */

ST_FIELD_INFO riptide_locks_fields[]= {
    Show::Column("TRANSACTION_ID", Show::ULonglong(), NOT_NULL),
    Show::Column("THREAD_ID", Show::ULonglong(), NULLABLE),
    Show::Column("TABLE_SCHEMA", Show::Varchar(NAME_CHAR_LEN), NULLABLE),
    Show::Column("TABLE_NAME", Show::Varchar(NAME_CHAR_LEN), NULLABLE),
    Show::Column("INDEX_NAME", Show::Varchar(NAME_CHAR_LEN), NULLABLE),
    Show::Column("LOCK_TYPE", Show::Varchar(16), NOT_NULL),
    Show::Column("LOCK_MODE", Show::Varchar(1), NULLABLE),
    Show::Column("LOCK_STATUS", Show::Varchar(8), NOT_NULL),
    Show::Column("WAIT_MS", Show::ULonglong(), NULLABLE),
    Show::Column("BLOCKING_TRANSACTIONS", Show::Varchar(1024), NULLABLE),
    Show::Column("KEY_HEX", Show::Varchar(2048), NULLABLE),
    Show::Column("RANGE_END_HEX", Show::Varchar(2048), NULLABLE),
    Show::CEnd()};

enum Locks_column
{
  LCK_TRX,
  LCK_THREAD,
  LCK_SCHEMA,
  LCK_TABLE,
  LCK_INDEX,
  LCK_TYPE,
  LCK_MODE,
  LCK_STATUS,
  LCK_WAIT_MS,
  LCK_BLOCKING,
  LCK_KEY,
  LCK_END
};

/* Splits the engine's table name (the server's path, "./db/t") into the schema and table
   names as SQL spells them. */
void split_table_name(const char *path, std::string *schema, std::string *name)
{
  std::string p(path);
  if (p.compare(0, 2, "./") == 0)
    p.erase(0, 2);
  size_t slash= p.rfind('/');
  std::string db= slash == std::string::npos ? std::string() : p.substr(0, slash);
  std::string t= slash == std::string::npos ? p : p.substr(slash + 1);
  char buf[NAME_LEN + 1];
  filename_to_tablename(db.c_str(), buf, sizeof(buf), true);
  *schema= buf;
  filename_to_tablename(t.c_str(), buf, sizeof(buf), true);
  *name= buf;
}

/* The hex of a range bound, with '[' / '(' / ']' / ')' as it is included or not; "" when
   unbounded. */
std::string bound_text(int32_t bound, const uint8_t *b, size_t n, bool start)
{
  if (bound == RIPTIDE_BOUND_UNBOUNDED)
    return std::string();
  std::string h= hex(b, n);
  bool included= bound == RIPTIDE_BOUND_INCLUDED;
  return start ? (included ? "[" : "(") + h : h + (included ? "]" : ")");
}

int riptide_locks_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  if (!riptide_handler)
    return 0;
  char *err= nullptr;
  Lock_list locks;
  riptide_status_t st= riptide_handler_locks(riptide_handler, LOCKS_LIMIT, &locks.list, &err);
  if (st != RIPTIDE_OK)
    return engine_failure("listing locks", st, err);
  if (riptide_lock_list_truncated(locks.list))
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: more than %zu locks: only the first %zu are listed",
                        LOCKS_LIMIT, LOCKS_LIMIT);
  TABLE *table= tables->table;
  Field **field= table->field;
  for (size_t i= 0; i < locks.count(); i++)
  {
    const riptide_lock_info_t *l= locks.at(i);
    if (!l)
      break;
    field[LCK_TRX]->store(longlong(l->txn), true);
    store_or_null(field[LCK_THREAD], longlong(l->owner), true, l->owner == 0);
    std::string schema, name;
    if (l->table)
      split_table_name(l->table, &schema, &name);
    store_text_or_null(field[LCK_SCHEMA], l->table ? schema.c_str() : nullptr);
    store_text_or_null(field[LCK_TABLE], l->table ? name.c_str() : nullptr);
    store_text_or_null(field[LCK_INDEX], l->index);
    store_text(field[LCK_TYPE], l->lock_type);
    store_text_or_null(field[LCK_MODE], l->mode);
    store_text(field[LCK_STATUS], l->waiting ? "WAITING" : "GRANTED");
    store_or_null(field[LCK_WAIT_MS], longlong(l->waiting_ms), true, !l->waiting);
    std::string blocking= id_list(l->blocked_by, l->blocked_by_count);
    store_text_or_null(field[LCK_BLOCKING], blocking.empty() ? nullptr : blocking.c_str());
    bool range= strcmp(l->lock_type, "GAP") == 0;
    std::string key= range ? bound_text(l->start_bound, l->start, l->start_len, true)
                           : hex(l->start, l->start_len);
    bool key_null= l->start_bound == RIPTIDE_BOUND_UNBOUNDED;
    store_text_or_null(field[LCK_KEY], key_null ? nullptr : key.c_str());
    std::string end= bound_text(l->end_bound, l->end, l->end_len, false);
    bool end_null= !range || l->end_bound == RIPTIDE_BOUND_UNBOUNDED;
    store_text_or_null(field[LCK_END], end_null ? nullptr : end.c_str());
    if (schema_table_store_record(thd, table))
      return 1;
  }
  return 0;
}

/* ---- RIPTIDE_COMPACTIONS -------------------------------------------------------------- */

ST_FIELD_INFO riptide_compactions_fields[]= {
    Show::Column("JOB_ID", Show::ULonglong(), NOT_NULL),
    Show::Column("KIND", Show::Varchar(16), NOT_NULL),
    Show::Column("STATE", Show::Varchar(16), NOT_NULL),
    Show::Column("REASON", Show::Varchar(32), NOT_NULL),
    Show::Column("COLUMN_FAMILY", Show::Varchar(NAME_CHAR_LEN), NOT_NULL),
    Show::Column("INPUT_LEVELS", Show::Varchar(64), NOT_NULL),
    Show::Column("OUTPUT_LEVEL", Show::ULong(), NOT_NULL),
    Show::Column("INPUT_FILES", Show::ULonglong(), NOT_NULL),
    Show::Column("INPUT_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("OUTPUT_BYTES", Show::ULonglong(), NULLABLE),
    Show::Column("AGE_MS", Show::ULonglong(), NOT_NULL),
    Show::Column("DURATION_MS", Show::ULonglong(), NULLABLE),
    Show::Column("ERROR", Show::Varchar(1024), NULLABLE),
    Show::CEnd()};

int riptide_compactions_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  if (!riptide_db)
    return 0;
  char *err= nullptr;
  riptide_job_list_t *list= nullptr;
  riptide_status_t st= riptide_db_background_jobs(riptide_db, &list, &err);
  if (st != RIPTIDE_OK)
    return engine_failure("listing flushes and compactions", st, err);
  TABLE *table= tables->table;
  Field **field= table->field;
  int res= 0;
  for (size_t i= 0; i < riptide_job_list_count(list) && !res; i++)
  {
    const riptide_job_info_t *j= riptide_job_list_at(list, i);
    if (!j)
      break;
    field[0]->store(longlong(j->id), true);
    store_text(field[1], j->kind);
    store_text(field[2], j->state);
    store_text(field[3], j->reason);
    store_text(field[4], j->cf);
    store_text(field[5], j->input_levels);
    field[6]->store(longlong(j->output_level), true);
    field[7]->store(longlong(j->input_files), true);
    field[8]->store(longlong(j->input_bytes), true);
    store_or_null(field[9], j->output_bytes, true, j->output_bytes < 0);
    field[10]->store(longlong(j->age_ms), true);
    store_or_null(field[11], j->duration_ms, true, j->duration_ms < 0);
    store_text_or_null(field[12], j->error);
    res= schema_table_store_record(thd, table);
  }
  riptide_job_list_destroy(list);
  return res;
}

/* ---- RIPTIDE_TABLES ------------------------------------------------------------------- */

/* The levels RIPTIDE_TABLES shows one column each (the engine's default 7); deeper levels
   are added to the last. */
constexpr size_t TABLE_LEVEL_COLUMNS= 7;

ST_FIELD_INFO riptide_tables_fields[]= {
    Show::Column("TABLE_SCHEMA", Show::Varchar(NAME_CHAR_LEN), NOT_NULL),
    Show::Column("TABLE_NAME", Show::Varchar(NAME_CHAR_LEN), NOT_NULL),
    Show::Column("INDEX_NAME", Show::Varchar(NAME_CHAR_LEN), NOT_NULL),
    Show::Column("INDEX_ID", Show::ULong(), NOT_NULL),
    Show::Column("INDEX_TYPE", Show::Varchar(16), NOT_NULL),
    Show::Column("IS_UNIQUE", Show::Varchar(3), NOT_NULL),
    Show::Column("KEY_PARTS", Show::ULong(), NOT_NULL),
    Show::Column("TABLE_ROWS", Show::ULonglong(), NOT_NULL),
    Show::Column("L0_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("L1_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("L2_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("L3_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("L4_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("L5_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("L6_BYTES", Show::ULonglong(), NOT_NULL),
    Show::Column("TOTAL_BYTES", Show::ULonglong(), NOT_NULL),
    Show::CEnd()};

enum Tables_column
{
  TBL_SCHEMA,
  TBL_NAME,
  TBL_INDEX,
  TBL_INDEX_ID,
  TBL_TYPE,
  TBL_UNIQUE,
  TBL_KEY_PARTS,
  TBL_ROWS,
  TBL_L0
};

int riptide_tables_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  if (!riptide_handler)
    return 0;
  char *err= nullptr;
  riptide_table_list_t *list= nullptr;
  riptide_status_t st= riptide_handler_tables(riptide_handler, &list, &err);
  if (st != RIPTIDE_OK)
    return engine_failure("listing tables", st, err);
  TABLE *table= tables->table;
  Field **field= table->field;
  int res= 0;
  for (size_t i= 0; i < riptide_table_list_count(list) && !res; i++)
  {
    const riptide_table_index_info_t *t= riptide_table_list_at(list, i);
    if (!t)
      break;
    std::string schema, name;
    split_table_name(t->table, &schema, &name);
    field[TBL_SCHEMA]->store(schema.data(), schema.size(), system_charset_info);
    field[TBL_NAME]->store(name.data(), name.size(), system_charset_info);
    store_text(field[TBL_INDEX], t->index);
    field[TBL_INDEX_ID]->store(longlong(t->index_id), true);
    store_text(field[TBL_TYPE], t->kind);
    store_text(field[TBL_UNIQUE], t->unique ? "YES" : "NO");
    field[TBL_KEY_PARTS]->store(longlong(t->key_parts), true);
    field[TBL_ROWS]->store(longlong(t->rows), true);
    unsigned long long by_level[TABLE_LEVEL_COLUMNS]= {0};
    unsigned long long total= 0;
    for (size_t l= 0; l < t->levels; l++)
    {
      by_level[std::min(l, TABLE_LEVEL_COLUMNS - 1)]+= t->level_bytes[l];
      total+= t->level_bytes[l];
    }
    for (size_t l= 0; l < TABLE_LEVEL_COLUMNS; l++)
      field[TBL_L0 + l]->store(longlong(by_level[l]), true);
    field[TBL_L0 + TABLE_LEVEL_COLUMNS]->store(longlong(total), true);
    res= schema_table_store_record(thd, table);
  }
  riptide_table_list_destroy(list);
  return res;
}

/* ---- RIPTIDE_DEADLOCKS ---------------------------------------------------------------- */

/* One victim of a deadlock or write conflict. */
struct Deadlock_record
{
  unsigned long long id;
  my_time_t when;
  unsigned long thread_id;
  bool conflict;
  std::string detail;
  std::string query;
};

/* How many victims RIPTIDE_DEADLOCKS keeps (the oldest go first). */
constexpr size_t DEADLOCK_HISTORY= 100;

std::mutex deadlock_mutex;
std::deque<Deadlock_record> deadlock_history;
unsigned long long deadlock_count= 0;

ST_FIELD_INFO riptide_deadlocks_fields[]= {
    Show::Column("DEADLOCK_ID", Show::ULonglong(), NOT_NULL),
    Show::Column("TIME", Show::Datetime(0), NOT_NULL),
    Show::Column("KIND", Show::Varchar(16), NOT_NULL),
    Show::Column("VICTIM_THREAD_ID", Show::ULonglong(), NOT_NULL),
    Show::Column("VICTIM_QUERY", Show::Varchar(1024), NOT_NULL),
    Show::Column("DETAIL", Show::Varchar(4096), NOT_NULL),
    Show::CEnd()};

int riptide_deadlocks_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  std::vector<Deadlock_record> copy;
  {
    std::lock_guard<std::mutex> guard(deadlock_mutex);
    copy.assign(deadlock_history.begin(), deadlock_history.end());
  }
  TABLE *table= tables->table;
  Field **field= table->field;
  for (const Deadlock_record &d : copy)
  {
    field[0]->store(longlong(d.id), true);
    MYSQL_TIME t;
    thd->variables.time_zone->gmt_sec_to_TIME(&t, d.when);
    field[1]->store_time(&t);
    store_text(field[2], d.conflict ? "WRITE_CONFLICT" : "DEADLOCK");
    field[3]->store(longlong(d.thread_id), true);
    field[4]->store(d.query.data(), d.query.size(), system_charset_info);
    field[5]->store(d.detail.data(), d.detail.size(), system_charset_info);
    if (schema_table_store_record(thd, table))
      return 1;
  }
  return 0;
}

} // namespace

void riptide_record_deadlock(THD *thd, bool conflict, const std::string &detail)
{
  Deadlock_record d;
  d.when= thd ? thd->query_start() : my_time(0);
  d.thread_id= thd ? thd_get_thread_id(thd) : 0;
  d.conflict= conflict;
  d.detail= detail.substr(0, 4096);
  const char *query= thd ? thd->query() : nullptr;
  if (query)
    d.query.assign(query, std::min<size_t>(thd->query_length(), 1024));
  std::lock_guard<std::mutex> guard(deadlock_mutex);
  d.id= ++deadlock_count;
  deadlock_history.push_back(std::move(d));
  if (deadlock_history.size() > DEADLOCK_HISTORY)
    deadlock_history.pop_front();
}

int riptide_i_s_compactions_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_compactions_fields;
  schema->fill_table= riptide_compactions_fill;
  return 0;
}

int riptide_i_s_tables_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_tables_fields;
  schema->fill_table= riptide_tables_fill;
  return 0;
}

int riptide_i_s_deadlocks_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_deadlocks_fields;
  schema->fill_table= riptide_deadlocks_fill;
  return 0;
}

int riptide_i_s_trx_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_trx_fields;
  schema->fill_table= riptide_trx_fill;
  return 0;
}

int riptide_i_s_locks_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_locks_fields;
  schema->fill_table= riptide_locks_fill;
  return 0;
}

int riptide_i_s_options_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_options_fields;
  schema->fill_table= riptide_options_fill;
  return 0;
}

int riptide_i_s_deinit(void *) { return 0; }

struct st_mysql_information_schema riptide_i_s_descriptor= {
    MYSQL_INFORMATION_SCHEMA_INTERFACE_VERSION};
