/* perf-script text for synthesised samples (Linux perf 6.1 builtin-script.c layout). */
#include <stdio.h>
#include <string.h>

#include "core/hot.h"
#include "etmkit/etmkit.h"
#include "etmkit/script.h"
#include "script_int.h"
#include "wr.h"

const char *ek_sample_kind_name(int kind)
{
    return kind == EK_SAMPLE_BRANCHES ? "branches" : "instructions";
}

void ek_script_fields_default(ek_script_fields *f)
{
    memset(f, 0, sizeof *f);
    f->fields = EK_SF_F_COMM | EK_SF_F_TID | EK_SF_F_CPU | EK_SF_F_TIME | EK_SF_F_EVENT |
                EK_SF_F_IP | EK_SF_F_SYM | EK_SF_F_SYMOFF | EK_SF_F_DSO | EK_SF_F_PERIOD;
}

static const struct {
    const char *name;
    uint32_t bit;
} field_names[] = {
    {"comm", EK_SF_F_COMM},     {"tid", EK_SF_F_TID},         {"pid", EK_SF_F_PID},
    {"time", EK_SF_F_TIME},     {"cpu", EK_SF_F_CPU},         {"event", EK_SF_F_EVENT},
    {"ip", EK_SF_F_IP},         {"sym", EK_SF_F_SYM},         {"symoff", EK_SF_F_SYMOFF},
    {"dso", EK_SF_F_DSO},       {"addr", EK_SF_F_ADDR},       {"flags", EK_SF_F_FLAGS},
    {"period", EK_SF_F_PERIOD}, {"brstack", EK_SF_F_BRSTACK}, {"brstacksym", EK_SF_F_BRSTACKSYM},
    {"insn", EK_SF_F_INSN},     {"insnlen", EK_SF_F_INSNLEN}, {"misc", EK_SF_F_MISC},
    {"ipc", EK_SF_F_IPC},
};

static int lookup_field(const char *s, size_t n, uint32_t *bit)
{
    if (n == 10 && !memcmp(s, "callindent", 10)) { /* script_calltrace.c */
        *bit = EK_SF_F_CALLINDENT;
        return 0;
    }
    for (size_t i = 0; i < sizeof field_names / sizeof field_names[0]; i++)
        if (strlen(field_names[i].name) == n && !memcmp(field_names[i].name, s, n)) {
            *bit = field_names[i].bit;
            return 0;
        }
    return -1;
}

int ek_script_fields_parse(const char *spec, ek_script_fields *f, ek_sbuf *err)
{
    ek_script_fields def;
    ek_script_fields_default(&def);
    if (!spec || !*spec) {
        if (err) ek_sbuf_puts(err, "-F needs a list of fields");
        return EK_ERR_ARG;
    }
    const char *colon = strchr(spec, ':');
    if (colon) {
        /* "<type>:fields": we have one kind of event, so the type does not matter */
        spec = colon + 1;
    }
    int edit = spec[0] == '+' || spec[0] == '-';
    uint32_t fields = edit ? def.fields : 0, named = 0;
    const char *p = spec;
    for (;;) {
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *name = p;
        int sign = 0;
        if (*name == '+' || *name == '-') {
            sign = *name == '+' ? 1 : -1;
            name++;
        }
        if (e == name) {
            if (err) ek_sbuf_printf(err, "-F: empty field name in '%s'", spec);
            return EK_ERR_ARG;
        }
        if (edit && !sign) {
            if (err) ek_sbuf_puts(err, "-F: cannot mix +field/-field with plain fields");
            return EK_ERR_ARG;
        }
        uint32_t bit;
        if (lookup_field(name, (size_t)(e - name), &bit)) {
            if (err)
                ek_sbuf_printf(err, "-F: unknown or unsupported field '%.*s'", (int)(e - name),
                               name);
            return EK_ERR_ARG;
        }
        if (sign < 0)
            fields &= ~bit;
        else
            fields |= bit;
        named |= bit;
        if (!*e) break;
        p = e + 1;
    }
    f->fields = fields;
    f->named = named;
    f->user_set = 1;
    return 0;
}

