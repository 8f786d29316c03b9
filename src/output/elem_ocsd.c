/* OpenCSD 1.8.0 generic-element text (trc_pkt_lister's element lines). The exact spelling,
 * spacing and number widths are those of OpenCSD's OcsdTraceElement::toString. */
#include "etmkit/config.h"
#include "etmkit/elem.h"
#include "output/elem_fmt.h"

static const char *const type_names[EK_ELEM_NTYPES] = {
    "UNKNOWN",       "NO_SYNC",        "TRACE_ON",        "EO_TRACE",     "PE_CONTEXT",
    "INSTR_RANGE",   "I_RANGE_NOPATH", "ADDR_NACC",       "ADDR_UNKNOWN", "EXCEPTION",
    "EXCEPTION_RET", "TIMESTAMP",      "CYCLE_COUNT",     "EVENT",        "SWTRACE",
    "SYNC_MARKER",   "MEMTRANS",       "INSTRUMENTATION", "ITMTRACE",     "CUSTOM",
};

static const char *const iset_names[] = {"A32", "T32", "A64", "TEE", "Jaz", "Cst", "Unk"};

/* Element heads: "OCSD_GEN_TRC_ELEM_<TYPE>(" */
#define HEAD(t) EF_NAME("OCSD_GEN_TRC_ELEM_" t "(")
static const struct {
    char s[40];
    uint8_t n;
} heads[EK_ELEM_NTYPES] = {
    HEAD("UNKNOWN"),      HEAD("NO_SYNC"),         HEAD("TRACE_ON"),       HEAD("EO_TRACE"),
    HEAD("PE_CONTEXT"),   HEAD("INSTR_RANGE"),     HEAD("I_RANGE_NOPATH"), HEAD("ADDR_NACC"),
    HEAD("ADDR_UNKNOWN"), HEAD("EXCEPTION"),       HEAD("EXCEPTION_RET"),  HEAD("TIMESTAMP"),
    HEAD("CYCLE_COUNT"),  HEAD("EVENT"),           HEAD("SWTRACE"),        HEAD("SYNC_MARKER"),
    HEAD("MEMTRANS"),     HEAD("INSTRUMENTATION"), HEAD("ITMTRACE"),       HEAD("CUSTOM"),
};

/* "(ISA=<isa>) " */
static const ef_name isa_part[] = {
    EF_NAME("(ISA=A32) "), EF_NAME("(ISA=T32) "), EF_NAME("(ISA=A64) "), EF_NAME("(ISA=TEE) "),
    EF_NAME("(ISA=Jaz) "), EF_NAME("(ISA=Cst) "), EF_NAME("(ISA=Unk) "),
};

/* Last-instruction class and subclass texts (trailing spaces are part of the format). */
static const ef_name itype_text[] = {EF_NAME("--- "),  EF_NAME("BR  "),    EF_NAME("iBR "),
                                     EF_NAME("ISB "),  EF_NAME("DSB.DMB"), EF_NAME("WFI.WFE"),
                                     EF_NAME("TSTART")};
static const ef_name isub_text[] = {EF_NAME("--- "), EF_NAME("b+link "), EF_NAME("A64:ret "),
                                    EF_NAME("A64:eret "), EF_NAME("V7:impl ret")};

static const char *const trace_on_text[] = {"begin or filter", "overflow", "debug restart"};

static const char *const unsync_text[] = {"undefined",         "init-decoder", "reset-decoder",
                                          "overflow",          "discard",      "bad-packet",
                                          "bad-program-image", "end-of-trace"};

static const char *const memtrans_text[] = {"Init", "Start", "Commit", "Fail"};

const char *ek_elem_type_name(int type)
{
    if (type < 0 || type >= EK_ELEM_NTYPES) return "UNKNOWN";
    return type_names[type];
}

const char *ek_iset_name(int isa)
{
    if (isa < 0 || isa > EK_ISET_UNKNOWN) isa = EK_ISET_UNKNOWN;
    return iset_names[isa];
}

const char *ek_unsync_reason_name(int r)
{
    if (r < 0 || r > EK_UNSYNC_EOT) return "undefined";
    return unsync_text[r];
}

