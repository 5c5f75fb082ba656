/*
  In-place ALTER TABLE of secondary indexes (ALGORITHM=INPLACE): ADD INDEX, ADD UNIQUE,
  DROP INDEX, in any mix, without copying the table (the copy rewrites every row and every
  other index; an added index is only its own entries). And instant column changes
  (ALGORITHM=INSTANT): ADD COLUMN anywhere, DROP COLUMN, a new column order, a new DEFAULT
  or name, without touching a row (instant_column_obstacle says when not).

  - check_if_supported_inplace_alter: index additions and drops of secondary indexes, or
    column changes (INSTANT_COLUMN_CHANGES; not both in one statement), and what changes
    the .frm alone (key order, comments, the table's COMMENT, ignorability, a rename of
    the table). Anything
    else (a type change, the primary key, FULLTEXT/SPATIAL, long UNIQUE hash keys, a changed
    prefix length, partitioned tables) is left to the copy. Adding non-unique indexes is
    online (LOCK=NONE: HA_ALTER_INPLACE_NOCOPY_NO_LOCK, the exclusive metadata lock only
    for the prepare and the commit); adding a UNIQUE index takes LOCK=SHARED (reads go on,
    writes wait: each write would have to check the new index); dropping alone and column
    changes take no lock until the commit.
  - prepare: riptide_handler_begin_index_build allocates the new indexes' ids and records
    the build, so that a crash leaves nothing (the next start removes its entries). A column
    change computes the table's next row layout (Riptide_row_layout, record_codec.h).
  - prepare of an online build: riptide_hbuild_capture_changes makes the table record the
    primary key of every row writers change from then on (under the exclusive lock: no
    transaction has written the table yet).
  - inplace: one scan of the primary key in a session of its own; each row's key tuples
    for the new indexes (the new table's codec: same columns, new keys) go to
    riptide_hbuild_add; riptide_hbuild_finish finds a duplicate of a new UNIQUE index
    (ER_DUP_ENTRY with the value, as InnoDB).
  - commit of an online build (apply_online_changes, under the exclusive lock again: every
    writer has finished): each recorded row is read at the scan's snapshot (its session
    kept open) and as it is now; riptide_hbuild_apply_change moves the new indexes' entries
    from the keys of the one to those of the other. The record holds at most 128 MiB of
    keys: beyond that the ALTER fails and the table stays as it was (as InnoDB's
    innodb_online_alter_log_max_size). A bulk load holding rows of the table when the build
    began is refused at its commit; one that begins during the build writes the ordinary
    way.
  - commit: riptide_handler_commit_index_build writes the new index list (kept indexes by
    name, new ones where the new table has them) and the row layout
    (riptide_hbuild_set_caller_data), range-deletes the dropped indexes, and records the new
    .frm's tabledef_version, which MariaDB's recovery of an in-place ALTER interrupted by a
    crash asks for (riptide_check_version, hton.cc): if the engine committed, the new .frm
    is installed, otherwise the old one stays.
*/
#include <my_global.h>
#include "sql_class.h"
#include "log.h"
#include <mysql/service_progress_report.h>

#include <algorithm>
#include <vector>

#include "ha_riptide.h"
#include "riptide_shim.h"

