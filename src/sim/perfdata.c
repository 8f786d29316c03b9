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

#include "etmkit/etmkit.h"
#include "etmkit/perf_write.h"
#include "sim/sim.h"

#define ATTR_SIZE 128
#define PMU_TYPE  12u

struct sim_writer {
    sim *S;
    sim_session *s;
    ek_pw *pw;
    FILE *f; /* sim_fopen's: its failures say which file and why */
    uint64_t sample_type;
    uint64_t nauxtrace;
};

uint64_t sim_writer_pos(const sim_writer *w)
{
    return ek_pw_offset(w->pw);
}

/* ------------------------------------------------------------------ attributes */

static void attr_of(const sim_writer *w, int dummy, ek_perf_attr *a)
{
    const sim_session *s = w->s;
    memset(a, 0, sizeof(*a));
    uint64_t flags = 0;
    flags |= 1ull << 18;                       /* sample_id_all */
    if (!(s->el_mask & 1)) flags |= 1ull << 4; /* exclude_user */
    if (!(s->el_mask & 2)) flags |= 1ull << 5; /* exclude_kernel */
    flags |= 1ull << 6;                        /* exclude_hv */
    if (s->mode != SIM_MODE_SYSTEM)
        flags |= (1ull << 1) | (1ull << 0) | (1ull << 12); /* inherit, disabled, enable_on_exec */
    if (dummy) {
        a->type = 1;   /* PERF_TYPE_SOFTWARE */
        a->config = 9; /* PERF_COUNT_SW_DUMMY */
        flags |= (1ull << 8) | (1ull << 9) | (1ull << 13) | (1ull << 23) | (1ull << 24);
    } else {
        a->type = PMU_TYPE;
        a->config = s->attr_config;
        a->config2 = 0; /* sink id left to the kernel */
    }
    a->sample_period = 1;
    a->size = ATTR_SIZE;
    a->sample_type = w->sample_type;
    if (s->clock_monotonic) {
        flags |= 1ull << 25; /* use_clockid */
        a->clockid = 1;      /* CLOCK_MONOTONIC */
    }
    a->flags = flags;
}

/* ------------------------------------------------------------------ records */

int sim_writer_record(sim_writer *w, const sim_rec *r)
{
    ek_perf_record p;
    memset(&p, 0, sizeof(p));
    p.type = (uint32_t)r->type;
    p.misc = r->misc;
    switch (r->type) {
    case SIM_R_COMM:
        p.u.comm.pid = (uint32_t)r->pid;
        p.u.comm.tid = (uint32_t)r->tid;
        p.u.comm.comm = r->comm;
        break;
    case SIM_R_FORK:
    case SIM_R_EXIT:
        p.u.fork.pid = (uint32_t)r->pid;
        p.u.fork.ppid = (uint32_t)r->ppid;
        p.u.fork.tid = (uint32_t)r->tid;
        p.u.fork.ptid = (uint32_t)r->ptid;
        p.u.fork.time = r->time;
        break;
    case SIM_R_MMAP2:
    case SIM_R_MMAP: /* kernel map; with img, a kernel module's */
        p.u.mmap.pid = (uint32_t)r->pid;
        p.u.mmap.tid = (uint32_t)r->tid;
        p.u.mmap.addr = r->addr;
        p.u.mmap.len = r->len;
        p.u.mmap.pgoff = r->pgoff;
        if (r->type == SIM_R_MMAP) {
            p.u.mmap.filename = r->img ? r->img->blob->path : "[kernel.kallsyms]_text";
        } else if (!strcmp(r->img->blob->path, "//anon")) {
            /* anonymous memory (a JIT's code cache): no device, no inode */
            p.u.mmap.prot = 7;     /* PROT_READ | PROT_WRITE | PROT_EXEC */
            p.u.mmap.flags = 0x22; /* MAP_PRIVATE | MAP_ANONYMOUS */
            p.u.mmap.filename = r->img->blob->path;
        } else {
            p.u.mmap.maj = 8;
            p.u.mmap.min = 1;
            p.u.mmap.ino = 1000 + (uint64_t)(r->img - w->S->images);
            p.u.mmap.prot = 5;  /* PROT_READ | PROT_EXEC */
            p.u.mmap.flags = 2; /* MAP_PRIVATE */
            p.u.mmap.filename = r->img->blob->path;
        }
        break;
    case SIM_R_AUX:
        p.u.aux.aux_offset = r->aux_offset;
        p.u.aux.aux_size = r->aux_size;
        p.u.aux.flags = r->aux_flags;
        break;
    case SIM_R_ITRACE_START:
        p.u.itrace_start.pid = (uint32_t)r->pid;
        p.u.itrace_start.tid = (uint32_t)r->tid;
        break;
    case SIM_R_AUX_OUTPUT_HW_ID: p.u.hw_id.hw_id = r->hw_id; break;
    default: return EK_ERR_ARG;
    }
    p.sid.pid = (uint32_t)r->pid;
    p.sid.tid = (uint32_t)r->tid;
    p.sid.time = r->time;
    p.sid.cpu = (uint32_t)r->cpu;
    p.sid.id = r->id;
    if (r->type == SIM_R_AUX) {
        sim_auxrec *a = &w->s->auxrecs.v[r->aux_index];
        a->file_off = ek_pw_offset(w->pw);
    }
    w->s->nrecords++;
    return ek_pw_record(w->pw, &p, w->sample_type);
}