/* ---- flags ------------------------------------------------------------------------------- */

static const struct {
    uint32_t flags;
    const char *name;
} flag_names[] = {
    {EK_SF_BRANCH | EK_SF_CALL, "call"},
    {EK_SF_BRANCH | EK_SF_RETURN, "return"},
    {EK_SF_BRANCH | EK_SF_CONDITIONAL, "jcc"},
    {EK_SF_BRANCH, "jmp"},
    {EK_SF_BRANCH | EK_SF_CALL | EK_SF_INTERRUPT, "int"},
    {EK_SF_BRANCH | EK_SF_RETURN | EK_SF_INTERRUPT, "iret"},
    {EK_SF_BRANCH | EK_SF_CALL | EK_SF_SYSCALLRET, "syscall"},
    {EK_SF_BRANCH | EK_SF_RETURN | EK_SF_SYSCALLRET, "sysret"},
    {EK_SF_BRANCH | EK_SF_ASYNC, "async"},
    {EK_SF_BRANCH | EK_SF_CALL | EK_SF_ASYNC | EK_SF_INTERRUPT, "hw int"},
    {EK_SF_BRANCH | EK_SF_TX_ABORT, "tx abrt"},
    {EK_SF_BRANCH | EK_SF_TRACE_BEGIN, "tr strt"},
    {EK_SF_BRANCH | EK_SF_TRACE_END, "tr end"},
    {EK_SF_BRANCH | EK_SF_CALL | EK_SF_VMENTRY, "vmentry"},
    {EK_SF_BRANCH | EK_SF_CALL | EK_SF_VMEXIT, "vmexit"},
};

static const char *flags_name(uint32_t flags)
{
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flag_names[i].flags == flags) return flag_names[i].name;
    return NULL;
}

/* perf_sample__sprintf_flags into buf (at least 40 bytes); returns the length. */
static size_t flags_text(char *buf, uint32_t flags)
{
    const uint32_t xf = EK_SF_IN_TX | EK_SF_INTR_DISABLE | EK_SF_INTR_TOGGLE;
    const char *chars = "bcrosyiABExghDt";
    char xs[8] = {0};
    const char *name;
    if (flags & xf) {
        size_t n = 0;
        xs[n++] = '(';
        if (flags & EK_SF_IN_TX) xs[n++] = 'x';
        if (flags & EK_SF_INTR_DISABLE) xs[n++] = 'D';
        if (flags & EK_SF_INTR_TOGGLE) xs[n++] = 't';
        xs[n++] = ')';
    }
    const char *pre = NULL;
    size_t w = 15;
    if ((name = flags_name(flags & ~xf)))
        pre = "";
    else if ((flags & EK_SF_TRACE_BEGIN) && (name = flags_name(flags & ~(xf | EK_SF_TRACE_BEGIN))))
        pre = "tr strt ", w = 7;
    else if ((flags & EK_SF_TRACE_END) && (name = flags_name(flags & ~(xf | EK_SF_TRACE_END))))
        pre = "tr end  ", w = 7;
    if (pre) {
        /* "<pre>%-<w>s%6s" */
        size_t k = strlen(pre), nl = strlen(name), xl = strlen(xs);
        memcpy(buf, pre, k);
        memcpy(buf + k, name, nl);
        k += nl;
        while (nl++ < w)
            buf[k++] = ' ';
        for (size_t i = xl; i < 6; i++)
            buf[k++] = ' ';
        memcpy(buf + k, xs, xl);
        k += xl;
        buf[k] = 0;
        return k;
    } else {
        size_t k = 0, nc = strlen(chars);
        for (size_t i = 0; i < 32; i++, flags >>= 1)
            if (flags & 1) buf[k++] = i < nc ? chars[i] : '?';
        buf[k] = 0;
        return k;
    }
}

void ek_script_flags_text(ek_sbuf *out, uint32_t flags)
{
    char buf[40];
    size_t n = flags_text(buf, flags);
    ek_sbuf_put(out, buf, n);
}

