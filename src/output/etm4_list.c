/* Listings of ETMv4 / ETE packets: OpenCSD trc_pkt_lister lines, etmkit text, JSON lines.
 * The OpenCSD strings (names, descriptions, field layout) are facts taken from OpenCSD 1.8.0's
 * output, so that listings compare equal with the reference tool. */
#include "core/hot.h"
#include "etmkit/listing.h"
#include "output/ocsd_val.h"
#include "output/wr.h"

#define LINE_ROOM 640

/* ---- OpenCSD descriptions ----------------------------------------------------------------- */

/* "<NAME> : <description>" as OpenCSD prints them, with their lengths (0: none), each in a
 * slot of HEAD_SLOT bytes: a line copies the whole slot (a constant size: no call; the line's
 * room, LINE_ROOM, holds it), then moves its cursor by the length. */
#define HEAD_SLOT 64
typedef struct head {
    char s[HEAD_SLOT];
    unsigned n;
} head;
#define H(name, text)                                                                              \
    {                                                                                              \
        name " : " text, sizeof(name " : " text) - 1                                               \
    }
static const head ocsd_head[EK_ETM4_TYPE_COUNT] = {
    [EK_ETM4_NONE] = H("I_NO_ERR_TYPE", "No Error Type."),
    [EK_ETM4_NOTSYNC] = H("I_NOT_SYNC", "I Stream not synchronised"),
    [EK_ETM4_INCOMPLETE_EOT] = H("I_INCOMPLETE_EOT", "Incomplete packet at end of trace."),
    [EK_ETM4_BAD_SEQUENCE] = H("I_BAD_SEQUENCE", "Invalid Sequence in packet."),
    [EK_ETM4_RESERVED] = H("I_RESERVED", "Reserved Packet Header"),
    [EK_ETM4_RESERVED_CFG] = H("I_RESERVED_CFG", "Reserved header for current configuration."),
    [EK_ETM4_ASYNC] = H("I_ASYNC", "Alignment Synchronisation."),
    [EK_ETM4_DISCARD] = H("I_DISCARD", "Discard."),
    [EK_ETM4_OVERFLOW] = H("I_OVERFLOW", "Overflow."),
    [EK_ETM4_TRACE_INFO] = H("I_TRACE_INFO", "Trace Info."),
    [EK_ETM4_TIMESTAMP] = H("I_TIMESTAMP", "Timestamp."),
    [EK_ETM4_TRACE_ON] = H("I_TRACE_ON", "Trace On."),
    [EK_ETM4_FUNC_RET] = H("I_FUNC_RET", "V8M - function return."),
    [EK_ETM4_EXCEPT] = H("I_EXCEPT", "Exception."),
    [EK_ETM4_EXCEPT_RTN] = H("I_EXCEPT_RTN", "Exception Return."),
    [EK_ETM4_ITE] = H("I_ITE", "Instrumentation"),
    [EK_ETM4_TRANS_ST] = H("I_TRANS_ST", "Transaction Start."),
    [EK_ETM4_TRANS_COMMIT] = H("I_TRANS_COMMIT", "Transaction Commit."),
    [EK_ETM4_TRANS_FAIL] = H("I_TRANS_FAIL", "Transaction Fail."),
    [EK_ETM4_PE_RESET] = H("I_PE_RESET", "PE Reset."),
    [EK_ETM4_TS_MARKER] = H("I_TS_MARKER", "Timestamp Marker"),
    [EK_ETM4_CCNT_F1] = H("I_CCNT_F1", "Cycle Count format 1."),
    [EK_ETM4_CCNT_F2] = H("I_CCNT_F2", "Cycle Count format 2."),
    [EK_ETM4_CCNT_F3] = H("I_CCNT_F3", "Cycle Count format 3."),
    [EK_ETM4_NUM_DS_MKR] = H("I_NUM_DS_MKR", "Data Synchronisation Marker - Numbered."),
    [EK_ETM4_UNNUM_DS_MKR] = H("I_UNNUM_DS_MKR", "Data Synchronisation Marker - Unnumbered."),
    [EK_ETM4_COMMIT] = H("I_COMMIT", "Commit"),
    [EK_ETM4_CANCEL_F1] = H("I_CANCEL_F1", "Cancel Format 1."),
    [EK_ETM4_CANCEL_F1_MISPRED] = H("I_CANCEL_F1_MISPRED", "Cancel Format 1 + Mispredict."),
    [EK_ETM4_MISPREDICT] = H("I_MISPREDICT", "Mispredict."),
    [EK_ETM4_CANCEL_F2] = H("I_CANCEL_F2", "Cancel Format 2."),
    [EK_ETM4_CANCEL_F3] = H("I_CANCEL_F3", "Cancel Format 3."),
    [EK_ETM4_COND_I_F1] = H("I_COND_I_F1", "Conditional Instruction, format 1."),
    [EK_ETM4_COND_I_F2] = H("I_COND_I_F2", "Conditional Instruction, format 2."),
    [EK_ETM4_COND_I_F3] = H("I_COND_I_F3", "Conditional Instruction, format 3."),
    [EK_ETM4_COND_FLUSH] = H("I_COND_FLUSH", "Conditional Flush."),
    [EK_ETM4_COND_RES_F1] = H("I_COND_RES_F1", "Conditional Result, format 1."),
    [EK_ETM4_COND_RES_F2] = H("I_COND_RES_F2", "Conditional Result, format 2."),
    [EK_ETM4_COND_RES_F3] = H("I_COND_RES_F3", "Conditional Result, format 3."),
    [EK_ETM4_COND_RES_F4] = H("I_COND_RES_F4", "Conditional Result, format 4."),
    [EK_ETM4_IGNORE] = H("I_IGNORE", "Ignore."),
    [EK_ETM4_EVENT] = H("I_EVENT", "Trace Event."),
    [EK_ETM4_CTXT] = H("I_CTXT", "Context Packet."),
    [EK_ETM4_ADDR_CTXT_L_32IS0] = H("I_ADDR_CTXT_L_32IS0", "Address & Context, Long, 32 bit, IS0."),
    [EK_ETM4_ADDR_CTXT_L_32IS1] = H("I_ADDR_CTXT_L_32IS1", "Address & Context, Long, 32 bit, IS1."),
    [EK_ETM4_ADDR_CTXT_L_64IS0] = H("I_ADDR_CTXT_L_64IS0", "Address & Context, Long, 64 bit, IS0."),
    [EK_ETM4_ADDR_CTXT_L_64IS1] = H("I_ADDR_CTXT_L_64IS1", "Address & Context, Long, 64 bit, IS1."),
    [EK_ETM4_ADDR_MATCH] = H("I_ADDR_MATCH", "Exact Address Match."),
    [EK_ETM4_ADDR_S_IS0] = H("I_ADDR_S_IS0", "Address, Short, IS0."),
    [EK_ETM4_ADDR_S_IS1] = H("I_ADDR_S_IS1", "Address, Short, IS1."),
    [EK_ETM4_ADDR_L_32IS0] = H("I_ADDR_L_32IS0", "Address, Long, 32 bit, IS0."),
    [EK_ETM4_ADDR_L_32IS1] = H("I_ADDR_L_32IS1", "Address, Long, 32 bit, IS1."),
    [EK_ETM4_ADDR_L_64IS0] = H("I_ADDR_L_64IS0", "Address, Long, 64 bit, IS0."),
    [EK_ETM4_ADDR_L_64IS1] = H("I_ADDR_L_64IS1", "Address, Long, 64 bit, IS1."),
    [EK_ETM4_Q] = H("I_Q", "Q Packet."),
    [EK_ETM4_SRC_ADDR_MATCH] = H("I_SRC_ADDR_MATCH", "Exact Source Address Match."),
    [EK_ETM4_SRC_ADDR_S_IS0] = H("I_SRC_ADDR_S_IS0", "Source Address, Short, IS0."),
    [EK_ETM4_SRC_ADDR_S_IS1] = H("I_SRC_ADDR_S_IS1", "Source Address, Short, IS1."),
    [EK_ETM4_SRC_ADDR_L_32IS0] = H("I_SCR_ADDR_L_32IS0", "Source Address, Long, 32 bit, IS0."),
    [EK_ETM4_SRC_ADDR_L_32IS1] = H("I_SRC_ADDR_L_32IS1", "Source Address, Long, 32 bit, IS1."),
    [EK_ETM4_SRC_ADDR_L_64IS0] = H("I_SRC_ADDR_L_64IS0", "Source Address, Long, 64 bit, IS0."),
    [EK_ETM4_SRC_ADDR_L_64IS1] = H("I_SRC_ADDR_L_64IS1", "Source Address, Long, 64 bit, IS1."),
    [EK_ETM4_ATOM_F1] = H("I_ATOM_F1", "Atom format 1."),
    [EK_ETM4_ATOM_F2] = H("I_ATOM_F2", "Atom format 2."),
    [EK_ETM4_ATOM_F3] = H("I_ATOM_F3", "Atom format 3."),
    [EK_ETM4_ATOM_F4] = H("I_ATOM_F4", "Atom format 4."),
    [EK_ETM4_ATOM_F5] = H("I_ATOM_F5", "Atom format 5."),
    [EK_ETM4_ATOM_F6] = H("I_ATOM_F6", "Atom format 6."),
    [EK_ETM4_EXTENSION] = H("I_EXTENSION", "Extension packet header."),
};
#undef H