namespace {

/* Index changes the in-place path builds or drops. */
constexpr alter_table_operations INDEX_CHANGES=
    ALTER_ADD_NON_UNIQUE_NON_PRIM_INDEX | ALTER_DROP_NON_UNIQUE_NON_PRIM_INDEX |
    ALTER_ADD_UNIQUE_INDEX | ALTER_DROP_UNIQUE_INDEX;

/* Changes of the .frm alone: nothing in Riptide depends on them (the index list is
   rewritten by name at commit, so a new key order is followed). */
constexpr alter_table_operations FRM_ONLY= ALTER_RENAME | ALTER_INDEX_ORDER |
                                           ALTER_CHANGE_INDEX_COMMENT |
                                           ALTER_INDEX_IGNORABILITY;

/* Column changes no row needs rewriting for: an added column anywhere (the rows written
   before it read the value it had when added), a dropped one (old rows keep its bytes, read
   past), a new order (rows hold columns in the order they were created: Riptide_row_layout),
   a new DEFAULT (rows hold their values) or name. */
constexpr alter_table_operations INSTANT_COLUMN_CHANGES=
    ALTER_ADD_STORED_BASE_COLUMN | ALTER_ADD_VIRTUAL_COLUMN | ALTER_DROP_STORED_COLUMN |
    ALTER_DROP_VIRTUAL_COLUMN | ALTER_STORED_COLUMN_ORDER | ALTER_VIRTUAL_COLUMN_ORDER |
    ALTER_COLUMN_DEFAULT | ALTER_COLUMN_NAME;

/* The changes among them that record a row layout. */
constexpr alter_table_operations LAYOUT_CHANGES=
    ALTER_ADD_STORED_BASE_COLUMN | ALTER_ADD_VIRTUAL_COLUMN | ALTER_DROP_STORED_COLUMN |
    ALTER_DROP_VIRTUAL_COLUMN | ALTER_STORED_COLUMN_ORDER | ALTER_VIRTUAL_COLUMN_ORDER;

/* Rows between two looks at KILL and progress reports. */
constexpr ha_rows BUILD_CHECK_EVERY= 4096;

/* The state of one in-place ALTER between its calls. Freed by the server; a build still
   open then (the ALTER failed before its commit) is aborted. */
class Riptide_inplace_ctx : public inplace_alter_handler_ctx
{
public:
  riptide_hbuild_t *build= nullptr;
  /* The new table's key numbers of the added indexes, in build order. */
  std::vector<uint> added;
  /* The row layout the commit records (Riptide_row_layout::serialize) after a column is
     added, dropped or moved; empty: the table's stays. */
  std::string layout;
  /* An online build (LOCK=NONE): writers go on during inplace_alter_table, and the table
     records the rows they change (riptide_hbuild_capture_changes). */
  bool online= false;
  /* An online build's scan session, kept open until the commit: the rows at the snapshot
     the build read, against which the changed rows are compared. */
  riptide_hsession_t *snapshot= nullptr;

  ~Riptide_inplace_ctx() override { abort(); }

  void release_snapshot()
  {
    riptide_hsession_destroy(snapshot);
    snapshot= nullptr;
  }

