/* BOLT's functions from .eh_frame FDEs and the AArch64 PLT (src/profile/eh_frame.c,
 * ek_bolt_map_load_elf): the FDE walk on crafted .eh_frame bytes (encodings, augmentations,
 * the 64-bit length, the terminator, unsupported and damaged entries, every truncation and
 * random damage without a read past the bytes), and the map of a crafted AArch64 ELF file:
 * __BOLT_FDE_FUNCat<hex> where no symbol's function starts or covers, the FDE's size for a
 * symbol at its start, <sym>@PLT and __BOLT_PSEUDO_.plt, .dynsym not read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etmkit/profile.h"
#include "profile/eh_frame.h"
#include "testutil.h"

/* ---- .eh_frame bytes ---------------------------------------------------------------------- */

typedef struct buf {
    uint8_t b[4096];
    size_t n;
    int big;
} buf;

static void put(buf *o, uint64_t v, unsigned n)
{
    assert_true(o->n + n <= sizeof o->b);
    for (unsigned i = 0; i < n; i++)
        o->b[o->n + i] = (uint8_t)(v >> 8 * (o->big ? n - 1 - i : i));
    o->n += n;
}

static void put_uleb(buf *o, uint64_t v)
{
    do {
        uint8_t b = v & 0x7f;
        v >>= 7;
        put(o, b | (v ? 0x80 : 0), 1);
    } while (v);
}

static void put_sleb(buf *o, int64_t v)
{
    for (;;) {
        uint8_t b = v & 0x7f;
        v >>= 7; /* arithmetic on the toolchains this builds with */
        int done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
        put(o, b | (done ? 0 : 0x80), 1);
        if (done) return;
    }
}

static void patch32(buf *o, size_t at, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++)
        o->b[at + i] = (uint8_t)(v >> 8 * (o->big ? 3 - i : i));
}

/* A CIE: aug "" / "zR" / "zPLR" (personality sdata4 pcrel, 4 bytes), FDE encoding enc;
 * version 1. Returns its offset. */
static size_t cie(buf *o, const char *aug, unsigned enc)
{
    size_t at = o->n;
    put(o, 0, 4); /* length, patched */
    put(o, 0, 4); /* CIE id */
    put(o, 1, 1);
    for (const char *c = aug; *c; c++)
        put(o, (uint8_t)*c, 1);
    put(o, 0, 1);
    put_uleb(o, 1);  /* code alignment */
    put_sleb(o, -4); /* data alignment */
    put(o, 30, 1);   /* return address column */
    if (!strcmp(aug, "zR")) {
        put_uleb(o, 1);
        put(o, enc, 1);
    } else if (!strcmp(aug, "zQR")) {
        put_uleb(o, 2);
        put(o, 0, 1);
        put(o, enc, 1);
    } else if (!strcmp(aug, "zPLR")) {
        put_uleb(o, 7);
        put(o, 0x9b, 1); /* indirect pcrel sdata4 */
        put(o, 0x11223344, 4);
        put(o, 0x1b, 1); /* LSDA encoding */
        put(o, enc, 1);
    }
    put(o, 0x0c, 1); /* DW_CFA_def_cfa sp, 0: never read */
    put(o, 31, 1);
    put(o, 0, 1);
    while ((o->n - at) % 4)
        put(o, 0, 1);
    patch32(o, at, (uint32_t)(o->n - at - 4));
    return at;
}

/* A value in encoding enc at the current end (section address sec). */
static void put_enc(buf *o, unsigned enc, uint64_t v, uint64_t sec, unsigned asz)
{
    if ((enc & 0x70) == 0x10) v -= sec + o->n;
    switch (enc & 0x0f) {
    case 0x00: put(o, v, asz); break;
    case 0x01: put_uleb(o, v); break;
    case 0x02:
    case 0x0a: put(o, v, 2); break;
    case 0x03:
    case 0x0b: put(o, v, 4); break;
    case 0x04:
    case 0x0c: put(o, v, 8); break;
    case 0x09: put_sleb(o, (int64_t)v); break;
    default: fail_msg("encoding %#x", enc);
    }
}