/* ---- the line ------------------------------------------------------------------------------ */
/* Hand-made number formatting: this is the hot path of `etmkit script`. */

static const char hexdig[] = "0123456789abcdef";

/* The line is written with room reserved up front; these skip the per-call checks when the
 * room is there (the caller NUL-terminates at the end of the line). */
static inline void wput(ek_sbuf *out, const char *str, size_t n)
{
    if (out->len + n < out->cap) {
        memcpy(out->p + out->len, str, n);
        out->len += n;
    } else {
        ek_sbuf_put(out, str, n);
    }
}

static inline void wputc(ek_sbuf *out, char c)
{
    if (out->len + 1 < out->cap)
        out->p[out->len++] = c;
    else
        ek_sbuf_putc(out, c);
}

/* v in hex, lower case, right-aligned in width (no prefix) */
static void put_hexw(ek_sbuf *out, uint64_t v, unsigned width)
{
    char t[16];
    unsigned n = 0;
    do {
        t[n++] = hexdig[v & 15];
        v >>= 4;
    } while (v);
    unsigned pad = width > n ? width - n : 0;
    if (ek_sbuf_reserve(out, pad + n)) return;
    char *p = out->p + out->len;
    memset(p, ' ', pad);
    p += pad;
    while (n)
        *p++ = t[--n];
    out->len = (size_t)(p - out->p);
}

/* signed decimal, right-aligned (width > 0) or left-aligned (width < 0) */
static void put_decw(ek_sbuf *out, int64_t sv, int width)
{
    char t[24];
    unsigned n = 0;
    uint64_t v = sv < 0 ? (uint64_t)0 - (uint64_t)sv : (uint64_t)sv;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (sv < 0) t[n++] = '-';
    unsigned w = width < 0 ? (unsigned)-width : (unsigned)width;
    unsigned pad = w > n ? w - n : 0;
    if (ek_sbuf_reserve(out, pad + n)) return;
    char *p = out->p + out->len;
    if (width > 0) {
        memset(p, ' ', pad);
        p += pad;
    }
    while (n)
        *p++ = t[--n];
    if (width < 0) {
        memset(p, ' ', pad);
        p += pad;
    }
    out->len = (size_t)(p - out->p);
}

/* string, padded to width (> 0 right-aligned, < 0 left-aligned) */
static void put_strw(ek_sbuf *out, const char *str, int width)
{
    size_t n = strlen(str);
    size_t w = (size_t)(width < 0 ? -width : width);
    size_t pad = w > n ? w - n : 0;
    if (ek_sbuf_reserve(out, pad + n)) return;
    char *p = out->p + out->len;
    if (width > 0) {
        memset(p, ' ', pad);
        p += pad;
    }
    memcpy(p, str, n);
    p += n;
    if (width < 0) {
        memset(p, ' ', pad);
        p += pad;
    }
    out->len = (size_t)(p - out->p);
}

static void put_symname(ek_sbuf *out, const ek_addr_loc *l, int offs)
{
    if (!l->sym) {
        wput(out, "[unknown]", 9);
        return;
    }
    wput(out, l->sym, l->sym_len ? l->sym_len : strlen(l->sym));
    if (offs) {
        wput(out, "+0x", 3);
        put_hexw(out, l->symoff, 0);
    }
}

static void resolve(const ek_script_resolver *r, const ek_sample *s, uint64_t addr, int fb,
                    ek_addr_loc *l)
{
    memset(l, 0, sizeof *l);
    if (r && r->resolve) r->resolve(r->ctx, s, addr, fb, l);
}

/* the callindent column, the call chains and the DSO padding of --call-trace */
#include "script_calltrace.h"

/* The writers of the ordered path (callindent, call chains, --call-trace's DSO padding):
 * through the checked sbuf writers, not the cursor of the fast path */

/* " (dso)"; padded to pad (perf's pad_output_len_dso) when pad > 0 */
static void put_dso(ek_sbuf *out, const ek_addr_loc *l, int pad)
{
    wput(out, " (", 2);
    if (pad > 0)
        ek__script_put_dso_padded(out, l->dso, l->dso_len, pad);
    else if (l->dso)
        wput(out, l->dso, l->dso_len ? l->dso_len : strlen(l->dso));
    else
        wput(out, "[unknown]", 9);
    wputc(out, ')');
}