/* OpenCSD's names for memory spaces (TrcMemAccessorBase::getMemAccSpaceString). */
static char *put_mem_space(char *p, uint32_t space)
{
    switch (space) {
    case EK_MS_EL1S: EF_PUTS(p, "EL1S"); return p;
    case EK_MS_EL1N: EF_PUTS(p, "EL1N"); return p;
    case EK_MS_EL2: EF_PUTS(p, "EL2N"); return p;
    case EK_MS_EL3: EF_PUTS(p, "EL3"); return p;
    case EK_MS_EL2S: EF_PUTS(p, "EL2S"); return p;
    case EK_MS_EL1R: EF_PUTS(p, "EL1R"); return p;
    case EK_MS_EL2R: EF_PUTS(p, "EL2R"); return p;
    case EK_MS_ROOT: EF_PUTS(p, "Root"); return p;
    case EK_MS_S: EF_PUTS(p, "Any S"); return p;
    case EK_MS_N: EF_PUTS(p, "Any NS"); return p;
    case EK_MS_R: EF_PUTS(p, "Any R"); return p;
    case EK_MS_ANY: EF_PUTS(p, "Any"); return p;
    default: break;
    }
    if (space & EK_MS_EL1S) EF_PUTS(p, "EL1S,");
    if (space & EK_MS_EL1N) EF_PUTS(p, "EL1N,");
    if (space & EK_MS_EL2) EF_PUTS(p, "EL2N,");
    if (space & EK_MS_EL3) EF_PUTS(p, "EL3,");
    if (space & EK_MS_EL2S) EF_PUTS(p, "EL2S,");
    if (space & EK_MS_EL1R) EF_PUTS(p, "EL1R,");
    if (space & EK_MS_EL2R) EF_PUTS(p, "EL2R,");
    if (space & EK_MS_ROOT) EF_PUTS(p, "Root,");
    return p;
}

/* STM software trace: OpenCSD's printSWInfoPkt. */
static char *put_swt(char *p, const ek_elem *e)
{
    const unsigned f = e->u.swt.flags;
    if (f & EK_SWT_GLOBAL_ERR) {
        EF_PUTS(p, "{Global Error.}");
        return p;
    }
    if (f & EK_SWT_ID_VALID) {
        EF_PUTS(p, " (Ma:0x");
        p = ef_hex(p, e->u.swt.master, 2);
        EF_PUTS(p, "; Ch:0x");
        p = ef_hex(p, e->u.swt.channel, 2);
        EF_PUTS(p, ") ");
    } else {
        EF_PUTS(p, "(Ma:0x?\?; Ch:0x?\?) ");
    }
    const unsigned bits = e->u.swt.payload_bits;
    if (bits) {
        EF_PUTS(p, "0x");
        switch (bits) {
        case 4: p = ef_hex(p, e->u.swt.payload & 0xF, 1); break;
        case 8: p = ef_hex(p, e->u.swt.payload & 0xFF, 2); break;
        case 16: p = ef_hex(p, e->u.swt.payload & 0xFFFF, 4); break;
        case 32: p = ef_hex(p, e->u.swt.payload & 0xFFFFFFFFu, 8); break;
        case 64: p = ef_hex(p, e->u.swt.payload, 16); break;
        default: EF_PUTS(p, "{Data Error : unsupported bit width.}"); break;
        }
        EF_PUTS(p, "; ");
    }
    if (f & EK_SWT_MARKER) EF_PUTS(p, "+Mrk ");
    if (f & EK_SWT_TRIGGER) EF_PUTS(p, "Trig ");
    if (f & EK_SWT_HAS_TS) {
        EF_PUTS(p, " [ TS=0x");
        p = ef_hex(p, e->timestamp, 12);
        EF_PUTS(p, "]; ");
    }
    if (f & EK_SWT_FREQ) EF_PUTS(p, "Freq");
    if (f & EK_SWT_MASTER_ERR) EF_PUTS(p, "{Master Error.}");
    return p;
}

/* ITM software / hardware trace, as OpenCSD 1.8.0 prints ITMTRACE elements. */
static char *put_itm(char *p, const ek_elem *e)
{
    static const char *const local_ts[4] = {"TS Sync", "TS Delay", "Packet Delay",
                                            "TS and Packet Delay"};
    const unsigned size = e->u.itm.size <= 4 ? e->u.itm.size : 4;
    if (e->u.itm.overflow) EF_PUTS(p, "ITM_OVERFLOW; ");
    switch (e->u.itm.kind) {
    case EK_ITM_SWIT:
    case EK_ITM_DWT:
        if (e->u.itm.kind == EK_ITM_SWIT)
            EF_PUTS(p, "ITM_SWIT (ch: 0x");
        else
            EF_PUTS(p, "ITM_DWT (desc: 0x");
        p = ef_hex(p, e->u.itm.port, 0);
        EF_PUTS(p, "; Data: 0x");
        p = ef_hex(p, e->u.itm.value, size * 2);
        EF_PUTS(p, ") ");
        break;
    case EK_ITM_TS_GLOBAL:
        EF_PUTS(p, "ITM_TS_GLOBAL ( TS: 0x");
        p = ef_hex(p, e->timestamp, 16);
        EF_PUTS(p, ") ");
        break;
    case EK_ITM_TS_SYNC:
    case EK_ITM_TS_DELAY:
    case EK_ITM_TS_PKT_DELAY:
    case EK_ITM_TS_PKT_TS_DELAY:
        EF_PUTS(p, "ITM_TS_LOCAL ( TS delta: 0x");
        p = ef_hex(p, e->u.itm.value, 8);
        EF_PUTS(p, ", { ");
        p = ef_str(p, local_ts[e->u.itm.kind - EK_ITM_TS_SYNC]);
        EF_PUTS(p, "}; TS cumulative: 0x");
        p = ef_hex(p, e->timestamp, 16);
        EF_PUTS(p, ") ");
        break;
    default: break;
    }
    return p;
}

