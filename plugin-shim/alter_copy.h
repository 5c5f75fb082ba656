/*
  Riptide_alter_copy: the rows an ALTER TABLE copy (ALGORITHM=COPY: ADD INDEX, FORCE, ADD
  COLUMN...) writes into the new RIPTIDE table, committed in pieces so memory stays bounded.

  The server copies every row of the old table into a new table under a temporary name
  (`#sql-alter-...`) and calls handler::extra(HA_EXTRA_BEGIN_COPY) on it before the first
  row, HA_EXTRA_END_COPY after the last one and HA_EXTRA_ABORT_COPY when the copy fails.
  Kept in the connection's transaction, the whole copy would sit in memory until the end
  (every key, lock and undo record: 4 tables x 250,000 rows needed 1.6 GB). Instead the
  new table gets a Riptide session of its own, committed every COPY_COMMIT_ROWS rows or
  COPY_COMMIT_BYTES bytes (as InnoDB, which writes no undo for an ALTER copy, and MyRocks'
  rocksdb_commit_in_the_middle).

  Nothing else can see the #sql table, and a failed copy ends with the server dropping it
  (with every committed piece: one range delete per index). A crash mid-copy: while rows
  are copied, the table is marked temporary in Riptide's dictionary (the `P` mark of
  CREATE TEMPORARY TABLE), so the next start drops it with its rows even if the server's
  DDL log did not; the mark is removed once the last piece is committed, after which the
  server's DDL recovery owns the table (rename into place or drop), as for any engine.
*/
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "riptide.h"

/* A piece is committed after this many rows... */
constexpr uint64_t COPY_COMMIT_ROWS= 10000;
/* ...or this many bytes of keys and row values, whichever comes first. */
constexpr uint64_t COPY_COMMIT_BYTES= 8 * 1024 * 1024;

class Riptide_alter_copy
{
public:
  Riptide_alter_copy()= default;
  Riptide_alter_copy(const Riptide_alter_copy &)= delete;
  Riptide_alter_copy &operator=(const Riptide_alter_copy &)= delete;
  ~Riptide_alter_copy() { abort(); }

  /* Whether a copy is running (begin() succeeded, neither finish() nor abort() since). */
  bool active() const { return txn != nullptr; }

  /* begin() failed after marking the table and could not remove the mark: rows must not
     be copied (the table would be dropped at the next start), until abort(). */
  bool failed_marked() const { return marked && !txn; }

  /* The session the copied rows go to (NULL when not active()). */
  riptide_hsession_t *session() const { return txn; }

  /* Begins the copy into table `name` of `handler`: marks it temporary when `mark` (never
     for a TEMPORARY table, which is marked already and must stay so: finish() unmarks) and
     begins the first piece. On failure nothing is left running; *err as the C ABI
     returns it. */
  riptide_status_t begin(riptide_handler_t *handler, const std::string &name, bool mark,
                         char **err);

  /* Counts a row written to session() (`bytes`: its keys and value) and commits the piece
     when it holds COPY_COMMIT_ROWS rows or COPY_COMMIT_BYTES bytes, beginning the next
     one. On failure the copy is over (the open piece rolled back). */
  riptide_status_t row_written(size_t bytes, char **err);

  /* Commits the last piece and removes the temporary mark: the table is complete. On
     failure the copy is over; the mark stays (the server drops the table). */
  riptide_status_t finish(char **err);

  /* Rolls back the open piece, if any (a failed copy: the server drops the table, with
     the pieces committed before), and forgets the copy. */
  void abort();

  /* Rows committed so far in this copy (for tests and the log). */
  uint64_t committed_rows() const { return committed; }

private:
  riptide_status_t begin_piece(char **err);
  riptide_status_t commit_piece(char **err);

  riptide_handler_t *handler= nullptr;
  std::string name;
  bool marked= false;
  riptide_hsession_t *txn= nullptr;
  uint64_t piece_rows= 0, piece_bytes= 0, committed= 0;
};

/* Whether table path `name` ("./db/#sql-alter-..." or a partition of one) is a name the
   server gives the new table of an ALTER TABLE copy. */
bool riptide_is_alter_copy_name(const std::string &name);
