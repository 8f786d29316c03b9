#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/image.h"
#include "etmkit/symbols.h"
#include "input/symtab_int.h"
#include "testutil.h"

static char *fmt(ek_symtab *t, uint64_t addr)
{
    static char buf[4][256];
    static int k;
    ek_sbuf b = EK_SBUF_INIT;
    ek_symtab_format(&b, ek_symtab_find(t, addr), addr, 1);
    char *o = buf[k++ & 3];
    snprintf(o, 256, "%s", b.p);
    ek_sbuf_free(&b);
    return o;
}

static int run(const char *cmd)
{
    int rc = system(cmd);
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

/* ---- table semantics ---- */

static void test_fixup_end_and_lookup(void **state)
{
    ek_symtab *t;
    assert_int_equal(ek_symtab_new(&t), 0);
    assert_string_equal(fmt(t, 0x1000), "[unknown]");
    assert_int_equal(ek_symtab_insert(t, 0x1000, 0, STB_GLOBAL, STT_FUNC, "a"), 0);
    assert_int_equal(ek_symtab_insert(t, 0x1100, 0x10, STB_GLOBAL, STT_FUNC, "b"), 0);
    assert_int_equal(ek_symtab_insert(t, 0x1200, 0, STB_GLOBAL, STT_FUNC, "c"), 0);
    /* Before the fixup a zero-size symbol matches only its start. */
    assert_string_equal(fmt(t, 0x1000), "a+0x0");
    assert_string_equal(fmt(t, 0x1004), "[unknown]");
    ek_symtab_fixup(t, 0);
    assert_string_equal(fmt(t, 0x1004), "a+0x4");
    assert_string_equal(fmt(t, 0x10ff), "a+0xff");
    assert_string_equal(fmt(t, 0x110f), "b+0xf");
    assert_string_equal(fmt(t, 0x1110), "[unknown]"); /* sized symbols keep their size */
    assert_string_equal(fmt(t, 0x1fff), "c+0xdff");   /* last: roundup(start) + 4096 */
    assert_string_equal(fmt(t, 0x3000), "[unknown]");
    assert_string_equal(fmt(t, 0x2fff), "c+0x1dff");
    assert_int_equal(ek_symtab_count(t), 3);
    assert_int_equal(ek_symtab_get(t, 2)->end, 0x3000);
    ek_sbuf b = EK_SBUF_INIT;
    ek_symtab_format(&b, ek_symtab_find(t, 0x1104), 0x1104, 0);
    assert_string_equal(b.p, "b");
    ek_sbuf_free(&b);
    assert_int_equal(ek_symtab_check_tree(t), 0);
    ek_symtab_free(t);
}

static void test_duplicates(void **state)
{
    ek_symtab *t;
    assert_int_equal(ek_symtab_new(&t), 0);
    /* Same start: sized beats zero-size; global beats weak and local; fewer '_' wins;
     * longer name wins; then the first one, unless it is a SyS alias. */
    ek_symtab_insert(t, 0x100, 0, STB_GLOBAL, STT_FUNC, "zero");
    ek_symtab_insert(t, 0x100, 8, STB_LOCAL, STT_FUNC, "sized");
    ek_symtab_insert(t, 0x200, 8, STB_WEAK, STT_FUNC, "weak");
    ek_symtab_insert(t, 0x200, 8, STB_LOCAL, STT_FUNC, "local");
    ek_symtab_insert(t, 0x300, 8, STB_LOCAL, STT_FUNC, "loc");
    ek_symtab_insert(t, 0x300, 8, STB_GLOBAL, STT_FUNC, "glob");
    ek_symtab_insert(t, 0x400, 8, STB_GLOBAL, STT_FUNC, "__x");
    ek_symtab_insert(t, 0x400, 8, STB_GLOBAL, STT_FUNC, "_xyz");
    ek_symtab_insert(t, 0x500, 8, STB_GLOBAL, STT_FUNC, "ab");
    ek_symtab_insert(t, 0x500, 8, STB_GLOBAL, STT_FUNC, "abc");
    ek_symtab_insert(t, 0x600, 8, STB_GLOBAL, STT_FUNC, "first");
    ek_symtab_insert(t, 0x600, 8, STB_GLOBAL, STT_FUNC, "secnd");
    ek_symtab_insert(t, 0x700, 8, STB_GLOBAL, STT_FUNC, "SyS_ab");
    ek_symtab_insert(t, 0x700, 8, STB_GLOBAL, STT_FUNC, "sys_ab");
    ek_symtab_fixup(t, 0);
    assert_string_equal(fmt(t, 0x100), "sized+0x0");
    assert_string_equal(fmt(t, 0x200), "local+0x0");
    assert_string_equal(fmt(t, 0x300), "glob+0x0");
    assert_string_equal(fmt(t, 0x400), "_xyz+0x0");
    assert_string_equal(fmt(t, 0x500), "abc+0x0");
    assert_string_equal(fmt(t, 0x600), "first+0x0");
    assert_string_equal(fmt(t, 0x700), "sys_ab+0x0");
    assert_int_equal(ek_symtab_count(t), 7);
    assert_int_equal(ek_symtab_check_tree(t), 0);
    ek_symtab_free(t);
}

/* Random tables: the red-black invariants hold after inserts and duplicate removal, and the
 * flattened lookup answers exactly what a walk of the tree answers. */
static void test_random_tree_consistency(void **state)
{
    uint32_t seed = 7;
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffffff)
    for (int round = 0; round < 40; round++) {
        ek_symtab *t;
        assert_int_equal(ek_symtab_new(&t), 0);
        int n = 1 + (int)(RND() % 300);
        for (int pass = 0; pass < 2; pass++) {
            for (int i = 0; i < n; i++) {
                char name[32];
                int under = (int)(RND() % 3);
                unsigned id = RND() % 50;
                snprintf(name, sizeof name, "%.*sf%u", under, "__", id);
                uint64_t start = RND() % 4000, size = RND() % 3 ? RND() % 200 : 0;
                assert_int_equal(ek_symtab_insert(t, start, size, (int)(RND() % 3), STT_FUNC, name),
                                 0);
            }
            assert_int_equal(ek_symtab_check_tree(t), 0);
            ek_symtab_fixup(t, (int)(round & 1));
            assert_int_equal(ek_symtab_check_tree(t), 0);
            for (uint64_t a = 0; a < 9000; a += 1 + RND() % 5)
                assert_ptr_equal(ek_symtab_find(t, a), ek_symtab_tree_find(t, a));
        }
        /* Ordered by start, no two with the same start after the fixup. */
        size_t c = ek_symtab_count(t);
        for (size_t i = 1; i < c; i++)
            assert_true(ek_symtab_get(t, i - 1)->start < ek_symtab_get(t, i)->start);
        ek_symtab_free(t);
    }
#undef RND
}

