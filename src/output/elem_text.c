/* etmkit's own element formats: a compact text line and a JSON object per element. */
#include "etmkit/config.h"
#include "etmkit/elem.h"
#include "output/elem_fmt.h"

#include <string.h>

#define LINE_MAX_LEN 448

static const char *const itype_short[] = {"other",   "br",      "ibr",   "isb",
                                          "dsb_dmb", "wfi_wfe", "tstart"};
static const char *const isub_short[] = {"", "link", "ret", "eret", "impl_ret"};
static const char *const sec_short[] = {"S", "NS", "Root", "Realm"};
static const char *const memtrans_short[] = {"init", "start", "commit", "fail"};
static const char *const trace_on_short[] = {"normal", "overflow", "debug"};

static const char *mem_space_name(uint32_t s)
{
    switch (s) {
    case EK_MS_EL1S: return "EL1S";
    case EK_MS_EL1N: return "EL1N";
    case EK_MS_EL2: return "EL2N";
    case EK_MS_EL3: return "EL3";
    case EK_MS_EL2S: return "EL2S";
    case EK_MS_EL1R: return "EL1R";
    case EK_MS_EL2R: return "EL2R";
    case EK_MS_ROOT: return "Root";
    case EK_MS_S: return "S";
    case EK_MS_N: return "NS";
    case EK_MS_R: return "R";
    default: return "any";
    }
}

static const char *itype_name(unsigned t)
{
    return t < sizeof(itype_short) / sizeof(itype_short[0]) ? itype_short[t] : "?";
}

static const char *isub_name(unsigned t)
{
    return t < sizeof(isub_short) / sizeof(isub_short[0]) ? isub_short[t] : "?";
}

static char *put_lower(char *p, const char *s)
{
    for (; *s; s++)
        *p++ = (*s >= 'A' && *s <= 'Z') ? (char)(*s - 'A' + 'a') : *s;
    return p;
}

/* ---- ITM (ITMTRACE): what the packet meant, for the text and JSON lines ----------------- */

static const char *const itm_local_ts[4] = {"sync", "ts-delayed", "pkt-delayed", "ts-pkt-delayed"};
static const char *const itm_exc_fn[4] = {"?", "entered", "exited", "returned"};
static const char *const itm_counters[6] = {"cpi", "exc", "sleep", "lsu", "fold", "cyc"};

enum {
    ITM_DWT_OTHER = 0,
    ITM_DWT_COUNTER,
    ITM_DWT_EXC,
    ITM_DWT_PC,
    ITM_DWT_SLEEP,
    ITM_DWT_DATA_PC,
    ITM_DWT_DATA_ADDR,
    ITM_DWT_DATA_VALUE
};

/* A DWT packet's meaning from its discriminator (v7-M ARM D4.3): 0 event counter, 1 exception
 * trace, 2 PC sample (4 bytes: the PC; 1 byte: asleep), 8-15 data trace PC value (even) or
 * address offset (odd) of comparator (disc >> 1) & 3, 16-23 data value (odd: a write). */
static int itm_dwt_what(const ek_elem *e)
{
    const unsigned d = e->u.itm.port;
    if (d == 0) return ITM_DWT_COUNTER;
    if (d == 1) return ITM_DWT_EXC;
    if (d == 2) return e->u.itm.size == 4 ? ITM_DWT_PC : ITM_DWT_SLEEP;
    if (d >= 8 && d <= 15) return (d & 1) ? ITM_DWT_DATA_ADDR : ITM_DWT_DATA_PC;
    if (d >= 16 && d <= 23) return ITM_DWT_DATA_VALUE;
    return ITM_DWT_OTHER;
}

/* The payload's bytes (little-endian, as written to the stimulus port) when all are printable
 * ASCII: software stimulus text (printf over ITM). Returns the count, 0 when not text. */
static unsigned itm_text(const ek_elem *e, char out[4])
{
    const unsigned n = e->u.itm.size >= 1 && e->u.itm.size <= 4 ? e->u.itm.size : 0;
    for (unsigned i = 0; i < n; i++) {
        const unsigned c = (e->u.itm.value >> (8 * i)) & 0xFF;
        if (c < 0x20 || c > 0x7E) return 0;
        out[i] = (char)c;
    }
    return n;
}

static unsigned itm_size(const ek_elem *e)
{
    return e->u.itm.size >= 1 && e->u.itm.size <= 4 ? e->u.itm.size : 4;
}

