/*
 * A C program that uses Riptide through riptide.h alone: open, writes, reads, iterators,
 * batches, snapshots, column families, transactions (commit, rollback, optimistic conflict,
 * two-phase commit), statistics, a checkpoint, error paths, close and reopen.
 *
 * Usage: smoke DIR   (DIR must exist; the database is created in DIR/db)
 * Exits 0 and prints "smoke: all checks passed" on success; prints the failed check and
 * exits 1 otherwise. Built and run by tests/c_program.rs.
 */
#include "riptide.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *err = NULL;

static void fail(int line, const char *what) {
    fprintf(stderr, "smoke.c:%d: check failed: %s\n", line, what);
    exit(1);
}

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) fail(__LINE__, #cond);                                                    \
    } while (0)

/* Asserts that a call succeeded (and left errmsg NULL), printing the message if not. */
static void expect_ok(riptide_status_t st, const char *call, int line) {
    if (st != RIPTIDE_OK) {
        fprintf(stderr, "smoke.c:%d: %s failed with %s: %s\n", line, call,
                riptide_status_name(st), err ? err : "(no message)");
        exit(1);
    }
    if (err != NULL) fail(line, "errmsg is not NULL after success");
}
#define OK(call) expect_ok((call), #call, __LINE__)

/* Asserts that a call failed with `want` and a non-empty message; frees the message. */
static void expect_status(riptide_status_t st, riptide_status_t want, const char *call,
                          int line) {
    if (st != want) {
        fprintf(stderr, "smoke.c:%d: %s returned %s, expected %s (%s)\n", line, call,
                riptide_status_name(st), riptide_status_name(want), err ? err : "");
        exit(1);
    }
    if (err == NULL || err[0] == '\0') fail(line, "failure without a message");
    printf("  expected %s: %s\n", riptide_status_name(st), err);
    riptide_free(err);
    err = NULL;
}
#define FAILS_WITH(want, call) expect_status((call), (want), #call, __LINE__)

#define S(str) (str), strlen(str)

/* Reads `key` from `cf`, at `snap`; returns a malloc'd NUL-terminated copy or NULL. */
static char *get(riptide_db_t *db, const riptide_cf_t *cf, const riptide_snapshot_t *snap,
                 const char *key) {
    char *value = NULL;
    size_t len = 0;
    bool found = false;
    OK(riptide_get(db, cf, snap, S(key), &value, &len, &found, &err));
    if (!found) {
        CHECK(value == NULL && len == 0);
        return NULL;
    }
    CHECK(value != NULL);
    char *copy = malloc(len + 1);
    CHECK(copy != NULL);
    memcpy(copy, value, len);
    copy[len] = '\0';
    riptide_free_value(value, len);
    return copy;
}

static void expect_value(riptide_db_t *db, const riptide_cf_t *cf,
                         const riptide_snapshot_t *snap, const char *key, const char *want) {
    char *got = get(db, cf, snap, key);
    if (want == NULL) {
        if (got != NULL) {
            fprintf(stderr, "key %s: expected absent, got %s\n", key, got);
            exit(1);
        }
        return;
    }
    if (got == NULL || strcmp(got, want) != 0) {
        fprintf(stderr, "key %s: expected %s, got %s\n", key, want, got ? got : "(absent)");
        exit(1);
    }
    free(got);
}

/* Appends the iterator's keys to `out` (space separated), forward or backward. */
static void scan(riptide_iter_t *it, bool forward, char *out, size_t cap) {
    out[0] = '\0';
    if (forward) OK(riptide_iter_seek_to_first(it, &err));
    else OK(riptide_iter_seek_to_last(it, &err));
    while (riptide_iter_valid(it)) {
        size_t klen = 0, vlen = 0;
        const char *k = riptide_iter_key(it, &klen);
        const char *v = riptide_iter_value(it, &vlen);
        CHECK(k != NULL && v != NULL);
        if (out[0] != '\0') strncat(out, " ", cap - strlen(out) - 1);
        strncat(out, k, klen < cap - strlen(out) - 1 ? klen : cap - strlen(out) - 1);
        if (forward) OK(riptide_iter_next(it, &err));
        else OK(riptide_iter_prev(it, &err));
    }
}