/* perf's sample__fprintf_sym without call chain: ip, " sym[+off]", " (dso)" */
static void put_ip_sym(ek_sbuf *out, uint32_t F, const ek_sample *s, const ek_script_resolver *r,
                       int pad)
{
    ek_addr_loc l;
    if (F & EK_SF_F_IP) put_hexw(out, s->ip, 16);
    if (!(F & (EK_SF_F_SYM | EK_SF_F_DSO))) return;
    resolve(r, s, s->ip, 0, &l);
    if (F & EK_SF_F_SYM) {
        wputc(out, ' ');
        put_symname(out, &l, (F & EK_SF_F_SYMOFF) != 0);
    }
    if (F & EK_SF_F_DSO) put_dso(out, &l, pad);
}

/* perf_sample__fprintf_addr */
static void put_addr(ek_sbuf *out, uint32_t F, const ek_sample *s, const ek_script_resolver *r,
                     int pad)
{
    ek_addr_loc l;
    put_hexw(out, s->addr, 16);
    if (s->kind != EK_SAMPLE_BRANCHES) /* only branches samples carry an address */
        return;
    if (!(F & (EK_SF_F_SYM | EK_SF_F_DSO))) return;
    resolve(r, s, s->addr, 1, &l);
    if (F & EK_SF_F_SYM) {
        wputc(out, ' ');
        put_symname(out, &l, (F & EK_SF_F_SYMOFF) != 0);
    }
    if (F & EK_SF_F_DSO) put_dso(out, &l, pad);
}

/* perf's time column: "%5llu.%09llu: " with --ns, else "%12s: " of "%llu.%06llu" */
static void put_time(ek_sbuf *out, uint64_t t, int ns)
{
    uint64_t sec = t / 1000000000ull, frac = t % 1000000000ull;
    unsigned fd = 9;
    if (!ns) {
        frac /= 1000;
        fd = 6;
    }
    unsigned n = wr_dec_len(sec);
    unsigned pad = n < 5 ? 5 - n : 0; /* 5 columns for the seconds either way (12 - 7) */
    if (ek_sbuf_reserve(out, pad + n + 1 + fd + 2)) return;
    char *p = out->p + out->len;
    memset(p, ' ', pad);
    p += pad;
    wr_dec_at(p, sec, n);
    p += n;
    *p++ = '.';
    memset(p, '0', fd); /* (wr_dec_at writes the significant digits only) */
    wr_dec_at(p, frac, fd);
    p += fd;
    *p++ = ':';
    *p++ = ' ';
    out->len = (size_t)(p - out->p);
}

static void put_brstack(ek_sbuf *out, uint32_t F, const ek_sample *s, const ek_script_resolver *r)
{
    for (uint32_t i = 0; i < s->nbranches; i++) {
        const ek_branch *b = &s->branches[i];
        if (F & EK_SF_F_BRSTACKSYM) {
            ek_addr_loc lf, lt;
            resolve(r, s, b->from, 1, &lf);
            resolve(r, s, b->to, 1, &lt);
            put_symname(out, &lf, 1);
            if (F & EK_SF_F_DSO) ek_sbuf_printf(out, "(%s)", lf.dso ? lf.dso : "[unknown]");
            wputc(out, '/');
            put_symname(out, &lt, 1);
            if (F & EK_SF_F_DSO) ek_sbuf_printf(out, "(%s)", lt.dso ? lt.dso : "[unknown]");
        } else {
            ek_addr_loc lf, lt;
            if (F & EK_SF_F_DSO) {
                resolve(r, s, b->from, 1, &lf);
                resolve(r, s, b->to, 1, &lt);
            }
            wput(out, " 0x", 3);
            put_hexw(out, b->from, 0);
            if (F & EK_SF_F_DSO) ek_sbuf_printf(out, "(%s)", lf.dso ? lf.dso : "[unknown]");
            wput(out, "/0x", 3);
            put_hexw(out, b->to, 0);
            if (F & EK_SF_F_DSO) ek_sbuf_printf(out, "(%s)", lt.dso ? lt.dso : "[unknown]");
        }
        /* predicted, no tx, no abort, 0 cycles, no branch type */
        wput(out, "/P/-/-/0/ ", 10);
    }
}