static char *put_itm_text(char *p, const ek_elem *e)
{
    const unsigned k = e->u.itm.kind;
    switch (k) {
    case EK_ITM_SWIT: {
        EF_PUTS(p, " swit port=");
        p = ef_dec(p, e->u.itm.port);
        EF_PUTS(p, " value=0x");
        p = ef_hex(p, e->u.itm.value, itm_size(e) * 2);
        char t[4];
        const unsigned n = itm_text(e, t);
        if (n) {
            EF_PUTS(p, " \"");
            memcpy(p, t, n);
            p += n;
            *p++ = '"';
        }
        break;
    }
    case EK_ITM_DWT: {
        const unsigned d = e->u.itm.port, v = e->u.itm.value;
        switch (itm_dwt_what(e)) {
        case ITM_DWT_COUNTER:
            EF_PUTS(p, " dwt counters-wrapped");
            for (unsigned i = 0; i < 6; i++)
                if (v & (1u << i)) {
                    *p++ = ' ';
                    p = ef_str(p, itm_counters[i]);
                }
            break;
        case ITM_DWT_EXC:
            EF_PUTS(p, " dwt exception num=");
            p = ef_dec(p, v & 0x1FF);
            *p++ = ' ';
            p = ef_str(p, itm_exc_fn[(v >> 12) & 3]);
            break;
        case ITM_DWT_PC:
            EF_PUTS(p, " dwt pc-sample pc=0x");
            p = ef_hex(p, v, 0);
            break;
        case ITM_DWT_SLEEP: EF_PUTS(p, " dwt pc-sample asleep"); break;
        case ITM_DWT_DATA_PC:
        case ITM_DWT_DATA_ADDR:
        case ITM_DWT_DATA_VALUE: {
            const int w = itm_dwt_what(e);
            EF_PUTS(p, " dwt data cmp=");
            p = ef_dec(p, (d >> 1) & 3);
            if (w == ITM_DWT_DATA_PC)
                EF_PUTS(p, " pc=0x");
            else if (w == ITM_DWT_DATA_ADDR)
                EF_PUTS(p, " addr-offset=0x");
            else
                p = ef_str(p, (d & 1) ? " write value=0x" : " read value=0x");
            p = ef_hex(p, v, w == ITM_DWT_DATA_VALUE ? itm_size(e) * 2 : 0);
            break;
        }
        default: /* a reserved discriminator */
            EF_PUTS(p, " dwt reserved disc=");
            p = ef_dec(p, d);
            EF_PUTS(p, " value=0x");
            p = ef_hex(p, v, itm_size(e) * 2);
            break;
        }
        break;
    }
    case EK_ITM_TS_SYNC:
    case EK_ITM_TS_DELAY:
    case EK_ITM_TS_PKT_DELAY:
    case EK_ITM_TS_PKT_TS_DELAY:
        EF_PUTS(p, " ts-local delta=0x");
        p = ef_hex(p, e->u.itm.value, 0);
        EF_PUTS(p, " ts=0x");
        p = ef_hex(p, e->timestamp, 0);
        *p++ = ' ';
        p = ef_str(p, itm_local_ts[k - EK_ITM_TS_SYNC]);
        break;
    case EK_ITM_TS_GLOBAL:
        EF_PUTS(p, " ts-global ts=0x");
        p = ef_hex(p, e->timestamp, 0);
        if (e->flags & EK_ELEMF_CPU_FREQ_CHANGE) EF_PUTS(p, " freq-change");
        break;
    default: EF_PUTS(p, " ?"); break;
    }
    if (e->u.itm.overflow) EF_PUTS(p, " after-overflow");
    return p;
}

/* ---- text ------------------------------------------------------------------------------ */

