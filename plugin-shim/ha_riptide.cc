/*
  ha_riptide: the MariaDB handler of Riptide. See ha_riptide.h and README.md.

  Key space (one shared column family, the default one):
    index id (4 bytes, big-endian) + primary key (memcomparable)   -> 0x01 + record buffer
    index id + hidden row id (8 bytes, big-endian)                  -> 0x01 + record buffer
    00 00 00 00 "dd:" + table path  -> data dictionary entry: 0x01 + count (4) + ids (4 each)
    00 00 00 00 "next_index_id"     -> the next unused index id (4 bytes, big-endian)
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_plugin.h"
#include "key.h"
#include "log.h"
#include <mysql/plugin.h>

#include "ha_riptide.h"

#include <mutex>
#include <set>

/* sql_show.cc: directories in the datadir that are not databases (as MyRocks' #rocksdb). */
void ignore_db_dirs_append(const char *dirname_arg);

namespace {

/* Handler error for every Riptide failure without a closer MariaDB code; the message is
   kept by the handler and printed by get_error_message(). */
constexpr int HA_ERR_RIPTIDE= HA_ERR_LAST + 1;
/* First byte of every row value: the format of what follows. */
constexpr char ROW_FORMAT_V1= 1;
/* First byte of a data dictionary entry. */
constexpr char DD_FORMAT_V1= 1;

handlerton *riptide_hton= nullptr;
riptide_db_t *riptide_db= nullptr;
/* Serialises DDL on the data dictionary (index id allocation, create, drop, rename). */
std::mutex dd_mutex;

const std::string SYSTEM_PREFIX("\0\0\0\0", 4);

std::string be32(uint32_t v)
{
  char b[4]= {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  return std::string(b, 4);
}

std::string be64(uint64_t v)
{
  std::string out;
  for (int i= 7; i >= 0; i--)
    out.push_back(char(v >> (8 * i)));
  return out;
}

uint32_t read_be32(const char *p)
{
  const uchar *u= reinterpret_cast<const uchar *>(p);
  return (uint32_t(u[0]) << 24) | (uint32_t(u[1]) << 16) | (uint32_t(u[2]) << 8) |
         uint32_t(u[3]);
}

uint64_t read_be64(const char *p)
{
  uint64_t v= 0;
  for (int i= 0; i < 8; i++)
    v= (v << 8) | uchar(p[i]);
  return v;
}

std::string dd_key(const char *path) { return SYSTEM_PREFIX + "dd:" + path; }

std::string counter_key() { return SYSTEM_PREFIX + "next_index_id"; }

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

/* A plain (non-transactional) get from the database: DDL metadata only. */
riptide_status_t db_get(const std::string &key, std::string *value, bool *found,
                        std::string *error)
{
  char *v= nullptr, *err= nullptr;
  size_t len= 0;
  *found= false;
  riptide_status_t st= riptide_get(riptide_db, nullptr, nullptr, key.data(), key.size(), &v,
                                   &len, found, &err);
  if (st != RIPTIDE_OK)
  {
    *error= take_message(st, err);
    return st;
  }
  if (*found)
    value->assign(v, len);
  riptide_free_value(v, len);
  return st;
}

/* Parses a data dictionary entry into index ids. */
bool parse_dd(const std::string &v, std::vector<uint32_t> *ids)
{
  if (v.size() < 5 || v[0] != DD_FORMAT_V1)
    return false;
  uint32_t n= read_be32(v.data() + 1);
  if (v.size() != 5 + size_t(n) * 4 || n == 0)
    return false;
  ids->clear();
  for (uint32_t i= 0; i < n; i++)
    ids->push_back(read_be32(v.data() + 5 + 4 * i));
  return true;
}

/* Reports a DDL failure to the client and returns the handler error for it. */
int ddl_error(const char *what, const std::string &msg)
{
  my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: %s: %s", MYF(0), what, msg.c_str());
  return HA_ERR_INTERNAL_ERROR;
}

/* Writes a batch built by `fill`; false + message on failure. */
template <typename F> bool write_batch(F fill, std::string *error)
{
  riptide_batch_t *b= riptide_batch_create();
  if (!b)
  {
    *error= "out of memory";
    return false;
  }
  char *err= nullptr;
  riptide_status_t st= fill(b, &err);
  if (st == RIPTIDE_OK)
    st= riptide_write(riptide_db, b, &err);
  riptide_batch_destroy(b);
  if (st != RIPTIDE_OK)
  {
    *error= take_message(st, err);
    return false;
  }
  return true;
}

/* Deletes every key of the tables' indexes and the dictionary entry, in one batch. */
bool drop_indexes(const std::string &dd, const std::vector<uint32_t> &ids, std::string *error)
{
  return write_batch(
      [&](riptide_batch_t *b, char **err) {
        for (uint32_t id : ids)
        {
          std::string lo= be32(id), hi= prefix_successor(be32(id));
          if (hi.empty())
            hi= std::string(5, '\xff');
          riptide_status_t st= riptide_batch_delete_range(b, nullptr, lo.data(), lo.size(),
                                                          hi.data(), hi.size(), err);
          if (st != RIPTIDE_OK)
            return st;
        }
        return riptide_batch_delete(b, nullptr, dd.data(), dd.size(), err);
      },
      error);
}

/* ---------------------------------------------------------------------------------------
   Transactions: one Riptide pessimistic transaction per connection.

   The transaction begins at the first table lock of a statement and is registered for the
   statement and, outside autocommit, for the whole transaction. Inside a multi-statement
   transaction every statement pushes a Riptide savepoint, so a failing statement rolls back
   only itself. SQL savepoints are Riptide savepoints too; `depth` counts the stack.
*/
struct Riptide_trx
{
  riptide_txn_t *txn= nullptr;
  uint depth= 0;
  bool stmt_savepoint= false;
  /* Handlers with a live iterator on `txn` (freed before the transaction). */
  std::set<ha_riptide *> iterators;
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

void end_txn(Riptide_trx *trx)
{
  for (ha_riptide *h : std::set<ha_riptide *>(trx->iterators))
    h->drop_iterator();
  trx->iterators.clear();
  riptide_txn_destroy(trx->txn);
  trx->txn= nullptr;
  trx->depth= 0;
  trx->stmt_savepoint= false;
}

/* Pushes a savepoint; false on failure (logged). */
bool push_savepoint(Riptide_trx *trx)
{
  char *err= nullptr;
  riptide_status_t st= riptide_txn_set_savepoint(trx->txn, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: set savepoint: %s", take_message(st, err).c_str());
    return false;
  }
  trx->depth++;
  return true;
}

/* Pops the newest savepoint, undoing (rollback) or keeping (release) its writes. */
bool pop_savepoint(Riptide_trx *trx, bool rollback)
{
  char *err= nullptr;
  riptide_status_t st= rollback ? riptide_txn_rollback_to_savepoint(trx->txn, &err)
                                : riptide_txn_release_savepoint(trx->txn, &err);
  if (trx->depth > 0)
    trx->depth--;
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: %s savepoint: %s", rollback ? "rollback to" : "release",
                    take_message(st, err).c_str());
    return false;
  }
  return true;
}

int riptide_commit(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  if (all || !in_multi_statement(thd))
  {
    for (ha_riptide *h : std::set<ha_riptide *>(trx->iterators))
      h->drop_iterator();
    char *err= nullptr;
    riptide_status_t st= riptide_txn_commit(trx->txn, &err);
    end_txn(trx);
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
    for (ha_riptide *h : std::set<ha_riptide *>(trx->iterators))
      h->drop_iterator();
    char *err= nullptr;
    /* A transaction that lost a conflict is already rolled back: ignore that failure. */
    riptide_status_t st= riptide_txn_rollback(trx->txn, &err);
    riptide_free(err);
    (void) st;
    end_txn(trx);
    return 0;
  }
  if (trx->stmt_savepoint)
  {
    for (ha_riptide *h : std::set<ha_riptide *>(trx->iterators))
      h->drop_iterator();
    trx->stmt_savepoint= false;
    if (!pop_savepoint(trx, true))
      return HA_ERR_INTERNAL_ERROR;
  }
  return 0;
}

int riptide_close_connection(handlerton *, THD *thd)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (trx)
  {
    end_txn(trx);
    delete trx;
    thd_set_ha_data(thd, riptide_hton, nullptr);
  }
  return 0;
}

