/*
  The plugin's system variables (SHOW VARIABLES LIKE 'riptide%') and status variables (SHOW
  GLOBAL STATUS LIKE 'riptide%'), and how the variables become engine options at init.

  Nothing here is declared per variable or per statistic: both arrays are built with a loop
  from the tables of the C ABI, which are declared once in Rust (the server options:
  riptide_handler::server_options, crates/handler/src/server_options.rs; the statistics:
  the statistics! table of crates/riptide/src/stats.rs). README.md, "Configuration" and
  "Status variables", documents them (a test checks it against the tables).
*/
#include <my_global.h>
#include "sql_class.h"
#include "log.h"
#include <mysql/plugin.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "riptide_shim.h"
#include "transactions.h"

namespace {

/* ---------------------------------------------------------------------------------------
   System variables (README.md, "Configuration").

   The server reads the plugin's system_vars array (riptide_system_variables, named in the
   plugin declaration of hton.cc) when it loads the plugin, right after dlopen, before
   riptide_init. So the array is filled by a static constructor of this file, which runs at
   dlopen: one entry per riptide_server_option_at(i), made with the layout the server's own
   MYSQL_SYSVAR_* / MYSQL_THDVAR_* macros give that type. The layouts are not reproduced by
   hand: the types below are the macros' (DECLARE_MYSQL_*), as sql_plugin.cc declares its
   own (sysvar_uint_t...). The server fills in check, update and, for session variables,
   offset and resolve when it registers them, so every entry lives in writable storage. */

typedef DECLARE_MYSQL_SYSVAR_BASIC(bool_sysvar, my_bool);
typedef DECLARE_MYSQL_SYSVAR_BASIC(str_sysvar, char *);
typedef DECLARE_MYSQL_SYSVAR_SIMPLE(uint_sysvar, uint);
typedef DECLARE_MYSQL_SYSVAR_SIMPLE(ulonglong_sysvar, ulonglong);
typedef DECLARE_MYSQL_SYSVAR_SIMPLE(longlong_sysvar, longlong);
typedef DECLARE_MYSQL_SYSVAR_SIMPLE(double_sysvar, double);
typedef DECLARE_MYSQL_SYSVAR_TYPELIB(enum_sysvar, ulong);
typedef DECLARE_MYSQL_THDVAR_BASIC(bool_thdvar, my_bool);
typedef DECLARE_MYSQL_THDVAR_SIMPLE(uint_thdvar, uint);
typedef DECLARE_MYSQL_THDVAR_SIMPLE(ulonglong_thdvar, ulonglong);
typedef DECLARE_MYSQL_THDVAR_SIMPLE(longlong_thdvar, longlong);
typedef DECLARE_MYSQL_THDVAR_SIMPLE(double_thdvar, double);
typedef DECLARE_MYSQL_THDVAR_TYPELIB(enum_thdvar, ulong);

/* What the server's st_mysql_sys_var (sql_plugin.cc) holds: the common header. */
struct Sysvar_header
{
  MYSQL_PLUGIN_VAR_HEADER;
};

/* The server stores a session variable's offset at *(int *)(var + 1), right after the
   header (sql_plugin.cc, test_plugin_options), where every THDVAR layout keeps it. */
template <typename T> constexpr bool offset_follows_header()
{
  return offsetof(T, offset) == sizeof(Sysvar_header);
}
static_assert(offset_follows_header<MYSQL_SYSVAR_NAME(bool_thdvar)>() &&
                  offset_follows_header<MYSQL_SYSVAR_NAME(uint_thdvar)>() &&
                  offset_follows_header<MYSQL_SYSVAR_NAME(ulonglong_thdvar)>() &&
                  offset_follows_header<MYSQL_SYSVAR_NAME(longlong_thdvar)>() &&
                  offset_follows_header<MYSQL_SYSVAR_NAME(double_thdvar)>() &&
                  offset_follows_header<MYSQL_SYSVAR_NAME(enum_thdvar)>(),
              "a THDVAR layout does not keep its offset right after the header");
static_assert(sizeof(my_bool) == sizeof(char), "MYSQL_SYSVAR_BOOL stores a char");

/* Room for any of the layouts above. */
constexpr size_t SYSVAR_SIZE= std::max(
    {sizeof(MYSQL_SYSVAR_NAME(bool_sysvar)), sizeof(MYSQL_SYSVAR_NAME(str_sysvar)),
     sizeof(MYSQL_SYSVAR_NAME(uint_sysvar)), sizeof(MYSQL_SYSVAR_NAME(ulonglong_sysvar)),
     sizeof(MYSQL_SYSVAR_NAME(longlong_sysvar)), sizeof(MYSQL_SYSVAR_NAME(double_sysvar)),
     sizeof(MYSQL_SYSVAR_NAME(enum_sysvar)), sizeof(MYSQL_SYSVAR_NAME(bool_thdvar)),
     sizeof(MYSQL_SYSVAR_NAME(uint_thdvar)), sizeof(MYSQL_SYSVAR_NAME(ulonglong_thdvar)),
     sizeof(MYSQL_SYSVAR_NAME(longlong_thdvar)), sizeof(MYSQL_SYSVAR_NAME(double_thdvar)),
     sizeof(MYSQL_SYSVAR_NAME(enum_thdvar))});
constexpr size_t SYSVAR_ALIGN= std::max(
    {alignof(MYSQL_SYSVAR_NAME(bool_sysvar)), alignof(MYSQL_SYSVAR_NAME(str_sysvar)),
     alignof(MYSQL_SYSVAR_NAME(uint_sysvar)), alignof(MYSQL_SYSVAR_NAME(ulonglong_sysvar)),
     alignof(MYSQL_SYSVAR_NAME(longlong_sysvar)), alignof(MYSQL_SYSVAR_NAME(double_sysvar)),
     alignof(MYSQL_SYSVAR_NAME(enum_sysvar)), alignof(MYSQL_SYSVAR_NAME(bool_thdvar)),
     alignof(MYSQL_SYSVAR_NAME(uint_thdvar)), alignof(MYSQL_SYSVAR_NAME(ulonglong_thdvar)),
     alignof(MYSQL_SYSVAR_NAME(longlong_thdvar)), alignof(MYSQL_SYSVAR_NAME(double_thdvar)),
     alignof(MYSQL_SYSVAR_NAME(enum_thdvar))});

/* The value of a global variable (the server writes the setting there; my_getopt starts it
   at the default), by type. */
union Sysvar_value
{
  my_bool b;
  uint u;
  ulonglong ull;
  longlong ll;
  double d;
  ulong e;
  char *s;
};

/* One system variable: the server's struct and what it points to. */
struct Sysvar_slot
{
  alignas(SYSVAR_ALIGN) unsigned char var[SYSVAR_SIZE];
  Sysvar_value value;
  TYPELIB typelib;
  const riptide_option_t *option;
};

/* At most this many system variables; riptide_apply_options fails the plugin's init if the
   C ABI declares more (raise it then, with SHIM_SYSVAR_CAPACITY in crates/capi/src/options.rs,
   whose test fails first). */
constexpr size_t SYSVAR_CAPACITY= 64;
Sysvar_slot sysvar_slots[SYSVAR_CAPACITY];
size_t sysvar_count= 0;
/* What went wrong while building the array (reported by riptide_apply_options). */
const char *sysvar_problem= nullptr;
const char *sysvar_problem_name= "";

/* The slots of the variables this file reads itself. */
Sysvar_slot *data_dir_slot= nullptr;
Sysvar_slot *lock_wait_timeout_slot= nullptr;
Sysvar_slot *print_all_deadlocks_slot= nullptr;
Sysvar_slot *analyze_sample_points_slot= nullptr;
Sysvar_slot *bulk_load_slot= nullptr;

} // namespace

