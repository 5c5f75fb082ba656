/*
  Riptide_alter_copy: an ALTER TABLE copy committed in pieces. See alter_copy.h.
*/
#include "alter_copy.h"

riptide_status_t Riptide_alter_copy::begin(riptide_handler_t *h, const std::string &table,
                                           bool mark, char **err)
{
  abort();
  handler= h;
  name= table;
  marked= false;
  committed= 0;
  if (mark)
  {
    riptide_status_t st=
        riptide_handler_mark_temporary(handler, name.data(), name.size(), true, err);
    if (st != RIPTIDE_OK)
      return st;
    marked= true;
  }
  riptide_status_t st= begin_piece(err);
  if (st != RIPTIDE_OK && marked &&
      riptide_handler_mark_temporary(handler, name.data(), name.size(), false, nullptr) ==
          RIPTIDE_OK)
    marked= false;
  return st;
}

riptide_status_t Riptide_alter_copy::begin_piece(char **err)
{
  piece_rows= 0;
  piece_bytes= 0;
  /* Nothing else reads or writes the #sql table: the isolation level only decides what
     the unique checks see, and they read the newest committed rows at any level. */
  riptide_status_t st=
      riptide_hsession_begin(handler, RIPTIDE_HISO_READ_COMMITTED, 0, &txn, err);
  if (st != RIPTIDE_OK)
    txn= nullptr;
  return st;
}

riptide_status_t Riptide_alter_copy::commit_piece(char **err)
{
  riptide_status_t st= riptide_hsession_commit(txn, err);
  riptide_hsession_destroy(txn);
  txn= nullptr;
  if (st == RIPTIDE_OK)
    committed+= piece_rows;
  return st;
}

riptide_status_t Riptide_alter_copy::row_written(size_t bytes, char **err)
{
  piece_rows++;
  piece_bytes+= bytes;
  if (piece_rows < COPY_COMMIT_ROWS && piece_bytes < COPY_COMMIT_BYTES)
    return RIPTIDE_OK;
  riptide_status_t st= commit_piece(err);
  if (st != RIPTIDE_OK)
    return st;
  return begin_piece(err);
}

riptide_status_t Riptide_alter_copy::finish(char **err)
{
  if (!txn)
    return RIPTIDE_OK;
  riptide_status_t st= commit_piece(err);
  if (st != RIPTIDE_OK || !marked)
    return st;
  marked= false;
  return riptide_handler_mark_temporary(handler, name.data(), name.size(), false, err);
}

void Riptide_alter_copy::abort()
{
  marked= false;
  if (!txn)
    return;
  /* A failed rollback leaves nothing to undo that matters: the server drops the table. */
  riptide_status_t st= riptide_hsession_rollback(txn, nullptr);
  (void) st;
  riptide_hsession_destroy(txn);
  txn= nullptr;
}

bool riptide_is_alter_copy_name(const std::string &name)
{
  size_t slash= name.find_last_of("/\\");
  size_t base= slash == std::string::npos ? 0 : slash + 1;
  /* tmp_file_prefix "#sql" + "-alter-" (sql_table.cc, Alter_table_ctx::tmp_name). */
  return name.compare(base, 11, "#sql-alter-") == 0;
}
