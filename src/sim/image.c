#include "sim/image.h"

#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"

#define SIM_DEC_MAX 9

void sim_a64_decode(uint32_t op, sim_insn *o)
{
    memset(o, 0, sizeof(*o));
    if ((op & 0x7C000000u) == 0x14000000u) {
        o->cls = (op & 0x80000000u) ? SIM_I_BL : SIM_I_B;
        o->imm = (int32_t)((op & 0x03FFFFFFu) << 6) >> 4;
    } else if ((op & 0xFF000010u) == 0x54000000u || (op & 0x7E000000u) == 0x34000000u) {
        o->cls = SIM_I_BCOND;
        o->imm = (int32_t)((op & 0x00FFFFE0u) << 8) >> 11;
    } else if ((op & 0x7E000000u) == 0x36000000u) {
        o->cls = SIM_I_BCOND;
        o->imm = (int32_t)((op & 0x0007FFE0u) << 13) >> 16;
    } else if ((op & 0xFFFFFC1Fu) == 0xD61F0000u) {
        o->cls = SIM_I_BR;
        o->reg = (uint8_t)((op >> 5) & 31);
    } else if ((op & 0xFFFFFC1Fu) == 0xD63F0000u) {
        o->cls = SIM_I_BLR;
        o->reg = (uint8_t)((op >> 5) & 31);
    } else if ((op & 0xFFFFFC1Fu) == 0xD65F0000u) {
        o->cls = SIM_I_RET;
    } else if (op == 0xD69F03E0u) {
        o->cls = SIM_I_ERET;
    } else if ((op & 0xFFE0001Fu) == 0xD4000001u) {
        o->cls = SIM_I_SVC;
    } else if ((op & 0x7F800000u) == 0x52800000u) {
        o->cls = SIM_I_MOVZ;
        o->reg = (uint8_t)(op & 31);
        o->shift = (uint8_t)(((op >> 21) & 3) * 16);
        o->imm = (int32_t)((op >> 5) & 0xFFFF);
    } else if ((op & 0xFFFFF09Fu) == 0xD503309Fu && (op & 0x60u) == 0x40u) {
        o->cls = SIM_I_BAD; /* ISB: a waypoint for OpenCSD, never generated here */
    } else if ((op & 0xFFFFFFDFu) == 0xD503205Fu) {
        o->cls = SIM_I_BAD; /* WFI/WFE */
    } else if ((op & 0xFFE0001Fu) == 0xD4200000u || (op & 0xFFE0001Fu) == 0xD4400000u ||
               (op & 0xFFE00000u) == 0u || (op & 0xFFE0001Cu) == 0xD4000000u) {
        o->cls =
            (op & 0xFFE0001Fu) == 0xD4000001u ? SIM_I_SVC : SIM_I_BAD; /* BRK, HLT, UDF, HVC, SMC */
    }
}

static const uint8_t *sect_hdr(const sim_image *img, unsigned i)
{
    uint64_t shoff = ek_le64(img->data + 40);
    unsigned shentsize = ek_le16(img->data + 58);
    uint64_t off = shoff + (uint64_t)i * shentsize;
    if (shentsize < 64 || off + 64 > img->size) return NULL;
    return img->data + off;
}

static int cmp_sym(const void *a, const void *b)
{
    const sim_sym *x = a, *y = b;
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int load_symbols(sim_image *img, const uint8_t *symsh)
{
    uint64_t off = ek_le64(symsh + 24), size = ek_le64(symsh + 32);
    unsigned link = ek_le32(symsh + 40);
    const uint8_t *strsh = sect_hdr(img, link);
    if (!strsh || off + size > img->size) return EK_ERR_FORMAT;
    uint64_t stroff = ek_le64(strsh + 24), strsize = ek_le64(strsh + 32);
    if (stroff + strsize > img->size || strsize == 0 || img->data[stroff + strsize - 1] != 0)
        return EK_ERR_FORMAT;
    size_t n = (size_t)(size / 24);
    img->syms = calloc(n ? n : 1, sizeof(sim_sym));
    if (!img->syms) return EK_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *s = img->data + off + i * 24;
        uint32_t name = ek_le32(s);
        uint8_t info = s[4];
        uint16_t shndx = ek_le16(s + 6);
        if ((info & 0xF) != 2 /* STT_FUNC */ || shndx == 0 || name >= strsize) continue;
        sim_sym *y = &img->syms[img->nsyms++];
        y->addr = ek_le64(s + 8);
        y->size = ek_le64(s + 16);
        y->name = (const char *)img->data + stroff + name;
        y->global = (info >> 4) != 0;
    }
    qsort(img->syms, img->nsyms, sizeof(sim_sym), cmp_sym);
    return 0;
}

