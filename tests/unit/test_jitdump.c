/* perf's jitdump reader (src/input/jitdump.c): loads, moves and the other records, byte order,
 * damage (truncated and too-short records keep what came before), perf's name rule. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/diag.h"
#include "etmkit/etmkit.h"
#include "input/jitdump.h"
#include "testutil.h"

typedef struct buf {
    uint8_t b[4096];
    size_t n;
    int swap;
} buf;

static void p32(buf *w, uint32_t v)
{
    if (w->swap) v = __builtin_bswap32(v);
    memcpy(w->b + w->n, &v, 4);
    w->n += 4;
}

static void p64(buf *w, uint64_t v)
{
    if (w->swap) v = __builtin_bswap64(v);
    memcpy(w->b + w->n, &v, 8);
    w->n += 8;
}

static void bytes(buf *w, const void *p, size_t n)
{
    memcpy(w->b + w->n, p, n);
    w->n += n;
}

static void header(buf *w, uint32_t pid)
{
    p32(w, 0x4A695444);
    p32(w, 1);
    p32(w, 40);
    p32(w, 183);
    p32(w, 0);
    p32(w, pid);
    p64(w, 1000);
    p64(w, 0);
}

static const uint8_t code_a[8] = {0x00, 0x04, 0x00, 0x11, 0xc0, 0x03, 0x5f, 0xd6};

static void load(buf *w, uint64_t t, uint64_t addr, uint64_t index, const char *name,
                 const uint8_t *code, size_t n)
{
    p32(w, 0);
    p32(w, (uint32_t)(16 + 40 + strlen(name) + 1 + n));
    p64(w, t);
    p32(w, 7);
    p32(w, 8);
    p64(w, addr);
    p64(w, addr);
    p64(w, n);
    p64(w, index);
    bytes(w, name, strlen(name) + 1);
    bytes(w, code, n);
}

static void move(buf *w, uint64_t t, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
    p32(w, 1);
    p32(w, 64);
    p64(w, t);
    p32(w, 7);
    p32(w, 8);
    p64(w, to);
    p64(w, from);
    p64(w, to);
    p64(w, size);
    p64(w, index);
}

typedef struct rec {
    int n;
    char kind[8][40];
    int64_t off[8];
} rec;

static void rec_fn(void *ctx, const ek_diag_event *ev)
{
    rec *r = ctx;
    if (r->n < 8) {
        snprintf(r->kind[r->n], sizeof r->kind[0], "%s", ev->kind);
        r->off[r->n] = ev->offset;
    }
    r->n++;
}

static ek_jitdump *read_buf(const buf *w, rec *r, int *rc)
{
    char *dir = tu_tmpdir();
    char *path = tu_write_file(dir, "jit-7.dump", w->b, w->n);
    ek_diag d = {rec_fn, r};
    ek_jitdump *j = NULL;
    *rc = ek_jitdump_read(path, &d, &j);
    free(path);
    tu_rmtree(dir);
    free(dir);
    return j;
}

static void check_two(const ek_jitdump *j)
{
    assert_int_equal(j->pid, 7);
    assert_int_equal(j->elf_mach, 183);
    assert_int_equal(j->ncodes, 2);
    const ek_jit_code *c = &j->codes[0];
    assert_int_equal(c->move, 0);
    assert_int_equal(c->time, 2000);
    assert_int_equal(c->pid, 7);
    assert_int_equal(c->tid, 8);
    assert_int_equal(c->addr, 0x7f0000001000ull);
    assert_int_equal(c->size, 8);
    assert_int_equal(c->index, 3);
    assert_string_equal(c->name, "hot_loop");
    assert_memory_equal(c->code, code_a, 8);
    c = &j->codes[1];
    assert_int_equal(c->move, 1);
    assert_int_equal(c->time, 3000);
    assert_int_equal(c->old_addr, 0x7f0000001000ull);
    assert_int_equal(c->addr, 0x7f0000002000ull);
    assert_int_equal(c->size, 8);
    assert_int_equal(c->index, 3);
    assert_string_equal(c->name, "hot_loop"); /* the load's */
    assert_memory_equal(c->code, code_a, 8);  /* the load's code moved */
}

