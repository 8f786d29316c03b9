#include "perfw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pw_init(pw *w, int be, int pipe)
{
    memset(w, 0, sizeof *w);
    if (ek_pw_new_mem((be ? EK_PW_BIG_ENDIAN : 0) | (pipe ? EK_PW_PIPE : 0), &w->w)) abort();
    w->feat.w = w->w;
}

void pw_free(pw *w)
{
    if (w->w) {
        uint8_t *b;
        size_t n;
        ek_pw_close_mem(w->w, &b, &n);
        free(b);
    }
    memset(w, 0, sizeof *w);
}

void pwb_u8(pw *w, pw_buf *b, uint8_t v)
{
    (void)w;
    ek_pw_u8(b->w, v);
}
void pwb_u16(pw *w, pw_buf *b, uint16_t v)
{
    (void)w;
    ek_pw_u16(b->w, v);
}
void pwb_u32(pw *w, pw_buf *b, uint32_t v)
{
    (void)w;
    ek_pw_u32(b->w, v);
}
void pwb_u64(pw *w, pw_buf *b, uint64_t v)
{
    (void)w;
    ek_pw_u64(b->w, v);
}
void pwb_bytes(pw_buf *b, const void *p, size_t n)
{
    ek_pw_bytes(b->w, p, n);
}
void pwb_hstring(pw *w, pw_buf *b, const char *s)
{
    (void)w;
    ek_pw_hstring(b->w, s);
}

void pw_begin(pw *w, uint32_t type, uint16_t misc)
{
    ek_pw_begin(w->w, type, misc);
}
void pw_u8(pw *w, uint8_t v)
{
    ek_pw_u8(w->w, v);
}
void pw_u16(pw *w, uint16_t v)
{
    ek_pw_u16(w->w, v);
}
void pw_u32(pw *w, uint32_t v)
{
    ek_pw_u32(w->w, v);
}
void pw_u64(pw *w, uint64_t v)
{
    ek_pw_u64(w->w, v);
}
void pw_bytes(pw *w, const void *p, size_t n)
{
    ek_pw_bytes(w->w, p, n);
}
void pw_str(pw *w, const char *s)
{
    ek_pw_str(w->w, s, 8);
}

static ek_perf_sample_id sid_of(const pw_sid *s)
{
    ek_perf_sample_id r;
    memset(&r, 0, sizeof r);
    if (s) {
        r.pid = s->pid;
        r.tid = s->tid;
        r.time = s->time;
        r.id = s->id;
        r.stream_id = s->stream_id;
        r.cpu = s->cpu;
    }
    return r;
}

void pw_sid_trailer(pw *w, uint64_t st, const pw_sid *s)
{
    ek_perf_sample_id r = sid_of(s);
    ek_pw_sample_id(w->w, st, &r);
}

void pw_end(pw *w)
{
    ek_pw_end(w->w);
}
void pw_end_nopad(pw *w)
{
    ek_pw_end_nopad(w->w);
}
void pw_end_size(pw *w, uint16_t size)
{
    ek_pw_end_size(w->w, size);
}
size_t pw_pos(const pw *w)
{
    return (size_t)ek_pw_data_pos(w->w);
}

void pw_attr(pw *w, const pw_attr_desc *a, const uint64_t *ids, size_t nids)
{
    ek_perf_attr x;
    memset(&x, 0, sizeof x);
    x.type = a->type;
    x.size = a->size;
    x.config = a->config;
    x.sample_period = a->sample_period;
    x.sample_type = a->sample_type;
    x.read_format = a->read_format;
    x.flags = a->flags;
    x.config1 = a->config1;
    x.config2 = a->config2;
    x.config3 = a->config3;
    x.ids = ids;
    x.nids = nids;
    ek_pw_attr(w->w, &x);
}

pw_buf *pw_feature_begin(pw *w, unsigned bit)
{
    ek_pw_feature_begin(w->w, bit);
    return &w->feat;
}

void pw_feature_end(pw *w, unsigned bit, pw_buf *b)
{
    (void)bit;
    (void)b;
    ek_pw_feature_end(w->w);
}

void pw_feature_string(pw *w, unsigned bit, const char *s)
{
    ek_pw_feature_string(w->w, bit, s);
}

void pw_auxtrace_index(pw *w, int simpleperf_variant)
{
    ek_pw_auxtrace_index(w->w, simpleperf_variant);
}

static void rec(pw *w, ek_perf_record *r, uint32_t type, uint16_t misc, uint64_t st,
                const pw_sid *s)
{
    r->type = type;
    r->misc = misc;
    r->sid = sid_of(s);
    ek_pw_record(w->w, r, st);
}

