/* perf.data writer for the simulator: streams records as the `perf record` model produces
 * them, then writes the features and the final header.
 *
 * Layout (docs: ../shared/docs/perf-data-layout.md): 104-byte header, two attributes (the
 * cs_etm event and the tracking "dummy" event, 128-byte perf_event_attr each, with their sample
 * IDs), the data section, then the feature sections: BUILD_ID, OSRELEASE, VERSION, ARCH,
 * NRCPUS, PMU_MAPPINGS and the AUXTRACE index. Every kernel-style record carries the
 * sample_id_all trailer of its event (IDENTIFIER last, so readers find the attribute). */
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/etmkit.h"
#include "sim/sim.h"

#define ATTR_SIZE 128
#define PMU_TYPE  12u

enum {
    ST_IP = 1 << 0,
    ST_TID = 1 << 1,
    ST_TIME = 1 << 2,
    ST_ID = 1 << 6,
    ST_CPU = 1 << 7,
    ST_PERIOD = 1 << 8,
    ST_IDENTIFIER = 1 << 16,
};

struct sim_writer {
    sim *S;
    sim_session *s;
    FILE *f;
    uint64_t pos;
    uint64_t data_off;
    uint64_t sample_type;
    EK_VEC(uint64_t) index; /* file offsets of AUXTRACE records */
    int err;
    uint8_t buf[4096]; /* largest record: AUXTRACE_INFO of 8 ETE CPUs (616 bytes) */
};

static void wr(sim_writer *w, const void *p, size_t n)
{
    if (w->err) return;
    if (n && fwrite(p, 1, n, w->f) != n) w->err = EK_ERR_IO;
    w->pos += n;
}

static void wr_zero(sim_writer *w, size_t n)
{
    static const uint8_t z[64];
    while (n) {
        size_t k = n < sizeof(z) ? n : sizeof(z);
        wr(w, z, k);
        n -= k;
    }
}

uint64_t sim_writer_pos(const sim_writer *w)
{
    return w->pos;
}

/* ------------------------------------------------------------------ attributes */

static void attr_bytes(const sim_writer *w, int dummy, uint8_t *a)
{
    const sim_session *s = w->s;
    memset(a, 0, ATTR_SIZE);
    uint64_t flags = 0;
    flags |= 1ull << 18;                       /* sample_id_all */
    if (!(s->el_mask & 1)) flags |= 1ull << 4; /* exclude_user */
    if (!(s->el_mask & 2)) flags |= 1ull << 5; /* exclude_kernel */
    flags |= 1ull << 6;                        /* exclude_hv */
    if (s->mode != SIM_MODE_SYSTEM)
        flags |= (1ull << 1) | (1ull << 0) | (1ull << 12); /* inherit, disabled, enable_on_exec */
    if (dummy) {
        ek_put_le32(a, 1);     /* PERF_TYPE_SOFTWARE */
        ek_put_le64(a + 8, 9); /* PERF_COUNT_SW_DUMMY */
        flags |= (1ull << 8) | (1ull << 9) | (1ull << 13) | (1ull << 23) | (1ull << 24);
        ek_put_le64(a + 16, 1);
    } else {
        ek_put_le32(a, PMU_TYPE);
        ek_put_le64(a + 8, s->attr_config);
        ek_put_le64(a + 16, 1);
        ek_put_le64(a + 64, 0); /* config2: sink id left to the kernel */
        ek_put_le32(a + 104, 0);
    }
    ek_put_le32(a + 4, ATTR_SIZE);
    ek_put_le64(a + 24, w->sample_type);
    if (s->clock_monotonic) {
        flags |= 1ull << 25;    /* use_clockid */
        ek_put_le32(a + 92, 1); /* clockid: CLOCK_MONOTONIC */
    }
    ek_put_le64(a + 40, flags);
}

/* ------------------------------------------------------------------ records */

static size_t trailer(const sim_writer *w, uint8_t *p, int pid, int tid, uint64_t time, int cpu,
                      uint64_t id)
{
    size_t n = 0;
    if (w->sample_type & ST_TID) {
        ek_put_le32(p + n, (uint32_t)pid);
        ek_put_le32(p + n + 4, (uint32_t)tid);
        n += 8;
    }
    if (w->sample_type & ST_TIME) {
        ek_put_le64(p + n, time);
        n += 8;
    }
    if (w->sample_type & ST_CPU) {
        ek_put_le32(p + n, (uint32_t)cpu);
        ek_put_le32(p + n + 4, 0);
        n += 8;
    }
    if (w->sample_type & ST_IDENTIFIER) {
        ek_put_le64(p + n, id);
        n += 8;
    }
    return n;
}

