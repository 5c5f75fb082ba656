/*
  ha_riptide: the MariaDB handler of Riptide (ENGINE=RIPTIDE).

  A thin C++ layer: it turns MariaDB rows and keys into bytes (record_codec.h) and forwards
  every operation to the Riptide C ABI (crates/capi/include/riptide.h), which owns the key
  layout, cursors, sessions and statements. Files: ha_riptide.cc (reads), writes.cc,
  statement.cc (locks and the statement's start and end), ddl.cc (table-level operations),
  alter_inplace.cc (in-place index changes), transactions.cc (the handlerton's transactions and XA),
  sysvars.cc, hton.cc. Layout, transactions and the known gaps: plugin-shim/README.md.
*/
#pragma once

#include <my_global.h>
#include "handler.h"
#include "thr_lock.h"

#include <cstdint>
#include <string>
#include <vector>

#include "riptide.h"
#include "alter_copy.h"
#include "record_codec.h"

/* Per-table state shared by every open handler of one table (one TABLE_SHARE). */
class Riptide_share : public Handler_share
{
public:
  THR_LOCK lock;
  /* The table in Riptide's data dictionary (crates/handler): indexes, counters. */
  riptide_htable_t *table= nullptr;
  /* The shim's key format the table was created with (riptide_htable_key_format; 0 and 1:
     the original encoding; KEY_FORMAT_* in record_codec.h). */
  uint32_t key_format= 0;
  /* The table's row layouts after instant column changes (riptide_htable_caller_data; not
     recorded: none). */
  Riptide_row_layout layout;
  /* The ALTER TABLE copy running into this (#sql-alter) table, if any: its session is the
     one every handler of the table reads and writes through, so that the server's lookup
     handler (a clone of the writing one, used by long UNIQUE duplicate checks) sees the
     rows copied so far. Only the ALTER's connection can open the table. */
  class Riptide_alter_copy *active_copy= nullptr;

  Riptide_share() { thr_lock_init(&lock); }
  ~Riptide_share() override
  {
    riptide_htable_release(table);
    thr_lock_delete(&lock);
  }
};

/* How rows read by the current statement are locked. */
enum class Riptide_row_lock
{
  NONE,
  SHARED,
  EXCLUSIVE
};

class ha_riptide final : public handler
{
public:
  ha_riptide(handlerton *hton, TABLE_SHARE *table_arg);
  ~ha_riptide() override;

  const char *index_type(uint) override { return "LSM"; }
  ulonglong table_flags() const override;
  ulong index_flags(uint inx, uint part, bool all_parts) const override;
  uint max_supported_record_length() const override { return HA_MAX_REC_LENGTH; }
  uint max_supported_keys() const override { return MAX_INDEXES; }
  uint max_supported_key_parts() const override { return MAX_REF_PARTS; }
  uint max_supported_key_length() const override { return 3072; }
  uint max_supported_key_part_length() const override { return 3072; }

  int open(const char *name, int mode, uint test_if_locked) override;
  int close(void) override;
  int create(const char *name, TABLE *form, HA_CREATE_INFO *create_info) override;
  int delete_table(const char *name) override;
  int truncate() override;
  int rename_table(const char *from, const char *to) override;

  int write_row(const uchar *buf) override;
  int update_row(const uchar *old_data, const uchar *new_data) override;
  int delete_row(const uchar *buf) override;

  int rnd_init(bool scan) override;
  int rnd_end() override;
  int rnd_next(uchar *buf) override;
  int rnd_pos(uchar *buf, uchar *pos) override;
  void position(const uchar *record) override;

  int index_init(uint idx, bool sorted) override;
  int index_end() override;
  int index_read_map(uchar *buf, const uchar *key, key_part_map keypart_map,
                     enum ha_rkey_function find_flag) override;
  int index_next(uchar *buf) override;
  int index_next_same(uchar *buf, const uchar *key, uint keylen) override;
  int index_prev(uchar *buf) override;
  int index_first(uchar *buf) override;
  int index_last(uchar *buf) override;
  void unlock_row() override;
  void update_create_info(HA_CREATE_INFO *create_info) override;
  void get_auto_increment(ulonglong offset, ulonglong increment, ulonglong nb_desired_values,
                          ulonglong *first_value, ulonglong *nb_reserved_values) override;

