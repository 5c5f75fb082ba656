/*
  Transactions: one Riptide session (crates/handler: a pessimistic transaction with a
  savepoint stack) per connection; commit, rollback, XA, savepoints, consistent snapshots
  and KILL. See transactions.h.
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_lex.h"
#include "set_var.h"
#include "log.h"
#include <mysql/plugin.h>

#include "riptide_shim.h"
#include "transactions.h"

#include <set>
#include <unordered_map>

#ifdef __GLIBC__
#include <malloc.h>
#endif


/* ---------------------------------------------------------------------------------------
   Lock waits reported to the server, for parallel replication (as InnoDB and MyRocks do).

   A replica applies transactions in parallel but commits them in the primary's order. When
   an earlier one waits for a row lock that a later one holds while the later one waits, in
   the server, for the earlier one to commit, the engine sees no cycle. thd_rpl_deadlock_check
   tells the server; it then kills the later transaction (asynchronously, from its own
   thread, through hton->kill_query, which ends the later one's lock wait if it has one) and
   applies it again. Without it the replica stops with lock wait timeouts in optimistic mode.

   The engine calls report_lock_wait on the waiting thread with the owners (connection ids,
   riptide_hsession_set_owner) of the waiter and its blockers, while its mutex for the key is
   held: the blockers cannot end their transactions meanwhile. Connection ids map to THDs
   here: a connection is added when it first uses Riptide (get_trx) and removed in
   close_connection, before its THD goes, under the same mutex the report holds while it
   calls the server, so no THD is used after it is freed. */
extern "C" int thd_need_wait_reports(const MYSQL_THD thd);
extern "C" int thd_rpl_deadlock_check(MYSQL_THD thd, MYSQL_THD other_thd);

static std::mutex connections_mutex;
static std::unordered_map<uint64_t, THD *> connections;

static void report_lock_wait(void *, uint64_t waiter, const uint64_t *blockers, size_t count)
{
  std::lock_guard<std::mutex> guard(connections_mutex);
  auto w= connections.find(waiter);
  if (w == connections.end() || !thd_need_wait_reports(w->second))
    return;
  for (size_t i= 0; i < count; i++)
  {
    auto b= connections.find(blockers[i]);
    if (b != connections.end() && b->second != w->second)
      thd_rpl_deadlock_check(w->second, b->second);
  }
}

Riptide_trx *get_trx(THD *thd)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx)
  {
    trx= new Riptide_trx;
    thd_set_ha_data(thd, riptide_hton, trx);
    std::lock_guard<std::mutex> guard(connections_mutex);
    connections[thd_get_thread_id(thd)]= thd;
  }
  return trx;
}

bool in_multi_statement(THD *thd)
{
  return thd_test_options(thd, OPTION_NOT_AUTOCOMMIT | OPTION_BEGIN);
}

static void end_txn(Riptide_trx *trx)
{
  trx->attached_bulk_rows= 0;
  trx->server_prepared= false;
  trx->committed_in_order= false;
  {
    std::lock_guard<std::mutex> guard(trx->interrupter_mutex);
    riptide_hinterrupt_destroy(trx->interrupter);
    trx->interrupter= nullptr;
  }
  riptide_hsession_destroy(trx->txn);
  trx->txn= nullptr;
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
                                                 riptide_lock_wait_timeout_ms(thd), &trx->txn, err)
               : riptide_hsession_begin(riptide_handler, level, riptide_lock_wait_timeout_ms(thd),
                                        &trx->txn, err);
  if (st != RIPTIDE_OK)
  {
    trx->txn= nullptr;
    return st;
  }
  /* information_schema.RIPTIDE_TRX and RIPTIDE_LOCKS show the connection. */
  riptide_hsession_set_owner(trx->txn, thd_get_thread_id(thd), nullptr);
  trx->lock_timeout_ms= riptide_lock_wait_timeout_ms(thd);
  trx->bulk_load= false;
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
static uint64_t statement_lock_timeout_ms(THD *thd)
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
  return riptide_lock_wait_timeout_ms(thd);
}

