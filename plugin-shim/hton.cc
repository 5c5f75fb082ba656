/*
  The plugin itself: init and deinit (open the database and its handler layer with the
  options of the system variables, fill the handlerton), SHOW ENGINE RIPTIDE STATUS, and the
  plugin declaration. Transactions and XA: transactions.cc; the handler: ha_riptide.cc.
*/
#include <my_global.h>
#include "sql_class.h"
#include "log.h"
#include <mysql/plugin.h>

#include "ha_riptide.h"
#include "record_codec.h"
#include "riptide_shim.h"
#include "transactions.h"

/* sql_show.cc: directories in the datadir that are not databases (as MyRocks' #rocksdb). */
void ignore_db_dirs_append(const char *dirname_arg);

handlerton *riptide_hton= nullptr;
riptide_db_t *riptide_db= nullptr;
riptide_handler_t *riptide_handler= nullptr;

/* Takes ownership of a message from the C ABI. */
std::string riptide_take_message(riptide_status_t st, char *msg)
{
  std::string out= msg ? msg : riptide_status_name(int32_t(st));
  riptide_free(msg);
  return out;
}

int riptide_ha_error(riptide_status_t st, Riptide_call call)
{
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
    return HA_ERR_LOCK_DEADLOCK;
  case RIPTIDE_DUPLICATE_KEY:
    return HA_ERR_FOUND_DUPP_KEY;
  case RIPTIDE_NOT_FOUND:
    if (call == Riptide_call::DDL)
      return HA_ERR_NO_SUCH_TABLE;
    break;
  case RIPTIDE_BUSY:
    if (call == Riptide_call::DDL)
      return HA_ERR_TABLE_EXIST;
    break;
  default:
    break;
  }
  return call == Riptide_call::ROW ? HA_ERR_RIPTIDE : HA_ERR_INTERNAL_ERROR;
}

