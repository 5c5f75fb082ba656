/*
  ha_riptide's writes: INSERT, UPDATE, DELETE of rows (their key tuples and values go to the
  session, which keeps every index in step and checks unique keys) and auto-increment.
*/
#include <my_global.h>
#include "sql_class.h"
#include "log.h"

#include "ha_riptide.h"
#include "riptide_shim.h"
#include "transactions.h"

void ha_riptide::encode_pk(const uchar *record, std::string *out)
{
  bool has_null= false;
  codec.encode_key(table->s->primary_key, record, out, &has_null);
}

/* The secondary keys of `record`, one per Riptide secondary index, in `keys` (views of
   `bufs`). */
void ha_riptide::encode_secondary(const uchar *record, std::vector<std::string> *bufs,
                                  std::vector<riptide_hkey_t> *keys)
{
  codec.encode_secondary(record, has_pk ? 1 : 0, bufs, keys);
}

/* Refuses a row the engine could not store as one entry (riptide_max_key_value_len, 1 GiB:
   a row with BLOB/TEXT bodies that large) before its value is built. Such a write used to
   be accepted, then failed every flush and the next start. 0 or HA_ERR_RIPTIDE with the
   sizes. */
int ha_riptide::check_row_size(const uchar *buf, size_t key_len)
{
  size_t len= codec.entry_size(buf, key_len);
  size_t limit= riptide_max_key_value_len();
  if (len <= limit)
    return 0;
  last_error= "a row of about " + std::to_string(len) + " bytes (primary key, columns and BLOB/TEXT " +
              "bodies) for table " + std::string(table->s->path.str) + " is larger than " +
              "RIPTIDE's limit of " + std::to_string(limit) + " bytes for one row";
  return HA_ERR_RIPTIDE;
}

/* Records an auto-increment value stored explicitly, so later ones come after it. */
void ha_riptide::observe_autoinc(const uchar *record)
{
  Field *f= table->found_next_number_field;
  if (!f || record != table->record[0] || f->is_null())
    return;
  longlong v= f->val_int();
  if (!f->is_unsigned() && v <= 0)
    return;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_observe_autoinc(share->table, ulonglong(v), &err);
  if (st != RIPTIDE_OK)
    sql_print_warning("RIPTIDE: auto-increment of %s: %s", table->s->path.str,
                      riptide_take_message(st, err).c_str());
}

/* SHOW CREATE TABLE and ALTER TABLE (copy) see Riptide's auto-increment counter. */
void ha_riptide::update_create_info(HA_CREATE_INFO *create_info)
{
  if (!(create_info->used_fields & HA_CREATE_USED_AUTO))
  {
    info(HA_STATUS_AUTO);
    create_info->auto_increment_value= stats.auto_increment_value;
  }
}

void ha_riptide::get_auto_increment(ulonglong offset, ulonglong increment,
                                    ulonglong nb_desired_values, ulonglong *first_value,
                                    ulonglong *nb_reserved_values)
{
  /* As InnoDB: the server's nb_desired_values is only right at the statement's first call
     (the rows of a multi-row INSERT); later calls in the statement (after an explicit value
     moved the counter past the reserved interval) ask for a growing default. So the first
     call's count is kept and counted down as rows are written, and a later call reserves
     only the rows still to come: INSERT ... VALUES (NULL), (100), (NULL) leaves the
     counter at 102, not 103. */
  if (autoinc_rows_left == 0)
    autoinc_rows_left= nb_desired_values ? nb_desired_values : 1;
  ulonglong n= autoinc_rows_left;
  uint64_t first= 0;
  char *err= nullptr;
  riptide_status_t st= riptide_htable_reserve_autoinc(share->table, n, offset, increment,
                                                      &first, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: reserve auto-increment of %s: %s", table->s->path.str,
                    riptide_take_message(st, err).c_str());
    /* The server turns this into ER_AUTOINC_READ_FAILED. */
    *first_value= ULONGLONG_MAX;
    *nb_reserved_values= 0;
    return;
  }
  /* As InnoDB: the counter never passes the column's largest value + 1 (a reservation
     beyond it ends in "Out of range" and must not move AUTO_INCREMENT=). */
  riptide_htable_cap_autoinc(share->table, table->next_number_field->get_max_int_value());
  *first_value= first;
  *nb_reserved_values= n;
}

