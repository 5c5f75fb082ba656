/*
  Riptide_codec: how the shim turns MariaDB keys and rows into bytes, and back. This is the
  one thing only MariaDB can compute (the server's Field and collation functions); every
  other part of the key layout (index ids, prefixes, successors, entry decoding) is Rust's.

    key tuple        -> per key part, a fixed width: MariaDB's own sort key
                        (Field::sort_string: collation weights), a nullable part preceded by
                        a NULL-indicator byte (0 for NULL, so NULLs sort first); so a prefix
                        of parts is a byte prefix and the tuple is memcomparable
    prefix key part  -> the first N characters' collation weights, padded to the prefix's
                        fixed width (binary strings: the bytes, zero-padded, + u16 BE length)
    NO PAD string    -> (key format 2) the weights zero-padded, + their length as u16 BE
    row              -> (format 4, a table changed by an instant ALTER: see
                        Riptide_row_layout) 0x04 + u16 LE column count + u16 LE NULL-byte
                        count, then as format 3 for those columns and NULL bytes
                        (format 3, written since 2026-11-28) 0x03 + the record's NULL
                        bytes (null_bytes) + per column in field order, unless it is NULL
                        or a primary key part decodable from the key (decode_tuple):
                        Field::pack (VARCHAR: its length + its bytes; CHAR in a multi-byte
                        charset: its length + its bytes without the trailing pad; BLOB/TEXT:
                        its length + the body; a VIRTUAL BLOB as empty; other types, and CHAR
                        in a one-byte charset: the record bytes)
                        (formats 1 and 2, still read) 0x01 + the MariaDB record buffer
                        (reclength bytes); a table with BLOB/TEXT columns: 0x02 + the record
                        buffer (blob pointers zeroed) + per blob column, in field order, u32
                        LE length + the bytes
*/
#pragma once

#include <my_global.h>
#include "handler.h"

#include <cstdint>
#include <string>
#include <vector>

#include "riptide.h"

/* Key formats of the shim: the per-table number the data dictionary keeps
   (riptide_htable_key_format); a table keeps the format it was created with, and ALTER
   TABLE ... FORCE rebuilds it in the current one.
   0, 1: the original encoding;
   2: a VARCHAR/TEXT/BLOB part in a NO PAD collation also stores the length of its
      collation weights (is_nopad_string_part);
   3: keys as format 2; the table was created after row formats 1 and 2 stopped being
      written, so it holds rows of format 3 and 4 only, which an instant column change can
      leave in place (a format 1 or 2 row is the old record buffer, which no new definition
      reads). */
constexpr uint32_t KEY_FORMAT_NOPAD_LENGTH= 2;
constexpr uint32_t KEY_FORMAT_PACKED_ROWS= 3;
constexpr uint32_t KEY_FORMAT_CURRENT= KEY_FORMAT_PACKED_ROWS;

/* The row layouts a table has had since its first instant column change (ALTER TABLE ...
   ADD COLUMN at the end, ALGORITHM=INSTANT): the rows written before it are left as they
   are, so a row may hold fewer columns than the table has. Kept in the data dictionary with
   the table (riptide_htable_caller_data, riptide_hbuild_set_caller_data), as

     u8  version (1)
     u16 LE columns of the rows written in format 3 (every row written before the first
            instant change)
     u16 LE NULL bytes of those rows
     u16 LE n: columns added since, in field order; per column, the value every row
            written before the column existed has: u8 1 = NULL, or u8 0 + u32 LE length
            + the bytes Field::pack made of it

   Every instant change keeps the NULL bits (and BIT columns' odd bits) of the existing
   columns where they were, so a row's NULL bytes are a prefix of the table's. A table
   with a recorded layout writes format 4 rows, which say how many columns they hold; a
   table without one writes format 3, holding every column. */
class Riptide_row_layout
{
public:
  /* The value rows written before an added column existed read for it. */
  struct Added_value
  {
    bool is_null= true;
    std::string packed;
  };

  /* Whether the table has had an instant column change (a layout is recorded). */
  bool recorded= false;
  /* The columns and NULL bytes of format 3 rows. */
  uint32_t v3_columns= 0, v3_null_bytes= 0;
  /* Per column from v3_columns on, the value older rows read. */
  std::vector<Added_value> added;

  /* Reads the dictionary's bytes (none: no layout); false, with `*error`, if malformed. */
  bool parse(const uint8_t *data, size_t len, std::string *error);
  /* The dictionary's bytes of a recorded layout. */
  std::string serialize() const;
  /* The columns the table has under this layout. */
  size_t columns() const { return v3_columns + added.size(); }
};

