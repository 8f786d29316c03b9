/* cs_etm configuration: PERF_RECORD_AUXTRACE_INFO (type 3) metadata, trace IDs (metadata or
 * AUX_OUTPUT_HW_ID), PID source and the cs_etm event's config bits. */
#include <stdlib.h>
#include <string.h>

#include "input/perf_internal.h"

/* AUXTRACE_INFO priv[] global words */
#define CS_HEADER_VERSION   0
#define CS_PMU_TYPE_CPUS    1
#define CS_ETM_SNAPSHOT     2
#define CS_HDR_WORDS        3
#define CS_HEADER_MAX_KNOWN 2

/* parameter counts of version-0 blocks (no count word) */
#define CS_ETM_NR_PARAMS_V0   4
#define CS_ETMV4_NR_PARAMS_V0 7

/* parameters, counted from the first word after the block head */
enum { P3_ETMCR, P3_ETMTRACEIDR, P3_ETMCCER, P3_ETMIDR, P3_KNOWN };
enum {
    P4_TRCCONFIGR,
    P4_TRCTRACEIDR,
    P4_TRCIDR0,
    P4_TRCIDR1,
    P4_TRCIDR2,
    P4_TRCIDR8,
    P4_TRCAUTHSTATUS,
    P4_TS_SOURCE,
    P4_KNOWN
};
enum { PE_TRCDEVARCH = P4_TS_SOURCE, PE_TS_SOURCE, PE_KNOWN };

#define TRACE_ID_UNUSED_FLAG (1ull << 31)
#define ETMIDR_PTM_VERSION   0x300u
#define ETM4_CFG_CTXTID      (1u << 6)
#define ETM4_CFG_VMID        (1u << 7)
#define ETM4_CFG_VMID_OPT    (1u << 15)
#define ETM3_CR_CTXTID       (1u << 14)

#define HWID_TRACE_ID(v) ((unsigned)((v)&0xff))
#define HWID_SINK(v)     ((uint32_t)(((v) >> 8) & 0xffffffffu))
#define HWID_MINOR(v)    ((unsigned)(((v) >> 56) & 0xf))
#define HWID_MAJOR(v)    ((unsigned)(((v) >> 60) & 0xf))

static int trace_id_valid(unsigned id)
{
    return id >= 0x01 && id <= 0x6f;
}

static void fill_block(ek_perf_etm_cpu *c, const uint64_t *p, uint32_t n)
{
    uint32_t keep = n < EK_CS_ETM_MAX_PARAMS ? n : EK_CS_ETM_MAX_PARAMS;
    memcpy(c->params, p, keep * sizeof *p);
    c->nparams = n;
    c->ts_source = -1;
    ek_source_config *cfg = &c->cfg;
    cfg->profile = EK_PROFILE_A;
#define PARAM(i) ((i) < n ? p[i] : 0)
    if (c->magic == EK_CS_ETM_MAGIC_ETMV3) {
        cfg->regs.etm3.etmcr = (uint32_t)PARAM(P3_ETMCR);
        cfg->regs.etm3.etmtraceidr = (uint32_t)PARAM(P3_ETMTRACEIDR);
        cfg->regs.etm3.etmccer = (uint32_t)PARAM(P3_ETMCCER);
        cfg->regs.etm3.etmidr = (uint32_t)PARAM(P3_ETMIDR);
        cfg->protocol = (cfg->regs.etm3.etmidr & ETMIDR_PTM_VERSION) == ETMIDR_PTM_VERSION
                            ? EK_PROTO_PTM
                            : EK_PROTO_ETMV3;
        cfg->arch = EK_ARCH_V7A;
        c->meta_trace_id = (uint8_t)(PARAM(P3_ETMTRACEIDR) & 0x7f);
        c->meta_unused_flag = !!(PARAM(P3_ETMTRACEIDR) & TRACE_ID_UNUSED_FLAG);
        c->pid_source = cfg->regs.etm3.etmcr & ETM3_CR_CTXTID ? EK_PID_CONTEXTIDR_EL1 : EK_PID_NONE;
        return;
    }
    int ete = c->magic == EK_CS_ETM_MAGIC_ETE;
    ek_etm4_regs *r = &cfg->regs.etm4;
    cfg->protocol = ete ? EK_PROTO_ETE : EK_PROTO_ETMV4;
    cfg->arch = ete ? EK_ARCH_V9A : EK_ARCH_V8A;
    static const struct {
        unsigned param, idr;
    } idrs[] = {{P4_TRCIDR0, 0}, {P4_TRCIDR1, 1}, {P4_TRCIDR2, 2}, {P4_TRCIDR8, 8}};
    for (size_t i = 0; i < sizeof idrs / sizeof idrs[0]; i++)
        if (idrs[i].param < n) {
            r->idr[idrs[i].idr] = (uint32_t)p[idrs[i].param];
            r->present |= 1u << idrs[i].idr;
        }
    if (P4_TRCCONFIGR < n) {
        r->configr = (uint32_t)p[P4_TRCCONFIGR];
        r->present |= EK_ETM4_HAVE_CONFIGR;
    }
    if (P4_TRCTRACEIDR < n) {
        r->traceidr = (uint32_t)(p[P4_TRCTRACEIDR] & 0x7f);
        r->present |= EK_ETM4_HAVE_TRACEIDR;
    }
    if (P4_TRCAUTHSTATUS < n) {
        r->authstatus = (uint32_t)p[P4_TRCAUTHSTATUS];
        r->present |= EK_ETM4_HAVE_AUTHSTATUS;
    }
    if (ete && PE_TRCDEVARCH < n) {
        r->devarch = (uint32_t)p[PE_TRCDEVARCH];
        r->present |= EK_ETM4_HAVE_DEVARCH;
    }
    unsigned ts = ete ? PE_TS_SOURCE : P4_TS_SOURCE;
    if (ts < n && p[ts] != UINT64_MAX) c->ts_source = (int64_t)p[ts];
    c->meta_trace_id = (uint8_t)(PARAM(P4_TRCTRACEIDR) & 0x7f);
    c->meta_unused_flag = !!(PARAM(P4_TRCTRACEIDR) & TRACE_ID_UNUSED_FLAG);
    if (r->configr & (ETM4_CFG_VMID | ETM4_CFG_VMID_OPT))
        c->pid_source = EK_PID_CONTEXTIDR_EL2;
    else if (r->configr & ETM4_CFG_CTXTID)
        c->pid_source = EK_PID_CONTEXTIDR_EL1;
    else
        c->pid_source = EK_PID_NONE;
#undef PARAM
}

