/*
  What the files of the shim share: the engine handles the plugin opens at init, the system
  variable and status arrays (sysvars.cc), and the helpers that turn a C ABI failure into a
  message. Nothing here is exported from the .so (-fvisibility=hidden).
*/
#pragma once

#include <my_global.h>
#include "handler.h"
#include <mysql/plugin.h>

#include <cstdint>
#include <string>

#include "riptide.h"

/* Handler error for every Riptide failure without a closer MariaDB code; the message is
   kept by the handler and printed by get_error_message(). */
constexpr int HA_ERR_RIPTIDE= HA_ERR_LAST + 1;

/* The storage engine, the database and its handler layer (hton.cc; NULL before init and
   after deinit). */
extern handlerton *riptide_hton;
extern riptide_db_t *riptide_db;
extern riptide_handler_t *riptide_handler;

/* sysvars.cc: the plugin's system variables (built at dlopen from the C ABI's server option
   table) and status variables (from its statistics table). */
extern struct st_mysql_sys_var *riptide_system_variables[];
extern SHOW_VAR riptide_status_variables[];

/* The row lock wait limit of a session begun now by `thd` (riptide_lock_wait_timeout), in
   milliseconds. */
uint64_t riptide_lock_wait_timeout_ms(THD *thd);
/* riptide_bulk_load of `thd` (sysvars.cc). */
bool riptide_bulk_load(THD *thd);

/* riptide_analyze_sample_points of `thd`: the places ANALYZE TABLE samples a large table's
   indexes at, 0 to read every table whole (sysvars.cc). */
uint riptide_analyze_sample_points(THD *thd);
/* riptide_print_all_deadlocks: whether the handler writes each deadlock to the error log. */
bool riptide_print_all_deadlocks();

/* Fills `opts` from the riptide_* system variables of the engine options, after checking
   that both variable arrays could be built from the C ABI's tables. On failure, logs what is
   wrong (which variable the engine refused) and returns false. */
bool riptide_apply_options(riptide_options_t *opts);

/* The database directory riptide_data_dir names (default <datadir>/#riptide; a relative
   path is relative to the datadir), made absolute; from now on SHOW VARIABLES prints it. */
std::string riptide_resolve_data_dir();

/* information_schema.cc: the engine's information_schema tables (init and deinit of each
   MYSQL_INFORMATION_SCHEMA_PLUGIN declared in hton.cc, and their shared descriptor). */
int riptide_i_s_options_init(void *p);
int riptide_i_s_trx_init(void *p);
int riptide_i_s_locks_init(void *p);
int riptide_i_s_deadlocks_init(void *p);
int riptide_i_s_compactions_init(void *p);
int riptide_i_s_tables_init(void *p);
/* Records a victim for information_schema.RIPTIDE_DEADLOCKS: connection `thd` was rolled
   back for a deadlock (or, with `conflict`, a write conflict); `detail` is the engine's
   message (the cycle and what each transaction on it waits for). */
void riptide_record_deadlock(THD *thd, bool conflict, const std::string &detail);
int riptide_i_s_deinit(void *p);
extern struct st_mysql_information_schema riptide_i_s_descriptor;

/* Takes ownership of a message from the C ABI (the status name when there is none). */
std::string riptide_take_message(riptide_status_t st, char *msg);

/* What a call of the C ABI was doing when it failed: decides what a status without a
   MariaDB counterpart of its own becomes (riptide_ha_error). */
enum class Riptide_call
{
  /* A row operation of the handler: other failures are HA_ERR_RIPTIDE, whose message the
     handler keeps (get_error_message). */
  ROW,
  /* The handlerton's commit, rollback, prepare: HA_ERR_INTERNAL_ERROR. */
  TRANSACTION,
  /* CREATE, DROP, RENAME, TRUNCATE of a table: a missing table is HA_ERR_NO_SUCH_TABLE,
     an existing one HA_ERR_TABLE_EXIST, other failures HA_ERR_INTERNAL_ERROR. */
  DDL
};

/* The MariaDB handler error for a failed C ABI call (0 for RIPTIDE_OK): the one place
   engine statuses become MariaDB errors. A lock wait timeout is HA_ERR_LOCK_WAIT_TIMEOUT,
   an interrupted wait (KILL, shutdown) HA_ERR_ABORTED_BY_USER, a deadlock victim or a lost
   write conflict HA_ERR_LOCK_DEADLOCK (the caller rolls the transaction back), a duplicate
   key HA_ERR_FOUND_DUPP_KEY; the rest as `call` says. */
int riptide_ha_error(riptide_status_t st, Riptide_call call);