void ek_elem_format_text(ek_sbuf *out, const ek_elem *e)
{
    if (ek_sbuf_room(out, LINE_MAX_LEN)) return;
    char *p = out->p + out->len;
    /* columns of the packet text listing (index, ID, name), elements marked with '>' */
    char num[24];
    char *q = ef_dec(num, e->index);
    size_t nd = (size_t)(q - num);
    for (size_t i = nd; i < 10; i++)
        *p++ = ' ';
    memcpy(p, num, nd);
    p += nd;
    EF_PUTS(p, "  ");
    p = ef_hex(p, e->trace_id, 2);
    EF_PUTS(p, "  > ");
    const char *nm = ek_elem_type_name(e->type);
    char *name_start = p;
    p = ef_str(p, nm);
    while (p - name_start < 18)
        *p++ = ' ';
    switch (e->type) {
    case EK_ELEM_INSTR_RANGE:
    case EK_ELEM_I_RANGE_NOPATH:
        EF_PUTS(p, " 0x");
        p = ef_hex(p, e->st_addr, 0);
        EF_PUTS(p, "-0x");
        p = ef_hex(p, e->en_addr, 0);
        EF_PUTS(p, " n=");
        p = ef_dec(p, e->num_instr);
        *p++ = ' ';
        p = ef_str(p, ek_iset_name(e->isa));
        if (e->type == EK_ELEM_INSTR_RANGE) {
            EF_PUTS(p, " last=");
            p = ef_str(p, itype_name(e->last_i_type));
            if (e->last_i_sub) {
                *p++ = ':';
                p = ef_str(p, isub_name(e->last_i_sub));
            }
            *p++ = '/';
            p = ef_dec(p, e->last_i_size);
            *p++ = ' ';
            *p++ = (e->flags & EK_ELEMF_LAST_EXEC) ? 'E' : 'N';
            if (e->flags & EK_ELEMF_LAST_COND) EF_PUTS(p, " cond");
        }
        break;
    case EK_ELEM_ADDR_NACC:
    case EK_ELEM_ADDR_UNKNOWN:
        EF_PUTS(p, " 0x");
        p = ef_hex(p, e->st_addr, 0);
        if (e->type == EK_ELEM_ADDR_NACC) {
            EF_PUTS(p, " space=");
            p = ef_str(p, mem_space_name(e->u.mem_space));
        }
        break;
    case EK_ELEM_EXCEPTION:
        EF_PUTS(p, " num=0x");
        p = ef_hex(p, e->u.exception_number, 0);
        if (e->flags & EK_ELEMF_EXCEP_RET_ADDR) {
            EF_PUTS(p, " ret=0x");
            p = ef_hex(p, e->en_addr, 0);
            if (e->flags & EK_ELEMF_EXCEP_BR_TGT) EF_PUTS(p, " br_tgt");
        }
        if (e->flags & EK_ELEMF_EXCEP_M_TAIL) EF_PUTS(p, " tail_chain");
        break;
    case EK_ELEM_PE_CONTEXT: {
        const ek_pe_context *c = &e->context;
        *p++ = ' ';
        p = ef_str(p, ek_iset_name(e->isa));
        if (c->el_valid && c->el >= 0) {
            EF_PUTS(p, " EL");
            p = ef_dec(p, (uint64_t)c->el);
        }
        *p++ = ' ';
        p = ef_str(p, c->security < 4 ? sec_short[c->security] : "?");
        p = ef_str(p, c->bits64 ? " 64-bit" : " 32-bit");
        if (c->vmid_valid) {
            EF_PUTS(p, " vmid=0x");
            p = ef_hex(p, c->vmid, 0);
        }
        if (c->ctxt_id_valid) {
            EF_PUTS(p, " ctxtid=0x");
            p = ef_hex(p, c->context_id, 0);
        }
        break;
    }
    case EK_ELEM_TRACE_ON:
        *p++ = ' ';
        p = ef_str(p, e->u.trace_on_reason < 3 ? trace_on_short[e->u.trace_on_reason] : "?");
        break;
    case EK_ELEM_NO_SYNC:
    case EK_ELEM_EO_TRACE:
        *p++ = ' ';
        p = ef_str(p, ek_unsync_reason_name((int)e->u.unsync_reason));
        break;
    case EK_ELEM_TIMESTAMP:
        EF_PUTS(p, " ts=0x");
        p = ef_hex(p, e->timestamp, 0);
        break;
    case EK_ELEM_EVENT:
        if (e->u.event.type == EK_EVENT_TRIGGER) {
            EF_PUTS(p, " trigger");
        } else {
            EF_PUTS(p, " event=");
            p = ef_dec(p, e->u.event.number);
        }
        break;
    case EK_ELEM_SYNC_MARKER:
        EF_PUTS(p, " ts-marker value=0x");
        p = ef_hex(p, e->u.marker.value, 0);
        break;
    case EK_ELEM_MEMTRANS:
        *p++ = ' ';
        p = ef_str(p, e->u.memtrans < 4 ? memtrans_short[e->u.memtrans] : "?");
        break;
    case EK_ELEM_INSTRUMENTATION:
        EF_PUTS(p, " EL");
        p = ef_dec(p, e->u.ite.el);
        EF_PUTS(p, " value=0x");
        p = ef_hex(p, e->u.ite.value, 0);
        break;
    case EK_ELEM_ITMTRACE: p = put_itm_text(p, e); break;
    default: break;
    }
    if (e->flags & EK_ELEMF_HAS_CC) {
        EF_PUTS(p, " cc=");
        p = ef_dec(p, e->cycle_count);
    }
    *p++ = '\n';
    *p = '\0';
    out->len = (size_t)(p - out->p);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static char *jkey(char *p, const char *k)
{
    *p++ = ',';
    *p++ = '"';
    p = ef_str(p, k);
    *p++ = '"';
    *p++ = ':';
    return p;
}

static char *jhex(char *p, const char *k, uint64_t v)
{
    p = jkey(p, k);
    EF_PUTS(p, "\"0x");
    p = ef_hex(p, v, 0);
    *p++ = '"';
    return p;
}

static char *jdec(char *p, const char *k, uint64_t v)
{
    p = jkey(p, k);
    return ef_dec(p, v);
}

static char *jstr(char *p, const char *k, const char *v)
{
    p = jkey(p, k);
    *p++ = '"';
    p = ef_str(p, v);
    *p++ = '"';
    return p;
}

static char *jbool(char *p, const char *k, int v)
{
    p = jkey(p, k);
    return ef_str(p, v ? "true" : "false");
}

static char *put_itm_json(char *p, const ek_elem *e)
{
    const unsigned k = e->u.itm.kind, v = e->u.itm.value, d = e->u.itm.port;
    switch (k) {
    case EK_ITM_SWIT: {
        p = jstr(p, "kind", "swit");
        p = jdec(p, "port", d);
        p = jhex(p, "value", v);
        p = jdec(p, "size", itm_size(e));
        char t[4];
        const unsigned n = itm_text(e, t);
        if (n) { /* printable ASCII: only '"' and '\\' need escaping */
            p = jkey(p, "text");
            *p++ = '"';
            for (unsigned i = 0; i < n; i++) {
                if (t[i] == '"' || t[i] == '\\') *p++ = '\\';
                *p++ = t[i];
            }
            *p++ = '"';
        }
        break;
    }
    case EK_ITM_DWT: {
        p = jstr(p, "kind", "dwt");
        p = jdec(p, "disc", d);
        p = jhex(p, "value", v);
        p = jdec(p, "size", itm_size(e));
        const int w = itm_dwt_what(e);
        switch (w) {
        case ITM_DWT_COUNTER: p = jstr(p, "what", "counters_wrapped"); break;
        case ITM_DWT_EXC:
            p = jstr(p, "what", "exception");
            p = jdec(p, "exception", v & 0x1FF);
            p = jstr(p, "function", itm_exc_fn[(v >> 12) & 3]);
            break;
        case ITM_DWT_PC:
            p = jstr(p, "what", "pc_sample");
            p = jhex(p, "pc", v);
            break;
        case ITM_DWT_SLEEP:
            p = jstr(p, "what", "pc_sample");
            p = jbool(p, "asleep", 1);
            break;
        case ITM_DWT_DATA_PC:
        case ITM_DWT_DATA_ADDR:
        case ITM_DWT_DATA_VALUE:
            p = jstr(p, "what",
                     w == ITM_DWT_DATA_PC     ? "data_pc"
                     : w == ITM_DWT_DATA_ADDR ? "data_addr_offset"
                                              : "data_value");
            p = jdec(p, "comparator", (d >> 1) & 3);
            if (w == ITM_DWT_DATA_VALUE) p = jbool(p, "write", d & 1);
            break;
        default: p = jstr(p, "what", "reserved"); break;
        }
        break;
    }
    case EK_ITM_TS_SYNC:
    case EK_ITM_TS_DELAY:
    case EK_ITM_TS_PKT_DELAY:
    case EK_ITM_TS_PKT_TS_DELAY:
        p = jstr(p, "kind", "ts_local");
        p = jdec(p, "delta", v);
        p = jdec(p, "timestamp", e->timestamp);
        p = jstr(p, "delay", itm_local_ts[k - EK_ITM_TS_SYNC]);
        break;
    case EK_ITM_TS_GLOBAL:
        p = jstr(p, "kind", "ts_global");
        p = jdec(p, "timestamp", e->timestamp);
        if (e->flags & EK_ELEMF_CPU_FREQ_CHANGE) p = jbool(p, "freq_change", 1);
        break;
    default: p = jstr(p, "kind", "?"); break;
    }
    if (e->u.itm.overflow) p = jbool(p, "after_overflow", 1);
    return p;
}

void ek_elem_format_json(ek_sbuf *out, const ek_elem *e)
{
    if (ek_sbuf_room(out, LINE_MAX_LEN)) return;
    char *p = out->p + out->len;
    EF_PUTS(p, "{\"idx\":");
    p = ef_dec(p, e->index);
    p = jdec(p, "id", e->trace_id);
    p = jkey(p, "type");
    *p++ = '"';
    p = put_lower(p, ek_elem_type_name(e->type));
    *p++ = '"';
    switch (e->type) {
    case EK_ELEM_INSTR_RANGE:
    case EK_ELEM_I_RANGE_NOPATH:
        p = jhex(p, "start", e->st_addr);
        p = jhex(p, "end", e->en_addr);
        p = jdec(p, "n", e->num_instr);
        p = jstr(p, "isa", ek_iset_name(e->isa));
        if (e->type == EK_ELEM_INSTR_RANGE) {
            p = jstr(p, "last", itype_name(e->last_i_type));
            if (e->last_i_sub) p = jstr(p, "last_sub", isub_name(e->last_i_sub));
            p = jdec(p, "last_size", e->last_i_size);
            p = jbool(p, "executed", e->flags & EK_ELEMF_LAST_EXEC);
            p = jbool(p, "cond", e->flags & EK_ELEMF_LAST_COND);
        }
        break;
    case EK_ELEM_ADDR_NACC:
    case EK_ELEM_ADDR_UNKNOWN:
        p = jhex(p, "addr", e->st_addr);
        if (e->type == EK_ELEM_ADDR_NACC) p = jhex(p, "mem_space", e->u.mem_space);
        break;
    case EK_ELEM_EXCEPTION:
        p = jhex(p, "number", e->u.exception_number);
        if (e->flags & EK_ELEMF_EXCEP_RET_ADDR) p = jhex(p, "ret_addr", e->en_addr);
        if (e->flags & EK_ELEMF_EXCEP_BR_TGT) p = jbool(p, "ret_addr_br_tgt", 1);
        if (e->flags & EK_ELEMF_EXCEP_M_TAIL) p = jbool(p, "tail_chain", 1);
        break;
    case EK_ELEM_PE_CONTEXT: {
        const ek_pe_context *c = &e->context;
        p = jstr(p, "isa", ek_iset_name(e->isa));
        if (c->el_valid && c->el >= 0) p = jdec(p, "el", (uint64_t)c->el);
        p = jstr(p, "security", c->security < 4 ? sec_short[c->security] : "?");
        p = jbool(p, "aarch64", c->bits64);
        if (c->vmid_valid) p = jhex(p, "vmid", c->vmid);
        if (c->ctxt_id_valid) p = jhex(p, "context_id", c->context_id);
        break;
    }
    case EK_ELEM_TRACE_ON:
        p = jstr(p, "reason",
                 e->u.trace_on_reason < 3 ? trace_on_short[e->u.trace_on_reason] : "?");
        break;
    case EK_ELEM_NO_SYNC:
    case EK_ELEM_EO_TRACE:
        p = jstr(p, "reason", ek_unsync_reason_name((int)e->u.unsync_reason));
        break;
    case EK_ELEM_TIMESTAMP: p = jdec(p, "timestamp", e->timestamp); break;
    case EK_ELEM_EVENT:
        if (e->u.event.type == EK_EVENT_TRIGGER)
            p = jbool(p, "trigger", 1);
        else
            p = jdec(p, "event", e->u.event.number);
        break;
    case EK_ELEM_SYNC_MARKER:
        p = jstr(p, "marker", "timestamp");
        p = jdec(p, "value", e->u.marker.value);
        break;
    case EK_ELEM_MEMTRANS:
        p = jstr(p, "transaction", e->u.memtrans < 4 ? memtrans_short[e->u.memtrans] : "?");
        break;
    case EK_ELEM_INSTRUMENTATION:
        p = jdec(p, "el", e->u.ite.el);
        p = jhex(p, "value", e->u.ite.value);
        break;
    case EK_ELEM_ITMTRACE: p = put_itm_json(p, e); break;
    default: break;
    }
    if (e->flags & EK_ELEMF_HAS_CC) p = jdec(p, "cycles", e->cycle_count);
    *p++ = '}';
    *p++ = '\n';
    *p = '\0';
    out->len = (size_t)(p - out->p);
}