/* ---- kallsyms ---- */

static void test_kallsyms(void **state)
{
    const char *text = "ffffffc000080000 T _text\n"
                       "ffffffc000081000 t local_fn\n"
                       "ffffffc000081000 W weak_fn\n"
                       "ffffffc000082000 D some_data\n"
                       "ffffffc000083000 r ro_skipped\n"
                       "ffffffc000083000 A abs_skipped\n"
                       "garbage line\n"
                       "ffffffc000084000 w lower_weak\n"
                       "ffffffc0000851f0 T last_kernel\n"
                       "ffffffbffc000000 t mod_fn\t[rq_stats]\n"
                       "ffffffbffc000100 t $x\t[rq_stats]\n"
                       "ffffffbffc000200 T mod_fn2\t[rq_stats]\n";
    ek_symtab *t;
    assert_int_equal(ek_symtab_parse_kallsyms(text, strlen(text), "k", NULL, &t), 0);
    assert_int_equal(ek_symtab_count(t), 7);
    const ek_symbol *s = ek_symtab_find(t, 0xffffffc000081000ull);
    /* local_fn and weak_fn share a start: local_fn's fixed-up end is that same start (zero
     * size), weak_fn reaches the next symbol, and a sized symbol beats the weak rule. */
    assert_string_equal(s->name, "weak_fn");
    s = ek_symtab_find(t, 0xffffffc000080010ull);
    assert_string_equal(s->name, "_text");
    assert_int_equal(s->binding, STB_GLOBAL);
    assert_int_equal(s->type, STT_FUNC);
    assert_int_equal(s->ktype, 'T');
    s = ek_symtab_find(t, 0xffffffc000082010ull);
    assert_string_equal(s->name, "some_data");
    assert_int_equal(s->type, STT_OBJECT);
    s = ek_symtab_find(t, 0xffffffc000084000ull);
    assert_string_equal(s->name, "lower_weak");
    assert_int_equal(s->binding, STB_LOCAL); /* only 'W' is weak */
    /* Module symbols: name and module split; the last module symbol before the kernel and
     * the last kernel symbol end at the next page boundary past them. */
    s = ek_symtab_find(t, 0xffffffbffc000010ull);
    assert_string_equal(s->name, "mod_fn");
    assert_string_equal(s->module, "rq_stats");
    s = ek_symtab_find(t, 0xffffffbffc000200ull);
    assert_int_equal(s->end, 0xffffffbffc002000ull);
    assert_null(ek_symtab_find(t, 0xffffffbffc002000ull));
    s = ek_symtab_find(t, 0xffffffc0000851f0ull);
    assert_int_equal(s->end, 0xffffffc000087000ull); /* last: roundup + 4096 */
    ek_symtab_free(t);

    /* When the weak one comes first it is the zero-size one and loses on size. */
    const char *t2 = "1000 W weak_fn\n1000 t local_fn\n2000 T next\n";
    assert_int_equal(ek_symtab_parse_kallsyms(t2, strlen(t2), "k2", NULL, &t), 0);
    assert_string_equal(ek_symtab_find(t, 0x1000)->name, "local_fn");
    ek_symtab_free(t);

    char *p = tu_shared_path("perf/files/kallsyms_simpleperf_testdata");
    if (p) {
        assert_int_equal(ek_symtab_load_kallsyms(p, NULL, &t), 0);
        assert_int_equal(ek_symtab_count(t), 1);
        /* One line, no final newline. */
        assert_string_equal(ek_symtab_get(t, 0)->name, "FakeKernelSymbol");
        assert_string_equal(fmt(t, 0xffffffc000080010ull), "FakeKernelSymbol+0x10");
        assert_int_equal(ek_symtab_get(t, 0)->end, 0xffffffc000081000ull);
        ek_symtab_free(t);
        free(p);
    }
}

