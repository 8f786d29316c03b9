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
    default: break;
    }
    if (e->flags & EK_ELEMF_HAS_CC) p = jdec(p, "cycles", e->cycle_count);
    *p++ = '}';
    *p++ = '\n';
    *p = '\0';
    out->len = (size_t)(p - out->p);
}