static size_t fde(buf *o, size_t cie_at, const char *aug, unsigned enc, uint64_t start,
                  uint64_t size, uint64_t sec, unsigned asz)
{
    size_t at = o->n;
    put(o, 0, 4);
    put(o, (uint32_t)(o->n - cie_at), 4);
    put_enc(o, enc, start, sec, asz);
    put_enc(o, enc & 0x0f, size, sec, asz);
    if (aug[0] == 'z') {
        if (strchr(aug, 'L')) {
            put_uleb(o, 4);
            put(o, 0, 4);
        } else {
            put_uleb(o, 0);
        }
    }
    put(o, 0, 1); /* DW_CFA_nop */
    while ((o->n - at) % 4)
        put(o, 0, 1);
    patch32(o, at, (uint32_t)(o->n - at - 4));
    return at;
}

typedef struct fde_list {
    uint64_t start[64], size[64];
    size_t n;
} fde_list;

static int collect(void *ctx, uint64_t start, uint64_t size)
{
    fde_list *g = ctx;
    if (g->n < 64) {
        g->start[g->n] = start;
        g->size[g->n] = size;
    }
    g->n++;
    return 0;
}

/* walk a copy of exactly n bytes (ASan sees any read past them) */
static int walk(const uint8_t *b, size_t n, uint64_t sec, unsigned asz, int big, fde_list *g,
                ek_eh_frame_stats *st)
{
    uint8_t *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n) memcpy(copy, b, n);
    memset(g, 0, sizeof *g);
    int rc = ek_eh_frame_walk(copy, n, sec, asz, big, collect, g, st);
    free(copy);
    return rc;
}

/* Every encoding this reader takes, in CIEs "", "zR" and "zPLR", little- and big-endian,
 * 8- and 4-byte addresses: the FDEs' ranges as written. */
static void test_fde_encodings(void **state)
{
    (void)state;
    static const unsigned encs[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a, 0x0b,
                                    0x0c, 0x10, 0x13, 0x14, 0x1b, 0x1c, 0x19, 0x11};
    for (int big = 0; big < 2; big++)
        for (unsigned asz = 4; asz <= 8; asz += 4)
            for (size_t k = 0; k < sizeof encs / sizeof encs[0]; k++) {
                unsigned enc = encs[k];
                if ((enc & 0x0f) == 0x02 || (enc & 0x0f) == 0x0a) continue; /* below */
                const uint64_t sec = 0x400;
                buf o = {.big = big};
                size_t c1 = cie(&o, "zR", enc);
                fde(&o, c1, "zR", enc, 0x1000, 0x40, sec, asz);
                fde(&o, c1, "zR", enc, 0x1040, 0x18, sec, asz);
                size_t c2 = cie(&o, "zPLR", enc);
                fde(&o, c2, "zPLR", enc, 0x2000, 0x100, sec, asz);
                size_t c3 = cie(&o, "", 0);
                fde(&o, c3, "", 0, 0x3000, 0x8, sec, asz);
                put(&o, 0, 4); /* terminator */
                fde_list g;
                ek_eh_frame_stats st;
                assert_int_equal(walk(o.b, o.n, sec, asz, big, &g, &st), 0);
                assert_int_equal(st.cies, 3);
                assert_int_equal(st.fdes, 4);
                assert_int_equal(st.unsupported + st.bad + (size_t)st.truncated, 0);
                assert_int_equal(g.n, 4);
                const uint64_t ws[] = {0x1000, 0x1040, 0x2000, 0x3000};
                const uint64_t wz[] = {0x40, 0x18, 0x100, 0x8};
                for (int i = 0; i < 4; i++) {
                    assert_int_equal(g.start[i], ws[i]);
                    assert_int_equal(g.size[i], wz[i]);
                }
            }
    /* 2-byte values: small addresses; a negative sdata2 pc-relative start */
    buf o = {0};
    size_t c = cie(&o, "zR", 0x12);
    fde(&o, c, "zR", 0x12, 0x500, 0x10, 0x400, 8);
    c = cie(&o, "zR", 0x1a);
    fde(&o, c, "zR", 0x1a, 0x300, 0x20, 0x400, 8);
    fde_list g;
    ek_eh_frame_stats st;
    assert_int_equal(walk(o.b, o.n, 0x400, 8, 0, &g, &st), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.start[0], 0x500);
    assert_int_equal(g.size[0], 0x10);
    assert_int_equal(g.start[1], 0x300);
    assert_int_equal(g.size[1], 0x20);
    /* 4-byte addresses wrap: pcrel below 0 stays in 32 bits */
    o = (buf){0};
    c = cie(&o, "zR", 0x1b);
    fde(&o, c, "zR", 0x1b, 0xfffff000u, 0x10, 0x400, 4);
    assert_int_equal(walk(o.b, o.n, 0x400, 4, 0, &g, &st), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.start[0], 0xfffff000u);
}