/* A transaction that held at least this much memory for its writes and locks gives it
   back to the system when it ends (trim_after). */
static constexpr size_t TRIM_AFTER_BYTES= 64 * 1024 * 1024;

/* After a transaction that held `held` bytes ended: the C library keeps the memory freed
   (glibc's arenas), so mariadbd's RSS stayed at the peak of the biggest statement (1M rows:
   about 1 GB). malloc_trim gives the free pages back; it walks the heap, so only after big
   transactions. */
static void trim_after(size_t held)
{
#ifdef __GLIBC__
  if (held >= TRIM_AFTER_BYTES)
    malloc_trim(0);
#else
  (void) held;
#endif
}

/* Whether the inserts of the statement `thd` runs may take the bulk path: riptide_bulk_load
   is on, and the statement is no INSERT IGNORE, REPLACE or ON DUPLICATE KEY UPDATE (they
   need each duplicate reported by its row, which a bulk load finds only at commit). */
static bool statement_bulk_load(THD *thd)
{
  return riptide_bulk_load(thd) && thd->lex->duplicates == DUP_ERROR && !thd->lex->ignore;
}

/* Whether the statement `thd` runs goes on with the connection's held bulk load (see
   Riptide_trx::held_bulk): an autocommit INSERT, INSERT ... SELECT or LOAD DATA that may
   take the bulk path. */
static bool continues_bulk_load(THD *thd)
{
  int cmd= thd_sql_command(thd);
  return (cmd == SQLCOM_INSERT || cmd == SQLCOM_INSERT_SELECT || cmd == SQLCOM_LOAD) &&
         !in_multi_statement(thd) && statement_bulk_load(thd);
}

bool finish_held_bulk_load(THD *thd, bool report, std::string *failure)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->held_bulk)
    return true;
  riptide_hbulk_t *held= trx->held_bulk;
  trx->held_bulk= nullptr;
  const unsigned long long rows= riptide_hbulk_rows(held);
  char *err= nullptr;
  riptide_hsession_t *s= nullptr;
  riptide_status_t st= riptide_hsession_begin(riptide_handler, RIPTIDE_HISO_READ_COMMITTED,
                                               riptide_lock_wait_timeout_ms(thd), &s, &err);
  if (st == RIPTIDE_OK)
  {
    riptide_hsession_set_owner(s, thd_get_thread_id(thd), nullptr);
    /* The session takes the load whatever the outcome. */
    st= riptide_hsession_attach_bulk_load(s, held, &err);
  }
  else
    riptide_hbulk_destroy(held);
  /* A KILL meanwhile interrupts this session (its wait for the tables' write locks), not
     the connection's: the connection's interrupter is set aside until the commit ends. */
  riptide_hinterrupt_t *own= nullptr, *saved= nullptr;
  if (st == RIPTIDE_OK)
    st= riptide_hsession_interrupter(s, &own, &err);
  if (st == RIPTIDE_OK)
  {
    {
      std::lock_guard<std::mutex> guard(trx->interrupter_mutex);
      saved= trx->interrupter;
      trx->interrupter= own;
    }
    size_t memory= riptide_hsession_approximate_memory(s);
    st= riptide_hsession_commit(s, &err);
    trim_after(memory);
    std::lock_guard<std::mutex> guard(trx->interrupter_mutex);
    trx->interrupter= saved;
  }
  riptide_hinterrupt_destroy(own);
  riptide_hsession_destroy(s);
  if (st == RIPTIDE_OK)
    return true;
  std::string msg= riptide_take_message(st, err);
  sql_print_error("RIPTIDE: connection %lu: the bulk load (riptide_bulk_load) of %llu rows "
                  "held since earlier statements failed at its end and is discarded: %s",
                  ulong(thd_get_thread_id(thd)), rows, msg.c_str());
  if (failure)
    *failure= "the bulk load (riptide_bulk_load) of " + std::to_string(rows) +
              " rows held since earlier statements failed at its end and is discarded: " +
              msg;
  else if (report)
    my_printf_error(ER_ERROR_DURING_COMMIT,
                    "RIPTIDE: the bulk load (riptide_bulk_load) of %llu rows held since "
                    "earlier statements failed at its end and is discarded: %s",
                    MYF(0), rows, msg.c_str());
  return false;
}