/* Writes the element text into p (at most ~300 bytes); returns the end. */
static char *format_body(char *p, const ek_elem *e)
{
    unsigned type = e->type;
    if (type >= EK_ELEM_NTYPES) {
        EF_PUTS(p, "OCSD_GEN_TRC_ELEM??: index out of range.");
        return p;
    }
    memcpy(p, heads[type].s, sizeof heads[type].s);
    p += heads[type].n;
    switch (type) {
    case EK_ELEM_INSTR_RANGE:
        EF_PUTS(p, "exec range=0x");
        p = ef_hex(p, e->st_addr, 0);
        EF_PUTS(p, ":[0x");
        p = ef_hex(p, e->en_addr, 0);
        EF_PUTS(p, "] num_i(");
        p = ef_dec(p, e->num_instr);
        EF_PUTS(p, ") last_sz(");
        *p++ = (char)('0' + (e->last_i_size & 7));
        EF_PUTS(p, ") ");
        p = ef_name_put(p, &isa_part[e->isa <= EK_ISET_UNKNOWN ? e->isa : EK_ISET_UNKNOWN]);
        *p++ = (e->flags & EK_ELEMF_LAST_EXEC) ? 'E' : 'N';
        *p++ = ' ';
        if (e->last_i_type < sizeof(itype_text) / sizeof(itype_text[0]))
            p = ef_name_put(p, &itype_text[e->last_i_type]);
        if (e->last_i_sub != 0 && e->last_i_sub < sizeof(isub_text) / sizeof(isub_text[0]))
            p = ef_name_put(p, &isub_text[e->last_i_sub]);
        if (e->flags & EK_ELEMF_LAST_COND) EF_PUTS(p, " <cond>");
        break;

    case EK_ELEM_ADDR_NACC:
        EF_PUTS(p, " 0x");
        p = ef_hex(p, e->st_addr, 0);
        EF_PUTS(p, "; Memspace [0x");
        p = ef_hex(p, e->u.mem_space, 0);
        *p++ = ':';
        p = put_mem_space(p, e->u.mem_space);
        EF_PUTS(p, "] ");
        break;

    case EK_ELEM_I_RANGE_NOPATH:
        EF_PUTS(p, "first 0x");
        p = ef_hex(p, e->st_addr, 0);
        EF_PUTS(p, ":[next 0x");
        p = ef_hex(p, e->en_addr, 0);
        EF_PUTS(p, "] num_i(");
        p = ef_dec(p, e->num_instr);
        EF_PUTS(p, ") ");
        break;

    case EK_ELEM_EXCEPTION:
        if (e->flags & EK_ELEMF_EXCEP_RET_ADDR) {
            EF_PUTS(p, "pref ret addr:0x");
            p = ef_hex(p, e->en_addr, 0);
            if (e->flags & EK_ELEMF_EXCEP_BR_TGT) EF_PUTS(p, " [addr also prev br tgt]");
            EF_PUTS(p, "; ");
        }
        EF_PUTS(p, "excep num (0x");
        p = ef_hex(p, e->u.exception_number, 2);
        EF_PUTS(p, ") ");
        break;

    case EK_ELEM_PE_CONTEXT: {
        const ek_pe_context *c = &e->context;
        p = ef_name_put(p, &isa_part[e->isa <= EK_ISET_UNKNOWN ? e->isa : EK_ISET_UNKNOWN]);
        if (c->el >= 0 && c->el_valid) {
            EF_PUTS(p, "EL");
            p = ef_dec(p, (uint64_t)c->el);
        }
        switch (c->security) {
        case EK_SEC_SECURE: EF_PUTS(p, "S; "); break;
        case EK_SEC_NONSECURE: EF_PUTS(p, "N; "); break;
        case EK_SEC_ROOT: EF_PUTS(p, "Root; "); break;
        case EK_SEC_REALM: EF_PUTS(p, "Realm; "); break;
        default: break;
        }
        if (c->bits64)
            EF_PUTS(p, "64-bit; ");
        else
            EF_PUTS(p, "32-bit; ");
        if (c->vmid_valid) {
            EF_PUTS(p, "VMID=0x");
            p = ef_hex(p, c->vmid, 0);
            EF_PUTS(p, "; ");
        }
        if (c->ctxt_id_valid) {
            EF_PUTS(p, "CTXTID=0x");
            p = ef_hex(p, c->context_id, 0);
            EF_PUTS(p, "; ");
        }
        break;
    }

    case EK_ELEM_TRACE_ON:
        EF_PUTS(p, " [");
        p = ef_str(p, e->u.trace_on_reason <= EK_TRACE_ON_EX_DEBUG
                          ? trace_on_text[e->u.trace_on_reason]
                          : "");
        *p++ = ']';
        break;

    case EK_ELEM_TIMESTAMP:
        EF_PUTS(p, " [ TS=0x");
        p = ef_hex(p, e->timestamp, 12);
        EF_PUTS(p, "]; ");
        break;

    case EK_ELEM_EVENT:
        if (e->u.event.type == EK_EVENT_TRIGGER) {
            EF_PUTS(p, " Trigger; ");
        } else if (e->u.event.type == EK_EVENT_NUMBERED) {
            EF_PUTS(p, " Numbered:");
            p = ef_dec(p, e->u.event.number);
            EF_PUTS(p, "; ");
        }
        break;

    case EK_ELEM_EO_TRACE:
    case EK_ELEM_NO_SYNC:
        if (e->u.unsync_reason <= EK_UNSYNC_EOT) {
            EF_PUTS(p, " [");
            p = ef_str(p, unsync_text[e->u.unsync_reason]);
            *p++ = ']';
        }
        break;

    case EK_ELEM_SYNC_MARKER:
        EF_PUTS(p, " [");
        if (e->u.marker.type == EK_MARKER_TS) EF_PUTS(p, "Timestamp marker");
        EF_PUTS(p, "(0x");
        p = ef_hex(p, e->u.marker.value, 8);
        EF_PUTS(p, ")]");
        break;

    case EK_ELEM_MEMTRANS:
        if (e->u.memtrans <= EK_MEMTRANS_FAIL) p = ef_str(p, memtrans_text[e->u.memtrans]);
        break;

    case EK_ELEM_SWTRACE: p = put_swt(p, e); break;
    case EK_ELEM_ITMTRACE: p = put_itm(p, e); break;

    case EK_ELEM_INSTRUMENTATION:
        EF_PUTS(p, "EL");
        p = ef_dec(p, e->u.ite.el);
        EF_PUTS(p, "; 0x");
        p = ef_hex(p, e->u.ite.value, 16);
        break;

    default: break;
    }
    if (e->flags & EK_ELEMF_HAS_CC) {
        EF_PUTS(p, " [CC=");
        p = ef_dec(p, e->cycle_count);
        EF_PUTS(p, "]; ");
    }
    *p++ = ')';
    return p;
}

