// The header must compile cleanly as C++ (the MariaDB handler includes it): extern "C"
// linkage, no C-only constructs. Compiled with -fsyntax-only by tests/c_program.rs.
#include "riptide.h"

static_assert(sizeof(riptide_xid_t) == 4 + 4 + 4 + RIPTIDE_XID_MAX_GTRID_LEN +
                                           RIPTIDE_XID_MAX_BQUAL_LEN,
              "riptide_xid_t has no padding");
static_assert(sizeof(riptide_status_t) == sizeof(int), "status is a plain C enum");

int main() {
    char *err = nullptr;
    riptide_status_t st = riptide_put(nullptr, nullptr, "k", 1, "v", 1, &err);
    riptide_free(err);
    return st == RIPTIDE_INVALID_ARGUMENT && riptide_abi_version() == RIPTIDE_ABI_VERSION ? 0 : 1;
}