static const char *const exc_a[16] = {"PE Reset",     "Debug Halt", "Call",       "Trap",
                                      "System Error", "Reserved",   "Inst Debug", "Data Debug",
                                      "Reserved",     "Reserved",   "Alignment",  "Inst Fault",
                                      "Data Fault",   "Reserved",   "IRQ",        "FIQ"};

static const char *const exc_m[32] = {
    "Reserved", "PE Reset", "NMI",      "HardFault", "MemManage",   "BusFault",     "UsageFault",
    "Reserved", "Reserved", "Reserved", "Reserved",  "SVC",         "DebugMonitor", "Reserved",
    "PendSV",   "SysTick",  "IRQ0",     "IRQ1",      "IRQ2",        "IRQ3",         "IRQ4",
    "IRQ5",     "IRQ6",     "IRQ7",     "DebugHalt", "LazyFP Push", "Lockup",       "Reserved",
    "Reserved", "Reserved", "Reserved", "Reserved"};

static void addr_str(wr *w, const ek_etm4_addr *a, unsigned update_bits)
{
    ocsd_val_str(w, a->is_64 ? 64 : 32, a->valid_bits, a->val, update_bits);
}

static void ctxt_str(wr *w, const ek_etm4_ctx *c)
{
    if (!c->valid) return;
    if (!c->updated) {
        wr_lit(w, "Ctxt: Same");
        return;
    }
    if (c->sf)
        wr_lit(w, "Ctxt: AArch64,EL");
    else
        wr_lit(w, "Ctxt: AArch32, EL");
    wr_c(w, (char)('0' + c->el));
    wr_lit(w, ", ");
    if (c->nse)
        wr_s(w, c->ns ? "Realm; " : "Root; ");
    else
        wr_s(w, c->ns ? "NS; " : "S; ");
    if (c->cid_updated) {
        wr_lit(w, "CID=0x");
        wr_hex(w, c->cid, 8, 0);
        wr_lit(w, "; ");
    }
    if (c->vmid_updated) {
        wr_lit(w, "VMID=0x");
        wr_hex(w, c->vmid, 4, 0);
        wr_lit(w, "; ");
    }
}