#define LINE_MAX_LEN 384

void ek_elem_format_ocsd(ek_sbuf *out, const ek_elem *e)
{
    if (ek_sbuf_room(out, LINE_MAX_LEN)) return;
    char *p = out->p + out->len;
    p = format_body(p, e);
    *p = '\0';
    out->len = (size_t)(p - out->p);
}

/* "Idx:<n>; ID:<hex>; <body>\n" at p (LINE_MAX_LEN bytes of room); returns its end. */
static inline char *line_at(char *p, const ek_elem *e)
{
    EF_PUTS(p, "Idx:");
    p = ef_dec(p, e->index);
    EF_PUTS(p, "; ID:");
    p = ef_hex(p, e->trace_id, 0);
    EF_PUTS(p, "; ");
    p = format_body(p, e);
    *p++ = '\n';
    return p;
}

void ek_elem_format_ocsd_line(ek_sbuf *out, const ek_elem *e)
{
    if (ek_sbuf_room(out, LINE_MAX_LEN)) return;
    char *p = line_at(out->p + out->len, e);
    *p = '\0';
    out->len = (size_t)(p - out->p);
}

/* Elements in runs of this many: room for a run at once (a listing has a flow step's
 * elements, usually a few; a long step is not reserved for whole). */
#define LINES_RUN 32

void ek_elem_format_ocsd_lines(ek_sbuf *out, const ek_elem *e, size_t n, int tab)
{
    while (n) {
        const size_t k = n < LINES_RUN ? n : LINES_RUN;
        if (ek_sbuf_room(out, k * (LINE_MAX_LEN + 1))) return;
        char *p = out->p + out->len;
        for (size_t i = 0; i < k; i++) {
            if (tab) *p++ = '\t';
            p = line_at(p, &e[i]);
        }
        *p = '\0';
        out->len = (size_t)(p - out->p);
        e += k;
        n -= k;
    }
}
