/*
  Transactions: one Riptide session per connection, and the handlerton's transaction, XA
  and savepoint functions (transactions.cc).
*/
#pragma once

#include <my_global.h>
#include "handler.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "riptide.h"

/* ---------------------------------------------------------------------------------------
   Transactions: one Riptide session (crates/handler: a pessimistic transaction that owns
   its statement and SQL savepoints and the cursors reading through it) per connection.

   The session begins at the first table lock of a statement and is registered for the
   statement and, outside autocommit, for the whole transaction. Inside a multi-statement
   transaction every statement begins a session statement (riptide_hsession_begin_statement)
   that the statement's end keeps or undoes, so a failing statement rolls back only itself.
*/
struct Riptide_trx
{
  riptide_hsession_t *txn= nullptr;
  /* The id of the last SQL savepoint set (what the server keeps for it,
     riptide_savepoint_set; the session knows it by this id). */
  uint64_t last_savepoint_id= 0;
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
  /* Bulk load as last given to the session (riptide_hsession_set_bulk_load). */
  bool bulk_load= false;
  /* A bulk load that spans autocommit statements (MyRocks' rocksdb_bulk_load across
     statements): an autocommit INSERT or LOAD DATA with riptide_bulk_load on takes its
     load out of its transaction before that commits, and the next such statement takes it
     up again (riptide_hsession_detach/attach_bulk_load); its rows stay invisible until it
     ends. It ends (is committed by a session of its own: finish_held_bulk_load) when
     riptide_bulk_load returns to 0, at the connection's next statement of another kind
     that reaches the engine (a SELECT, an ALTER, BEGIN ... INSERT), at a DROP TABLE by the
     connection, and when the connection closes. NULL when there is none. */
  riptide_hbulk_t *held_bulk= nullptr;
  /* Rows of earlier statements in the load the session took up at this statement's start
     (0: none): a failure of the statement discards them, and the client is told. */
  uint64_t attached_bulk_rows= 0;
  /* Prepared by the server's own two-phase commit (binary log or TC log; not a user's XA
     PREPARE): the session commits in commit_ordered, in the coordinator's order. */
  bool server_prepared= false;
  /* commit_ordered committed the session (possibly from another connection's thread: the
     binary log's group commit leader); commit() then only reports its outcome and ends the
     session. commit_ordered cannot raise errors: it leaves the status and message here. */
  bool committed_in_order= false;
  riptide_status_t ordered_status= RIPTIDE_OK;
  std::string ordered_message;
  /* The session's memory when commit_ordered committed it (for trim_after). */
  size_t ordered_memory= 0;
  /* MariaDB key number of the connection's last duplicate-key failure (info(ERRKEY)).
     Kept per connection, as InnoDB keeps it per transaction: a partitioned table asks the
     partition it used last, which is not the one that failed when a row moving to another
     partition met a duplicate there. */
  uint dup_key= uint(-1);
};

/* The connection's Riptide_trx, made on first use. */
Riptide_trx *get_trx(THD *thd);

/* Whether `thd` runs a multi-statement transaction (BEGIN, or autocommit off). */
bool in_multi_statement(THD *thd);

/* Begins the connection's Riptide session with the connection's isolation level; with
   `snapshot` the read snapshot is taken now (START TRANSACTION WITH CONSISTENT SNAPSHOT). */
riptide_status_t begin_trx(THD *thd, Riptide_trx *trx, bool snapshot, char **err);

/* At the start of each statement: re-arms the session after an interrupt (the killed
   statement has ended) and applies the statement's lock wait limit. */
riptide_status_t begin_statement_waits(THD *thd, Riptide_trx *trx, char **err);

/* Ends the connection's held bulk load, if any (see Riptide_trx::held_bulk): a session of
   its own takes it up and commits. On failure the load is discarded and the error log says
   so; with `report` the client gets the error too (the caller's statement fails), and with
   `failure` its text goes there instead, for a caller that raises it as a handler error.
   Returns false on failure. */
bool finish_held_bulk_load(THD *thd, bool report, std::string *failure= nullptr);

/* At the start of a statement that reaches the engine (start_stmt): ends the connection's
   held bulk load unless the statement goes on with it (an autocommit INSERT or LOAD DATA
   with riptide_bulk_load on). False on failure, with what failed in `*failure` (the
   caller's handler error: the statement fails with it). */
bool settle_held_bulk_load(THD *thd, std::string *failure);

/* Fills the handlerton's transaction, XA, savepoint and KILL functions. */
void riptide_transactions_init(handlerton *hton);