/* "E"/"N" for each atom, oldest first: four at a time from a table of nibbles (the last four
 * bytes stored whole, the cursor moved by the atoms left: the line's room holds the rest) */
static void atom_seq(wr *w, uint32_t bits, unsigned n)
{
    static const char en[16][4] = {
        "NNNN", "ENNN", "NENN", "EENN", "NNEN", "ENEN", "NEEN", "EEEN",
        "NNNE", "ENNE", "NENE", "EENE", "NNEE", "ENEE", "NEEE", "EEEE",
    };
    if (!w->p) return;
    for (unsigned i = 0; i < n; i += 4) {
        memcpy(w->p, en[(bits >> i) & 15], 4);
        w->p += n - i < 4 ? n - i : 4;
    }
}

static void exc_str(wr *w, const ek_etm4_packet *k)
{
    const unsigned t = k->exc.type;
    wr_c(w, ' ');
    if (!k->exc.m_type) {
        wr_s(w, t < 16 ? exc_a[t] : "Reserved");
        wr_c(w, ';');
    } else {
        if (t < 32) {
            wr_s(w, exc_m[t]);
        } else if (t >= 0x208 && t <= 0x3EF) {
            wr_lit(w, "IRQ");
            wr_dec(w, t - 0x200);
        } else {
            wr_lit(w, "Reserved");
        }
        wr_c(w, ';');
        if (k->exc.m_fault_pending) wr_lit(w, " Fault Pending;");
    }
    if (k->exc.addr_interp == 1)
        wr_lit(w, " Ret Addr Follows;");
    else if (k->exc.addr_interp == 2)
        wr_lit(w, " Ret Addr Follows, Match Prev;");
}

/* The packet's description, in line in the two line functions: called, it took 7% more of a
 * packet listing's time (bench/ab packets), most packets being a head and a few letters */
