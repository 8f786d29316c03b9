/* Coverage as lcov records (src/profile/lcov.c, ek_profile_write_lcov) on crafted ELF files
 * without DWARF (tests/scripts/export_lcov.sh covers line tables against the simulator's
 * truth): the binary's record with a pseudo-line per function; conditional branches taken and
 * not taken (A64 B.cond, CBZ, CBNZ, TBNZ; T32 B<c> 16 and 32 bits, CBZ; A32 B<c>), not
 * unconditional ones; data after $d skipped; aliases (one function per address); a symbol
 * without size ending at the end of its section; counts saturating at UINT64_MAX; errors. */
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
#include "testutil.h"

typedef struct sym_spec {
    const char *name;
    uint64_t value, size;
    unsigned type, bind;
} sym_spec;

/* Write an ELF file (class 32 or 64, little-endian, machine, type) with .text at text_addr
 * holding `code` and a .symtab of `syms` (all in .text). */
static void write_elf(const char *path, int cls, unsigned machine, unsigned type,
                      uint64_t text_addr, const void *code, size_t code_size, const sym_spec *syms,
                      size_t nsyms)
{
    static uint8_t symtab[64 * 24];
    static char strtab[1024];
    size_t strlen_ = 1, ent = cls == 64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
    memset(symtab, 0, sizeof symtab);
    memset(strtab, 0, sizeof strtab);
    assert_true(nsyms + 1 <= 64);
    for (size_t i = 0; i < nsyms; i++) {
        size_t name = strlen_;
        strlen_ += (size_t)sprintf(strtab + strlen_, "%s", syms[i].name) + 1;
        uint8_t info = (uint8_t)((syms[i].bind << 4) | syms[i].type);
        if (cls == 64) {
            Elf64_Sym s = {(Elf64_Word)name, info, 0, 1, syms[i].value, syms[i].size};
            memcpy(symtab + (i + 1) * ent, &s, ent);
        } else {
            Elf32_Sym s = {
                (Elf32_Word)name, (Elf32_Addr)syms[i].value, (Elf32_Word)syms[i].size, info, 0, 1};
            memcpy(symtab + (i + 1) * ent, &s, ent);
        }
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    assert_true(fd >= 0);
    assert_true(elf_version(EV_CURRENT) != EV_NONE);
    Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
    assert_non_null(e);
    assert_non_null(gelf_newehdr(e, cls == 64 ? ELFCLASS64 : ELFCLASS32));
    GElf_Ehdr eh;
    assert_non_null(gelf_getehdr(e, &eh));
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_machine = (GElf_Half)machine;
    eh.e_type = (GElf_Half)type;
    eh.e_version = EV_CURRENT;
    static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
    struct {
        unsigned name, type;
        uint64_t flags, addr, entsize;
        unsigned link;
        const void *data;
        size_t size;
    } sec[4] = {
        {1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, text_addr, 0, 0, code, code_size},
        {7, SHT_SYMTAB, 0, 0, ent, 3, symtab, (nsyms + 1) * ent},
        {15, SHT_STRTAB, 0, 0, 0, 0, strtab, strlen_},
        {23, SHT_STRTAB, 0, 0, 0, 0, shstr, sizeof shstr},
    };
    for (size_t i = 0; i < 4; i++) {
        Elf_Scn *s = elf_newscn(e);
        assert_non_null(s);
        Elf_Data *d = elf_newdata(s);
        assert_non_null(d);
        d->d_buf = (void *)sec[i].data;
        d->d_size = sec[i].size;
        d->d_type = ELF_T_BYTE;
        d->d_align = 4;
        GElf_Shdr sh;
        assert_non_null(gelf_getshdr(s, &sh));
        sh.sh_name = sec[i].name;
        sh.sh_type = sec[i].type;
        sh.sh_flags = sec[i].flags;
        sh.sh_addr = sec[i].addr;
        sh.sh_entsize = sec[i].entsize;
        sh.sh_link = sec[i].link;
        sh.sh_addralign = 4;
        assert_true(gelf_update_shdr(s, &sh));
    }
    eh.e_shstrndx = 4;
    assert_true(gelf_update_ehdr(e, &eh));
    assert_true(elf_update(e, ELF_C_WRITE) >= 0);
    elf_end(e);
    close(fd);
}

static size_t add_binary(ek_profile *p, const char *path)
{
    ek_profile_binary id = {path, NULL, 0, 0};
    size_t bin;
    assert_int_equal(ek_profile_add_binary(p, &id, &bin), 0);
    return bin;
}

static void expect_lcov(const ek_profile *p, size_t bin, const char *elf, const char *want,
                        const ek_lcov_stats *want_st)
{
    ek_sbuf out = EK_SBUF_INIT;
    ek_lcov_stats st;
    assert_int_equal(ek_profile_write_lcov(p, bin, elf, NULL, &out, &st), 0);
    assert_non_null(out.p);
    if (strcmp(out.p, want)) print_error("got:\n%s\nwant:\n%s\n", out.p, want);
    assert_string_equal(out.p, want);
    assert_int_equal(st.files, want_st->files);
    assert_int_equal(st.lines, want_st->lines);
    assert_int_equal(st.lines_hit, want_st->lines_hit);
    assert_int_equal(st.functions, want_st->functions);
    assert_int_equal(st.functions_hit, want_st->functions_hit);
    assert_int_equal(st.branches, want_st->branches);
    assert_int_equal(st.branches_hit, want_st->branches_hit);
    assert_int_equal(st.has_lines, want_st->has_lines);
    ek_sbuf_free(&out);
}

#define A64_NOP 0xd503201fu
#define A64_RET 0xd65f03c0u

static void test_a64(void **state)
{
    (void)state;
    /* f: nop; b.eq 0x1010; cbz x0, 0x1010; nop; ret
     * g (and its weak alias g_alias): tbnz w1, #3, 0x101c; b.al 0x1014 (not conditional);
     *    data after $d that reads as b.ne; $x
     * h (local, no size: to the end of .text): nop; cbnz w2, 0x1020 */
    static const uint32_t code[] = {A64_NOP,     0x54000060u, 0xb4000040u, A64_NOP, A64_RET,
                                    0x37180041u, 0x5400000eu, 0x54000001u, A64_NOP, 0x35ffffe2u};
    static const sym_spec syms[] = {
        {"g_alias", 0x1014, 12, STT_FUNC, STB_WEAK}, {"f", 0x1000, 0x14, STT_FUNC, STB_GLOBAL},
        {"g", 0x1014, 12, STT_FUNC, STB_GLOBAL},     {"h", 0x1020, 0, STT_FUNC, STB_LOCAL},
        {"$x", 0x1000, 0, STT_NOTYPE, STB_LOCAL},    {"$d", 0x101c, 0, STT_NOTYPE, STB_LOCAL},
        {"$x.1", 0x1020, 0, STT_NOTYPE, STB_LOCAL},
    };
    char path[] = "/tmp/etmkit-lcov-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_elf(path, 64, EM_AARCH64, ET_DYN, 0x1000, code, sizeof code, syms,
              sizeof syms / sizeof syms[0]);
    ek_profile *p;
    assert_int_equal(ek_profile_new(&p), 0);
    size_t bin = add_binary(p, "/usr/bin/t");
    /* b.eq taken 3 times, falls through twice (then cbz not taken) */
    assert_int_equal(ek_profile_add_range(p, bin, 0x1000, 0x1004, 3), 0);
    assert_int_equal(ek_profile_add_branch(p, bin, 0x1004, 0x1010, 3), 0);
    assert_int_equal(ek_profile_add_range(p, bin, 0x1010, 0x1010, 3), 0);
    assert_int_equal(ek_profile_add_range(p, bin, 0x1000, 0x1010, 2), 0);
    /* h: its count saturates; cbnz taken 10 times */
    assert_int_equal(ek_profile_add_range(p, bin, 0x1020, 0x1024, UINT64_MAX), 0);
    assert_int_equal(ek_profile_add_range(p, bin, 0x1020, 0x1020, 7), 0);
    assert_int_equal(ek_profile_add_branch(p, bin, 0x1024, 0x1020, 10), 0);
    /* a branch to elsewhere counts as taken too; one from outside does not count */
    assert_int_equal(ek_profile_add_branch(p, bin, 0x1024, EK_PROFILE_EXTERNAL, 5), 0);
    assert_int_equal(ek_profile_add_branch(p, bin, EK_PROFILE_EXTERNAL, 0x1024, 9), 0);
    const char *want = "TN:\nSF:/usr/bin/t\n"
                       "FN:1,f\nFN:2,g\nFN:3,h\n"
                       "FNDA:5,f\nFNDA:0,g\nFNDA:18446744073709551615,h\n"
                       "FNF:3\nFNH:2\n"
                       "BRDA:1,0,0,3\nBRDA:1,0,1,2\nBRDA:1,1,0,0\nBRDA:1,1,1,2\n"
                       "BRDA:2,0,0,-\nBRDA:2,0,1,-\n"
                       "BRDA:3,0,0,15\nBRDA:3,0,1,18446744073709551600\n"
                       "BRF:8\nBRH:5\n"
                       "DA:1,5\nDA:2,0\nDA:3,18446744073709551615\n"
                       "LF:3\nLH:2\nend_of_record\n";
    ek_lcov_stats st = {1, 3, 2, 3, 2, 8, 5, 0};
    expect_lcov(p, bin, path, want, &st);

    /* errors */
    ek_sbuf out = EK_SBUF_INIT;
    assert_int_equal(ek_profile_write_lcov(p, 7, path, NULL, &out, NULL), EK_ERR_ARG);
    assert_int_equal(ek_profile_write_lcov(p, bin, "/nonexistent/x", NULL, &out, NULL), EK_ERR_IO);
    assert_int_equal(ek_profile_write_lcov(p, bin, path, "/nonexistent/x", &out, NULL), EK_ERR_IO);
    write_elf(path, 64, EM_AARCH64, ET_REL, 0, code, sizeof code, syms, 1);
    assert_int_equal(ek_profile_write_lcov(p, bin, path, NULL, &out, NULL), EK_ERR_FORMAT);
    fd = open(path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
    close(fd);
    assert_int_equal(ek_profile_write_lcov(p, bin, path, NULL, &out, NULL), EK_ERR_FORMAT);
    assert_int_equal(out.len, 0);
    ek_sbuf_free(&out);
    ek_profile_free(p);
    unlink(path);
}

static void test_a64_stripped(void **state)
{
    (void)state;
    /* no symbols: .text is the one function */
    static const uint32_t code[] = {A64_NOP, 0x54000060u, A64_RET};
    char path[] = "/tmp/etmkit-lcov-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_elf(path, 64, EM_AARCH64, ET_EXEC, 0x400000, code, sizeof code, NULL, 0);
    ek_profile *p;
    assert_int_equal(ek_profile_new(&p), 0);
    size_t bin = add_binary(p, "/bin/stripped");
    assert_int_equal(ek_profile_add_range(p, bin, 0x400000, 0x400008, 4), 0);
    const char *want = "TN:\nSF:/bin/stripped\nFN:1,.text\nFNDA:4,.text\nFNF:1\nFNH:1\n"
                       "BRDA:1,0,0,0\nBRDA:1,0,1,4\nBRF:2\nBRH:1\nDA:1,4\nLF:1\nLH:1\n"
                       "end_of_record\n";
    ek_lcov_stats st = {1, 1, 1, 1, 1, 2, 1, 0};
    expect_lcov(p, bin, path, want, &st);
    ek_profile_free(p);
    unlink(path);
}

/* Names as lcov reads them back: 1.16 ends a function's name at a ',' (Go's generic
 * functions have them: both below read back as "F[int", one function) and a record at a line
 * end (a path holding one wrote records of its own), so ',' '%' and line ends are %XX in
 * names, line ends in paths. */
static void test_names(void **state)
{
    (void)state;
    static const uint32_t code[] = {A64_NOP, A64_RET, A64_NOP, A64_RET, A64_RET};
    static const sym_spec syms[] = {
        {"F[int,string]", 0x1000, 8, STT_FUNC, STB_GLOBAL},
        {"F[int,bool]", 0x1008, 8, STT_FUNC, STB_GLOBAL},
        {"p%q", 0x1010, 4, STT_FUNC, STB_GLOBAL},
    };
    char path[] = "/tmp/etmkit-lcov-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_elf(path, 64, EM_AARCH64, ET_DYN, 0x1000, code, sizeof code, syms,
              sizeof syms / sizeof syms[0]);
    ek_profile *p;
    assert_int_equal(ek_profile_new(&p), 0);
    size_t bin = add_binary(p, "/usr/bin/a\nSF:b");
    assert_int_equal(ek_profile_add_range(p, bin, 0x1000, 0x1004, 5), 0);
    const char *want = "TN:\nSF:/usr/bin/a%0ASF:b\n"
                       "FN:1,F[int%2Cstring]\nFN:2,F[int%2Cbool]\nFN:3,p%25q\n"
                       "FNDA:5,F[int%2Cstring]\nFNDA:0,F[int%2Cbool]\nFNDA:0,p%25q\n"
                       "FNF:3\nFNH:1\nBRF:0\nBRH:0\n"
                       "DA:1,5\nDA:2,0\nDA:3,0\n"
                       "LF:3\nLH:1\nend_of_record\n";
    ek_lcov_stats st = {1, 3, 1, 3, 1, 0, 0, 0};
    expect_lcov(p, bin, path, want, &st);
    ek_profile_free(p);
    unlink(path);
}