/* The 64-bit length, the terminator, unsupported encodings and augmentations (skipped and
 * counted), a CIE pointer to nothing, an entry longer than the section. */
static void test_fde_structure(void **state)
{
    (void)state;
    const uint64_t sec = 0x400;
    buf o = {0};
    size_t c = cie(&o, "zR", 0x1b);
    /* an FDE in the 64-bit format: 0xffffffff, 8-byte length, still a 4-byte CIE pointer */
    size_t at = o.n;
    put(&o, 0xffffffffu, 4);
    put(&o, 0, 8);
    put(&o, (uint32_t)(o.n - c), 4);
    put_enc(&o, 0x1b, 0x1234, sec, 8);
    put(&o, 0x56, 4);
    put_uleb(&o, 0);
    uint64_t len = o.n - at - 12;
    for (int i = 0; i < 8; i++)
        o.b[at + 4 + i] = (uint8_t)(len >> 8 * i);
    size_t dr = cie(&o, "zR", 0x3b); /* datarel: unsupported */
    fde(&o, dr, "zR", 0x3b, 0x9000, 0x10, sec, 8);
    size_t ind = cie(&o, "zR", 0x9b); /* indirect: unsupported */
    fde(&o, ind, "zR", 0x1b, 0x9100, 0x10, sec, 8);
    size_t omit = cie(&o, "zR", 0xff); /* omit for pc_begin: unsupported */
    fde(&o, omit, "zR", 0x1b, 0x9200, 0x10, sec, 8);
    size_t aug = cie(&o, "zQR", 0x1b); /* an unknown letter before R: unsupported */
    fde(&o, aug, "zR", 0x1b, 0x9300, 0x10, sec, 8);
    /* a CIE pointer past the section's start: damaged, skipped */
    size_t bad = fde(&o, c, "zR", 0x1b, 0x9400, 0x10, sec, 8);
    patch32(&o, bad + 4, 0x7fffffff);
    /* a CIE pointer to an FDE: no CIE there */
    size_t bad2 = fde(&o, c, "zR", 0x1b, 0x9500, 0x10, sec, 8);
    patch32(&o, bad2 + 4, (uint32_t)(bad2 + 4 - bad));
    fde(&o, c, "zR", 0x1b, 0x2000, 0x20, sec, 8);
    put(&o, 0, 4); /* terminator: the rest is not read */
    fde(&o, c, "zR", 0x1b, 0x3000, 0x20, sec, 8);
    fde_list g;
    ek_eh_frame_stats st;
    assert_int_equal(walk(o.b, o.n, sec, 8, 0, &g, &st), 0);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.start[0], 0x1234);
    assert_int_equal(g.size[0], 0x56);
    assert_int_equal(g.start[1], 0x2000);
    assert_int_equal(st.unsupported, 4);
    assert_int_equal(st.bad, 2);
    assert_int_equal(st.truncated, 0);
    /* an entry whose length runs past the section: the walk stops there */
    buf t = {0};
    c = cie(&t, "zR", 0x1b);
    fde(&t, c, "zR", 0x1b, 0x1000, 0x10, sec, 8);
    size_t last = fde(&t, c, "zR", 0x1b, 0x1100, 0x10, sec, 8);
    patch32(&t, last, 0x1000);
    assert_int_equal(walk(t.b, t.n, sec, 8, 0, &g, &st), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(st.truncated, 1);
    /* a callback's error stops the walk and is returned; bad arguments read nothing */
    assert_int_equal(ek_eh_frame_walk(NULL, 0, 0, 8, 0, collect, &g, NULL), 0);
    assert_int_equal(ek_eh_frame_walk(t.b, t.n, 0, 2, 0, collect, &g, NULL), 0);
}

static int stop_cb(void *ctx, uint64_t start, uint64_t size)
{
    (void)ctx, (void)start, (void)size;
    return -42;
}