static void load_build_id(sim_image *img, const uint8_t *sh)
{
    uint64_t off = ek_le64(sh + 24), size = ek_le64(sh + 32);
    if (off + size > img->size || size < 16) return;
    const uint8_t *p = img->data + off;
    uint32_t namesz = ek_le32(p), descsz = ek_le32(p + 4), type = ek_le32(p + 8);
    uint32_t nameal = (namesz + 3) & ~3u;
    if (type != 3 || namesz != 4 || memcmp(p + 12, "GNU", 4) || 12 + nameal + descsz > size ||
        descsz > sizeof(img->build_id))
        return;
    memcpy(img->build_id, p + 12 + nameal, descsz);
    img->build_id_len = descsz;
}

static int load_meta(sim_image *img, const uint8_t *sh)
{
    uint64_t off = ek_le64(sh + 24), size = ek_le64(sh + 32);
    if (off + size > img->size) return EK_ERR_FORMAT;
    for (uint64_t i = 0; i + 16 <= size; i += 16) {
        uint64_t addr = ek_le64(img->data + off + i), kind = ek_le64(img->data + off + i + 8);
        if (addr < img->seg_vaddr || addr >= img->seg_vaddr + img->seg_filesz || (addr & 3) ||
            kind == 0 || kind > SIM_DEC_MAX)
            return EK_ERR_FORMAT;
        img->insn[(addr - img->seg_vaddr) / 4].dec = (uint8_t)kind;
    }
    return 0;
}

/* next_stop / stop tables of the decoded slots */
static int build_stops(sim_image *img)
{
    uint32_t next = img->ninsn;
    img->next_stop[img->ninsn] = img->ninsn;
    for (uint32_t i = img->ninsn; i-- > 0;) {
        if (img->insn[i].cls != SIM_I_OTHER || img->insn[i].dec) next = i;
        img->next_stop[i] = next;
    }
    img->stop = calloc(img->ninsn + 1, sizeof(*img->stop));
    if (!img->stop) return EK_ERR_NOMEM;
    for (uint32_t i = 0; i <= img->ninsn; i++) {
        img->stop[i].idx = img->next_stop[i];
        if (img->next_stop[i] < img->ninsn) img->stop[i].insn = img->insn[img->next_stop[i]];
    }
    return 0;
}

int sim_image_load(sim_image *img, const sim_blob *blob)
{
    memset(img, 0, sizeof(*img));
    img->blob = blob;
    img->data = blob->start;
    img->size = (size_t)(blob->end - blob->start);
    if (img->size < 64 || memcmp(img->data, "\177ELF\2\1", 6) || ek_le16(img->data + 18) != 183)
        return EK_ERR_FORMAT;
    unsigned type = ek_le16(img->data + 16);
    img->is_shared = type == 3;
    img->is_kernel = !strcmp(blob->path, "[kernel.kallsyms]");
    img->hidden = blob->optional;
    uint64_t phoff = ek_le64(img->data + 32);
    unsigned phentsize = ek_le16(img->data + 54), phnum = ek_le16(img->data + 56);
    for (unsigned i = 0; i < phnum; i++) {
        uint64_t o = phoff + (uint64_t)i * phentsize;
        if (phentsize < 56 || o + 56 > img->size) return EK_ERR_FORMAT;
        const uint8_t *ph = img->data + o;
        if (ek_le32(ph) == 1 /* PT_LOAD */ && (ek_le32(ph + 4) & 1) /* PF_X */ &&
            !img->seg_filesz) {
            img->seg_off = ek_le64(ph + 8);
            img->seg_vaddr = ek_le64(ph + 16);
            img->seg_filesz = ek_le64(ph + 32);
        }
    }
    if (!img->seg_filesz || img->seg_off + img->seg_filesz > img->size) return EK_ERR_FORMAT;
    img->ninsn = (uint32_t)(img->seg_filesz / 4);
    img->insn = calloc(img->ninsn + 1, sizeof(sim_insn));
    img->next_stop = calloc(img->ninsn + 1, sizeof(uint32_t));
    if (!img->insn || !img->next_stop) return EK_ERR_NOMEM;
    for (uint32_t i = 0; i < img->ninsn; i++)
        sim_a64_decode(ek_le32(img->data + img->seg_off + 4ull * i), &img->insn[i]);
    unsigned shnum = ek_le16(img->data + 60), shstrndx = ek_le16(img->data + 62);
    const uint8_t *shstr = sect_hdr(img, shstrndx);
    if (!shstr) return EK_ERR_FORMAT;
    uint64_t shstroff = ek_le64(shstr + 24), shstrsize = ek_le64(shstr + 32);
    int rc = 0;
    for (unsigned i = 0; i < shnum && !rc; i++) {
        const uint8_t *sh = sect_hdr(img, i);
        if (!sh) return EK_ERR_FORMAT;
        uint32_t nm = ek_le32(sh), st = ek_le32(sh + 4);
        const char *name = nm < shstrsize && shstroff + shstrsize <= img->size
                               ? (const char *)img->data + shstroff + nm
                               : "";
        if (st == 2 /* SHT_SYMTAB */)
            rc = load_symbols(img, sh);
        else if (st == 7 /* SHT_NOTE */ && !img->build_id_len)
            load_build_id(img, sh);
        else if (!strcmp(name, ".simmeta"))
            rc = load_meta(img, sh);
    }
    if (rc) return rc;
    img->cb = calloc(img->nsyms + 1, sizeof(uint64_t));
    img->api = calloc(img->nsyms + 1, sizeof(uint64_t));
    if (!img->cb || !img->api) return EK_ERR_NOMEM;
    for (size_t i = 0; i < img->nsyms; i++) {
        if (!strncmp(img->syms[i].name, "cb_", 3))
            img->cb[img->ncb++] = img->syms[i].addr;
        else if (!strncmp(img->syms[i].name, "api_", 4) && img->syms[i].global)
            img->api[img->napi++] = img->syms[i].addr;
    }
    return build_stops(img);
}