bool settle_held_bulk_load(THD *thd, std::string *failure)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->held_bulk || continues_bulk_load(thd))
    return true;
  return finish_held_bulk_load(thd, true, failure);
}

/* At the start of each statement: re-arms the session after an interrupt (the killed
   statement has ended), applies the statement's lock wait limit and riptide_bulk_load, and
   takes up the connection's held bulk load (start_stmt ended it first unless this
   statement goes on with it). */
riptide_status_t begin_statement_waits(THD *thd, Riptide_trx *trx, char **err)
{
  if (trx->interrupted.exchange(false))
    riptide_hsession_clear_interrupt(trx->txn);
  bool bulk= statement_bulk_load(thd);
  if (bulk != trx->bulk_load)
  {
    riptide_status_t st= riptide_hsession_set_bulk_load(trx->txn, bulk, err);
    if (st != RIPTIDE_OK)
      return st;
    trx->bulk_load= bulk;
  }
  if (trx->held_bulk)
  {
    riptide_hbulk_t *held= trx->held_bulk;
    trx->held_bulk= nullptr;
    trx->attached_bulk_rows= riptide_hbulk_rows(held);
    /* The session takes the load whatever the outcome. */
    riptide_status_t st= riptide_hsession_attach_bulk_load(trx->txn, held, err);
    if (st != RIPTIDE_OK)
      return st;
  }
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
static void riptide_kill_query(handlerton *, THD *thd, enum thd_kill_levels)
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

/* Ends the statement inside a multi-statement transaction, keeping (`success`) or undoing
   its writes; false on failure (logged). */
static bool end_statement(Riptide_trx *trx, bool success)
{
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_end_statement(trx->txn, success, &err);
  if (st == RIPTIDE_OK)
    return true;
  sql_print_error("RIPTIDE: %s the statement: %s", success ? "keeping" : "rolling back",
                  riptide_take_message(st, err).c_str());
  return false;
}

/* The server's two-phase commit, in the coordinator's commit order (binary log order),
   serialised and possibly on another connection's thread (the group commit leader's;
   the owner waits meanwhile): commits the prepared session here, so that transactions
   become visible in binary log order. START TRANSACTION WITH CONSISTENT SNAPSHOT then sees
   exactly what the binary log holds up to the position it reports (Binlog_snapshot_file /
   _position: mariadb-dump --single-transaction --master-data provisions replicas from it;
   mtr riptide.binlog_snapshot). Not synced (the binary log holds the outcome: see
   riptide_prepare) and never waiting for a lock: a write and a memtable insert. It cannot
   raise an error; riptide_commit reports what it left. */
static void riptide_commit_ordered(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn || !trx->server_prepared || trx->committed_in_order ||
      (!all && in_multi_statement(thd)))
    return;
  char *err= nullptr;
  trx->ordered_memory= riptide_hsession_approximate_memory(trx->txn);
  trx->ordered_status= riptide_hsession_commit(trx->txn, &err);
  trx->ordered_message=
      trx->ordered_status == RIPTIDE_OK ? std::string() : riptide_take_message(trx->ordered_status, err);
  trx->committed_in_order= true;
}

