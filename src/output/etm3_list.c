/* OpenCSD trc_pkt_lister packet lines for ETMv3 packets (what they share with PTM's:
 * v7_list.c). */
#include "etmkit/etm3.h"
#include "etmkit/sbuf.h"
#include "ocsd_val.h"
#include "v7_list.h"

static const char *const etm3_desc[EK_ETM3_TYPE_COUNT] = {
    "Trace Stream not synchronised",
    "Incomplete packet at end of trace data.",
    "Branch address.",
    "Alignment Synchronisation.",
    "Cycle Count.",
    "Instruction Packet synchronisation.",
    "Instruction Packet synchronisation with cycle count.",
    "Trace Trigger Event.",
    "Atom P-header.",
    "Data Store Failed.",
    "Out of Order data value packet.",
    "Out of Order data address placeholder.",
    "Data trace packet.",
    "Data trace suppressed.",
    "Data trace value not traced.",
    "Packet ignored.",
    "Context ID change.",
    "VMID change.",
    "Exception entry data marker.",
    "Exception return.",
    "Timestamp Value.",
    "Invalid sequence for packet type.",
    "Invalid packet type for this trace mode.",
    "Reserved Packet Header",
};

static void excep(wr *w, const ek_etm3_packet *k)
{
    /* OpenCSD's table lacks a comma after "HardFault", so entries 19.. are shifted */
    static const char *const m[24] = {
        "No Exception", "IRQ1",     "IRQ2",         "IRQ3",       "IRQ4",
        "IRQ5",         "IRQ6",     "IRQ7",         "IRQ0",       "usage Fault",
        "NMI",          "SVC",      "DebugMonitor", "Mem Manage", "PendSV",
        "SysTick",      "Reserved", "PE Reset",     "Reserved",   "HardFaultReserved",
        "BusFault",     "Reserved", "Reserved",     "Reserved"};
    wr_lit(w, "Exception=");
    if (k->exc_cm) {
        if (k->exc_num < 0x18) {
            wr_s(w, m[k->exc_num]);
        } else {
            wr_lit(w, "IRQ");
            wr_dec(w, k->exc_num - 0x10u);
        }
        if (k->exc_resume) {
            wr_lit(w, "; Resume=");
            wr_dec(w, k->exc_resume);
        }
        if (k->exc_cancel) wr_lit(w, "; Cancel prev instr");
    } else {
        wr_s(w, v7_exception_names[k->exc_num & 0xF]);
        wr_lit(w, "; ");
        if (k->exc_cancel) wr_lit(w, "; Cancel prev instr");
    }
}

static void atoms(wr *w, const ek_etm3_packet *k)
{
    uint32_t bits = k->atom_bits;
    if (!k->cycle_count) {
        for (unsigned i = 0; i < k->atom_num; i++, bits >>= 1)
            wr_c(w, (bits & 1) ? 'E' : 'N');
        return;
    }
    switch (k->p_hdr_fmt) {
    case 1:
        for (unsigned i = 0; i < k->atom_num; i++, bits >>= 1)
            wr_s(w, (bits & 1) ? "WE" : "WN");
        break;
    case 2:
        wr_c(w, 'W');
        for (unsigned i = 0; i < k->atom_num; i++, bits >>= 1)
            wr_c(w, (bits & 1) ? 'E' : 'N');
        break;
    case 3:
        for (unsigned i = 0; i < k->cycle_count && i < 64; i++)
            wr_c(w, 'W');
        if (k->atom_num) wr_c(w, (bits & 1) ? 'E' : 'N');
        break;
    default: break;
    }
    wr_lit(w, "; Cycles=");
    wr_dec(w, k->cycle_count);
}

