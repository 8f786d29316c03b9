/* Fuzz target: the profile readers (AutoFDO text, etmkit branch list) and writers.
 * The first byte picks the format (0: detect, 1: autofdo, 2: branch-list) and, for AutoFDO,
 * a load base; the rest is the text. Whatever reads without error must write and read back
 * to a fixed point: writing what was read, reading that and writing again gives the same bytes,
 * in both formats; a damaged text must leave the profile read into as it was. */
#include <stdlib.h>
#include <string.h>

#include "etmkit/profile.h"
#include "fuzz_common.h"

static int base_cb(void *ctx, const ek_profile_binary *id, uint64_t *base)
{
    (void)id;
    *base = *(const uint64_t *)ctx;
    return 0;
}

static char *dump(const ek_profile *p, int autofdo, size_t *len)
{
    ek_sbuf s = EK_SBUF_INIT;
    int rc = autofdo ? ek_profile_write_autofdo(p, &s) : ek_profile_write_branch_list(p, &s);
    FUZZ_CHECK(rc == 0, "a writer failed on a profile that was read");
    *len = s.len;
    char *r = s.p ? s.p : calloc(1, 1);
    FUZZ_CHECK(r != NULL, "out of memory");
    return r;
}

/* W(R(text)) == W(R(W(R(text)))) for format fmt (1: autofdo, 2: branch list) */
static void fixed_point(const ek_profile *p, int autofdo, const ek_profile_read_opts *o)
{
    size_t n1, n2;
    char *t1 = dump(p, autofdo, &n1);
    ek_profile *q = NULL;
    FUZZ_CHECK(ek_profile_new(&q) == 0, "out of memory");
    int rc =
        ek_profile_read(q, t1, n1, autofdo ? EK_PROFILE_FMT_AUTOFDO : EK_PROFILE_FMT_BRANCH_LIST,
                        autofdo ? o : NULL, "again", NULL);
    FUZZ_CHECK(rc == 0, "what a writer wrote does not read back");
    char *t2 = dump(q, autofdo, &n2);
    FUZZ_CHECK(n1 == n2 && !memcmp(t1, t2, n1), "write(read(write(x))) differs from write(x)");
    free(t1);
    free(t2);
    ek_profile_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size) return 0;
    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_profile_format fmt = data[0] % 3 == 1   ? EK_PROFILE_FMT_AUTOFDO
                            : data[0] % 3 == 2 ? EK_PROFILE_FMT_BRANCH_LIST
                                               : EK_PROFILE_FMT_UNKNOWN;
    uint64_t base = (uint64_t)(data[0] >> 4) << 12;
    ek_profile_read_opts o = {sizeof o, base_cb, &base};
    ek_profile *p = NULL;
    FUZZ_CHECK(ek_profile_new(&p) == 0, "out of memory");
    /* something already in it, to see that damage leaves it alone */
    ek_profile_binary keep = {"/keep", NULL, 0, 0};
    size_t h;
    FUZZ_CHECK(ek_profile_add_binary(p, &keep, &h) == 0, "out of memory");
    FUZZ_CHECK(ek_profile_add_branch(p, h, 4, 8, 1) == 0, "out of memory");
    size_t nb;
    char *before = dump(p, 0, &nb);
    int rc = ek_profile_read(p, (const char *)data + 1, size - 1, fmt, &o, "fuzz.prof", &fd.sink);
    if (rc) {
        size_t na;
        char *after = dump(p, 0, &na);
        FUZZ_CHECK(na == nb && !memcmp(before, after, nb), "a failed read changed the profile");
        free(after);
    } else {
        fixed_point(p, 0, NULL);
        /* AutoFDO text holds one load base per file and drops what lies below it: only a
         * profile whose binaries all have the base given to the reader is a fixed point */
        int same_base = 1;
        for (size_t i = 0; i < ek_profile_binary_count(p); i++) {
            ek_profile_binary b;
            ek_profile_binary_get(p, i, &b);
            same_base &= b.load_base == base && strcmp(b.path, "/keep");
        }
        if (same_base) fixed_point(p, 1, &o);
        for (size_t i = 0; i < ek_profile_binary_count(p); i++) {
            ek_profile_count *c;
            size_t n;
            for (int k = 0; k <= EK_PROFILE_BRANCHES; k++)
                if (ek_profile_counts(p, i, k, &c, &n) == 0) free(c);
        }
    }
    free(before);
    ek_profile_free(p);
    fuzz_diag_end(&fd);
    return 0;
}