EK_HOT void desc(wr *w, const ek_etm4_packet *k, const ek_etm4_config *cfg)
{
    const unsigned t = k->type;
    if (t < EK_ETM4_TYPE_COUNT && ocsd_head[t].n) {
        if (w->p) {
            memcpy(w->p, ocsd_head[t].s, HEAD_SLOT);
            w->p += ocsd_head[t].n;
        }
    }
    else
        wr_lit(w, "I_UNKNOWN : Unknown Packet Header");

    switch (t) {
    case EK_ETM4_BAD_SEQUENCE:
    case EK_ETM4_INCOMPLETE_EOT:
    case EK_ETM4_RESERVED_CFG:
        wr_c(w, '[');
        wr_s(w, ek_etm4_type_name(k->err_type));
        wr_c(w, ']');
        break;

    case EK_ETM4_ADDR_CTXT_L_32IS0:
    case EK_ETM4_ADDR_CTXT_L_32IS1:
    case EK_ETM4_ADDR_CTXT_L_64IS0:
    case EK_ETM4_ADDR_CTXT_L_64IS1:
    case EK_ETM4_ADDR_L_32IS0:
    case EK_ETM4_ADDR_L_32IS1:
    case EK_ETM4_ADDR_L_64IS0:
    case EK_ETM4_ADDR_L_64IS1:
    case EK_ETM4_SRC_ADDR_L_32IS0:
    case EK_ETM4_SRC_ADDR_L_32IS1:
    case EK_ETM4_SRC_ADDR_L_64IS0:
    case EK_ETM4_SRC_ADDR_L_64IS1: {
        const int is64 = t == EK_ETM4_ADDR_CTXT_L_64IS0 || t == EK_ETM4_ADDR_CTXT_L_64IS1 ||
                         t == EK_ETM4_ADDR_L_64IS0 || t == EK_ETM4_ADDR_L_64IS1 ||
                         t == EK_ETM4_SRC_ADDR_L_64IS0 || t == EK_ETM4_SRC_ADDR_L_64IS1;
        const unsigned lim = is64 ? 64 : 32;
        wr_lit(w, "; Addr=");
        addr_str(w, &k->addr, k->addr.pkt_bits < lim ? k->addr.pkt_bits : 0);
        wr_lit(w, "; ");
        if (t >= EK_ETM4_ADDR_CTXT_L_32IS0 && t <= EK_ETM4_ADDR_CTXT_L_64IS1) ctxt_str(w, &k->ctx);
        break;
    }

    case EK_ETM4_CTXT:
        wr_lit(w, "; ");
        ctxt_str(w, &k->ctx);
        break;

    case EK_ETM4_ADDR_S_IS0:
    case EK_ETM4_ADDR_S_IS1:
    case EK_ETM4_SRC_ADDR_S_IS0:
    case EK_ETM4_SRC_ADDR_S_IS1:
        wr_lit(w, "; Addr=");
        addr_str(w, &k->addr, k->addr.pkt_bits);
        break;

    case EK_ETM4_ADDR_MATCH:
    case EK_ETM4_SRC_ADDR_MATCH:
        wr_lit(w, ", [");
        wr_dec(w, k->match_idx);
        wr_lit(w, "]; Addr=");
        addr_str(w, &k->addr, 0);
        wr_lit(w, "; ");
        break;

    case EK_ETM4_ATOM_F1:
    case EK_ETM4_ATOM_F2:
    case EK_ETM4_ATOM_F3:
    case EK_ETM4_ATOM_F4:
    case EK_ETM4_ATOM_F5:
    case EK_ETM4_ATOM_F6:
        wr_lit(w, "; ");
        atom_seq(w, k->atom_bits, k->atom_num);
        break;

    case EK_ETM4_EXCEPT:
        wr_lit(w, "; ");
        exc_str(w, k);
        break;

    case EK_ETM4_TIMESTAMP:
        wr_lit(w, "; Updated val = 0x");
        wr_hex(w, k->timestamp, 0, 0);
        if (k->flags & EK_ETM4_PF_CC) {
            wr_lit(w, "; CC=0x");
            wr_hex(w, k->cycle_count, 0, 0);
        }
        break;

    case EK_ETM4_TRACE_INFO:
        wr_lit(w, "; INFO=0x");
        wr_hex(w, k->tinfo.info & 0xFF, 0, 0);
        wr_lit(w, " { CC.");
        wr_c(w, (char)('0' + (k->tinfo.info & 1)));
        if (cfg && (cfg->version >> 4) == 5) {
            wr_lit(w, ", TSTATE.");
            wr_c(w, (char)('0' + ((k->tinfo.info >> 6) & 1)));
        }
        wr_lit(w, " }");
        if (k->tinfo.info & 1) {
            wr_lit(w, "; CC_THRESHOLD=0x");
            wr_hex(w, k->tinfo.cc_threshold, 0, 0);
        }
        if ((k->flags & EK_ETM4_PF_INIT_TINFO) && (k->tinfo.sections & 0x04)) {
            wr_lit(w, "; INIT SPEC DEPTH=");
            wr_dec(w, k->tinfo.spec);
        }
        if (k->flags & EK_ETM4_PF_INIT_TINFO) wr_lit(w, "; Decoder Sync point TINFO");
        break;

    case EK_ETM4_CCNT_F1:
    case EK_ETM4_CCNT_F2:
    case EK_ETM4_CCNT_F3:
        wr_lit(w, "; Count=0x");
        wr_hex(w, k->cycle_count, 0, 0);
        if (k->flags & EK_ETM4_PF_COMMIT) {
            wr_lit(w, "; Commit(");
            wr_dec(w, k->commit);
            wr_c(w, ')');
        }
        break;

    case EK_ETM4_CANCEL_F1:
        wr_lit(w, "; Cancel(");
        wr_dec(w, k->cancel);
        wr_c(w, ')');
        break;

    case EK_ETM4_CANCEL_F1_MISPRED:
        wr_lit(w, "; Cancel(");
        wr_dec(w, k->cancel);
        wr_lit(w, "), Mispredict");
        break;

    case EK_ETM4_MISPREDICT:
    case EK_ETM4_CANCEL_F2:
        wr_lit(w, "; ");
        if (k->atom_num) {
            wr_lit(w, "Atom: ");
            atom_seq(w, k->atom_bits, k->atom_num);
            wr_lit(w, ", ");
        }
        if (t == EK_ETM4_CANCEL_F2)
            wr_lit(w, "Cancel(1), Mispredict");
        else
            wr_lit(w, "Mispredict");
        break;

    case EK_ETM4_CANCEL_F3:
        wr_lit(w, "; ");
        if (k->atom_num) wr_lit(w, "Atom: E, ");
        wr_lit(w, "Cancel(");
        wr_dec(w, k->cancel);
        wr_lit(w, "), Mispredict");
        break;

    case EK_ETM4_COMMIT:
        wr_lit(w, "; Commit(");
        wr_dec(w, k->commit);
        wr_c(w, ')');
        break;

    case EK_ETM4_Q:
        if (k->q.count_present) {
            wr_lit(w, "; Count(");
            wr_dec(w, k->q.count);
            wr_c(w, ')');
        } else {
            wr_lit(w, "; Count(Unknown)");
        }
        if (k->q.addr_match) {
            wr_lit(w, "; [");
            wr_dec(w, k->match_idx);
            wr_c(w, ']');
        }
        if (k->q.addr_present || k->q.addr_match) {
            wr_lit(w, "; Addr=");
            addr_str(w, &k->addr, k->addr.pkt_bits < 64 ? k->addr.pkt_bits : 0);
        }
        break;

    case EK_ETM4_ITE:
        wr_lit(w, "; EL");
        wr_dec(w, k->ite.el);
        wr_lit(w, "; Payload=0x");
        wr_hex(w, k->ite.value, 0, 0);
        break;

    default: break;
    }
}