static int riptide_commit(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  if (trx->committed_in_order)
  {
    /* commit_ordered committed it: report the outcome, end the session. */
    riptide_status_t st= trx->ordered_status;
    std::string msg= std::move(trx->ordered_message);
    size_t held= trx->ordered_memory;
    end_txn(trx);
    trim_after(held);
    if (st == RIPTIDE_OK)
      return 0;
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: commit failed: %s", msg.c_str());
    sql_print_warning("RIPTIDE: commit failed: %s", msg.c_str());
    return riptide_ha_error(st, Riptide_call::TRANSACTION);
  }
  if (!all && in_multi_statement(thd))
    /* The end of a statement inside a transaction: keep its writes. */
    return end_statement(trx, true) ? 0 : HA_ERR_INTERNAL_ERROR;
  char *err= nullptr;
  /* An autocommit statement of a bulk load that spans statements: the load goes on past
     this commit, which writes the statement's other rows (if any). */
  riptide_hbulk_t *held_bulk= nullptr;
  if (trx->bulk_load && continues_bulk_load(thd))
  {
    if (trx->held_bulk && !finish_held_bulk_load(thd, true))
      return HA_ERR_INTERNAL_ERROR;
    riptide_status_t st= riptide_hsession_detach_bulk_load(trx->txn, &held_bulk, &err);
    if (st != RIPTIDE_OK)
    {
      sql_print_warning("RIPTIDE: keeping the bulk load past the statement: %s",
                        riptide_take_message(st, err).c_str());
      return riptide_ha_error(st, Riptide_call::TRANSACTION);
    }
  }
  const uint64_t earlier_rows= trx->attached_bulk_rows;
  size_t held= riptide_hsession_approximate_memory(trx->txn);
  riptide_status_t st= riptide_hsession_commit(trx->txn, &err);
  end_txn(trx);
  trim_after(held);
  if (st == RIPTIDE_OK)
  {
    trx->held_bulk= held_bulk;
    return 0;
  }
  if (held_bulk)
  {
    riptide_hbulk_destroy(held_bulk);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: the bulk load (riptide_bulk_load) of this statement and "
                        "%llu rows of earlier ones is discarded",
                        (unsigned long long) earlier_rows);
  }
  std::string msg= riptide_take_message(st, err);
  push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                      "RIPTIDE: commit failed: %s", msg.c_str());
  sql_print_warning("RIPTIDE: commit failed: %s", msg.c_str());
  return riptide_ha_error(st, Riptide_call::TRANSACTION);
}

static int riptide_rollback(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  if (!all && in_multi_statement(thd))
    /* A failed statement inside a transaction: only it is undone. */
    return end_statement(trx, false) ? 0 : HA_ERR_INTERNAL_ERROR;
  char *err= nullptr;
  size_t held= riptide_hsession_approximate_memory(trx->txn);
  /* A statement that failed after it took up a bulk load spanning statements: the load
     cannot take back this statement's rows alone, so it goes with them. */
  if (trx->attached_bulk_rows)
  {
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: the bulk load (riptide_bulk_load) of this statement and "
                        "%llu rows of earlier ones is discarded",
                        (unsigned long long) trx->attached_bulk_rows);
    sql_print_warning("RIPTIDE: connection %lu: a failed statement discarded the bulk load "
                      "(riptide_bulk_load) holding %llu rows of earlier statements",
                      ulong(thd_get_thread_id(thd)),
                      (unsigned long long) trx->attached_bulk_rows);
  }
  /* A transaction that lost a conflict is already rolled back: not an error. */
  riptide_status_t st= riptide_hsession_rollback(trx->txn, &err);
  if (st != RIPTIDE_OK)
    sql_print_warning("RIPTIDE: rollback: %s", riptide_take_message(st, err).c_str());
  end_txn(trx);
  trim_after(held);
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
static constexpr int RIPTIDE_XA_OK= 0;
static constexpr int RIPTIDE_XAER_RMERR= -3;
static constexpr int RIPTIDE_XAER_NOTA= -4;

