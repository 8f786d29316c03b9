/* The Armv7 (A32/T32) side of the simulator: a small program model that really runs A32 and T32
 * code, and PTM (PFT 1.1) and ETMv3 trace encoders driven by what ran.
 *
 * The AArch64 machine (machine.c) runs real AArch64 binaries; Armv7 trace units need A32/T32
 * execution, which that machine does not have. v7prog.c builds a small A32/T32 program (calls
 * and returns, A32 <-> T32 interworking by BLX immediate and BX, an indirect call through a
 * table, a T32 IT block, CBZ, conditional A32 instructions, an IRQ vector and handler that
 * returns with SUBS PC, LR and sometimes writes CONTEXTIDR) and walks it instruction by
 * instruction, classifying every instruction's bytes with src/isa (the Arm ARM's view), taking
 * conditions from a flags register the model randomises, returns from a shadow stack and IRQs
 * at random instruction boundaries. The result is an event list (v7_trace): every instruction
 * with its outcome, exceptions, context changes and time.
 *
 * enc_ptm.c and enc_etm3.c turn an event list into a trace stream as a PTM / an ETMv3 unit
 * programmed with the given ETMCR / ETMCCER / ETMIDR / ETMTRACEIDR would write it, and the
 * event list itself is the ground truth a decoder must reproduce. */
#ifndef ETMKIT_SIM_V7_H
#define ETMKIT_SIM_V7_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/config.h"

enum { V7_EV_INSN = 1, V7_EV_EXC, V7_EV_CTX, V7_EV_TS };

typedef struct v7_ev {
    uint8_t kind;
    uint8_t isa;      /* ek_iset of the instruction (EXC: of the preferred return address) */
    uint8_t size;     /* INSN: 2 or 4 */
    uint8_t type;     /* INSN: ek_itype as the Arm ARM classifies it */
    uint8_t exec;     /* INSN: passed its condition (E atom) or not (N atom) */
    uint8_t link;     /* INSN: a taken branch with link */
    uint8_t next_isa; /* INSN: instruction set after it; EXC: of the vector */
    uint8_t vmid;     /* CTX */
    uint32_t addr;    /* INSN: its address; EXC: preferred return address */
    uint32_t next;    /* INSN: address of the next instruction executed; EXC: the vector */
    uint32_t value;   /* EXC: exception number (PFT / ETMv3 numbering); CTX: context ID */
    uint32_t cycles;  /* INSN: cycles it took */
    uint64_t time;    /* TS: the time stamp value; otherwise the time after the event */
} v7_ev;

typedef struct v7_trace {
    v7_ev *ev;
    size_t n, cap;
    uint32_t start_addr;
    uint8_t start_isa;
    uint32_t start_cid;
    uint8_t start_vmid;
    /* the code: one image at base */
    uint32_t base;
    uint8_t *code;
    size_t code_size;
} v7_trace;

/* Program model options. */
typedef struct v7_prog_opts {
    uint64_t seed;
    size_t insns;       /* instructions to run (at least) */
    unsigned irq_every; /* mean instructions between IRQs (0: none) */
    unsigned ts_every;  /* mean instructions between time stamp events (0: none) */
    int ctx_switch;     /* the IRQ handler writes CONTEXTIDR (every other IRQ) */
    int vmid;           /* a VMID change now and then (virtualization) */
    uint32_t cid[2];    /* the CONTEXTIDR values the handler alternates between, the first at
                           the start ({0, 0}: 0x100 and 0x2c7) */
} v7_prog_opts;

/* Build the program and run it. Returns 0 or a negative ek_status. */
int v7_prog_run(const v7_prog_opts *o, v7_trace *t);
void v7_trace_free(v7_trace *t);

/* A growing byte buffer for the encoders. */
typedef struct v7_bytes {
    uint8_t *p;
    size_t n, cap;
    int oom;
} v7_bytes;
void v7_bytes_free(v7_bytes *b);

/* Encoder options beside the registers. */
typedef struct v7_enc_opts {
    unsigned sync_period; /* bytes between A-Sync + I-Sync (0: 1024) */
} v7_enc_opts;

/* PTM (PFT): ETMCR.CycleAccurate, ContextIDSize, TimestampEnable, ReturnStackEnable (with
 * ETMCCER.ReturnStack), VMIDEnable, BranchOutput (branch broadcast) and ETMCCER.TimestampSize
 * are honoured. Returns 0 or a negative ek_status. */
int v7_encode_ptm(const v7_trace *t, const ek_etm3_regs *regs, const v7_enc_opts *o, v7_bytes *out);
/* ETMv3: ETMCR.CycleAccurate, ContextIDSize, TimestampEnable, ETMCCER.TimestampSize (64-bit),
 * ETMCCER virtualization (VMID packets) are honoured; instruction trace only. */
int v7_encode_etm3(const v7_trace *t, const ek_etm3_regs *regs, const v7_enc_opts *o,
                   v7_bytes *out);

/* `etmkit gen` scenarios armv7-ptm and armv7-etm3 (v7gen.c): listed after the AArch64 ones. */
struct ek_sim_opts;
struct ek_sim_result;
size_t sim_v7_scenario_count(void);
const char *sim_v7_scenario_name(size_t i);
const char *sim_v7_scenario_desc(size_t i);
int sim_v7_find(const char *name); /* index, or -1 */
int sim_v7_gen(const struct ek_sim_opts *o, int which, struct ek_sim_result *res);

#endif