static const char *magic_name(uint64_t m)
{
    return m == EK_CS_ETM_MAGIC_ETMV3   ? "ETMv3/PTM"
           : m == EK_CS_ETM_MAGIC_ETMV4 ? "ETMv4"
           : m == EK_CS_ETM_MAGIC_ETE   ? "ETE"
                                        : "unknown";
}

void pf_parse_auxtrace_info(ek_perf_file *f, const ek_perf_record *rec)
{
    int swap = f->hdr.swapped;
    uint64_t roff = rec->offset;
    if (rec->u.auxtrace_info.type != EK_PERF_AUXTRACE_CS_ETM) {
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.auxtrace-info-type", EK_ERR_UNSUPPORTED, rec->index,
                (int64_t)roff, "AUXTRACE_INFO of type %u is not CoreSight (3); ignored",
                rec->u.auxtrace_info.type);
        return;
    }
    if (f->etm.present) {
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.auxtrace-info-dup", EK_ERR_FORMAT, rec->index,
                (int64_t)roff, "second cs_etm AUXTRACE_INFO ignored (the first one is used)");
        return;
    }
    size_t nw = rec->u.auxtrace_info.npriv;
    const uint8_t *w8 = rec->raw + 16;
    if ((rec->size - 16u) % 8)
        pf_diag(f, f->diag, EK_SEV_NOTE, "perf.auxtrace-info-size", 0, rec->index, (int64_t)roff,
                "AUXTRACE_INFO size %u is not 16 + 8*n", rec->size);
    if (nw < CS_HDR_WORDS) {
        pf_diag(f, f->diag, EK_SEV_ERROR, "perf.cs-etm-info", EK_ERR_TRUNCATED, rec->index,
                (int64_t)roff, "cs_etm AUXTRACE_INFO has %zu words, fewer than its 3-word head",
                nw);
        return;
    }
    uint64_t *w = malloc(nw * sizeof *w);
    if (!w) return;
    for (size_t i = 0; i < nw; i++)
        w[i] = pf_u64(w8 + 8 * i, swap);
    ek_perf_cs_etm *e = &f->etm;
    e->present = 1;
    e->info_record = rec->index;
    e->info_offset = roff;
    e->header_version = w[CS_HEADER_VERSION];
    e->pmu_type = (uint32_t)(w[CS_PMU_TYPE_CPUS] >> 32);
    e->nr_cpu_blocks = (uint32_t)w[CS_PMU_TYPE_CPUS];
    e->snapshot = w[CS_ETM_SNAPSHOT];
    int v0 = e->header_version == 0;
    if (e->header_version > CS_HEADER_MAX_KNOWN)
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-version", EK_ERR_UNSUPPORTED, rec->index,
                (int64_t)roff, "cs_etm header version %llu is newer than 2; read as version 2",
                (unsigned long long)e->header_version);
    size_t pos = CS_HDR_WORDS;
    uint32_t i;
    for (i = 0; i < e->nr_cpu_blocks && pos < nw; i++) {
        uint64_t boff = roff + 16 + 8 * pos;
        if (nw - pos < (v0 ? 2u : 3u)) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-info", EK_ERR_TRUNCATED, rec->index,
                    (int64_t)boff, "cs_etm block %u: head cut off by the end of the record", i);
            break;
        }
        uint64_t magic = w[pos];
        uint64_t cpu = w[pos + 1];
        uint64_t n;
        size_t head;
        if (v0) {
            head = 2;
            if (magic == EK_CS_ETM_MAGIC_ETMV3)
                n = CS_ETM_NR_PARAMS_V0;
            else if (magic == EK_CS_ETM_MAGIC_ETMV4)
                n = CS_ETMV4_NR_PARAMS_V0;
            else {
                pf_diag(f, f->diag, EK_SEV_ERROR, "perf.cs-etm-magic", EK_ERR_FORMAT, rec->index,
                        (int64_t)boff,
                        "cs_etm block %u: magic 0x%016llx is not valid in a version-0 header; "
                        "the remaining blocks cannot be located",
                        i, (unsigned long long)magic);
                break;
            }
        } else {
            head = 3;
            n = w[pos + 2];
        }
        if (n > nw - pos - head) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-info", EK_ERR_TRUNCATED, rec->index,
                    (int64_t)boff,
                    "cs_etm block %u (CPU %llu): %llu parameters declared, only %zu present", i,
                    (unsigned long long)cpu, (unsigned long long)n, nw - pos - head);
            n = nw - pos - head;
        }
        const uint64_t *params = w + pos + head;
        pos += head + (size_t)n;
        if (magic != EK_CS_ETM_MAGIC_ETMV3 && magic != EK_CS_ETM_MAGIC_ETMV4 &&
            magic != EK_CS_ETM_MAGIC_ETE) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-magic", EK_ERR_UNSUPPORTED, rec->index,
                    (int64_t)boff,
                    "cs_etm block %u (CPU %llu): unknown magic 0x%016llx; block skipped", i,
                    (unsigned long long)cpu, (unsigned long long)magic);
            continue;
        }
        if (cpu > 0xffffffffull) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-info", EK_ERR_RANGE, rec->index,
                    (int64_t)boff, "cs_etm block %u: CPU number %llu out of range; skipped", i,
                    (unsigned long long)cpu);
            continue;
        }
        int dup = 0;
        for (size_t k = 0; k < f->etm_cpus.n; k++)
            dup |= f->etm_cpus.v[k].cpu == (uint32_t)cpu;
        if (dup) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-info", EK_ERR_FORMAT, rec->index,
                    (int64_t)boff, "cs_etm block %u: CPU %llu described twice; block skipped", i,
                    (unsigned long long)cpu);
            continue;
        }
        unsigned known = magic == EK_CS_ETM_MAGIC_ETMV3   ? P3_KNOWN
                         : magic == EK_CS_ETM_MAGIC_ETMV4 ? P4_KNOWN
                                                          : PE_KNOWN;
        unsigned needed = magic == EK_CS_ETM_MAGIC_ETMV3 ? P3_KNOWN : P4_TRCAUTHSTATUS + 1;
        if (magic == EK_CS_ETM_MAGIC_ETE) needed = PE_TRCDEVARCH + 1;
        if (n < needed)
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-params", EK_ERR_TRUNCATED, rec->index,
                    (int64_t)boff,
                    "cs_etm block %u (CPU %llu, %s): %llu parameters, %u expected; missing "
                    "registers read as 0",
                    i, (unsigned long long)cpu, magic_name(magic), (unsigned long long)n, needed);
        else if (n > known)
            pf_diag(f, f->diag, EK_SEV_NOTE, "perf.cs-etm-params", 0, rec->index, (int64_t)boff,
                    "cs_etm block %u (CPU %llu, %s): %llu parameters, the last %llu are not "
                    "known and ignored",
                    i, (unsigned long long)cpu, magic_name(magic), (unsigned long long)n,
                    (unsigned long long)(n - known));
        ek_perf_etm_cpu c;
        memset(&c, 0, sizeof c);
        c.cpu = (uint32_t)cpu;
        c.magic = magic;
        c.block_offset = boff;
        fill_block(&c, params, (uint32_t)n);
        if (ek_vec_push(&f->etm_cpus, c)) break;
    }
    if (i < e->nr_cpu_blocks)
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-info", EK_ERR_TRUNCATED, rec->index,
                (int64_t)roff, "cs_etm AUXTRACE_INFO declares %u CPU blocks, %u could be read",
                e->nr_cpu_blocks, i);
    else if (!e->nr_cpu_blocks)
        /* (perf writes one block per CPU recorded: a count of 0 is damage, and every trace
         * unit is then without its configuration) */
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-info", EK_ERR_FORMAT, rec->index,
                (int64_t)(roff + 16 + 8 * CS_PMU_TYPE_CPUS),
                "cs_etm AUXTRACE_INFO declares no CPU: no trace unit's configuration is known, "
                "so none of the trace can be decoded%s",
                pos < nw ? " (the words that follow are not read)" : "");
    else if (pos < nw)
        pf_diag(f, f->diag, EK_SEV_NOTE, "perf.cs-etm-info", 0, rec->index,
                (int64_t)(roff + 16 + 8 * pos), "%zu words after the last cs_etm block ignored",
                nw - pos);
    free(w);
}