/* The plugin's system_vars array, NULL-terminated (zero-initialized, filled at dlopen). */
struct st_mysql_sys_var *riptide_system_variables[SYSVAR_CAPACITY + 1];

namespace {

template <typename T> T &sysvar_as(Sysvar_slot &slot)
{
  return *std::launder(reinterpret_cast<T *>(slot.var));
}

int check_create_checkpoint(THD *, struct st_mysql_sys_var *, void *, struct st_mysql_value *);
void update_create_checkpoint(THD *, struct st_mysql_sys_var *, void *, const void *);

/* Makes `slot` the system variable of option `o`; false (with sysvar_problem set) for a
   combination of type, scope and mutability the plugin cannot serve. */
bool build_sysvar(Sysvar_slot &slot, const riptide_option_t *o)
{
  const bool session= o->flags & RIPTIDE_OPTION_SESSION;
  const bool dynamic= o->flags & RIPTIDE_OPTION_DYNAMIC;
  /* A dynamic engine option (SET GLOBAL riptide_l0_compaction_trigger= 8) is passed to the
     open engine by its check function, check_engine_option, which fails the SET if the
     engine refuses the value, and again by its update, update_engine_option (which alone
     runs for SET ... = DEFAULT), which stores it in the slot. A
     dynamic global option of the server (riptide_print_all_deadlocks) is read by the shim
     where it is used: the default update stores the new value in the slot. */
  const bool engine_dynamic= dynamic && (o->flags & RIPTIDE_OPTION_ENGINE);
  if (engine_dynamic && (session || o->value_type == RIPTIDE_OPTION_BOOL ||
                         o->value_type == RIPTIDE_OPTION_TEXT))
  {
    sysvar_problem= "a dynamic engine option must be a global number or enum";
    return false;
  }
  const int opt= PLUGIN_VAR_RQCMDARG | (dynamic ? 0 : PLUGIN_VAR_READONLY) |
                 (session ? PLUGIN_VAR_THDLOCAL : 0);
  slot.option= o;
  void *var= slot.var;
  switch (o->value_type) {
  case RIPTIDE_OPTION_BOOL:
    if (session)
      new (var) MYSQL_SYSVAR_NAME(bool_thdvar){PLUGIN_VAR_BOOL | opt, o->name, o->doc,
                                                nullptr, nullptr, -1,
                                                my_bool(o->default_value != 0), nullptr};
    else
      new (var) MYSQL_SYSVAR_NAME(bool_sysvar){PLUGIN_VAR_BOOL | opt, o->name, o->doc,
                                                nullptr, nullptr, &slot.value.b,
                                                my_bool(o->default_value != 0)};
    return true;
  case RIPTIDE_OPTION_UINT32:
    if (session)
      new (var) MYSQL_SYSVAR_NAME(uint_thdvar){
          PLUGIN_VAR_INT | PLUGIN_VAR_UNSIGNED | opt, o->name, o->doc, nullptr, nullptr, -1,
          uint(o->default_value), uint(o->min), uint(o->max), 0, nullptr};
    else
      new (var) MYSQL_SYSVAR_NAME(uint_sysvar){
          PLUGIN_VAR_INT | PLUGIN_VAR_UNSIGNED | opt, o->name, o->doc, nullptr, nullptr,
          &slot.value.u, uint(o->default_value), uint(o->min), uint(o->max), 0};
    return true;
  case RIPTIDE_OPTION_UINT64:
    if (session)
      new (var) MYSQL_SYSVAR_NAME(ulonglong_thdvar){
          PLUGIN_VAR_LONGLONG | PLUGIN_VAR_UNSIGNED | opt, o->name, o->doc, nullptr, nullptr,
          -1, o->default_value, o->min, o->max, 0, nullptr};
    else
      new (var) MYSQL_SYSVAR_NAME(ulonglong_sysvar){
          PLUGIN_VAR_LONGLONG | PLUGIN_VAR_UNSIGNED | opt, o->name, o->doc, nullptr, nullptr,
          &slot.value.ull, o->default_value, o->min, o->max, 0};
    return true;
  case RIPTIDE_OPTION_INT64:
    if (session)
      new (var) MYSQL_SYSVAR_NAME(longlong_thdvar){
          PLUGIN_VAR_LONGLONG | opt, o->name, o->doc, nullptr, nullptr, -1, o->default_int,
          o->min_int, o->max_int, 0, nullptr};
    else
      new (var) MYSQL_SYSVAR_NAME(longlong_sysvar){
          PLUGIN_VAR_LONGLONG | opt, o->name,      o->doc,       nullptr, nullptr,
          &slot.value.ll,           o->default_int, o->min_int, o->max_int, 0};
    return true;
  case RIPTIDE_OPTION_DOUBLE:
    if (session)
      new (var) MYSQL_SYSVAR_NAME(double_thdvar){
          PLUGIN_VAR_DOUBLE | opt, o->name, o->doc, nullptr, nullptr, -1, o->default_double,
          o->min_double, o->max_double, 0, nullptr};
    else
      new (var) MYSQL_SYSVAR_NAME(double_sysvar){
          PLUGIN_VAR_DOUBLE | opt, o->name,       o->doc,        nullptr, nullptr,
          &slot.value.d,           o->default_double, o->min_double, o->max_double, 0};
    return true;
  case RIPTIDE_OPTION_ENUM:
    slot.typelib= {uint(o->enum_count), o->name, const_cast<const char **>(o->enum_names),
                   nullptr};
    if (session)
      new (var) MYSQL_SYSVAR_NAME(enum_thdvar){PLUGIN_VAR_ENUM | opt, o->name, o->doc,
                                                nullptr, nullptr, -1,
                                                ulong(o->default_value), nullptr,
                                                &slot.typelib};
    else
      new (var) MYSQL_SYSVAR_NAME(enum_sysvar){PLUGIN_VAR_ENUM | opt, o->name, o->doc,
                                                nullptr, nullptr, &slot.value.e,
                                                ulong(o->default_value), &slot.typelib};
    return true;
  case RIPTIDE_OPTION_TEXT:
    /* riptide_create_checkpoint: an action, done by its check function; the value is never
       stored (the update does nothing), so it reads as empty. */
    if (!session && dynamic && !strcmp(o->name, "create_checkpoint"))
    {
      slot.value.s= const_cast<char *>("");
      new (var) MYSQL_SYSVAR_NAME(str_sysvar){PLUGIN_VAR_STR | PLUGIN_VAR_RQCMDARG |
                                                  PLUGIN_VAR_NOCMDOPT,
                                              o->name,
                                              o->doc,
                                              check_create_checkpoint,
                                              update_create_checkpoint,
                                              &slot.value.s,
                                              const_cast<char *>("")};
      return true;
    }
    /* Without PLUGIN_VAR_MEMALLOC the server keeps a pointer to the command line's text,
       which is only right for a global read-only variable. */
    if (session || dynamic)
    {
      sysvar_problem= "only a global read-only text option is supported";
      return false;
    }
    new (var) MYSQL_SYSVAR_NAME(str_sysvar){PLUGIN_VAR_STR | opt, o->name, o->doc, nullptr,
                                             nullptr, &slot.value.s,
                                             const_cast<char *>(o->default_text)};
    return true;
  }
  sysvar_problem= "unknown option type";
  return false;
}

/* SET riptide_bulk_load: stores the value; turning the connection's own value off ends its
   bulk load held across autocommit statements (transactions.h, Riptide_trx::held_bulk), so
   its rows are visible once the SET returns, or the SET fails with the load's error. SET
   GLOBAL changes the default of new connections only. */
void update_bulk_load(THD *thd, struct st_mysql_sys_var *, void *var_ptr, const void *save)
{
  const my_bool on= *static_cast<const my_bool *>(save);
  *static_cast<my_bool *>(var_ptr)= on;
  if (on || !bulk_load_slot)
    return;
  /* The connection's own value lives at `offset` in its session variables; SET GLOBAL
     passes the global one. (Not v.resolve(): it may take LOCK_global_system_variables,
     which SET GLOBAL already holds here.) */
  auto &v= sysvar_as<MYSQL_SYSVAR_NAME(bool_thdvar)>(*bulk_load_slot);
  if (thd && thd->variables.dynamic_variables_ptr &&
      var_ptr == thd->variables.dynamic_variables_ptr + v.offset)
    finish_held_bulk_load(thd, true);
}

/* The bytes a global variable of option `o`'s type keeps (the layouts of build_sysvar; the
   types a dynamic engine option may have). */
size_t typed_size(const riptide_option_t *o)
{
  switch (o->value_type) {
  case RIPTIDE_OPTION_UINT32:
    return sizeof(uint);
  case RIPTIDE_OPTION_UINT64:
    return sizeof(ulonglong);
  case RIPTIDE_OPTION_INT64:
    return sizeof(longlong);
  case RIPTIDE_OPTION_DOUBLE:
    return sizeof(double);
  case RIPTIDE_OPTION_ENUM:
    return sizeof(ulong);
  }
  return 0;
}

/* SET GLOBAL riptide_create_checkpoint = 'path': writes a checkpoint of the open engine into
   the new directory `path` (relative: to the datadir) and returns when it is complete and
   synced (riptide_db_create_checkpoint); the error log gets what it holds and how long
   writers were held off. A failure fails the SET with the engine's reason, and nothing is
   left at the path. */
int check_create_checkpoint(THD *, struct st_mysql_sys_var *, void *save,
                            struct st_mysql_value *value)
{
  char buf[FN_REFLEN];
  int len= sizeof(buf);
  const char *s= value->val_str(value, buf, &len);
  if (!s || len == 0)
  {
    my_printf_error(ER_WRONG_VALUE_FOR_VAR,
                    "RIPTIDE: riptide_create_checkpoint needs the path of a new directory",
                    MYF(0));
    return 1;
  }
  std::string path(s, size_t(len));
  if (path[0] != FN_LIBCHAR)
  {
    std::string home(mysql_real_data_home);
    if (!home.empty() && home.back() != FN_LIBCHAR)
      home.push_back(FN_LIBCHAR);
    path= home + path;
  }
  if (!riptide_db)
  {
    my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: the engine is not open", MYF(0));
    return 1;
  }
  riptide_checkpoint_info_t info;
  char *err= nullptr;
  riptide_status_t st= riptide_db_create_checkpoint(riptide_db, path.c_str(), &info, &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= riptide_take_message(st, err);
    my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: checkpoint to %s failed: %s", MYF(0),
                    path.c_str(), msg.c_str());
    return 1;
  }
  sql_print_information(
      "RIPTIDE: checkpoint at sequence number %llu written to %s in %llu ms: %llu table "
      "files linked (%llu MiB), %llu copied, %llu WAL segments, %llu MiB copied; writers "
      "held off %llu us",
      (unsigned long long) info.seqno, path.c_str(),
      (unsigned long long) (info.total_us / 1000), (unsigned long long) info.tables_linked,
      (unsigned long long) (info.bytes_linked >> 20), (unsigned long long) info.tables_copied,
      (unsigned long long) info.wal_segments, (unsigned long long) (info.bytes_copied >> 20),
      (unsigned long long) info.writer_stall_us);
  *static_cast<const char **>(save)= "";
  return 0;
}