void ek_list_etm4_ocsd_desc(ek_sbuf *out, const ek_etm4_packet *pkt, const ek_etm4_config *cfg)
{
    wr w;
    if (!wr_begin(&w, out, LINE_ROOM)) return;
    desc(&w, pkt, cfg);
    wr_end(&w);
}

void ek_list_etm4_ocsd(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id, int with_raw,
                       const ek_etm4_config *cfg)
{
    wr w;
    if (!wr_begin(&w, out, LINE_ROOM)) return;
    ocsd_pkt_head(&w, pkt->index, trace_id, pkt->raw, pkt->size, with_raw);
    desc(&w, pkt, cfg);
    wr_c(&w, '\n');
    wr_end(&w);
}

/* ---- trc_pkt_lister error-log lines --------------------------------------------------------- */

enum { DCD_NO_SYNC, DCD_WAIT_SYNC, DCD_WAIT_TINFO, DCD_DECODE };

void ek_ocsd_dcd_model_reset(ek_ocsd_dcd_model *m)
{
    m->state = DCD_NO_SYNC;
}

/* "<component>_<instance> : 0x<code> (<code name>) [<code text>]; TrcIdx=<n>; CS ID=<id>; " */
static void ocsd_err_head(wr *w, const char *comp, unsigned id, unsigned code, const char *name,
                          const char *text, uint64_t index)
{
    wr_s(w, comp);
    wr_c(w, '_');
    wr_dec0(w, id, 4);
    wr_lit(w, " : 0x");
    wr_hex(w, code, 4, 0);
    wr_lit(w, " (");
    wr_s(w, name);
    wr_lit(w, ") [");
    wr_s(w, text);
    wr_lit(w, "]; TrcIdx=");
    wr_dec(w, index);
    wr_lit(w, "; CS ID=");
    wr_hex(w, id, 2, 0);
    wr_lit(w, "; ");
}

void ek_list_etm4_ocsd_pre(ek_sbuf *out, const ek_etm4_packet *pkt, const ek_etm4_config *cfg)
{
    const int reserved = pkt->type == EK_ETM4_RESERVED;
    const int short_field = (pkt->flags & EK_ETM4_PF_SHORT_FIELD) != 0;
    if (!reserved && !short_field) return;
    wr w;
    if (!wr_begin(&w, out, 256)) return;
    const unsigned id = cfg ? cfg->trace_id : 0;
    const char *comp = "PKTP_ETMV4I";
    if (reserved) {
        ocsd_err_head(&w, comp, id, 0x14, "OCSD_ERR_INVALID_PCKT_HDR", "Invalid packet header",
                      pkt->index);
    } else {
        ocsd_err_head(&w, comp, id, 0x13, "OCSD_ERR_BAD_PACKET_SEQ", "Bad packet sequence",
                      pkt->index);
        wr_lit(&w, "Invalid continuation fields in packet");
    }
    wr_end(&w);
}

void ek_list_etm4_ocsd_post(ek_sbuf *out, ek_ocsd_dcd_model *m, const ek_etm4_packet *pkt,
                            const ek_etm4_config *cfg)
{
    const unsigned t = pkt->type;
    const char *reason = NULL;
    unsigned code = 0x19;
    switch (m->state) {
    case DCD_NO_SYNC:
        m->state = DCD_WAIT_SYNC;
        /* fallthrough */
    case DCD_WAIT_SYNC:
        if (t == EK_ETM4_ASYNC) m->state = DCD_WAIT_TINFO;
        return;
    case DCD_WAIT_TINFO:
        if (t == EK_ETM4_TRACE_INFO) m->state = DCD_DECODE;
        return;
    default: break;
    }
    switch (t) {
    case EK_ETM4_BAD_SEQUENCE: reason = "Bad byte sequence in packet."; break;
    case EK_ETM4_RESERVED: reason = "Reserved packet header"; break;
    case EK_ETM4_COND_I_F1:
    case EK_ETM4_COND_I_F2:
    case EK_ETM4_COND_I_F3:
    case EK_ETM4_COND_FLUSH:
    case EK_ETM4_COND_RES_F1:
    case EK_ETM4_COND_RES_F2:
    case EK_ETM4_COND_RES_F3:
    case EK_ETM4_COND_RES_F4:
    case EK_ETM4_NUM_DS_MKR:
    case EK_ETM4_UNNUM_DS_MKR:
        reason = "Data trace related, unsupported packet type.";
        code = 0x18;
        break;
    case EK_ETM4_NONE:
    case EK_ETM4_NOTSYNC:
    case EK_ETM4_INCOMPLETE_EOT:
    case EK_ETM4_RESERVED_CFG:
    case EK_ETM4_EXTENSION:
    case EK_ETM4_PE_RESET: reason = "Unknown packet type."; break;
    default: return;
    }
    m->state = DCD_NO_SYNC; /* the decoder resets and waits for the next A-Sync */
    wr w;
    if (!wr_begin(&w, out, 256)) return;
    const unsigned id = cfg ? cfg->trace_id : 0;
    if (code == 0x19)
        ocsd_err_head(&w, "DCD_ETMV4", id, code, "OCSD_ERR_BAD_DECODE_PKT",
                      "Reserved or unknown packet in decoder.", pkt->index);
    else
        ocsd_err_head(&w, "DCD_ETMV4", id, code, "OCSD_ERR_UNSUPP_DECODE_PKT",
                      "Unsupported packet type for decode.", pkt->index);
    wr_s(&w, reason);
    wr_end(&w);
}

