/* `etmkit gen` scenarios for Armv7 trace units: armv7-ptm (PFT 1.1) and armv7-etm3 (ETMv3.5).
 *
 * One CPU runs the A32/T32 program model of v7prog.c as process simv7 (pid 1000); its trace unit
 * (v7.h encoders) writes through a CoreSight formatter (trace ID 0x10) into an ETB-like sink
 * that perf record copies once, at the end, into one AUX record of a per-thread session. The
 * recording is what perf 6.1 writes for such a system: the cs_etm attribute (config: the ETMCR
 * bits cycle-accurate 12, context ID 14, timestamp 28, return stack 29) and the dummy one,
 * AUXTRACE_INFO version 1 with a CS_ETMV3 block (magic 0x3030303030303030: ETMCR, ETMTRACEIDR,
 * ETMCCER, ETMIDR; PTM and ETMv3 are told apart by ETMIDR as perf does), COMM, MMAP2 of
 * /usr/bin/simv7 (an ELF32 Arm executable written into symfs, its code mapped at 0), ITRACE_START,
 * AUX, AUXTRACE, EXIT, and the features OSRELEASE, VERSION, ARCH (armv7l), NRCPUS,
 * PMU_MAPPINGS and the AUXTRACE index.
 *
 * Ground truth: truth.branches.tsv (every branch and exception that ran, with the instruction
 * sets before and after) and truth.summary. The
 * perf-script ground truth (expected-branches.txt) and perf 6.1's prediction are not written
 * for these scenarios: the sample policy of truth.c is modelled for AArch64 only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "etmkit/elem.h"
#include "etmkit/etmkit.h"
#include "etmkit/isa.h"
#include "etmkit/perf.h"
#include "etmkit/perf_write.h"
#include "etmkit/sim.h"
#include "sim/sim.h"
#include "sim/v7.h"

#define PMU_TYPE 12u
#define PID      1000
#define TID2     1001 /* a second thread of the process (the IRQ handler switches to it) */
#define TRACE_ID 0x10u
#define CODE_OFF 0x10000u /* file offset of the code in the ELF */
#define EXE_PATH "/usr/bin/simv7"
#define T0       1000000000ull /* sample times: the simulation starts at 1 s */

typedef struct v7_scn {
    const char *name, *desc;
    int ptm;
    ek_etm3_regs regs;
    uint64_t trace_default;
} v7_scn;

static const v7_scn scns[] = {
    {"armv7-ptm",
     "Armv7 (Cortex-A15-like): an A32/T32 program (calls, returns, BLX/BX interworking, a T32 IT "
     "block, IRQs, context ID changes) traced by a PTM (PFT 1.1: return stack, timestamps, "
     "context ID) into an ETB; perf.data with CS_ETMV3 metadata",
     1,
     {0x3000C000u, 0x411CF311u, 0x008008EAu, TRACE_ID},
     64 << 10},
    {"armv7-etm3",
     "Armv7 (Cortex-A7/R-like): the same A32/T32 program traced by an ETMv3.5 (cycle-accurate, "
     "64-bit timestamps, context ID, VMID) into an ETB; perf.data with CS_ETMV3 metadata",
     0,
     {0x1000D000u, 0x410CF250u, 0x344008F2u, TRACE_ID},
     64 << 10},
};

#define NV7 (sizeof scns / sizeof scns[0])

size_t sim_v7_scenario_count(void)
{
    return NV7;
}

const char *sim_v7_scenario_name(size_t i)
{
    return i < NV7 ? scns[i].name : NULL;
}

const char *sim_v7_scenario_desc(size_t i)
{
    return i < NV7 ? scns[i].desc : NULL;
}

int sim_v7_find(const char *name)
{
    for (size_t i = 0; i < NV7; i++)
        if (!strcmp(scns[i].name, name)) return (int)i;
    return -1;
}

/* ------------------------------------------------------------------ files */

typedef struct fbuf {
    uint8_t *p;
    size_t n, cap;
    int err;
} fbuf;

static uint8_t *grow(fbuf *b, size_t n)
{
    if (b->err) return NULL;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (!q) {
            b->err = EK_ERR_NOMEM;
            return NULL;
        }
        b->p = q;
        b->cap = cap;
    }
    uint8_t *r = b->p + b->n;
    memset(r, 0, n);
    b->n += n;
    return r;
}