/* Every truncation and 2000 random damages of a section: no read past it (ASan), never more
 * FDEs than bytes allow. */
static void test_fde_truncated_and_damaged(void **state)
{
    (void)state;
    const uint64_t sec = 0x400;
    buf o = {0};
    size_t c = cie(&o, "zPLR", 0x1b);
    for (int i = 0; i < 6; i++)
        fde(&o, c, "zPLR", 0x1b, 0x1000 + 0x40 * (uint64_t)i, 0x40, sec, 8);
    size_t c2 = cie(&o, "zR", 0x01);
    fde(&o, c2, "zR", 0x01, 0x5000, 0x40, sec, 8);
    put(&o, 0, 4);
    fde_list g;
    ek_eh_frame_stats st;
    assert_int_equal(ek_eh_frame_walk(o.b, o.n, sec, 8, 0, stop_cb, NULL, NULL), -42);
    for (size_t n = 0; n <= o.n; n++) {
        assert_int_equal(walk(o.b, n, sec, 8, 0, &g, &st), 0);
        assert_true(g.n <= 7);
        if (n < o.n - 4) assert_true(g.n < 7);
    }
    uint32_t x = 12345;
    for (int it = 0; it < 2000; it++) {
        buf d = o;
        for (int k = 0; k < 1 + it % 4; k++) {
            x = x * 1103515245u + 12345u;
            size_t pos = (x >> 8) % d.n;
            x = x * 1103515245u + 12345u;
            d.b[pos] = (uint8_t)(x >> 16);
        }
        assert_int_equal(walk(d.b, d.n, sec, 8, it & 1, &g, &st), 0);
        assert_true(g.n <= d.n / 8);
    }
}

/* ---- a crafted AArch64 ELF file ----------------------------------------------------------- */

#define NOP   0xd503201fu
#define RET   0xd65f03c0u
#define BRX17 0xd61f0220u

static uint32_t adrp_x16(uint64_t pc, uint64_t target)
{
    int64_t d = (int64_t)((target >> 12) - (pc >> 12));
    uint32_t imm = (uint32_t)d & 0x1fffff;
    return 0x90000000u | (imm & 3) << 29 | (imm >> 2) << 5 | 16;
}

static uint32_t ldr_x17_x16(unsigned off)
{
    return 0xf9400000u | (off / 8) << 10 | 16 << 5 | 17;
}

static uint32_t add_x16(unsigned off)
{
    return 0x91000000u | off << 10 | 16 << 5 | 16;
}

typedef struct sec_spec {
    const char *name;
    unsigned type;
    uint64_t flags, addr, entsize;
    unsigned link, info;
    const void *data;
    size_t size;
} sec_spec;

/* Write an ELF64 little-endian AArch64 shared object with these sections (after the null
 * one; sh_link/sh_info are section indexes). Returns 0. */
static int write_elf(const char *path, const sec_spec *secs, size_t n)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_true(elf_version(EV_CURRENT) != EV_NONE);
    Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
    assert_non_null(e);
    assert_non_null(gelf_newehdr(e, ELFCLASS64));
    GElf_Ehdr eh;
    assert_non_null(gelf_getehdr(e, &eh));
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_machine = EM_AARCH64;
    eh.e_type = ET_DYN;
    eh.e_version = EV_CURRENT;
    /* .shstrtab last */
    char shstr[512] = {0};
    size_t shlen = 1, names[32];
    for (size_t i = 0; i < n; i++) {
        names[i] = shlen;
        shlen += (size_t)sprintf(shstr + shlen, "%s", secs[i].name) + 1;
    }
    size_t shname = shlen;
    shlen += (size_t)sprintf(shstr + shlen, ".shstrtab") + 1;
    for (size_t i = 0; i <= n; i++) {
        Elf_Scn *s = elf_newscn(e);
        assert_non_null(s);
        Elf_Data *d = elf_newdata(s);
        assert_non_null(d);
        GElf_Shdr sh;
        assert_non_null(gelf_getshdr(s, &sh));
        if (i < n) {
            d->d_buf = (void *)secs[i].data;
            d->d_size = secs[i].size;
            d->d_type = ELF_T_BYTE;
            d->d_align = 8;
            sh.sh_name = names[i];
            sh.sh_type = secs[i].type;
            sh.sh_flags = secs[i].flags;
            sh.sh_addr = secs[i].addr;
            sh.sh_entsize = secs[i].entsize;
            sh.sh_link = secs[i].link;
            sh.sh_info = secs[i].info;
            sh.sh_addralign = 8;
        } else {
            d->d_buf = shstr;
            d->d_size = shlen;
            d->d_type = ELF_T_BYTE;
            d->d_align = 1;
            sh.sh_name = shname;
            sh.sh_type = SHT_STRTAB;
            sh.sh_addralign = 1;
        }
        assert_true(gelf_update_shdr(s, &sh));
    }
    eh.e_shstrndx = n + 1;
    assert_true(gelf_update_ehdr(e, &eh));
    assert_true(elf_update(e, ELF_C_WRITE) >= 0);
    elf_end(e);
    close(fd);
    return 0;
}