/* Coverage of an ELF file from every binary that is it: one build-id under two paths adds up,
 * whatever the order the binaries were added in (export --format=lcov --binary took the first
 * added one: the other's counts were dropped, and the output depended on the inputs' order);
 * without a build-id, the one binary of the file's name. */
static void test_for_elf(void **state)
{
    (void)state;
    static const uint32_t code[] = {A64_NOP, 0x54000040u, A64_NOP, A64_RET};
    static const sym_spec syms[] = {{"f", 0x1000, 16, STT_FUNC, STB_GLOBAL}};
    char path[] = "/tmp/etmkit-lcov-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_elf(path, 64, EM_AARCH64, ET_DYN, 0x1000, code, 16, syms, 1);
    const uint8_t bid[4] = {0xab, 0xcd, 0xef, 0x01};
    /* b.eq taken 3 times of 5 (2 + 3 from the two paths), f entered 5 times */
    const char *want = "TN:\nSF:/bin/t\nFN:1,f\nFNDA:5,f\nFNF:1\nFNH:1\n"
                       "BRDA:1,0,0,3\nBRDA:1,0,1,2\nBRF:2\nBRH:2\nDA:1,5\nLF:1\nLH:1\n"
                       "end_of_record\n";
    for (int order = 0; order < 2; order++) {
        ek_profile *p;
        assert_int_equal(ek_profile_new(&p), 0);
        ek_profile_binary ia = {order ? "/usr/bin/t" : "/bin/t", bid, 4, 0};
        ek_profile_binary ib = {order ? "/bin/t" : "/usr/bin/t", bid, 4, 0};
        size_t a, b;
        assert_int_equal(ek_profile_add_binary(p, &ia, &a), 0);
        assert_int_equal(ek_profile_add_binary(p, &ib, &b), 0);
        size_t other = add_binary(p, "/lib/o.so");
        assert_int_equal(ek_profile_add_range(p, a, 0x1000, 0x1004, 2), 0);
        assert_int_equal(ek_profile_add_range(p, b, 0x1000, 0x1004, 3), 0);
        assert_int_equal(ek_profile_add_branch(p, b, 0x1004, 0x100c, 3), 0);
        assert_int_equal(ek_profile_add_range(p, a, 0x1008, 0x100c, 2), 0);
        assert_int_equal(ek_profile_add_range(p, other, 0x1000, 0x100c, 9), 0);
        ek_sbuf out = EK_SBUF_INIT;
        ek_lcov_stats st;
        size_t nb = 0;
        assert_int_equal(ek_profile_write_lcov_for_elf(p, bid, 4, path, NULL, 0, &out, &st, &nb),
                         0);
        assert_int_equal(nb, 2);
        assert_non_null(out.p);
        if (strcmp(out.p, want)) print_error("order %d got:\n%s\nwant:\n%s\n", order, out.p, want);
        assert_string_equal(out.p, want);
        assert_int_equal(st.functions_hit, 1);
        assert_int_equal(st.branches_hit, 2);
        ek_sbuf_free(&out);
        /* another build-id; no build-id and no binary without one of the file's name */
        assert_int_equal(ek_profile_write_lcov_for_elf(p, (const uint8_t *)"\x01\x02\x03\x04", 4,
                                                       path, NULL, 0, &out, &st, &nb),
                         EK_ERR_NOT_FOUND);
        assert_int_equal(nb, 0);
        assert_int_equal(st.functions, 0);
        assert_int_equal(ek_profile_write_lcov_for_elf(p, NULL, 0, path, NULL, 0, &out, NULL, NULL),
                         EK_ERR_NOT_FOUND);
        assert_int_equal(out.len, 0);
        ek_profile_free(p);
    }
    /* no build-id: the binary named as the file (not /lib/o.so) */
    ek_profile *p;
    assert_int_equal(ek_profile_new(&p), 0);
    char named[64];
    snprintf(named, sizeof named, "/usr/lib/%s", strrchr(path, '/') + 1);
    assert_int_equal(ek_profile_add_range(p, add_binary(p, "/lib/o.so"), 0x1000, 0x100c, 9), 0);
    assert_int_equal(ek_profile_add_range(p, add_binary(p, named), 0x1000, 0x100c, 1), 0);
    ek_sbuf out = EK_SBUF_INIT;
    size_t nb = 0;
    assert_int_equal(ek_profile_write_lcov_for_elf(p, NULL, 0, path, NULL, 0, &out, NULL, &nb), 0);
    assert_int_equal(nb, 1);
    assert_non_null(strstr(out.p, "FNDA:1,f\n"));
    ek_sbuf_free(&out);
    ek_profile_free(p);
    unlink(path);
}