/* ---- ELF ---- */

static int have(const char *tool)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return run(cmd) == 0;
}

static void test_aarch64_elf(void **state)
{
    if (!have("clang") || !have("ld.lld")) tu_skip("clang or ld.lld is not installed");
    char *dir = tu_tmpdir();
    const char *lib = "\t.text\n\t.globl foo\n\t.type foo,%function\nfoo:\n\tret\n\t.size foo,4\n";
    const char *exe = "\t.text\n"
                      "\t.globl _start\n\t.type _start,%function\n"
                      "_start:\n\tbl foo\n\tbl bar\n\tbl helper\n\tb .\n\t.size _start,16\n"
                      "\t.type helper,%function\nhelper:\n\tnop\n\tret\n" /* size 0 */
                      "\t.globl exported\n\t.type exported,%function\n"
                      "exported:\n\tnop\n\tnop\n\tret\n\t.size exported,12\n"
                      "\t.data\n\t.globl table\n\t.type table,%object\n"
                      "table:\n\t.quad 1, 2\n\t.size table,16\n";
    char *ls = tu_write_file(dir, "lib.s", lib, strlen(lib));
    char *es = tu_write_file(dir, "exe.s", exe, strlen(exe));
    const char *bar = "\t.text\n\t.globl bar\n\t.type bar,%function\nbar:\n\tret\n";
    free(tu_write_file(dir, "bar.s", bar, strlen(bar)));
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && clang --target=aarch64-linux-gnu -c lib.s -o lib.o && "
             "clang --target=aarch64-linux-gnu -c exe.s -o exe.o && "
             "ld.lld -shared -soname libfoo.so --build-id=sha1 lib.o -o libfoo.so && "
             "clang --target=aarch64-linux-gnu -c bar.s -o bar.o && "
             "ld.lld -shared -soname libbar.so bar.o -o libbar.so && "
             "ld.lld --build-id=sha1 -pie --export-dynamic exe.o libfoo.so libbar.so -o exe",
             dir);
    if (run(cmd) != 0) {
        tu_rmtree(dir);
        free(dir);
        free(ls);
        free(es);
        fail_msg("clang/ld.lld could not build the AArch64 test binaries");
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/exe", dir);
    ek_elf_info *info;
    assert_int_equal(ek_elf_info_read(path, NULL, &info), 0);
    assert_int_equal(info->machine, EM_AARCH64);
    assert_int_equal(info->elf_class, 64);
    assert_int_equal(info->type, ET_DYN);
    assert_int_equal(info->build_id_len, 20);
    assert_true(info->has_text && info->text_size == 36);
    assert_true(info->nsegs >= 2);
    assert_true(info->has_symtab && info->has_dynsym);
    /* The build-id agrees with what llvm-readelf prints. */
    char hex[130];
    ek_build_id_hex(info->build_id, info->build_id_len, hex, sizeof hex);
    snprintf(cmd, sizeof cmd, "llvm-readelf -n '%s' | grep -q 'Build ID: %s'", path, hex);
    if (have("llvm-readelf")) assert_int_equal(run(cmd), 0);

    ek_symtab *t;
    assert_int_equal(ek_symtab_load_elf(path, EK_SYMS_VADDR, NULL, &t), 0);
    uint64_t text = info->text_addr;
    assert_string_equal(fmt(t, text), "_start+0x0");
    assert_string_equal(fmt(t, text + 12), "_start+0xc");
    assert_string_equal(fmt(t, text + 16), "helper+0x0");
    assert_string_equal(fmt(t, text + 20), "helper+0x4"); /* size 0: up to 'exported' */
    assert_string_equal(fmt(t, text + 24 + 8), "exported+0x8");
    /* PLT: two entries after the 32-byte header, in .rela.plt order. */
    uint64_t plt = 0;
    for (size_t i = 0; i < info->nsecs; i++)
        if (strcmp(info->secs[i].name, ".plt") == 0) plt = info->secs[i].addr;
    assert_true(plt != 0);
    char got[2][64];
    snprintf(got[0], 64, "%s", fmt(t, plt + 32));
    snprintf(got[1], 64, "%s", fmt(t, plt + 48 + 4));
    assert_true(strcmp(got[0], "foo@plt+0x0") == 0 || strcmp(got[0], "bar@plt+0x0") == 0);
    assert_true(strstr(got[1], "@plt+0x4") != NULL);
    assert_string_equal(fmt(t, plt), "[unknown]"); /* the PLT header has no symbol */
    /* Data objects are symbols too. */
    const ek_symbol *tb = NULL;
    for (size_t i = 0; i < ek_symtab_count(t); i++)
        if (strcmp(ek_symtab_get(t, i)->name, "table") == 0) tb = ek_symtab_get(t, i);
    assert_non_null(tb);
    assert_int_equal(tb->type, STT_OBJECT);
    ek_symtab_free(t);

    /* perf's keys are file offsets: the same answers shifted by p_vaddr - p_offset. */
    assert_int_equal(ek_symtab_load_elf(path, 0, NULL, &t), 0);
    uint64_t delta = 0;
    for (size_t i = 0; i < info->nsegs; i++)
        if (text >= info->segs[i].vaddr && text < info->segs[i].vaddr + info->segs[i].memsz)
            delta = info->segs[i].vaddr - info->segs[i].offset;
    assert_string_equal(fmt(t, text - delta + 20), "helper+0x4");
    ek_symtab_free(t);

    /* Stripped: .dynsym only. */
    snprintf(cmd, sizeof cmd, "cd '%s' && llvm-objcopy --strip-all exe exe.stripped", dir);
    if (have("llvm-objcopy") && run(cmd) == 0) {
        snprintf(path, sizeof path, "%s/exe.stripped", dir);
        assert_int_equal(ek_symtab_load_elf(path, EK_SYMS_VADDR, NULL, &t), 0);
        assert_string_equal(fmt(t, text + 24), "exported+0x0");
        assert_string_equal(fmt(t, text + 16), "[unknown]"); /* helper was in .symtab only */
        ek_symtab_free(t);
    }
    ek_elf_info_free(info);
    tu_rmtree(dir);
    free(dir);
    free(ls);
    free(es);
}