  Item *idx_cond_push(uint keyno, Item *idx_cond) override;
  int info(uint flag) override;
  int extra(enum ha_extra_function operation) override;
  int reset() override;
  int external_lock(THD *thd, int lock_type) override;
  int start_stmt(THD *thd, thr_lock_type lock_type) override;
  THR_LOCK_DATA **store_lock(THD *thd, THR_LOCK_DATA **to,
                             enum thr_lock_type lock_type) override;
  ha_rows records_in_range(uint inx, const key_range *min_key,
                           const key_range *max_key, page_range *pages) override;
  double read_time(uint index, uint ranges, ha_rows rows) override;
  bool get_error_message(int error, String *buf) override;
  int check(THD *thd, HA_CHECK_OPT *check_opt) override;

  /* In-place ALTER TABLE of secondary indexes (alter_inplace.cc). */
  enum_alter_inplace_result check_if_supported_inplace_alter(
      TABLE *altered_table, Alter_inplace_info *ha_alter_info) override;
  bool prepare_inplace_alter_table(TABLE *altered_table,
                                   Alter_inplace_info *ha_alter_info) override;
  bool inplace_alter_table(TABLE *altered_table, Alter_inplace_info *ha_alter_info) override;
  bool commit_inplace_alter_table(TABLE *altered_table, Alter_inplace_info *ha_alter_info,
                                  bool commit) override;
  int analyze(THD *thd, HA_CHECK_OPT *check_opt) override;
  int optimize(THD *thd, HA_CHECK_OPT *check_opt) override;
  /* ANALYZE TABLE's index statistics: the distinct prefixes of every index (ddl.cc). */
  int analyze_indexes(THD *thd, uint64_t rows, uint points);
  /* ANALYZE's positioning: reads the first entry of the active index at or after the
     index-relative key tuple `tuple` (from riptide_htable_sample_index) into `buf`. */
  int sample_seek(uchar *buf, const std::string &tuple);

  /* CHECK TABLE's callback (riptide_hkeys_fn): the secondary keys of a row stored under
     primary key bytes `pk`. */
  bool keys_of_stored_row(const char *pk, size_t pk_len, const char *row, size_t row_len,
                          riptide_hkey_t *keys, size_t nkeys);

private:
  /* How the last row was read: unlock_row releases its locks through the same road. */
  enum class Last_read
  {
    NONE,
    /* Through the cursor (riptide_hcursor_unlock_current). */
    CURSOR,
    /* By its reference (rnd_pos: riptide_hsession_unlock_row). */
    POINT
  };