static void put_bytes(fbuf *b, const void *p, size_t n)
{
    uint8_t *q = grow(b, n);
    if (q && n) memcpy(q, p, n);
}

static int write_file(const char *path, const fbuf *b)
{
    if (b->err) return b->err;
    FILE *f = sim_fopen(path);
    if (!f) return EK_ERR_IO;
    if (b->n && fwrite(b->p, 1, b->n, f) != b->n) {
        fclose(f);
        return EK_ERR_IO;
    }
    return sim_fclose(f);
}

static char *path_of(const char *dir, const char *name)
{
    const size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* ELF32 little-endian Arm executable: one PT_LOAD (the code at file offset CODE_OFF, vaddr
 * t->base), .text, .symtab with the program's functions (T32 ones with bit 0 set), .strtab,
 * .shstrtab. */
static void write_elf(fbuf *b, const v7_trace *t)
{
    static const struct {
        const char *name;
        uint32_t addr, size;
    } syms[] = {
        {"irq_handler", 0x100, 0x14}, {"main", 0x8000, 0x2c},     {"a32_func", 0x8044, 0xc},
        {"a32_func2", 0x8060, 0x8},   {"t32_func", 0x8101, 0x1c}, {"t32_leaf", 0x8121, 0x8},
        {"t32_func2", 0x8131, 0x4},
    };
    const size_t nsym = sizeof syms / sizeof syms[0];
    static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
    char strtab[256];
    size_t strn = 1;
    strtab[0] = 0;
    uint32_t name_off[16];
    for (size_t i = 0; i < nsym; i++) {
        name_off[i] = (uint32_t)strn;
        const size_t l = strlen(syms[i].name) + 1;
        memcpy(strtab + strn, syms[i].name, l);
        strn += l;
    }
    uint8_t *h = grow(b, CODE_OFF + t->code_size);
    if (!h) return;
    /* ELF header */
    memcpy(h, "\177ELF", 4);
    h[4] = 1; /* ELFCLASS32 */
    h[5] = 1; /* little-endian */
    h[6] = 1;
    ek_put_le16(h + 16, 2);  /* ET_EXEC */
    ek_put_le16(h + 18, 40); /* EM_ARM */
    ek_put_le32(h + 20, 1);  /* version */
    ek_put_le32(h + 24, 0x8000);
    ek_put_le32(h + 28, 52);          /* phoff */
    ek_put_le32(h + 36, 0x05000400u); /* EABI 5, hard float */
    ek_put_le16(h + 40, 52);
    ek_put_le16(h + 42, 32);
    ek_put_le16(h + 44, 1);
    ek_put_le16(h + 46, 40);
    /* program header */
    uint8_t *ph = h + 52;
    ek_put_le32(ph, 1); /* PT_LOAD */
    ek_put_le32(ph + 4, CODE_OFF);
    ek_put_le32(ph + 8, t->base);
    ek_put_le32(ph + 12, t->base);
    ek_put_le32(ph + 16, (uint32_t)t->code_size);
    ek_put_le32(ph + 20, (uint32_t)t->code_size);
    ek_put_le32(ph + 24, 5); /* R | X */
    ek_put_le32(ph + 28, 0x10000);
    memcpy(h + CODE_OFF, t->code, t->code_size);
    /* symtab, strtab, shstrtab */
    const size_t symtab_off = b->n;
    uint8_t *st = grow(b, (nsym + 1) * 16);
    if (!st) return;
    for (size_t i = 0; i < nsym; i++) {
        uint8_t *s = st + 16 * (i + 1);
        ek_put_le32(s, name_off[i]);
        ek_put_le32(s + 4, syms[i].addr);
        ek_put_le32(s + 8, syms[i].size);
        s[12] = 0x12; /* STB_GLOBAL, STT_FUNC */
        ek_put_le16(s + 14, 1);
    }
    const size_t strtab_off = b->n;
    put_bytes(b, strtab, strn);
    const size_t shstr_off = b->n;
    put_bytes(b, shstr, sizeof shstr);
    while (b->n & 3)
        grow(b, 1);
    const size_t shoff = b->n;
    uint8_t *sh = grow(b, 5 * 40);
    if (!sh) return;
    h = b->p;
    ek_put_le32(h + 32, (uint32_t)shoff);
    ek_put_le16(h + 48, 5);
    ek_put_le16(h + 50, 4);
    /* 1: .text */
    ek_put_le32(sh + 40, 1);
    ek_put_le32(sh + 44, 1); /* PROGBITS */
    ek_put_le32(sh + 48, 6); /* ALLOC | EXECINSTR */
    ek_put_le32(sh + 52, t->base);
    ek_put_le32(sh + 56, CODE_OFF);
    ek_put_le32(sh + 60, (uint32_t)t->code_size);
    ek_put_le32(sh + 72, 4);
    /* 2: .symtab */
    ek_put_le32(sh + 80, 7);
    ek_put_le32(sh + 84, 2); /* SYMTAB */
    ek_put_le32(sh + 96, (uint32_t)symtab_off);
    ek_put_le32(sh + 100, (uint32_t)((nsym + 1) * 16));
    ek_put_le32(sh + 104, 3); /* link: .strtab */
    ek_put_le32(sh + 108, 1); /* first global */
    ek_put_le32(sh + 112, 4);
    ek_put_le32(sh + 116, 16);
    /* 3: .strtab */
    ek_put_le32(sh + 120, 15);
    ek_put_le32(sh + 124, 3); /* STRTAB */
    ek_put_le32(sh + 136, (uint32_t)strtab_off);
    ek_put_le32(sh + 140, (uint32_t)strn);
    ek_put_le32(sh + 152, 1);
    /* 4: .shstrtab */
    ek_put_le32(sh + 160, 23);
    ek_put_le32(sh + 164, 3);
    ek_put_le32(sh + 176, (uint32_t)shstr_off);
    ek_put_le32(sh + 180, (uint32_t)sizeof shstr);
    ek_put_le32(sh + 192, 1);
}

/* CoreSight formatter, one source: each 16-byte frame starts with its ID byte, then 14 data
 * bytes (even ones with bit 0 in the flag byte 15); the last frame is padded with the null ID. */
static void format_frames(fbuf *b, const uint8_t *d, size_t n, unsigned id)
{
    for (size_t pos = 0; pos < n;) {
        uint8_t *f = grow(b, 16);
        if (!f) return;
        f[0] = (uint8_t)(id << 1 | 1);
        /* 14 data bytes (positions 1-14); a last frame ends its data on an odd position so
         * that the null ID (padding) can follow on the even one */
        size_t k = n - pos;
        if (k > 14) k = 14;
        if (k < 14 && !(k & 1)) k--;
        uint8_t flags = 0;
        for (size_t j = 1; j <= k; j++) {
            uint8_t v = d[pos++];
            if (!(j & 1)) {
                flags |= (uint8_t)((v & 1) << (j / 2));
                v &= 0xFE;
            }
            f[j] = v;
        }
        if (k < 14) f[k + 1] = 0x01; /* the null ID; zeros follow */
        f[15] = flags;
    }
}

/* ------------------------------------------------------------------ perf.data */

enum { ST_IP = 1, ST_TID = 2, ST_TIME = 4, ST_PERIOD = 0x100, ST_IDENT = 0x10000 };
/* per-thread recording: no CPU in the samples (perf record --per-thread) */
#define SAMPLE_TYPE (ST_IDENT | ST_IP | ST_TID | ST_TIME | ST_PERIOD)

static ek_perf_record v7_rec(uint32_t type, uint16_t misc, uint64_t time, uint64_t id)
{
    ek_perf_record r;
    memset(&r, 0, sizeof(r));
    r.type = type;
    r.misc = misc;
    r.sid.pid = r.sid.tid = PID;
    r.sid.time = time;
    r.sid.id = id;
    return r;
}

/* the recording, through the library's perf.data writer, into b */
static void write_perf(fbuf *b, const v7_scn *sc, const uint8_t *aux, size_t naux, uint64_t t_end)
{
    const uint64_t id_etm = 1, id_dummy = 2;
    const uint32_t cr = sc->regs.etmcr;
    const uint64_t config = cr & ((1u << 12) | (1u << 14) | (1u << 28) | (1u << 29));
    ek_pw *w;
    if (ek_pw_new_mem(0, &w)) {
        b->err = EK_ERR_NOMEM;
        return;
    }
    /* attributes: the cs_etm event and the tracking dummy event */
    for (int k = 0; k < 2; k++) {
        ek_perf_attr a;
        memset(&a, 0, sizeof(a));
        uint64_t flags = (1ull << 18) | (1ull << 6) | (1ull << 5); /* sample_id_all, no kernel/hv */
        flags |= (1ull << 0) | (1ull << 1) | (1ull << 12);         /* disabled, inherit, on exec */
        if (k) {
            a.type = 1;
            a.config = 9; /* PERF_COUNT_SW_DUMMY */
            flags |= (1ull << 8) | (1ull << 9) | (1ull << 13) | (1ull << 23) | (1ull << 24);
        } else {
            a.type = PMU_TYPE;
            a.config = config;
        }
        a.size = 128;
        a.sample_period = 1;
        a.sample_type = SAMPLE_TYPE;
        a.flags = flags;
        a.ids = k ? &id_dummy : &id_etm;
        a.nids = 1;
        ek_pw_attr(w, &a);
    }
    /* AUXTRACE_INFO: version 1, one CS_ETMV3 block */
    const uint64_t info[10] = {1,
                               (uint64_t)PMU_TYPE << 32 | 1,
                               0,
                               EK_CS_ETM_MAGIC_ETMV3,
                               0,
                               4,
                               sc->regs.etmcr,
                               sc->regs.etmtraceidr,
                               sc->regs.etmccer,
                               sc->regs.etmidr};
    ek_pw_auxtrace_info(w, EK_PERF_AUXTRACE_CS_ETM, info, 10);
    ek_perf_record r = v7_rec(EK_PERF_RECORD_COMM, 0, T0, id_dummy);
    r.u.comm.pid = r.u.comm.tid = PID;
    r.u.comm.comm = "simv7";
    ek_pw_record(w, &r, SAMPLE_TYPE);
    /* MMAP2 of the executable: the code mapped at base from file offset CODE_OFF */
    r = v7_rec(EK_PERF_RECORD_MMAP2, EK_PERF_MISC_USER, T0 + 1, id_dummy);
    r.u.mmap.pid = r.u.mmap.tid = PID;
    r.u.mmap.addr = 0;
    r.u.mmap.len = 0x9000;
    r.u.mmap.pgoff = CODE_OFF;
    r.u.mmap.maj = 8;
    r.u.mmap.min = 1;
    r.u.mmap.ino = 1000;
    r.u.mmap.prot = 5;
    r.u.mmap.flags = 2;
    r.u.mmap.filename = EXE_PATH;
    ek_pw_record(w, &r, SAMPLE_TYPE);
    /* the second thread, which CONTEXTIDR names when the handler switches to it */
    r = v7_rec(EK_PERF_RECORD_FORK, 0, T0 + 1, id_dummy);
    r.u.fork.pid = r.u.fork.ppid = r.u.fork.ptid = PID;
    r.u.fork.tid = TID2;
    r.u.fork.time = T0 + 1;
    ek_pw_record(w, &r, SAMPLE_TYPE);
    r = v7_rec(EK_PERF_RECORD_ITRACE_START, 0, T0 + 2, id_etm);
    r.u.itrace_start.pid = r.u.itrace_start.tid = PID;
    ek_pw_record(w, &r, SAMPLE_TYPE);
    /* AUX: the whole sink at the end */
    r = v7_rec(EK_PERF_RECORD_AUX, 0, t_end, id_etm);
    r.u.aux.aux_size = naux;
    ek_pw_record(w, &r, SAMPLE_TYPE);
    /* AUXTRACE with the data (per-thread: no CPU) */
    static const uint8_t zero[8];
    const size_t pad = (8 - (naux & 7)) & 7;
    r = v7_rec(EK_PERF_RECORD_AUXTRACE, 0, 0, 0);
    r.u.auxtrace.size = naux + pad;
    r.u.auxtrace.reference = 1;
    r.u.auxtrace.tid = PID;
    r.u.auxtrace.cpu = -1;
    ek_pw_record(w, &r, 0);
    ek_pw_payload(w, aux, naux);
    ek_pw_payload(w, zero, pad);
    r = v7_rec(EK_PERF_RECORD_EXIT, 0, t_end + 1, id_dummy);
    r.u.fork.pid = r.u.fork.ppid = r.u.fork.tid = r.u.fork.ptid = PID;
    r.u.fork.time = t_end + 1;
    ek_pw_record(w, &r, SAMPLE_TYPE);
    r = v7_rec(EK_PERF_RECORD_FINISHED_ROUND, 0, 0, 0);
    ek_pw_record(w, &r, 0);
    /* features: OSRELEASE, VERSION, ARCH, NRCPUS, PMU_MAPPINGS, AUXTRACE */
    ek_pw_feature_string(w, EK_PERF_FEAT_OSRELEASE, "6.1.0-etmkit-sim-armv7");
    ek_pw_feature_string(w, EK_PERF_FEAT_VERSION, "6.1.187");
    ek_pw_feature_string(w, EK_PERF_FEAT_ARCH, "armv7l");
    ek_pw_feature_begin(w, EK_PERF_FEAT_NRCPUS);
    ek_pw_u32(w, 1);
    ek_pw_u32(w, 1);
    ek_pw_feature_end(w);
    ek_pw_feature_begin(w, EK_PERF_FEAT_PMU_MAPPINGS);
    ek_pw_u32(w, 2);
    ek_pw_u32(w, PMU_TYPE);
    ek_pw_hstring(w, "cs_etm");
    ek_pw_u32(w, 1);
    ek_pw_hstring(w, "software");
    ek_pw_feature_end(w);
    ek_pw_auxtrace_index(w, 0);
    uint8_t *out;
    size_t len;
    int e = ek_pw_close_mem(w, &out, &len);
    if (e) {
        b->err = e;
        return;
    }
    put_bytes(b, out, len);
    free(out);
}

/* ------------------------------------------------------------------ ground truth */

static const char *branch_kind(const v7_ev *v)
{
    if (v->kind == V7_EV_EXC) return "irq";
    if (v->type == EK_ITYPE_BR) return v->link ? "bl" : "b";
    if (v->link) return "blr";
    if (v->addr == 0x110) return "eret";
    return "ret";
}

static int write_truth(const char *dir, const v7_scn *sc, uint64_t seed, const v7_trace *t,
                       size_t nbytes, size_t naux)
{
    char *p = path_of(dir, "truth.branches.tsv");
    char *s = path_of(dir, "truth.summary");
    int err = p && s ? 0 : EK_ERR_NOMEM;
    FILE *fb = err ? NULL : sim_fopen(p);
    FILE *fs = err || !fb ? NULL : sim_fopen(s);
    if (!err && (!fb || !fs)) err = EK_ERR_IO;
    uint64_t insns = 0, branches = 0, excs = 0;
    if (!err) {
        fprintf(fb, "# time_ns\tcpu\tpid\ttid\tel\tfrom\tto\tkind\ttaken\tisa\tto_isa\n");
        /* the thread: CONTEXTIDR holds its ID (Linux's PID_IN_CONTEXTIDR), which the handler
         * changes */
        int tid = (int)t->start_cid;
        for (size_t i = 0; i < t->n; i++) {
            const v7_ev *v = &t->ev[i];
            if (v->kind == V7_EV_CTX) tid = (int)v->value;
            if (v->kind == V7_EV_INSN) {
                insns++;
                if (v->type != EK_ITYPE_BR && v->type != EK_ITYPE_BR_INDIRECT) continue;
                const int cond = v->type == EK_ITYPE_BR && !v->exec;
                branches++;
                fprintf(fb, "%llu\t0\t%d\t%d\t0\t%x\t%x\t%s\t%d\t%s\t%s\n",
                        (unsigned long long)(T0 + v->time), PID, tid, v->addr,
                        v->exec ? v->next : v->addr + v->size, cond ? "bcond" : branch_kind(v),
                        v->exec, ek_isa_name(v->isa), ek_isa_name(v->next_isa));
            } else if (v->kind == V7_EV_EXC) {
                excs++;
                fprintf(fb, "%llu\t0\t%d\t%d\t1\t%x\t%x\tirq\t1\t%s\t%s\n",
                        (unsigned long long)(T0 + v->time), PID, tid, v->addr, v->next,
                        ek_isa_name(v->isa), ek_isa_name(v->next_isa));
            }
        }
        fprintf(fs, "scenario\t%s\nseed\t%llu\ncpus\t1\n", sc->name, (unsigned long long)seed);
        fprintf(fs, "instructions\t%llu\nbranches\t%llu\nexceptions\t%llu\ntrace_bytes\t%zu\n",
                (unsigned long long)insns, (unsigned long long)branches, (unsigned long long)excs,
                nbytes);
        fprintf(fs, "truth\tcomplete\n");
        fprintf(fs,
                "etm cpu=0 protocol=%s trace_id=0x%x etmcr=0x%08x etmidr=0x%08x "
                "etmccer=0x%08x bytes=%zu\n",
                sc->ptm ? "ptm" : "etmv3", TRACE_ID, sc->regs.etmcr, sc->regs.etmidr,
                sc->regs.etmccer, nbytes);
        fprintf(fs, "sink 0 kind=etb size=%zu copies=1\n", naux);
        fprintf(fs, "session 0 perf_pid=%d mode=per-thread aux_records=1 aux_bytes=%zu\n", PID,
                naux);
        fprintf(fs, "process pid=%d comm=simv7 steps=%llu threads=%d,%d\n", PID,
                (unsigned long long)insns, PID, TID2);
    }
    if (fb && sim_fclose(fb) && !err) err = EK_ERR_IO;
    if (fs && sim_fclose(fs) && !err) err = EK_ERR_IO;
    free(p);
    free(s);
    return err;
}

/* ------------------------------------------------------------------ the run */

int sim_v7_gen(const ek_sim_opts *o, int which, ek_sim_result *res)
{
    const v7_scn *sc = &scns[which];
    const uint64_t budget = o->trace_size ? o->trace_size : sc->trace_default;
    if (budget > ((uint64_t)64 << 20)) return EK_ERR_RANGE; /* the model keeps every event */
    int err = sim_mkdirs(o->outdir);
    v7_trace t;
    memset(&t, 0, sizeof t);
    v7_bytes tb = {0};
    const v7_enc_opts eo = {1024};
    /* run longer until the trace unit has written the budget */
    for (size_t insns = 4096; !err;) {
        v7_trace_free(&t);
        v7_bytes_free(&tb);
        const v7_prog_opts po = {o->seed, insns, 211, 1500, 1, !sc->ptm, {PID, TID2}};
        err = v7_prog_run(&po, &t);
        if (!err)
            err = sc->ptm ? v7_encode_ptm(&t, &sc->regs, &eo, &tb)
                          : v7_encode_etm3(&t, &sc->regs, &eo, &tb);
        if (err || tb.n >= budget) break;
        insns = (size_t)((double)insns * (double)budget / (double)(tb.n ? tb.n : 1) * 1.05) + 64;
    }
    if (!err && o->progress) o->progress(o->progress_ctx, budget, budget);
    fbuf aux = {0}, perf = {0}, elf = {0};
    if (!err) format_frames(&aux, tb.p, tb.n, TRACE_ID);
    uint64_t t_end = T0;
    for (size_t i = t.n; i-- > 0;)
        if (t.ev[i].time) {
            t_end = T0 + t.ev[i].time;
            break;
        }
    if (!err) write_perf(&perf, sc, aux.p, aux.n, t_end + 10);
    if (!err) write_elf(&elf, &t);
    char *pd = path_of(o->outdir, "perf.data");
    char *sd = path_of(o->outdir, "symfs/usr/bin");
    char *ex = path_of(o->outdir, "symfs" EXE_PATH);
    if (!err && (!pd || !sd || !ex)) err = EK_ERR_NOMEM;
    if (!err) err = write_file(pd, &perf);
    if (!err) err = sim_mkdirs(sd);
    if (!err) err = write_file(ex, &elf);
    if (!err) err = write_truth(o->outdir, sc, o->seed, &t, tb.n, aux.n);
    if (res) {
        memset(res, 0, sizeof *res);
        res->trace_bytes = tb.n;
        res->aux_bytes = aux.n;
        for (size_t i = 0; i < t.n; i++) {
            res->instructions += t.ev[i].kind == V7_EV_INSN;
            res->branches += t.ev[i].kind == V7_EV_INSN &&
                             (t.ev[i].type == EK_ITYPE_BR || t.ev[i].type == EK_ITYPE_BR_INDIRECT);
        }
        res->truth_complete = 1;
    }
    free(pd);
    free(sd);
    free(ex);
    free(aux.p);
    free(perf.p);
    free(elf.p);
    v7_bytes_free(&tb);
    v7_trace_free(&t);
    return err;
}