static int riptide_prepare(handlerton *, THD *thd, bool all)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (!trx || !trx->txn)
    return 0;
  /* The end of a statement inside a transaction: nothing to prepare yet (commit(all=false)
     follows and keeps the statement's writes). */
  if (!all && in_multi_statement(thd))
    return 0;
  /* (The session ends an open statement itself, keeping its writes.) */
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
    std::string msg= riptide_take_message(st, err);
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_UNKNOWN_ERROR,
                        "RIPTIDE: prepare failed: %s", msg.c_str());
    sql_print_warning("RIPTIDE: prepare failed: %s", msg.c_str());
    return riptide_ha_error(st, Riptide_call::TRANSACTION);
  }
  /* The server's own two-phase commit (the binary log, or the TC log when two XA engines
     share the transaction), not an XA PREPARE of the user: the commit that follows need
     not wait for its WAL sync. The prepare record is synced, the coordinator's log holds
     the outcome, and after a crash it commits the transaction again by its xid
     (riptide_recover); before the coordinator forgets a log it asks for every commit to
     be durable (riptide_commit_checkpoint_request). InnoDB and MyRocks save this fsync
     the same way. */
  if (!thd->transaction->xid_state.is_explicit_XA())
  {
    trx->server_prepared= true;
    st= riptide_hsession_set_commit_sync(trx->txn, false, &err);
    if (st != RIPTIDE_OK)
      sql_print_warning("RIPTIDE: the commit after prepare will sync its WAL record: %s",
                        riptide_take_message(st, err).c_str());
  }
  return 0;
}

/* The transaction coordinator (binary log or TC log) is about to forget a log file whose
   transactions all committed here: make their commits durable, then say so. Once per
   binary log rotation; the fsync runs in the caller's thread, as MyRocks does. On failure
   the engine is read-only and the coordinator keeps the log (no notification). */
static void riptide_commit_checkpoint_request(void *cookie)
{
  char *err= nullptr;
  riptide_status_t st= riptide_db ? riptide_db_sync_wal(riptide_db, &err) : RIPTIDE_CLOSED;
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: syncing the WAL for a binary log checkpoint failed; the "
                    "binary log keeps the file for crash recovery: %s",
                    riptide_take_message(st, err).c_str());
    return;
  }
  commit_checkpoint_notify_ha(cookie);
}

/* Commits or rolls back the prepared transaction `xid` of no live connection. */
static int finish_by_xid(XID *xid, bool commit)
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
  std::string msg= riptide_take_message(st, err);
  if (st == RIPTIDE_NOT_FOUND)
    return RIPTIDE_XAER_NOTA;
  sql_print_error("RIPTIDE: XA %s: %s", commit ? "COMMIT" : "ROLLBACK", msg.c_str());
  return RIPTIDE_XAER_RMERR;
}

static int riptide_commit_by_xid(handlerton *, XID *xid) { return finish_by_xid(xid, true); }

static int riptide_rollback_by_xid(handlerton *, XID *xid) { return finish_by_xid(xid, false); }

/* XIDs recover() returned already: the server calls it until it returns fewer than `len`,
   and the ones it keeps prepared (external XA) would otherwise come back each time. */
static std::set<std::string> recovered_xids;

static int riptide_recover(handlerton *, XID *xid_list, uint len)
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
                    riptide_take_message(st, err).c_str());
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