void ek_list_etm3_ocsd(ek_sbuf *out, const ek_etm3_packet *k, unsigned trace_id, int with_raw,
                       const ek_etm3_config *cfg)
{
    (void)cfg;
    wr w;
    if (!wr_begin(&w, out, 512)) return;
    ocsd_pkt_head(&w, k->index, trace_id, k->raw, k->size, with_raw);
    const unsigned t = k->type < EK_ETM3_TYPE_COUNT ? k->type : EK_ETM3_RESERVED;
    wr_s(&w, ek_etm3_type_name(t));
    wr_lit(&w, " : ");
    wr_s(&w, etm3_desc[t]);
    switch (t) {
    case EK_ETM3_BAD_SEQUENCE:
    case EK_ETM3_BAD_TRACEMODE:
        wr_c(&w, '[');
        wr_s(&w, ek_etm3_type_name(k->err_type));
        wr_c(&w, ']');
        break;
    case EK_ETM3_BRANCH_ADDRESS:
        wr_lit(&w, "; ");
        v7_branch_addr(&w, k->addr_valid_bits, k->addr, k->addr_pkt_bits, k->isa, k->prev_isa,
                       k->ctx_updated, k->ns, k->hyp);
        if (k->exc_present) excep(&w, k);
        break;
    case EK_ETM3_ISYNC_CYCLE:
    case EK_ETM3_ISYNC:
        wr_lit(&w, "; ");
        v7_isync_reason(&w, k->isync_reason);
        if (!k->isync_no_addr) {
            wr_s(&w, k->isync_lsip ? "Data Instr Addr=0x" : "Addr=0x");
            wr_hex(&w, k->addr, 8, 0);
            wr_lit(&w, "; ");
        }
        v7_isync_state(&w, k->ns, k->hyp);
        if (k->cid_updated) {
            wr_lit(&w, "CtxtID=");
            wr_hex(&w, k->ctxt_id, 0, 0);
            wr_lit(&w, "; ");
        }
        if (k->isync_no_addr) break;
        v7_isa(&w, k->isa);
        if (k->isync_has_cc) {
            wr_lit(&w, "Cycles=");
            wr_dec(&w, k->cycle_count);
            wr_lit(&w, "; ");
        }
        if (k->isync_lsip) {
            wr_lit(&w, "Curr Instr Addr=");
            ocsd_val_str(&w, 32, k->daddr_valid_bits, k->data_addr, k->daddr_pkt_bits);
            wr_c(&w, ';');
        }
        break;
    case EK_ETM3_P_HDR:
        wr_lit(&w, "; ");
        atoms(&w, k);
        break;
    case EK_ETM3_CYCLE_COUNT:
        wr_lit(&w, "; Cycles=");
        wr_dec(&w, k->cycle_count);
        break;
    case EK_ETM3_CONTEXT_ID:
        wr_lit(&w, "; CtxtID=0x");
        wr_hex(&w, k->ctxt_id, 0, 0);
        break;
    case EK_ETM3_VMID:
        wr_lit(&w, "; VMID=0x");
        wr_hex(&w, k->vmid, 0, 0);
        break;
    case EK_ETM3_TIMESTAMP:
        wr_lit(&w, "; TS=0x");
        wr_hex(&w, k->timestamp, 0, 0);
        wr_lit(&w, " (");
        wr_dec(&w, k->timestamp);
        wr_lit(&w, ") ");
        break;
    case EK_ETM3_OOO_DATA:
        wr_lit(&w, "; Val=0x");
        wr_hex(&w, k->data_value, 0, 0);
        wr_lit(&w, "; OO_Tag=0x");
        wr_hex(&w, k->ooo_tag, 0, 0);
        break;
    case EK_ETM3_VAL_NOT_TRACED:
    case EK_ETM3_OOO_ADDR_PLC:
    case EK_ETM3_NORM_DATA:
        if (k->update_daddr) {
            wr_lit(&w, "; Addr=");
            ocsd_val_str(&w, 32, k->daddr_valid_bits, k->data_addr, k->daddr_pkt_bits);
        }
        if (t == EK_ETM3_OOO_ADDR_PLC) {
            wr_lit(&w, "; OO_Tag=0x");
            wr_hex(&w, k->ooo_tag, 0, 0);
        }
        if (t == EK_ETM3_NORM_DATA && k->update_dval) {
            wr_lit(&w, "; Val=0x");
            wr_hex(&w, k->data_value, 0, 0);
        }
        break;
    default: break;
    }
    wr_c(&w, '\n');
    wr_end(&w);
}

void ek_list_etm3_ocsd_fatal(ek_sbuf *out, unsigned fatal, uint64_t index, unsigned trace_id)
{
    /* OpenCSD 1.8.0: ocsdError::getErrorString of the error its ETMv3 decoder logged */
    switch (fatal) {
    case EK_ETM3_FATAL_NOT_INIT:
        ek_sbuf_puts(out, "0x0003 (OCSD_ERR_NOT_INIT) [Component not initialised.]; No decoder "
                          "configuration information");
        return;
    case EK_ETM3_FATAL_DATA:
        ek_sbuf_printf(out,
                       "0x0017 (OCSD_ERR_HW_CFG_UNSUPP) [Programmed trace configuration not "
                       "supported by decodUer.]; TrcIdx=%llu; CS ID=%02x; Invalid packet type : "
                       "Data Tracing decode not supported.",
                       (unsigned long long)index, trace_id);
        return;
    case EK_ETM3_FATAL_BAD_SEQ:
    case EK_ETM3_FATAL_RESERVED:
        ek_sbuf_printf(out,
                       "0x0013 (OCSD_ERR_BAD_PACKET_SEQ) [Bad packet sequence]; TrcIdx=%llu; CS "
                       "ID=%02x; %s",
                       (unsigned long long)index, trace_id,
                       fatal == EK_ETM3_FATAL_BAD_SEQ ? "Bad Packet sequence."
                                                      : "Reserved or unknown packet ID.");
        return;
    default: return;
    }
}