/* The codec of one open table (its TABLE and the key format it was created with). */
class Riptide_codec
{
public:
  /* How a row value (format 3) holds a column: left out (the primary key's bytes decode
     back to it), as an empty BLOB (VIRTUAL: computed on read), as its record bytes, or as
     Field::pack writes it. */
  enum class Column_packing : uint8_t
  {
    FROM_KEY,
    EMPTY_BLOB,
    RECORD_BYTES,
    FIELD_PACK
  };

  /* Binds the codec to `table`, whose keys are in `key_format` and whose rows follow
     `layout` (the share's: see Riptide_row_layout). */
  void bind(TABLE *table, uint32_t key_format, const Riptide_row_layout &layout);

  /* How a row value holds column `field_index` (decided at bind()). */
  Column_packing packing(uint field_index) const { return columns[field_index]; }

  /* The key tuple of index `keynr` (MariaDB key number) of `record` (record[0] or another
     buffer of the table); `*has_null` tells whether a part is NULL. */
  void encode_key(uint keynr, const uchar *record, std::string *out, bool *has_null);

  /* The key tuples of `record` for MariaDB keys `first_key` .. keys - 1 (the secondary
     indexes, in order) in `keys` (views of `bufs`). */
  void encode_secondary(const uchar *record, uint first_key, std::vector<std::string> *bufs,
                        std::vector<riptide_hkey_t> *keys);

  /* The key tuple of the first key parts of a key image (key_copy format, the parts
     `keypart_map` names) of index `keynr`; true if every part of the index was given. */
  bool encode_key_image(THD *thd, uint keynr, const uchar *key, key_part_map keypart_map,
                        std::string *out);

  /* The offsets, in index `keynr`'s tuples, of the NULL-indicator bytes of its nullable
     parts (0 there: the part is NULL). */
  std::vector<uint32_t> null_offsets(uint keynr) const;

  /* The width of index `keynr`'s tuples (every tuple of an index has the same width). */
  uint tuple_width(uint keynr) const;

  /* Whether every column in `read_set` can be filled in from the tuples of `key` and of
     `pk` (NULL: none) alone (decode_tuple). */
  bool tuples_cover(const KEY *key, const KEY *pk, const MY_BITMAP *read_set) const;

  /* Fills the decodable parts of `key` into record `buf` from tuple bytes [p, end) (the
     other parts are skipped by width); false if the bytes are too short. */
  bool decode_tuple(const KEY *key, const uchar *p, const uchar *end, uchar *buf) const;

  /* At most the bytes a row of record `buf` takes as one engine entry with a `key_len`-byte
     primary key (checked against riptide_max_key_value_len before the value is built):
     within 2 bytes per column of the exact size. */
  size_t entry_size(const uchar *buf, size_t key_len) const;

  /* The row value of record `buf` (format 3, or 4 with a recorded layout). */
  void pack_row(const uchar *buf, std::string *out) const;

  /* Unpacks a row value (any format) stored under primary key bytes `pk` (`pk_len` bytes;
     a hidden key's row id when the table has no PRIMARY KEY) into record `buf`; blob
     bodies go to `blobs`, which the record's blob pointers then point into (valid until
     `blobs` is next written). False, with `*error` saying what is wrong, for a malformed
     value. */
  bool unpack_row(const char *value, size_t len, const char *pk, size_t pk_len, uchar *buf,
                  std::string *blobs, std::string *error) const;

private:
  void append_key_part(const KEY_PART_INFO *kp, my_ptrdiff_t diff, std::string *out,
                       bool *has_null) const;
  size_t packed_bound(const uchar *buf) const;
  bool unpack_record_row(const char *value, size_t len, uchar *buf, std::string *blobs) const;
  bool unpack_packed_row(const char *value, size_t len, const char *pk, size_t pk_len,
                         uchar *buf, std::string *blobs, std::string *error) const;

  TABLE *tbl= nullptr;
  uint32_t format= 0;
  /* Per column (field_index), how a row value holds it (format 3), decided at bind(). */
  std::vector<Column_packing> columns;
  /* encode_key_image's scratch record. */
  std::vector<uchar> scratch;
  /* The table's row layouts (Riptide_row_layout); the added columns' values stay here, where
     blob fields may point. */
  Riptide_row_layout layout;
};
