/* etmkit inject: see include/etmkit/inject.h. */
#include "etmkit/inject.h"

#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"

#define INSTR_ID_OFFSET            1000000000ull /* perf's cs_etm__synth_events */
#define PERF_TYPE_HARDWARE         0u
#define PERF_COUNT_HW_INSTRUCTIONS 1u
#define BRANCH_PREDICTED           2ull /* perf_branch_entry: mispred bit 0, predicted bit 1 */
#define MAX_BRANCHES               1024

typedef struct inj {
    ek_pw *w;
    uint64_t sample_type;
    uint64_t id;
    ek_pw_branch br[MAX_BRANCHES];
    ek_inject_stats *st;
} inj;

unsigned ek_inject_writer_flags(const ek_perf_file *in)
{
    return ek_perf_header(in)->swapped ? EK_PW_BIG_ENDIAN : 0;
}

static int keep_sideband(uint32_t type)
{
    switch (type) {
    case EK_PERF_RECORD_MMAP:
    case EK_PERF_RECORD_MMAP2:
    case EK_PERF_RECORD_COMM:
    case EK_PERF_RECORD_FORK:
    case EK_PERF_RECORD_EXIT:
    case EK_PERF_RECORD_SWITCH:
    case EK_PERF_RECORD_SWITCH_CPU_WIDE:
    case EK_PERF_RECORD_LOST:
    case EK_PERF_RECORD_TIME_CONV: return 1;
    default: return 0; /* AUX, ITRACE_START, AUX_OUTPUT_HW_ID: the AUX area's */
    }
}

static int on_sample(void *ctx, const ek_sample *s, const ek_script_resolver *r)
{
    (void)r;
    inj *j = ctx;
    if (s->kind != EK_SAMPLE_INSTRUCTIONS) return 0;
    ek_pw_sample p;
    memset(&p, 0, sizeof(p));
    p.ip = s->ip;
    p.pid = (uint32_t)s->pid;
    p.tid = (uint32_t)s->tid;
    p.time = s->has_time ? s->time : 0;
    p.id = p.stream_id = j->id;
    p.cpu = (uint32_t)s->cpu;
    p.period = s->period;
    size_t n = s->nbranches < MAX_BRANCHES ? s->nbranches : MAX_BRANCHES;
    for (size_t i = 0; i < n; i++) {
        j->br[i].from = s->branches[i].from;
        j->br[i].to = s->branches[i].to;
        j->br[i].flags = BRANCH_PREDICTED;
    }
    p.branches = j->br;
    p.nbranches = n;
    int rc = ek_pw_sample_rec(j->w, s->cpumode, j->sample_type, &p);
    if (!rc) j->st->samples++;
    return rc;
}

/* A feature section of the recording, NULL when it lies outside the file (damage). */
static const uint8_t *feature_bytes(const ek_perf_file *in, const ek_perf_feature_section *fs)
{
    size_t fsize;
    const uint8_t *bytes = ek_perf_bytes(in, &fsize);
    if (fs->offset > fsize || fs->size > fsize - fs->offset) return NULL;
    return bytes + fs->offset;
}

/* File mode: the recording's Linux features but the AUXTRACE index, and BRANCH_STACK (sections
 * the writer keeps until it closes). */
static int file_features(const ek_perf_file *in, ek_pw *out)
{
    int have_bs = 0, rc = 0;
    for (size_t i = 0; i < ek_perf_nfeature_sections(in); i++) {
        const ek_perf_feature_section *fs = ek_perf_feature_section_at(in, i);
        const uint8_t *p = feature_bytes(in, fs);
        if (fs->bit >= 32 || fs->bit == EK_PERF_FEAT_AUXTRACE || !p) continue;
        if (fs->bit == EK_PERF_FEAT_BRANCH_STACK) have_bs = 1;
        ek_pw_feature_begin(out, fs->bit);
        ek_pw_bytes(out, p, (size_t)fs->size);
        rc = ek_pw_feature_end(out);
        if (rc) return rc;
    }
    if (!have_bs) {
        ek_pw_feature_begin(out, EK_PERF_FEAT_BRANCH_STACK);
        rc = ek_pw_feature_end(out);
    }
    return rc;
}

#define PERF61_HEADER_LAST_FEATURE 32 /* perf 6.1's end-of-features mark in pipe mode */