static void test_shared_binaries(void **state)
{
    char *loop = tu_shared_path("perf/files/etm_test_loop");
    char *ko = tu_shared_path("perf/files/rq_stats.ko");
    if (!loop || !ko) {
        free(loop);
        free(ko);
        tu_skip("../shared/testdata/perf/files is absent");
    }
    ek_elf_info *info;
    assert_int_equal(ek_elf_info_read(loop, NULL, &info), 0);
    assert_int_equal(info->machine, EM_AARCH64);
    assert_int_equal(info->type, ET_DYN);
    assert_false(info->has_symtab);
    assert_true(info->has_dynsym);
    assert_true(info->build_id_len > 0);
    assert_true(info->has_text);
    ek_elf_info_free(info);
    /* Stripped, and its only dynamic symbol is undefined: perf finds no symbol at all (and
     * so synthesises no PLT symbols): every address prints as [unknown]. */
    ek_symtab *t;
    assert_int_equal(ek_symtab_load_elf(loop, 0, NULL, &t), 0);
    assert_int_equal(ek_symtab_count(t), 0);
    assert_string_equal(fmt(t, 0x1000), "[unknown]");
    ek_symtab_free(t);

    /* The kernel module: .text symbols in the main table keyed by sh_offset + value; other
     * sections in their own tables. perf's expected output names "_note_6+0x0" in
     * [rq_stats].note.Linux for the address that maps to that section's start. */
    assert_int_equal(ek_elf_info_read(ko, NULL, &info), 0);
    assert_int_equal(info->type, ET_REL);
    assert_int_equal(ek_symtab_load_elf(ko, 0, NULL, &t), 0);
    assert_true(ek_symtab_count(t) > 0);
    for (size_t i = 0; i < ek_symtab_count(t); i++) {
        const ek_symbol *s = ek_symtab_get(t, i);
        assert_string_equal(info->secs[s->shndx].name, ".text");
        assert_true(s->start == s->value + info->secs[s->shndx].offset);
        assert_true(s->name[0] != '$');
    }
    ek_symtab_free(t);
    ek_kmod_section *secs;
    size_t n;
    assert_int_equal(ek_symtab_load_kmodule_sections(ko, NULL, &secs, &n), 0);
    int found = 0;
    for (size_t i = 0; i < n; i++) {
        assert_string_not_equal(secs[i].name, ".text");
        if (strcmp(secs[i].name, ".note.Linux") == 0) {
            char *s = fmt(secs[i].syms, secs[i].sh_offset);
            assert_string_equal(s, "_note_6+0x0");
            found = 1;
        }
    }
    assert_true(found);
    ek_kmod_sections_free(secs, n);
    ek_elf_info_free(info);
    free(loop);
    free(ko);
}

