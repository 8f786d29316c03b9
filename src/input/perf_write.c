/* perf.data writer (include/etmkit/perf_write.h). Layout: ../shared/docs/perf-data-layout.md
 * and docs/perf-data.md; file mode: 104-byte header, the attrs (perf_file_attr: attr bytes,
 * ids section), their ids, the data section, the feature table (ascending bits), the feature
 * sections. */
#include "etmkit/perf_write.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/vec.h"
#include "etmkit/etmkit.h"

#define REC_MAX 65535u /* header.size is a u16 */

typedef struct pw_gbuf {
    uint8_t *p;
    size_t len, cap;
} pw_gbuf;

typedef struct pw_feat {
    unsigned bit;
    pw_gbuf b;
} pw_feat;

struct ek_pw {
    ek_pw_out out;
    int be, pipe, err;
    int sealed;         /* header placeholder and attrs written */
    uint64_t pos;       /* bytes handed to the output */
    uint64_t data_off;  /* start of the data section (file mode) or stream (pipe) */
    uint64_t data_size; /* 0: the real one */
    /* attributes (file mode), written when the first byte of data is */
    EK_VEC(ek_perf_attr) attrs;
    EK_VEC(uint64_t) ids;
    uint32_t attr_size;
    /* the record being built */
    int in_rec;
    size_t rec_len;
    uint8_t rec[REC_MAX + 8];
    /* features (file mode) */
    EK_VEC(pw_feat) feats;
    pw_feat *cur_feat;
    int in_feat;
    EK_VEC(uint64_t) auxtrace_at; /* file offsets of AUXTRACE records */
    /* COMPRESSED stream */
    ZSTD_CCtx *zc;
    int ztype2;
    size_t zchunk, zframe, zframe_left;
    uint8_t *zout;
    size_t zout_pos;
    /* memory output */
    pw_gbuf mem;
    FILE *file;
    int sys_errno; /* a file writer's first failure: errno then */
};

/* ------------------------------------------------------------------ outputs */

static int gbuf_add(pw_gbuf *b, const void *p, size_t n)
{
    if (n > b->cap - b->len) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n) {
            if (cap > SIZE_MAX / 2) return EK_ERR_NOMEM;
            cap *= 2;
        }
        uint8_t *q = realloc(b->p, cap);
        if (!q) return EK_ERR_NOMEM;
        b->p = q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

static int mem_write(void *ctx, const void *p, size_t n)
{
    return gbuf_add(&((ek_pw *)ctx)->mem, p, n);
}

static int mem_patch(void *ctx, uint64_t off, const void *p, size_t n)
{
    pw_gbuf *b = &((ek_pw *)ctx)->mem;
    if (off > b->len || n > b->len - off) return EK_ERR_RANGE;
    memcpy(b->p + off, p, n);
    return 0;
}

/* a file writer's failure: its errno kept (stdio reports a buffered write's failure once) */
static int file_failed(ek_pw *w)
{
    if (!w->sys_errno) w->sys_errno = errno ? errno : EIO;
    return EK_ERR_IO;
}

static int file_write(void *ctx, const void *p, size_t n)
{
    ek_pw *w = ctx;
    errno = 0;
    return n && fwrite(p, 1, n, w->file) != n ? file_failed(w) : 0;
}

static int file_patch(void *ctx, uint64_t off, const void *p, size_t n)
{
    ek_pw *w = ctx;
    FILE *f = w->file;
    errno = 0;
    if (off > (uint64_t)LONG_MAX) return file_failed(w);
    if (fseek(f, (long)off, SEEK_SET) != 0) return file_failed(w);
    if (fwrite(p, 1, n, f) != n) return file_failed(w);
    return fseek(f, 0, SEEK_END) != 0 ? file_failed(w) : 0;
}

static void out_raw(ek_pw *w, const void *p, size_t n)
{
    if (w->err || !n) return;
    int e = w->out.write(w->out.ctx, p, n);
    if (e) w->err = e;
    w->pos += n;
}