/* SQL savepoints: `sv` holds the stack depth with the savepoint on top. */
int riptide_savepoint_set(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  if (!trx->txn)
  {
    *static_cast<uint *>(sv)= 0;
    return 0;
  }
  if (!push_savepoint(trx))
    return HA_ERR_INTERNAL_ERROR;
  *static_cast<uint *>(sv)= trx->depth;
  return 0;
}

int riptide_savepoint_rollback(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  uint target= *static_cast<uint *>(sv);
  if (!trx->txn || target == 0)
    return 0;
  for (ha_riptide *h : std::set<ha_riptide *>(trx->iterators))
    h->drop_iterator();
  while (trx->depth > target)
    if (!pop_savepoint(trx, true))
      return HA_ERR_INTERNAL_ERROR;
  /* Undo the writes after the savepoint and keep the savepoint itself. */
  if (trx->depth == target && (!pop_savepoint(trx, true) || !push_savepoint(trx)))
    return HA_ERR_INTERNAL_ERROR;
  return 0;
}

bool riptide_savepoint_rollback_can_release_mdl(handlerton *, THD *) { return true; }

int riptide_savepoint_release(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  uint target= *static_cast<uint *>(sv);
  if (!trx->txn || target == 0)
    return 0;
  while (trx->depth >= target && trx->depth > 0)
    if (!pop_savepoint(trx, false))
      return HA_ERR_INTERNAL_ERROR;
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

handler *riptide_create_handler(handlerton *hton, TABLE_SHARE *table, MEM_ROOT *mem_root)
{
  return new (mem_root) ha_riptide(hton, table);
}

/* The database lives in <datadir>/#riptide: the '#' keeps the server from taking the folder
   for a database (as MyRocks' #rocksdb). */
std::string data_dir()
{
  std::string dir(mysql_real_data_home);
  if (!dir.empty() && dir.back() != FN_LIBCHAR)
    dir.push_back(FN_LIBCHAR);
  return dir + "#riptide";
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
  char *err= nullptr;
  riptide_status_t st= riptide_options_set_create_if_missing(opts, true, &err);
  /* WAL fsync once a second in the background: a mariadbd crash loses no committed
     transaction, a power loss at most the last second (innodb_flush_log_at_trx_commit=2). */
  if (st == RIPTIDE_OK)
    st= riptide_options_set_sync_mode(opts, RIPTIDE_SYNC_INTERVAL, 1000, &err);
  std::string dir= data_dir();
  if (st == RIPTIDE_OK)
    st= riptide_db_open(dir.c_str(), opts, &riptide_db, &err);
  riptide_options_destroy(opts);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: cannot open %s: %s", dir.c_str(), take_message(st, err).c_str());
    riptide_db= nullptr;
    return 1;
  }
  ignore_db_dirs_append("#riptide");
  riptide_hton->create= riptide_create_handler;
  riptide_hton->flags= HTON_CAN_RECREATE | HTON_TEMPORARY_NOT_SUPPORTED;
  riptide_hton->commit= riptide_commit;
  riptide_hton->rollback= riptide_rollback;
  riptide_hton->close_connection= riptide_close_connection;
  riptide_hton->savepoint_offset= sizeof(uint);
  riptide_hton->savepoint_set= riptide_savepoint_set;
  riptide_hton->savepoint_rollback= riptide_savepoint_rollback;
  riptide_hton->savepoint_rollback_can_release_mdl=
      riptide_savepoint_rollback_can_release_mdl;
  riptide_hton->savepoint_release= riptide_savepoint_release;
  riptide_hton->show_status= riptide_show_status;
  sql_print_information("RIPTIDE: %s opened (Riptide %s)", dir.c_str(), riptide_version());
  return 0;
}