/* The update of riptide_create_checkpoint: nothing to store (the variable reads as empty). */
void update_create_checkpoint(THD *, struct st_mysql_sys_var *, void *, const void *) {}

/* The check function of a dynamic engine option (SET GLOBAL riptide_<name>= value): reads
   the value as the option's type, gives its text to the open engine (riptide_db_set_option,
   which checks bounds and combinations: l0_compaction_trigger above l0_stop_trigger is
   refused) and, if the engine took it, leaves the typed value in `save` for the server's
   update (update_engine_option) to store. A value the engine refuses fails the SET with
   the engine's message; neither the engine nor the variable changes. */
int check_engine_option(THD *, struct st_mysql_sys_var *var, void *save,
                        struct st_mysql_value *value)
{
  static_assert(offsetof(Sysvar_slot, var) == 0, "a slot starts with its variable");
  const Sysvar_slot *slot= reinterpret_cast<const Sysvar_slot *>(var);
  const riptide_option_t *o= slot->option;
  char buf[64];
  std::string text;
  long long integer= 0;
  double real= 0;
  if (o->value_type == RIPTIDE_OPTION_ENUM &&
      value->value_type(value) == MYSQL_VALUE_TYPE_STRING)
  {
    int len= sizeof(buf);
    const char *s= value->val_str(value, buf, &len);
    if (!s)
      return 1;
    text.assign(s, size_t(len));
    integer= -1;
    for (size_t i= 0; i < o->enum_count; i++)
      if (!strcasecmp(o->enum_names[i], text.c_str()))
        integer= (long long) i;
    if (integer < 0)
    {
      my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: %s is not a value of riptide_%s",
                      MYF(0), text.c_str(), o->name);
      return 1;
    }
  }
  else if (o->value_type == RIPTIDE_OPTION_DOUBLE)
  {
    if (value->val_real(value, &real))
      return 1;
    snprintf(buf, sizeof(buf), "%.17g", real);
    text= buf;
  }
  else
  {
    if (value->val_int(value, &integer))
      return 1;
    const bool negative= integer < 0 && !value->is_unsigned(value);
    if (o->value_type == RIPTIDE_OPTION_ENUM)
    {
      if (negative || (unsigned long long) integer >= o->enum_count)
      {
        my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: %lld is not a value of riptide_%s",
                        MYF(0), integer, o->name);
        return 1;
      }
      text= o->enum_names[integer];
    }
    else if (negative && o->value_type != RIPTIDE_OPTION_INT64)
    {
      my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: riptide_%s cannot be negative",
                      MYF(0), o->name);
      return 1;
    }
    else
    {
      if (o->value_type == RIPTIDE_OPTION_INT64)
        snprintf(buf, sizeof(buf), "%lld", integer);
      else
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long) integer);
      text= buf;
    }
  }
  if (!riptide_db)
  {
    my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: the engine is not open", MYF(0));
    return 1;
  }
  char *err= nullptr;
  riptide_status_t st= riptide_db_set_option(riptide_db, o->name, text.c_str(), &err);
  if (st != RIPTIDE_OK)
  {
    std::string msg= riptide_take_message(st, err);
    my_printf_error(ER_WRONG_VALUE_FOR_VAR, "RIPTIDE: SET riptide_%s = %s refused: %s",
                    MYF(0), o->name, text.c_str(), msg.c_str());
    return 1;
  }
  Sysvar_value typed;
  switch (o->value_type) {
  case RIPTIDE_OPTION_UINT32:
    typed.u= uint(integer);
    break;
  case RIPTIDE_OPTION_UINT64:
    typed.ull= ulonglong(integer);
    break;
  case RIPTIDE_OPTION_INT64:
    typed.ll= integer;
    break;
  case RIPTIDE_OPTION_DOUBLE:
    typed.d= real;
    break;
  case RIPTIDE_OPTION_ENUM:
    typed.e= ulong(integer);
    break;
  }
  /* Every member of the union starts at its beginning. */
  memcpy(save, &typed, typed_size(o));
  return 0;
}