static void emit(sim_writer *w, uint32_t type, uint16_t misc, size_t body_len)
{
    ek_put_le32(w->buf, type);
    ek_put_le16(w->buf + 4, misc);
    ek_put_le16(w->buf + 6, (uint16_t)body_len);
    wr(w, w->buf, body_len);
}

static size_t put_str(uint8_t *p, const char *s, size_t align)
{
    size_t n = strlen(s) + 1;
    size_t a = (n + align - 1) / align * align;
    memset(p, 0, a);
    memcpy(p, s, n);
    return a;
}

int sim_writer_record(sim_writer *w, const sim_rec *r)
{
    uint8_t *b = w->buf;
    size_t n = 8;
    switch (r->type) {
    case SIM_R_COMM:
        ek_put_le32(b + 8, (uint32_t)r->pid);
        ek_put_le32(b + 12, (uint32_t)r->tid);
        n = 16 + put_str(b + 16, r->comm, 8);
        break;
    case SIM_R_FORK:
    case SIM_R_EXIT:
        ek_put_le32(b + 8, (uint32_t)r->pid);
        ek_put_le32(b + 12, (uint32_t)r->ppid);
        ek_put_le32(b + 16, (uint32_t)r->tid);
        ek_put_le32(b + 20, (uint32_t)r->ptid);
        ek_put_le64(b + 24, r->time);
        n = 32;
        break;
    case SIM_R_MMAP2:
        ek_put_le32(b + 8, (uint32_t)r->pid);
        ek_put_le32(b + 12, (uint32_t)r->tid);
        ek_put_le64(b + 16, r->addr);
        ek_put_le64(b + 24, r->len);
        ek_put_le64(b + 32, r->pgoff);
        if (!strcmp(r->img->blob->path, "//anon")) {
            /* anonymous memory (a JIT's code cache): no device, no inode */
            ek_put_le32(b + 40, 0);
            ek_put_le32(b + 44, 0);
            ek_put_le64(b + 48, 0);
            ek_put_le64(b + 56, 0);
            ek_put_le32(b + 64, 7);    /* PROT_READ | PROT_WRITE | PROT_EXEC */
            ek_put_le32(b + 68, 0x22); /* MAP_PRIVATE | MAP_ANONYMOUS */
        } else {
            ek_put_le32(b + 40, 8);                                        /* maj */
            ek_put_le32(b + 44, 1);                                        /* min */
            ek_put_le64(b + 48, 1000 + (uint64_t)(r->img - w->S->images)); /* ino */
            ek_put_le64(b + 56, 0);
            ek_put_le32(b + 64, 5); /* PROT_READ | PROT_EXEC */
            ek_put_le32(b + 68, 2); /* MAP_PRIVATE */
        }
        n = 72 + put_str(b + 72, r->img->blob->path, 8);
        break;
    case SIM_R_MMAP: /* kernel map */
        ek_put_le32(b + 8, (uint32_t)r->pid);
        ek_put_le32(b + 12, (uint32_t)r->tid);
        ek_put_le64(b + 16, r->addr);
        ek_put_le64(b + 24, r->len);
        ek_put_le64(b + 32, r->pgoff);
        n = 40 + put_str(b + 40, "[kernel.kallsyms]_text", 8);
        break;
    case SIM_R_AUX:
        ek_put_le64(b + 8, r->aux_offset);
        ek_put_le64(b + 16, r->aux_size);
        ek_put_le64(b + 24, r->aux_flags);
        n = 32;
        break;
    case SIM_R_ITRACE_START:
        ek_put_le32(b + 8, (uint32_t)r->pid);
        ek_put_le32(b + 12, (uint32_t)r->tid);
        n = 16;
        break;
    case SIM_R_AUX_OUTPUT_HW_ID:
        ek_put_le64(b + 8, r->hw_id);
        n = 16;
        break;
    default: return EK_ERR_ARG;
    }
    n += trailer(w, b + n, r->pid, r->tid, r->time, r->cpu, r->id);
    if (r->type == SIM_R_AUX) {
        sim_auxrec *a = &w->s->auxrecs.v[r->aux_index];
        a->file_off = w->pos;
    }
    emit(w, r->type, r->misc, n);
    w->s->nrecords++;
    return w->err;
}