static void put_insn(ek_sbuf *out, uint32_t F, const ek_sample *s)
{
    if (F & EK_SF_F_INSNLEN) ek_sbuf_printf(out, " ilen: %d", s->insn_len);
    if ((F & EK_SF_F_INSN) && s->insn_len) {
        wput(out, " insn:", 6);
        for (unsigned i = 0; i < s->insn_len && i < sizeof s->insn; i++)
            ek_sbuf_printf(out, " %02x", s->insn[i]);
    }
}

/* ---- the line through a cursor ---------------------------------------------------------- */
/* The same text as the writers above, written through a cursor into room reserved once per
 * line (names, which may be long, make sure of their room first), and with what the previous
 * lines of the queue already made (script_int.h): the thread's comm/tid/cpu columns and the
 * flags columns. */

/* signed decimal, right-aligned (width > 0) or left-aligned (width < 0), room reserved */
static inline void c_decw(wr *w, int64_t sv, int width)
{
    if (!w->p) return;
    uint64_t v = sv < 0 ? (uint64_t)0 - (uint64_t)sv : (uint64_t)sv;
    unsigned n = wr_dec_len(v) + (sv < 0);
    unsigned wd = width < 0 ? (unsigned)-width : (unsigned)width;
    unsigned pad = wd > n ? wd - n : 0;
    char *p = w->p;
    if (width > 0) {
        memset(p, ' ', pad);
        p += pad;
    }
    if (sv < 0) *p++ = '-';
    wr_dec_at(p, v, n - (sv < 0));
    p += n - (sv < 0);
    if (width < 0) {
        memset(p, ' ', pad);
        p += pad;
    }
    w->p = p;
}

/* "00" to "ff": hex digits two at a time */
static const char hexpairs[] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* v in hex right-aligned in 16 columns (or the digits alone: width 0), room reserved (16
 * bytes at least: the padding is written as 16 blanks, the digits over them) */
static inline void c_hexw(wr *w, uint64_t v, unsigned width)
{
    if (!w->p) return;
    unsigned n = (unsigned)(67 - __builtin_clzll(v | 1)) / 4;
    char *p = w->p;
    if (width > n) {
        memset(p, ' ', 16);
        p += width - n;
    }
    char *q = p + n;
    w->p = q;
    for (; n >= 2; n -= 2) {
        q -= 2;
        memcpy(q, hexpairs + 2 * (v & 255), 2);
        v >>= 8;
    }
    if (n) *--q = hexdig[v & 15];
}

/* str padded to width (> 0 right-aligned, < 0 left-aligned) */
static inline void c_strw(wr *w, const char *str, size_t n, int width)
{
    size_t wd = (size_t)(width < 0 ? -width : width);
    size_t pad = wd > n ? wd - n : 0;
    wr_need(w, n + pad + 256);
    if (!w->p) return;
    if (width > 0) {
        memset(w->p, ' ', pad);
        w->p += pad;
    }
    memcpy(w->p, str, n);
    w->p += n;
    if (width < 0) {
        memset(w->p, ' ', pad);
        w->p += pad;
    }
}

static inline void c_name(wr *w, const char *str, size_t n)
{
    wr_need(w, n + 256);
    wr_n(w, str, n);
}

/* " sym[+0xoff] (dso)" as the fields ask */
static void c_symdso(wr *w, uint32_t F, const ek_addr_loc *l)
{
    if (F & EK_SF_F_SYM) {
        wr_c(w, ' ');
        if (!l->sym) {
            wr_lit(w, "[unknown]");
        } else {
            c_name(w, l->sym, l->sym_len ? l->sym_len : strlen(l->sym));
            if (F & EK_SF_F_SYMOFF) {
                wr_lit(w, "+0x");
                c_hexw(w, l->symoff, 0);
            }
        }
    }
    if (F & EK_SF_F_DSO) {
        wr_lit(w, " (");
        if (l->dso)
            c_name(w, l->dso, l->dso_len ? l->dso_len : strlen(l->dso));
        else
            wr_lit(w, "[unknown]");
        wr_c(w, ')');
    }
}