namespace {

bool riptide_show_status(handlerton *, THD *thd, stat_print_fn *print, enum ha_stat_type type)
{
  if (type != HA_ENGINE_STATUS || !riptide_db)
    return false;
  char *report= nullptr, *err= nullptr;
  riptide_status_t st= riptide_stats_report(riptide_db, &report, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= riptide_take_message(st, err);
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

int riptide_check_version(handlerton *, const char *path, const LEX_CUSTRING *version,
                          ulonglong);

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
  if (!riptide_apply_options(opts))
  {
    riptide_options_destroy(opts);
    sql_print_error("RIPTIDE: not started: fix the riptide_* option named above");
    return 1;
  }
  std::string dir= riptide_resolve_data_dir();
  char *err= nullptr;
  /* The engine's own notes and warnings (recovery, background errors) go to the error log. */
  riptide_log_to_stderr();
  riptide_status_t st= riptide_db_open(dir.c_str(), opts, &riptide_db, &err);
  riptide_options_destroy(opts);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: cannot open %s (riptide_data_dir and the other riptide_* "
                    "options): %s",
                    dir.c_str(), riptide_take_message(st, err).c_str());
    riptide_db= nullptr;
    return 1;
  }
  st= riptide_handler_open(riptide_db, &riptide_handler, &err);
  if (st == RIPTIDE_OK)
    st= riptide_handler_set_key_format(riptide_handler, KEY_FORMAT_CURRENT, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: cannot open the data dictionary in %s: %s", dir.c_str(),
                    riptide_take_message(st, err).c_str());
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
  riptide_transactions_init(riptide_hton);
  riptide_hton->show_status= riptide_show_status;
  riptide_hton->check_version= riptide_check_version;
  sql_print_information("RIPTIDE: %s opened (Riptide %s)", dir.c_str(), riptide_version());
  return 0;
}

/* MariaDB's recovery of an in-place ALTER TABLE that a crash interrupted asks whether the
   engine committed the new definition (`version`: the new .frm's tabledef_version): 0 if
   so (the new .frm is installed), 1 if not (the old one stays). alter_inplace.cc records
   the version with the commit. */
int riptide_check_version(handlerton *, const char *path, const LEX_CUSTRING *version,
                          ulonglong)
{
  bool matches= false;
  char *err= nullptr;
  riptide_status_t st= riptide_handler_check_version(
      riptide_handler, path, strlen(path), reinterpret_cast<const char *>(version->str),
      version->length, &matches, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_warning("RIPTIDE: recovery of an ALTER TABLE of %s: %s (keeping the old "
                      "definition)",
                      path, riptide_take_message(st, err).c_str());
    return 1;
  }
  return matches ? 0 : 1;
}

int riptide_deinit(void *)
{
  char *err= nullptr;
  if (riptide_handler)
  {
    /* Exact auto-increment and row id counters, so a clean restart leaves no gap. */
    riptide_status_t st= riptide_handler_close(riptide_handler, &err);
    if (st != RIPTIDE_OK)
      sql_print_error("RIPTIDE: close the data dictionary: %s", riptide_take_message(st, err).c_str());
    riptide_handler_destroy(riptide_handler);
    riptide_handler= nullptr;
  }
  if (riptide_db)
  {
    riptide_status_t st= riptide_db_close(riptide_db, &err);
    if (st != RIPTIDE_OK)
      sql_print_error("RIPTIDE: close: %s", riptide_take_message(st, err).c_str());
    riptide_db_destroy(riptide_db);
    riptide_db= nullptr;
  }
  return 0;
}

} // namespace

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
    MariaDB_PLUGIN_MATURITY_EXPERIMENTAL},
    {MYSQL_INFORMATION_SCHEMA_PLUGIN,
     &riptide_i_s_descriptor,
     "RIPTIDE_OPTIONS",
     "The Riptide authors",
     "Riptide: every engine option with the value the engine runs with",
     PLUGIN_LICENSE_GPL,
     riptide_i_s_options_init,
     riptide_i_s_deinit,
     0x0001,
     nullptr,
     nullptr,
     "0.1",
     MariaDB_PLUGIN_MATURITY_EXPERIMENTAL},
    {MYSQL_INFORMATION_SCHEMA_PLUGIN,
     &riptide_i_s_descriptor,
     "RIPTIDE_TRX",
     "The Riptide authors",
     "Riptide: open transactions",
     PLUGIN_LICENSE_GPL,
     riptide_i_s_trx_init,
     riptide_i_s_deinit,
     0x0001,
     nullptr,
     nullptr,
     "0.1",
     MariaDB_PLUGIN_MATURITY_EXPERIMENTAL},
    {MYSQL_INFORMATION_SCHEMA_PLUGIN,
     &riptide_i_s_descriptor,
     "RIPTIDE_LOCKS",
     "The Riptide authors",
     "Riptide: row, unique-value, table-write and gap locks held and waited for",
     PLUGIN_LICENSE_GPL,
     riptide_i_s_locks_init,
     riptide_i_s_deinit,
     0x0001,
     nullptr,
     nullptr,
     "0.1",
     MariaDB_PLUGIN_MATURITY_EXPERIMENTAL},
    {MYSQL_INFORMATION_SCHEMA_PLUGIN,
     &riptide_i_s_descriptor,
     "RIPTIDE_DEADLOCKS",
     "The Riptide authors",
     "Riptide: the last deadlocks and write conflicts, with their victims",
     PLUGIN_LICENSE_GPL,
     riptide_i_s_deadlocks_init,
     riptide_i_s_deinit,
     0x0001,
     nullptr,
     nullptr,
     "0.1",
     MariaDB_PLUGIN_MATURITY_EXPERIMENTAL},
    {MYSQL_INFORMATION_SCHEMA_PLUGIN,
     &riptide_i_s_descriptor,
     "RIPTIDE_COMPACTIONS",
     "The Riptide authors",
     "Riptide: flushes and compactions running and recently finished",
     PLUGIN_LICENSE_GPL,
     riptide_i_s_compactions_init,
     riptide_i_s_deinit,
     0x0001,
     nullptr,
     nullptr,
     "0.1",
     MariaDB_PLUGIN_MATURITY_EXPERIMENTAL},
    {MYSQL_INFORMATION_SCHEMA_PLUGIN,
     &riptide_i_s_descriptor,
     "RIPTIDE_TABLES",
     "The Riptide authors",
     "Riptide: every index of every table, with its size on disk by level",
     PLUGIN_LICENSE_GPL,
     riptide_i_s_tables_init,
     riptide_i_s_deinit,
     0x0001,
     nullptr,
     nullptr,
     "0.1",
     MariaDB_PLUGIN_MATURITY_EXPERIMENTAL} maria_declare_plugin_end;
#pragma GCC visibility pop