  Riptide_share *share= nullptr;
  THR_LOCK_DATA lock_data;
  bool has_pk= false;
  /* The table name open() was given ("./db/t", or "./db/t#P#p0" for a partition): the
     table's name in Riptide's data dictionary. */
  std::string open_name;
  /* The table's keys and rows as bytes (bound at open). */
  Riptide_codec codec;
  /* The cursor of the current scan, over Riptide index cursor_index (made by the first
     rnd_init / index_init of an index and kept while the handler reads that index). */
  riptide_hcursor_t *cursor= nullptr;
  uint cursor_index= 0;
  /* The RIPTIDE_HCURSOR_* mode last given to the cursor. */
  int32_t cursor_mode= RIPTIDE_HCURSOR_SNAPSHOT;
  /* The cursor may hold an iterator, moved rows, a range end or a keys-only grant (a call
     other than riptide_hcursor_get was made since its last reset): reset_cursor resets it. */
  bool cursor_dirty= false;
  /* A range end is set on the cursor (set_range_end). */
  bool range_end_set= false;
  /* What the last cursor call returned (views into the cursor until its next call). */
  riptide_hrow_t row_{};
  /* The reference of the row read last (its primary key tuple, or its hidden row id):
     position() of a table without a primary key, and its updates and deletes. */
  std::string cur_ref;
  Last_read last_read= Last_read::NONE;
  /* rnd_next has positioned the cursor (false right after rnd_init). */
  bool scan_positioned= false;
  /* The cursor reads key tuples only, and rows are filled in from them (plan_keyread). */
  bool keys_only= false;
  Riptide_row_lock lock_rows= Riptide_row_lock::NONE;
  /* SELECT ... SKIP LOCKED (TL_*_SKIP_LOCKED): locking reads skip rows other transactions
     hold instead of waiting. */
  bool skip_locked= false;
  /* Scratch buffers. */
  std::string key_buf;
  std::string entry_check_buf;
  std::string val_buf;
  /* Blob bodies of the row read last (the record's blob pointers point here): valid until
     the next row read on this handler. */
  std::string blob_buf;
  /* CHECK TABLE's scratch record, its blob bodies and secondary keys. */
  std::vector<uchar> check_rec;
  std::string check_blobs;
  /* Secondary keys of a row: bytes, and the riptide_hkey_t views of them. */
  std::vector<std::string> sec_bufs, old_sec_bufs;
  std::vector<riptide_hkey_t> sec_keys, old_sec_keys;
  /* Auto-increment values the statement's first get_auto_increment asked for that its
     rows have not used yet (InnoDB's trx->n_autoinc_rows); 0 at each statement start. */
  ulonglong autoinc_rows_left= 0;
  /* Message of the last HA_ERR_RIPTIDE. */
  std::string last_error;
  /* An ALTER TABLE copy into this (#sql-alter) table, committed in pieces: between
     extra(HA_EXTRA_BEGIN_COPY) and HA_EXTRA_END_COPY / HA_EXTRA_ABORT_COPY, rows go to its
     session, not the connection's (alter_copy.h). */
  Riptide_alter_copy alter_copy;

  Riptide_share *get_share(const char *name, int *error);
  riptide_hsession_t *session(int *error);
  int status_error(riptide_status_t st, char *msg);
  int row_error(riptide_status_t st, char *err, size_t dup_index);
  /* MariaDB key number <-> Riptide index number. */
  uint rindex(uint keynr) const { return has_pk ? keynr : keynr + 1; }
  uint keynr_of(size_t rindex) const { return has_pk ? uint(rindex) : uint(rindex) - 1; }
  void encode_pk(const uchar *record, std::string *out);
  void encode_secondary(const uchar *record, std::vector<std::string> *bufs,
                        std::vector<riptide_hkey_t> *keys);
  int check_row_size(const uchar *buf, size_t key_len);
  int unpack_row(const char *value, size_t len, const char *pk, size_t pk_len, uchar *buf,
                 std::string *blobs);
  int use_cursor(uint index);
  void reset_cursor();
  void close_cursor();
  int32_t wanted_cursor_mode() const;
  int set_cursor_mode(int32_t mode);
  void plan_keyread(riptide_hsession_t *s);
  int set_range_end(bool forward);
  int row_from_cursor(uchar *buf, bool *rejected);
  int deliver(riptide_hsession_t *s, uchar *buf, bool forward, const std::string *within);
  int cursor_status(riptide_status_t st, char *err);
  int pushed_condition(uchar *buf);
  int icp_error(int verdict);
  int index_step(uchar *buf, bool forward);
  void observe_autoinc(const uchar *record);
  int wait_for_prepared(const char *name);
  void print_duplicate_row(TABLE *altered_table, uint keynr, const char *pk, size_t pk_len);
  bool apply_online_changes(TABLE *altered_table, riptide_hbuild_t *build,
                            riptide_hsession_t *snapshot, const std::vector<uint> &added);
  bool online_row_keys(riptide_hsession_t *s, Riptide_codec *alt,
                       const std::vector<uint> &added, const char *pk, size_t pk_len,
                       uchar *rec, std::string *blobs, std::vector<std::string> *keys,
                       bool *found);
  int begin_alter_copy();
  int end_alter_copy();
  void abort_alter_copy();
};