void pw_mmap2(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid, uint64_t addr,
              uint64_t len, uint64_t pgoff, const char *name)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.mmap.pid = pid;
    r.u.mmap.tid = tid;
    r.u.mmap.addr = addr;
    r.u.mmap.len = len;
    r.u.mmap.pgoff = pgoff;
    r.u.mmap.maj = 8;
    r.u.mmap.min = 1;
    r.u.mmap.ino = 1234;
    r.u.mmap.ino_generation = 5;
    r.u.mmap.prot = 5;
    r.u.mmap.flags = 2;
    r.u.mmap.filename = name;
    rec(w, &r, EK_PERF_RECORD_MMAP2, EK_PERF_MISC_USER, st, s);
}

void pw_comm(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid, const char *comm)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.comm.pid = pid;
    r.u.comm.tid = tid;
    r.u.comm.comm = comm;
    rec(w, &r, EK_PERF_RECORD_COMM, 0, st, s);
}

void pw_aux(pw *w, uint64_t st, const pw_sid *s, uint64_t aux_offset, uint64_t aux_size,
            uint64_t flags)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.aux.aux_offset = aux_offset;
    r.u.aux.aux_size = aux_size;
    r.u.aux.flags = flags;
    rec(w, &r, EK_PERF_RECORD_AUX, 0, st, s);
}

void pw_itrace_start(pw *w, uint64_t st, const pw_sid *s, uint32_t pid, uint32_t tid)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.itrace_start.pid = pid;
    r.u.itrace_start.tid = tid;
    rec(w, &r, EK_PERF_RECORD_ITRACE_START, 0, st, s);
}

void pw_hw_id(pw *w, uint64_t st, const pw_sid *s, uint64_t hw_id)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.hw_id.hw_id = hw_id;
    rec(w, &r, EK_PERF_RECORD_AUX_OUTPUT_HW_ID, 0, st, s);
}

void pw_auxtrace_head(pw *w, uint64_t size, uint64_t offset, uint64_t ref, uint32_t idx,
                      uint32_t tid, int32_t cpu)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.auxtrace.size = size;
    r.u.auxtrace.offset = offset;
    r.u.auxtrace.reference = ref;
    r.u.auxtrace.idx = idx;
    r.u.auxtrace.tid = tid;
    r.u.auxtrace.cpu = cpu;
    rec(w, &r, EK_PERF_RECORD_AUXTRACE, 0, 0, NULL);
}

void pw_auxtrace(pw *w, uint64_t size, uint64_t offset, uint64_t ref, uint32_t idx, uint32_t tid,
                 int32_t cpu, const uint8_t *payload)
{
    pw_auxtrace_head(w, size, offset, ref, idx, tid, cpu);
    if (payload) {
        ek_pw_payload(w->w, payload, size);
        return;
    }
    uint8_t b[256];
    for (uint64_t i = 0; i < size; i += sizeof b) {
        size_t n = size - i < sizeof b ? (size_t)(size - i) : sizeof b;
        for (size_t k = 0; k < n; k++)
            b[k] = (uint8_t)(0xA5 ^ (i + k));
        ek_pw_payload(w->w, b, n);
    }
}

void pw_auxtrace_info(pw *w, uint32_t type, const uint64_t *words, size_t nwords)
{
    ek_pw_auxtrace_info(w->w, type, words, nwords);
}

void pw_time_conv(pw *w, uint64_t shift, uint64_t mult, uint64_t zero, uint64_t cycles,
                  uint64_t mask, int cap_zero, int cap_short, int old_size)
{
    ek_perf_record r;
    memset(&r, 0, sizeof r);
    r.u.time_conv.time_shift = shift;
    r.u.time_conv.time_mult = mult;
    r.u.time_conv.time_zero = zero;
    r.u.time_conv.time_cycles = cycles;
    r.u.time_conv.time_mask = mask;
    r.u.time_conv.cap_user_time_zero = (uint8_t)cap_zero;
    r.u.time_conv.cap_user_time_short = (uint8_t)cap_short;
    r.u.time_conv.have_cycles = !old_size;
    rec(w, &r, EK_PERF_RECORD_TIME_CONV, 0, 0, NULL);
}

void pw_compress_begin(pw *w, int type2, size_t chunk, size_t frame_bytes)
{
    ek_pw_compress_begin(w->w, type2, chunk, frame_bytes);
}

void pw_compress_end(pw *w)
{
    ek_pw_compress_end(w->w);
}

void pw_set_data_size(pw *w, uint64_t size)
{
    ek_pw_set_data_size(w->w, size);
}

uint8_t *pw_finish(pw *w, size_t *len)
{
    uint8_t *b;
    int e = ek_pw_close_mem(w->w, &b, len);
    if (e) {
        fprintf(stderr, "pw_finish: writer error %d\n", e);
        abort();
    }
    w->w = NULL;
    return b;
}

ek_perf_file *pw_open(const uint8_t *buf, size_t len, ek_diag_collector **coll)
{
    *coll = ek_diag_collector_new(16);
    ek_diag d = ek_diag_collector_sink(*coll);
    ek_perf_file *f = NULL;
    if (ek_perf_open_mem(buf, len, "test.data", &d, &f)) return NULL;
    return f;
}

void pw_payload(pw *w, const void *p, size_t n)
{
    ek_pw_payload(w->w, p, n);
}
