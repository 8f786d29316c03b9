/* Branch and instruction samples from elements: Linux perf 6.1's cs-etm sample policy.
 *
 * perf turns decoder elements into "packets" (RANGE, DISCONTINUITY, EXCEPTION, EXCEPTION_RET)
 * and keeps two of them per trace source: the previous and the current. A branch sample is
 * "last instruction of the previous range -> first instruction of the current one" when the
 * previous range ended in a taken branch (or the previous packet was a discontinuity: "trace
 * begin"); a discontinuity after a range gives a "trace end" sample to address 0. Exceptions
 * and exception returns relabel the previous range (call / interrupt / syscall, return).
 * Instruction samples fall every `period` instructions inside ranges; with a last-branch stack
 * the stack of the most recent taken branches rides along, and it is flushed with a sample at
 * discontinuities and at the end of every block (perf's cs_etm__flush and cs_etm__end_block).
 * The names below follow perf's so that the two can be read side by side.
 */
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/synth.h"
#include "core/hot.h"

enum pkt_type { PKT_EMPTY = 0, PKT_RANGE, PKT_DISCONTINUITY, PKT_EXCEPTION, PKT_EXCEPTION_RET };

typedef struct pkt {
    int type;
    int isa;            /* ek_iset */
    uint64_t start, end;
    uint32_t instr_count;
    int taken;          /* last instruction is a taken branch */
    uint8_t last_size, last_type, last_sub, last_cond;
    uint32_t flags;
    uint32_t exc_num;
    uint64_t resume;    /* RANGE: preferred return address of the exception taken after it;
                         * EXCEPTION: its own (0: not in the trace) */
    uint64_t index;
} pkt;

struct ek_synth {
    ek_itrace opts;
    ek_protocol protocol;
    int32_t cpu;
    uint8_t trace_id;
    uint32_t queue;
    uint64_t kernel_start;
    ek_synth_io io;
    int no_insn;
    int32_t pid, tid;
    uint64_t time;
    int has_time;

    pkt slot[2];
    pkt *packet, *prev;
    uint64_t period_instructions;
    uint64_t run_insn; /* instructions since the last branches sample made (its ninsn) */

    /* last-branch ring: newest at lb_pos, going down (perf's layout) */
    ek_branch *lb_rb;
    ek_branch *lb_out;
    uint32_t lb_nr, lb_pos, lb_sz;

    uint64_t skip; /* s<N>: samples still to leave out, every kind together */
    ek_synth_stats st;
    ek_isa_cfg isa_cfg; /* how instructions are classified (every encoding of every A-profile
                           feature: perf's questions do not depend on the core) */
};

void ek_synth_config_init(ek_synth_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->protocol = EK_PROTO_ETMV4;
    cfg->cpu = -1;
    cfg->kernel_start = 1ull << 63;
}

int ek_synth_new(const ek_synth_config *cfg, ek_synth **out)
{
    *out = NULL;
    if (!cfg || !cfg->itrace || cfg->size < sizeof *cfg)
        return EK_ERR_ARG;
    ek_synth *s = calloc(1, sizeof *s);
    if (!s)
        return EK_ERR_NOMEM;
    s->opts = *cfg->itrace;
    if (s->opts.instructions && !s->opts.period)
        s->opts.period = 1;
    s->protocol = cfg->protocol;
    s->cpu = cfg->cpu;
    s->trace_id = cfg->trace_id;
    s->queue = cfg->queue;
    s->kernel_start = cfg->kernel_start ? cfg->kernel_start : 1ull << 63;
    s->io = cfg->io;
    s->no_insn = cfg->no_insn;
    s->pid = s->tid = -1;
    ek_isa_cfg_init(&s->isa_cfg, EK_ARCH_UNKNOWN, EK_PROFILE_UNKNOWN, 0);
    s->packet = &s->slot[0];
    s->prev = &s->slot[1];
    if (s->opts.last_branch) {
        s->lb_sz = s->opts.last_branch_sz ? s->opts.last_branch_sz : EK_ITRACE_DEFAULT_LAST_BRANCH_SZ;
        if (s->lb_sz > EK_ITRACE_MAX_LAST_BRANCH_SZ)
            s->lb_sz = EK_ITRACE_MAX_LAST_BRANCH_SZ;
        s->lb_rb = calloc(s->lb_sz, sizeof *s->lb_rb);
        s->lb_out = calloc(s->lb_sz, sizeof *s->lb_out);
        if (!s->lb_rb || !s->lb_out) {
            ek_synth_free(s);
            return EK_ERR_NOMEM;
        }
    }
    s->skip = s->opts.initial_skip;
    *out = s;
    return 0;
}