int sim_writer_auxtrace(sim_writer *w, uint64_t offset, const uint8_t *p1, size_t n1,
                        const uint8_t *p2, size_t n2, int idx, int tid, int cpu)
{
    size_t n = n1 + n2, pad = (8 - (n & 7)) & 7;
    if (ek_vec_push(&w->index, w->pos)) return EK_ERR_NOMEM;
    uint8_t *b = w->buf;
    ek_put_le32(b, 71);
    ek_put_le16(b + 4, 0);
    ek_put_le16(b + 6, 48);
    ek_put_le64(b + 8, n + pad);
    ek_put_le64(b + 16, offset);
    ek_put_le64(b + 24, w->index.n); /* reference */
    ek_put_le32(b + 32, (uint32_t)idx);
    ek_put_le32(b + 36, (uint32_t)tid);
    ek_put_le32(b + 40, (uint32_t)cpu);
    ek_put_le32(b + 44, 0);
    wr(w, b, 48);
    wr(w, p1, n1);
    wr(w, p2, n2);
    wr_zero(w, pad);
    return w->err;
}

int sim_writer_round(sim_writer *w)
{
    uint8_t b[8];
    ek_put_le32(b, 68);
    ek_put_le16(b + 4, 0);
    ek_put_le16(b + 6, 8);
    wr(w, b, 8);
    return w->err;
}

/* ------------------------------------------------------------------ synthesized records */

/* ------------------------------------------------------------------ the clock */

/* kernel time of an architected counter value, as arm64's perf_event_mmap_page says */
static uint64_t counter_ns(const sim_clock *c, uint64_t cnt)
{
    uint64_t quot = cnt >> c->shift, rem = cnt & ((1ull << c->shift) - 1);
    return c->zero + quot * c->mult + ((rem * c->mult) >> c->shift);
}

uint64_t sim_clock_count(const sim *S, uint64_t ns)
{
    const sim_clock *c = &S->clock;
    switch (c->kind) {
    case SIM_CLK_COUNTER: {
        /* the last counter value the kernel's clock reads as ns or earlier */
        uint64_t t = ns - c->zero;
        uint64_t cnt = ((t / c->mult) << c->shift) + ((t % c->mult) << c->shift) / c->mult;
        while (counter_ns(c, cnt + 1) - c->zero <= t)
            cnt++;
        while (cnt && counter_ns(c, cnt) - c->zero > t)
            cnt--;
        return cnt;
    }
    case SIM_CLK_OTHER: return c->base + ns / c->den * c->num + ns % c->den * c->num / c->den;
    default: return ns;
    }
}

uint64_t sim_clock_time(const sim *S, uint64_t count)
{
    const sim_clock *c = &S->clock;
    switch (c->kind) {
    case SIM_CLK_COUNTER: return counter_ns(c, count);
    case SIM_CLK_OTHER: return (count - c->base) / c->num * c->den;
    default: return count;
    }
}

int sim_session_ts_convertible(const sim *S, const sim_session *s)
{
    (void)S;
    /* perf 6.3+: only a counter TS_SOURCE says is the virtual counter, which TIME_CONV
     * describes */
    return s->ts_source == 1 && (s->configr & EK_TRCCONFIGR_TS);
}

static void write_time_conv(sim_writer *w)
{
    const sim_clock *c = &w->S->clock;
    uint8_t *b = w->buf;
    memset(b, 0, 56);
    if (c->kind == SIM_CLK_KERNEL) {
        ek_put_le64(b + 8, 0);      /* time_shift */
        ek_put_le64(b + 16, 1);     /* time_mult: the simulated counter counts nanoseconds */
        ek_put_le64(b + 24, 0);     /* time_zero */
        ek_put_le64(b + 32, 0);     /* time_cycles */
        ek_put_le64(b + 40, ~0ull); /* time_mask */
        b[48] = 1;                  /* cap_user_time_zero */
        b[49] = 0;
    } else {
        /* arm64: the architected counter (56 bits) drives the kernel's clock; a separate
         * timestamp generator (SIM_CLK_OTHER) has no TIME_CONV of its own, and the record
         * describes the CPU's counter at its usual 25 MHz */
        sim_clock arch = {SIM_CLK_COUNTER, 671088640u, 24, 0, 0, 0, 0, 0};
        const sim_clock *d = c->kind == SIM_CLK_COUNTER ? c : &arch;
        ek_put_le64(b + 8, d->shift);
        ek_put_le64(b + 16, d->mult);
        ek_put_le64(b + 24, d->zero);
        ek_put_le64(b + 32, d->cycles);        /* time_cycles */
        ek_put_le64(b + 40, (1ull << 56) - 1); /* time_mask */
        b[48] = 1;                             /* cap_user_time_zero */
        b[49] = 1;                             /* cap_user_time_short */
    }
    emit(w, 79, 0, 56);
}