static void put_n(const ek_pw *w, uint8_t *d, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        d[w->be ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

/* ------------------------------------------------------------------ lifetime */

int ek_pw_new(const ek_pw_out *out, unsigned flags, ek_pw **wp)
{
    *wp = NULL;
    if (!out || !out->write || !out->patch) return EK_ERR_ARG;
    ek_pw *w = calloc(1, sizeof(*w));
    if (!w) return EK_ERR_NOMEM;
    w->out = *out;
    w->be = !!(flags & EK_PW_BIG_ENDIAN);
    w->pipe = !!(flags & EK_PW_PIPE);
    w->attr_size = 128;
    *wp = w;
    return 0;
}

int ek_pw_new_mem(unsigned flags, ek_pw **wp)
{
    ek_pw_out o = {NULL, mem_write, mem_patch};
    int e = ek_pw_new(&o, flags, wp);
    if (!e) (*wp)->out.ctx = *wp;
    return e;
}

int ek_pw_new_file(const char *path, unsigned flags, ek_pw **wp)
{
    ek_pw_out o = {NULL, file_write, file_patch};
    int e = ek_pw_new(&o, flags, wp);
    if (e) return e;
    (*wp)->out.ctx = *wp;
    (*wp)->file = fopen(path, "wb");
    if (!(*wp)->file) {
        const int saved = errno;
        free(*wp);
        *wp = NULL;
        errno = saved;
        return EK_ERR_IO;
    }
    return 0;
}

int ek_pw_error(const ek_pw *w)
{
    return w->err;
}

int ek_pw_is_pipe(const ek_pw *w)
{
    return w->pipe;
}

uint64_t ek_pw_offset(const ek_pw *w)
{
    if (w->sealed) return w->pos;
    /* not sealed yet: where the data will start */
    if (w->pipe) return 16;
    return 104 + w->attrs.n * (uint64_t)(w->attr_size + 16) + w->ids.n * 8;
}

uint64_t ek_pw_data_pos(const ek_pw *w)
{
    return w->sealed ? w->pos - w->data_off : 0;
}

/* ------------------------------------------------------------------ attributes */

static uint8_t bitrev8(uint8_t b)
{
    uint8_t r = 0;
    for (int i = 0; i < 8; i++)
        if (b >> i & 1) r |= (uint8_t)(1u << (7 - i));
    return r;
}

/* perf_event_attr bytes (at most 136) */
static void attr_bytes(const ek_pw *w, const ek_perf_attr *a, uint32_t size, uint8_t *t)
{
    memset(t, 0, 136);
    put_n(w, t + 0, a->type, 4);
    put_n(w, t + 4, size, 4);
    put_n(w, t + 8, a->config, 8);
    put_n(w, t + 16, a->sample_period, 8);
    put_n(w, t + 24, a->sample_type, 8);
    put_n(w, t + 32, a->read_format, 8);
    /* the bit-field word: little-endian byte order; a big-endian compiler fills each byte
     * from its top bit */
    for (int i = 0; i < 8; i++) {
        uint8_t byte = (uint8_t)(a->flags >> (8 * i));
        t[40 + i] = w->be ? bitrev8(byte) : byte;
    }
    put_n(w, t + 48, a->wakeup_events, 4);
    put_n(w, t + 52, a->bp_type, 4);
    put_n(w, t + 56, a->config1, 8);
    put_n(w, t + 64, a->config2, 8);
    put_n(w, t + 72, a->branch_sample_type, 8);
    put_n(w, t + 92, (uint32_t)a->clockid, 4);
    put_n(w, t + 104, a->aux_watermark, 4);
    put_n(w, t + 128, a->config3, 8);
}

static void seal(ek_pw *w)
{
    if (w->sealed) return;
    w->sealed = 1;
    uint8_t h[136];
    if (w->pipe) {
        memcpy(h, "PERFILE2", 8);
        if (w->be) /* the magic is a u64: big-endian writers store it byte-reversed */
            for (int i = 0; i < 8; i++)
                h[i] = (uint8_t) "2ELIFREP"[i];
        put_n(w, h + 8, 16, 8);
        out_raw(w, h, 16);
        w->data_off = w->pos;
        return;
    }
    memset(h, 0, sizeof(h));
    for (int k = 0; k < 104; k += 8)
        out_raw(w, h, 8); /* the header, written at the end */
    uint64_t ids_off = 104 + w->attrs.n * (uint64_t)(w->attr_size + 16);
    for (size_t i = 0; i < w->attrs.n; i++) {
        const ek_perf_attr *a = &w->attrs.v[i];
        attr_bytes(w, a, w->attr_size, h);
        out_raw(w, h, w->attr_size);
        uint8_t s[16];
        put_n(w, s, ids_off, 8);
        put_n(w, s + 8, a->nids * 8, 8);
        out_raw(w, s, 16);
        ids_off += a->nids * 8;
    }
    for (size_t i = 0; i < w->ids.n; i++) {
        uint8_t v[8];
        put_n(w, v, w->ids.v[i], 8);
        out_raw(w, v, 8);
    }
    w->data_off = w->pos;
}

int ek_pw_attr(ek_pw *w, const ek_perf_attr *a)
{
    if (w->err) return w->err;
    uint32_t size = a->size ? a->size : 128;
    if (size < 64 || size > 136 || (size & 7)) return w->err = EK_ERR_ARG;
    if (w->pipe) {
        ek_pw_begin(w, EK_PERF_RECORD_HEADER_ATTR, 0);
        uint8_t t[136];
        attr_bytes(w, a, size, t);
        ek_pw_bytes(w, t, size);
        for (size_t i = 0; i < a->nids; i++)
            ek_pw_u64(w, a->ids[i]);
        return ek_pw_end(w);
    }
    if (w->sealed) return w->err = EK_ERR_ARG; /* attrs come before the data */
    ek_perf_attr c = *a;
    c.ids = NULL;
    if (ek_vec_push(&w->attrs, c)) return w->err = EK_ERR_NOMEM;
    for (size_t i = 0; i < a->nids; i++)
        if (ek_vec_push(&w->ids, a->ids[i])) return w->err = EK_ERR_NOMEM;
    w->attr_size = size;
    return 0;
}

/* ------------------------------------------------------------------ values */

static void add(ek_pw *w, const void *p, size_t n)
{
    if (w->err) return;
    if (w->in_rec) {
        if (n > REC_MAX - w->rec_len) {
            w->err = EK_ERR_LIMIT;
            return;
        }
        memcpy(w->rec + w->rec_len, p, n);
        w->rec_len += n;
    } else if (w->in_feat && w->cur_feat) {
        int e = gbuf_add(&w->cur_feat->b, p, n);
        if (e) w->err = e;
    } else {
        w->err = EK_ERR_ARG;
    }
}

static void add_n(ek_pw *w, uint64_t v, int n)
{
    uint8_t t[8];
    put_n(w, t, v, n);
    add(w, t, (size_t)n);
}

void ek_pw_u8(ek_pw *w, uint8_t v)
{
    add(w, &v, 1);
}
void ek_pw_u16(ek_pw *w, uint16_t v)
{
    add_n(w, v, 2);
}
void ek_pw_u32(ek_pw *w, uint32_t v)
{
    add_n(w, v, 4);
}
void ek_pw_u64(ek_pw *w, uint64_t v)
{
    add_n(w, v, 8);
}
void ek_pw_bytes(ek_pw *w, const void *p, size_t n)
{
    add(w, p, n);
}

void ek_pw_zeros(ek_pw *w, size_t n)
{
    static const uint8_t z[64];
    while (n && !w->err) {
        size_t k = n < sizeof(z) ? n : sizeof(z);
        add(w, z, k);
        n -= k;
    }
}

void ek_pw_str(ek_pw *w, const char *s, size_t align)
{
    size_t n = strlen(s) + 1;
    add(w, s, n);
    if (align > 1) ek_pw_zeros(w, (align - n % align) % align);
}

void ek_pw_hstring(ek_pw *w, const char *s)
{
    size_t n = strlen(s) + 1, len = (n + 63) / 64 * 64;
    ek_pw_u32(w, (uint32_t)len);
    add(w, s, n);
    ek_pw_zeros(w, len - n);
}

void ek_pw_sample_id(ek_pw *w, uint64_t st, const ek_perf_sample_id *s)
{
    if (st & EK_PERF_SAMPLE_TID) {
        ek_pw_u32(w, s->pid);
        ek_pw_u32(w, s->tid);
    }
    if (st & EK_PERF_SAMPLE_TIME) ek_pw_u64(w, s->time);
    if (st & EK_PERF_SAMPLE_ID) ek_pw_u64(w, s->id);
    if (st & EK_PERF_SAMPLE_STREAM_ID) ek_pw_u64(w, s->stream_id);
    if (st & EK_PERF_SAMPLE_CPU) {
        ek_pw_u32(w, s->cpu);
        ek_pw_u32(w, 0);
    }
    if (st & EK_PERF_SAMPLE_IDENTIFIER) ek_pw_u64(w, s->id);
}

/* ------------------------------------------------------------------ records */

static void z_emit(ek_pw *w)
{
    size_t m = w->zout_pos;
    if (!m) return;
    uint8_t h[16];
    if (w->ztype2) {
        size_t size = 16 + m, pad = (8 - size % 8) % 8;
        put_n(w, h, 83, 4);
        put_n(w, h + 4, 0, 2);
        put_n(w, h + 6, size + pad, 2);
        put_n(w, h + 8, m, 8);
        out_raw(w, h, 16);
        out_raw(w, w->zout, m);
        static const uint8_t z[8];
        out_raw(w, z, pad);
    } else {
        put_n(w, h, 81, 4);
        put_n(w, h + 4, 0, 2);
        put_n(w, h + 6, 8 + m, 2);
        out_raw(w, h, 8);
        out_raw(w, w->zout, m);
    }
    w->zout_pos = 0;
}

/* feed bytes to zstd; mode ZSTD_e_end closes the frame */
static void z_feed(ek_pw *w, const uint8_t *p, size_t n, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {p, n, 0};
    for (;;) {
        if (w->err) return;
        ZSTD_outBuffer ob = {w->zout, w->zchunk, w->zout_pos};
        size_t r = ZSTD_compressStream2(w->zc, &ob, &in, mode);
        w->zout_pos = ob.pos;
        if (ZSTD_isError(r)) {
            w->err = EK_ERR_NOMEM;
            return;
        }
        if (w->zout_pos == w->zchunk) z_emit(w);
        if (mode == ZSTD_e_end ? r == 0 : in.pos == in.size) return;
    }
}

static void z_add(ek_pw *w, const uint8_t *p, size_t n)
{
    while (n && !w->err) {
        size_t k = n;
        if (w->zframe && k > w->zframe_left) k = w->zframe_left;
        z_feed(w, p, k, ZSTD_e_continue);
        p += k;
        n -= k;
        if (w->zframe) {
            w->zframe_left -= k;
            if (!w->zframe_left) {
                z_feed(w, NULL, 0, ZSTD_e_end);
                w->zframe_left = w->zframe;
            }
        }
    }
}

void ek_pw_begin(ek_pw *w, uint32_t type, uint16_t misc)
{
    if (w->err) return;
    if (w->in_rec || (w->in_feat && !w->pipe)) {
        w->err = EK_ERR_ARG;
        return;
    }
    seal(w);
    if (type == EK_PERF_RECORD_AUXTRACE && !w->zc && !w->pipe &&
        ek_vec_push(&w->auxtrace_at, w->pos))
        w->err = EK_ERR_NOMEM;
    w->in_rec = 1;
    w->rec_len = 0;
    ek_pw_u32(w, type);
    ek_pw_u16(w, misc);
    ek_pw_u16(w, 0);
}

static int end_rec(ek_pw *w, int pad, int have_size, uint16_t size)
{
    if (w->err) return w->err;
    if (!w->in_rec) return w->err = EK_ERR_ARG;
    if (pad) ek_pw_zeros(w, (8 - w->rec_len % 8) % 8);
    if (w->err) return w->err;
    put_n(w, w->rec + 6, have_size ? size : w->rec_len, 2);
    w->in_rec = 0;
    if (w->zc)
        z_add(w, w->rec, w->rec_len);
    else
        out_raw(w, w->rec, w->rec_len);
    return w->err;
}

int ek_pw_end(ek_pw *w)
{
    return end_rec(w, 1, 0, 0);
}
int ek_pw_end_nopad(ek_pw *w)
{
    return end_rec(w, 0, 0, 0);
}
int ek_pw_end_size(ek_pw *w, uint16_t size)
{
    return end_rec(w, 0, 1, size);
}

int ek_pw_payload(ek_pw *w, const void *p, size_t n)
{
    if (w->err) return w->err;
    if (w->in_rec || w->in_feat) return w->err = EK_ERR_ARG;
    seal(w);
    if (w->zc)
        z_add(w, p, n);
    else
        out_raw(w, p, n);
    return w->err;
}

int ek_pw_record(ek_pw *w, const ek_perf_record *r, uint64_t st)
{
    if (w->err) return w->err;
    ek_pw_begin(w, r->type, r->misc);
    switch (r->type) {
    case EK_PERF_RECORD_MMAP:
    case EK_PERF_RECORD_MMAP2:
        ek_pw_u32(w, r->u.mmap.pid);
        ek_pw_u32(w, r->u.mmap.tid);
        ek_pw_u64(w, r->u.mmap.addr);
        ek_pw_u64(w, r->u.mmap.len);
        ek_pw_u64(w, r->u.mmap.pgoff);
        if (r->type == EK_PERF_RECORD_MMAP2) {
            if (r->u.mmap.has_build_id) {
                ek_pw_u8(w, r->u.mmap.build_id_size);
                ek_pw_zeros(w, 3);
                ek_pw_bytes(w, r->u.mmap.build_id, 20);
            } else {
                ek_pw_u32(w, r->u.mmap.maj);
                ek_pw_u32(w, r->u.mmap.min);
                ek_pw_u64(w, r->u.mmap.ino);
                ek_pw_u64(w, r->u.mmap.ino_generation);
            }
            ek_pw_u32(w, r->u.mmap.prot);
            ek_pw_u32(w, r->u.mmap.flags);
        }
        ek_pw_str(w, r->u.mmap.filename ? r->u.mmap.filename : "", 8);
        break;
    case EK_PERF_RECORD_COMM:
        ek_pw_u32(w, r->u.comm.pid);
        ek_pw_u32(w, r->u.comm.tid);
        ek_pw_str(w, r->u.comm.comm ? r->u.comm.comm : "", 8);
        break;
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
        ek_pw_u32(w, r->u.fork.pid);
        ek_pw_u32(w, r->u.fork.ppid);
        ek_pw_u32(w, r->u.fork.tid);
        ek_pw_u32(w, r->u.fork.ptid);
        ek_pw_u64(w, r->u.fork.time);
        break;
    case EK_PERF_RECORD_AUX:
        ek_pw_u64(w, r->u.aux.aux_offset);
        ek_pw_u64(w, r->u.aux.aux_size);
        ek_pw_u64(w, r->u.aux.flags);
        break;
    case EK_PERF_RECORD_ITRACE_START:
        ek_pw_u32(w, r->u.itrace_start.pid);
        ek_pw_u32(w, r->u.itrace_start.tid);
        break;
    case EK_PERF_RECORD_SWITCH: break;
    case EK_PERF_RECORD_SWITCH_CPU_WIDE:
        ek_pw_u32(w, r->u.sw.next_prev_pid);
        ek_pw_u32(w, r->u.sw.next_prev_tid);
        break;
    case EK_PERF_RECORD_AUX_OUTPUT_HW_ID: ek_pw_u64(w, r->u.hw_id.hw_id); break;
    case EK_PERF_RECORD_LOST:
        ek_pw_u64(w, r->u.lost.id);
        ek_pw_u64(w, r->u.lost.lost);
        break;
    case EK_PERF_RECORD_LOST_SAMPLES: ek_pw_u64(w, r->u.lost_samples.lost); break;
    case EK_PERF_RECORD_TIME_CONV: {
        const ek_perf_time_conv *t = &r->u.time_conv;
        ek_pw_u64(w, t->time_shift);
        ek_pw_u64(w, t->time_mult);
        ek_pw_u64(w, t->time_zero);
        if (t->have_cycles) {
            ek_pw_u64(w, t->time_cycles);
            ek_pw_u64(w, t->time_mask);
            ek_pw_u8(w, t->cap_user_time_zero);
            ek_pw_u8(w, t->cap_user_time_short);
            ek_pw_zeros(w, 6);
        }
        break;
    }
    case EK_PERF_RECORD_AUXTRACE:
        ek_pw_u64(w, r->u.auxtrace.size);
        ek_pw_u64(w, r->u.auxtrace.offset);
        ek_pw_u64(w, r->u.auxtrace.reference);
        ek_pw_u32(w, r->u.auxtrace.idx);
        ek_pw_u32(w, r->u.auxtrace.tid);
        ek_pw_u32(w, (uint32_t)r->u.auxtrace.cpu);
        ek_pw_u32(w, 0);
        break;
    case EK_PERF_RECORD_FINISHED_ROUND:
    case EK_PERF_RECORD_FINISHED_INIT: break;
    default: w->in_rec = 0; return w->err = EK_ERR_ARG;
    }
    if (r->type < EK_PERF_RECORD_HEADER_ATTR) ek_pw_sample_id(w, st, &r->sid);
    return ek_pw_end(w);
}

int ek_pw_auxtrace_info(ek_pw *w, uint32_t type, const uint64_t *words, size_t nwords)
{
    ek_pw_begin(w, EK_PERF_RECORD_AUXTRACE_INFO, 0);
    ek_pw_u32(w, type);
    ek_pw_u32(w, 0);
    for (size_t i = 0; i < nwords; i++)
        ek_pw_u64(w, words[i]);
    return ek_pw_end(w);
}

int ek_pw_sample_rec(ek_pw *w, uint16_t misc, uint64_t st, const ek_pw_sample *s)
{
    const uint64_t known = EK_PERF_SAMPLE_IDENTIFIER | EK_PERF_SAMPLE_IP | EK_PERF_SAMPLE_TID |
                           EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_ADDR | EK_PERF_SAMPLE_ID |
                           EK_PERF_SAMPLE_STREAM_ID | EK_PERF_SAMPLE_CPU | EK_PERF_SAMPLE_PERIOD |
                           EK_PERF_SAMPLE_BRANCH_STACK;
    if (w->err) return w->err;
    if (st & ~known) return w->err = EK_ERR_UNSUPPORTED;
    ek_pw_begin(w, EK_PERF_RECORD_SAMPLE, misc);
    if (st & EK_PERF_SAMPLE_IDENTIFIER) ek_pw_u64(w, s->id);
    if (st & EK_PERF_SAMPLE_IP) ek_pw_u64(w, s->ip);
    if (st & EK_PERF_SAMPLE_TID) {
        ek_pw_u32(w, s->pid);
        ek_pw_u32(w, s->tid);
    }
    if (st & EK_PERF_SAMPLE_TIME) ek_pw_u64(w, s->time);
    if (st & EK_PERF_SAMPLE_ADDR) ek_pw_u64(w, s->addr);
    if (st & EK_PERF_SAMPLE_ID) ek_pw_u64(w, s->id);
    if (st & EK_PERF_SAMPLE_STREAM_ID) ek_pw_u64(w, s->stream_id);
    if (st & EK_PERF_SAMPLE_CPU) {
        ek_pw_u32(w, s->cpu);
        ek_pw_u32(w, 0);
    }
    if (st & EK_PERF_SAMPLE_PERIOD) ek_pw_u64(w, s->period);
    if (st & EK_PERF_SAMPLE_BRANCH_STACK) {
        ek_pw_u64(w, s->nbranches);
        if (s->has_hw_idx) ek_pw_u64(w, s->hw_idx);
        for (size_t i = 0; i < s->nbranches; i++) {
            ek_pw_u64(w, s->branches[i].from);
            ek_pw_u64(w, s->branches[i].to);
            ek_pw_u64(w, s->branches[i].flags);
        }
    }
    return ek_pw_end(w);
}

/* ------------------------------------------------------------------ COMPRESSED */

int ek_pw_compress_begin(ek_pw *w, int type2, size_t chunk, size_t frame_bytes)
{
    if (w->err) return w->err;
    if (w->zc || w->in_rec || !chunk || chunk > REC_MAX - 16) return w->err = EK_ERR_ARG;
    seal(w);
    w->zc = ZSTD_createCCtx();
    w->zout = malloc(chunk);
    if (!w->zc || !w->zout) {
        ZSTD_freeCCtx(w->zc);
        w->zc = NULL;
        free(w->zout);
        w->zout = NULL;
        return w->err = EK_ERR_NOMEM;
    }
    ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, 3);
    w->ztype2 = type2;
    w->zchunk = chunk;
    w->zframe = w->zframe_left = frame_bytes;
    w->zout_pos = 0;
    return 0;
}

int ek_pw_compress_end(ek_pw *w)
{
    if (!w->zc) return w->err ? w->err : (w->err = EK_ERR_ARG);
    if (!w->zframe || w->zframe_left != w->zframe) z_feed(w, NULL, 0, ZSTD_e_end);
    z_emit(w);
    ZSTD_freeCCtx(w->zc);
    w->zc = NULL;
    free(w->zout);
    w->zout = NULL;
    return w->err;
}

/* ------------------------------------------------------------------ features */

void ek_pw_feature_begin(ek_pw *w, unsigned bit)
{
    if (w->err) return;
    if (w->in_rec || w->in_feat) {
        w->err = EK_ERR_ARG;
        return;
    }
    if (w->pipe) {
        ek_pw_begin(w, EK_PERF_RECORD_HEADER_FEATURE, 0);
        ek_pw_u64(w, bit);
        w->in_feat = 1;
        return;
    }
    pw_feat f = {bit, {NULL, 0, 0}};
    if (ek_vec_push(&w->feats, f)) {
        w->err = EK_ERR_NOMEM;
        return;
    }
    w->cur_feat = &w->feats.v[w->feats.n - 1];
    w->in_feat = 1;
}

int ek_pw_feature_end(ek_pw *w)
{
    if (w->err) return w->err;
    if (!w->in_feat) return w->err = EK_ERR_ARG;
    w->in_feat = 0;
    w->cur_feat = NULL;
    return w->pipe ? ek_pw_end(w) : 0;
}

int ek_pw_feature_string(ek_pw *w, unsigned bit, const char *s)
{
    ek_pw_feature_begin(w, bit);
    ek_pw_hstring(w, s);
    return ek_pw_feature_end(w);
}

void ek_pw_build_id(ek_pw *w, int32_t pid, uint16_t misc, const uint8_t *id, uint8_t size,
                    const char *filename)
{
    size_t n = strlen(filename) + 1, fl = (n + 63) / 64 * 64;
    uint8_t b[20];
    memset(b, 0, sizeof(b));
    memcpy(b, id, size > 20 ? 20 : size);
    ek_pw_u32(w, 0);                             /* header.type: unused */
    ek_pw_u16(w, (uint16_t)(misc | (1u << 15))); /* PERF_RECORD_MISC_BUILD_ID_SIZE */
    ek_pw_u16(w, (uint16_t)(36 + fl));
    ek_pw_u32(w, (uint32_t)pid);
    ek_pw_bytes(w, b, 20);
    ek_pw_u8(w, size);
    ek_pw_zeros(w, 3);
    ek_pw_str(w, filename, 64);
}

int ek_pw_auxtrace_index(ek_pw *w, int simpleperf_layout)
{
    ek_pw_feature_begin(w, EK_PERF_FEAT_AUXTRACE);
    if (!simpleperf_layout) ek_pw_u64(w, w->auxtrace_at.n);
    for (size_t i = 0; i < w->auxtrace_at.n; i++) {
        ek_pw_u64(w, w->auxtrace_at.v[i]);
        ek_pw_u64(w, 48);
    }
    return ek_pw_feature_end(w);
}

void ek_pw_set_data_size(ek_pw *w, uint64_t size)
{
    w->data_size = size;
}

/* ------------------------------------------------------------------ close */

static void pw_free(ek_pw *w)
{
    ek_vec_free(&w->attrs);
    ek_vec_free(&w->ids);
    for (size_t i = 0; i < w->feats.n; i++)
        free(w->feats.v[i].b.p);
    ek_vec_free(&w->feats);
    ek_vec_free(&w->auxtrace_at);
    ZSTD_freeCCtx(w->zc);
    free(w->zout);
    free(w->mem.p);
    free(w);
}

static int finish(ek_pw *w)
{
    if (!w->err && (w->in_rec || w->in_feat || w->zc)) w->err = EK_ERR_ARG;
    if (w->err) return w->err;
    seal(w);
    if (w->pipe) return w->err;
    uint64_t data_end = w->pos;
    size_t nf = w->feats.n;
    /* sections in ascending bit order (stable) */
    size_t *order = malloc((nf ? nf : 1) * sizeof(*order));
    if (!order) return w->err = EK_ERR_NOMEM;
    for (size_t i = 0; i < nf; i++) {
        size_t j = i;
        while (j > 0 && w->feats.v[order[j - 1]].bit > w->feats.v[i].bit) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = i;
    }
    uint64_t sec = data_end + nf * 16;
    uint64_t bits[4] = {0, 0, 0, 0};
    for (size_t k = 0; k < nf; k++) {
        const pw_feat *f = &w->feats.v[order[k]];
        uint8_t t[16];
        put_n(w, t, sec, 8);
        put_n(w, t + 8, f->b.len, 8);
        out_raw(w, t, 16);
        sec += f->b.len;
        if (f->bit < 256) bits[f->bit / 64] |= 1ull << (f->bit % 64);
    }
    for (size_t k = 0; k < nf; k++)
        out_raw(w, w->feats.v[order[k]].b.p, w->feats.v[order[k]].b.len);
    free(order);
    uint8_t h[104];
    memcpy(h, "PERFILE2", 8);
    if (w->be)
        for (int i = 0; i < 8; i++)
            h[i] = (uint8_t) "2ELIFREP"[i];
    put_n(w, h + 8, 104, 8);
    put_n(w, h + 16, w->attr_size + 16, 8);
    put_n(w, h + 24, 104, 8);
    put_n(w, h + 32, w->attrs.n * (uint64_t)(w->attr_size + 16), 8);
    put_n(w, h + 40, w->data_off, 8);
    put_n(w, h + 48, w->data_size ? w->data_size : data_end - w->data_off, 8);
    put_n(w, h + 56, 0, 8);
    put_n(w, h + 64, 0, 8);
    for (int i = 0; i < 4; i++)
        put_n(w, h + 72 + 8 * i, bits[i], 8);
    if (!w->err) {
        int e = w->out.patch(w->out.ctx, 0, h, sizeof(h));
        if (e) w->err = e;
    }
    return w->err;
}

int ek_pw_close(ek_pw *w)
{
    if (!w) return 0;
    int e = finish(w);
    errno = 0;
    if (w->file && fclose(w->file) != 0 && !e) e = file_failed(w);
    const int saved = w->sys_errno;
    pw_free(w);
    if (e == EK_ERR_IO && saved) errno = saved;
    return e;
}

int ek_pw_close_mem(ek_pw *w, uint8_t **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    if (!w) return EK_ERR_ARG;
    int e = finish(w);
    if (!e) {
        *buf = w->mem.p;
        *len = w->mem.len;
        w->mem.p = NULL;
    }
    pw_free(w);
    return e;
}