/* Pipe mode, as perf 6.1's pipe mode writes it: HEADER_FEATURE records right after the
 * attributes for the features it synthesizes (feat_ops with .synthesize), an end mark
 * (feature HEADER_LAST_FEATURE, no data: perf report waits for it), then the build-ids as
 * HEADER_BUILD_ID records. Not TRACING_DATA, BUILD_ID, BRANCH_STACK, AUXTRACE, STAT, CACHE,
 * DIR_FORMAT and HYBRID_TOPOLOGY as features: perf reads some of those from its input
 * descriptor, which in pipe mode is the stream itself (a BUILD_ID feature record would make it
 * read the records that follow as build-ids); nor a section too large for a record (perf's pipe
 * mode leaves those out too). */
static int pipe_features(const ek_perf_file *in, ek_pw *out)
{
    const ek_perf_feature_section *build_ids = NULL;
    for (size_t i = 0; i < ek_perf_nfeature_sections(in); i++) {
        const ek_perf_feature_section *fs = ek_perf_feature_section_at(in, i);
        const uint8_t *p = feature_bytes(in, fs);
        if (!p) continue;
        switch (fs->bit) {
        case EK_PERF_FEAT_BUILD_ID:
            if (!build_ids) build_ids = fs;
            break;
        case EK_PERF_FEAT_HOSTNAME:
        case EK_PERF_FEAT_OSRELEASE:
        case EK_PERF_FEAT_VERSION:
        case EK_PERF_FEAT_ARCH:
        case EK_PERF_FEAT_NRCPUS:
        case EK_PERF_FEAT_CPUDESC:
        case EK_PERF_FEAT_CPUID:
        case EK_PERF_FEAT_TOTAL_MEM:
        case EK_PERF_FEAT_CMDLINE:
        case EK_PERF_FEAT_EVENT_DESC:
        case EK_PERF_FEAT_CPU_TOPOLOGY:
        case EK_PERF_FEAT_NUMA_TOPOLOGY:
        case EK_PERF_FEAT_PMU_MAPPINGS:
        case EK_PERF_FEAT_GROUP_DESC:
        case EK_PERF_FEAT_SAMPLE_TIME:
        case EK_PERF_FEAT_MEM_TOPOLOGY:
        case EK_PERF_FEAT_CLOCKID:
        case EK_PERF_FEAT_BPF_PROG_INFO:
        case EK_PERF_FEAT_BPF_BTF:
        case EK_PERF_FEAT_COMPRESSED:
        case EK_PERF_FEAT_CPU_PMU_CAPS:
        case EK_PERF_FEAT_CLOCK_DATA:
        case EK_PERF_FEAT_PMU_CAPS: {
            /* a record: header, feat_id, the section padded to 8 bytes, at most 65535 */
            if (fs->size > 65528 - 16) break;
            ek_pw_feature_begin(out, fs->bit);
            ek_pw_bytes(out, p, (size_t)fs->size);
            int rc = ek_pw_feature_end(out);
            if (rc) return rc;
            break;
        }
        default: break;
        }
    }
    ek_pw_feature_begin(out, PERF61_HEADER_LAST_FEATURE);
    int rc = ek_pw_feature_end(out);
    if (rc || !build_ids) return rc;
    /* perf_record_header_build_id entries, each header.size long (header.type unused) */
    const int swap = ek_perf_header(in)->swapped;
    const uint8_t *p = feature_bytes(in, build_ids);
    for (uint64_t at = 0; at + 8 <= build_ids->size;) {
        const uint8_t *e = p + at;
        uint16_t misc = swap ? (uint16_t)(e[4] << 8 | e[5]) : (uint16_t)(e[5] << 8 | e[4]);
        uint16_t size = swap ? (uint16_t)(e[6] << 8 | e[7]) : (uint16_t)(e[7] << 8 | e[6]);
        if (size < 8 || size > build_ids->size - at) break; /* damaged: the rest is lost */
        ek_pw_begin(out, EK_PERF_RECORD_HEADER_BUILD_ID, misc);
        ek_pw_bytes(out, e + 8, size - 8u);
        rc = ek_pw_end(out);
        if (rc) return rc;
        at += size;
    }
    return 0;
}

