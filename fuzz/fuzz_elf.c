/* Fuzz target: the ELF loaders -- facts (ek_elf_info_read), perf-style symbol tables (user
 * and kernel-module rules), kernel-module section tables, mapping into a memory image and
 * BOLT's view (ek_bolt_map_load_elf: names, blocks, a lookup and an fdata line per function).
 * The input is the ELF file (an in-memory file). */
#include <stdlib.h>
#include <string.h>

#include "etmkit/image.h"
#include "etmkit/profile.h"
#include "etmkit/symbols.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int mfd = fuzz_memfile("elf", data, size, path, sizeof path);
    if (mfd < 0) return 0;
    fuzz_diag fd;
    fuzz_diag_begin(&fd);

    ek_elf_info *info = NULL;
    if (ek_elf_info_read(path, &fd.sink, &info) == 0 && info) {
        char hex[129];
        ek_build_id_hex(info->build_id, info->build_id_len, hex, sizeof hex);
        size_t total = 0;
        for (size_t i = 0; i < info->nsecs; i++)
            if (info->secs[i].name)
                total += strlen(info->secs[i].name); /* names must be NUL-terminated */
        (void)total;
    }
    for (unsigned flags = 0; flags < 4; flags++) {
        ek_symtab *t = NULL;
        if (ek_symtab_load_elf(path, flags, &fd.sink, &t) == 0 && t) {
            size_t n = ek_symtab_count(t);
            for (size_t i = 0; i < n; i++) {
                const ek_symbol *s = ek_symtab_get(t, i);
                FUZZ_CHECK(!(!s || !s->name), "not (!s || !s->name)");
                ek_symtab_find(t, s->start);
            }
            ek_symtab_free(t);
        }
    }
    ek_kmod_section *secs = NULL;
    size_t nsecs = 0;
    if (ek_symtab_load_kmodule_sections(path, &fd.sink, &secs, &nsecs) == 0)
        ek_kmod_sections_free(secs, nsecs);

    ek_image *img = NULL;
    if (ek_image_new(&fd.sink, &img) == 0) {
        if (ek_image_add_elf(img, path, 0x1000, EK_MS_ANY) > 0 && info) {
            /* Read the first and last bytes of every segment through the image. */
            for (size_t i = 0; i < info->nsegs && i < 64; i++) {
                const ek_elf_segment *sg = &info->segs[i];
                uint8_t buf[64];
                const uint8_t *p;
                uint64_t a = sg->vaddr + 0x1000;
                ek_image_read(img, EK_MS_ANY, a, buf, sizeof buf);
                size_t m = ek_image_map(img, EK_MS_ANY, a, &p);
                if (m) (void)*(volatile const uint8_t *)&p[m - 1];
                if (sg->filesz) ek_image_read(img, EK_MS_ANY, a + sg->filesz - 1, buf, sizeof buf);
            }
        }
        ek_image_free(img);
    }
    ek_bolt_map *bm = NULL;
    if (ek_bolt_map_load_elf(path, &fd.sink, &bm) == 0) {
        /* a call into and a range over each segment's start, written as fdata */
        ek_profile *p = NULL;
        ek_profile_binary id = {"elf", NULL, 0, 0};
        size_t h;
        if (ek_profile_new(&p) == 0 && ek_profile_add_binary(p, &id, &h) == 0 && info) {
            for (size_t i = 0; i < info->nsegs && i < 64; i++) {
                uint64_t a = info->segs[i].vaddr;
                const char *name;
                uint64_t off;
                if (ek_bolt_map_lookup(bm, a, &name, &off) == 0)
                    FUZZ_CHECK(name && name[0] && off <= a,
                               "a lookup hit has a name and an offset");
                ek_profile_add_branch(p, h, EK_PROFILE_EXTERNAL, a, 1);
                ek_profile_add_range(p, h, a, a + info->segs[i].memsz, 2);
            }
            ek_sbuf s = EK_SBUF_INIT;
            FUZZ_CHECK(ek_profile_write_bolt(p, h, bm, &s) == 0, "the fdata writer failed");
            ek_sbuf_free(&s);
        }
        ek_profile_free(p);
        ek_bolt_map_free(bm);
    }
    if (info) ek_elf_info_free(info);
    fuzz_diag_end(&fd);
    fuzz_memfile_close(mfd);
    return 0;
}
