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
    row              -> (format 5, a table changed by an instant ALTER: see
                        Riptide_row_layout) 0x05 + u16 LE physical column count m + m
                        NULL bits (bit p of byte p / 8: physical column p is NULL or
                        dropped) + per physical column that is not NULL, in physical
                        order, its bytes as in format 3
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
      written, so it holds rows of format 3 and 5 only, which an instant column change can
      leave in place (a format 1 or 2 row is the old record buffer, which no new definition
      reads). */
constexpr uint32_t KEY_FORMAT_NOPAD_LENGTH= 2;
constexpr uint32_t KEY_FORMAT_PACKED_ROWS= 3;
constexpr uint32_t KEY_FORMAT_CURRENT= KEY_FORMAT_PACKED_ROWS;

/* The row layout of a table changed by an instant ALTER (ADD COLUMN anywhere, DROP COLUMN,
   a new column order: ALGORITHM=INSTANT): the rows written before are left as they are, so
   the layout lists every column a row may hold, in the order rows hold them (the
   *physical* columns): the table's columns, in the order they were created, and the
   dropped ones, which old rows still hold. Kept in the data dictionary with the table
   (riptide_htable_caller_data, riptide_hbuild_set_caller_data), as

     u8  version (2)
     u16 LE columns of the rows written in format 3 (every row written before the first
            instant change: physical columns 0 .. this - 1)
     u16 LE NULL bytes of those rows
     u16 LE n: physical columns; per column
       u16 LE the table's field index, 0xffff if dropped
       u16 LE offset and u8 bit of its NULL bit in format 3 rows' NULL bytes (bit 0: none)
       u8  flags: 1 = dropped with a length prefix (else a fixed size), 2 = added after
           format 3 rows, 4 = added as NULL
       if dropped: u32 LE its fixed size, or the size of its length prefix
       if added and not NULL: u32 LE length + the Field::pack bytes of the value the rows
           written before it read

   A table with a recorded layout writes format 5 rows (physical columns, with a NULL bit
   each). Version 1 and format 4 (written by one development build, 12ebf71, never
   released) are refused with an error. */
class Riptide_row_layout
{
public:
  /* The value rows written before an added column existed read for it. */
  struct Added_value
  {
    bool is_null= true;
    std::string packed;
  };

  /* How a dropped column's bytes are stepped over in old rows: a fixed size, or a
     little-endian length prefix of `size` bytes and that many bytes. */
  struct Skip
  {
    bool prefixed= false;
    uint32_t size= 0;
  };

  /* One physical column. */
  struct Column
  {
    /* The table's field index; DROPPED once dropped. */
    uint32_t field= 0;
    /* Its NULL bit in format 3 rows (bit 0: NOT NULL, or not in them). */
    uint32_t legacy_null_offset= 0;
    uint8_t legacy_null_bit= 0;
    /* Set once dropped. */
    Skip skip;
    /* Added after the format 3 rows: the value older rows read. */
    bool added= false;
    Added_value value;
  };
  static constexpr uint32_t DROPPED= 0xffff;

  /* Whether the table has had an instant column change (a layout is recorded). */
  bool recorded= false;
  /* The columns and NULL bytes of format 3 rows. */
  uint32_t v3_columns= 0, v3_null_bytes= 0;
  /* The physical columns. */
  std::vector<Column> columns;

  /* Reads the dictionary's bytes (none: no layout); false, with `*error`, if malformed. */
  bool parse(const uint8_t *data, size_t len, std::string *error);
  /* The dictionary's bytes of a recorded layout. */
  std::string serialize() const;
  /* Whether the live columns name each of `fields` fields once (the layout fits the table). */
  bool fits(uint fields) const;
  /* The layout of `table` before its first instant change: its columns, in format 3. */
  static Riptide_row_layout of_format3(const TABLE *table);
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

  /* How old rows' bytes of column `field_index` are stepped over once it is dropped. */
  Riptide_row_layout::Skip skip_of(uint field_index) const;

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

  /* The row value of record `buf` (format 3, or 5 with a recorded layout). */
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
  bool unpack_layout_row(const char *value, size_t len, const char *pk, size_t pk_len,
                         uchar *buf, std::string *blobs, std::string *error) const;
  void pack_layout_row(const uchar *buf, std::string *out) const;
  static uchar *pack_column(Field *f, Column_packing packing, uchar *to, my_ptrdiff_t diff);
  static const uchar *unpack_column(Field *f, Column_packing packing, const uchar *p,
                                    const uchar *end, my_ptrdiff_t diff);

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