  void abort()
  {
    release_snapshot();
    if (!build)
      return;
    char *err= nullptr;
    riptide_status_t st= riptide_handler_abort_index_build(riptide_handler, build, &err);
    build= nullptr;
    if (st != RIPTIDE_OK)
      sql_print_warning("RIPTIDE: abandoning an in-place index build: %s (the next start "
                        "removes its entries)",
                        riptide_take_message(st, err).c_str());
  }
};

/* Why key `k` of the new table cannot be built in place (NULL: it can). */
const char *unbuildable(const KEY *k)
{
  if (k->flags & (HA_FULLTEXT | HA_SPATIAL))
    return "FULLTEXT and SPATIAL indexes are not supported";
  if (k->algorithm == HA_KEY_ALG_LONG_HASH)
    return "a long UNIQUE key (a hash of a hidden column) needs the copy";
  for (uint j= 0; j < k->user_defined_key_parts; j++)
    if (!k->key_part[j].field->stored_in_db())
      return "an index on a VIRTUAL column is not supported";
  return nullptr;
}

/* The key number in `altered_table` of the `j`-th added index (matched by name: the
   server lists added keys as positions in its key buffer); MAX_KEY if it has none. */
uint new_key_number(const TABLE *altered_table, const Alter_inplace_info *ha_alter_info,
                    uint j)
{
  const KEY *k= &ha_alter_info->key_info_buffer[ha_alter_info->index_add_buffer[j]];
  for (uint i= 0; i < altered_table->s->keys; i++)
    if (!my_strcasecmp(system_charset_info, altered_table->key_info[i].name.str, k->name.str))
      return i;
  return MAX_KEY;
}

/* Whether one of the added indexes is UNIQUE (then the build keeps writers out). */
bool adds_unique_index(const TABLE *altered_table, const Alter_inplace_info *ha_alter_info)
{
  for (uint j= 0; j < ha_alter_info->index_add_count; j++)
  {
    uint keynr= new_key_number(altered_table, ha_alter_info, j);
    if (keynr == MAX_KEY || (altered_table->key_info[keynr].flags & HA_NOSAME))
      return true;
  }
  return false;
}

/* Whether `f`'s DEFAULT is an expression whose value differs between rows (InnoDB's test:
   time and session functions are evaluated once per statement, so every old row can read
   the one value). */
bool non_constant_default(const Field *f)
{
  return f->default_value && (f->default_value->flags & uint(~(VCOL_SESSION_FUNC | VCOL_TIME_FUNC)));
}

/* The offset of a NULL bit's byte in the record, or -1 for a column without one. */
my_ptrdiff_t null_offset(const TABLE *t, const Field *f)
{
  return f->null_ptr ? f->null_ptr - t->record[0] : -1;
}

/* Per field of `altered_table`, the index of the field of `table` it is (the server's
   column list names it), or -1 for an added one; empty if the list does not match the new
   table. */
std::vector<int> old_fields_of(const TABLE *table, const TABLE *altered_table,
                               Alter_inplace_info *ha_alter_info)
{
  std::vector<int> old;
  List_iterator_fast<Create_field> it(ha_alter_info->alter_info->create_list);
  while (const Create_field *cf= it++)
  {
    uint j= uint(old.size());
    if (j >= altered_table->s->fields ||
        my_strcasecmp(system_charset_info, cf->field_name.str,
                      altered_table->field[j]->field_name.str))
      return {};
    int i= -1;
    if (cf->field)
    {
      for (uint k= 0; k < table->s->fields; k++)
        if (table->field[k] == cf->field)
          i= int(k);
      if (i < 0)
        return {};
    }
    old.push_back(i);
  }
  if (old.size() != altered_table->s->fields)
    return {};
  return old;
}

/* Why the column changes of `ha_alter_info` (INSTANT_COLUMN_CHANGES and FRM_ONLY alone)
   cannot be instant on `table` (key format `key_format`, `has_layout`: a row layout is
   recorded), or NULL if they can. The rows stay as they are, so every kept column keeps its
   definition and packing (and, while no layout is recorded, its NULL bit: format 3 rows
   hold the record's NULL bytes), and each added column has one value every old row can
   read. */
const char *instant_column_obstacle(TABLE *table, TABLE *altered_table,
                                    Alter_inplace_info *ha_alter_info, uint32_t key_format,
                                    bool has_layout)
{
  bool relayout= ha_alter_info->handler_flags & LAYOUT_CHANGES;
  if (relayout && key_format < KEY_FORMAT_PACKED_ROWS)
    return "the table was created before instant column changes and may hold rows in an "
           "older format; ALTER TABLE ... FORCE rebuilds it once";
  if (ha_alter_info->error_if_not_empty)
    return "the added column has no valid value for the existing rows";
  if (table->versioned() || altered_table->versioned())
    return "a system-versioned table needs the copy";
  std::vector<int> old= old_fields_of(table, altered_table, ha_alter_info);
  if (old.empty())
    return "the new column list cannot be matched with the old one";
  Riptide_codec before, after;
  Riptide_row_layout none;
  before.bind(table, key_format, none);
  after.bind(altered_table, key_format, none);
  std::vector<bool> kept(table->s->fields, false);
  for (uint j= 0; j < altered_table->s->fields; j++)
  {
    const Field *n= altered_table->field[j];
    if (old[j] < 0)
    {
      if (n->flags & AUTO_INCREMENT_FLAG)
        return "an added AUTO_INCREMENT column gives each row its own value";
      if (n->stored_in_db() && (n->vcol_info || non_constant_default(n)))
        return "the added column's value differs between rows";
      continue;
    }
    const Field *o= table->field[old[j]];
    kept[old[j]]= true;
    if (!o->eq_def(n) || o->stored_in_db() != n->stored_in_db() ||
        before.packing(old[j]) != after.packing(j))
      return "an existing column changes its definition";
    if (relayout || has_layout)
      continue;
    /* Format 3 rows stay the table's only rows: the record must not move. */
    if (uint(old[j]) != j || null_offset(table, o) != null_offset(altered_table, n) ||
        o->null_bit != n->null_bit)
      return "an existing column changes its place";
    if (o->type() == MYSQL_TYPE_BIT)
    {
      auto *ob= static_cast<const Field_bit *>(o), *nb= static_cast<const Field_bit *>(n);
      if (ob->bit_len != nb->bit_len || ob->bit_ofs != nb->bit_ofs ||
          (ob->bit_len &&
           ob->bit_ptr - table->record[0] != nb->bit_ptr - altered_table->record[0]))
        return "an existing BIT column changes its place";
    }
  }
  if (!relayout && altered_table->s->fields != table->s->fields)
    return "the column list changes";
  for (uint i= 0; i < table->s->fields; i++)
    if (!kept[i] && before.packing(i) == Riptide_codec::Column_packing::FROM_KEY)
      return "a dropped column is part of the primary key";
  return nullptr;
}

/* The value the rows written before column `i` of `altered_table` existed read for it:
   its DEFAULT, evaluated once (false, with ER_* raised, if it does not fit the column). */
bool added_column_value(TABLE *altered_table, uint i, Riptide_row_layout::Added_value *out)
{
  Field *f= altered_table->field[i];
  if (!f->stored_in_db())
  {
    /* A VIRTUAL column is computed on every read: any value does. */
    out->is_null= true;
    return true;
  }
  switch (f->set_default())
  {
  case 0:
  case 3:
    break;
  default:
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: the DEFAULT of added column %s does not fit it",
                    MYF(0), f->field_name.str);
    return false;
  }
  out->is_null= f->is_null();
  out->packed.clear();
  if (out->is_null)
    return true;
  size_t bound= f->pack_length() + 8;
  if (f->flags & BLOB_FLAG)
    bound+= static_cast<Field_blob *>(f)->get_length();
  out->packed.resize(bound);
  uchar *start= reinterpret_cast<uchar *>(&out->packed[0]);
  uchar *end= f->pack(start, f->ptr);
  out->packed.resize(size_t(end - start));
  return true;
}

} // namespace