/* The option tables: every name has a type and a default that reads back by name. */
static void option_tables(void) {
    size_t n = riptide_option_count();
    CHECK(n > 0 && riptide_option_at(n) == NULL);
    riptide_options_t *opts = riptide_options_create();
    const riptide_option_t *cache = NULL, *memtable = NULL;
    for (size_t i = 0; i < n; i++) {
        const riptide_option_t *o = riptide_option_at(i);
        CHECK(o != NULL && o->name != NULL && o->doc != NULL && o->default_text != NULL);
        CHECK((o->flags & ~RIPTIDE_OPTION_DYNAMIC) == RIPTIDE_OPTION_ENGINE);
        OK(riptide_options_set_by_name(opts, o->name, o->default_text, &err));
        if (strcmp(o->name, "block_cache_size") == 0) cache = o;
        if (strcmp(o->name, "write_buffer_size") == 0) memtable = o;
    }
    riptide_options_destroy(opts);
    /* The block cache's size changes while the database is open; the memtable size does not. */
    CHECK(cache != NULL && cache->value_type == RIPTIDE_OPTION_UINT64);
    CHECK(cache->flags & RIPTIDE_OPTION_DYNAMIC);
    CHECK(cache->min == 1 << 20 && cache->default_value == 64 << 20);
    CHECK(memtable != NULL && !(memtable->flags & RIPTIDE_OPTION_DYNAMIC));
    size_t server = riptide_server_option_count();
    const riptide_option_t *sync = NULL;
    for (size_t i = 0; i < server; i++)
        if (strcmp(riptide_server_option_at(i)->name, "sync_mode") == 0)
            sync = riptide_server_option_at(i);
    CHECK(sync != NULL && sync->value_type == RIPTIDE_OPTION_ENUM && sync->enum_count == 3);
    CHECK(strcmp(sync->enum_names[sync->default_value], "interval") == 0);
    CHECK(sync->enum_names[sync->enum_count] == NULL);
    printf("option tables: ok (%zu engine options, %zu server options)\n", n, server);
}

static riptide_db_t *open_db(const char *path) {
    riptide_options_t *opts = riptide_options_create();
    CHECK(opts != NULL);
    OK(riptide_options_set_by_name(opts, "create_if_missing", "ON", &err));
    OK(riptide_options_set_by_name(opts, "sync_mode", "none", &err));
    OK(riptide_options_set_by_name(opts, "write_buffer_size", "64K", &err));
    OK(riptide_options_set_by_name(opts, "compression", "zstd", &err));
    OK(riptide_options_set_by_name(opts, "compression_level", "3", &err));
    OK(riptide_options_set_by_name(opts, "bloom_bits_per_key", "10", &err));
    OK(riptide_options_set_by_name(opts, "max_open_files", "64", &err));
    riptide_db_t *db = NULL;
    OK(riptide_db_open(path, opts, &db, &err));
    CHECK(db != NULL);
    riptide_options_destroy(opts);
    return db;
}

static void basics(riptide_db_t *db) {
    OK(riptide_put(db, NULL, S("key1"), S("value1"), &err));
    OK(riptide_put(db, NULL, S("key2"), S("value2"), &err));
    OK(riptide_put(db, NULL, S("key3"), S("value3"), &err));
    OK(riptide_put(db, NULL, S("key4"), S("value4"), &err));
    OK(riptide_put(db, NULL, "bin", 3, "a\0b", 3, &err));
    expect_value(db, NULL, NULL, "key3", "value3");
    expect_value(db, NULL, NULL, "nope", NULL);

    /* A value with an embedded NUL comes back whole. */
    char *value = NULL;
    size_t len = 0;
    bool found = false;
    OK(riptide_get(db, NULL, NULL, "bin", 3, &value, &len, &found, &err));
    CHECK(found && len == 3 && memcmp(value, "a\0b", 3) == 0);
    riptide_free_value(value, len);

    OK(riptide_delete(db, NULL, S("bin"), &err));
    OK(riptide_put(db, NULL, S("once"), S("x"), &err));
    OK(riptide_single_delete(db, NULL, S("once"), &err));
    expect_value(db, NULL, NULL, "once", NULL);
    printf("put/get/delete: ok\n");
}

