#include "perfw.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

static void grow(pw_buf *b, size_t n)
{
    if (b->len + n <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n)
        cap *= 2;
    b->p = realloc(b->p, cap);
    if (!b->p) abort();
    b->cap = cap;
}

void pwb_bytes(pw_buf *b, const void *p, size_t n)
{
    grow(b, n);
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put_n(pw *w, pw_buf *b, uint64_t v, int n)
{
    uint8_t t[8];
    for (int i = 0; i < n; i++)
        t[w->be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
    pwb_bytes(b, t, (size_t)n);
}

void pwb_u8(pw *w, pw_buf *b, uint8_t v)
{
    (void)w;
    pwb_bytes(b, &v, 1);
}
void pwb_u16(pw *w, pw_buf *b, uint16_t v)
{
    put_n(w, b, v, 2);
}
void pwb_u32(pw *w, pw_buf *b, uint32_t v)
{
    put_n(w, b, v, 4);
}
void pwb_u64(pw *w, pw_buf *b, uint64_t v)
{
    put_n(w, b, v, 8);
}

void pwb_hstring(pw *w, pw_buf *b, const char *s)
{
    size_t n = strlen(s) + 1, len = (n + 63) / 64 * 64;
    pwb_u32(w, b, (uint32_t)len);
    pwb_bytes(b, s, n);
    static const uint8_t zero[64];
    pwb_bytes(b, zero, len - n);
}

void pw_init(pw *w, int be, int pipe)
{
    memset(w, 0, sizeof *w);
    w->be = be;
    w->pipe = pipe;
    w->cur = &w->data;
    w->attr_file_size = 128 + 16;
}

void pw_free(pw *w)
{
    free(w->data.p);
    free(w->zstage.p);
    for (int i = 0; i < w->attr_count; i++) {
        free(w->attrs[i].p);
        free(w->ids[i]);
    }
    for (int i = 0; i < w->nfeat; i++)
        free(w->feat[i].p);
    memset(w, 0, sizeof *w);
}

void pw_begin(pw *w, uint32_t type, uint16_t misc)
{
    w->rec_start = w->cur->len;
    pwb_u32(w, w->cur, type);
    pwb_u16(w, w->cur, misc);
    pwb_u16(w, w->cur, 0);
}
void pw_u8(pw *w, uint8_t v)
{
    pwb_u8(w, w->cur, v);
}
void pw_u16(pw *w, uint16_t v)
{
    pwb_u16(w, w->cur, v);
}
void pw_u32(pw *w, uint32_t v)
{
    pwb_u32(w, w->cur, v);
}
void pw_u64(pw *w, uint64_t v)
{
    pwb_u64(w, w->cur, v);
}
void pw_bytes(pw *w, const void *p, size_t n)
{
    pwb_bytes(w->cur, p, n);
}
void pw_str(pw *w, const char *s)
{
    size_t n = strlen(s) + 1, len = (n + 7) / 8 * 8;
    pwb_bytes(w->cur, s, n);
    static const uint8_t zero[8];
    pwb_bytes(w->cur, zero, len - n);
}

void pw_sid_trailer(pw *w, uint64_t st, const pw_sid *s)
{
    if (st & (1u << 1)) {
        pw_u32(w, s->pid);
        pw_u32(w, s->tid);
    }
    if (st & (1u << 2)) pw_u64(w, s->time);
    if (st & (1u << 6)) pw_u64(w, s->id);
    if (st & (1u << 9)) pw_u64(w, s->stream_id);
    if (st & (1u << 7)) {
        pw_u32(w, s->cpu);
        pw_u32(w, 0);
    }
    if (st & (1u << 16)) pw_u64(w, s->id);
}

static void patch_size(pw *w, uint16_t size)
{
    uint8_t *p = w->cur->p + w->rec_start + 6;
    p[w->be ? 1 : 0] = (uint8_t)size;
    p[w->be ? 0 : 1] = (uint8_t)(size >> 8);
}

void pw_end_nopad(pw *w)
{
    patch_size(w, (uint16_t)(w->cur->len - w->rec_start));
}

void pw_end(pw *w)
{
    static const uint8_t zero[8];
    size_t n = w->cur->len - w->rec_start;
    pwb_bytes(w->cur, zero, (8 - n % 8) % 8);
    pw_end_nopad(w);
}

void pw_end_size(pw *w, uint16_t size)
{
    patch_size(w, size);
}

size_t pw_pos(const pw *w)
{
    return w->cur->len;
}

static uint8_t bitrev8(uint8_t b)
{
    uint8_t r = 0;
    for (int i = 0; i < 8; i++)
        if (b >> i & 1) r |= (uint8_t)(1u << (7 - i));
    return r;
}

void pw_attr_bytes(pw *w, pw_buf *b, const pw_attr_desc *a)
{
    uint32_t size = a->size ? a->size : 128;
    uint8_t t[160];
    memset(t, 0, sizeof t);
    pw_buf tmp = {0};
    pwb_u32(w, &tmp, a->type);
    pwb_u32(w, &tmp, size);
    pwb_u64(w, &tmp, a->config);
    pwb_u64(w, &tmp, a->sample_period);
    pwb_u64(w, &tmp, a->sample_type);
    pwb_u64(w, &tmp, a->read_format);
    /* bit-field word: little-endian order; a big-endian writer fills bits from the top of
     * each byte */
    for (int i = 0; i < 8; i++) {
        uint8_t byte = (uint8_t)(a->flags >> (8 * i));
        pwb_u8(w, &tmp, w->be ? bitrev8(byte) : byte);
    }
    pwb_u32(w, &tmp, 0); /* wakeup_events */
    pwb_u32(w, &tmp, 0); /* bp_type */
    pwb_u64(w, &tmp, a->config1);
    pwb_u64(w, &tmp, a->config2);
    while (tmp.len < 128)
        pwb_u8(w, &tmp, 0);
    pwb_u64(w, &tmp, a->config3);
    memcpy(t, tmp.p, tmp.len < sizeof t ? tmp.len : sizeof t);
    free(tmp.p);
    pwb_bytes(b, t, size);
}

void pw_attr(pw *w, const pw_attr_desc *a, const uint64_t *ids, size_t nids)
{
    if (w->pipe) {
        pw_begin(w, 64, 0);
        pw_attr_bytes(w, w->cur, a);
        for (size_t i = 0; i < nids; i++)
            pw_u64(w, ids[i]);
        pw_end(w);
        return;
    }
    int i = w->attr_count++;
    pw_attr_bytes(w, &w->attrs[i], a);
    w->attr_file_size = (a->size ? a->size : 128) + 16;
    w->ids[i] = malloc(nids * 8 + 8);
    memcpy(w->ids[i], ids, nids * 8);
    w->nids[i] = nids;
}

pw_buf *pw_feature_begin(pw *w, unsigned bit)
{
    int i = w->nfeat++;
    w->feat_bit[i] = bit;
    memset(&w->feat[i], 0, sizeof w->feat[i]);
    return &w->feat[i];
}

void pw_feature_end(pw *w, unsigned bit, pw_buf *b)
{
    if (!w->pipe) return;
    /* pipe mode: a HEADER_FEATURE record, then drop the collected section */
    pw_begin(w, 80, 0);
    pw_u64(w, bit);
    pw_bytes(w, b->p, b->len);
    pw_end(w);
    free(b->p);
    w->nfeat--;
}

void pw_feature_string(pw *w, unsigned bit, const char *s)
{
    pw_buf *b = pw_feature_begin(w, bit);
    pwb_hstring(w, b, s);
    pw_feature_end(w, bit, b);
}

void pw_auxtrace_index(pw *w, int simpleperf_variant)
{
    pw_buf *b = pw_feature_begin(w, 18);
    if (!simpleperf_variant) pwb_u64(w, b, w->nauxtrace);
    for (size_t i = 0; i < w->nauxtrace; i++) {
        pwb_u64(w, b, w->auxtrace_at[i]); /* data-relative: fixed up in pw_finish */
        pwb_u64(w, b, 48);
    }
    w->feat_bit[w->nfeat - 1] = 18 | (simpleperf_variant ? 0x1000u : 0x2000u);
}

void pw_mmap2(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid, uint64_t addr,
              uint64_t len, uint64_t pgoff, const char *name)
{
    pw_begin(w, 10, 2);
    pw_u32(w, pid);
    pw_u32(w, tid);
    pw_u64(w, addr);
    pw_u64(w, len);
    pw_u64(w, pgoff);
    pw_u32(w, 8);
    pw_u32(w, 1);
    pw_u64(w, 1234);
    pw_u64(w, 5);
    pw_u32(w, 5);
    pw_u32(w, 2);
    pw_str(w, name);
    pw_sid_trailer(w, st, s);
    pw_end(w);
}

void pw_comm(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid, const char *comm)
{
    pw_begin(w, 3, 0);
    pw_u32(w, pid);
    pw_u32(w, tid);
    pw_str(w, comm);
    pw_sid_trailer(w, st, s);
    pw_end(w);
}

void pw_aux(pw *w, uint64_t st, const pw_sid *s, uint64_t aux_offset, uint64_t aux_size,
            uint64_t flags)
{
    pw_begin(w, 11, 0);
    pw_u64(w, aux_offset);
    pw_u64(w, aux_size);
    pw_u64(w, flags);
    pw_sid_trailer(w, st, s);
    pw_end(w);
}

void pw_itrace_start(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid)
{
    pw_begin(w, 12, 0);
    pw_u32(w, pid);
    pw_u32(w, tid);
    pw_sid_trailer(w, st, s);
    pw_end(w);
}

void pw_hw_id(pw *w, uint64_t st, const pw_sid *s, uint64_t hw_id)
{
    pw_begin(w, 21, 0);
    pw_u64(w, hw_id);
    pw_sid_trailer(w, st, s);
    pw_end(w);
}

void pw_auxtrace_head(pw *w, uint64_t size, uint64_t offset, uint64_t ref, uint32_t idx,
                      uint32_t tid, int32_t cpu)
{
    if (w->cur == &w->data && w->nauxtrace < PW_MAX_AUXTRACE)
        w->auxtrace_at[w->nauxtrace++] = w->data.len;
    pw_begin(w, 71, 0);
    pw_u64(w, size);
    pw_u64(w, offset);
    pw_u64(w, ref);
    pw_u32(w, idx);
    pw_u32(w, tid);
    pw_u32(w, (uint32_t)cpu);
    pw_u32(w, 0);
    pw_end(w);
}

void pw_auxtrace(pw *w, uint64_t size, uint64_t offset, uint64_t ref, uint32_t idx, uint32_t tid,
                 int32_t cpu, const uint8_t *payload)
{
    pw_auxtrace_head(w, size, offset, ref, idx, tid, cpu);
    if (payload) {
        pwb_bytes(w->cur, payload, size);
    } else {
        for (uint64_t i = 0; i < size; i++)
            pwb_u8(w, w->cur, (uint8_t)(0xA5 ^ i));
    }
}

void pw_auxtrace_info(pw *w, uint32_t type, const uint64_t *words, size_t nwords)
{
    pw_begin(w, 70, 0);
    pw_u32(w, type);
    pw_u32(w, 0);
    for (size_t i = 0; i < nwords; i++)
        pw_u64(w, words[i]);
    pw_end(w);
}

void pw_time_conv(pw *w, uint64_t shift, uint64_t mult, uint64_t zero, uint64_t cycles,
                  uint64_t mask, int cap_zero, int cap_short, int old_size)
{
    pw_begin(w, 79, 0);
    pw_u64(w, shift);
    pw_u64(w, mult);
    pw_u64(w, zero);
    if (!old_size) {
        pw_u64(w, cycles);
        pw_u64(w, mask);
        pw_u8(w, (uint8_t)cap_zero);
        pw_u8(w, (uint8_t)cap_short);
        for (int i = 0; i < 6; i++)
            pw_u8(w, 0);
    }
    pw_end(w);
}

void pw_compress_begin(pw *w)
{
    w->zstage.len = 0;
    w->cur = &w->zstage;
}

void pw_compress_end(pw *w, int type2, size_t chunk, int frames)
{
    w->cur = &w->data;
    pw_buf z = {0};
    size_t n = w->zstage.len;
    if (frames < 1) frames = 1;
    for (int f = 0; f < frames; f++) {
        size_t a = n * (size_t)f / (size_t)frames, b = n * (size_t)(f + 1) / (size_t)frames;
        size_t bound = ZSTD_compressBound(b - a);
        grow(&z, bound);
        size_t r = ZSTD_compress(z.p + z.len, bound, w->zstage.p + a, b - a, 3);
        if (ZSTD_isError(r)) abort();
        z.len += r;
    }
    for (size_t off = 0; off < z.len; off += chunk) {
        size_t m = z.len - off < chunk ? z.len - off : chunk;
        if (type2) {
            pw_begin(w, 83, 0);
            pw_u64(w, m);
            pw_bytes(w, z.p + off, m);
            pw_end(w);
        } else {
            pw_begin(w, 81, 0);
            pw_bytes(w, z.p + off, m);
            pw_end_nopad(w);
        }
    }
    free(z.p);
    w->zstage.len = 0;
}

uint8_t *pw_finish(pw *w, size_t *len)
{
    pw_buf out = {0};
    if (w->pipe) {
        pwb_bytes(&out, "PERFILE2", 8);
        if (w->be) { /* the magic is a u64: big-endian writers store it byte-reversed */
            for (int i = 0; i < 4; i++) {
                uint8_t t = out.p[i];
                out.p[i] = out.p[7 - i];
                out.p[7 - i] = t;
            }
        }
        pwb_u64(w, &out, 16);
        pwb_bytes(&out, w->data.p, w->data.len);
        *len = out.len;
        return out.p;
    }
    size_t na = (size_t)w->attr_count;
    size_t attrs_off = 104, attrs_size = na * w->attr_file_size;
    size_t ids_off = attrs_off + attrs_size, ids_total = 0;
    for (size_t i = 0; i < na; i++)
        ids_total += w->nids[i] * 8;
    size_t data_off = ids_off + ids_total;
    size_t data_size = w->data.len;
    size_t table_off = data_off + data_size;
    int nf = w->nfeat;
    /* header */
    pwb_bytes(&out, "PERFILE2", 8);
    if (w->be)
        for (int i = 0; i < 4; i++) {
            uint8_t t = out.p[i];
            out.p[i] = out.p[7 - i];
            out.p[7 - i] = t;
        }
    pwb_u64(w, &out, 104);
    pwb_u64(w, &out, w->attr_file_size);
    pwb_u64(w, &out, attrs_off);
    pwb_u64(w, &out, attrs_size);
    pwb_u64(w, &out, data_off);
    pwb_u64(w, &out, w->data_size_override ? w->data_size_override : data_size);
    pwb_u64(w, &out, 0);
    pwb_u64(w, &out, 0);
    uint64_t bits[4] = {0, 0, 0, 0};
    for (int i = 0; i < nf; i++) {
        unsigned b = w->feat_bit[i] & 0xfff;
        bits[b / 64] |= 1ull << (b % 64);
    }
    for (int i = 0; i < 4; i++)
        pwb_u64(w, &out, bits[i]);
    /* attrs */
    size_t idpos = ids_off;
    for (size_t i = 0; i < na; i++) {
        pwb_bytes(&out, w->attrs[i].p, w->attrs[i].len);
        pwb_u64(w, &out, idpos);
        pwb_u64(w, &out, w->nids[i] * 8);
        idpos += w->nids[i] * 8;
    }
    for (size_t i = 0; i < na; i++)
        for (size_t k = 0; k < w->nids[i]; k++)
            pwb_u64(w, &out, w->ids[i][k]);
    pwb_bytes(&out, w->data.p, w->data.len);
    /* feature table in ascending bit order, then the sections */
    int order[PW_MAX_FEATS];
    for (int i = 0; i < nf; i++)
        order[i] = i;
    for (int i = 1; i < nf; i++)
        for (int j = i;
             j > 0 && (w->feat_bit[order[j - 1]] & 0xfff) > (w->feat_bit[order[j]] & 0xfff); j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t sec = table_off + (size_t)nf * 16;
    for (int k = 0; k < nf; k++) {
        int i = order[k];
        pwb_u64(w, &out, sec);
        pwb_u64(w, &out, w->feat[i].len);
        sec += w->feat[i].len;
    }
    for (int k = 0; k < nf; k++) {
        int i = order[k];
        pw_buf *b = &w->feat[i];
        if ((w->feat_bit[i] & 0xfff) == 18) { /* make index offsets absolute */
            size_t first = (w->feat_bit[i] & 0x2000u) ? 8 : 0;
            for (size_t e = first; e + 16 <= b->len; e += 16) {
                uint64_t v = 0;
                for (int q = 0; q < 8; q++)
                    v |= (uint64_t)b->p[e + (size_t)(w->be ? 7 - q : q)] << (8 * q);
                v += data_off;
                for (int q = 0; q < 8; q++)
                    b->p[e + (size_t)(w->be ? 7 - q : q)] = (uint8_t)(v >> (8 * q));
            }
        }
        pwb_bytes(&out, b->p, b->len);
    }
    *len = out.len;
    return out.p;
}

ek_perf_file *pw_open(const uint8_t *buf, size_t len, ek_diag_collector **coll)
{
    *coll = ek_diag_collector_new(16);
    ek_diag d = ek_diag_collector_sink(*coll);
    ek_perf_file *f = NULL;
    if (ek_perf_open_mem(buf, len, "test.data", &d, &f)) return NULL;
    return f;
}