static void c_ip_sym(wr *w, uint32_t F, const ek_sample *s, const ek_script_resolver *r)
{
    ek_addr_loc l;
    if (F & EK_SF_F_IP) c_hexw(w, s->ip, 16);
    if (!(F & (EK_SF_F_SYM | EK_SF_F_DSO))) return;
    resolve(r, s, s->ip, 0, &l);
    c_symdso(w, F, &l);
}

static void c_addr(wr *w, uint32_t F, const ek_sample *s, const ek_script_resolver *r)
{
    ek_addr_loc l;
    c_hexw(w, s->addr, 16);
    if (s->kind != EK_SAMPLE_BRANCHES) /* only branches samples carry an address */
        return;
    if (!(F & (EK_SF_F_SYM | EK_SF_F_DSO))) return;
    resolve(r, s, s->addr, 1, &l);
    c_symdso(w, F, &l);
}

/* the comm, tid/pid and cpu columns (without the cursor: through the sbuf writers) */
static void put_thread_cols(ek_sbuf *out, uint32_t F, const ek_sample *s, const char *comm)
{
    if (F & EK_SF_F_COMM) {
        char unknown[16];
        if (!comm) {
            /* perf names a thread no COMM record named ":TID" (thread__new) */
            snprintf(unknown, sizeof unknown, ":%d", (int)s->tid);
            comm = unknown;
        }
        put_strw(out, comm, 16);
        wputc(out, ' ');
    }
    if ((F & EK_SF_F_PID) && (F & EK_SF_F_TID)) {
        put_decw(out, s->pid, 5);
        wputc(out, '/');
        put_decw(out, s->tid, -5);
        wputc(out, ' ');
    } else if (F & (EK_SF_F_PID | EK_SF_F_TID)) {
        put_decw(out, (F & EK_SF_F_PID) ? s->pid : s->tid, 5);
        wputc(out, ' ');
    }
    if (F & EK_SF_F_CPU) {
        if (s->cpu >= 0 && s->cpu < 1000) {
            char c[7] = {'[',
                         (char)('0' + s->cpu / 100),
                         (char)('0' + s->cpu / 10 % 10),
                         (char)('0' + s->cpu % 10),
                         ']',
                         ' ',
                         0};
            wput(out, c, 6);
        } else {
            ek_sbuf_printf(out, "[%03d] ", (int)s->cpu);
        }
    }
}

/* The flags column "  %-21s " of perf's flags text, remembered by flags value. */
static const char *flags_col(script_memo *m, uint32_t flags, char tmp[64], size_t *len)
{
    script_memo_flags *e =
        m ? &m->fl[(flags * 0x9e3779b9u) >> (32 - SCRIPT_MEMO_FLAGS_BITS)] : NULL;
    char *t = e ? e->text : tmp;
    if (e && e->len && e->flags == flags) {
        *len = e->len;
        return t;
    }
    char ft[48];
    size_t n = flags_text(ft, flags);
    memcpy(t, "  ", 2);
    memcpy(t + 2, ft, n);
    size_t k = 2 + n;
    while (k < 2 + 21)
        t[k++] = ' ';
    t[k++] = ' ';
    if (e) {
        e->flags = flags;
        e->len = (uint8_t)k;
    }
    *len = k;
    return t;
}