static const ek_perf_attr *find_cs_etm_attr(ek_perf_file *f)
{
    ek_perf_cs_etm *e = &f->etm;
    for (size_t i = 0; i < f->attrs.n; i++)
        if (e->present && f->attrs.v[i]->type == e->pmu_type) return f->attrs.v[i];
    for (size_t k = 0; k < f->pmus.n; k++)
        if (f->pmus.v[k].name && !strcmp(f->pmus.v[k].name, "cs_etm"))
            for (size_t i = 0; i < f->attrs.n; i++)
                if (f->attrs.v[i]->type == f->pmus.v[k].type) return f->attrs.v[i];
    return NULL;
}

static const ek_perf_etm_cpu *find_cpu(const ek_perf_file *f, uint32_t cpu)
{
    size_t lo = 0, hi = f->cpu_order.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->etm_cpus.v[f->cpu_order.v[mid]].cpu < cpu)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < f->cpu_order.n && f->etm_cpus.v[f->cpu_order.v[lo]].cpu == cpu)
        return &f->etm_cpus.v[f->cpu_order.v[lo]];
    return NULL;
}

static ek_perf_etm_cpu *cpu_block(ek_perf_file *f, uint32_t cpu)
{
    return (ek_perf_etm_cpu *)find_cpu(f, cpu);
}

