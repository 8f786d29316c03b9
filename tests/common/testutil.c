#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"

const char *tu_shared_dir(void)
{
    const char *d = getenv("ETMKIT_SHARED");
    struct stat st;
    if (!d || stat(d, &st) != 0 || !S_ISDIR(st.st_mode)) return NULL;
    return d;
}

char *tu_shared_path(const char *rel)
{
    const char *d = tu_shared_dir();
    if (!d) return NULL;
    size_t n = strlen(d) + strlen(rel) + 16;
    char *p = malloc(n);
    snprintf(p, n, "%s/testdata/%s", d, rel);
    struct stat st;
    if (stat(p, &st) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

void tu_skip_all(const char *why)
{
    printf("SKIP: %s\n", why);
    fflush(stdout);
    exit(77);
}

static int tu_skipped;

void tu_note_skip(const char *why)
{
    printf("SKIP: %s\n", why);
    fflush(stdout);
    tu_skipped++;
}

int tu_run(int argc, char **argv, const char *group, const struct CMUnitTest *tests, size_t n,
           int (*setup)(void **), int (*teardown)(void **))
{
    const struct CMUnitTest *run = tests;
    size_t nrun = n;
    if (argc > 1) {
        nrun = 0;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(tests[i].name, argv[1])) {
                run = &tests[i];
                nrun = 1;
                break;
            }
        if (!nrun) {
            fprintf(stderr, "%s: no test named %s in this program\n", argv[0], argv[1]);
            return 1;
        }
    }
    int failed = _cmocka_run_group_tests(group, run, nrun, setup, teardown);
    if (failed) return 1;
    return tu_skipped ? 77 : 0;
}

char *tu_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/etmkit-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void tu_rmtree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
                tu_rmtree(sub);
            else
                unlink(sub);
        }
        closedir(d);
        rmdir(path);
    } else {
        unlink(path);
    }
}

char *tu_write_file(const char *dir, const char *name, const void *data, size_t len)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) {
        free(p);
        return NULL;
    }
    if (len) fwrite(data, 1, len, f);
    fclose(f);
    return p;
}

size_t tu_hex(const char *text, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    while (*text && n < cap) {
        while (*text == ' ' || *text == ',' || *text == '\n' || *text == '\t')
            text++;
        if (!*text) break;
        if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) text += 2;
        char *end;
        unsigned long v = strtoul(text, &end, 16);
        if (end == text) break;
        buf[n++] = (uint8_t)v;
        text = end;
    }
    return n;
}

#define TU_FIELD(f)                                                                                \
    if (a->f != b->f) return #f

const char *tu_insn_diff(const ek_insn *a, const ek_insn *b)
{
    TU_FIELD(target);
    TU_FIELD(flags);
    TU_FIELD(kind);
    TU_FIELD(size);
    TU_FIELD(type);
    TU_FIELD(subtype);
    TU_FIELD(next_isa);
    TU_FIELD(cond);
    TU_FIELD(it_mask);
    return NULL;
}

const char *tu_pe_context_diff(const ek_pe_context *a, const ek_pe_context *b)
{
    TU_FIELD(context_id);
    TU_FIELD(vmid);
    TU_FIELD(el);
    TU_FIELD(security);
    TU_FIELD(bits64);
    TU_FIELD(ctxt_id_valid);
    TU_FIELD(vmid_valid);
    TU_FIELD(el_valid);
    return NULL;
}

const char *tu_elem_diff(const ek_elem *a, const ek_elem *b)
{
    TU_FIELD(index);
    TU_FIELD(st_addr);
    TU_FIELD(en_addr);
    TU_FIELD(timestamp);
    TU_FIELD(cycle_count);
    TU_FIELD(num_instr);
    TU_FIELD(type);
    TU_FIELD(trace_id);
    TU_FIELD(isa);
    TU_FIELD(last_i_type);
    TU_FIELD(last_i_sub);
    TU_FIELD(last_i_size);
    TU_FIELD(flags);
    switch (a->type) {
    case EK_ELEM_EXCEPTION: TU_FIELD(u.exception_number); break;
    case EK_ELEM_ADDR_NACC: TU_FIELD(u.mem_space); break;
    case EK_ELEM_TRACE_ON: TU_FIELD(u.trace_on_reason); break;
    case EK_ELEM_NO_SYNC:
    case EK_ELEM_EO_TRACE: TU_FIELD(u.unsync_reason); break;
    case EK_ELEM_MEMTRANS: TU_FIELD(u.memtrans); break;
    case EK_ELEM_EVENT:
        TU_FIELD(u.event.type);
        TU_FIELD(u.event.number);
        break;
    case EK_ELEM_SYNC_MARKER:
        TU_FIELD(u.marker.type);
        TU_FIELD(u.marker.value);
        break;
    case EK_ELEM_INSTRUMENTATION:
        TU_FIELD(u.ite.value);
        TU_FIELD(u.ite.el);
        break;
    case EK_ELEM_SWTRACE:
        TU_FIELD(u.swt.payload);
        TU_FIELD(u.swt.channel);
        TU_FIELD(u.swt.master);
        TU_FIELD(u.swt.payload_bits);
        TU_FIELD(u.swt.flags);
        break;
    case EK_ELEM_ITMTRACE:
        TU_FIELD(u.itm.value);
        TU_FIELD(u.itm.port);
        TU_FIELD(u.itm.kind);
        TU_FIELD(u.itm.size);
        TU_FIELD(u.itm.overflow);
        break;
    default: break;
    }
    const char *c = tu_pe_context_diff(&a->context, &b->context);
    return c ? c : NULL;
}

const char *tu_elems_diff(const ek_elem *a, const ek_elem *b, size_t n)
{
    static char msg[128];
    for (size_t i = 0; i < n; i++) {
        const char *f = tu_elem_diff(&a[i], &b[i]);
        if (f) {
            snprintf(msg, sizeof msg, "elem %zu: %s", i, f);
            return msg;
        }
    }
    return NULL;
}

Elf64_Phdr *tu_elf64(uint8_t *img, size_t size, int type, int phnum)
{
    memset(img, 0, size);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_type = (Elf64_Half)type;
    eh->e_machine = EM_AARCH64;
    eh->e_version = EV_CURRENT;
    eh->e_phoff = sizeof *eh;
    eh->e_ehsize = sizeof *eh;
    eh->e_phentsize = sizeof(Elf64_Phdr);
    eh->e_phnum = (Elf64_Half)phnum;
    return (Elf64_Phdr *)(img + sizeof *eh);
}