/* perf 6.1 itself as the oracle: sample a program whose symbols overlap, have no size,
 * alias each other, are weak, hidden or data, and compare every sample's sym+off. */
static void test_against_perf(void **state)
{
#if !defined(__x86_64__)
    tu_skip("perf's own samples are compared on x86_64 only");
#else
    if (!have("perf") || !have("gcc")) tu_skip("perf or gcc is not installed");
    static const char prog[] = "\t.text\n\t.globl main\n\t.type main,@function\nmain:\n"
                               "\tmov $1500000, %rcx\n1:\tcall region\n\tdec %rcx\n\tjnz 1b\n"
                               "\txor %eax, %eax\n\tret\n\t.size main, .-main\n"
                               "\t.globl region\n\t.type region,@function\nregion:\n"
                               "\t.rept 40\n\tnop\n\t.endr\ninner_label:\n\t.rept 40\n\tnop\n"
                               "\t.endr\n\t.type overlap_fn,@function\noverlap_fn:\n"
                               "\t.rept 48\n\tnop\n\t.endr\n\t.size overlap_fn, 32\n"
                               "\t.rept 40\n\tnop\n\t.endr\n\t.weak weak_alias\n"
                               "\t.type weak_alias,@function\nweak_alias:\n"
                               "\t.globl strong_alias\n\t.type strong_alias,@function\n"
                               "strong_alias:\n\t.rept 40\n\tnop\n\t.endr\n"
                               "\t.size weak_alias, 40\n\t.size strong_alias, 40\n"
                               "\t.type zero_fn,@function\nzero_fn:\n\t.rept 40\n\tnop\n"
                               "\t.endr\n\t.type __dup_a,@function\n__dup_a:\n"
                               "\t.type dup_a,@function\ndup_a:\n\t.rept 40\n\tnop\n\t.endr\n"
                               "\t.type data_obj,@object\ndata_obj:\n\t.rept 40\n\tnop\n"
                               "\t.endr\n\t.size data_obj, 8\n\t.hidden hidden_label\n"
                               "hidden_label:\n\t.rept 40\n\tnop\n\t.endr\n\tret\n"
                               "\t.size region, .-region\n"
                               "\t.section .note.GNU-stack,\"\",@progbits\n";
    char *dir = tu_tmpdir();
    free(tu_write_file(dir, "prog.s", prog, sizeof prog - 1));
    char cmd[9000];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && gcc -no-pie -rdynamic -o prog prog.s 2>/dev/null && "
             "perf record -q -o p.data -e cpu-clock -c 50000 ./prog >/dev/null 2>&1 && "
             "perf script -i p.data -F ip,sym,symoff,dso 2>/dev/null | grep '/prog)$' "
             "> samples.txt",
             dir);
    if (run(cmd) != 0) {
        tu_rmtree(dir);
        free(dir);
        tu_skip("perf record/script cannot sample here (perf_event_paranoid or no PMU)");
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/prog", dir);
    ek_elf_info *info;
    ek_symtab *t;
    assert_int_equal(ek_elf_info_read(path, NULL, &info), 0);
    assert_int_equal(ek_symtab_load_elf(path, 0, NULL, &t), 0);
    snprintf(path, sizeof path, "%s/samples.txt", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[512];
    int total = 0, bad = 0, overlap = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long ip;
        char sym[256];
        if (sscanf(line, " %llx %255s", &ip, sym) != 2) continue;
        uint64_t off = ip;
        for (size_t i = 0; i < info->nsegs; i++) {
            const ek_elf_segment *s = &info->segs[i];
            if (ip >= s->vaddr && ip - s->vaddr < s->memsz) {
                off = ip - (s->vaddr - s->offset);
                break;
            }
        }
        const char *ours = fmt(t, off);
        total++;
        if (strncmp(sym, "inner_label", 11) == 0 || strncmp(sym, "overlap_fn", 10) == 0) overlap++;
        if (strcmp(ours, sym) != 0) {
            if (bad < 5) printf("ip %llx: perf says %s, etmkit says %s\n", ip, sym, ours);
            bad++;
        }
    }
    fclose(f);
    printf("%d samples compared with perf, %d inside overlapping symbols\n", total, overlap);
    assert_true(total > 100);
    assert_int_equal(bad, 0);
    ek_symtab_free(t);
    ek_elf_info_free(info);
    tu_rmtree(dir);
    free(dir);
#endif
}