/* The text riptide_db_set_option reads for the typed value `v` of option `o` (as the
   server keeps it: the layouts of build_sysvar). */
std::string engine_option_text(const riptide_option_t *o, const void *v)
{
  char buf[64];
  switch (o->value_type) {
  case RIPTIDE_OPTION_UINT32:
    snprintf(buf, sizeof(buf), "%u", *static_cast<const uint *>(v));
    return buf;
  case RIPTIDE_OPTION_UINT64:
    snprintf(buf, sizeof(buf), "%llu", *static_cast<const ulonglong *>(v));
    return buf;
  case RIPTIDE_OPTION_INT64:
    snprintf(buf, sizeof(buf), "%lld", *static_cast<const longlong *>(v));
    return buf;
  case RIPTIDE_OPTION_DOUBLE:
    snprintf(buf, sizeof(buf), "%.17g", *static_cast<const double *>(v));
    return buf;
  case RIPTIDE_OPTION_ENUM: {
    const ulong i= *static_cast<const ulong *>(v);
    return i < o->enum_count ? o->enum_names[i] : "";
  }
  }
  return "";
}

/* The update function of a dynamic engine option: gives the value to the engine again and
   stores it. It also runs without check_engine_option, for SET GLOBAL riptide_<name> =
   DEFAULT; if the engine refuses the default (another option changed since), the variable
   keeps its value and the statement gets a warning with the engine's reason. */