static void apply_hw_ids(ek_perf_file *f)
{
    ek_perf_cs_etm *e = &f->etm;
    int first = 1;
    for (size_t i = 0; i < f->hwid.n; i++) {
        const ek_perf_hwid_rec *h = &f->hwid.v[i];
        if (HWID_MAJOR(h->hw_id) != 0) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_UNSUPPORTED, h->record,
                    (int64_t)h->offset, "AUX_OUTPUT_HW_ID version %u.%u not supported; ignored",
                    HWID_MAJOR(h->hw_id), HWID_MINOR(h->hw_id));
            continue;
        }
        unsigned minor = HWID_MINOR(h->hw_id);
        if (first) {
            e->hw_id_minor = minor;
            first = 0;
        } else if (minor != e->hw_id_minor) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_FORMAT, h->record,
                    (int64_t)h->offset,
                    "AUX_OUTPUT_HW_ID minor version %u differs from the first one (%u)", minor,
                    e->hw_id_minor);
        }
        if (!h->has_cpu) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_FORMAT, h->record,
                    (int64_t)h->offset,
                    "AUX_OUTPUT_HW_ID without a CPU in its sample_id trailer; ignored");
            continue;
        }
        unsigned id = HWID_TRACE_ID(h->hw_id);
        if (!trace_id_valid(id)) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_RANGE, h->record,
                    (int64_t)h->offset, "AUX_OUTPUT_HW_ID for CPU %u: trace ID 0x%x is invalid",
                    h->cpu, id);
            continue;
        }
        ek_perf_etm_cpu *c = cpu_block(f, h->cpu);
        if (!c) {
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_NOT_FOUND, h->record,
                    (int64_t)h->offset,
                    "AUX_OUTPUT_HW_ID for CPU %u, which has no cs_etm metadata; ignored", h->cpu);
            continue;
        }
        uint32_t sink = minor >= 1 ? HWID_SINK(h->hw_id) : 0;
        if (c->id_source == EK_TRACEID_HW_ID) {
            if (minor >= 1 && c->have_sink && c->sink_id != sink)
                pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_FORMAT, h->record,
                        (int64_t)h->offset,
                        "CPU %u moves from sink %u to sink %u; per-CPU sink changes are not "
                        "supported: the first sink is kept",
                        h->cpu, c->sink_id, sink);
            else if (c->cfg.trace_id != id)
                pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_FORMAT, h->record,
                        (int64_t)h->offset,
                        "CPU %u: trace ID 0x%x differs from the earlier 0x%x; the first is kept",
                        h->cpu, id, c->cfg.trace_id);
            continue;
        }
        c->id_source = EK_TRACEID_HW_ID;
        c->cfg.trace_id = (uint8_t)id;
        if (minor >= 1) {
            c->have_sink = 1;
            c->sink_id = sink;
        }
    }
}