/* Garbage kallsyms text and damaged ELF files: no crash, no leak, diagnostics. */
static void test_damaged_inputs(void **state)
{
    uint32_t seed = 5;
    static const char kalpha[] = "0123456789abcdef tTwW[]\t\n$";
    for (int round = 0; round < 200; round++) {
        char buf[1024];
        size_t n = seed % sizeof buf;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] =
                (seed >> 20) & 1 ? kalpha[(seed >> 8) % (sizeof kalpha - 1)] : (char)(seed >> 12);
        }
        seed = seed * 1103515245u + 12345u;
        ek_symtab *t;
        assert_int_equal(ek_symtab_parse_kallsyms(buf, n, "g", NULL, &t), 0);
        ek_symtab_find(t, seed);
        ek_symtab_free(t);
    }
    char *loop = tu_shared_path("perf/files/etm_test_loop");
    char *ko = tu_shared_path("perf/files/rq_stats.ko");
    char *dir = tu_tmpdir();
    const char *srcs[2] = {loop, ko};
    for (int k = 0; k < 2; k++) {
        if (!srcs[k]) continue;
        FILE *f = fopen(srcs[k], "rb");
        static uint8_t img[1 << 20];
        size_t len = fread(img, 1, sizeof img, f);
        fclose(f);
        for (int round = 0; round < 60; round++) {
            static uint8_t cp[1 << 20];
            memcpy(cp, img, len);
            size_t cut = round < 20 ? len * (size_t)round / 20 : len;
            for (int j = 0; round >= 20 && j < 16; j++) {
                seed = seed * 1103515245u + 12345u;
                cp[(seed >> 4) % (len < 4096 ? len : 4096)] = (uint8_t)(seed >> 24);
                seed = seed * 1103515245u + 12345u;
                cp[(seed >> 4) % len] = (uint8_t)(seed >> 24);
            }
            char *p = tu_write_file(dir, "d.elf", cp, cut);
            ek_elf_info *info = NULL;
            if (ek_elf_info_read(p, NULL, &info) == 0) ek_elf_info_free(info);
            ek_symtab *t = NULL;
            if (ek_symtab_load_elf(p, 0, NULL, &t) == 0) {
                ek_symtab_find(t, 0x1000);
                ek_symtab_free(t);
            }
            ek_image *im;
            assert_int_equal(ek_image_new(NULL, &im), 0);
            if (ek_image_add_elf(im, p, 0x10000, EK_MS_ANY) > 0) {
                uint8_t b4[4];
                ek_image_read(im, EK_MS_ANY, 0x10000, b4, 4);
            }
            ek_image_free(im);
            ek_kmod_section *secs;
            size_t ns;
            if (ek_symtab_load_kmodule_sections(p, NULL, &secs, &ns) == 0)
                ek_kmod_sections_free(secs, ns);
            free(p);
        }
    }
    tu_rmtree(dir);
    free(dir);
    free(loop);
    free(ko);
}