/* ---- etmkit text ------------------------------------------------------------------------- */

static void text_ctx(wr *w, const ek_etm4_ctx *c)
{
    if (!c->updated) {
        wr_lit(w, " ctx=same");
        return;
    }
    wr_lit(w, " el=");
    wr_c(w, (char)('0' + c->el));
    wr_s(w, c->nse ? (c->ns ? " realm" : " root") : (c->ns ? " ns" : " s"));
    wr_s(w, c->sf ? " aarch64" : " aarch32");
    if (c->cid_updated) {
        wr_lit(w, " cid=0x");
        wr_hex(w, c->cid, 0, 0);
    }
    if (c->vmid_updated) {
        wr_lit(w, " vmid=0x");
        wr_hex(w, c->vmid, 0, 0);
    }
}

static void text_addr(wr *w, const ek_etm4_addr *a, int with_bits)
{
    wr_lit(w, " addr=0x");
    wr_hex(w, a->val, 0, 0);
    wr_s(w, a->is ? " is1" : " is0");
    if (with_bits && a->pkt_bits && a->pkt_bits < 64) {
        wr_lit(w, " (");
        wr_dec(w, a->pkt_bits);
        wr_lit(w, " bits)");
    }
}

static int type_is_addr(unsigned t)
{
    return t >= EK_ETM4_ADDR_CTXT_L_32IS0 && t <= EK_ETM4_SRC_ADDR_L_64IS1 && t != EK_ETM4_Q;
}