enum_alter_inplace_result
ha_riptide::check_if_supported_inplace_alter(TABLE *altered_table,
                                             Alter_inplace_info *ha_alter_info)
{
  alter_table_operations ops= ha_alter_info->handler_flags;
  bool columns= ops & INSTANT_COLUMN_CHANGES;
  /* A new table COMMENT is the .frm's alone; other table options (AUTO_INCREMENT=,
     ROW_FORMAT, ...) go to the copy. */
  alter_table_operations frm_only= FRM_ONLY;
  if (!(ha_alter_info->create_info->used_fields & ~ulong(HA_CREATE_USED_COMMENT)))
    frm_only|= ALTER_OPTIONS;
  if (ops & ~((columns ? INSTANT_COLUMN_CHANGES : INDEX_CHANGES) | frm_only))
  {
    /* The reason the server gives with LOCK=NONE, as InnoDB's. */
    if (ops & ALTER_STORED_COLUMN_TYPE)
      ha_alter_info->unsupported_reason=
          my_get_err_msg(ER_ALTER_OPERATION_NOT_SUPPORTED_REASON_COLUMN_TYPE);
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  }
  /* A partitioned table, a temporary one, or a change of the primary key (a UNIQUE NOT
     NULL key the server would promote to primary key included): the copy. */
  if (open_name.find("#P#") != std::string::npos || table->s->tmp_table != NO_TMP_TABLE ||
      table->s->primary_key != altered_table->s->primary_key)
    return HA_ALTER_INPLACE_NOT_SUPPORTED;
  if (columns)
  {
    if (const char *why= instant_column_obstacle(table, altered_table, ha_alter_info,
                                                 share->key_format, share->layout.recorded))
    {
      ha_alter_info->unsupported_reason= why;
      return HA_ALTER_INPLACE_NOT_SUPPORTED;
    }
    return HA_ALTER_INPLACE_INSTANT;
  }
  for (uint j= 0; j < ha_alter_info->index_add_count; j++)
  {
    uint keynr= new_key_number(altered_table, ha_alter_info, j);
    if (keynr == MAX_KEY)
      return HA_ALTER_INPLACE_NOT_SUPPORTED;
    const KEY *k= &altered_table->key_info[keynr];
    if (const char *why= unbuildable(k))
    {
      ha_alter_info->unsupported_reason= why;
      return HA_ALTER_INPLACE_NOT_SUPPORTED;
    }
  }
  if (!ha_alter_info->index_add_count)
    return HA_ALTER_INPLACE_NO_LOCK;
  /* Non-unique indexes are built while writers go on (the exclusive lock only for the
     prepare, which starts recording the rows writers change, and for the commit); a
     unique one keeps writers out (each would have to check the new index). */
  return adds_unique_index(altered_table, ha_alter_info) ? HA_ALTER_INPLACE_SHARED_LOCK
                                                         : HA_ALTER_INPLACE_NOCOPY_NO_LOCK;
}