/* IDs mapped twice within one map (global, or per sink) are reported. */
static void check_id_clashes(ek_perf_file *f)
{
    for (size_t a = 0; a < f->etm_cpus.n; a++)
        for (size_t b = a + 1; b < f->etm_cpus.n; b++) {
            const ek_perf_etm_cpu *x = &f->etm_cpus.v[a], *y = &f->etm_cpus.v[b];
            if (x->id_source == EK_TRACEID_NONE || y->id_source == EK_TRACEID_NONE) continue;
            if (x->cfg.trace_id != y->cfg.trace_id) continue;
            if (x->have_sink && y->have_sink && x->sink_id != y->sink_id) continue;
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.trace-id-clash", EK_ERR_FORMAT,
                    f->etm.info_record, (int64_t)y->block_offset,
                    "CPUs %u and %u both use trace ID 0x%x", x->cpu, y->cpu, x->cfg.trace_id);
        }
}

void pf_finish_cs_etm(ek_perf_file *f)
{
    ek_perf_cs_etm *e = &f->etm;
    e->cpus = f->etm_cpus.v;
    e->ncpus = f->etm_cpus.n;
    /* CPU number -> block, for O(log n) lookups (duplicates were dropped when parsing) */
    if (ek_vec_reserve(&f->cpu_order, f->etm_cpus.n) == 0) {
        for (size_t i = 0; i < f->etm_cpus.n; i++) {
            size_t j = i;
            while (j > 0 && f->etm_cpus.v[f->cpu_order.v[j - 1]].cpu > f->etm_cpus.v[i].cpu) {
                f->cpu_order.v[j] = f->cpu_order.v[j - 1];
                j--;
            }
            f->cpu_order.v[j] = i;
        }
        f->cpu_order.n = f->etm_cpus.n;
    }
    e->attr = find_cs_etm_attr(f);
    if (e->present && !e->attr && f->attrs.n)
        pf_diag(f, f->diag, EK_SEV_WARN, "perf.cs-etm-attr", EK_ERR_NOT_FOUND, -1, -1,
                "no event has the cs_etm PMU type %u; event options unknown", e->pmu_type);
    if (e->attr) {
        uint64_t c = e->config = e->attr->config;
        e->timestamp = !!(c & EK_CS_ETM_CFG_TIMESTAMP);
        e->contextid1 = !!(c & EK_CS_ETM_CFG_CONTEXTID1);
        e->contextid2 = !!(c & EK_CS_ETM_CFG_CONTEXTID2);
        e->retstack = !!(c & EK_CS_ETM_CFG_RETSTACK);
        e->cycacc = !!(c & EK_CS_ETM_CFG_CYCACC);
        e->branch_broadcast = !!(c & EK_CS_ETM_CFG_BRANCH_BROADCAST);
    }
    e->timeless = !e->timestamp;
    /* raw trace of a queue without a CPU decodes with the configuration every CPU shares */
    e->shared = e->ncpus ? &f->etm_cpus.v[f->cpu_order.n ? f->cpu_order.v[0] : 0] : NULL;
    for (size_t i = 0; e->shared && i < f->etm_cpus.n; i++)
        if (ek_perf_etm_cpu_decode_diff(e->shared, &f->etm_cpus.v[i], NULL)) e->shared = NULL;
    e->all_ts_virtual = e->ncpus > 0;
    for (size_t i = 0; i < f->etm_cpus.n; i++)
        if (f->etm_cpus.v[i].ts_source != 1) e->all_ts_virtual = 0;
    if (!e->present) {
        if (f->hwid.n)
            pf_diag(f, f->diag, EK_SEV_WARN, "perf.hw-id", EK_ERR_FORMAT, f->hwid.v[0].record,
                    (int64_t)f->hwid.v[0].offset,
                    "AUX_OUTPUT_HW_ID records without a cs_etm AUXTRACE_INFO");
        return;
    }
    e->have_hw_id = f->hwid.n > 0;
    if (e->have_hw_id) {
        apply_hw_ids(f);
        for (size_t i = 0; i < f->etm_cpus.n; i++)
            if (f->etm_cpus.v[i].id_source == EK_TRACEID_NONE) f->etm_cpus.v[i].cfg.trace_id = 0;
    } else {
        for (size_t i = 0; i < f->etm_cpus.n; i++) {
            ek_perf_etm_cpu *c = &f->etm_cpus.v[i];
            c->cfg.trace_id = c->meta_trace_id;
            if (trace_id_valid(c->meta_trace_id)) {
                c->id_source = EK_TRACEID_METADATA;
            } else {
                pf_diag(f, f->diag, EK_SEV_WARN, "perf.trace-id", EK_ERR_RANGE, e->info_record,
                        (int64_t)c->block_offset, "CPU %u: metadata trace ID 0x%x is invalid",
                        c->cpu, c->meta_trace_id);
            }
        }
    }
    check_id_clashes(f);
}

