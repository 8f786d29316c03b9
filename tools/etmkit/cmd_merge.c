/* etmkit merge: add profiles together (the reduce step of a fleet's profile collection) and
 * write the sum as an etmkit branch list, simpleperf's AutoFDO text or BOLT fdata.
 * See docs/PROFILES.md. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "etmkit/profile.h"
#include "etmkit/symbols.h"

static void merge_usage(FILE *f, int full)
{
    fprintf(f, "usage: etmkit merge [--format=branch-list|autofdo|bolt] [options] -o OUT IN...\n");
    if (!full) return;
    fprintf(f,
            "\nAdd profiles together and write the sum. Inputs are etmkit branch lists or\n"
            "simpleperf's AutoFDO text, in any number, order and grouping: the output is the\n"
            "same bytes. Counts of one binary (same build-id and path) add up. See\n"
            "docs/PROFILES.md.\n"
            "\noptions:\n"
            "  -o OUT              the merged profile ('-': standard output); written beside\n"
            "                      OUT and renamed into place, so a failed merge leaves nothing\n"
            "                      (a device, FIFO or link: written in place)\n"
            "  --format=branch-list|autofdo|bolt\n"
            "                      what to write: branch-list (default), autofdo (simpleperf's\n"
            "                      AutoFDO text, for create_llvm_prof), bolt (llvm-bolt fdata\n"
            "                      for one binary: needs the ELF file)\n"
            "  --binary=ELF        the binary's ELF file: bolt names its functions from it and\n"
            "                      writes the profile with its build-id; AutoFDO inputs take its\n"
            "                      first load segment address when the build-id matches\n"
            "  --build-id=HEX      write the binary (or binaries) with this build-id alone:\n"
            "                      one binary's profile out of a merged one (AutoFDO reads one)\n"
            "  --symfs=DIR         look for binaries under DIR (by the path the profile names)\n"
            "  -q, --quiet         no summary line on stderr\n"
            "  -h, --help          this text\n"
            "\nAn input that cannot be read completely is an error: nothing is written (a\n"
            "partial sum would look like a smaller profile).\n");
}

static int read_file(const char *path, char **data, size_t *len)
{
    FILE *f = !strcmp(path, "-") ? stdin : fopen(path, "rb");
    if (!f) return -1;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                free(buf);
                buf = NULL;
            }
            break;
        }
    }
    int e = errno;
    if (f != stdin) fclose(f);
    errno = e;
    if (!buf) return -1;
    *data = buf;
    *len = n;
    return 0;
}

typedef struct merge_ctx {
    const char *binary; /* --binary */
    const char *symfs;  /* --symfs */
} merge_ctx;

/* --build-id=HEX as the profile keeps build-ids (ek_profile_build_id_canon); 0 on a bad value
 * (all zeros included: that is no build-id). */
static size_t parse_build_id(const char *hex, uint8_t *out)
{
    if (!strncmp(hex, "0x", 2)) hex += 2;
    size_t n = strlen(hex);
    if (!n || n % 2 || n / 2 > EK_PROFILE_BUILD_ID_MAX) return 0;
    uint8_t raw[EK_PROFILE_BUILD_ID_MAX] = {0};
    for (size_t i = 0; i < n; i++) {
        char ch = hex[i];
        int v = ch >= '0' && ch <= '9'   ? ch - '0'
                : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
                : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                         : -1;
        if (v < 0) return 0;
        raw[i / 2] = (uint8_t)(raw[i / 2] << 4 | v);
    }
    return ek_profile_build_id_canon(raw, n / 2, out);
}

/* The binaries of p with this build-id, alone, in a new profile (*out); 1 when none has it. */
static int select_build_id(const ek_profile *p, const uint8_t *id, size_t len, ek_profile **out)
{
    if (ek_profile_new(out)) return -1;
    int found = 0;
    for (size_t i = 0; i < ek_profile_binary_count(p); i++) {
        ek_profile_binary b;
        if (ek_profile_binary_get(p, i, &b) || b.build_id_len != len || memcmp(b.build_id, id, len))
            continue;
        if (ek_profile_merge_binary(*out, p, i)) return -1;
        found = 1;
    }
    return found ? 0 : 1;
}