bool ha_riptide::prepare_inplace_alter_table(TABLE *altered_table,
                                             Alter_inplace_info *ha_alter_info)
{
  /* A prepared XA transaction's writes to the table are not in the database yet: the
     build would miss them (as the copy waits for them). */
  if (wait_for_prepared(open_name.c_str()))
    return true;
  Riptide_codec alt;
  alt.bind(altered_table, share->key_format, share->layout);
  auto *ctx= new Riptide_inplace_ctx;
  ha_alter_info->handler_ctx= ctx;
  if (ha_alter_info->handler_flags & LAYOUT_CHANGES)
  {
    /* The physical columns stay; a dropped one keeps its place, with how to step over
       its bytes; an added one goes last, with the value old rows read. */
    Riptide_row_layout next= share->layout.recorded ? share->layout
                                                    : Riptide_row_layout::of_format3(table);
    std::vector<int> old= old_fields_of(table, altered_table, ha_alter_info);
    if (old.empty())
    {
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: instant ALTER TABLE of %s: the new column "
                      "list cannot be matched with the old one", MYF(0),
                      table->s->table_name.str);
      return true;
    }
    for (Riptide_row_layout::Column &c : next.columns)
    {
      if (c.field == Riptide_row_layout::DROPPED)
        continue;
      auto at= std::find(old.begin(), old.end(), int(c.field));
      if (at == old.end())
      {
        c.skip= codec.skip_of(c.field);
        c.field= Riptide_row_layout::DROPPED;
      }
      else
        c.field= uint32_t(at - old.begin());
    }
    for (uint j= 0; j < altered_table->s->fields; j++)
    {
      if (old[j] >= 0)
        continue;
      Riptide_row_layout::Column c;
      c.field= j;
      c.added= true;
      if (!added_column_value(altered_table, j, &c.value))
        return true;
      next.columns.push_back(std::move(c));
    }
    if (next.columns.size() >= Riptide_row_layout::DROPPED ||
        !next.fits(altered_table->s->fields))
    {
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: instant ALTER TABLE of %s: the row layout "
                      "would hold %zu columns for %u", MYF(0), table->s->table_name.str,
                      next.columns.size(), altered_table->s->fields);
      return true;
    }
    ctx->layout= next.serialize();
  }
  std::vector<std::vector<uint32_t>> nulls;
  std::vector<riptide_new_index_t> specs;
  for (uint j= 0; j < ha_alter_info->index_add_count; j++)
  {
    uint keynr= new_key_number(altered_table, ha_alter_info, j);
    if (keynr == MAX_KEY)
    {
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: in-place ALTER TABLE of %s: a new index "
                      "is missing from the new definition", MYF(0), table->s->table_name.str);
      return true;
    }
    const KEY *k= &altered_table->key_info[keynr];
    ctx->added.push_back(keynr);
    nulls.push_back(alt.null_offsets(keynr));
    riptide_new_index_t spec{};
    spec.spec= {RIPTIDE_INDEX_SECONDARY, (k->flags & HA_NOSAME) != 0,
                uint16_t(k->user_defined_key_parts), k->name.str};
    specs.push_back(spec);
  }
  for (size_t j= 0; j < specs.size(); j++)
  {
    specs[j].null_offsets= nulls[j].data();
    specs[j].n_null_offsets= nulls[j].size();
  }
  char *err= nullptr;
  riptide_status_t st= riptide_handler_begin_index_build(
      riptide_handler, open_name.data(), open_name.size(), specs.data(), specs.size(),
      &ctx->build, &err);
  if (st != RIPTIDE_OK)
  {
    ctx->build= nullptr;
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: in-place ALTER TABLE of %s: %s", MYF(0),
                    table->s->table_name.str, riptide_take_message(st, err).c_str());
    return true;
  }
  /* Writers go on during the build (the server downgrades its lock after this prepare,
     which runs under the exclusive one: no transaction has written the table): from now
     on the table records the rows they change, for the commit to bring the new indexes up
     to date (apply_online_changes). */
  if (ha_alter_info->online && !specs.empty())
  {
    st= riptide_hbuild_capture_changes(riptide_handler, ctx->build, &err);
    if (st != RIPTIDE_OK)
    {
      ctx->abort();
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: online ALTER TABLE of %s: %s", MYF(0),
                      table->s->table_name.str, riptide_take_message(st, err).c_str());
      return true;
    }
    ctx->online= true;
  }
  return false;
}