int riptide_deinit(void *)
{
  if (riptide_db)
  {
    char *err= nullptr;
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

ulonglong ha_riptide::table_flags() const
{
  return HA_REC_NOT_IN_SEQ | HA_NULL_IN_KEY | HA_TABLE_SCAN_ON_INDEX |
         HA_PRIMARY_KEY_REQUIRED_FOR_POSITION |
         HA_BINLOG_ROW_CAPABLE | HA_BINLOG_STMT_CAPABLE | HA_CAN_ONLINE_BACKUPS;
}

ulong ha_riptide::index_flags(uint inx, uint, bool) const
{
  ulong flags= HA_READ_NEXT | HA_READ_PREV | HA_READ_ORDER | HA_READ_RANGE;
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

/* The connection's transaction, begun if needed. */
riptide_txn_t *ha_riptide::txn(int *error)
{
  THD *thd= ha_thd();
  Riptide_trx *trx= get_trx(thd);
  *error= 0;
  if (trx->txn)
    return trx->txn;
  riptide_txn_options_t *opts= riptide_txn_options_create();
  if (!opts)
  {
    *error= HA_ERR_OUT_OF_MEM;
    return nullptr;
  }
  int iso= thd_tx_isolation(thd);
  int32_t level= iso <= ISO_READ_COMMITTED ? RIPTIDE_ISOLATION_READ_COMMITTED
                                           : RIPTIDE_ISOLATION_REPEATABLE_READ;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_options_set_isolation(opts, level, &err);
  if (st == RIPTIDE_OK)
    st= riptide_txn_options_set_concurrency(opts, RIPTIDE_CONCURRENCY_PESSIMISTIC, &err);
  if (st == RIPTIDE_OK)
    st= riptide_txn_begin(riptide_db, opts, &trx->txn, &err);
  riptide_txn_options_destroy(opts);
  if (st != RIPTIDE_OK)
  {
    trx->txn= nullptr;
    *error= status_error(st, err);
    return nullptr;
  }
  trx->depth= 0;
  trx->stmt_savepoint= false;
  return trx->txn;
}

/* Memcomparable primary key of `record` (which may be record[0] or another buffer), prefix
   included: each part is MariaDB's own sort key (collation weights, NULL flag byte). */
void ha_riptide::encode_pk(const uchar *record, std::string *out)
{
  out->assign(pk_prefix);
  KEY *key= &table->key_info[table->s->primary_key];
  my_ptrdiff_t diff= record - table->record[0];
  for (uint i= 0; i < key->user_defined_key_parts; i++)
  {
    Field *f= key->key_part[i].field;
    uint len= f->sort_length();
    CHARSET_INFO *cs= f->sort_charset();
    if (use_strnxfrm(cs))
      len= uint(cs->strnxfrmlen(len));
    size_t at= out->size();
    out->resize(at + len + (f->maybe_null() ? 1 : 0));
    f->move_field_offset(diff);
    f->make_sort_key_part(reinterpret_cast<uchar *>(&(*out)[at]), len);
    f->move_field_offset(-diff);
  }
}

/* Encodes the first key parts of a key tuple (key_copy format) like encode_pk. */
int ha_riptide::encode_key_tuple(const uchar *key, key_part_map keypart_map, std::string *out)
{
  KEY *key_info= &table->key_info[active_index];
  uint key_len= calculate_key_len(table, active_index, key, keypart_map);
  rec_buf.assign(table->s->reclength, 0);
  memcpy(rec_buf.data(), table->s->default_values, table->s->reclength);
  key_restore(rec_buf.data(), key, key_info, key_len);
  uint parts= 0;
  while (parts < key_info->user_defined_key_parts && (keypart_map & (key_part_map(1) << parts)))
    parts++;
  out->assign(pk_prefix);
  my_ptrdiff_t diff= rec_buf.data() - table->record[0];
  for (uint i= 0; i < parts; i++)
  {
    Field *f= key_info->key_part[i].field;
    uint len= f->sort_length();
    CHARSET_INFO *cs= f->sort_charset();
    if (use_strnxfrm(cs))
      len= uint(cs->strnxfrmlen(len));
    size_t at= out->size();
    out->resize(at + len + (f->maybe_null() ? 1 : 0));
    f->move_field_offset(diff);
    f->make_sort_key_part(reinterpret_cast<uchar *>(&(*out)[at]), len);
    f->move_field_offset(-diff);
  }
  return parts == key_info->user_defined_key_parts ? 1 : 0;
}

int ha_riptide::unpack_row(const char *value, size_t len, uchar *buf)
{
  if (len != size_t(table->s->reclength) + 1 || value[0] != ROW_FORMAT_V1)
  {
    last_error= "a row of table " + std::string(table->s->path.str) + " has " +
                std::to_string(len) + " bytes, format " + std::to_string(len ? value[0] : -1) +
                "; expected " + std::to_string(table->s->reclength + 1) + ", format 1";
    sql_print_error("RIPTIDE: %s", last_error.c_str());
    return HA_ERR_RIPTIDE;
  }
  memcpy(buf, value + 1, table->s->reclength);
  return 0;
}

Riptide_share *ha_riptide::get_share(const char *name, int *error)
{
  *error= 0;
  lock_shared_ha_data();
  Riptide_share *s= static_cast<Riptide_share *>(get_ha_share_ptr());
  if (!s)
  {
    std::string v, msg;
    bool found= false;
    riptide_status_t st= db_get(dd_key(name), &v, &found, &msg);
    std::vector<uint32_t> ids;
    if (st != RIPTIDE_OK)
    {
      last_error= msg;
      *error= HA_ERR_RIPTIDE;
    }
    else if (!found)
    {
      sql_print_warning("RIPTIDE: table %s has no data dictionary entry", name);
      *error= HA_ERR_NO_SUCH_TABLE;
    }
    else if (!parse_dd(v, &ids))
    {
      last_error= std::string("corrupt data dictionary entry for ") + name;
      *error= HA_ERR_RIPTIDE;
    }
    else
    {
      s= new Riptide_share;
      s->index_ids= ids;
      /* Tables without a primary key: continue after the largest hidden row id. */
      if (table_share->primary_key >= MAX_KEY)
      {
        std::string lo= be32(ids[0]), hi= prefix_successor(lo);
        riptide_iter_t *it= nullptr;
        char *err= nullptr;
        st= riptide_iter_create(riptide_db, nullptr, nullptr, lo.data(), lo.size(), hi.data(),
                                hi.size(), &it, &err);
        if (st == RIPTIDE_OK)
          st= riptide_iter_seek_to_last(it, &err);
        if (st == RIPTIDE_OK && riptide_iter_valid(it))
        {
          size_t klen= 0;
          const char *k= riptide_iter_key(it, &klen);
          if (klen == 12)
            s->next_rowid= read_be64(k + 4) + 1;
        }
        riptide_iter_destroy(it);
        if (st != RIPTIDE_OK)
        {
          delete s;
          s= nullptr;
          last_error= take_message(st, err);
          *error= HA_ERR_RIPTIDE;
        }
      }
      if (s)
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
  has_pk= table->s->primary_key < MAX_KEY;
  pk_prefix= be32(share->index_ids[0]);
  if (has_pk)
  {
    std::string probe;
    encode_pk(table->record[0], &probe);
    ref_length= uint(probe.size() - pk_prefix.size());
  }
  else
    ref_length= 8;
  return 0;
}

int ha_riptide::close(void)
{
  drop_iterator();
  return 0;
}

int ha_riptide::create(const char *name, TABLE *form, HA_CREATE_INFO *create_info)
{
  if (create_info->tmp_table())
  {
    my_error(ER_NOT_SUPPORTED_YET, MYF(0), "temporary tables in ENGINE=RIPTIDE");
    return HA_ERR_UNSUPPORTED;
  }
  if (form->s->blob_fields)
  {
    my_error(ER_NOT_SUPPORTED_YET, MYF(0),
             "BLOB/TEXT columns in ENGINE=RIPTIDE (this version stores the record buffer only)");
    return HA_ERR_UNSUPPORTED;
  }
  for (uint i= 0; i < form->s->keys; i++)
  {
    KEY *k= &form->key_info[i];
    if (i != form->s->primary_key)
    {
      char what[300];
      snprintf(what, sizeof what, "secondary indexes in ENGINE=RIPTIDE (index `%s`)",
               k->name.str);
      my_error(ER_NOT_SUPPORTED_YET, MYF(0), what);
      return HA_ERR_UNSUPPORTED;
    }
    for (uint j= 0; j < k->user_defined_key_parts; j++)
    {
      KEY_PART_INFO *kp= &k->key_part[j];
      if (kp->key_part_flag & HA_PART_KEY_SEG || kp->length < kp->field->key_length())
      {
        my_error(ER_NOT_SUPPORTED_YET, MYF(0),
                 "column prefixes in a primary key of ENGINE=RIPTIDE");
        return HA_ERR_UNSUPPORTED;
      }
    }
  }
  std::lock_guard<std::mutex> guard(dd_mutex);
  std::string msg, v;
  bool found= false;
  /* A leftover entry (a crash between our write and the server's): drop its data first. */
  std::string dd= dd_key(name);
  if (db_get(dd, &v, &found, &msg) != RIPTIDE_OK)
    return ddl_error("create: read the data dictionary", msg);
  std::vector<uint32_t> old_ids;
  if (found && parse_dd(v, &old_ids) && !drop_indexes(dd, old_ids, &msg))
    return ddl_error("create: drop leftover data", msg);
  /* Allocate one index id (the primary key, or the hidden row id). Ids are never reused,
     so a table created again under an old name never sees the old rows. */
  std::string ctr;
  if (db_get(counter_key(), &ctr, &found, &msg) != RIPTIDE_OK)
    return ddl_error("create: read the index id counter", msg);
  uint32_t next= found && ctr.size() == 4 ? read_be32(ctr.data()) : 1;
  if (next == 0 || next == UINT32_MAX)
    return ddl_error("create", "index ids exhausted");
  uint32_t id= next;
  std::string entry;
  entry.push_back(DD_FORMAT_V1);
  entry+= be32(1);
  entry+= be32(id);
  std::string new_ctr= be32(next + 1);
  std::string ck= counter_key();
  if (!write_batch(
          [&](riptide_batch_t *b, char **err) {
            riptide_status_t st= riptide_batch_put(b, nullptr, ck.data(), ck.size(),
                                                   new_ctr.data(), new_ctr.size(), err);
            if (st == RIPTIDE_OK)
              st= riptide_batch_put(b, nullptr, dd.data(), dd.size(), entry.data(),
                                    entry.size(), err);
            return st;
          },
          &msg))
    return ddl_error("create: write the data dictionary", msg);
  return 0;
}

int ha_riptide::delete_table(const char *name)
{
  std::lock_guard<std::mutex> guard(dd_mutex);
  std::string dd= dd_key(name), v, msg;
  bool found= false;
  if (db_get(dd, &v, &found, &msg) != RIPTIDE_OK)
    return ddl_error("drop: read the data dictionary", msg);
  if (!found)
    return 0; /* nothing of ours to delete */
  std::vector<uint32_t> ids;
  if (!parse_dd(v, &ids))
    return ddl_error("drop", std::string("corrupt data dictionary entry for ") + name);
  if (!drop_indexes(dd, ids, &msg))
    return ddl_error("drop", msg);
  return 0;
}

int ha_riptide::rename_table(const char *from, const char *to)
{
  std::lock_guard<std::mutex> guard(dd_mutex);
  std::string dfrom= dd_key(from), dto= dd_key(to), v, other, msg;
  bool found= false, exists= false;
  if (db_get(dfrom, &v, &found, &msg) != RIPTIDE_OK ||
      db_get(dto, &other, &exists, &msg) != RIPTIDE_OK)
    return ddl_error("rename: read the data dictionary", msg);
  if (!found)
    return HA_ERR_NO_SUCH_TABLE;
  if (exists)
    return HA_ERR_TABLE_EXIST;
  if (!write_batch(
          [&](riptide_batch_t *b, char **err) {
            riptide_status_t st=
                riptide_batch_put(b, nullptr, dto.data(), dto.size(), v.data(), v.size(), err);
            if (st == RIPTIDE_OK)
              st= riptide_batch_delete(b, nullptr, dfrom.data(), dfrom.size(), err);
            return st;
          },
          &msg))
    return ddl_error("rename", msg);
  return 0;
}

/* Puts `record` under `key`; with check_dup, fails with HA_ERR_FOUND_DUPP_KEY if the key
   exists (the lock taken by the check keeps a concurrent insert out). */
int ha_riptide::insert_key(const std::string &key, const uchar *record, bool check_dup)
{
  int error= 0;
  riptide_txn_t *t= txn(&error);
  if (!t)
    return error;
  char *err= nullptr;
  if (check_dup)
  {
    char *v= nullptr;
    size_t len= 0;
    bool found= false;
    riptide_status_t st= riptide_txn_get_for_update(t, nullptr, key.data(), key.size(), true,
                                                    &v, &len, &found, &err);
    riptide_free_value(v, len);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
    if (found)
    {
      dup_key= table->s->primary_key;
      return HA_ERR_FOUND_DUPP_KEY;
    }
  }
  val_buf.assign(1, ROW_FORMAT_V1);
  val_buf.append(reinterpret_cast<const char *>(record), table->s->reclength);
  riptide_status_t st= riptide_txn_put(t, nullptr, key.data(), key.size(), val_buf.data(),
                                       val_buf.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return 0;
}

int ha_riptide::write_row(const uchar *buf)
{
  if (table->next_number_field && buf == table->record[0])
    if (int error= update_auto_increment())
      return error;
  if (has_pk)
    encode_pk(buf, &key_buf);
  else
    key_buf= pk_prefix + be64(share->next_rowid.fetch_add(1));
  int error= insert_key(key_buf, buf, has_pk);
  if (!error)
    share->rows++;
  return error;
}

int ha_riptide::update_row(const uchar *old_data, const uchar *new_data)
{
  if (!has_pk)
    return insert_key(cur_key, new_data, false);
  std::string old_key;
  encode_pk(old_data, &old_key);
  encode_pk(new_data, &key_buf);
  if (old_key == key_buf)
    return insert_key(key_buf, new_data, false);
  /* The primary key changed: the row moves. */
  if (int error= insert_key(key_buf, new_data, true))
    return error;
  int error= 0;
  riptide_txn_t *t= txn(&error);
  if (!t)
    return error;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_delete(t, nullptr, old_key.data(), old_key.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  if (iter)
    moved_keys.insert(key_buf);
  return 0;
}

int ha_riptide::delete_row(const uchar *buf)
{
  if (has_pk)
    encode_pk(buf, &key_buf);
  else
    key_buf= cur_key;
  int error= 0;
  riptide_txn_t *t= txn(&error);
  if (!t)
    return error;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_delete(t, nullptr, key_buf.data(), key_buf.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  if (share->rows > 0)
    share->rows--;
  return 0;
}

/* An iterator over this table's primary key range, within the connection's transaction. */
int ha_riptide::make_iterator()
{
  drop_iterator();
  moved_keys.clear();
  scan_positioned= false;
  int error= 0;
  riptide_txn_t *t= txn(&error);
  if (!t)
    return error;
  std::string hi= prefix_successor(pk_prefix);
  char *err= nullptr;
  riptide_status_t st= riptide_txn_iter_create(t, nullptr, pk_prefix.data(), pk_prefix.size(),
                                               hi.data(), hi.size(), &iter, &err);
  if (st != RIPTIDE_OK)
  {
    iter= nullptr;
    return status_error(st, err);
  }
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

/* Returns the row under the iterator (moving on in the given direction past rows this
   statement moved, and rows deleted before a locking read could lock them). */
int ha_riptide::read_from_iterator(uchar *buf, bool forward)
{
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
    if (lock_rows != Riptide_row_lock::NONE)
    {
      bool found= false;
      if (int error= point_read(buf, key, &found))
        return error;
      if (!found)
      {
        if (int error= step(forward))
          return error;
        continue;
      }
      cur_key= key;
      return 0;
    }
    const char *v= riptide_txn_iter_value(iter, &vlen);
    if (int error= unpack_row(v, vlen, buf))
      return error;
    cur_key= key;
    return 0;
  }
}

/* Reads one key through the transaction (locking it for a locking read). */
int ha_riptide::point_read(uchar *buf, const std::string &key, bool *found)
{
  int error= 0;
  riptide_txn_t *t= txn(&error);
  if (!t)
    return error;
  char *v= nullptr, *err= nullptr;
  size_t len= 0;
  riptide_status_t st;
  if (lock_rows == Riptide_row_lock::NONE)
    st= riptide_txn_get(t, nullptr, key.data(), key.size(), &v, &len, found, &err);
  else
    st= riptide_txn_get_for_update(t, nullptr, key.data(), key.size(),
                                   lock_rows == Riptide_row_lock::EXCLUSIVE, &v, &len, found,
                                   &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  if (*found)
    error= unpack_row(v, len, buf);
  riptide_free_value(v, len);
  return error;
}

int ha_riptide::rnd_init(bool)
{
  return make_iterator();
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
    if (int error= make_iterator())
      return error;
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
  std::string key= pk_prefix;
  key.append(reinterpret_cast<const char *>(pos), ref_length);
  bool found= false;
  if (int error= point_read(buf, key, &found))
    return error;
  if (!found)
    return HA_ERR_KEY_NOT_FOUND;
  /* The scan's iterator stays where it was: rnd_next continues from there. */
  cur_key= key;
  return 0;
}

void ha_riptide::position(const uchar *record)
{
  if (has_pk)
  {
    encode_pk(record, &key_buf);
    memcpy(ref, key_buf.data() + pk_prefix.size(), ref_length);
  }
  else if (cur_key.size() == pk_prefix.size() + 8)
    memcpy(ref, cur_key.data() + pk_prefix.size(), 8);
}

int ha_riptide::index_init(uint idx, bool)
{
  active_index= idx;
  int error= make_iterator();
  cur_key.clear();
  return error;
}

int ha_riptide::index_end()
{
  drop_iterator();
  moved_keys.clear();
  active_index= MAX_KEY;
  return 0;
}

int ha_riptide::index_read_map(uchar *buf, const uchar *key, key_part_map keypart_map,
                               enum ha_rkey_function find_flag)
{
  if (!iter)
    if (int error= make_iterator())
      return error;
  std::string prefix;
  bool full= encode_key_tuple(key, keypart_map, &prefix);
  if (full && (find_flag == HA_READ_KEY_EXACT || find_flag == HA_READ_PREFIX))
  {
    /* A point read: no iterator move (index_next re-seeks from cur_key if called). */
    bool found= false;
    if (int error= point_read(buf, prefix, &found))
      return error;
    cur_key= prefix;
    iter_stale= true;
    return found ? 0 : HA_ERR_KEY_NOT_FOUND;
  }
  iter_stale= false;
  std::string succ= prefix_successor(prefix);
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

int ha_riptide::index_next(uchar *buf)
{
  if (!iter)
    if (int error= make_iterator())
      return error;
  if (iter_stale)
  {
    if (int error= resync_iterator(true))
      return error;
  }
  else if (int error= step(true))
    return error;
  return read_from_iterator(buf, true);
}

int ha_riptide::index_prev(uchar *buf)
{
  if (!iter)
    if (int error= make_iterator())
      return error;
  if (iter_stale)
  {
    if (int error= resync_iterator(false))
      return error;
  }
  else if (int error= step(false))
    return error;
  return read_from_iterator(buf, false);
}

int ha_riptide::index_first(uchar *buf)
{
  if (!iter)
    if (int error= make_iterator())
      return error;
  iter_stale= false;
  char *err= nullptr;
  riptide_status_t st= riptide_txn_iter_seek_to_first(iter, &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return read_from_iterator(buf, true);
}

int ha_riptide::index_last(uchar *buf)
{
  if (!iter)
    if (int error= make_iterator())
      return error;
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
    /* In-memory estimate (inserts minus deletes since the table was opened): never
       exact, and never below 2 so the optimizer does not treat the table as const. */
    int64_t rows= share ? share->rows.load() : 0;
    stats.records= ha_rows(rows < 2 ? 2 : rows);
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
    /* The key of the last duplicate-key failure (get_dup_key() resets errkey first). */
    errkey= dup_key;
  }
  return 0;
}

int ha_riptide::extra(enum ha_extra_function) { return 0; }

int ha_riptide::reset()
{
  drop_iterator();
  moved_keys.clear();
  lock_rows= Riptide_row_lock::NONE;
  return 0;
}

int ha_riptide::external_lock(THD *thd, int lock_type)
{
  if (lock_type == F_UNLCK)
    return 0;
  return start_stmt(thd, TL_UNLOCK);
}

/* Begins the statement: transaction, statement savepoint, registration with the server. */
int ha_riptide::start_stmt(THD *thd, thr_lock_type lock_type)
{
  if (lock_type >= TL_WRITE_ALLOW_WRITE)
    lock_rows= Riptide_row_lock::EXCLUSIVE;
  int error= 0;
  if (!txn(&error))
    return error;
  Riptide_trx *trx= get_trx(thd);
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
       LOCK IN SHARE MODE takes shared row locks; plain reads take none. */
    if (lock_type >= TL_WRITE_ALLOW_WRITE)
      lock_rows= Riptide_row_lock::EXCLUSIVE;
    else if (lock_type == TL_READ_WITH_SHARED_LOCKS)
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

ha_rows ha_riptide::records_in_range(uint, const key_range *, const key_range *, page_range *)
{
  return 10;
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
    nullptr,
    nullptr,
    "0.1",
    MariaDB_PLUGIN_MATURITY_EXPERIMENTAL} maria_declare_plugin_end;
#pragma GCC visibility pop
