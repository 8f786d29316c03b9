/* The Armv7 protocols' shared pieces of OpenCSD's packet lines (v7_list.h). */
#include "etmkit/elem.h"
#include "ocsd_val.h"
#include "v7_list.h"

const char *const v7_exception_names[16] = {
    "No Exception",     "Debug Halt",      "SMC",      "Hyp",
    "Async Data Abort", "Jazelle",         "Reserved", "Reserved",
    "PE Reset",         "Undefined Instr", "SVC",      "Prefetch Abort",
    "Data Fault",       "Generic",         "IRQ",      "FIQ"};

const char *const v7_isync_reasons[4] = {"Periodic", "Trace Enable", "Restart Overflow",
                                         "Debug Exit"};

void v7_isa(wr *w, unsigned isa)
{
    wr_lit(w, "ISA=");
    switch (isa) {
    case EK_ISET_A32: wr_lit(w, "ARM(32); "); break;
    case EK_ISET_T32: wr_lit(w, "Thumb2; "); break;
    case EK_ISET_A64: wr_lit(w, "AArch64; "); break;
    case EK_ISET_TEE: wr_lit(w, "ThumbEE; "); break;
    case EK_ISET_JAZELLE: wr_lit(w, "Jazelle; "); break;
    default: wr_lit(w, "Unknown; "); break;
    }
}

void v7_branch_addr(wr *w, unsigned valid_bits, uint64_t addr, unsigned pkt_bits, unsigned isa,
                    unsigned prev_isa, int ctx_updated, int ns, int hyp)
{
    wr_lit(w, "Addr=");
    ocsd_val_str(w, 32, valid_bits, addr, pkt_bits);
    wr_lit(w, "; ");
    if (isa != prev_isa) v7_isa(w, isa);
    if (ctx_updated) {
        wr_s(w, ns ? "NS; " : "S; ");
        if (hyp) wr_lit(w, "Hyp; ");
    }
}

void v7_isync_reason(wr *w, unsigned reason)
{
    wr_c(w, '(');
    wr_s(w, v7_isync_reasons[reason & 3]);
    wr_lit(w, "); ");
}

void v7_isync_state(wr *w, int ns, int hyp)
{
    wr_s(w, ns ? "NS; " : "S; ");
    wr_s(w, hyp ? "Hyp; " : " ");
}