bool ha_riptide::inplace_alter_table(TABLE *altered_table, Alter_inplace_info *ha_alter_info)
{
  auto *ctx= static_cast<Riptide_inplace_ctx *>(ha_alter_info->handler_ctx);
  if (!ctx || ctx->added.empty())
    return false;
  THD *thd= ha_thd();
  Riptide_codec alt;
  alt.bind(altered_table, share->key_format, share->layout);
  riptide_hsession_t *s= nullptr;
  riptide_hcursor_t *c= nullptr;
  char *err= nullptr;
  riptide_status_t st=
      riptide_hsession_begin(riptide_handler, RIPTIDE_HISO_REPEATABLE_READ, 0, &s, &err);
  if (st == RIPTIDE_OK)
    st= riptide_hcursor_create(share->table, 0, &c, &err);
  std::vector<uchar> rec(table->s->rec_buff_length);
  memcpy(rec.data(), table->s->default_values, table->s->reclength);
  std::string key, blobs, failure;
  riptide_hrow_t row{};
  ha_rows rows= 0, total= std::max<ha_rows>(stats.records, 1);
  bool failed= false, killed= false, duplicate= false;
  thd_progress_init(thd, 1);
  while (st == RIPTIDE_OK)
  {
    st= rows ? riptide_hcursor_next(s, c, nullptr, 0, &row, &err)
             : riptide_hcursor_first(s, c, &row, &err);
    if (st != RIPTIDE_OK || !row.found)
      break;
    if (!codec.unpack_row(row.row, row.row_len, row.pk, row.pk_len, rec.data(), &blobs,
                          &failure))
    {
      failed= true;
      break;
    }
    for (size_t n= 0; n < ctx->added.size() && st == RIPTIDE_OK; n++)
    {
      bool has_null= false;
      alt.encode_key(ctx->added[n], rec.data(), &key, &has_null);
      st= riptide_hbuild_add(ctx->build, n, key.data(), key.size(), row.pk, row.pk_len, &err);
    }
    if (++rows % BUILD_CHECK_EVERY == 0)
    {
      thd_progress_report(thd, rows, std::max(total, rows));
      if (thd_killed(thd))
      {
        failed= killed= true;
        break;
      }
    }
  }
  riptide_hcursor_destroy(c);
  /* An online build compares the rows writers changed with this snapshot at its commit. */
  if (ctx->online)
    ctx->snapshot= s;
  else
    riptide_hsession_destroy(s);
  size_t dup_index= 0, dup_pk_len= 0;
  char *dup_pk= nullptr;
  if (st == RIPTIDE_OK && !failed)
  {
    st= riptide_hbuild_finish(ctx->build, &dup_index, &dup_pk, &dup_pk_len, &err);
    duplicate= st == RIPTIDE_DUPLICATE_KEY && dup_index < ctx->added.size();
  }
  thd_progress_end(thd);
  if (duplicate)
  {
    riptide_free(err);
    /* ER_DUP_ENTRY with the value, from the row of one of the two. */
    uint keynr= ctx->added[dup_index];
    print_duplicate_row(altered_table, keynr, dup_pk, dup_pk_len);
    riptide_free(dup_pk);
    ctx->abort();
    return true;
  }
  riptide_free(dup_pk);
  if (st != RIPTIDE_OK || failed)
  {
    if (killed)
      my_error(ER_QUERY_INTERRUPTED, MYF(0));
    else
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: building the new indexes of %s: %s", MYF(0),
                      table->s->table_name.str,
                      failed ? failure.c_str() : riptide_take_message(st, err).c_str());
    ctx->abort();
    return true;
  }
  return false;
}

/* Reads row `pk` through session `s` into `rec` and encodes its keys of the added
   indexes into `keys`; `*found` tells whether the row exists. False, with the error
   raised, on a failure. */