void ek_list_etm4_text(ek_sbuf *out, const ek_etm4_packet *k, unsigned trace_id,
                       const ek_etm4_config *cfg)
{
    (void)cfg;
    wr w;
    if (!wr_begin(&w, out, LINE_ROOM)) return;
    const unsigned t = k->type;
    wr_dec_w(&w, k->index, 10);
    wr_lit(&w, "  ");
    wr_hex2(&w, (uint8_t)trace_id);
    wr_lit(&w, "  ");
    const char *name = ek_etm4_type_name(t) + 2; /* without "I_" */
    const size_t nl = strlen(name);
    wr_n(&w, name, nl);
    for (size_t i = nl; i < 20; i++)
        wr_c(&w, ' ');

    if (k->flags & EK_ETM4_PF_ERROR) {
        if (t != EK_ETM4_NOTSYNC && k->err_type) {
            wr_lit(&w, " while decoding ");
            wr_s(&w, ek_etm4_type_name(k->err_type) + 2);
        }
    } else if (type_is_addr(t)) {
        const int match = t == EK_ETM4_ADDR_MATCH || t == EK_ETM4_SRC_ADDR_MATCH;
        if (match) {
            wr_lit(&w, " match=");
            wr_dec(&w, k->match_idx);
        }
        if (t != EK_ETM4_CTXT) text_addr(&w, &k->addr, !match);
        if (t == EK_ETM4_CTXT || (t >= EK_ETM4_ADDR_CTXT_L_32IS0 && t <= EK_ETM4_ADDR_CTXT_L_64IS1))
            text_ctx(&w, &k->ctx);
    } else {
        switch (t) {
        case EK_ETM4_ATOM_F1:
        case EK_ETM4_ATOM_F2:
        case EK_ETM4_ATOM_F3:
        case EK_ETM4_ATOM_F4:
        case EK_ETM4_ATOM_F5:
        case EK_ETM4_ATOM_F6:
            wr_c(&w, ' ');
            atom_seq(&w, k->atom_bits, k->atom_num);
            break;
        case EK_ETM4_TRACE_INFO:
            wr_lit(&w, " info=0x");
            wr_hex(&w, k->tinfo.info, 0, 0);
            wr_s(&w, (k->tinfo.info & 1) ? " cc=on" : " cc=off");
            if (k->tinfo.sections & 0x02) {
                wr_lit(&w, " p0key=");
                wr_dec(&w, k->tinfo.p0_key);
            }
            if (k->tinfo.sections & 0x04) {
                wr_lit(&w, " spec=");
                wr_dec(&w, k->tinfo.spec);
            }
            if (k->tinfo.sections & 0x08) {
                wr_lit(&w, " cc_threshold=0x");
                wr_hex(&w, k->tinfo.cc_threshold, 0, 0);
            }
            if (k->flags & EK_ETM4_PF_INIT_TINFO) wr_lit(&w, " (sync point)");
            break;
        case EK_ETM4_TIMESTAMP:
            wr_lit(&w, " ts=0x");
            wr_hex(&w, k->timestamp, 0, 0);
            wr_lit(&w, " (");
            wr_dec(&w, k->ts_bits);
            wr_lit(&w, " bits)");
            break;
        case EK_ETM4_EXCEPT:
        case EK_ETM4_PE_RESET:
        case EK_ETM4_TRANS_FAIL:
            wr_lit(&w, " type=0x");
            wr_hex(&w, k->exc.type, 0, 0);
            if (!k->exc.m_type && k->exc.type < 16) {
                wr_lit(&w, " (");
                wr_s(&w, exc_a[k->exc.type]);
                wr_c(&w, ')');
            } else if (k->exc.m_type && k->exc.type < 32) {
                wr_lit(&w, " (");
                wr_s(&w, exc_m[k->exc.type]);
                wr_c(&w, ')');
            }
            if (k->exc.addr_interp) {
                wr_lit(&w, " ret-addr=");
                wr_dec(&w, k->exc.addr_interp);
            }
            break;
        case EK_ETM4_CTXT: text_ctx(&w, &k->ctx); break;
        case EK_ETM4_Q:
            if (k->q.count_present) {
                wr_lit(&w, " count=");
                wr_dec(&w, k->q.count);
            } else {
                wr_lit(&w, " count=unknown");
            }
            if (k->q.addr_match) {
                wr_lit(&w, " match=");
                wr_dec(&w, k->match_idx);
            }
            if (k->q.addr_present || k->q.addr_match) text_addr(&w, &k->addr, !k->q.addr_match);
            break;
        case EK_ETM4_EVENT:
            wr_lit(&w, " events=0x");
            wr_hex(&w, k->event, 0, 0);
            break;
        case EK_ETM4_NUM_DS_MKR:
        case EK_ETM4_UNNUM_DS_MKR:
            wr_lit(&w, " marker=");
            wr_dec(&w, k->dsm);
            break;
        case EK_ETM4_ITE:
            wr_lit(&w, " el=");
            wr_dec(&w, k->ite.el);
            wr_lit(&w, " value=0x");
            wr_hex(&w, k->ite.value, 0, 0);
            break;
        case EK_ETM4_CANCEL_F1:
        case EK_ETM4_CANCEL_F1_MISPRED:
        case EK_ETM4_CANCEL_F2:
        case EK_ETM4_CANCEL_F3:
        case EK_ETM4_MISPREDICT:
            if (k->atom_num) {
                wr_lit(&w, " atoms=");
                atom_seq(&w, k->atom_bits, k->atom_num);
            }
            wr_lit(&w, " cancel=");
            wr_dec(&w, k->cancel);
            if (t != EK_ETM4_CANCEL_F1) wr_lit(&w, " mispredict");
            break;
        default: break;
        }
        if (k->flags & EK_ETM4_PF_CC) {
            wr_lit(&w, " cc=");
            wr_dec(&w, k->cycle_count);
        }
        if (k->flags & EK_ETM4_PF_COMMIT) {
            wr_lit(&w, " commit=");
            wr_dec(&w, k->commit);
        }
    }
    wr_lit(&w, "  [");
    for (unsigned i = 0; i < k->size; i++) {
        if (i) wr_c(&w, ' ');
        wr_hex2(&w, k->raw[i]);
    }
    wr_lit(&w, "]\n");
    wr_end(&w);
}

/* ---- JSON lines --------------------------------------------------------------------------- */

static void json_u(wr *w, const char *key, uint64_t v)
{
    wr_lit(w, ",\"");
    wr_s(w, key);
    wr_lit(w, "\":");
    wr_dec(w, v);
}

static void json_hex(wr *w, const char *key, uint64_t v)
{
    wr_lit(w, ",\"");
    wr_s(w, key);
    wr_lit(w, "\":\"0x");
    wr_hex(w, v, 0, 0);
    wr_c(w, '"');
}

static void json_str(wr *w, const char *key, const char *v)
{
    wr_lit(w, ",\"");
    wr_s(w, key);
    wr_lit(w, "\":\"");
    wr_s(w, v);
    wr_c(w, '"');
}

static void json_atoms(wr *w, const ek_etm4_packet *k)
{
    wr_lit(w, ",\"atoms\":\"");
    atom_seq(w, k->atom_bits, k->atom_num);
    wr_c(w, '"');
}

static void json_addr(wr *w, const ek_etm4_packet *k)
{
    json_hex(w, "addr", k->addr.val);
    json_u(w, "is", k->addr.is);
    json_u(w, "addr_bits", k->addr.pkt_bits);
}

static void json_ctx(wr *w, const ek_etm4_ctx *c)
{
    if (!c->updated) {
        wr_lit(w, ",\"ctx\":\"same\"");
        return;
    }
    json_u(w, "el", c->el);
    json_u(w, "ns", c->ns);
    json_u(w, "nse", c->nse);
    json_u(w, "aarch64", c->sf);
    if (c->cid_updated) json_hex(w, "cid", c->cid);
    if (c->vmid_updated) json_hex(w, "vmid", c->vmid);
}