void ek_synth_free(ek_synth *s)
{
    if (!s)
        return;
    free(s->lb_rb);
    free(s->lb_out);
    free(s);
}

void ek_synth_set_thread(ek_synth *s, int32_t pid, int32_t tid)
{
    s->pid = pid;
    s->tid = tid;
}

void ek_synth_set_time(ek_synth *s, uint64_t time)
{
    s->time = time;
    s->has_time = 1;
}

void ek_synth_get_stats(const ek_synth *s, ek_synth_stats *out)
{
    *out = s->st;
}

/* ---- code access --------------------------------------------------------------------------- */

static size_t mem_read(ek_synth *s, uint64_t addr, void *buf, size_t len)
{
    if (!s->io.read)
        return 0;
    return s->io.read(s->io.ctx, addr, buf, len);
}

/* The size of the T32 instruction at addr (the classifier's answer). As perf, an unreadable
 * halfword counts as 2 bytes. */
static unsigned t32_size(ek_synth *s, uint64_t addr)
{
    uint8_t b[2] = {0, 0};
    mem_read(s, addr, b, 2);
    return ek_isa_t32_size((uint16_t)(b[0] | b[1] << 8));
}

static uint8_t cpumode_of(const ek_synth *s, uint64_t addr)
{
    return addr >= s->kernel_start ? EK_CPUMODE_KERNEL : EK_CPUMODE_USER;
}

static uint64_t first_executed(const pkt *p)
{
    return p->type == PKT_DISCONTINUITY ? 0 : p->start;
}

static uint64_t last_executed(const pkt *p)
{
    return p->type == PKT_DISCONTINUITY ? 0 : p->end - p->last_size;
}

static uint64_t instr_addr(ek_synth *s, const pkt *p, uint64_t offset)
{
    if (p->isa == EK_ISET_T32) {
        uint64_t addr = p->start;
        while (offset--)
            addr += t32_size(s, addr);
        return addr;
    }
    return p->start + offset * 4;
}

/* Is the instruction that ends at end_addr a supervisor call? The bytes are read as perf
 * reads them (2 for T32, 4 for A32 and A64: perf's cs_etm__is_svc_instr), the question goes to
 * the classifier (for every encoding, the same answer as perf's masks: checked exhaustively). */