int ha_riptide::write_row(const uchar *buf)
{
  if (table->next_number_field && buf == table->record[0])
  {
    int error= update_auto_increment();
    /* One row of the statement's auto-increment count is used (get_auto_increment). */
    if (autoinc_rows_left > 0)
      autoinc_rows_left--;
    if (error)
      return error;
  }
  if (alter_copy.failed_marked())
  {
    last_error= "ALTER TABLE copy into " + open_name +
                ": the table is marked temporary and its copy session could not begin";
    return HA_ERR_RIPTIDE;
  }
  int error= 0;
  /* Rows of an ALTER TABLE copy go to the copy's own session (session() returns it),
     committed in pieces. */
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  /* A table without a primary key: the session gives the row a new hidden row id. */
  if (has_pk)
    encode_pk(buf, &key_buf);
  else
    key_buf.clear();
  if (int error= check_row_size(buf, has_pk ? key_buf.size() : 8))
    return error;
  encode_secondary(buf, &sec_bufs, &sec_keys);
  codec.pack_row(buf, &val_buf);
  uchar hidden_ref[8];
  size_t dup= SIZE_MAX;
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_insert(
      s, share->table, key_buf.data(), key_buf.size(), sec_keys.data(), sec_keys.size(),
      val_buf.data(), val_buf.size(), hidden_ref, &dup, &err);
  if (st != RIPTIDE_OK)
    return row_error(st, err, dup);
  if (!has_pk)
    cur_ref.assign(reinterpret_cast<const char *>(hidden_ref), sizeof hidden_ref);
  observe_autoinc(buf);
  if (alter_copy.active())
  {
    size_t bytes= (has_pk ? key_buf.size() : 8) + val_buf.size();
    for (const std::string &k : sec_bufs)
      bytes+= k.size() + key_buf.size();
    st= alter_copy.row_written(bytes, &err);
    if (st != RIPTIDE_OK)
      return status_error(st, err);
  }
  return 0;
}

int ha_riptide::update_row(const uchar *old_data, const uchar *new_data)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  std::string old_pk;
  if (has_pk)
  {
    encode_pk(old_data, &old_pk);
    encode_pk(new_data, &key_buf);
  }
  else
  {
    old_pk= cur_ref;
    key_buf= cur_ref;
  }
  if (int error= check_row_size(new_data, key_buf.size()))
    return error;
  encode_secondary(old_data, &old_sec_bufs, &old_sec_keys);
  encode_secondary(new_data, &sec_bufs, &sec_keys);
  codec.pack_row(new_data, &val_buf);
  size_t dup= SIZE_MAX;
  char *err= nullptr;
  /* The scan in progress, if any: a row whose entry in the scanned index moves (a new
     primary key, or new key parts of that index) is not met again under its new key (the
     Halloween problem; the cursor decides). */
  riptide_hcursor_t *scan= inited != NONE ? cursor : nullptr;
  if (scan)
    cursor_dirty= true;
  riptide_status_t st= riptide_hsession_update(
      s, share->table, old_pk.data(), old_pk.size(), old_sec_keys.data(), key_buf.data(),
      key_buf.size(), sec_keys.data(), sec_keys.size(), val_buf.data(), val_buf.size(), scan,
      &dup, &err);
  if (st != RIPTIDE_OK)
    return row_error(st, err, dup);
  observe_autoinc(new_data);
  return 0;
}

int ha_riptide::delete_row(const uchar *buf)
{
  int error= 0;
  riptide_hsession_t *s= session(&error);
  if (!s)
    return error;
  if (has_pk)
    encode_pk(buf, &key_buf);
  else
    key_buf= cur_ref;
  encode_secondary(buf, &sec_bufs, &sec_keys);
  char *err= nullptr;
  riptide_status_t st= riptide_hsession_delete(s, share->table, key_buf.data(), key_buf.size(),
                                               sec_keys.data(), sec_keys.size(), &err);
  if (st != RIPTIDE_OK)
    return status_error(st, err);
  return 0;
}