void ek_list_etm4_json(ek_sbuf *out, const ek_etm4_packet *k, unsigned trace_id,
                       const ek_etm4_config *cfg)
{
    (void)cfg;
    wr w;
    if (!wr_begin(&w, out, LINE_ROOM)) return;
    const unsigned t = k->type;
    wr_lit(&w, "{\"idx\":");
    wr_dec(&w, k->index);
    json_u(&w, "id", trace_id);
    json_str(&w, "type", ek_etm4_type_name(t) + 2);
    wr_lit(&w, ",\"raw\":\"");
    for (unsigned i = 0; i < k->size; i++)
        wr_hex2(&w, k->raw[i]);
    wr_c(&w, '"');
    if (k->flags & EK_ETM4_PF_ERROR) {
        if (t != EK_ETM4_NOTSYNC && k->err_type)
            json_str(&w, "while", ek_etm4_type_name(k->err_type) + 2);
    } else if (type_is_addr(t)) {
        if (t == EK_ETM4_ADDR_MATCH || t == EK_ETM4_SRC_ADDR_MATCH)
            json_u(&w, "match", k->match_idx);
        if (t != EK_ETM4_CTXT) json_addr(&w, k);
        if (t == EK_ETM4_CTXT || (t >= EK_ETM4_ADDR_CTXT_L_32IS0 && t <= EK_ETM4_ADDR_CTXT_L_64IS1))
            json_ctx(&w, &k->ctx);
    } else {
        switch (t) {
        case EK_ETM4_ATOM_F1:
        case EK_ETM4_ATOM_F2:
        case EK_ETM4_ATOM_F3:
        case EK_ETM4_ATOM_F4:
        case EK_ETM4_ATOM_F5:
        case EK_ETM4_ATOM_F6: json_atoms(&w, k); break;
        case EK_ETM4_TRACE_INFO:
            json_hex(&w, "info", k->tinfo.info);
            if (k->tinfo.sections & 0x02) json_u(&w, "p0_key", k->tinfo.p0_key);
            if (k->tinfo.sections & 0x04) json_u(&w, "spec", k->tinfo.spec);
            if (k->tinfo.sections & 0x08) json_hex(&w, "cc_threshold", k->tinfo.cc_threshold);
            json_u(&w, "sync_point", (k->flags & EK_ETM4_PF_INIT_TINFO) != 0);
            break;
        case EK_ETM4_TIMESTAMP:
            json_hex(&w, "ts", k->timestamp);
            json_u(&w, "ts_bits", k->ts_bits);
            break;
        case EK_ETM4_EXCEPT:
        case EK_ETM4_PE_RESET:
        case EK_ETM4_TRANS_FAIL:
            json_u(&w, "exception", k->exc.type);
            json_u(&w, "addr_interp", k->exc.addr_interp);
            if (k->exc.m_type) json_u(&w, "m_fault_pending", k->exc.m_fault_pending);
            break;
        case EK_ETM4_Q:
            if (k->q.count_present) json_u(&w, "count", k->q.count);
            if (k->q.addr_match) json_u(&w, "match", k->match_idx);
            if (k->q.addr_present || k->q.addr_match) json_addr(&w, k);
            break;
        case EK_ETM4_EVENT: json_u(&w, "events", k->event); break;
        case EK_ETM4_NUM_DS_MKR:
        case EK_ETM4_UNNUM_DS_MKR: json_u(&w, "marker", k->dsm); break;
        case EK_ETM4_ITE:
            json_u(&w, "el", k->ite.el);
            json_hex(&w, "value", k->ite.value);
            break;
        case EK_ETM4_CANCEL_F1:
        case EK_ETM4_CANCEL_F1_MISPRED:
        case EK_ETM4_CANCEL_F2:
        case EK_ETM4_CANCEL_F3:
        case EK_ETM4_MISPREDICT:
            if (k->atom_num) json_atoms(&w, k);
            json_u(&w, "cancel", k->cancel);
            break;
        default: break;
        }
        if (k->flags & EK_ETM4_PF_CC) json_u(&w, "cc", k->cycle_count);
        if (k->flags & EK_ETM4_PF_COMMIT) json_u(&w, "commit", k->commit);
    }
    wr_lit(&w, "}\n");
    wr_end(&w);
}

/* ---- raw frames ----------------------------------------------------------------------------- */

void ek_list_frame_ocsd(ek_sbuf *out, const ek_dfmt_item *it)
{
    wr w;
    if (!wr_begin(&w, out, 96 + (size_t)it->len * 4)) return;
    wr_lit(&w, "Frame Data; Index");
    wr_dec_w(&w, it->index, 7);
    wr_lit(&w, "; ");
    switch (it->kind) {
    case EK_DFMT_RAW_PACKED: wr_lit(&w, "   RAW_PACKED; "); break;
    case EK_DFMT_RAW_FSYNC: wr_lit(&w, "        FSYNC; "); break;
    case EK_DFMT_DATA:
        wr_lit(&w, "  ID_DATA[");
        if (it->id == EK_TRACE_ID_UNKNOWN) {
            wr_lit(&w, "????");
        } else {
            wr_lit(&w, "0x");
            wr_hex2(&w, it->id);
        }
        wr_lit(&w, "]; ");
        break;
    default: wr_lit(&w, "      UNKNOWN; "); break;
    }
    for (unsigned i = 0; i < it->len; i++) {
        if (i && i % 16 == 0) wr_c(&w, '\n');
        wr_hex2(&w, it->data[i]);
        wr_c(&w, ' ');
    }
    wr_c(&w, '\n');
    wr_end(&w);
}