int sim_writer_auxtrace(sim_writer *w, uint64_t offset, const uint8_t *p1, size_t n1,
                        const uint8_t *p2, size_t n2, int idx, int tid, int cpu)
{
    static const uint8_t zero[8];
    size_t n = n1 + n2, pad = (8 - (n & 7)) & 7;
    ek_perf_record p;
    memset(&p, 0, sizeof(p));
    p.type = EK_PERF_RECORD_AUXTRACE;
    p.u.auxtrace.size = n + pad;
    p.u.auxtrace.offset = offset;
    p.u.auxtrace.reference = ++w->nauxtrace;
    p.u.auxtrace.idx = (uint32_t)idx;
    p.u.auxtrace.tid = (uint32_t)tid;
    p.u.auxtrace.cpu = cpu;
    ek_pw_record(w->pw, &p, 0);
    ek_pw_payload(w->pw, p1, n1);
    ek_pw_payload(w->pw, p2, n2);
    return ek_pw_payload(w->pw, zero, pad);
}

int sim_writer_round(sim_writer *w)
{
    ek_perf_record p;
    memset(&p, 0, sizeof(p));
    p.type = EK_PERF_RECORD_FINISHED_ROUND;
    return ek_pw_record(w->pw, &p, 0);
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
    ek_perf_record p;
    memset(&p, 0, sizeof(p));
    p.type = EK_PERF_RECORD_TIME_CONV;
    ek_perf_time_conv *t = &p.u.time_conv;
    t->have_cycles = 1;
    if (c->kind == SIM_CLK_KERNEL) {
        t->time_shift = 0;
        t->time_mult = 1; /* the simulated counter counts nanoseconds */
        t->time_zero = 0;
        t->time_cycles = 0;
        t->time_mask = ~0ull;
        t->cap_user_time_zero = 1;
        t->cap_user_time_short = 0;
    } else {
        /* arm64: the architected counter (56 bits) drives the kernel's clock; a separate
         * timestamp generator (SIM_CLK_OTHER) has no TIME_CONV of its own, and the record
         * describes the CPU's counter at its usual 25 MHz */
        sim_clock arch = {SIM_CLK_COUNTER, 671088640u, 24, 0, 0, 0, 0, 0};
        const sim_clock *d = c->kind == SIM_CLK_COUNTER ? c : &arch;
        t->time_shift = d->shift;
        t->time_mult = d->mult;
        t->time_zero = d->zero;
        t->time_cycles = d->cycles;
        t->time_mask = (1ull << 56) - 1;
        t->cap_user_time_zero = 1;
        t->cap_user_time_short = 1;
    }
    ek_pw_record(w->pw, &p, 0);
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
        sim_etm_regs(S, s, c, id, &cfg);
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
    ek_pw_auxtrace_info(w->pw, EK_PERF_AUXTRACE_CS_ETM, pr, n);
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
    if (S->kmod) {
        /* perf record's map of a module: its /proc/modules address and size, its path */
        r.addr = S->kmod->map.start;
        r.len = S->kmod->map.end - S->kmod->map.start;
        r.pgoff = 0;
        r.img = S->kmod->map.img;
        sim_writer_record(w, &r);
    }
}

/* the writer's output: a sim_fopen file */
static int file_write(void *ctx, const void *p, size_t n)
{
    return n && fwrite(p, 1, n, ctx) != n ? EK_ERR_IO : 0;
}

static int file_patch(void *ctx, uint64_t off, const void *p, size_t n)
{
    FILE *f = ctx;
    if (off > (uint64_t)INT64_MAX || fseeko(f, (off_t)off, SEEK_SET)) return EK_ERR_IO;
    if (n && fwrite(p, 1, n, f) != n) return EK_ERR_IO;
    return fseeko(f, 0, SEEK_END) ? EK_ERR_IO : 0;
}