static void iterators(riptide_db_t *db) {
    char keys[256];
    riptide_iter_t *it = NULL;
    OK(riptide_iter_create(db, NULL, NULL, NULL, 0, NULL, 0, &it, &err));
    scan(it, true, keys, sizeof keys);
    printf("forward: %s\n", keys);
    CHECK(strcmp(keys, "key1 key2 key3 key4") == 0);
    scan(it, false, keys, sizeof keys);
    printf("backward: %s\n", keys);
    CHECK(strcmp(keys, "key4 key3 key2 key1") == 0);

    /* A read-ahead limit is a hint: the scan still goes on past it. */
    OK(riptide_iter_set_readahead_limit(it, S("key3"), &err));
    scan(it, true, keys, sizeof keys);
    CHECK(strcmp(keys, "key1 key2 key3 key4") == 0);
    OK(riptide_iter_set_readahead_limit(it, NULL, 0, &err));
    OK(riptide_iter_seek(it, S("key25"), &err));
    size_t klen = 0;
    const char *k = riptide_iter_key(it, &klen);
    CHECK(riptide_iter_valid(it) && klen == 4 && memcmp(k, "key3", 4) == 0);
    OK(riptide_iter_seek_for_prev(it, S("key25"), &err));
    k = riptide_iter_key(it, &klen);
    CHECK(riptide_iter_valid(it) && klen == 4 && memcmp(k, "key2", 4) == 0);
    riptide_iter_destroy(it);

    /* Bounds: [key2, key4). */
    OK(riptide_iter_create(db, NULL, NULL, S("key2"), S("key4"), &it, &err));
    scan(it, true, keys, sizeof keys);
    printf("bounded: %s\n", keys);
    CHECK(strcmp(keys, "key2 key3") == 0);
    riptide_iter_destroy(it);
}