/* Is the ELF file the build of binary id? */
static int same_id(const ek_elf_info *in, const ek_profile_binary *id)
{
    uint8_t eid[EK_PROFILE_BUILD_ID_MAX];
    size_t elen = ek_profile_build_id_canon(in->build_id, in->build_id_len, eid);
    return elen == id->build_id_len && (!elen || !memcmp(eid, id->build_id, elen));
}

/* ELF facts of the file holding a profile binary: --binary, else its path (under --symfs),
 * when the build-ids agree. */
static ek_elf_info *find_elf(const merge_ctx *c, const ek_profile_binary *id)
{
    char *joined = NULL;
    if (c->symfs && id->path[0] && asprintf(&joined, "%s/%s", c->symfs, id->path) < 0)
        joined = NULL;
    const char *cand[2] = {c->binary, joined ? joined : id->path[0] ? id->path : NULL};
    ek_elf_info *found = NULL;
    for (int i = 0; i < 2 && !found; i++) {
        ek_elf_info *in = NULL;
        if (!cand[i] || access(cand[i], R_OK) || ek_elf_info_read(cand[i], NULL, &in)) continue;
        if (same_id(in, id))
            found = in;
        else
            ek_elf_info_free(in);
    }
    free(joined);
    return found;
}

static int base_from_elf(void *ctx, const ek_profile_binary *id, uint64_t *base)
{
    ek_elf_info *in = find_elf(ctx, id);
    if (!in) return -1;
    int rc = in->nsegs ? 0 : -1;
    if (in->nsegs) *base = in->segs[0].vaddr;
    ek_elf_info_free(in);
    return rc;
}

static void print_first(void *ctx, const ek_diag_event *ev)
{
    int *printed = ctx;
    if (*printed) return;
    ek_sbuf line = EK_SBUF_INIT;
    ek_diag_format(&line, ev);
    fprintf(stderr, "etmkit: merge: %s\n", line.p ? line.p : "");
    ek_sbuf_free(&line);
    *printed = 1;
}

/* Write the profile as bolt fdata: the binary the ELF file is, named from it. */
static int write_bolt(const ek_profile *p, const merge_ctx *c, ek_sbuf *out)
{
    size_t nb = ek_profile_binary_count(p);
    ek_profile_binary id;
    const char *elf = c->binary;
    char *joined = NULL;
    if (!elf) {
        if (nb != 1) {
            cli_err("merge: --format=bolt: the profile has %zu binaries: name one with "
                    "--binary=ELF",
                    nb);
            return CLI_USAGE;
        }
        ek_profile_binary_get(p, 0, &id);
        if (c->symfs && asprintf(&joined, "%s/%s", c->symfs, id.path) < 0) return CLI_FAIL;
        elf = joined ? joined : id.path;
    }
    ek_elf_info *in = NULL;
    int printed = 0, status = CLI_FAIL;
    ek_diag d = {print_first, &printed};
    ek_bolt_map *map = NULL;
    if (ek_elf_info_read(elf, &d, &in)) {
        if (!printed) cli_err("merge: %s: cannot read the ELF file", elf);
        goto done;
    }
    int rc = ek_bolt_map_load_elf(elf, &d, &map);
    if (!rc)
        rc = ek_profile_write_bolt_for_elf(p, in->build_id, in->build_id_len, elf, 0, map, out,
                                           NULL);
    if (rc == EK_ERR_NOT_FOUND)
        cli_elf_not_found("merge", "bolt", elf, in);
    else if (rc && !printed)
        cli_err("merge: %s: %s", elf, ek_strerror(rc));
    status = rc ? CLI_FAIL : CLI_OK;
done:
    ek_bolt_map_free(map);
    ek_elf_info_free(in);
    free(joined);
    return status;
}

int cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    merge_ctx c = {NULL, NULL};
    ek_profile_format fmt = EK_PROFILE_FMT_BRANCH_LIST;
    int quiet = 0;
    char **in = calloc((size_t)argc + 1, sizeof *in);
    int nin = 0, only_inputs = 0;
    const char *build_id = NULL;
    uint8_t bid[EK_PROFILE_BUILD_ID_MAX];
    size_t bid_len = 0;
    if (!in) return CLI_FAIL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (only_inputs || a[0] != '-' || !strcmp(a, "-")) {
            in[nin++] = argv[i];
        } else if (!strcmp(a, "--")) {
            only_inputs = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            merge_usage(stdout, 1);
            free(in);
            return CLI_OK;
        } else if (!strcmp(a, "-o") && v) {
            out = v;
            i++;
        } else if (!strncmp(a, "--format=", 9)) {
            fmt = ek_profile_format_from_name(a + 9);
            if (fmt == EK_PROFILE_FMT_UNKNOWN) {
                cli_err("merge: unknown format '%s' (branch-list, autofdo or bolt)", a + 9);
                free(in);
                return CLI_USAGE;
            }
        } else if (!strncmp(a, "--binary=", 9) && a[9]) {
            c.binary = a + 9;
        } else if (!strncmp(a, "--build-id=", 11)) {
            build_id = a + 11;
            if (!(bid_len = parse_build_id(build_id, bid))) {
                cli_err("merge: --build-id=%s: not a build-id (an even number of hex digits, "
                        "not all zeros)",
                        build_id);
                free(in);
                return CLI_USAGE;
            }
        } else if (!strncmp(a, "--symfs=", 8) && a[8]) {
            c.symfs = a + 8;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else {
            cli_err("merge: unexpected argument '%s'", a);
            merge_usage(stderr, 0);
            free(in);
            return CLI_USAGE;
        }
    }
    if (!out || !nin) {
        cli_err("merge: %s", !out ? "-o OUT is needed" : "no input profile given");
        merge_usage(stderr, 0);
        free(in);
        return CLI_USAGE;
    }
    ek_profile *p = NULL;
    if (ek_profile_new(&p)) {
        free(in);
        return CLI_FAIL;
    }
    int status = CLI_OK;
    ek_profile_read_opts ro = {sizeof ro, base_from_elf, &c};
    for (int i = 0; i < nin && status == CLI_OK; i++) {
        char *data = NULL;
        size_t len = 0;
        if (read_file(in[i], &data, &len)) {
            cli_err("merge: %s: %s", in[i], strerror(errno));
            status = CLI_FAIL;
            break;
        }
        int printed = 0;
        ek_diag d = {print_first, &printed};
        int rc = ek_profile_read(p, data, len, EK_PROFILE_FMT_UNKNOWN, &ro, in[i], &d);
        free(data);
        if (rc) {
            if (!printed) cli_err("merge: %s: %s", in[i], ek_strerror(rc));
            status = CLI_FAIL;
        }
    }
    if (status == CLI_OK && build_id) {
        ek_profile *one = NULL;
        int rc = select_build_id(p, bid, bid_len, &one);
        if (rc) {
            if (rc > 0) cli_err("merge: no binary of the profile has build-id %s", build_id);
            ek_profile_free(one);
            status = CLI_FAIL;
        } else {
            ek_profile_free(p);
            p = one;
        }
    }
    ek_sbuf s = EK_SBUF_INIT;
    if (status == CLI_OK) {
        int rc = 0;
        if (fmt == EK_PROFILE_FMT_BOLT)
            status = write_bolt(p, &c, &s);
        else if (fmt == EK_PROFILE_FMT_AUTOFDO)
            rc = ek_profile_write_autofdo(p, &s);
        else
            rc = ek_profile_write_branch_list(p, &s);
        if (rc) {
            cli_err("merge: %s", ek_strerror(rc));
            status = CLI_FAIL;
        }
    }
    if (status == CLI_OK && cli_write_file(out, "merge", &s)) {
        cli_out_error("merge", out, errno);
        status = CLI_FAIL;
    }
    if (status == CLI_OK && !quiet)
        fprintf(stderr, "etmkit: merge: %d profile%s, %zu binar%s -> %s (%s)\n", nin,
                nin == 1 ? "" : "s", ek_profile_binary_count(p),
                ek_profile_binary_count(p) == 1 ? "y" : "ies", out, ek_profile_format_name(fmt));
    ek_sbuf_free(&s);
    ek_profile_free(p);
    free(in);
    return status;
}