void update_engine_option(THD *thd, struct st_mysql_sys_var *var, void *var_ptr,
                          const void *save)
{
  const Sysvar_slot *slot= reinterpret_cast<const Sysvar_slot *>(var);
  const riptide_option_t *o= slot->option;
  const std::string text= engine_option_text(o, save);
  char *err= nullptr;
  riptide_status_t st= riptide_db ? riptide_db_set_option(riptide_db, o->name, text.c_str(), &err)
                                  : RIPTIDE_INVALID_ARGUMENT;
  if (st != RIPTIDE_OK)
  {
    std::string msg= riptide_db ? riptide_take_message(st, err) : "the engine is not open";
    push_warning_printf(thd, Sql_condition::WARN_LEVEL_WARN, ER_WRONG_VALUE_FOR_VAR,
                        "RIPTIDE: SET riptide_%s = %s refused, the value stays: %s", o->name,
                        text.c_str(), msg.c_str());
    return;
  }
  memcpy(var_ptr, save, typed_size(o));
}

/* Builds riptide_system_variables from the C ABI's server option table. */
void build_sysvars()
{
  const size_t n= riptide_server_option_count();
  for (size_t i= 0; i < n; i++)
  {
    const riptide_option_t *o= riptide_server_option_at(i);
    if (!o)
      break;
    if (sysvar_count == SYSVAR_CAPACITY)
    {
      sysvar_problem= "more server options than SYSVAR_CAPACITY in sysvars.cc";
      sysvar_problem_name= o->name;
      return;
    }
    Sysvar_slot &slot= sysvar_slots[sysvar_count];
    if (!build_sysvar(slot, o))
    {
      sysvar_problem_name= o->name;
      return;
    }
    if ((o->flags & RIPTIDE_OPTION_ENGINE) && (o->flags & RIPTIDE_OPTION_DYNAMIC))
    {
      reinterpret_cast<Sysvar_header *>(slot.var)->check= &check_engine_option;
      reinterpret_cast<Sysvar_header *>(slot.var)->update= &update_engine_option;
    }
    if (!strcmp(o->name, "data_dir") && o->value_type == RIPTIDE_OPTION_TEXT)
      data_dir_slot= &slot;
    if (!strcmp(o->name, "lock_wait_timeout") && (o->flags & RIPTIDE_OPTION_SESSION) &&
        o->value_type == RIPTIDE_OPTION_UINT64)
      lock_wait_timeout_slot= &slot;
    if (!strcmp(o->name, "bulk_load") && (o->flags & RIPTIDE_OPTION_SESSION) &&
        o->value_type == RIPTIDE_OPTION_BOOL)
    {
      bulk_load_slot= &slot;
      sysvar_as<MYSQL_SYSVAR_NAME(bool_thdvar)>(slot).update= &update_bulk_load;
    }
    if (!strcmp(o->name, "print_all_deadlocks") && !(o->flags & RIPTIDE_OPTION_SESSION) &&
        o->value_type == RIPTIDE_OPTION_BOOL)
      print_all_deadlocks_slot= &slot;
    if (!strcmp(o->name, "analyze_sample_points") && (o->flags & RIPTIDE_OPTION_SESSION) &&
        o->value_type == RIPTIDE_OPTION_UINT32)
      analyze_sample_points_slot= &slot;
    riptide_system_variables[sysvar_count++]=
        reinterpret_cast<st_mysql_sys_var *>(slot.var);
  }
}

