/* A kernel module of the simulated kernel (scenario kernel-module): simmod.ko, the relocatable
 * file symfs holds and the recording names, and its image as the kernel's module loader laid
 * it out and relocated it (simmod.lds), which the machine runs. Besides the mapping, this
 * keeps what perf 6.1 makes of the .ko, for perf-6.1-expected.txt:
 * - it reads the module's code from the file as if the file were the module's memory: file
 *   offset = address - map start + the map's pgoff, which is 0 until the first read has
 *   loaded the module's symbols, and from then on .text's file offset (symbol-elf.c,
 *   dso__process_kernel_symbol: "The initial module mapping is based on /proc/modules mapped
 *   to offset zero. Overwrite it to map to the module dso.");
 * - for every allocated section other than .text that has symbols, it makes a map of its own
 *   among the kernel's maps, "[name].section", at [sh_addr + ref_reloc, + sh_size) = [0,
 *   sh_size) for a relocatable file, with pgoff sh_offset and the section's symbols at
 *   st_value + sh_offset: from then on the kernel's maps hold addresses from 0 up. */
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/sim.h"

static const uint8_t *shdr(const uint8_t *d, size_t n, unsigned i)
{
    uint64_t off = ek_le64(d + 40) + (uint64_t)i * ek_le16(d + 58);
    return off + 64 <= n ? d + off : NULL;
}

static const char *sec_name(const uint8_t *d, size_t n, const uint8_t *sh)
{
    const uint8_t *ss = shdr(d, n, ek_le16(d + 62));
    if (!ss) return "";
    uint64_t o = ek_le64(ss + 24) + ek_le32(sh);
    return o < n ? (const char *)d + o : "";
}

/* perf's elf_sym__is_function / _is_object / _is_label, and the mapping symbols it drops */
static int perf_takes(const uint8_t *s, const char *name, int exec)
{
    unsigned type = s[4] & 0xF, vis = s[5] & 3;
    uint16_t shndx = ek_le16(s + 6);
    if (!ek_le32(s) || !shndx || shndx >= 0xFF00) return 0;
    if (name[0] == '$' && strchr("adtx", name[1]) && (name[2] == 0 || name[2] == '.')) return 0;
    if (type == 2 || type == 1) return 1;             /* STT_FUNC, STT_OBJECT */
    return type == 0 && vis != 1 && vis != 2 && exec; /* a label in code */
}

int sim_kmod_setup(sim *S)
{
    const sim_image *img = sim_find_image(S, "simmod");
    const sim_blob *ko = sim_blob_kmod_ko();
    sim_kmod *k = calloc(1, sizeof(*k));
    if (!k) return EK_ERR_NOMEM;
    S->kmod = k;
    if (!img) return EK_ERR_NOT_FOUND;
    const uint8_t *d = ko->start;
    size_t n = (size_t)(ko->end - ko->start);
    if (n < 64 || memcmp(d, "\177ELF\2\1", 6) || ek_le16(d + 16) != 1 /* ET_REL */)
        return EK_ERR_FORMAT;
    k->ko = d;
    k->ko_size = n;
    k->short_name = "[simmod]";
    /* the core layout's size, as /proc/modules gives it: every allocated segment, page
     * aligned (simmod.lds) */
    uint64_t base = img->seg_vaddr, top = base;
    uint64_t phoff = ek_le64(img->data + 32);
    unsigned phentsize = ek_le16(img->data + 54), phnum = ek_le16(img->data + 56);
    for (unsigned i = 0; i < phnum; i++) {
        const uint8_t *ph = img->data + phoff + (uint64_t)i * phentsize;
        if (ek_le32(ph) != 1) continue;
        uint64_t end = ek_le64(ph + 16) + ek_le64(ph + 40);
        if (end > top) top = end;
    }
    sim_map *m = &k->map;
    m->start = base;
    m->end = (top + 0xFFF) & ~0xFFFull;
    m->bias = 0;
    m->img = img;
    m->pid = -1;
    m->path = ko->path;
    m->exact = 1;
    m->serial = ++S->next_serial;
    if (S->nmaps_all == S->cap_maps_all) {
        size_t nc = S->cap_maps_all ? S->cap_maps_all * 2 : 16;
        sim_map *v = realloc(S->maps_all, nc * sizeof(*v));
        if (!v) return EK_ERR_NOMEM;
        S->maps_all = v;
        S->cap_maps_all = nc;
    }
    S->maps_all[S->nmaps_all++] = *m;
    /* the .ko's sections: .text's offset, the build-id, and perf's section maps */
    unsigned shnum = ek_le16(d + 60);
    const uint8_t *symsh = NULL;
    for (unsigned i = 0; i < shnum; i++) {
        const uint8_t *sh = shdr(d, n, i);
        if (!sh) return EK_ERR_FORMAT;
        const char *nm = sec_name(d, n, sh);
        if (!strcmp(nm, ".text")) k->text_off = ek_le64(sh + 24);
        if (ek_le32(sh + 4) == 2) symsh = sh;
        if (ek_le32(sh + 4) == 7 && !strcmp(nm, ".note.gnu.build-id")) {
            const uint8_t *p = d + ek_le64(sh + 24);
            uint32_t namesz = ek_le32(p), descsz = ek_le32(p + 4);
            if (descsz <= sizeof(k->build_id)) {
                memcpy(k->build_id, p + 12 + ((namesz + 3) & ~3u), descsz);
                k->build_id_len = descsz;
            }
        }
    }
    if (!symsh) return EK_ERR_FORMAT;
    const uint8_t *strsh = shdr(d, n, ek_le32(symsh + 40));
    if (!strsh) return EK_ERR_FORMAT;
    uint64_t so = ek_le64(symsh + 24), ss = ek_le64(symsh + 32), stro = ek_le64(strsh + 24);
    for (uint64_t o = so; o + 24 <= so + ss && o + 24 <= n; o += 24) {
        const uint8_t *s = d + o;
        uint16_t shndx = ek_le16(s + 6);
        const char *name = (const char *)d + stro + ek_le32(s);
        const uint8_t *sh = shndx < shnum ? shdr(d, n, shndx) : NULL;
        if (!sh || !(ek_le64(sh + 8) & 2) /* SHF_ALLOC */) continue;
        if (!perf_takes(s, name, (ek_le64(sh + 8) & 4) != 0)) continue;
        const char *sect = sec_name(d, n, sh);
        if (!strcmp(sect, ".text")) continue;
        if (k->nstray == SIM_KMOD_STRAY) continue;
        sim_kmod_stray *y = &k->stray[k->nstray++];
        y->section = sect;
        y->size = ek_le64(sh + 32);
        y->pgoff = ek_le64(sh + 24);
        y->sym = name;
        y->sym_start = ek_le64(s + 8) + y->pgoff;
        y->sym_size = ek_le64(s + 16);
    }
    return 0;
}

const sim_map *sim_kmod_map(const sim *S, uint64_t a)
{
    const sim_kmod *k = S->kmod;
    return k && a >= k->map.start && a < k->map.end ? &k->map : NULL;
}

void sim_kmod_free(sim *S)
{
    free(S->kmod);
    S->kmod = NULL;
}