void script_format_head(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, script_memo *m)
{
    uint32_t F = f->fields;
    /* the thread's columns: made once per thread, cpu and name; with the misc and time
     * columns of the thread's last line, which the next lines of a time stamp share */
    size_t start = out->len;
    int memo = 0; /* 1: the thread's columns are those of m, the rest to be made */
    if (F & (EK_SF_F_COMM | EK_SF_F_PID | EK_SF_F_TID | EK_SF_F_CPU)) {
        const char *comm = (F & EK_SF_F_COMM) && r && r->comm ? r->comm(r->ctx, s) : NULL;
        if (m && m->th_len && m->th_tid == s->tid && m->th_pid == s->pid && m->th_cpu == s->cpu &&
            m->th_comm == comm) {
            int has_t = (F & EK_SF_F_TIME) && s->has_time;
            if (m->hd_has_t == has_t && (!has_t || m->hd_time == s->time)) {
                /* the whole text copied (fixed sizes: no call), the length counts */
                if (!ek_sbuf_room(out, SCRIPT_MEMO_HEAD)) {
                    char *d = out->p + out->len;
                    ek_copy64(d, m->th_text);
                    if (m->hd_len >= SCRIPT_MEMO_HEAD / 2)
                        ek_copy64(d + SCRIPT_MEMO_HEAD / 2, m->th_text + SCRIPT_MEMO_HEAD / 2);
                    out->len += m->hd_len;
                    out->p[out->len] = 0;
                }
                return;
            }
            ek_sbuf_put(out, m->th_text, m->th_len);
            memo = 1;
        } else {
            put_thread_cols(out, F, s, comm);
            size_t n = out->len - start;
            if (m) {
                m->th_len = 0;
                if (n <= sizeof m->th_text && !out->oom) {
                    memcpy(m->th_text, out->p + start, n);
                    m->th_len = (uint16_t)n;
                    m->th_tid = s->tid;
                    m->th_pid = s->pid;
                    m->th_cpu = s->cpu;
                    m->th_comm = comm;
                    memo = 1;
                }
            }
        }
    }
    if (F & EK_SF_F_MISC) {
        const char *mc = s->cpumode == EK_CPUMODE_KERNEL ? "K"
                         : s->cpumode == EK_CPUMODE_USER ? "U"
                                                         : "";
        ek_sbuf_printf(out, "%s%*s", mc, 6 - (int)strlen(mc), " ");
    }
    if ((F & EK_SF_F_TIME) && s->has_time) put_time(out, s->time, f->ns);
    if (memo) {
        /* the misc and time columns kept after the thread's, unless they do not fit (then
         * only the thread's columns are kept); the misc column depends on the cpu mode,
         * which the thread's columns do not say: kept only without it */
        size_t n = out->len - start;
        m->hd_len = m->th_len;
        m->hd_has_t = 2; /* matches no line */
        if (!(F & EK_SF_F_MISC) && n <= sizeof m->th_text && !out->oom) {
            memcpy(m->th_text + m->th_len, out->p + start + m->th_len, n - m->th_len);
            m->hd_len = (uint16_t)n;
            m->hd_has_t = (uint8_t)((F & EK_SF_F_TIME) && s->has_time);
            m->hd_time = s->time;
        }
    }
}

void script_format_tail(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, int evname_width, script_memo *m)
{
    uint32_t F = f->fields;
    wr w;
    if (!wr_begin(&w, out, 1024)) return;
    if (F & EK_SF_F_PERIOD) {
        c_decw(&w, (int64_t)s->period, 10);
        wr_c(&w, ' ');
    }
    if (F & EK_SF_F_EVENT) {
        const char *nm =
            s->kind < 2 && f->names[s->kind] ? f->names[s->kind] : ek_sample_kind_name(s->kind);
        c_strw(&w, nm, strlen(nm), evname_width);
        wr_lit(&w, ": ");
    }
    if (F & EK_SF_F_FLAGS) {
        size_t n;
        char tmp[64];
        const char *col = flags_col(m, s->flags, tmp, &n);
        wr_n(&w, col, n);
    }
    if (s->kind == EK_SAMPLE_BRANCHES) {
        /* perf prints its branches event like BTS: from ... => to ... */
        if (F & EK_SF_F_IP) {
            wr_c(&w, ' ');
            c_ip_sym(&w, F, s, r);
        }
        if ((F & EK_SF_F_ADDR) || !f->user_set) {
            wr_lit(&w, " => ");
            c_addr(&w, F, s, r);
        }
        if (F & (EK_SF_F_INSN | EK_SF_F_INSNLEN)) {
            wr_end(&w);
            put_insn(out, F, s);
            if (!wr_begin(&w, out, 2)) return;
        }
        wr_c(&w, '\n');
        wr_end(&w);
        return;
    }
    if (F & EK_SF_F_ADDR) c_addr(&w, F, s, r);
    if (F & EK_SF_F_IP) {
        wr_c(&w, ' ');
        c_ip_sym(&w, F, s, r);
    }
    wr_end(&w);
    if (F & (EK_SF_F_BRSTACK | EK_SF_F_BRSTACKSYM)) {
        if (ek_sbuf_reserve(out, 64 + (size_t)s->nbranches * 64)) return;
        put_brstack(out, F, s, r);
    }
    put_insn(out, F, s);
    if (!wr_begin(&w, out, 2)) return;
    wr_c(&w, '\n');
    wr_end(&w);
}

