/*
  Riptide_codec: MariaDB keys and rows as bytes. See record_codec.h.
*/
#include <my_global.h>
#include "sql_class.h"
#include "key.h"

#include "record_codec.h"

namespace {

/* First byte of every row value: the format of what follows. V1: the record buffer alone
   (tables without BLOB/TEXT columns); V2: the record buffer and the blob bodies (both
   written until 2026-11-28, still read); PACKED: the NULL bytes and the packed columns
   (record_codec.h). */
constexpr char ROW_FORMAT_V1= 1;
constexpr char ROW_FORMAT_V2= 2;
constexpr char ROW_FORMAT_PACKED= 3;
/* The physical columns of a table with a recorded Riptide_row_layout, each with a NULL
   bit. */
constexpr char ROW_FORMAT_LAYOUT= 5;
/* The version of Riptide_row_layout's bytes. */
constexpr uint8_t ROW_LAYOUT_VERSION= 2;

void put_u16(std::string *out, uint32_t v)
{
  out->push_back(char(v & 0xff));
  out->push_back(char((v >> 8) & 0xff));
}

void put_u32(std::string *out, uint32_t v)
{
  for (int b= 0; b < 4; b++)
    out->push_back(char((v >> (8 * b)) & 0xff));
}

uint32_t get_u16(const uchar *p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }

uint32_t get_u32(const uchar *p)
{
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

/* Whether a key part indexes a prefix of its column (KEY (v(10)), any BLOB/TEXT part). */
bool is_prefix_part(const KEY_PART_INFO *kp)
{
  return (kp->key_part_flag & (HA_PART_KEY_SEG | HA_BLOB_PART)) ||
         kp->length < kp->field->key_length();
}

/* Whether key part `kp` is a VARCHAR/TEXT/BLOB part in a NO PAD collation: its collation
   weights are padded with zero bytes, so 'a' and 'a' + CHAR(0) have the same padded weights
   although the collation tells them apart (a shorter string sorts first). Such a part also
   stores the length of its weights (key format 2). CHAR keeps the stored spaces, which NO
   PAD weighs like any character, and binary strings store their length already. */
bool is_nopad_string_part(const KEY_PART_INFO *kp)
{
  const Field *f= kp->field;
  const CHARSET_INFO *cs= f->charset();
  bool variable= f->real_type() == MYSQL_TYPE_VARCHAR || (f->flags & BLOB_FLAG);
  return variable && cs != &my_charset_bin && (cs->state & MY_CS_NOPAD);
}

/* The width of key part `kp`'s value bytes, without the NULL-indicator byte (the same for
   every value: what append_key_part writes), in key format `format`. */
uint key_part_width(const KEY_PART_INFO *kp, uint32_t format)
{
  Field *f= kp->field;
  uint weight_length= format >= KEY_FORMAT_NOPAD_LENGTH && is_nopad_string_part(kp) ? 2 : 0;
  if (!is_prefix_part(kp))
  {
    uint len= f->sort_length();
    CHARSET_INFO *cs= f->sort_charset();
    return (use_strnxfrm(cs) ? uint(cs->strnxfrmlen(len)) : len) + weight_length;
  }
  CHARSET_INFO *cs= f->charset();
  if (cs == &my_charset_bin)
    return kp->length + 2;
  return (use_strnxfrm(cs) ? uint(cs->strnxfrmlen(kp->length)) : kp->length) + weight_length;
}

/* The collation weights of `len` bytes at `from` (at most `nweights` characters) into
   `to`, `width` bytes: zero-padded, then the weights' length as 2 bytes big-endian, so a
   NO PAD string sorts before any longer one with the same padded weights. */
void nopad_weights(CHARSET_INFO *cs, uchar *to, uint width, uint nweights,
                          const char *from, size_t len)
{
  size_t n= cs->strnxfrm(to, width - 2, nweights, reinterpret_cast<const uchar *>(from), len,
                         0);
  if (n > width - 2)
    n= width - 2;
  memset(to + n, 0, width - 2 - n);
  to[width - 2]= uchar(n >> 8);
  to[width - 1]= uchar(n);
}

/* How the sort key of a field (Field::make_sort_key_part, after the NULL byte) maps back
   to the record bytes, for the types where it is exactly reversible (field.cc):
   SORT_INT: the little-endian integer reversed, sign bit flipped when signed
     (Field_tiny .. Field_longlong, and YEAR, a Field_tiny);
   SORT_REVERSED: the little-endian bytes reversed (Field_newdate, DATE);
   SORT_COPY: the record bytes as they are (Field_new_decimal, Field_datetimef,
     Field_timestampf, Field_timef: binary formats that already sort as bytes).
   Other types (strings, FLOAT/DOUBLE, ENUM/SET, BIT, old temporal formats) read the row. */
enum Sort_decoding
{
  SORT_NONE,
  SORT_INT,
  SORT_REVERSED,
  SORT_COPY
};

Sort_decoding sort_decoding(const Field *f)
{
  switch (f->real_type())
  {
  case MYSQL_TYPE_TINY:
  case MYSQL_TYPE_SHORT:
  case MYSQL_TYPE_INT24:
  case MYSQL_TYPE_LONG:
  case MYSQL_TYPE_LONGLONG:
  case MYSQL_TYPE_YEAR:
    return SORT_INT;
  case MYSQL_TYPE_NEWDATE:
    return SORT_REVERSED;
  case MYSQL_TYPE_NEWDECIMAL:
  case MYSQL_TYPE_DATETIME2:
  case MYSQL_TYPE_TIMESTAMP2:
  case MYSQL_TYPE_TIME2:
    return SORT_COPY;
  default:
    return SORT_NONE;
  }
}

/* Whether key part `kp` can be decoded from its bytes into its whole column. */
bool is_decodable_part(const KEY_PART_INFO *kp)
{
  return !is_prefix_part(kp) && sort_decoding(kp->field) != SORT_NONE &&
         key_part_width(kp, KEY_FORMAT_NOPAD_LENGTH) == kp->field->pack_length();
}

/* Whether field `f` is a decodable key part of `key`. */
bool is_decodable_part_of(const KEY *key, const Field *f)
{
  for (uint i= 0; i < key->user_defined_key_parts; i++)
    if (key->key_part[i].field == f && is_decodable_part(&key->key_part[i]))
      return true;
  return false;
}

} // namespace

/* Memcomparable bytes of index `keynr`'s key parts of `record` (record[0] or another
   buffer): each part is MariaDB's own sort key (collation weights; a nullable part starts
   with a NULL-indicator byte, 0 for NULL). */
void Riptide_codec::encode_key(uint keynr, const uchar *record, std::string *out,
                               bool *has_null)
{
  out->clear();
  *has_null= false;
  KEY *key= &tbl->key_info[keynr];
  my_ptrdiff_t diff= record - tbl->record[0];
  for (uint i= 0; i < key->user_defined_key_parts; i++)
    append_key_part(&key->key_part[i], diff, out, has_null);
}

void Riptide_codec::encode_secondary(const uchar *record, uint first_key,
                                     std::vector<std::string> *bufs,
                                     std::vector<riptide_hkey_t> *keys)
{
  uint n= tbl->s->keys - first_key;
  bufs->resize(n);
  keys->resize(n);
  for (uint i= 0; i < n; i++)
  {
    bool has_null= false;
    encode_key(first_key + i, record, &(*bufs)[i], &has_null);
    (*keys)[i].data= (*bufs)[i].data();
    (*keys)[i].len= (*bufs)[i].size();
    (*keys)[i].has_null= has_null;
  }
}

bool Riptide_codec::encode_key_image(THD *thd, uint keynr, const uchar *key,
                                     key_part_map keypart_map, std::string *out)
{
  KEY *key_info= &tbl->key_info[keynr];
  uint key_len= calculate_key_len(tbl, keynr, key, keypart_map);
  scratch.assign(tbl->s->reclength, 0);
  memcpy(scratch.data(), tbl->s->default_values, tbl->s->reclength);
  {
    /* A key image need not be a value the column holds: the range optimizer makes the end
       of LIKE 'A%' by filling the key with the collation's largest character, more
       characters than the column has. Restoring it into the scratch record cuts it to the
       column (which keeps it an upper bound of every stored value); the cut must not raise
       a warning, which a data-changing statement in strict mode turns into an error
       (ER_DATA_TOO_LONG for an UPDATE ... WHERE v LIKE 'A%'). */
    Check_level_instant_set no_cut_warnings(thd, CHECK_FIELD_IGNORE);
    key_restore(scratch.data(), key, key_info, key_len);
  }
  uint parts= 0;
  while (parts < key_info->user_defined_key_parts && (keypart_map & (key_part_map(1) << parts)))
    parts++;
  out->clear();
  my_ptrdiff_t diff= scratch.data() - tbl->record[0];
  bool has_null= false;
  for (uint i= 0; i < parts; i++)
    append_key_part(&key_info->key_part[i], diff, out, &has_null);
  return parts == key_info->user_defined_key_parts;
}

uint Riptide_codec::tuple_width(uint keynr) const
{
  /* From the key's definition: record[0] need not hold a row (a blob pointer in it could
     be anything). */
  const KEY *key= &tbl->key_info[keynr];
  uint width= 0;
  for (uint i= 0; i < key->user_defined_key_parts; i++)
    width+= key_part_width(&key->key_part[i], format) +
            (key->key_part[i].field->real_maybe_null() ? 1 : 0);
  return width;
}

std::vector<uint32_t> Riptide_codec::null_offsets(uint keynr) const
{
  /* append_key_part's layout: a nullable part starts with its indicator byte. */
  const KEY *key= &tbl->key_info[keynr];
  std::vector<uint32_t> out;
  uint32_t at= 0;
  for (uint i= 0; i < key->user_defined_key_parts; i++)
  {
    bool nullable= key->key_part[i].field->real_maybe_null();
    if (nullable)
      out.push_back(at);
    at+= key_part_width(&key->key_part[i], format) + (nullable ? 1 : 0);
  }
  return out;
}

bool Riptide_codec::tuples_cover(const KEY *key, const KEY *pk, const MY_BITMAP *read_set) const
{
  for (uint i= 0; i < tbl->s->fields; i++)
  {
    const Field *f= tbl->field[i];
    if (!bitmap_is_set(read_set, f->field_index))
      continue;
    if (!is_decodable_part_of(key, f) && !(pk && is_decodable_part_of(pk, f)))
      return false;
  }
  return true;
}

/* Appends the memcomparable bytes of key part `kp` of the record `diff` bytes away from
   record[0] (fixed length per part, so a prefix of parts is a byte prefix). A whole column
   is MariaDB's sort key (Field::sort_string). A column prefix of N characters
   (key_part->length is N * mbmaxlen bytes) is the collation weights of the value's first N
   characters only, padded as the collation pads (PAD SPACE: 'ab' = 'ab '), to the width of
   N characters; a binary string's prefix is its first N bytes, zero-padded, then their
   count (u16 BE), so 'a' sorts before 'a\0' as in the server. A string in a NO PAD
   collation (key format 2) is its weights, zero-padded, then their length (u16 BE). A
   nullable part starts with 0x00 (NULL, the rest zero) or 0x01. */
void Riptide_codec::append_key_part(const KEY_PART_INFO *kp, my_ptrdiff_t diff,
                                    std::string *out, bool *has_null) const
{
  Field *f= kp->field;
  /* real_maybe_null(), not maybe_null(): the latter is also true for every column of a
     table on the inner side of an outer join (TABLE::maybe_null), and is_null() then
     follows TABLE::null_row. The encoding must depend on the column's definition alone. */
  bool nullable= f->real_maybe_null();
  size_t at= out->size();
    uint len= key_part_width(kp, format);
  bool nopad= format >= KEY_FORMAT_NOPAD_LENGTH && is_nopad_string_part(kp);
  f->move_field_offset(diff);
  bool null= nullable && f->is_null();
  if (null)
    *has_null= true;
  out->resize(at + len + (nullable ? 1 : 0), '\0');
  uchar *to= reinterpret_cast<uchar *>(&(*out)[at]);
  if (nullable)
    *to++= null ? 0 : 1;
  if (!null && !is_prefix_part(kp) && !nopad)
  {
    /* Field::make_sort_key_part's layout, without its use of maybe_null() / is_null()
       (which follow TABLE::maybe_null and TABLE::null_row, see above): NULL is a zero
       byte and zeros, a value a one byte and its sort string. */
    f->sort_string(to, len);
  }
  else if (!null)
  {
    CHARSET_INFO *cs= f->charset();
    String buf;
    f->val_str(&buf, &buf);
    size_t plen= buf.length();
    uint nchars= f->char_length();
    if (is_prefix_part(kp))
    {
      nchars= kp->length / cs->mbmaxlen;
      plen= cs->charpos(buf.ptr(), buf.ptr() + buf.length(), nchars);
      if (plen > buf.length())
        plen= buf.length();
    }
    if (cs == &my_charset_bin)
    {
      memcpy(to, buf.ptr(), plen);
      to[len - 2]= uchar(plen >> 8);
      to[len - 1]= uchar(plen);
    }
    else if (nopad)
      nopad_weights(cs, to, len, nchars * cs->strxfrm_multiply, buf.ptr(), plen);
    else
      cs->strnxfrm(to, len, nchars * cs->strxfrm_multiply,
                   reinterpret_cast<const uchar *>(buf.ptr()), plen,
                   MY_STRXFRM_PAD_WITH_SPACE | MY_STRXFRM_PAD_TO_MAXLEN);
  }
  f->move_field_offset(-diff);
}

/* Fills the decodable parts of `key` into record `buf` from their encoded bytes [p, end)
   (the other parts are skipped by width); false if the bytes are too short. */
bool Riptide_codec::decode_tuple(const KEY *key, const uchar *p, const uchar *end,
                                 uchar *buf) const
{
  my_ptrdiff_t diff= buf - tbl->record[0];
  for (uint i= 0; i < key->user_defined_key_parts; i++)
  {
    const KEY_PART_INFO *kp= &key->key_part[i];
    Field *f= kp->field;
    bool nullable= f->real_maybe_null();
    size_t width= key_part_width(kp, format);
    if (size_t(end - p) < width + (nullable ? 1 : 0))
      return false;
    if (is_decodable_part(kp))
    {
      if (nullable && *p == 0)
        f->set_null(diff);
      else
      {
        if (nullable)
          f->set_notnull(diff);
        const uchar *v= p + (nullable ? 1 : 0);
        uchar *to= f->ptr + diff;
        Sort_decoding how= sort_decoding(f);
        if (how == SORT_COPY)
          memcpy(to, v, width);
        else
        {
          for (size_t b= 0; b < width; b++)
            to[width - 1 - b]= v[b];
          if (how == SORT_INT && !static_cast<const Field_num *>(f)->unsigned_flag)
            to[width - 1]^= 0x80;
        }
      }
    }
    p+= width + (nullable ? 1 : 0);
  }
  return true;
}

/* How a row value (format 3) holds column `f` of a table whose primary key is `pk`
   (NULL: none); decided once per open table (Riptide_codec::bind). A CHAR/BINARY in a
   one-byte charset keeps its record bytes: Field::pack would strip its trailing pad and add
   a length byte, which costs a byte for the full values such columns usually hold (codes,
   TPC-C's s_dist_01 .. 10); in a multi-byte charset the record reserves mbmaxlen bytes per
   character and stripping the pad wins. */
static Riptide_codec::Column_packing column_packing(const KEY *pk, const Field *f)
{
  if (pk && is_decodable_part_of(pk, f))
    return Riptide_codec::Column_packing::FROM_KEY;
  if ((f->flags & BLOB_FLAG) && !f->stored_in_db())
    return Riptide_codec::Column_packing::EMPTY_BLOB;
  if (f->real_type() == MYSQL_TYPE_STRING && f->charset()->mbmaxlen == 1)
    return Riptide_codec::Column_packing::RECORD_BYTES;
  return Riptide_codec::Column_packing::FIELD_PACK;
}

bool Riptide_row_layout::parse(const uint8_t *data, size_t len, std::string *error)
{
  *this= Riptide_row_layout();
  if (!len)
    return true;
  auto bad= [&](const std::string &what) {
    *error= "its row layout in the data dictionary (" + std::to_string(len) +
            " bytes) is malformed: " + what;
    return false;
  };
  if (data[0] != ROW_LAYOUT_VERSION)
    return bad("version " + std::to_string(int(data[0])) + ", this build reads version " +
               std::to_string(int(ROW_LAYOUT_VERSION)));
  if (len < 7)
    return bad("truncated header");
  v3_columns= get_u16(data + 1);
  v3_null_bytes= get_u16(data + 3);
  size_t n= get_u16(data + 5), at= 7;
  if (n < v3_columns)
    return bad("fewer columns than format 3 rows hold");
  for (size_t i= 0; i < n; i++)
  {
    Column c;
    if (len - at < 6)
      return bad("truncated column " + std::to_string(i));
    c.field= get_u16(data + at);
    c.legacy_null_offset= get_u16(data + at + 2);
    c.legacy_null_bit= data[at + 4];
    uint8_t flags= data[at + 5];
    at+= 6;
    if (c.legacy_null_bit && (i >= v3_columns || c.legacy_null_offset >= v3_null_bytes))
      return bad("column " + std::to_string(i) + " has a NULL bit outside format 3 rows");
    if (c.field == DROPPED)
    {
      if (len - at < 4)
        return bad("truncated size of dropped column " + std::to_string(i));
      c.skip.prefixed= flags & 1;
      c.skip.size= get_u32(data + at);
      at+= 4;
      if (c.skip.prefixed && (c.skip.size < 1 || c.skip.size > 4))
        return bad("dropped column " + std::to_string(i) + " has a bad length prefix");
    }
    c.added= flags & 2;
    if (c.added != (i >= v3_columns))
      return bad("column " + std::to_string(i) + " is marked added wrongly");
    if (c.added)
    {
      c.value.is_null= flags & 4;
      if (!c.value.is_null)
      {
        if (len - at < 4)
          return bad("truncated value length of column " + std::to_string(i));
        size_t vlen= get_u32(data + at);
        at+= 4;
        if (len - at < vlen)
          return bad("truncated value of column " + std::to_string(i));
        c.value.packed.assign(reinterpret_cast<const char *>(data + at), vlen);
        at+= vlen;
      }
    }
    columns.push_back(std::move(c));
  }
  if (at != len)
    return bad("bytes after the last column");
  recorded= true;
  return true;
}

std::string Riptide_row_layout::serialize() const
{
  std::string out(1, char(ROW_LAYOUT_VERSION));
  put_u16(&out, v3_columns);
  put_u16(&out, v3_null_bytes);
  put_u16(&out, uint32_t(columns.size()));
  for (const Column &c : columns)
  {
    put_u16(&out, c.field);
    put_u16(&out, c.legacy_null_offset);
    out.push_back(char(c.legacy_null_bit));
    uint8_t flags= (c.field == DROPPED && c.skip.prefixed ? 1 : 0) | (c.added ? 2 : 0) |
                   (c.added && c.value.is_null ? 4 : 0);
    out.push_back(char(flags));
    if (c.field == DROPPED)
      put_u32(&out, c.skip.size);
    if (c.added && !c.value.is_null)
    {
      put_u32(&out, uint32_t(c.value.packed.size()));
      out+= c.value.packed;
    }
  }
  return out;
}

bool Riptide_row_layout::fits(uint fields) const
{
  std::vector<bool> seen(fields, false);
  size_t live= 0;
  for (const Column &c : columns)
  {
    if (c.field == DROPPED)
      continue;
    if (c.field >= fields || seen[c.field])
      return false;
    seen[c.field]= true;
    live++;
  }
  return live == fields;
}

Riptide_row_layout Riptide_row_layout::of_format3(const TABLE *table)
{
  Riptide_row_layout l;
  l.recorded= true;
  l.v3_columns= table->s->fields;
  l.v3_null_bytes= table->s->null_bytes;
  for (uint i= 0; i < table->s->fields; i++)
  {
    const Field *f= table->field[i];
    Column c;
    c.field= i;
    if (f->null_ptr)
    {
      c.legacy_null_offset= uint32_t(f->null_ptr - table->record[0]);
      c.legacy_null_bit= f->null_bit;
    }
    l.columns.push_back(c);
  }
  return l;
}

Riptide_row_layout::Skip Riptide_codec::skip_of(uint field_index) const
{
  const Field *f= tbl->field[field_index];
  Riptide_row_layout::Skip skip;
  switch (columns[field_index])
  {
  case Column_packing::FROM_KEY:
    break;
  case Column_packing::EMPTY_BLOB:
    skip= {true, static_cast<const Field_blob *>(f)->pack_length_no_ptr()};
    break;
  case Column_packing::RECORD_BYTES:
    skip= {false, f->pack_length()};
    break;
  case Column_packing::FIELD_PACK:
    /* What Field::pack writes (field.cc): a length and the bytes for the string types, the
       odd bits' byte and the bytes for BIT, the record bytes for the others. */
    if (f->flags & BLOB_FLAG)
      skip= {true, static_cast<const Field_blob *>(f)->pack_length_no_ptr()};
    else if (f->real_type() == MYSQL_TYPE_VARCHAR)
      skip= {true, static_cast<const Field_varstring *>(f)->length_bytes};
    else if (f->real_type() == MYSQL_TYPE_STRING)
      skip= {true, f->field_length > 255 ? 2u : 1u};
    else if (f->type() == MYSQL_TYPE_BIT)
    {
      auto *b= static_cast<const Field_bit *>(f);
      skip= {false, (b->bit_len > 0 ? 1u : 0u) + b->bytes_in_rec};
    }
    else
      skip= {false, f->pack_length()};
    break;
  }
  return skip;
}

void Riptide_codec::bind(TABLE *table, uint32_t key_format, const Riptide_row_layout &rows)
{
  tbl= table;
  format= key_format;
  layout= rows;
  TABLE_SHARE *s= table->s;
  const KEY *pk= s->primary_key == MAX_KEY ? nullptr : &table->key_info[s->primary_key];
  columns.resize(s->fields);
  for (uint i= 0; i < s->fields; i++)
    columns[i]= column_packing(pk, table->field[i]);
}

/* At most the bytes of record `buf`'s row value: every column packs to at most its record
   width + 2 (a CHAR's length bytes), a BLOB to its length bytes + its stored body (none
   when NULL or VIRTUAL). */
size_t Riptide_codec::packed_bound(const uchar *buf) const
{
  TABLE_SHARE *s= tbl->s;
  /* Format 5 has 3 header bytes and a NULL bit per physical column instead of the NULL
     bytes. */
  size_t bound= 1 + s->reclength + 2 * size_t(s->fields) +
                (layout.recorded ? 2 + (layout.columns.size() + 7) / 8 : 0);
  my_ptrdiff_t diff= buf - tbl->record[0];
  for (uint i= 0; i < s->blob_fields; i++)
  {
    Field_blob *b= static_cast<Field_blob *>(tbl->field[s->blob_field[i]]);
    if (!b->is_null_in_record(buf) && b->stored_in_db())
      bound+= b->get_length(b->ptr + diff);
  }
  return bound;
}

size_t Riptide_codec::entry_size(const uchar *buf, size_t key_len) const
{
  return key_len + packed_bound(buf);
}

/* The row value of record `buf` (README.md, "row"): format 3, the NULL bytes and the
   packed columns; format 5 once the table has a recorded layout (pack_layout_row). */
void Riptide_codec::pack_row(const uchar *buf, std::string *out) const
{
  if (layout.recorded)
  {
    pack_layout_row(buf, out);
    return;
  }
  TABLE_SHARE *s= tbl->s;
  my_ptrdiff_t diff= buf - tbl->record[0];
  size_t bound= packed_bound(buf);
  out->resize(bound);
  uchar *start= reinterpret_cast<uchar *>(&(*out)[0]);
  uchar *to= start;
  *to++= ROW_FORMAT_PACKED;
  memcpy(to, buf, s->null_bytes);
  to+= s->null_bytes;
  for (uint i= 0; i < s->fields; i++)
  {
    Field *f= tbl->field[i];
    if (columns[i] == Column_packing::FROM_KEY || f->is_null_in_record(buf))
      continue;
    to= pack_column(f, columns[i], to, diff);
  }
  DBUG_ASSERT(size_t(to - start) <= bound);
  out->resize(size_t(to - start));
}

/* Unpacks a row value into record `buf`; blob bodies go to `blobs`, which the record's
   blob pointers then point into (valid until `blobs` is next written). */
bool Riptide_codec::unpack_row(const char *value, size_t len, const char *pk, size_t pk_len,
                               uchar *buf, std::string *blobs, std::string *error) const
{
  if (len && (layout.recorded || value[0] == ROW_FORMAT_LAYOUT))
    return unpack_layout_row(value, len, pk, pk_len, buf, blobs, error);
  if (len && value[0] == ROW_FORMAT_PACKED)
    return unpack_packed_row(value, len, pk, pk_len, buf, blobs, error);
  if (unpack_record_row(value, len, buf, blobs))
    return true;
  TABLE_SHARE *s= tbl->s;
  *error= "a row of table " + std::string(s->path.str) + " is malformed: " +
          std::to_string(len) + " bytes, format " + std::to_string(len ? value[0] : -1) +
          "; expected format " + std::to_string(int(ROW_FORMAT_PACKED)) + " or format " +
          std::to_string(int(s->blob_fields ? ROW_FORMAT_V2 : ROW_FORMAT_V1)) +
          (s->blob_fields ? " with " + std::to_string(s->blob_fields) + " blob bodies after "
                          : " of exactly ") +
          std::to_string(s->reclength + 1) + " bytes";
  return false;
}

/* Formats 1 and 2: the record buffer, and the blob bodies after it. */
bool Riptide_codec::unpack_record_row(const char *value, size_t len, uchar *buf,
                                      std::string *blobs) const
{
  TABLE_SHARE *s= tbl->s;
  size_t rec= s->reclength;
  char want= s->blob_fields ? ROW_FORMAT_V2 : ROW_FORMAT_V1;
  if (len < rec + 1 || value[0] != want)
    return false;
  if (!s->blob_fields)
  {
    if (len != rec + 1)
      return false;
    memcpy(buf, value + 1, rec);
    return true;
  }
  blobs->assign(value + 1 + rec, len - 1 - rec);
  my_ptrdiff_t diff= buf - tbl->record[0];
  size_t pos= 0;
  memcpy(buf, value + 1, rec);
  for (uint i= 0; i < s->blob_fields; i++)
  {
    Field_blob *b= static_cast<Field_blob *>(tbl->field[s->blob_field[i]]);
    if (blobs->size() - pos < 4)
      return false;
    const uchar *p= reinterpret_cast<const uchar *>(blobs->data()) + pos;
    uint32 blen= uint32(p[0]) | uint32(p[1]) << 8 | uint32(p[2]) << 16 | uint32(p[3]) << 24;
    pos+= 4;
    if (blobs->size() - pos < blen)
      return false;
    b->set_ptr_offset(diff, blen, p + 4);
    pos+= blen;
  }
  return pos == blobs->size();
}

/* Format 3 in a table without a recorded layout: the NULL bytes, then the packed columns
   (those the primary key holds come from `pk`). The columns not stored (NULL ones) keep the
   table's default bytes. */
bool Riptide_codec::unpack_packed_row(const char *value, size_t len, const char *pk,
                                      size_t pk_len, uchar *buf, std::string *blobs,
                                      std::string *error) const
{
  TABLE_SHARE *s= tbl->s;
  auto malformed= [&](const std::string &what) {
    *error= "a row of table " + std::string(s->path.str) + " is malformed (" +
            std::to_string(len) + " bytes, format 3): " + what;
    return false;
  };
  if (len < 1 + size_t(s->null_bytes))
    return malformed("shorter than its " + std::to_string(s->null_bytes) + " NULL bytes");
  memcpy(buf, s->default_values, s->reclength);
  memcpy(buf, value + 1, s->null_bytes);
  if (s->primary_key != MAX_KEY)
  {
    const uchar *k= reinterpret_cast<const uchar *>(pk);
    if (!decode_tuple(&tbl->key_info[s->primary_key], k, k + pk_len, buf))
      return malformed("its primary key of " + std::to_string(pk_len) + " bytes is too short");
  }
  /* A blob's record points at its body: keep the bodies in `blobs`, which outlives the
     engine's value. */
  const uchar *p= reinterpret_cast<const uchar *>(value) + 1 + s->null_bytes;
  const uchar *end= reinterpret_cast<const uchar *>(value) + len;
  if (s->blob_fields)
  {
    blobs->assign(reinterpret_cast<const char *>(p), size_t(end - p));
    p= reinterpret_cast<const uchar *>(blobs->data());
    end= p + blobs->size();
  }
  my_ptrdiff_t diff= buf - tbl->record[0];
  for (uint i= 0; i < s->fields; i++)
  {
    Field *f= tbl->field[i];
    if (columns[i] == Column_packing::FROM_KEY || f->is_null_in_record(buf))
      continue;
    const uchar *next= unpack_column(f, columns[i], p, end, diff);
    if (!next)
      return malformed("column " + std::string(f->field_name.str) + " does not fit in the " +
                       std::to_string(end - p) + " bytes left");
    p= next;
  }
  if (p != end)
    return malformed(std::to_string(end - p) + " bytes after the last column");
  return true;
}

/* One column's bytes at [p, end) into record `buf` (`diff` from record[0]), as `packing`
   holds them; the end of its bytes, or NULL if they do not fit. */
const uchar *Riptide_codec::unpack_column(Field *f, Column_packing packing, const uchar *p,
                                         const uchar *end, my_ptrdiff_t diff)
{
  if (packing == Column_packing::RECORD_BYTES)
  {
    if (size_t(end - p) < f->pack_length())
      return nullptr;
    memcpy(f->ptr + diff, p, f->pack_length());
    return p + f->pack_length();
  }
  /* Field_blob::unpack sets the pointer of the field's own record: move it to `buf`. */
  f->move_field_offset(diff);
  const uchar *next= f->unpack(f->ptr, p, end, 0);
  f->move_field_offset(-diff);
  return next;
}

/* One column of record `buf` (`diff` from record[0]), not NULL, at `to` as `packing` holds
   it; returns the end of its bytes. */
uchar *Riptide_codec::pack_column(Field *f, Column_packing packing, uchar *to,
                                  my_ptrdiff_t diff)
{
  switch (packing)
  {
  case Column_packing::EMPTY_BLOB:
  {
    /* A VIRTUAL BLOB: an empty body (its value is computed on read). */
    uint packlength= static_cast<Field_blob *>(f)->pack_length_no_ptr();
    memset(to, 0, packlength);
    return to + packlength;
  }
  case Column_packing::RECORD_BYTES:
    memcpy(to, f->ptr + diff, f->pack_length());
    return to + f->pack_length();
  default:
    return f->pack(to, f->ptr + diff);
  }
}

/* Format 5 with a NULL bit per physical column (bit set: NULL or dropped), then the bytes of
   the others, in physical order. */
void Riptide_codec::pack_layout_row(const uchar *buf, std::string *out) const
{
  my_ptrdiff_t diff= buf - tbl->record[0];
  size_t m= layout.columns.size();
  size_t bitmap= (m + 7) / 8;
  size_t bound= packed_bound(buf);
  out->resize(bound);
  uchar *start= reinterpret_cast<uchar *>(&(*out)[0]);
  uchar *to= start;
  *to++= ROW_FORMAT_LAYOUT;
  int2store(to, uint16(m));
  to+= 2;
  uchar *nulls= to;
  memset(nulls, 0, bitmap);
  to+= bitmap;
  for (size_t q= 0; q < m; q++)
  {
    const Riptide_row_layout::Column &c= layout.columns[q];
    if (c.field == Riptide_row_layout::DROPPED)
    {
      nulls[q / 8]|= uchar(1 << (q % 8));
      continue;
    }
    Field *f= tbl->field[c.field];
    Column_packing packing= columns[c.field];
    if (packing == Column_packing::FROM_KEY)
      continue;
    if (f->is_null_in_record(buf))
    {
      nulls[q / 8]|= uchar(1 << (q % 8));
      continue;
    }
    to= pack_column(f, packing, to, diff);
  }
  DBUG_ASSERT(size_t(to - start) <= bound);
  out->resize(size_t(to - start));
}

/* Any row of a table with a recorded layout: format 3 (the rows written before the first
   instant change: physical columns 0 .. v3_columns - 1, their NULL bits where the layout
   says) or format 5. The physical columns a row does not hold (added after it was written)
   read the value recorded when they were added; the dropped ones it holds are stepped
   over. */
bool Riptide_codec::unpack_layout_row(const char *value, size_t len, const char *pk,
                                      size_t pk_len, uchar *buf, std::string *blobs,
                                      std::string *error) const
{
  TABLE_SHARE *s= tbl->s;
  const uchar *v= reinterpret_cast<const uchar *>(value);
  auto malformed= [&](const std::string &what) {
    *error= "a row of table " + std::string(s->path.str) + " is malformed (" +
            std::to_string(len) + " bytes, format " + std::to_string(int(v[0])) + "): " + what;
    return false;
  };
  if (!layout.recorded)
    return malformed("the table has no recorded row layout");
  /* The physical columns the row holds, and where its NULL bits are. */
  size_t held= 0, header= 0;
  const uchar *nulls= nullptr;
  bool bitmap= v[0] == ROW_FORMAT_LAYOUT;
  if (bitmap)
  {
    if (len < 3)
      return malformed("shorter than its header");
    held= get_u16(v + 1);
    header= 3 + (held + 7) / 8;
    nulls= v + 3;
  }
  else if (v[0] == ROW_FORMAT_PACKED)
  {
    held= layout.v3_columns;
    header= 1 + layout.v3_null_bytes;
    nulls= v + 1;
  }
  else
    return malformed("a table with a recorded row layout holds formats 3 and 5");
  if (held > layout.columns.size())
    return malformed(std::to_string(held) + " columns, the row layout has " +
                     std::to_string(layout.columns.size()));
  if (len < header)
    return malformed("shorter than its NULL bits");
  memcpy(buf, s->default_values, s->reclength);
  if (s->primary_key != MAX_KEY)
  {
    const uchar *k= reinterpret_cast<const uchar *>(pk);
    if (!decode_tuple(&tbl->key_info[s->primary_key], k, k + pk_len, buf))
      return malformed("its primary key of " + std::to_string(pk_len) + " bytes is too short");
  }
  const uchar *p= v + header;
  const uchar *end= v + len;
  if (s->blob_fields)
  {
    blobs->assign(reinterpret_cast<const char *>(p), size_t(end - p));
    p= reinterpret_cast<const uchar *>(blobs->data());
    end= p + blobs->size();
  }
  my_ptrdiff_t diff= buf - tbl->record[0];
  for (size_t q= 0; q < held; q++)
  {
    const Riptide_row_layout::Column &c= layout.columns[q];
    bool is_null= bitmap ? (nulls[q / 8] >> (q % 8)) & 1
                         : c.legacy_null_bit && (nulls[c.legacy_null_offset] & c.legacy_null_bit);
    if (c.field == Riptide_row_layout::DROPPED)
    {
      if (is_null)
        continue;
      size_t n= c.skip.size;
      if (c.skip.prefixed)
      {
        if (size_t(end - p) < c.skip.size)
          return malformed("dropped column " + std::to_string(q) + " has no length");
        n= 0;
        for (uint32_t b= 0; b < c.skip.size; b++)
          n|= size_t(p[b]) << (8 * b);
        p+= c.skip.size;
      }
      if (size_t(end - p) < n)
        return malformed("dropped column " + std::to_string(q) + " does not fit in the " +
                         std::to_string(end - p) + " bytes left");
      p+= n;
      continue;
    }
    Field *f= tbl->field[c.field];
    Column_packing packing= columns[c.field];
    if (packing == Column_packing::FROM_KEY)
      continue;
    if (is_null)
    {
      f->set_null(diff);
      continue;
    }
    f->set_notnull(diff);
    const uchar *next= unpack_column(f, packing, p, end, diff);
    if (!next)
      return malformed("column " + std::string(f->field_name.str) + " does not fit in the " +
                       std::to_string(end - p) + " bytes left");
    p= next;
  }
  if (p != end)
    return malformed(std::to_string(end - p) + " bytes after the last column");
  /* Columns added after the row was written: the value recorded with the change. */
  for (size_t q= held; q < layout.columns.size(); q++)
  {
    const Riptide_row_layout::Column &c= layout.columns[q];
    if (c.field == Riptide_row_layout::DROPPED)
      continue;
    Field *f= tbl->field[c.field];
    if (!c.added)
      return malformed("column " + std::string(f->field_name.str) + " is missing");
    if (c.value.is_null)
    {
      f->set_null(diff);
      continue;
    }
    f->set_notnull(diff);
    const uchar *from= reinterpret_cast<const uchar *>(c.value.packed.data());
    const uchar *vend= from + c.value.packed.size();
    f->move_field_offset(diff);
    const uchar *next= f->unpack(f->ptr, from, vend, 0);
    f->move_field_offset(-diff);
    if (next != vend)
      return malformed("the value recorded for added column " +
                       std::string(f->field_name.str) + " does not unpack");
  }
  return true;
}