/* ---------------------------------------------------------------------------------------
   Status variables: SHOW GLOBAL STATUS LIKE 'riptide%'. One SHOW_FUNC entry "riptide"
   that, at query time, fills every statistic (riptide_stats_fill) and returns an array of
   SHOW_LONGLONG / SHOW_DOUBLE entries pointing at the values (the server prefixes the names
   with "riptide_"). The array and the values are allocated on the statement's memory root
   (thd_alloc, freed when the statement ends), one pair per call, so concurrent and nested
   calls (a stored function reading GLOBAL_STATUS while it is being listed) never share
   them, and their number has no limit. (Until 2026-11-29 they lived in the server's
   scratch buffer of SHOW_VAR_FUNC_BUFF_SIZE bytes, which held 63: the 63rd statistic
   filled it.) */

/* The statistics in the order SHOW STATUS lists them (by name, as the server sorts its
   own); each is an index of riptide_stat_at. */
std::vector<size_t> status_order;

void build_status_order()
{
  const size_t n= riptide_stat_count();
  status_order.resize(n);
  for (size_t i= 0; i < n; i++)
    status_order[i]= i;
  std::sort(status_order.begin(), status_order.end(), [](size_t a, size_t b) {
    return strcmp(riptide_stat_at(a)->name, riptide_stat_at(b)->name) < 0;
  });
}