bool ha_riptide::online_row_keys(riptide_hsession_t *s, Riptide_codec *alt,
                                 const std::vector<uint> &added, const char *pk,
                                 size_t pk_len, uchar *rec, std::string *blobs,
                                 std::vector<std::string> *keys, bool *found)
{
  char *v= nullptr, *err= nullptr;
  size_t len= 0;
  riptide_status_t st= riptide_hsession_get_row(s, share->table, pk, pk_len,
                                                RIPTIDE_ROW_LOCK_NONE, &v, &len, found, &err);
  if (st != RIPTIDE_OK)
  {
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: online ALTER TABLE of %s: reading a row "
                    "changed during the build: %s", MYF(0), table->s->table_name.str,
                    riptide_take_message(st, err).c_str());
    return false;
  }
  std::string failure;
  bool ok= !*found || codec.unpack_row(v, len, pk, pk_len, rec, blobs, &failure);
  riptide_free_value(v, len);
  if (!ok)
  {
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: online ALTER TABLE of %s: %s", MYF(0),
                    table->s->table_name.str, failure.c_str());
    return false;
  }
  if (*found)
    for (size_t n= 0; n < added.size(); n++)
    {
      bool has_null= false;
      alt->encode_key(added[n], rec, &(*keys)[n], &has_null);
    }
  return true;
}

/* The end of an online build, under the commit's exclusive lock (every writer has
   finished): each row writers changed since the build began is read at the build's
   snapshot and as it is now, and the new indexes' entries go from the keys of the one to
   those of the other. False, with the error raised, on a failure. */
bool ha_riptide::apply_online_changes(TABLE *altered_table, riptide_hbuild_t *build,
                                      riptide_hsession_t *snapshot,
                                      const std::vector<uint> &added)
{
  if (!snapshot)
  {
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: online ALTER TABLE of %s: the build's scan "
                    "did not run", MYF(0), table->s->table_name.str);
    return false;
  }
  char *err= nullptr;
  size_t count= 0;
  riptide_status_t st= riptide_hbuild_take_changed_rows(build, &count, &err);
  riptide_hsession_t *now= nullptr;
  if (st == RIPTIDE_OK)
    st= riptide_hsession_begin(riptide_handler, RIPTIDE_HISO_READ_COMMITTED, 0, &now, &err);
  if (st != RIPTIDE_OK)
  {
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: online ALTER TABLE of %s: %s", MYF(0),
                    table->s->table_name.str, riptide_take_message(st, err).c_str());
    return false;
  }
  Riptide_codec alt;
  alt.bind(altered_table, share->key_format, share->layout);
  std::vector<uchar> old_rec(table->s->rec_buff_length), new_rec(table->s->rec_buff_length);
  memcpy(old_rec.data(), table->s->default_values, table->s->reclength);
  memcpy(new_rec.data(), table->s->default_values, table->s->reclength);
  std::string old_blobs, new_blobs;
  std::vector<std::string> old_keys(added.size()), new_keys(added.size());
  bool ok= true;
  for (size_t i= 0; ok && i < count; i++)
  {
    const char *pk= nullptr;
    size_t pk_len= 0;
    bool was= false, is= false;
    st= riptide_hbuild_changed_row(build, i, &pk, &pk_len, &err);
    ok= st == RIPTIDE_OK &&
        online_row_keys(snapshot, &alt, added, pk, pk_len, old_rec.data(),
                        &old_blobs, &old_keys, &was) &&
        online_row_keys(now, &alt, added, pk, pk_len, new_rec.data(), &new_blobs,
                        &new_keys, &is);
    for (size_t n= 0; ok && n < added.size(); n++)
    {
      st= riptide_hbuild_apply_change(
          build, n, was ? old_keys[n].data() : nullptr, was ? old_keys[n].size() : 0,
          is ? new_keys[n].data() : nullptr, is ? new_keys[n].size() : 0, pk, pk_len, &err);
      ok= st == RIPTIDE_OK;
    }
    if (st != RIPTIDE_OK)
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: online ALTER TABLE of %s: %s", MYF(0),
                      table->s->table_name.str, riptide_take_message(st, err).c_str());
  }
  riptide_hsession_destroy(now);
  if (ok && count)
    sql_print_information("RIPTIDE: online ALTER TABLE of %s: %zu rows changed during the "
                          "index build, brought into the new indexes",
                          table->s->table_name.str, count);
  return ok;
}