void script_format_memo(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, int evname_width, script_memo *m)
{
    script_format_head(out, f, s, r, m);
    script_format_tail(out, f, s, r, evname_width, m);
}

void ek_script_format(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                      const ek_script_resolver *r, int evname_width)
{
    script_format_memo(out, f, s, r, evname_width, NULL);
}

/* the line after the time column on the ordered path: script_format_tail's text, with the
 * callindent column, a call chain in place of the ip, and padded DSO names */
static void format_tail_x(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                          const ek_script_resolver *r, int evname_width, const ek_script_extra *x)
{
    uint32_t F = f->fields;
    if (F & EK_SF_F_PERIOD) {
        put_decw(out, (int64_t)s->period, 10);
        wputc(out, ' ');
    }
    if (F & EK_SF_F_EVENT) {
        const char *nm =
            s->kind < 2 && f->names[s->kind] ? f->names[s->kind] : ek_sample_kind_name(s->kind);
        put_strw(out, nm, evname_width);
        wput(out, ": ", 2);
    }
    if (F & EK_SF_F_FLAGS) {
        size_t n;
        char tmp[64];
        const char *col = flags_col(NULL, s->flags, tmp, &n);
        wput(out, col, n);
    }
    int chain = x && x->chain;
    if (s->kind == EK_SAMPLE_BRANCHES) {
        /* perf prints its branches event like BTS: from ... => to ... */
        if (F & EK_SF_F_CALLINDENT) ek__script_callindent(out, f, s, r, x);
        if (F & EK_SF_F_IP) {
            wputc(out, chain ? '\n' : ' ');
            if (chain)
                ek__script_chain(out, f, s, r, x);
            else
                put_ip_sym(out, F, s, r, f->pad_dso);
        }
        if ((F & EK_SF_F_ADDR) || !f->user_set) {
            wput(out, " => ", 4);
            put_addr(out, F, s, r, f->pad_dso);
        }
        put_insn(out, F, s);
        wputc(out, '\n');
        return;
    }
    if (F & EK_SF_F_ADDR) put_addr(out, F, s, r, f->pad_dso);
    if (F & EK_SF_F_IP) {
        wputc(out, chain ? '\n' : ' ');
        if (chain)
            ek__script_chain(out, f, s, r, x);
        else
            put_ip_sym(out, F, s, r, f->pad_dso);
    }
    if (F & (EK_SF_F_BRSTACK | EK_SF_F_BRSTACKSYM)) put_brstack(out, F, s, r);
    put_insn(out, F, s);
    wputc(out, '\n');
}

void ek_script_format_x(ek_sbuf *out, const ek_script_fields *f, const ek_sample *s,
                        const ek_script_resolver *r, int evname_width, const ek_script_extra *x)
{
    if (!x && !(f->fields & EK_SF_F_CALLINDENT) && f->pad_dso <= 0) {
        script_format_memo(out, f, s, r, evname_width, NULL);
        return;
    }
    script_format_head(out, f, s, r, NULL);
    format_tail_x(out, f, s, r, evname_width, x);
    if (out->len < out->cap) out->p[out->len] = 0;
}