sim_writer *sim_writer_open(sim *S, sim_session *s, const char *path)
{
    sim_writer *w = calloc(1, sizeof(*w));
    if (!w) return NULL;
    w->S = S;
    w->s = s;
    w->f = sim_fopen(path);
    const ek_pw_out out = {w->f, file_write, file_patch};
    if (!w->f || ek_pw_new(&out, 0, &w->pw)) {
        if (w->f) fclose(w->f);
        free(w);
        return NULL;
    }
    w->sample_type = EK_PERF_SAMPLE_IDENTIFIER | EK_PERF_SAMPLE_IP | EK_PERF_SAMPLE_TID |
                     EK_PERF_SAMPLE_TIME | EK_PERF_SAMPLE_PERIOD;
    if (s->mode != SIM_MODE_PER_THREAD) w->sample_type |= EK_PERF_SAMPLE_CPU;
    /* the cs_etm event and the tracking dummy event, each with one ID per event opened */
    uint64_t *ids = malloc(((size_t)s->nevents + 1) * sizeof(*ids));
    if (!ids) {
        ek_pw_close(w->pw);
        fclose(w->f);
        free(w);
        return NULL;
    }
    for (int k = 0; k < 2; k++) {
        ek_perf_attr a;
        attr_of(w, k, &a);
        for (int i = 0; i < s->nevents; i++)
            ids[i] = k ? s->events[i].dummy_id : s->events[i].id;
        a.ids = ids;
        a.nids = (size_t)s->nevents;
        ek_pw_attr(w->pw, &a);
    }
    free(ids);
    if (s->configr & EK_TRCCONFIGR_TS) write_time_conv(w);
    write_auxtrace_info(w);
    write_kernel_mmap(w);
    return w;
}

/* ------------------------------------------------------------------ features */

static void feat_build_id(sim_writer *w, const sim_image *img, int kernel)
{
    ek_pw_build_id(w->pw, -1, kernel ? 1 : 2, img->build_id, (uint8_t)img->build_id_len,
                   kernel ? "[kernel.kallsyms]" : img->blob->path);
}

int sim_writer_close(sim_writer *w)
{
    if (!w) return 0;
    sim *S = w->S;
    ek_pw *pw = w->pw;
    ek_pw_feature_begin(pw, EK_PERF_FEAT_BUILD_ID);
    for (int k = 0; k < S->nimages; k++)
        if (!S->images[k].hidden) feat_build_id(w, &S->images[k], S->images[k].is_kernel);
    if (S->kmod && S->kmod->build_id_len) /* a module: kernel, by its path */
        ek_pw_build_id(pw, -1, 1, S->kmod->build_id, (uint8_t)S->kmod->build_id_len,
                       S->kmod->map.path);
    ek_pw_feature_end(pw);
    ek_pw_feature_string(pw, EK_PERF_FEAT_OSRELEASE, "6.1.0-etmkit-sim");
    ek_pw_feature_string(pw, EK_PERF_FEAT_VERSION, "6.1.187");
    ek_pw_feature_string(pw, EK_PERF_FEAT_ARCH, "aarch64");
    ek_pw_feature_begin(pw, EK_PERF_FEAT_NRCPUS);
    ek_pw_u32(pw, (uint32_t)S->ncpus);
    ek_pw_u32(pw, (uint32_t)S->ncpus);
    ek_pw_feature_end(pw);
    ek_pw_feature_begin(pw, EK_PERF_FEAT_PMU_MAPPINGS);
    ek_pw_u32(pw, 2);
    ek_pw_u32(pw, PMU_TYPE);
    ek_pw_hstring(pw, "cs_etm");
    ek_pw_u32(pw, 1);
    ek_pw_hstring(pw, "software");
    ek_pw_feature_end(pw);
    ek_pw_auxtrace_index(pw, 0);
    int err = ek_pw_close(pw);
    int e2 = sim_fclose(w->f);
    free(w);
    return err ? err : e2;
}

/* The options a correct decoder needs that the recording cannot tell it (what its user
 * knows): the CPU whose configuration decodes raw per-thread trace when the CPUs differ.
 * Written with or without the truth: it belongs to the recording. */
int sim_script_options_write(const sim *S, const sim_session *s, const char *dir, int index)
{
    char sfx[16] = "";
    if (index) snprintf(sfx, sizeof(sfx), "-%d", index);
    int shared = 1;
    for (int c = 1; c < S->ncpus; c++)
        if (!sim_etm_same_decoding(S, s, 0, c)) shared = 0;
    if (shared || !s->raw_cpu_known || s->mode != SIM_MODE_PER_THREAD) return 0;
    size_t n = strlen(dir) + strlen(sfx) + 32;
    char *path = malloc(n);
    if (!path) return EK_ERR_NOMEM;
    snprintf(path, n, "%s/script-options%s.txt", dir, sfx);
    FILE *f = sim_fopen(path);
    free(path);
    if (!f) return EK_ERR_IO;
    fprintf(f, "--raw-cpu=%d\n", s->raw_cpu);
    return sim_fclose(f) ? EK_ERR_IO : 0;
}