/* ---- finding files ---- */

static void test_buildid_candidates(void **state)
{
    char *dir = tu_tmpdir();
    char dbg[4096], sub[4200];
    snprintf(dbg, sizeof dbg, "%s/debug", dir);
    const char *bid = "0123456789abcdef0123456789abcdef01234567";
    char **l;
    size_t n;
    assert_true(ek_buildid_candidates("/usr/lib/libx.so", bid, "/sym", dbg, &l, &n) > 0);
    const char *want[] = {
        NULL, /* new-style cache: <dbg>/.build-id/01/23...67/elf */
        NULL, /* .../debug */
        "/sym//usr/lib/debug/usr/lib/libx.so.debug",
        "/sym//usr/lib/debug/usr/lib/libx.so",
        "/sym//usr/lib/debug/.build-id/01/23456789abcdef0123456789abcdef01234567.debug",
        "/sym//usr/lib/libx.so",
        "/sym//usr/lib/.debug/libx.so",
        "/sym//usr/lib/debug/lib/libx.so",
    };
    assert_int_equal(n, 8);
    char e0[8500];
    snprintf(e0, sizeof e0, "%s/.build-id/01/23456789abcdef0123456789abcdef01234567/elf", dbg);
    assert_string_equal(l[0], e0);
    snprintf(e0, sizeof e0, "%s/.build-id/01/23456789abcdef0123456789abcdef01234567/debug", dbg);
    assert_string_equal(l[1], e0);
    for (size_t i = 2; i < n; i++)
        assert_string_equal(l[i], want[i]);
    ek_path_list_free(l, n);

    /* Old-style cache: the .build-id entry is the file itself. No symfs, no build-id. */
    snprintf(sub, sizeof sub, "%s/.build-id/01", dbg);
    char mk[9000];
    snprintf(mk, sizeof mk,
             "mkdir -p '%s' && printf x > '%s/23456789abcdef0123456789abcdef01234567'", sub, sub);
    assert_int_equal(run(mk), 0);
    assert_true(ek_buildid_candidates("/data/local/tmp/etm_test_loop", bid, NULL, dbg, &l, &n) > 0);
    snprintf(e0, sizeof e0, "%s/23456789abcdef0123456789abcdef01234567", sub);
    assert_string_equal(l[0], e0); /* elf and debug both name this file: listed once */
    assert_string_equal(l[1], "/usr/lib/debug/data/local/tmp/etm_test_loop.debug");
    assert_string_equal(l[2], "/usr/lib/debug/data/local/tmp/etm_test_loop");
    ek_path_list_free(l, n);
    char *found = ek_buildid_find("/data/local/tmp/etm_test_loop", bid, NULL, dbg);
    assert_non_null(found);
    assert_string_equal(found, e0);
    free(found);
    /* Without a build-id only the path-based candidates remain. */
    assert_int_equal(ek_buildid_candidates("/bin/x", NULL, "", dbg, &l, &n), 4);
    assert_string_equal(l[0], "/usr/lib/debug/bin/x.debug");
    assert_string_equal(l[2], "/bin/x");
    ek_path_list_free(l, n);
    /* Kernel modules: cache, then the system path; kallsyms and vdso cache names. */
    assert_int_equal(
        ek_buildid_candidates("/vendor/lib/modules/rq_stats.ko", "aabbcc", "/s", dbg, &l, &n), 3);
    assert_string_equal(l[2], "/s//vendor/lib/modules/rq_stats.ko");
    ek_path_list_free(l, n);
    assert_int_equal(ek_buildid_candidates("[kernel.kallsyms]", "aabbcc", NULL, dbg, &l, &n), 1);
    assert_non_null(strstr(l[0], "/.build-id/aa/bbcc/kallsyms"));
    ek_path_list_free(l, n);
    assert_int_equal(ek_buildid_data_candidates("[vdso]", "aabbcc", NULL, dbg, &l, &n), 2);
    assert_non_null(strstr(l[0], "/.build-id/aa/bbcc/vdso"));
    ek_path_list_free(l, n);
    assert_int_equal(ek_buildid_data_candidates("/bin/x", "aabbcc", "/s", dbg, &l, &n), 2);
    assert_string_equal(l[1], "/s//bin/x");
    ek_path_list_free(l, n);

    /* The shared symfs layout: the traced binary is found at <symfs><path>. */
    char *symfs = tu_shared_path("perf/symfs");
    if (symfs) {
        found = ek_buildid_find("/data/local/tmp/etm_test_loop", NULL, symfs, dbg);
        assert_non_null(found);
        assert_non_null(strstr(found, "/data/local/tmp/etm_test_loop"));
        free(found);
        found = ek_buildid_find("/vendor/lib/modules/rq_stats.ko", NULL, symfs, dbg);
        assert_non_null(found);
        free(found);
        free(symfs);
    }
    tu_rmtree(dir);
    free(dir);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixup_end_and_lookup),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_random_tree_consistency),
        cmocka_unit_test(test_kallsyms),
        cmocka_unit_test(test_aarch64_elf),
        cmocka_unit_test(test_shared_binaries),
        cmocka_unit_test(test_against_perf),
        cmocka_unit_test(test_buildid_candidates),
        cmocka_unit_test(test_damaged_inputs),
    };
    return tu_run_group(argc, argv, tests, NULL, NULL);
}