static void write_auxtrace_info(sim_writer *w)
{
    const sim *S = w->S;
    const sim_session *s = w->s;
    uint64_t pr[3 + SIM_MAX_CPUS * 12];
    size_t n = 0;
    pr[n++] = (uint64_t)s->header_version;
    pr[n++] = ((uint64_t)PMU_TYPE << 32) | (uint64_t)S->ncpus;
    pr[n++] = s->snapshot ? 1 : 0;
    for (int c = 0; c < S->ncpus; c++) {
        ek_source_config cfg;
        uint8_t id = (uint8_t)(0x10 + 2 * c);
        ek_etm4_enc_default_regs(&cfg, s->ete, id, s->configr);
        const ek_etm4_regs *r = &cfg.regs.etm4;
        int ts = s->header_version >= 1 && s->ts_source != SIM_TS_SOURCE_NONE;
        pr[n++] = s->ete ? 0x5050505050505050ull : 0x4040404040404040ull;
        pr[n++] = (uint64_t)c;
        if (s->header_version >= 1) pr[n++] = (s->ete ? 8 : 7) + (ts ? 1 : 0);
        pr[n++] = r->configr;
        pr[n++] = s->header_version >= 2 ? (1ull << 31) : r->traceidr;
        pr[n++] = r->idr[0];
        pr[n++] = r->idr[1];
        pr[n++] = r->idr[2];
        pr[n++] = r->idr[8];
        pr[n++] = r->authstatus;
        if (s->ete) pr[n++] = r->devarch;
        if (ts) pr[n++] = (uint64_t)(int64_t)s->ts_source; /* perf 6.3+: TS_SOURCE */
    }
    uint8_t *b = w->buf;
    ek_put_le32(b + 8, 3); /* PERF_AUXTRACE_CS_ETM */
    ek_put_le32(b + 12, 0);
    for (size_t i = 0; i < n; i++)
        ek_put_le64(b + 16 + 8 * i, pr[i]);
    emit(w, 70, 0, 16 + 8 * n);
}

static void write_kernel_mmap(sim_writer *w)
{
    const sim *S = w->S;
    sim_rec r;
    memset(&r, 0, sizeof(r));
    r.type = SIM_R_MMAP;
    r.misc = 1; /* PERF_RECORD_MISC_KERNEL */
    r.pid = -1;
    r.tid = 0;
    r.addr = S->kernel->seg_vaddr;
    r.len = 0xffffffffffffffffull - S->kernel->seg_vaddr;
    const sim_sym *t = sim_image_symbol(S->kernel, "primary_entry");
    r.pgoff = t ? t->addr : S->kernel->seg_vaddr;
    r.id = w->s->events[0].dummy_id;
    sim_writer_record(w, &r);
}

sim_writer *sim_writer_open(sim *S, sim_session *s, const char *path)
{
    sim_writer *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    w->S = S;
    w->s = s;
    w->f = fopen(path, "wb");
    if (!w->f) {
        free(w);
        return NULL;
    }
    w->sample_type = ST_IDENTIFIER | ST_IP | ST_TID | ST_TIME | ST_PERIOD;
    if (s->mode != SIM_MODE_PER_THREAD) w->sample_type |= ST_CPU;
    /* header placeholder, attributes, their IDs */
    wr_zero(w, 104);
    uint64_t nids = (uint64_t)s->nevents;
    uint64_t ids_off = 104 + 2 * (ATTR_SIZE + 16);
    uint8_t a[ATTR_SIZE + 16];
    for (int k = 0; k < 2; k++) {
        attr_bytes(w, k, a);
        ek_put_le64(a + ATTR_SIZE, ids_off + (uint64_t)k * nids * 8);
        ek_put_le64(a + ATTR_SIZE + 8, nids * 8);
        wr(w, a, sizeof(a));
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < s->nevents; i++) {
            uint8_t v[8];
            ek_put_le64(v, k ? s->events[i].dummy_id : s->events[i].id);
            wr(w, v, 8);
        }
    w->data_off = w->pos;
    if (s->configr & EK_TRCCONFIGR_TS) write_time_conv(w);
    write_auxtrace_info(w);
    write_kernel_mmap(w);
    return w;
}

