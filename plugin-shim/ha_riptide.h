/*
  ha_riptide: the MariaDB handler of Riptide (ENGINE=RIPTIDE).

  A thin C++ layer: it turns MariaDB rows and keys into bytes and forwards every operation to
  the Riptide C ABI (crates/capi/include/riptide.h). Layout, transactions and the known gaps
  of this milestone: plugin-shim/README.md.
*/
#pragma once

#include <my_global.h>
#include "handler.h"
#include "thr_lock.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <unordered_set>
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
  /* Per Riptide index (0: primary or hidden key, then the secondary indexes in MariaDB key
     order): the bytes every key of the index starts with in an iterator. */
  std::vector<std::string> prefixes;
  /* The shim's key format the table was created with (riptide_htable_key_format; 0 and 1:
     the original encoding; KEY_FORMAT_* in ha_riptide.cc). */
  uint32_t key_format= 0;
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
  int analyze(THD *thd, HA_CHECK_OPT *check_opt) override;
  int optimize(THD *thd, HA_CHECK_OPT *check_opt) override;

  /* Frees the iterator: called before the connection's transaction ends. */
  void drop_iterator();
  /* CHECK TABLE's callback (riptide_hkeys_fn): the secondary keys of a stored row. */
  bool keys_of_stored_row(const char *row, size_t row_len, riptide_hkey_t *keys, size_t nkeys);

private:
  Riptide_share *share= nullptr;
  THR_LOCK_DATA lock_data;
  bool has_pk= false;
  /* The table name open() was given ("./db/t", or "./db/t#P#p0" for a partition): the
     table's name in Riptide's data dictionary. */
  std::string open_name;
  /* The key (index prefix included) the iterator returned last: re-seeks after point reads. */
  std::string cur_key;
  /* The primary key (or hidden row id) of the row read last: position(), hidden-key
     updates and deletes. */
  std::string cur_pk;
  /* The iterator is not on cur_key (a point read happened): re-seek before moving. */
  bool iter_stale= false;
  /* rnd_next has positioned the iterator (false right after rnd_init). */
  bool scan_positioned= false;
  /* This index read fills rows from the index entries (plan_keyread). */
  bool decode_from_key= false;
  riptide_txn_iter_t *iter= nullptr;
  /* Riptide index the iterator runs over (0: primary / hidden key). */
  uint iter_index= 0;
  /* The iterator is a locking one (made while lock_rows was not NONE): it reads the newest
     committed rows, locks each row it returns and, under REPEATABLE READ and SERIALIZABLE,
     the gaps it walks (riptide_hsession_iter_create_locking). */
  bool iter_locking= false;
  /* The iterator reads the newest committed entries without locks: a long UNIQUE key's
     duplicate check (hash_lookup_prepare); the rows it finds are read locked. */
  bool iter_current= false;
  Riptide_row_lock lock_rows= Riptide_row_lock::NONE;
  /* SELECT ... SKIP LOCKED (TL_*_SKIP_LOCKED): locking reads skip rows other transactions
     hold instead of waiting. */
  bool skip_locked= false;
  /* Where the current range ends (from handler::end_range, taken when a read positions the
     iterator), as a stop key for forward steps; empty: none (range_stop_of). */
  std::string range_stop;
  /* The stop key set on the iterator now (riptide_txn_iter_set_stop; empty: none). */
  std::string iter_stop;
  /* The row read last was locked by this handler (a locking read): unlock_row may release
     it. Its secondary index entry, when it was reached through one (Riptide index
     locked_index), else empty. */
  bool row_locked= false;
  uint locked_index= 0;
  std::string locked_entry;
  /* Primary keys (prefixed) this statement moved a row to while scanning: not read again
     by the scan (the Halloween problem). */
  std::unordered_set<std::string> moved_keys;
  /* The table's keys and rows as bytes (bound at open). */
  Riptide_codec codec;
  /* Scratch buffers. */
  std::string key_buf;
  std::string entry_check_buf;
  std::string val_buf;
  std::vector<uchar> rec_buf;
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
  /* MariaDB key number <-> Riptide index number. */
  uint rindex(uint keynr) const { return has_pk ? keynr : keynr + 1; }
  uint keynr_of(size_t rindex) const { return has_pk ? uint(rindex) : uint(rindex) - 1; }
  void encode_pk(const uchar *record, std::string *out);
  void encode_secondary(const uchar *record, std::vector<std::string> *bufs,
                        std::vector<riptide_hkey_t> *keys);
  int encode_key_tuple(uint keynr, const uchar *key, key_part_map keypart_map,
                       std::string *out);
  int check_row_size(const uchar *buf, size_t key_len);
  void pack_row(const uchar *buf, std::string *out);
  int unpack_row(const char *value, size_t len, uchar *buf)
  {
    return unpack_row(value, len, buf, &blob_buf);
  }
  int unpack_row(const char *value, size_t len, uchar *buf, std::string *blobs);
  int make_iterator(uint index, bool current= false);
  int hash_lookup_prepare(const std::string &prefix);
  int read_from_iterator(uchar *buf, bool forward);
  bool entry_matches_row(const uchar *buf, const char *entry, size_t key_off, size_t pk_off);
  std::string secondary_entry(uint index, const std::string &key, const std::string &pk) const;
  int step(bool forward);
  int resync_iterator(bool forward);
  int index_step(uchar *buf, bool forward, const std::string &stop);
  std::string range_stop_of(uint keynr);
  int set_stop(const std::string &stop);
  void release_row_locks();
  int32_t row_lock_code() const;
  int point_read(uchar *buf, const std::string &pk, bool *found);
  int pushed_condition(uchar *buf);
  void plan_keyread();
  int icp_error(int verdict);
  int row_error(riptide_status_t st, char *err, size_t dup_index);
  void observe_autoinc(const uchar *record);
  int wait_for_prepared(const char *name);
  int begin_alter_copy();
  int end_alter_copy();
  void abort_alter_copy();
};
