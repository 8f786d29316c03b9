/* OpenCSD trc_pkt_lister packet lines for PTM (PFT) packets (what they share with ETMv3's:
 * v7_list.c). */
#include "etmkit/ptm.h"
#include "etmkit/sbuf.h"
#include "ocsd_val.h"
#include "v7_list.h"

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

static void cycles(wr *w, const ek_ptm_packet *k)
{
    wr_lit(w, "Cycles=");
    wr_dec(w, k->cycle_count);
    wr_lit(w, "; ");
}

static void excep(wr *w, const ek_ptm_packet *k)
{
    wr_lit(w, "Excep=");
    wr_s(w, k->exc_num < 16 ? v7_exception_names[k->exc_num] : "Unknown");
    wr_lit(w, " [");
    wr_hex(w, k->exc_num, 2, 0);
    wr_lit(w, "]; ");
}

void ek_list_ptm_ocsd(ek_sbuf *out, const ek_ptm_packet *k, unsigned trace_id, int with_raw,
                      const ek_ptm_config *cfg)
{
    (void)cfg;
    wr w;
    if (!wr_begin(&w, out, 512)) return;
    ocsd_pkt_head(&w, k->index, trace_id, k->raw, k->size, with_raw);
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
        v7_branch_addr(&w, k->addr_valid_bits, k->addr, k->addr_pkt_bits, k->isa, k->prev_isa,
                       k->ctx_updated, k->ns, k->hyp);
        if (k->exc_present) excep(&w, k);
        if (k->cc_valid) cycles(&w, k);
        break;
    case EK_PTM_ISYNC:
        v7_isync_reason(&w, k->isync_reason);
        wr_lit(&w, "Addr=0x");
        wr_hex(&w, k->addr, 8, 0);
        wr_lit(&w, "; ");
        v7_isync_state(&w, k->ns, k->hyp);
        if (k->cid_updated) {
            wr_lit(&w, "CtxtID=");
            wr_hex(&w, k->ctxt_id, 8, 0);
            wr_lit(&w, "; ");
        }
        v7_isa(&w, k->isa);
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