/* The fields of a CPU's block that change how its trace decodes: everything but the trace ID
 * (raw trace carries none) and TRCAUTHSTATUS / TS_SOURCE (they change no packet). */
int ek_perf_etm_cpu_decode_diff(const ek_perf_etm_cpu *a, const ek_perf_etm_cpu *b,
                                ek_perf_cfg_diff *d)
{
    ek_perf_cfg_diff x = {NULL, 0, 0};
#define DIFF(name, va, vb, pa, pb)                                                               \
    if ((pa) != (pb) || ((pa) && (va) != (vb))) {                                                \
        x.field = (name);                                                                        \
        x.a = (pa) ? (uint64_t)(va) : UINT64_MAX;                                                \
        x.b = (pb) ? (uint64_t)(vb) : UINT64_MAX;                                                \
        goto out;                                                                                \
    }
    DIFF("protocol", a->magic, b->magic, 1, 1);
    if (a->magic == EK_CS_ETM_MAGIC_ETMV3) {
        const ek_etm3_regs *ra = &a->cfg.regs.etm3, *rb = &b->cfg.regs.etm3;
        DIFF("ETMIDR", ra->etmidr, rb->etmidr, 1, 1);
        DIFF("ETMCR", ra->etmcr, rb->etmcr, 1, 1);
        DIFF("ETMCCER", ra->etmccer, rb->etmccer, 1, 1);
    } else {
        const ek_etm4_regs *ra = &a->cfg.regs.etm4, *rb = &b->cfg.regs.etm4;
        DIFF("TRCCONFIGR", ra->configr, rb->configr, !!(ra->present & EK_ETM4_HAVE_CONFIGR),
             !!(rb->present & EK_ETM4_HAVE_CONFIGR));
        static const char *const idr_name[14] = {
            "TRCIDR0", "TRCIDR1", "TRCIDR2",  "TRCIDR3",  "TRCIDR4",  "TRCIDR5",  "TRCIDR6",
            "TRCIDR7", "TRCIDR8", "TRCIDR9", "TRCIDR10", "TRCIDR11", "TRCIDR12", "TRCIDR13"};
        for (unsigned i = 0; i < 14; i++) {
            DIFF(idr_name[i], ra->idr[i], rb->idr[i], !!(ra->present & (1u << i)),
                 !!(rb->present & (1u << i)));
        }
        DIFF("TRCDEVARCH", ra->devarch, rb->devarch, !!(ra->present & EK_ETM4_HAVE_DEVARCH),
             !!(rb->present & EK_ETM4_HAVE_DEVARCH));
    }
#undef DIFF
out:
    if (d) *d = x;
    return x.field != NULL;
}

const ek_perf_cs_etm *ek_perf_cs_etm_get(const ek_perf_file *f)
{
    return &f->etm;
}

const ek_perf_etm_cpu *ek_perf_cs_etm_cpu(const ek_perf_file *f, uint32_t cpu)
{
    return find_cpu(f, cpu);
}
