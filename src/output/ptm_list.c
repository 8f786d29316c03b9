/* OpenCSD trc_pkt_lister packet lines for PTM (PFT) packets. */
#include "etmkit/ptm.h"
#include "etmkit/sbuf.h"
#include "ocsd_val.h"
#include "wr.h"

static const char *const ptm_desc[EK_PTM_TYPE_COUNT] = {
    "PTM Not Synchronised",
    "Incomplete packet flushed at end of trace",
    "Error type not set",
    "Branch address packet",
    "Alignment Synchronisation Packet",
    "Instruction Synchronisation packet",
    "Trigger Event packet",
    "Waypoint update packet",
    "Ignore packet",
    "Context ID packet",
    "VM ID packet",
    "Atom packet",
    "Timestamp packet",
    "Exception return packet",
    "Invalid sequence in packet",
    "Reserved Packet Header",
};

static void isa_str(wr *w, unsigned isa)
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

static void cycles(wr *w, const ek_ptm_packet *k)
{
    wr_lit(w, "Cycles=");
    wr_dec(w, k->cycle_count);
    wr_lit(w, "; ");
}

static void excep(wr *w, const ek_ptm_packet *k)
{
    static const char *const names[16] = {
        "No Exception",     "Debug Halt",      "SMC",      "Hyp",
        "Async Data Abort", "Jazelle",         "Reserved", "Reserved",
        "PE Reset",         "Undefined Instr", "SVC",      "Prefetch Abort",
        "Data Fault",       "Generic",         "IRQ",      "FIQ"};
    wr_lit(w, "Excep=");
    wr_s(w, k->exc_num < 16 ? names[k->exc_num] : "Unknown");
    wr_lit(w, " [");
    wr_hex(w, k->exc_num, 2, 0);
    wr_lit(w, "]; ");
}

void ek_list_ptm_ocsd(ek_sbuf *out, const ek_ptm_packet *k, unsigned trace_id, int with_raw,
                      const ek_ptm_config *cfg)
{
    static const char *const reason[4] = {"Periodic", "Trace Enable", "Restart Overflow",
                                          "Debug Exit"};
    (void)cfg;
    wr w;
    if (!wr_begin(&w, out, 512)) return;
    wr_lit(&w, "Idx:");
    wr_dec(&w, k->index);
    wr_lit(&w, "; ID:");
    wr_hex(&w, trace_id, 0, 0);
    if (with_raw) {
        wr_lit(&w, "; [");
        for (unsigned i = 0; i < k->size; i++) {
            wr_lit(&w, "0x");
            wr_hex2(&w, k->raw[i]);
            wr_c(&w, ' ');
        }
        wr_lit(&w, "];\t");
    } else {
        wr_lit(&w, ";\t");
    }
    const unsigned t = k->type < EK_PTM_TYPE_COUNT ? k->type : EK_PTM_NOERROR;
    wr_s(&w, ek_ptm_type_name(t));
    wr_lit(&w, " : ");
    wr_s(&w, ptm_desc[t]);
    wr_lit(&w, "; ");
    switch (t) {
    case EK_PTM_BAD_SEQUENCE:
        wr_c(&w, '[');
        wr_s(&w, ek_ptm_type_name(k->err_type));
        wr_lit(&w, "]; ");
        break;
    case EK_PTM_ATOM:
        if (k->cc_valid) {
            wr_c(&w, (k->atom_bits & 1) ? 'E' : 'N');
            wr_lit(&w, "; ");
            cycles(&w, k);
        } else {
            for (unsigned i = 0; i < k->atom_num; i++)
                wr_c(&w, (k->atom_bits >> i) & 1 ? 'E' : 'N');
            wr_lit(&w, "; ");
        }
        break;
    case EK_PTM_CONTEXT_ID:
        wr_lit(&w, "CtxtID=0x");
        wr_hex(&w, k->ctxt_id, 8, 0);
        wr_lit(&w, "; ");
        break;
    case EK_PTM_VMID:
        wr_lit(&w, "VMID=0x");
        wr_hex(&w, k->vmid, 2, 0);
        wr_lit(&w, "; ");
        break;
    case EK_PTM_WP_UPDATE:
    case EK_PTM_BRANCH_ADDRESS:
        wr_lit(&w, "Addr=");
        ocsd_val_str(&w, 32, k->addr_valid_bits, k->addr, k->addr_pkt_bits);
        wr_lit(&w, "; ");
        if (k->isa != k->prev_isa) isa_str(&w, k->isa);
        if (k->ctx_updated) {
            wr_s(&w, k->ns ? "NS; " : "S; ");
            if (k->hyp) wr_lit(&w, "Hyp; ");
        }
        if (k->exc_present) excep(&w, k);
        if (k->cc_valid) cycles(&w, k);
        break;
    case EK_PTM_ISYNC:
        wr_c(&w, '(');
        wr_s(&w, reason[k->isync_reason & 3]);
        wr_lit(&w, "); Addr=0x");
        wr_hex(&w, k->addr, 8, 0);
        wr_lit(&w, "; ");
        wr_s(&w, k->ns ? "NS; " : "S; ");
        wr_s(&w, k->hyp ? "Hyp; " : " ");
        if (k->cid_updated) {
            wr_lit(&w, "CtxtID=");
            wr_hex(&w, k->ctxt_id, 8, 0);
            wr_lit(&w, "; ");
        }
        isa_str(&w, k->isa);
        if (k->cc_valid) cycles(&w, k);
        break;
    case EK_PTM_TIMESTAMP:
        wr_lit(&w, "TS=");
        ocsd_val_str(&w, 64, 64, k->timestamp, k->ts_update_bits);
        wr_c(&w, '(');
        wr_dec(&w, k->timestamp);
        wr_lit(&w, "); ");
        if (k->cc_valid) cycles(&w, k);
        break;
    default: break;
    }
    wr_c(&w, '\n');
    wr_end(&w);
}