/* the file's layout (addresses) */
#define TEXT   0x1000u
#define TEXTSZ 0x100u
#define PLT    0x1200u
#define GOTPLT 0x2000u
#define EHF    0x400u

typedef struct elf_file {
    char path[64];
    uint8_t *bytes;
    size_t size;
} elf_file;

static void make_elf(elf_file *f)
{
    static uint32_t text[TEXTSZ / 4], plt[0x60 / 4];
    for (size_t i = 0; i < TEXTSZ / 4; i++)
        text[i] = NOP;
    text[0x3c / 4] = RET;
    /* .plt: the 32-byte header (its GOT slot has no relocation), then foo, bar, an IRELATIVE
     * entry (no symbol), baz */
    size_t k = 0;
    plt[k++] = 0xa9bf7bf0u; /* stp x16, x30, [sp, #-16]! */
    plt[k++] = adrp_x16(PLT + 4, GOTPLT);
    plt[k++] = ldr_x17_x16(0x10);
    plt[k++] = add_x16(0x10);
    plt[k++] = BRX17;
    plt[k++] = NOP;
    plt[k++] = NOP;
    plt[k++] = NOP;
    for (unsigned e = 0; e < 4; e++) {
        unsigned slot = 0x18 + 8 * e;
        plt[k] = adrp_x16(PLT + 4 * k, GOTPLT);
        k++;
        plt[k++] = ldr_x17_x16(slot);
        plt[k++] = add_x16(slot);
        plt[k++] = BRX17;
    }
    /* .dynsym: null, foo, bar, baz (undefined), dyn_only (defined, a function at 0x10a0) */
    static const char dynstr[] = "\0foo\0bar\0baz\0dyn_only";
    static Elf64_Sym dynsym[5];
    memset(dynsym, 0, sizeof dynsym);
    const unsigned dn[] = {0, 1, 5, 9, 13};
    for (int i = 1; i < 5; i++) {
        dynsym[i].st_name = dn[i];
        dynsym[i].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    }
    dynsym[4].st_shndx = 1; /* .text */
    dynsym[4].st_value = 0x10a0;
    dynsym[4].st_size = 8;
    /* .rela.plt: foo, bar, IRELATIVE, baz */
    static Elf64_Rela rela[4];
    const unsigned rs[] = {1, 2, 0, 3};
    for (int i = 0; i < 4; i++) {
        rela[i].r_offset = GOTPLT + 0x18 + 8 * (uint64_t)i;
        rela[i].r_info = rs[i] ? ELF64_R_INFO(rs[i], 1026) : ELF64_R_INFO(0, 1032);
    }
    /* .symtab: sym_fn (0x1040, 0x20), lfn (local, 0x10c0, size 0), $x */
    static const char strtab[] = "\0sym_fn\0lfn\0$x";
    static Elf64_Sym symtab[4];
    memset(symtab, 0, sizeof symtab);
    symtab[1] = (Elf64_Sym){1, ELF64_ST_INFO(STB_LOCAL, STT_FUNC), 0, 1, 0x10c0, 0};
    symtab[1].st_name = 8;
    symtab[2] = (Elf64_Sym){12, ELF64_ST_INFO(STB_LOCAL, STT_NOTYPE), 0, 1, TEXT, 0};
    symtab[3] = (Elf64_Sym){1, ELF64_ST_INFO(STB_GLOBAL, STT_FUNC), 0, 1, 0x1040, 0x20};
    /* .eh_frame */
    static buf eh;
    eh = (buf){0};
    size_t c = cie(&eh, "zR", 0x1b);
    fde(&eh, c, "zR", 0x1b, 0x1000, 0x40, EHF, 8); /* no symbol: a function */
    fde(&eh, c, "zR", 0x1b, 0x1040, 0x10, EHF, 8); /* sym_fn's start: sym_fn */
    fde(&eh, c, "zR", 0x1b, 0x1048, 0x8, EHF, 8);  /* inside sym_fn: conflict, none */
    fde(&eh, c, "zR", 0x1b, 0x1080, 0x10, EHF, 8); /* runs to lfn (its maximum size) */
    fde(&eh, c, "zR", 0x1b, 0x1080, 0x20, EHF, 8); /* a second at one address: ignored */
    fde(&eh, c, "zR", 0x1b, 0x10c0, 0x20, EHF, 8); /* lfn (size 0) gets 0x20 */
    fde(&eh, c, "zR", 0x1b, 0x10c4, 0x8, EHF, 8);  /* inside lfn: none */
    fde(&eh, c, "zR", 0x1b, 0x0, 0x8, EHF, 8);     /* in no section: none */
    size_t dr = cie(&eh, "zR", 0x3b);
    fde(&eh, dr, "zR", 0x3b, 0x10f0, 0x10, EHF, 8); /* datarel: skipped */
    put(&eh, 0, 4);
    const sec_spec secs[] = {
        {".text", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, TEXT, 0, 0, 0, text, sizeof text},
        {".plt", SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, PLT, 0, 0, 0, plt, sizeof plt},
        {".eh_frame", SHT_PROGBITS, SHF_ALLOC, EHF, 0, 0, 0, eh.b, eh.n},
        {".dynsym", SHT_DYNSYM, SHF_ALLOC, 0x200, sizeof(Elf64_Sym), 5, 1, dynsym, sizeof dynsym},
        {".dynstr", SHT_STRTAB, SHF_ALLOC, 0x300, 0, 0, 0, dynstr, sizeof dynstr},
        {".rela.plt", SHT_RELA, SHF_ALLOC, 0x380, sizeof(Elf64_Rela), 4, 6, rela, sizeof rela},
        {".symtab", SHT_SYMTAB, 0, 0, sizeof(Elf64_Sym), 8, 3, symtab, sizeof symtab},
        {".strtab", SHT_STRTAB, 0, 0, 0, 0, 0, strtab, sizeof strtab},
        {".got.plt", SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, GOTPLT, 0, 0, 0, plt, 0x40},
    };
    snprintf(f->path, sizeof f->path, "/tmp/ek_bolt_fde_XXXXXX");
    int fd = mkstemp(f->path);
    assert_true(fd >= 0);
    close(fd);
    write_elf(f->path, secs, sizeof secs / sizeof secs[0]);
    FILE *fp = fopen(f->path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    f->size = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    f->bytes = malloc(f->size);
    assert_non_null(f->bytes);
    assert_int_equal(fread(f->bytes, 1, f->size, fp), f->size);
    fclose(fp);
}

static void check_at(ek_bolt_map *m, uint64_t addr, const char *name, uint64_t off)
{
    const char *gname = NULL;
    uint64_t o = 0;
    int rc = ek_bolt_map_lookup(m, addr, &gname, &o);
    if (!name) {
        if (rc != EK_ERR_NOT_FOUND)
            fail_msg("%#llx: %s+%#llx, want none", (unsigned long long)addr, gname,
                     (unsigned long long)o);
        return;
    }
    if (rc) fail_msg("%#llx: none, want %s", (unsigned long long)addr, name);
    if (strcmp(gname, name) || o != off)
        fail_msg("%#llx: %s+%#llx, want %s+%#llx", (unsigned long long)addr, gname,
                 (unsigned long long)o, name, (unsigned long long)off);
}

static void check_not(ek_bolt_map *m, uint64_t addr, const char *name)
{
    const char *gname = NULL;
    if (!ek_bolt_map_lookup(m, addr, &gname, NULL) && !strcmp(gname, name))
        fail_msg("%#llx: %s", (unsigned long long)addr, gname);
}

static void test_fde_and_plt_functions(void **state)
{
    (void)state;
    elf_file f;
    make_elf(&f);
    ek_bolt_map *m = NULL;
    assert_int_equal(ek_bolt_map_load_elf(f.path, NULL, &m), 0);
    check_at(m, 0x0fff, NULL, 0);
    check_at(m, 0x1000, "__BOLT_FDE_FUNCat1000", 0);
    check_at(m, 0x103c, "__BOLT_FDE_FUNCat1000", 0x3c);
    check_at(m, 0x1040, "sym_fn", 0);
    check_at(m, 0x1048, "sym_fn", 8); /* the FDE inside it made nothing */
    check_at(m, 0x105c, "sym_fn", 0x1c);
    check_at(m, 0x1080, "__BOLT_FDE_FUNCat1080", 0);
    check_at(m, 0x10a0, "__BOLT_FDE_FUNCat1080", 0x20); /* dyn_only (.dynsym) is not read */
    check_at(m, 0x10bc, "__BOLT_FDE_FUNCat1080", 0x3c); /* its maximum size: up to lfn */
    check_at(m, 0x10c0, "lfn/1", 0);
    check_at(m, 0x10c4, "lfn/1", 4);
    check_at(m, 0x10dc, "lfn/1", 0x1c);            /* the FDE's size at lfn's start */
    check_not(m, 0x10f0, "__BOLT_FDE_FUNCat10f0"); /* datarel FDE: skipped */
    check_at(m, PLT, "__BOLT_PSEUDO_.plt", 0);
    check_at(m, PLT + 0x1c, "__BOLT_PSEUDO_.plt", 0x1c); /* its padding */
    check_at(m, PLT + 0x20, "foo@PLT", 0);
    check_at(m, PLT + 0x2c, "foo@PLT", 0xc);
    check_at(m, PLT + 0x30, "bar@PLT", 0);
    check_at(m, PLT + 0x40, "bar@PLT", 0x10); /* the IRELATIVE entry: no function of its own */
    check_at(m, PLT + 0x50, "baz@PLT", 0);
    check_at(m, PLT + 0x5c, "baz@PLT", 0xc);
    check_at(m, PLT + 0x60, NULL, 0);
    /* fdata with the names: a call into the PLT, a branch from code no function has */
    ek_profile *p = NULL;
    assert_int_equal(ek_profile_new(&p), 0);
    ek_profile_binary b = {f.path, NULL, 0, 0};
    size_t h = 99;
    assert_int_equal(ek_profile_add_binary(p, &b, &h), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x1044, PLT + 0x20, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, h, 0x3000, 0x1000, 2), 0); /* from no section */
    ek_sbuf s = EK_SBUF_INIT;
    assert_int_equal(ek_profile_write_bolt(p, h, m, &s), 0);
    assert_string_equal(s.p, "0 [unknown] 0 1 __BOLT_FDE_FUNCat1000 0 0 2\n"
                             "1 sym_fn 4 1 foo@PLT 0 0 3\n");
    ek_sbuf_free(&s);
    ek_profile_free(p);
    ek_bolt_map_free(m);

    /* damage anywhere in the file: loads or fails cleanly (ASan/UBSan watch) */
    uint32_t x = 777;
    for (int it = 0; it < 300; it++) {
        uint8_t *d = malloc(f.size);
        assert_non_null(d);
        memcpy(d, f.bytes, f.size);
        for (int k = 0; k < 1 + it % 8; k++) {
            x = x * 1103515245u + 12345u;
            d[(x >> 8) % f.size] = (uint8_t)(x >> 20);
        }
        size_t keep = it % 5 ? f.size : (x >> 4) % f.size;
        FILE *fp = fopen(f.path, "wb");
        assert_non_null(fp);
        assert_int_equal(fwrite(d, 1, keep, fp), keep);
        fclose(fp);
        free(d);
        m = NULL;
        if (ek_bolt_map_load_elf(f.path, NULL, &m) == 0) {
            for (uint64_t a = TEXT; a < PLT + 0x60; a += 4)
                ek_bolt_map_lookup(m, a, NULL, NULL);
            ek_bolt_map_free(m);
        }
    }
    unlink(f.path);
    free(f.bytes);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fde_encodings),
        cmocka_unit_test(test_fde_structure),
        cmocka_unit_test(test_fde_truncated_and_damaged),
        cmocka_unit_test(test_fde_and_plt_functions),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