static int is_svc(ek_synth *s, const pkt *p, uint64_t end_addr)
{
    uint8_t b[4] = {0, 0, 0, 0};
    const unsigned n = p->isa == EK_ISET_T32 ? 2 : 4;
    ek_isa isa;
    unsigned kind;
    switch (p->isa) {
    case EK_ISET_T32:
        isa = EK_ISA_T32;
        kind = EK_K_T32_SVC;
        break;
    case EK_ISET_A32:
        isa = EK_ISA_A32;
        kind = EK_K_A32_SVC;
        break;
    case EK_ISET_A64:
        isa = EK_ISA_A64;
        kind = EK_K_A64_SVC;
        break;
    default:
        return 0;
    }
    if (mem_read(s, end_addr - n, b, n) < n) return 0;
    const uint32_t w =
        (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    ek_insn in;
    ek_isa_classify(w, isa, end_addr - n, &s->isa_cfg, &in);
    return in.kind == kind;
}

/* ---- exceptions (perf's numbering of ETMv3 and ETMv4/ETE exception types) ------------------ */

enum {
    V3_DEBUG_HALT = 1, V3_SMC = 2, V3_HYP = 3, V3_ASYNC_DATA_ABORT = 4, V3_JAZELLE_THUMBEE = 5,
    V3_PE_RESET = 8, V3_UNDEFINED_INSTR = 9, V3_SVC = 10, V3_PREFETCH_ABORT = 11,
    V3_DATA_FAULT = 12, V3_GENERIC = 13, V3_IRQ = 14, V3_FIQ = 15,
};
enum {
    V4_RESET = 0, V4_DEBUG_HALT = 1, V4_CALL = 2, V4_TRAP = 3, V4_SYSTEM_ERROR = 4,
    V4_INST_DEBUG = 6, V4_DATA_DEBUG = 7, V4_ALIGNMENT = 10, V4_INST_FAULT = 11,
    V4_DATA_FAULT = 12, V4_IRQ = 14, V4_FIQ = 15, V4_END = 31,
};

static int is_v3(const ek_synth *s)
{
    return s->protocol == EK_PROTO_ETMV3 || s->protocol == EK_PROTO_PTM;
}

static uint32_t exception_flags(ek_synth *s)
{
    uint32_t n = s->packet->exc_num;
    const pkt *prev = s->prev;
    if (is_v3(s)) {
        if (n == V3_SVC)
            return EK_SF_BRANCH | EK_SF_CALL | EK_SF_SYSCALLRET;
        if (n == V3_DEBUG_HALT || n == V3_ASYNC_DATA_ABORT || n == V3_PE_RESET || n == V3_IRQ ||
            n == V3_FIQ)
            return EK_SF_BRANCH | EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT;
        if (n == V3_SMC || n == V3_HYP || n == V3_JAZELLE_THUMBEE || n == V3_UNDEFINED_INSTR ||
            n == V3_PREFETCH_ABORT || n == V3_DATA_FAULT || n == V3_GENERIC)
            return EK_SF_BRANCH | EK_SF_CALL | EK_SF_INTERRUPT;
        return 0;
    }
    int svc = n == V4_CALL && is_svc(s, prev, prev->end);
    if (svc)
        return EK_SF_BRANCH | EK_SF_CALL | EK_SF_SYSCALLRET;
    if (n == V4_RESET || n == V4_DEBUG_HALT || n == V4_SYSTEM_ERROR || n == V4_INST_DEBUG ||
        n == V4_DATA_DEBUG || n == V4_IRQ || n == V4_FIQ)
        return EK_SF_BRANCH | EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT;
    if (n == V4_TRAP || n == V4_ALIGNMENT || n == V4_INST_FAULT || n == V4_DATA_FAULT ||
        n == V4_CALL || (n > V4_FIQ && n <= V4_END))
        return EK_SF_BRANCH | EK_SF_CALL | EK_SF_INTERRUPT;
    return 0;
}

/* perf's cs_etm__set_sample_flags, run on every new packet before it is used. */
EK_HOT void set_sample_flags(ek_synth *s)
{
    pkt *p = s->packet, *prev = s->prev;
    switch (p->type) {
    case PKT_RANGE:
        if (p->last_type == EK_ITYPE_BR && p->last_sub == EK_ISUB_NONE) {
            p->flags = EK_SF_BRANCH;
            if (p->last_cond)
                p->flags |= EK_SF_CONDITIONAL;
        }
        if (p->last_type == EK_ITYPE_BR && p->last_sub == EK_ISUB_BR_LINK)
            p->flags = EK_SF_BRANCH | EK_SF_CALL;
        if (p->last_type == EK_ITYPE_BR_INDIRECT && p->last_sub == EK_ISUB_BR_LINK)
            p->flags = EK_SF_BRANCH | EK_SF_CALL;
        if (p->last_type == EK_ITYPE_BR_INDIRECT && p->last_sub == EK_ISUB_V7_IMPLIED_RET)
            p->flags = EK_SF_BRANCH | EK_SF_RETURN;
        if (p->last_type == EK_ITYPE_BR_INDIRECT && p->last_sub == EK_ISUB_NONE)
            p->flags = EK_SF_BRANCH | EK_SF_RETURN;
        if (p->last_type == EK_ITYPE_BR_INDIRECT && p->last_sub == EK_ISUB_V8_RET)
            p->flags = EK_SF_BRANCH | EK_SF_RETURN;
        if (prev->type == PKT_DISCONTINUITY)
            prev->flags |= EK_SF_BRANCH | EK_SF_TRACE_BEGIN;
        if (prev->flags == (EK_SF_BRANCH | EK_SF_RETURN | EK_SF_INTERRUPT) &&
            is_svc(s, p, p->start))
            prev->flags = EK_SF_BRANCH | EK_SF_RETURN | EK_SF_SYSCALLRET;
        break;
    case PKT_DISCONTINUITY:
        if (prev->type == PKT_RANGE)
            prev->flags |= EK_SF_BRANCH | EK_SF_TRACE_END;
        break;
    case PKT_EXCEPTION:
        p->flags = exception_flags(s);
        if (prev->type == PKT_RANGE) {
            prev->flags = p->flags;
            /* the first exception after the range: a second one before any instruction
             * returns to the first one's vector, not to the code after the range */
            if (!prev->resume)
                prev->resume = p->resume;
        }
        break;
    case PKT_EXCEPTION_RET:
        if (prev->type == PKT_RANGE)
            prev->flags = EK_SF_BRANCH | EK_SF_RETURN | EK_SF_INTERRUPT;
        break;
    default:
        break;
    }
}

/* ---- sample output ------------------------------------------------------------------------- */

static void copy_insn(ek_synth *s, const pkt *p, ek_sample *smp)
{
    if (p->type == PKT_DISCONTINUITY || s->no_insn) {
        smp->insn_len = 0;
        return;
    }
    smp->insn_len = p->isa == EK_ISET_T32 ? (uint8_t)t32_size(s, smp->ip) : 4;
    if (mem_read(s, smp->ip, smp->insn, smp->insn_len) < smp->insn_len)
        memset(smp->insn, 0, sizeof smp->insn);
}

static void sample_base(ek_synth *s, ek_sample *smp)
{
    /* every field set one by one: a memset of the whole sample became a `rep stos`, whose
     * start-up cost was half of a branch sample's time */
    smp->kind = 0;
    smp->cpumode = 0;
    smp->insn_len = 0;
    smp->trace_id = s->trace_id;
    smp->flags = 0;
    smp->pid = s->pid;
    smp->tid = s->tid;
    smp->cpu = s->cpu;
    smp->queue = s->queue;
    smp->ip = smp->addr = smp->resume = smp->period = 0;
    smp->time = s->time;
    smp->has_time = s->has_time;
    smp->index = s->packet->index;
    memset(smp->insn, 0, sizeof smp->insn);
    smp->nbranches = 0;
    smp->branches = NULL;
    smp->isub = smp->isize = 0;
    smp->ninsn = 0;
}

static int deliver(ek_synth *s, ek_sample *smp)
{
    if (smp->kind == EK_SAMPLE_BRANCHES)
        s->st.branches++;
    else
        s->st.instructions++;
    if (s->skip) {
        s->skip--;
        return 0;
    }
    return s->io.sample ? s->io.sample(s->io.ctx, smp) : 0;
}

static int synth_instruction_sample(ek_synth *s, uint64_t addr, uint64_t period)
{
    ek_sample smp;
    sample_base(s, &smp);
    smp.kind = EK_SAMPLE_INSTRUCTIONS;
    smp.ip = addr;
    smp.cpumode = cpumode_of(s, addr);
    smp.period = period;
    smp.flags = s->prev->flags;
    copy_insn(s, s->packet, &smp);
    if (s->opts.last_branch) {
        smp.nbranches = s->lb_nr;
        smp.branches = s->lb_out;
    }
    return deliver(s, &smp);
}

/* c / r: the branches perf's Intel PT decoder keeps for them (intel-pt.c, branches_filter):
 * calls, asynchronous branches and trace ends; returns and trace begins */
static int branch_wanted(const ek_synth *s, uint32_t flags)
{
    uint32_t want = 0;
    if (s->opts.calls) want |= EK_SF_CALL | EK_SF_ASYNC | EK_SF_TRACE_END;
    if (s->opts.returns) want |= EK_SF_RETURN | EK_SF_TRACE_BEGIN;
    return !want || (flags & want);
}

EK_HOT int synth_branch_sample(ek_synth *s)
{
    ek_branch one;
    const pkt *prev = s->prev;
    /* the instructions of the ranges since the last branch, this one's included: counted
     * for every branch made, also one --itrace's c/r leaves out */
    uint64_t run = s->run_insn;
    s->run_insn = 0;
    if (!branch_wanted(s, prev->flags))
        return 0;
    ek_sample smp;
    sample_base(s, &smp);
    smp.kind = EK_SAMPLE_BRANCHES;
    smp.ip = last_executed(prev);
    smp.cpumode = cpumode_of(s, smp.ip);
    smp.addr = first_executed(s->packet);
    smp.period = 1;
    smp.flags = prev->flags;
    smp.resume = prev->resume;
    smp.ninsn = run;
    if (prev->type == PKT_RANGE) {
        smp.isub = prev->last_sub;
        smp.isize = prev->last_size;
    }
    if (!s->no_insn)
        copy_insn(s, prev, &smp);
    if (s->opts.last_branch) {
        one.from = smp.ip;
        one.to = smp.addr;
        smp.nbranches = 1;
        smp.branches = &one;
    }
    return deliver(s, &smp);
}

/* ---- last-branch stack --------------------------------------------------------------------- */

static void copy_last_branch_rb(ek_synth *s)
{
    uint32_t nr = s->lb_sz - s->lb_pos;
    s->lb_nr = s->lb_nr > s->lb_sz ? s->lb_sz : s->lb_nr;
    if (!s->lb_nr)
        return;
    /* the ring holds lb_nr valid entries starting at lb_pos (newest) and wrapping */
    memcpy(&s->lb_out[0], &s->lb_rb[s->lb_pos], sizeof(ek_branch) * nr);
    if (s->lb_nr >= s->lb_sz)
        memcpy(&s->lb_out[nr], &s->lb_rb[0], sizeof(ek_branch) * s->lb_pos);
}

static void update_last_branch_rb(ek_synth *s)
{
    if (!s->lb_pos)
        s->lb_pos = s->lb_sz;
    s->lb_pos--;
    s->lb_rb[s->lb_pos].from = last_executed(s->prev);
    s->lb_rb[s->lb_pos].to = first_executed(s->packet);
    if (s->lb_nr < s->lb_sz)
        s->lb_nr++;
}

static void reset_last_branch_rb(ek_synth *s)
{
    s->lb_pos = 0;
    s->lb_nr = 0;
}

/* ---- the packet handlers ------------------------------------------------------------------- */

static void packet_swap(ek_synth *s)
{
    pkt *t = s->packet;
    s->packet = s->prev;
    s->prev = t;
}

EK_HOT int do_sample(ek_synth *s)
{
    int ret;
    uint64_t instrs_prev = s->period_instructions;
    uint64_t period = s->opts.period;
    s->period_instructions += s->packet->instr_count;

    if (s->opts.last_branch && s->prev->type == PKT_RANGE && s->prev->taken)
        update_last_branch_rb(s);

    if (s->opts.instructions && s->period_instructions >= period) {
        uint64_t offset = period - instrs_prev;
        if (s->opts.last_branch)
            copy_last_branch_rb(s);
        while (s->period_instructions >= period) {
            uint64_t addr = instr_addr(s, s->packet, offset - 1);
            if ((ret = synth_instruction_sample(s, addr, period)))
                return ret;
            offset += period;
            s->period_instructions -= period;
        }
    }

    if (s->opts.branches) {
        if (s->prev->type == PKT_RANGE) s->run_insn += s->prev->instr_count;
        int gen = s->prev->type == PKT_DISCONTINUITY ||
                  (s->prev->type == PKT_RANGE && s->prev->taken);
        if (gen && (ret = synth_branch_sample(s)))
            return ret;
    }
    packet_swap(s);
    return 0;
}

static void do_exception(ek_synth *s)
{
    if (s->prev->type == PKT_RANGE)
        s->prev->taken = 1;
}

static int do_flush(ek_synth *s)
{
    int ret = 0;
    if (s->prev->type == PKT_EMPTY)
        goto swap;
    if (s->opts.last_branch && s->opts.instructions && s->prev->type == PKT_RANGE) {
        copy_last_branch_rb(s);
        if ((ret = synth_instruction_sample(s, last_executed(s->prev), s->period_instructions)))
            return ret;
        s->period_instructions = 0;
    }
    if (s->opts.branches && s->prev->type == PKT_RANGE) {
        s->run_insn += s->prev->instr_count;
        if ((ret = synth_branch_sample(s)))
            return ret;
    }
swap:
    packet_swap(s);
    if (s->opts.last_branch)
        reset_last_branch_rb(s);
    return ret;
}

int ek_synth_end_block(ek_synth *s)
{
    int ret;
    if (s->opts.last_branch && s->opts.instructions && s->prev->type == PKT_RANGE) {
        copy_last_branch_rb(s);
        if ((ret = synth_instruction_sample(s, last_executed(s->prev), s->period_instructions)))
            return ret;
        s->period_instructions = 0;
    }
    return 0;
}

static void new_packet(ek_synth *s, int type, const ek_elem *e)
{
    pkt *p = s->packet;
    memset(p, 0, sizeof *p);
    p->type = type;
    p->isa = EK_ISET_UNKNOWN;
    p->exc_num = UINT32_MAX;
    p->index = e->index;
}

static int handle(ek_synth *s)
{
    set_sample_flags(s);
    switch (s->packet->type) {
    case PKT_RANGE:
        return do_sample(s);
    case PKT_EXCEPTION:
    case PKT_EXCEPTION_RET:
        do_exception(s);
        return 0;
    case PKT_DISCONTINUITY:
        s->st.discontinuities++;
        return do_flush(s);
    default:
        return 0;
    }
}

int ek_synth_elem(ek_synth *s, const ek_elem *e)
{
    switch (e->type) {
    case EK_ELEM_NO_SYNC:
    case EK_ELEM_TRACE_ON:
    case EK_ELEM_EO_TRACE:
        new_packet(s, PKT_DISCONTINUITY, e);
        return handle(s);
    case EK_ELEM_ADDR_NACC:
    case EK_ELEM_I_RANGE_NOPATH:
        /* code we could not follow: the decodable trace stops here */
        s->st.gaps++;
        new_packet(s, PKT_DISCONTINUITY, e);
        return handle(s);
    case EK_ELEM_INSTR_RANGE: {
        /* the most frequent element: the packet is filled field by field (no memset) and
         * handled directly (handle() for a range) */
        pkt *p = s->packet;
        p->type = PKT_RANGE;
        p->isa = e->isa == EK_ISET_A64 || e->isa == EK_ISET_A32 || e->isa == EK_ISET_T32
                     ? e->isa
                     : EK_ISET_UNKNOWN;
        p->start = e->st_addr;
        p->end = e->en_addr;
        p->instr_count = e->num_instr;
        p->last_type = e->last_i_type;
        p->last_sub = e->last_i_sub;
        p->last_cond = (e->flags & EK_ELEMF_LAST_COND) != 0;
        p->last_size = e->last_i_size;
        p->taken = (e->last_i_type == EK_ITYPE_BR || e->last_i_type == EK_ITYPE_BR_INDIRECT) &&
                   (e->flags & EK_ELEMF_LAST_EXEC);
        p->flags = 0;
        p->exc_num = UINT32_MAX;
        p->resume = 0;
        p->index = e->index;
        s->st.ranges++;
        s->st.instr += e->num_instr;
        set_sample_flags(s);
        return do_sample(s);
    }
    case EK_ELEM_EXCEPTION:
        new_packet(s, PKT_EXCEPTION, e);
        s->packet->exc_num = e->u.exception_number;
        if (e->flags & EK_ELEMF_EXCEP_RET_ADDR)
            s->packet->resume = e->en_addr;
        return handle(s);
    case EK_ELEM_EXCEPTION_RET:
        new_packet(s, PKT_EXCEPTION_RET, e);
        return handle(s);
    default:
        return 0;
    }
}