static void test_arm32(void **state)
{
    (void)state;
    /* t (T32, value | 1): beq.n 0x8006; cbz r0, 0x800a; beq.w 0x800c; nop; bx lr
     * a (A32, $a): bne 0x8018; b 0x8018 (AL: not conditional); bx lr */
    static const uint8_t code[] = {
        0x01, 0xd0,             /* 8000 beq.n 8006 */
        0x18, 0xb1,             /* 8002 cbz r0, 800a */
        0x00, 0xf0, 0x00, 0x80, /* 8004 beq.w 8008 */
        0x00, 0xbf,             /* 8008 nop */
        0x70, 0x47,             /* 800a bx lr */
        0x01, 0x00, 0x00, 0x1a, /* 800c bne 8018 */
        0x00, 0x00, 0x00, 0xea, /* 8010 b 8018 */
        0x1e, 0xff, 0x2f, 0xe1, /* 8014 bx lr */
    };
    static const sym_spec syms[] = {
        {"t", 0x8001, 12, STT_FUNC, STB_GLOBAL},
        {"a", 0x800c, 12, STT_FUNC, STB_GLOBAL},
        {"$t", 0x8000, 0, STT_NOTYPE, STB_LOCAL},
        {"$a", 0x800c, 0, STT_NOTYPE, STB_LOCAL},
    };
    char path[] = "/tmp/etmkit-lcov-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_elf(path, 32, EM_ARM, ET_DYN, 0x8000, code, sizeof code, syms,
              sizeof syms / sizeof syms[0]);
    ek_profile *p;
    assert_int_equal(ek_profile_new(&p), 0);
    size_t bin = add_binary(p, "/lib/libt.so");
    /* beq.n taken once; then three times through cbz (not taken) and beq.w (taken twice) */
    assert_int_equal(ek_profile_add_range(p, bin, 0x8000, 0x8000, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, bin, 0x8000, 0x8006, 1), 0);
    assert_int_equal(ek_profile_add_range(p, bin, 0x8000, 0x8004, 2), 0);
    assert_int_equal(ek_profile_add_branch(p, bin, 0x8004, 0x8008, 2), 0);
    assert_int_equal(ek_profile_add_range(p, bin, 0x8000, 0x800a, 1), 0);
    /* a: bne not taken once, then b */
    assert_int_equal(ek_profile_add_range(p, bin, 0x800c, 0x8010, 1), 0);
    assert_int_equal(ek_profile_add_branch(p, bin, 0x8010, 0x8018, 1), 0);
    const char *want = "TN:\nSF:/lib/libt.so\n"
                       "FN:1,t\nFN:2,a\nFNDA:4,t\nFNDA:1,a\nFNF:2\nFNH:2\n"
                       "BRDA:1,0,0,1\nBRDA:1,0,1,3\nBRDA:1,1,0,0\nBRDA:1,1,1,3\n"
                       "BRDA:1,2,0,2\nBRDA:1,2,1,1\n"
                       "BRDA:2,0,0,0\nBRDA:2,0,1,1\n"
                       "BRF:8\nBRH:6\nDA:1,4\nDA:2,1\nLF:2\nLH:2\nend_of_record\n";
    ek_lcov_stats st = {1, 2, 2, 2, 2, 8, 6, 0};
    expect_lcov(p, bin, path, want, &st);
    ek_profile_free(p);
    unlink(path);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a64),
        cmocka_unit_test(test_a64_stripped),
        cmocka_unit_test(test_arm32),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_for_elf),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
