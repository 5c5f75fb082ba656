/*
  The engine's information_schema tables (issue 20, item 3). Each is an
  MYSQL_INFORMATION_SCHEMA_PLUGIN of this library, declared beside the storage engine in
  hton.cc, and filled from the C ABI at query time:

  RIPTIDE_OPTIONS  every engine option with the value the open engine runs with now (what it
                   was opened with, or what SET GLOBAL changed since), its default, whether
                   it changes at run time, the server variable that sets it, and its doc.

  Before the engine is open (or if it failed to open) the tables are empty.
*/
#include <my_global.h>
#include "sql_class.h"
#include "sql_i_s.h"
#include "sql_show.h"

#include <cstring>
#include <string>

#include "riptide_shim.h"

namespace {

/* Stores `text` into `f` as a string of the server's system character set. */
void store_text(Field *f, const char *text)
{
  f->store(text, strlen(text), system_charset_info);
}

/* The server variable that sets engine option `name` (riptide_<name>), or "" when the
   server exposes none for it. */
std::string server_variable_of(const char *name)
{
  for (size_t i= 0; i < riptide_server_option_count(); i++)
  {
    const riptide_option_t *o= riptide_server_option_at(i);
    if (o && (o->flags & RIPTIDE_OPTION_ENGINE) && strcmp(o->name, name) == 0)
      return std::string("riptide_") + name;
  }
  return std::string();
}

ST_FIELD_INFO riptide_options_fields[]= {
    Show::Column("NAME", Show::Varchar(64), NOT_NULL),
    Show::Column("VALUE", Show::Varchar(1024), NOT_NULL),
    Show::Column("DEFAULT_VALUE", Show::Varchar(1024), NOT_NULL),
    Show::Column("DYNAMIC", Show::Varchar(3), NOT_NULL),
    Show::Column("SYSTEM_VARIABLE", Show::Varchar(64), NULLABLE),
    Show::Column("DESCRIPTION", Show::Varchar(2048), NOT_NULL),
    Show::CEnd()};

enum Options_column
{
  OPT_NAME,
  OPT_VALUE,
  OPT_DEFAULT,
  OPT_DYNAMIC,
  OPT_SYSTEM_VARIABLE,
  OPT_DESCRIPTION
};

int riptide_options_fill(THD *thd, TABLE_LIST *tables, Item *)
{
  if (!riptide_db)
    return 0;
  TABLE *table= tables->table;
  Field **field= table->field;
  for (size_t i= 0; i < riptide_option_count(); i++)
  {
    const riptide_option_t *o= riptide_option_at(i);
    if (!o)
      break;
    char *value= nullptr, *err= nullptr;
    riptide_status_t st= riptide_db_option_value(riptide_db, o->name, &value, &err);
    if (st != RIPTIDE_OK)
    {
      std::string msg= riptide_take_message(st, err);
      my_printf_error(ER_UNKNOWN_ERROR, "RIPTIDE: reading option %s: %s", MYF(0), o->name,
                      msg.c_str());
      return 1;
    }
    store_text(field[OPT_NAME], o->name);
    store_text(field[OPT_VALUE], value);
    riptide_free(value);
    store_text(field[OPT_DEFAULT], o->default_text ? o->default_text : "");
    store_text(field[OPT_DYNAMIC], (o->flags & RIPTIDE_OPTION_DYNAMIC) ? "YES" : "NO");
    std::string var= server_variable_of(o->name);
    if (var.empty())
      field[OPT_SYSTEM_VARIABLE]->set_null();
    else
    {
      field[OPT_SYSTEM_VARIABLE]->set_notnull();
      field[OPT_SYSTEM_VARIABLE]->store(var.data(), var.size(), system_charset_info);
    }
    store_text(field[OPT_DESCRIPTION], o->doc ? o->doc : "");
    if (schema_table_store_record(thd, table))
      return 1;
  }
  return 0;
}

} // namespace

int riptide_i_s_options_init(void *p)
{
  ST_SCHEMA_TABLE *schema= static_cast<ST_SCHEMA_TABLE *>(p);
  schema->fields_info= riptide_options_fields;
  schema->fill_table= riptide_options_fill;
  return 0;
}

int riptide_i_s_deinit(void *) { return 0; }

struct st_mysql_information_schema riptide_i_s_descriptor= {
    MYSQL_INFORMATION_SCHEMA_INTERFACE_VERSION};