int sim_image_slice(sim_image *img, const sim_blob *blob, const sim_image *tmpl, const sim_sym *fn)
{
    memset(img, 0, sizeof(*img));
    if (fn->addr < tmpl->seg_vaddr || fn->addr + fn->size > tmpl->seg_vaddr + tmpl->seg_filesz ||
        (fn->addr & 3) || (fn->size & 3) || !fn->size)
        return EK_ERR_FORMAT;
    img->blob = blob;
    img->data = tmpl->data;
    img->size = tmpl->size;
    img->jit = 1;
    img->hidden = 1;
    img->seg_vaddr = fn->addr;
    img->seg_off = tmpl->seg_off + (fn->addr - tmpl->seg_vaddr);
    img->seg_filesz = fn->size;
    img->ninsn = (uint32_t)(fn->size / 4);
    img->insn = calloc(img->ninsn + 1, sizeof(sim_insn));
    img->next_stop = calloc(img->ninsn + 1, sizeof(uint32_t));
    img->syms = calloc(1, sizeof(sim_sym));
    img->cb = calloc(1, sizeof(uint64_t));
    img->api = calloc(1, sizeof(uint64_t));
    if (!img->insn || !img->next_stop || !img->syms || !img->cb || !img->api) return EK_ERR_NOMEM;
    for (uint32_t i = 0; i < img->ninsn; i++) {
        sim_a64_decode(ek_le32(img->data + img->seg_off + 4ull * i), &img->insn[i]);
        /* copied code keeps only what is position independent: no calls or jumps out of it,
         * and it must end in a return */
        int cls = img->insn[i].cls;
        if (cls == SIM_I_BL || cls == SIM_I_BLR || cls == SIM_I_BR || cls == SIM_I_SVC ||
            cls == SIM_I_BAD || cls == SIM_I_ERET)
            return EK_ERR_FORMAT;
        if ((cls == SIM_I_B || cls == SIM_I_BCOND) &&
            ((int64_t)i * 4 + img->insn[i].imm < 0 ||
             (uint64_t)((int64_t)i * 4 + img->insn[i].imm) >= fn->size))
            return EK_ERR_FORMAT;
    }
    img->syms[0] = *fn;
    img->nsyms = 1;
    img->api[0] = fn->addr;
    img->napi = 1;
    return build_stops(img);
}

void sim_image_nocode(sim_image *img, const sim_blob *blob)
{
    memset(img, 0, sizeof(*img));
    img->blob = blob;
    img->no_code = 1;
    img->hidden = 1;
}

void sim_image_free(sim_image *img)
{
    free(img->syms);
    free(img->cb);
    free(img->api);
    free(img->insn);
    free(img->next_stop);
    free(img->stop);
    free(img->seen);
    memset(img, 0, sizeof(*img));
}

const sim_sym *sim_image_symbol_at(const sim_image *img, uint64_t addr)
{
    size_t lo = 0, hi = img->nsyms;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (img->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0) {
        const sim_sym *s = &img->syms[--lo];
        if (addr >= s->addr && addr < s->addr + s->size) return s;
        if (s->addr + 0x100000 < addr) break;
    }
    return NULL;
}

const sim_sym *sim_image_symbol(const sim_image *img, const char *name)
{
    for (size_t i = 0; i < img->nsyms; i++)
        if (!strcmp(img->syms[i].name, name)) return &img->syms[i];
    return NULL;
}

uint32_t sim_image_word(const sim_image *img, uint64_t addr)
{
    if (img->no_code) return 0;
    if (addr < img->seg_vaddr || addr + 4 > img->seg_vaddr + img->seg_filesz) return 0;
    return ek_le32(img->data + img->seg_off + (addr - img->seg_vaddr));
}