/* Fills both arrays when the server loads the plugin (dlopen), before it reads them. */
struct Build_at_load
{
  Build_at_load()
  {
    build_sysvars();
    build_status_order();
  }
} build_at_load;

/* An empty array in the server's scratch buffer (no database, or no memory). */
int show_no_riptide_vars(SHOW_VAR *var, void *buff)
{
  SHOW_VAR *none= new (buff) SHOW_VAR{NullS, NullS, SHOW_LONG};
  var->type= SHOW_ARRAY;
  var->value= reinterpret_cast<char *>(none);
  return 0;
}

int show_riptide_vars(THD *thd, SHOW_VAR *var, void *buff, struct system_status_var *,
                      enum enum_var_type)
{
  const size_t n= status_order.size();
  if (!riptide_db || !thd)
    return show_no_riptide_vars(var, buff);
  auto *values= static_cast<riptide_stat_value_t *>(
      thd_alloc(thd, n * sizeof(riptide_stat_value_t)));
  auto *vars= static_cast<SHOW_VAR *>(thd_alloc(thd, (n + 1) * sizeof(SHOW_VAR)));
  if (!values || !vars)
    return show_no_riptide_vars(var, buff);
  char *err= nullptr;
  riptide_status_t st= riptide_stats_fill(riptide_db, values, n, &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_warning("RIPTIDE: statistics: %s", riptide_take_message(st, err).c_str());
    return show_no_riptide_vars(var, buff);
  }
  for (size_t i= 0; i < n; i++)
  {
    const size_t stat= status_order[i];
    const riptide_stat_t *s= riptide_stat_at(stat);
    vars[i].name= s->name;
    vars[i].value= reinterpret_cast<char *>(&values[stat]);
    vars[i].type= s->kind == RIPTIDE_STAT_RATIO ? SHOW_DOUBLE : SHOW_LONGLONG;
  }
  vars[n]= {NullS, NullS, SHOW_LONG};
  var->type= SHOW_ARRAY;
  var->value= reinterpret_cast<char *>(vars);
  return 0;
}

/* The resolved riptide_data_dir (what SHOW VARIABLES prints). */
std::string data_dir_value;

} // namespace

SHOW_VAR riptide_status_variables[]= {
    {"riptide", reinterpret_cast<char *>(&show_riptide_vars), SHOW_FUNC},
    {NullS, NullS, SHOW_LONG}};

/* The lock wait limit of a session begun now by `thd`, in milliseconds. */
uint64_t riptide_lock_wait_timeout_ms(THD *thd)
{
  /* riptide_apply_options refused to start without it, so it is there once a session
     exists. */
  if (!lock_wait_timeout_slot)
    return 0;
  auto &v= sysvar_as<MYSQL_SYSVAR_NAME(ulonglong_thdvar)>(*lock_wait_timeout_slot);
  return uint64_t(*v.resolve(thd, v.offset)) * 1000;
}