/* Raises ER_DUP_ENTRY for key `keynr` of `altered_table` with the value the row of
   primary key `pk` holds (as InnoDB reports a duplicate its build found); without the
   row, with the key's name alone. */
void ha_riptide::print_duplicate_row(TABLE *altered_table, uint keynr, const char *pk,
                                     size_t pk_len)
{
  KEY *key= &altered_table->key_info[keynr];
  riptide_hsession_t *s= nullptr;
  char *err= nullptr, *v= nullptr;
  size_t len= 0;
  bool found= false;
  riptide_status_t st=
      riptide_hsession_begin(riptide_handler, RIPTIDE_HISO_READ_COMMITTED, 0, &s, &err);
  if (st == RIPTIDE_OK)
    st= riptide_hsession_get_row(s, share->table, pk, pk_len, RIPTIDE_ROW_LOCK_NONE, &v,
                                 &len, &found, &err);
  std::string blobs, failure;
  bool filled= st == RIPTIDE_OK && found &&
               codec.unpack_row(v, len, pk, pk_len, altered_table->record[0], &blobs, &failure);
  riptide_free_value(v, len);
  riptide_hsession_destroy(s);
  riptide_free(err);
  if (filled)
    print_keydup_error(altered_table, key, MYF(0));
  else
    my_error(ER_DUP_ENTRY_WITH_KEY_NAME, MYF(0), "?", key->name.str);
}

bool ha_riptide::commit_inplace_alter_table(TABLE *altered_table,
                                            Alter_inplace_info *ha_alter_info, bool commit)
{
  auto *ctx= static_cast<Riptide_inplace_ctx *>(ha_alter_info->handler_ctx);
  if (!ctx || !ctx->build)
    return false;
  if (!commit)
  {
    ctx->abort();
    return false;
  }
  /* The new index list: the hidden primary key first (a table without PRIMARY KEY), then
     each key of the new table, an added one from the build, a kept one by its name. */
  std::vector<riptide_index_slot_t> order;
  if (!has_pk)
    order.push_back({false, 0});
  for (uint i= 0; i < altered_table->s->keys; i++)
  {
    const KEY *k= &altered_table->key_info[i];
    auto added= std::find(ctx->added.begin(), ctx->added.end(), i);
    if (added != ctx->added.end())
    {
      order.push_back({true, size_t(added - ctx->added.begin())});
      continue;
    }
    uint old= table->s->keys;
    for (uint j= 0; j < table->s->keys; j++)
      if (!my_strcasecmp(system_charset_info, table->key_info[j].name.str, k->name.str))
        old= j;
    if (old == table->s->keys)
    {
      ctx->abort();
      my_printf_error(ER_UNKNOWN_ERROR,
                      "RIPTIDE: in-place ALTER TABLE of %s: index `%s` is neither kept nor "
                      "added",
                      MYF(0), table->s->table_name.str, k->name.str);
      return true;
    }
    order.push_back({false, rindex(old)});
  }
  if (ctx->online)
  {
    bool applied= apply_online_changes(altered_table, ctx->build, ctx->snapshot, ctx->added);
    ctx->release_snapshot();
    if (!applied)
    {
      ctx->abort();
      return true;
    }
  }
  const LEX_CUSTRING &version= altered_table->s->tabledef_version;
  char *err= nullptr;
  if (!ctx->layout.empty())
  {
    riptide_status_t st= riptide_hbuild_set_caller_data(ctx->build, ctx->layout.data(),
                                                        ctx->layout.size(), &err);
    if (st != RIPTIDE_OK)
    {
      ctx->abort();
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: instant ALTER TABLE of %s: %s", MYF(0),
                      table->s->table_name.str, riptide_take_message(st, err).c_str());
      return true;
    }
  }
  riptide_status_t st= riptide_handler_commit_index_build(
      riptide_handler, ctx->build, order.data(), order.size(),
      reinterpret_cast<const char *>(version.str), version.length, &err);
  ctx->build= nullptr;
  if (st != RIPTIDE_OK)
  {
    my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: in-place ALTER TABLE of %s: %s", MYF(0),
                    table->s->table_name.str, riptide_take_message(st, err).c_str());
    return true;
  }
  /* This handler's table is the old definition until the server reopens it. */
  close_cursor();
  return false;
}