static void batches(riptide_db_t *db) {
    riptide_batch_t *b = riptide_batch_create();
    CHECK(b != NULL);
    OK(riptide_batch_put(b, NULL, S("x1"), S("one"), &err));
    OK(riptide_batch_put(b, NULL, S("x2"), S("two"), &err));
    OK(riptide_batch_delete(b, NULL, S("key4"), &err));
    CHECK(riptide_batch_count(b) == 3);
    CHECK(riptide_batch_size_in_bytes(b) > 0);
    OK(riptide_write(db, b, &err));
    CHECK(riptide_batch_count(b) == 0); /* writing empties the batch */
    expect_value(db, NULL, NULL, "x1", "one");
    expect_value(db, NULL, NULL, "key4", NULL);

    OK(riptide_batch_delete_range(b, NULL, S("x1"), S("x3"), &err));
    OK(riptide_batch_single_delete(b, NULL, S("nothing"), &err));
    OK(riptide_batch_clear(b, &err));
    CHECK(riptide_batch_count(b) == 0);
    OK(riptide_batch_delete_range(b, NULL, S("x1"), S("x3"), &err));
    OK(riptide_write(db, b, &err));
    expect_value(db, NULL, NULL, "x2", NULL);

    /* An inverted range is refused when the batch is written. */
    OK(riptide_batch_delete_range(b, NULL, S("z"), S("a"), &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_write(db, b, &err));
    riptide_batch_destroy(b);

    OK(riptide_put(db, NULL, S("r1"), S("v"), &err));
    OK(riptide_put(db, NULL, S("r2"), S("v"), &err));
    OK(riptide_delete_range(db, NULL, S("r1"), S("r3"), &err));
    expect_value(db, NULL, NULL, "r2", NULL);
    printf("batch: ok\n");
}

static void snapshots(riptide_db_t *db) {
    riptide_snapshot_t *snap = NULL;
    OK(riptide_snapshot_create(db, &snap, &err));
    CHECK(riptide_snapshot_seqno(snap) > 0);
    OK(riptide_put(db, NULL, S("key1"), S("changed"), &err));
    expect_value(db, NULL, snap, "key1", "value1");
    expect_value(db, NULL, NULL, "key1", "changed");

    riptide_iter_t *it = NULL;
    OK(riptide_iter_create(db, NULL, snap, NULL, 0, NULL, 0, &it, &err));
    OK(riptide_iter_seek_to_first(it, &err));
    size_t vlen = 0;
    const char *v = riptide_iter_value(it, &vlen);
    CHECK(vlen == 6 && memcmp(v, "value1", 6) == 0);
    riptide_iter_destroy(it);
    riptide_snapshot_release(snap);
    printf("snapshot: ok\n");
}

static void column_families(riptide_db_t *db) {
    riptide_cf_t *users = NULL;
    OK(riptide_cf_create(db, "users", &users, &err));
    OK(riptide_put(db, users, S("alice"), S("admin"), &err));
    expect_value(db, users, NULL, "alice", "admin");
    expect_value(db, NULL, NULL, "alice", NULL);
    size_t name_len = 0;
    CHECK(strcmp(riptide_cf_name(users, &name_len), "users") == 0 && name_len == 5);
    CHECK(riptide_cf_id(users) != 0);

    riptide_cf_t *again = NULL;
    OK(riptide_cf_get(db, "users", &again, &err));
    expect_value(db, again, NULL, "alice", "admin");
    riptide_cf_destroy(again);
    FAILS_WITH(RIPTIDE_NOT_FOUND, riptide_cf_get(db, "missing", &again, &err));
    CHECK(again == NULL);
    FAILS_WITH(RIPTIDE_BUSY, riptide_cf_create(db, "users", &again, &err));

    char **names = NULL;
    size_t count = 0;
    OK(riptide_cf_list(db, &names, &count, &err));
    CHECK(count == 2 && strcmp(names[0], "default") == 0 && strcmp(names[1], "users") == 0);
    riptide_free_string_list(names, count);

    riptide_cf_t *tmp = NULL;
    OK(riptide_cf_create(db, "tmp", &tmp, &err));
    OK(riptide_cf_drop(db, tmp, &err));
    FAILS_WITH(RIPTIDE_NOT_FOUND, riptide_put(db, tmp, S("k"), S("v"), &err));
    riptide_cf_destroy(tmp);
    riptide_cf_destroy(users);
    printf("column families: ok\n");
}

static void transactions(riptide_db_t *db) {
    riptide_txn_options_t *topts = riptide_txn_options_create();
    OK(riptide_txn_options_set_concurrency(topts, RIPTIDE_CONCURRENCY_PESSIMISTIC, &err));
    OK(riptide_txn_options_set_isolation(topts, RIPTIDE_ISOLATION_REPEATABLE_READ, &err));
    OK(riptide_txn_options_set_lock_timeout_ms(topts, 1000, &err));
    OK(riptide_txn_options_set_snapshot_at_begin(topts, true, &err));

    /* Commit. */
    riptide_txn_t *txn = NULL;
    OK(riptide_txn_begin(db, topts, &txn, &err));
    CHECK(riptide_txn_id(txn) > 0);
    OK(riptide_txn_put(txn, NULL, S("t1"), S("committed"), &err));
    char *value = NULL;
    size_t len = 0;
    bool found = false;
    OK(riptide_txn_get(txn, NULL, S("t1"), &value, &len, &found, &err));
    CHECK(found && len == 9 && memcmp(value, "committed", 9) == 0);
    riptide_free_value(value, len);
    expect_value(db, NULL, NULL, "t1", NULL); /* invisible before commit */

    riptide_txn_iter_t *it = NULL;
    OK(riptide_txn_iter_create(txn, NULL, S("t"), S("u"), &it, &err));
    OK(riptide_txn_iter_seek_to_first(it, &err));
    size_t klen = 0;
    const char *k = riptide_txn_iter_key(it, &klen);
    CHECK(riptide_txn_iter_valid(it) && klen == 2 && memcmp(k, "t1", 2) == 0);
    OK(riptide_txn_iter_next(it, &err));
    CHECK(!riptide_txn_iter_valid(it));
    OK(riptide_txn_iter_seek_to_last(it, &err));
    CHECK(riptide_txn_iter_valid(it));
    OK(riptide_txn_iter_prev(it, &err));
    CHECK(!riptide_txn_iter_valid(it));
    OK(riptide_txn_iter_seek(it, S("t0"), &err));
    CHECK(riptide_txn_iter_valid(it));
    OK(riptide_txn_iter_seek_for_prev(it, S("t0"), &err));
    CHECK(!riptide_txn_iter_valid(it));
    riptide_txn_iter_destroy(it);

    OK(riptide_txn_commit(txn, &err));
    riptide_txn_destroy(txn);
    expect_value(db, NULL, NULL, "t1", "committed");
    printf("transaction commit: ok\n");

    /* Rollback, with a savepoint. */
    OK(riptide_txn_begin(db, topts, &txn, &err));
    OK(riptide_txn_put(txn, NULL, S("t2"), S("kept until rollback"), &err));
    OK(riptide_txn_set_savepoint(txn, &err));
    OK(riptide_txn_put(txn, NULL, S("t3"), S("undone"), &err));
    OK(riptide_txn_rollback_to_savepoint(txn, &err));
    OK(riptide_txn_get(txn, NULL, S("t3"), &value, &len, &found, &err));
    CHECK(!found && value == NULL);
    OK(riptide_txn_get_for_update(txn, NULL, S("t2"), true, &value, &len, &found, &err));
    CHECK(found);
    riptide_free_value(value, len);
    FAILS_WITH(RIPTIDE_NOT_FOUND, riptide_txn_release_savepoint(txn, &err));
    OK(riptide_txn_delete(txn, NULL, S("t1"), &err));
    OK(riptide_txn_single_delete(txn, NULL, S("t9"), &err));
    OK(riptide_txn_rollback(txn, &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_txn_commit(txn, &err));
    riptide_txn_destroy(txn);
    expect_value(db, NULL, NULL, "t2", NULL);
    expect_value(db, NULL, NULL, "t1", "committed");
    printf("transaction rollback: ok\n");

    /* Two optimistic transactions write the same key: the second to commit conflicts. */
    OK(riptide_txn_options_set_concurrency(topts, RIPTIDE_CONCURRENCY_OPTIMISTIC, &err));
    riptide_txn_t *a = NULL, *b = NULL;
    OK(riptide_txn_begin(db, topts, &a, &err));
    OK(riptide_txn_begin(db, topts, &b, &err));
    OK(riptide_txn_put(a, NULL, S("contended"), S("from a"), &err));
    OK(riptide_txn_put(b, NULL, S("contended"), S("from b"), &err));
    OK(riptide_txn_commit(a, &err));
    riptide_status_t st = riptide_txn_commit(b, &err);
    CHECK(st == RIPTIDE_CONFLICT);
    CHECK(err != NULL && strlen(err) > 0);
    printf("conflict: %s: %s\n", riptide_status_name(st), err);
    riptide_free(err);
    err = NULL;
    riptide_txn_destroy(a);
    riptide_txn_destroy(b);
    expect_value(db, NULL, NULL, "contended", "from a");

    /* Two-phase commit: prepare, list, commit by xid. */
    OK(riptide_txn_options_set_concurrency(topts, RIPTIDE_CONCURRENCY_PESSIMISTIC, &err));
    OK(riptide_txn_begin(db, topts, &txn, &err));
    OK(riptide_txn_put(txn, NULL, S("p1"), S("prepared"), &err));
    OK(riptide_txn_prepare(txn, 1, S("gtrid-1"), S("bq"), &err));
    riptide_txn_destroy(txn); /* stays prepared */
    expect_value(db, NULL, NULL, "p1", NULL);
    riptide_xid_t *xids = NULL;
    size_t n = 0;
    OK(riptide_prepared_list(db, &xids, &n, &err));
    CHECK(n == 1);
    CHECK(xids[0].format_id == 1 && xids[0].gtrid_len == 7 && xids[0].bqual_len == 2);
    CHECK(memcmp(xids[0].gtrid, "gtrid-1", 7) == 0 && memcmp(xids[0].bqual, "bq", 2) == 0);
    OK(riptide_commit_prepared(db, xids[0].format_id, (const char *)xids[0].gtrid,
                               xids[0].gtrid_len, (const char *)xids[0].bqual,
                               xids[0].bqual_len, &err));
    riptide_free(xids);
    expect_value(db, NULL, NULL, "p1", "prepared");
    OK(riptide_prepared_list(db, &xids, &n, &err));
    CHECK(n == 0 && xids != NULL);
    riptide_free(xids);
    FAILS_WITH(RIPTIDE_NOT_FOUND,
               riptide_commit_prepared(db, 1, S("gtrid-1"), S("bq"), &err));
    FAILS_WITH(RIPTIDE_NOT_FOUND,
               riptide_rollback_prepared(db, 1, S("gtrid-2"), NULL, 0, &err));
    printf("two-phase commit: ok\n");
    riptide_txn_options_destroy(topts);
}

static void maintenance_and_stats(riptide_db_t *db) {
    OK(riptide_flush(db, &err));
    OK(riptide_compact_range(db, NULL, NULL, 0, NULL, 0, &err));
    OK(riptide_compact_range(db, NULL, S("a"), S("z"), &err));
    uint64_t seqno = 0;
    OK(riptide_latest_seqno(db, &seqno, &err));
    CHECK(seqno > 0);

    size_t n = riptide_stat_count();
    CHECK(n > 0 && riptide_stat_at(n) == NULL);
    riptide_stat_value_t *values = malloc(n * sizeof *values);
    CHECK(values != NULL);
    OK(riptide_stats_fill(db, values, n, &err));
    uint64_t keys_written = 0, gets = 0, flushes = 0;
    double write_amplification = -1;
    for (size_t i = 0; i < n; i++) {
        const riptide_stat_t *s = riptide_stat_at(i);
        CHECK(s != NULL && s->name != NULL && s->doc != NULL);
        if (strcmp(s->name, "keys_written") == 0) keys_written = values[i].integer;
        if (strcmp(s->name, "gets") == 0) gets = values[i].integer;
        if (strcmp(s->name, "flushes") == 0) flushes = values[i].integer;
        if (strcmp(s->name, "write_amplification") == 0) {
            CHECK(s->kind == RIPTIDE_STAT_RATIO);
            write_amplification = values[i].ratio;
        }
    }
    free(values);
    CHECK(keys_written > 0 && gets > 0 && flushes > 0 && write_amplification > 0);
    printf("stats: %llu keys written, %llu gets, %llu flushes, write amplification %.2f\n",
           (unsigned long long)keys_written, (unsigned long long)gets,
           (unsigned long long)flushes, write_amplification);
    char *report = NULL;
    OK(riptide_stats_report(db, &report, &err));
    CHECK(report != NULL && strstr(report, "writes:") != NULL);
    CHECK(strstr(report, "row locks:") != NULL);
    riptide_free(report);
}

static void checkpoint(riptide_db_t *db, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/ckpt", dir);
    riptide_checkpoint_info_t info;
    OK(riptide_db_create_checkpoint(db, path, &info, &err));
    CHECK(info.seqno > 0 && info.tables_linked > 0 && info.wal_segments > 0);
    CHECK(info.total_us >= info.writer_stall_us);
    /* The directory exists now: a second checkpoint there is refused. */
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_db_create_checkpoint(db, path, &info, &err));
    CHECK(info.seqno == 0);
    riptide_db_t *copy = NULL;
    OK(riptide_db_open(path, NULL, &copy, &err));
    expect_value(copy, NULL, NULL, "key1", "changed");
    riptide_db_destroy(copy);
    printf("checkpoint: ok\n");
}

static void error_paths(riptide_db_t *db) {
    riptide_db_t *none = NULL;
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_put(NULL, NULL, S("k"), S("v"), &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_put(db, NULL, NULL, 5, S("v"), &err));
    char *value = NULL;
    size_t len = 0;
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT,
               riptide_get(db, NULL, NULL, S("k"), &value, &len, NULL, &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_db_open(NULL, NULL, &none, &err));
    CHECK(none == NULL);
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_txn_commit(NULL, &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_iter_next(NULL, &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT,
               riptide_options_set_by_name(NULL, "sync_mode", "none", &err));
    riptide_options_t *bad = riptide_options_create();
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT,
               riptide_options_set_by_name(bad, "block_cache_size", "1", &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_options_set_by_name(bad, "no_such", "1", &err));
    riptide_options_destroy(bad);
    riptide_txn_options_t *topts = riptide_txn_options_create();
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_txn_options_set_isolation(topts, 99, &err));
    riptide_txn_options_destroy(topts);
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT,
               riptide_compact_range(db, NULL, S("a"), NULL, 0, &err));
    FAILS_WITH(RIPTIDE_INVALID_ARGUMENT, riptide_delete_range(db, NULL, S("z"), S("a"), &err));

    /* A NULL errmsg is allowed: only the status reports the failure. */
    CHECK(riptide_put(NULL, NULL, S("k"), S("v"), NULL) == RIPTIDE_INVALID_ARGUMENT);

    /* Accessors and destructors accept NULL. */
    size_t klen = 1;
    CHECK(riptide_iter_key(NULL, &klen) == NULL && klen == 0);
    CHECK(!riptide_iter_valid(NULL));
    CHECK(riptide_batch_count(NULL) == 0);
    riptide_db_destroy(NULL);
    riptide_iter_destroy(NULL);
    riptide_txn_iter_destroy(NULL);
    riptide_txn_destroy(NULL);
    riptide_batch_destroy(NULL);
    riptide_snapshot_release(NULL);
    riptide_cf_destroy(NULL);
    riptide_options_destroy(NULL);
    riptide_txn_options_destroy(NULL);
    riptide_free(NULL);
    riptide_free_value(NULL, 0);
    CHECK(strcmp(riptide_status_name(RIPTIDE_CONFLICT), "RIPTIDE_CONFLICT") == 0);
    CHECK(strcmp(riptide_status_name(1234), "RIPTIDE_UNKNOWN_STATUS") == 0);
    printf("error paths: ok\n");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/db", argv[1]);

    printf("riptide %s, ABI %u\n", riptide_version(), riptide_abi_version());
    CHECK(riptide_abi_version() == RIPTIDE_ABI_VERSION);
    option_tables();

    riptide_db_t *db = open_db(path);
    /* The directory is locked while open. */
    riptide_db_t *second = NULL;
    FAILS_WITH(RIPTIDE_BUSY, riptide_db_open(path, NULL, &second, &err));

    basics(db);
    iterators(db);
    batches(db);
    snapshots(db);
    column_families(db);
    transactions(db);
    maintenance_and_stats(db);
    checkpoint(db, argv[1]);
    error_paths(db);

    /* Close: later calls fail with CLOSED; closing again is fine. */
    OK(riptide_db_close(db, &err));
    FAILS_WITH(RIPTIDE_CLOSED, riptide_put(db, NULL, S("k"), S("v"), &err));
    OK(riptide_db_close(db, &err));
    riptide_db_destroy(db);

    /* Reopen: everything acknowledged before close is there. */
    db = open_db(path);
    expect_value(db, NULL, NULL, "key1", "changed");
    expect_value(db, NULL, NULL, "p1", "prepared");
    expect_value(db, NULL, NULL, "contended", "from a");
    riptide_cf_t *users = NULL;
    OK(riptide_cf_get(db, "users", &users, &err));
    expect_value(db, users, NULL, "alice", "admin");
    riptide_cf_destroy(users);
    riptide_db_destroy(db); /* closes */
    printf("reopen: ok\n");

    printf("smoke: all checks passed\n");
    return 0;
}
