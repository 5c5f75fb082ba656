/*
  ha_riptide's statements: table locks and the statement's row lock mode (store_lock,
  external_lock, start_stmt), the end of a statement (reset), info() and extra().
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_lex.h"
#include "log.h"
#include <algorithm>

#include "ha_riptide.h"
#include "riptide_shim.h"
#include "transactions.h"

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
    /* ANALYZE TABLE's numbers (analyze_indexes): the row count, then the distinct prefixes
       of every key part of every index, in key order. They apply while the table has the
       indexes they were counted for (the engine drops them otherwise; the count checks
       the shape too). Without them: 1 row per value of a whole key, unknown (0) for its
       prefixes, as before any ANALYZE. */
    size_t expected= 1;
    for (uint i= 0; i < table->s->keys; i++)
      expected+= table->key_info[i].user_defined_key_parts;
    std::vector<uint64_t> st(expected);
    bool analyzed= share &&
                   riptide_htable_index_stats(share->table, st.data(), st.size()) == expected &&
                   st[0] > 0;
    size_t at= 1;
    for (uint i= 0; i < table->s->keys; i++)
    {
      KEY *k= &table->key_info[i];
      for (uint j= 0; j < k->ext_key_parts; j++)
      {
        bool last= j + 1 == k->user_defined_key_parts;
        ulong per_key= last ? 1 : 0;
        if (analyzed && j < k->user_defined_key_parts)
        {
          uint64_t d= st[at + j];
          /* Rows per distinct value, rounded; a unique key's whole value is one row. */
          per_key= d ? ulong(std::max<uint64_t>(1, (st[0] + d / 2) / d)) : 1;
          if (last && (k->flags & HA_NOSAME))
            per_key= 1;
        }
        k->rec_per_key[j]= per_key;
      }
      at+= k->user_defined_key_parts;
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
  reset_cursor();
  lock_rows= Riptide_row_lock::NONE;
  skip_locked= false;
  last_read= Last_read::NONE;
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

/* Begins the statement: session, statement savepoint (the session's: inside a
   multi-statement transaction, so a failing statement rolls back only itself),
   registration with the server. */
int ha_riptide::start_stmt(THD *thd, thr_lock_type lock_type)
{
  autoinc_rows_left= 0;
  /* A bulk load held from earlier autocommit statements ends before any other statement
     reads or changes a table (its rows become visible to it). */
  if (!settle_held_bulk_load(thd, &last_error))
    return HA_ERR_RIPTIDE;
  if (lock_type >= TL_WRITE_ALLOW_WRITE)
    lock_rows= Riptide_row_lock::EXCLUSIVE;
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  Riptide_trx *trx= get_trx(thd);
  bool multi= in_multi_statement(thd);
  /* Not for an ALTER TABLE copy's own session (session() returns it). */
  if (s == trx->txn)
  {
    char *err= nullptr;
    riptide_status_t st= begin_statement_waits(thd, trx, &err);
    if (st == RIPTIDE_OK && multi)
      st= riptide_hsession_begin_statement(s, &err);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
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