/* ------------------------------------------------------------------ features */

static void feat_string(sim_writer *w, const char *str)
{
    uint8_t b[128];
    size_t n = put_str(b + 4, str, 64);
    ek_put_le32(b, (uint32_t)n);
    wr(w, b, 4 + n);
}

static void feat_build_id(sim_writer *w, const sim_image *img, int kernel)
{
    const char *name = kernel ? "[kernel.kallsyms]" : img->blob->path;
    uint8_t b[160];
    memset(b, 0, sizeof(b));
    size_t fl = put_str(b + 36, name, 64);
    ek_put_le32(b, 0); /* type unused */
    ek_put_le16(b + 4, (uint16_t)((kernel ? 1 : 2) | (1u << 15)));
    ek_put_le16(b + 6, (uint16_t)(36 + fl));
    ek_put_le32(b + 8, (uint32_t)-1);
    memcpy(b + 12, img->build_id, img->build_id_len);
    b[32] = (uint8_t)img->build_id_len;
    wr(w, b, 36 + fl);
}

int sim_writer_close(sim_writer *w)
{
    if (!w) return 0;
    sim *S = w->S;
    uint64_t data_end = w->pos;
    static const int feats[] = {2, 4, 5, 6, 7, 16, 18};
    const int nf = (int)(sizeof(feats) / sizeof(feats[0]));
    uint64_t table = data_end;
    wr_zero(w, (size_t)nf * 16);
    uint64_t sec[16][2];
    for (int i = 0; i < nf; i++) {
        uint64_t st = w->pos;
        switch (feats[i]) {
        case 2:
            for (int k = 0; k < S->nimages; k++)
                if (!S->images[k].hidden) feat_build_id(w, &S->images[k], S->images[k].is_kernel);
            break;
        case 4: feat_string(w, "6.1.0-etmkit-sim"); break;
        case 5: feat_string(w, "6.1.187"); break;
        case 6: feat_string(w, "aarch64"); break;
        case 7: {
            uint8_t b[8];
            ek_put_le32(b, (uint32_t)S->ncpus);
            ek_put_le32(b + 4, (uint32_t)S->ncpus);
            wr(w, b, 8);
            break;
        }
        case 16: {
            uint8_t b[4];
            ek_put_le32(b, 2);
            wr(w, b, 4);
            ek_put_le32(b, PMU_TYPE);
            wr(w, b, 4);
            feat_string(w, "cs_etm");
            ek_put_le32(b, 1);
            wr(w, b, 4);
            feat_string(w, "software");
            break;
        }
        case 18: {
            uint8_t b[16];
            ek_put_le64(b, w->index.n);
            wr(w, b, 8);
            for (size_t k = 0; k < w->index.n; k++) {
                ek_put_le64(b, w->index.v[k]);
                ek_put_le64(b + 8, 48);
                wr(w, b, 16);
            }
            break;
        }
        }
        sec[i][0] = st;
        sec[i][1] = w->pos - st;
    }
    /* feature table and header */
    uint8_t h[104];
    memset(h, 0, sizeof(h));
    memcpy(h, "PERFILE2", 8);
    ek_put_le64(h + 8, 104);
    ek_put_le64(h + 16, ATTR_SIZE + 16);
    ek_put_le64(h + 24, 104);
    ek_put_le64(h + 32, 2 * (ATTR_SIZE + 16));
    ek_put_le64(h + 40, w->data_off);
    ek_put_le64(h + 48, data_end - w->data_off);
    for (int i = 0; i < nf; i++)
        h[72 + feats[i] / 8] |= (uint8_t)(1u << (feats[i] % 8));
    int err = w->err;
    if (!err && (fseek(w->f, (long)table, SEEK_SET) != 0)) err = EK_ERR_IO;
    for (int i = 0; i < nf && !err; i++) {
        uint8_t b[16];
        ek_put_le64(b, sec[i][0]);
        ek_put_le64(b + 8, sec[i][1]);
        if (fwrite(b, 1, 16, w->f) != 16) err = EK_ERR_IO;
    }
    if (!err && (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(h, 1, 104, w->f) != 104)) err = EK_ERR_IO;
    if (fclose(w->f) != 0 && !err) err = EK_ERR_IO;
    ek_vec_free(&w->index);
    free(w);
    return err;
}