static int riptide_close_connection(handlerton *, THD *thd)
{
  Riptide_trx *trx= static_cast<Riptide_trx *>(thd_get_ha_data(thd, riptide_hton));
  if (trx)
  {
    {
      std::lock_guard<std::mutex> guard(connections_mutex);
      auto c= connections.find(thd_get_thread_id(thd));
      if (c != connections.end() && c->second == thd)
        connections.erase(c);
    }
    /* The client is gone: a failure can only be logged. */
    finish_held_bulk_load(thd, false);
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

/* SQL savepoints: `sv` holds the savepoint's id (0: set before the session began, so
   nothing of the session precedes it), by which the session knows it. */
static int riptide_savepoint_set(handlerton *, THD *thd, void *sv)
{
  Riptide_trx *trx= get_trx(thd);
  *static_cast<uint64_t *>(sv)= 0;
  if (!trx->txn)
    return 0;
  uint64_t id= ++trx->last_savepoint_id;
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_savepoint_set(trx->txn, id, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: set savepoint: %s", riptide_take_message(st, err).c_str());
    return HA_ERR_INTERNAL_ERROR;
  }
  *static_cast<uint64_t *>(sv)= id;
  return 0;
}

/* ROLLBACK TO SAVEPOINT (rollback) and RELEASE SAVEPOINT, also the server's release of an
   older savepoint of the same name when a SAVEPOINT reuses it: the session rolls back to
   the savepoint (keeping it) or forgets it, keeping the ones set after it (InnoDB's
   trx_release_savepoint_for_mysql). A savepoint the session does not have (set before it
   began) undoes nothing. */
static int finish_savepoint(THD *thd, void *sv, bool rollback)
{
  Riptide_trx *trx= get_trx(thd);
  uint64_t id= *static_cast<uint64_t *>(sv);
  if (!trx->txn || !id)
    return 0;
  char *err= nullptr;
  riptide_status_t st= rollback ? riptide_hsession_savepoint_rollback(trx->txn, id, &err)
                                : riptide_hsession_savepoint_release(trx->txn, id, &err);
  if (st == RIPTIDE_OK)
    return 0;
  std::string msg= riptide_take_message(st, err);
  if (st == RIPTIDE_NOT_FOUND)
    return 0;
  sql_print_error("RIPTIDE: %s savepoint: %s", rollback ? "rollback to" : "release",
                  msg.c_str());
  return HA_ERR_INTERNAL_ERROR;
}

static int riptide_savepoint_rollback(handlerton *, THD *thd, void *sv)
{
  return finish_savepoint(thd, sv, true);
}

static bool riptide_savepoint_rollback_can_release_mdl(handlerton *, THD *) { return true; }

static int riptide_savepoint_release(handlerton *, THD *thd, void *sv)
{
  return finish_savepoint(thd, sv, false);
}

/* START TRANSACTION WITH CONSISTENT SNAPSHOT: the connection's session begins now and
   takes its snapshot now (not at the first read). As in InnoDB, only under REPEATABLE READ
   (and SERIALIZABLE, which runs as it); other levels get a warning. */
static int riptide_start_consistent_snapshot(handlerton *hton, THD *thd)
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
      sql_print_warning("RIPTIDE: rollback: %s", riptide_take_message(st, err).c_str());
    end_txn(trx);
  }
  char *err= nullptr;
  riptide_status_t st= begin_trx(thd, trx, true, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= riptide_take_message(st, err);
    sql_print_error("RIPTIDE: START TRANSACTION WITH CONSISTENT SNAPSHOT: %s", msg.c_str());
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: cannot begin a transaction: %s", MYF(0),
                    msg.c_str());
    return 1;
  }
  trans_register_ha(thd, true, hton, 0);
  return 0;
}

void riptide_transactions_init(handlerton *hton)
{
  hton->commit= riptide_commit;
  hton->commit_ordered= riptide_commit_ordered;
  hton->rollback= riptide_rollback;
  hton->close_connection= riptide_close_connection;
  hton->savepoint_offset= sizeof(uint64_t);
  hton->savepoint_set= riptide_savepoint_set;
  hton->savepoint_rollback= riptide_savepoint_rollback;
  hton->savepoint_rollback_can_release_mdl= riptide_savepoint_rollback_can_release_mdl;
  hton->savepoint_release= riptide_savepoint_release;
  hton->prepare= riptide_prepare;
  hton->commit_by_xid= riptide_commit_by_xid;
  hton->rollback_by_xid= riptide_rollback_by_xid;
  hton->recover= riptide_recover;
  hton->commit_checkpoint_request= riptide_commit_checkpoint_request;
  hton->start_consistent_snapshot= riptide_start_consistent_snapshot;
  hton->kill_query= riptide_kill_query;
  char *err= nullptr;
  riptide_status_t st=
      riptide_db_set_lock_wait_callback(riptide_db, report_lock_wait, nullptr, &err);
  if (st != RIPTIDE_OK)
    sql_print_warning("RIPTIDE: lock waits will not be reported to parallel replication "
                      "(optimistic mode may stall on lock wait timeouts): %s",
                      riptide_take_message(st, err).c_str());
}