static void test_load_move_close(void **state)
{
    (void)state;
    buf w = {.n = 0};
    header(&w, 7);
    /* a debug-info record first (skipped), then the load, a move, an unknown kind, close */
    p32(&w, 2);
    p32(&w, 32);
    p64(&w, 1500);
    p64(&w, 0x7f0000001000ull);
    p64(&w, 0);
    load(&w, 2000, 0x7f0000001000ull, 3, "hot_loop", code_a, 8);
    move(&w, 3000, 0x7f0000001000ull, 0x7f0000002000ull, 8, 3);
    p32(&w, 9);
    p32(&w, 24);
    p64(&w, 3500);
    p64(&w, 0);
    p32(&w, 3);
    p32(&w, 16);
    p64(&w, 4000);
    rec r = {0};
    int rc;
    ek_jitdump *j = read_buf(&w, &r, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(r.n, 0);
    check_two(j);
    assert_int_equal(j->ndebug, 1);
    assert_int_equal(j->nclose, 1);
    assert_int_equal(j->nother, 1);
    assert_int_equal(j->truncated, 0);
    ek_jitdump_free(j);
}

static void test_other_byte_order(void **state)
{
    (void)state;
    buf w = {.n = 0, .swap = 1};
    header(&w, 7);
    load(&w, 2000, 0x7f0000001000ull, 3, "hot_loop", code_a, 8);
    move(&w, 3000, 0x7f0000001000ull, 0x7f0000002000ull, 8, 3);
    rec r = {0};
    int rc;
    ek_jitdump *j = read_buf(&w, &r, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(j->swapped, 1);
    check_two(j);
    ek_jitdump_free(j);
}

/* the code is the record's last code_size bytes, whatever follows the name */
static void test_code_is_last_bytes(void **state)
{
    (void)state;
    buf w = {.n = 0};
    header(&w, 7);
    p32(&w, 0);
    p32(&w, 16 + 40 + 4 + 3 + 8); /* name "f\0" padded with 2 more bytes before the code */
    p64(&w, 2000);
    p32(&w, 7);
    p32(&w, 8);
    p64(&w, 0x1000);
    p64(&w, 0x1000);
    p64(&w, 8);
    p64(&w, 0);
    bytes(&w, "fn\0\0\0\0\0", 7);
    bytes(&w, code_a, 8);
    rec r = {0};
    int rc;
    ek_jitdump *j = read_buf(&w, &r, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(j->ncodes, 1);
    assert_string_equal(j->codes[0].name, "fn");
    assert_memory_equal(j->codes[0].code, code_a, 8);
    ek_jitdump_free(j);
}

static void test_damage_keeps_what_came_before(void **state)
{
    (void)state;
    buf w = {.n = 0};
    header(&w, 7);
    load(&w, 2000, 0x1000, 0, "a", code_a, 8);
    size_t second = w.n;
    /* a load whose code does not fit in its size */
    p32(&w, 0);
    p32(&w, 16 + 40 + 2);
    p64(&w, 2500);
    p32(&w, 7);
    p32(&w, 8);
    p64(&w, 0x2000);
    p64(&w, 0x2000);
    p64(&w, 64);
    p64(&w, 1);
    bytes(&w, "b", 2);
    load(&w, 3000, 0x3000, 2, "c", code_a, 8);
    size_t last = w.n;
    load(&w, 4000, 0x4000, 3, "d", code_a, 8);
    w.n -= 5; /* the last record is cut short: the JIT was still writing */
    rec r = {0};
    int rc;
    ek_jitdump *j = read_buf(&w, &r, &rc);
    assert_int_equal(rc, 0);
    assert_int_equal(j->ncodes, 2);
    assert_string_equal(j->codes[0].name, "a");
    assert_string_equal(j->codes[1].name, "c");
    assert_int_equal(j->truncated, 1);
    assert_int_equal(r.n, 2);
    assert_string_equal(r.kind[0], "jit.bad-record");
    assert_int_equal(r.off[0], (int64_t)second);
    assert_string_equal(r.kind[1], "jit.truncated");
    assert_int_equal(r.off[1], (int64_t)last);
    ek_jitdump_free(j);
}

static void test_not_a_jitdump(void **state)
{
    (void)state;
    buf w = {.n = 0};
    static const char junk[56] = "\177ELF: not a jitdump, no header magic at all";
    bytes(&w, junk, sizeof junk);
    rec r = {0};
    int rc;
    ek_jitdump *j = read_buf(&w, &r, &rc);
    assert_int_equal(rc, EK_ERR_FORMAT);
    assert_null(j);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.kind[0], "jit.bad-file");
}

static void test_name_rule(void **state)
{
    (void)state;
    assert_true(ek_jitdump_name_matches("/home/u/.debug/jit/java-jit-1/jit-1234.dump", 1234));
    assert_true(ek_jitdump_name_matches("jit-5.dump", 5));
    assert_false(ek_jitdump_name_matches("/tmp/jit-1234.dump", 1235));
    assert_false(ek_jitdump_name_matches("/tmp/jit-1234.dumpx", 1234));
    assert_false(ek_jitdump_name_matches("/tmp/xjit-1234.dump", 1234));
    assert_false(ek_jitdump_name_matches("/tmp/jit-.dump", 0));
    assert_false(ek_jitdump_name_matches("//anon", 1234));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_move_close),
        cmocka_unit_test(test_other_byte_order),
        cmocka_unit_test(test_code_is_last_bytes),
        cmocka_unit_test(test_damage_keeps_what_came_before),
        cmocka_unit_test(test_not_a_jitdump),
        cmocka_unit_test(test_name_rule),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