/* riptide_bulk_load of `thd`: whether its inserts may take the bulk path (off if the
   variable is missing). */
bool riptide_bulk_load(THD *thd)
{
  if (!bulk_load_slot)
    return false;
  auto &v= sysvar_as<MYSQL_SYSVAR_NAME(bool_thdvar)>(*bulk_load_slot);
  return *v.resolve(thd, v.offset);
}

/* riptide_analyze_sample_points of `thd`: how many places ANALYZE TABLE samples a large
   table's indexes at (0: read every table whole; also when the variable is missing). */
uint riptide_analyze_sample_points(THD *thd)
{
  if (!analyze_sample_points_slot)
    return 0;
  auto &v= sysvar_as<MYSQL_SYSVAR_NAME(uint_thdvar)>(*analyze_sample_points_slot);
  return *v.resolve(thd, v.offset);
}

/* riptide_print_all_deadlocks: whether a deadlock goes to the error log. A relaxed read of
   the byte the server stores (SET GLOBAL); a statement racing the SET may see either. */
bool riptide_print_all_deadlocks()
{
  return print_all_deadlocks_slot &&
         __atomic_load_n(&print_all_deadlocks_slot->value.b, __ATOMIC_RELAXED);
}

/* The database directory: riptide_data_dir, by default <datadir>/#riptide (the '#' keeps
   the server from taking the folder for a database, as MyRocks' #rocksdb); a relative path
   is relative to the datadir. */
std::string riptide_resolve_data_dir()
{
  std::string home(mysql_real_data_home);
  if (!home.empty() && home.back() != FN_LIBCHAR)
    home.push_back(FN_LIBCHAR);
  char *dir= data_dir_slot ? data_dir_slot->value.s : nullptr;
  if (!dir || !*dir)
    data_dir_value= home + "#riptide";
  else if (dir[0] == FN_LIBCHAR)
    data_dir_value= dir;
  else
    data_dir_value= home + dir;
  if (data_dir_slot)
    data_dir_slot->value.s= const_cast<char *>(data_dir_value.c_str());
  return data_dir_value;
}

/* A global variable's value as riptide_options_set_by_name reads it. */
static std::string sysvar_text(const Sysvar_slot &slot)
{
  const riptide_option_t *o= slot.option;
  const Sysvar_value &v= slot.value;
  switch (o->value_type) {
  case RIPTIDE_OPTION_BOOL:
    return v.b ? "ON" : "OFF";
  case RIPTIDE_OPTION_UINT32:
    return std::to_string(v.u);
  case RIPTIDE_OPTION_UINT64:
    return std::to_string(v.ull);
  case RIPTIDE_OPTION_INT64:
    return std::to_string(v.ll);
  case RIPTIDE_OPTION_DOUBLE:
  {
    char buf[32];
    snprintf(buf, sizeof buf, "%.17g", v.d);
    return buf;
  }
  case RIPTIDE_OPTION_ENUM:
    return v.e < o->enum_count ? o->enum_names[v.e] : std::to_string(v.e);
  default:
    return v.s ? v.s : "";
  }
}

/* Checks that the variable and status arrays were built, then sets every engine option of
   the server option table from its (read-only, global) variable. On failure, logs which
   variable the engine refused and returns false. */
bool riptide_apply_options(riptide_options_t *opts)
{
  if (sysvar_problem)
  {
    sql_print_error("RIPTIDE: system variable riptide_%s: %s", sysvar_problem_name,
                    sysvar_problem);
    return false;
  }
  if (!data_dir_slot || !lock_wait_timeout_slot)
  {
    sql_print_error("RIPTIDE: the C ABI's server options lack riptide_data_dir (text) or "
                    "riptide_lock_wait_timeout (session, unsigned 64-bit)");
    return false;
  }
  char *err= nullptr;
  riptide_status_t st= riptide_options_set_by_name(opts, "create_if_missing", "ON", &err);
  if (st != RIPTIDE_OK)
  {
    sql_print_error("RIPTIDE: create_if_missing: %s", riptide_take_message(st, err).c_str());
    return false;
  }
  for (size_t i= 0; i < sysvar_count; i++)
  {
    const Sysvar_slot &slot= sysvar_slots[i];
    if (!(slot.option->flags & RIPTIDE_OPTION_ENGINE))
      continue;
    std::string text= sysvar_text(slot);
    st= riptide_options_set_by_name(opts, slot.option->name, text.c_str(), &err);
    if (st != RIPTIDE_OK)
    {
      sql_print_error("RIPTIDE: invalid riptide_%s: %s", slot.option->name,
                      riptide_take_message(st, err).c_str());
      return false;
    }
  }
  return true;
}