int ek_inject(const ek_perf_file *in, ek_session *s, const ek_itrace *itrace, ek_pw *out,
              ek_inject_stats *st)
{
    ek_inject_stats dummy;
    if (!st) st = &dummy;
    memset(st, 0, sizeof(*st));
    if (!itrace || !itrace->instructions || !itrace->last_branch) return EK_ERR_ARG;
    const ek_perf_cs_etm *cs = ek_perf_cs_etm_get(in);
    const ek_perf_attr *etm = cs->attr;
    if (!etm && ek_perf_nattrs(in)) etm = ek_perf_attr_at(in, 0);
    if (!etm) return EK_ERR_FORMAT;

    /* attributes: the recording's, then the instructions event */
    for (size_t i = 0; i < ek_perf_nattrs(in); i++) {
        int rc = ek_pw_attr(out, ek_perf_attr_at(in, i));
        if (rc) return rc;
    }
    const uint64_t mask = EK_PERF_SAMPLE_IP | EK_PERF_SAMPLE_TID | EK_PERF_SAMPLE_TIME |
                          EK_PERF_SAMPLE_ADDR | EK_PERF_SAMPLE_ID | EK_PERF_SAMPLE_CPU |
                          EK_PERF_SAMPLE_PERIOD | EK_PERF_SAMPLE_IDENTIFIER; /* PERF_SAMPLE_MASK */
    ek_perf_attr a = *etm;
    a.type = PERF_TYPE_HARDWARE;
    a.size = etm->size >= 64 ? etm->size : 128;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.config1 = a.config2 = a.config3 = 0;
    a.sample_period = itrace->period;
    a.sample_type = (etm->sample_type & mask) | EK_PERF_SAMPLE_IP | EK_PERF_SAMPLE_TID |
                    EK_PERF_SAMPLE_PERIOD | EK_PERF_SAMPLE_BRANCH_STACK;
    /* perf drops TIME for a recording without time stamps (its samples then come out in
     * file order), and removes the cs_etm event from the output. Here the recording's events
     * stay (their sideband keeps the IDs it names), and perf refuses events whose ID positions
     * differ ("non matching sample_type"): without IDENTIFIER (simpleperf's recordings) TIME
     * stays, the samples then carrying the AUX records' times */
    if ((cs->timeless || itrace->timeless) && (etm->sample_type & EK_PERF_SAMPLE_IDENTIFIER))
        a.sample_type &= ~EK_PERF_SAMPLE_TIME;
    /* perf 6.1 also sets PERF_SAMPLE_BRANCH_HW_INDEX and writes hw_idx -1 before the entries;
     * AutoFDO 0.19's reader (quipper) does not know that word and refuses the file ("Read/
     * skipped 1600 bytes, expected 1608 bytes"). perf reads stacks without it as well. */
    a.branch_sample_type = 0;
    /* exclude_*, sample_id_all kept; the AUX-only bits (disabled, inherit, enable_on_exec,
     * aux_output) are not the synthesized event's */
    a.flags = etm->flags &
              ((0xfull << 4) | EK_PERF_ATTR_FLAG_SAMPLE_ID_ALL | EK_PERF_ATTR_FLAG_USE_CLOCKID);
    uint64_t id = (etm->nids ? etm->ids[0] : 0) + INSTR_ID_OFFSET;
    a.ids = &id;
    a.nids = 1;
    int rc = ek_pw_attr(out, &a);
    if (rc) return rc;
    rc = ek_pw_is_pipe(out) ? pipe_features(in, out) : file_features(in, out);
    if (rc) return rc;

    /* sideband, as recorded */
    ek_perf_iter *it;
    rc = ek_perf_iter_new(in, EK_PERF_ITER_SIDEBAND, NULL, &it);
    if (rc) return rc;
    ek_perf_record r;
    while ((rc = ek_perf_iter_next(it, &r)) == 0) {
        if (!keep_sideband(r.type) || r.damaged || r.size < 8) continue;
        ek_pw_begin(out, r.type, r.misc);
        ek_pw_bytes(out, r.raw + 8, r.size - 8u);
        rc = ek_pw_end_nopad(out);
        if (rc) break;
        st->sideband++;
    }
    ek_perf_iter_free(it);
    if (rc != EK_ERR_EOS) return rc ? rc : EK_ERR_FORMAT;

    /* the samples */
    inj *j = malloc(sizeof(*j));
    if (!j) return EK_ERR_NOMEM;
    j->w = out;
    j->sample_type = a.sample_type;
    j->id = id;
    j->st = st;
    rc = ek_session_samples(s, on_sample, j);
    free(j);
    return rc;
}
