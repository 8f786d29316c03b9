/* Flame graphs as SVG: see include/etmkit/flame.h and docs/FLAMEGRAPH.md.
 *
 * Folded lines are merged into a tree (a hash table of (parent, name) -> node; the names stay
 * in the caller's buffer), the children of every node sorted (one sort of all nodes by parent,
 * then name or weight), and the tree laid out depth first: a frame's children start at its
 * left edge, its own count is the room left on its right. Frames are written flat, in that
 * order (parent before children), each as <g><title>NAME (COUNT UNIT, PCT%)</title><rect/>
 * [<text/>]</g> (a comment after them counts the frames drawn and not), then the script:
 * it rebuilds the tree from that order and the rows (y), and reads names and counts from the
 * titles. Frames narrower than min_width are left out with their subtrees. Numbers are written
 * without printf's floating point (no locale): a coordinate v as the integer (v * 100 + 0.5) / 100
 * with two decimals.
 */
#include "etmkit/flame.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/vec.h"
#include "etmkit/etmkit.h"

#define NONE       UINT32_MAX
#define PAD        10   /* left and right margins, pixels */
#define ROW        16   /* one row of frames */
#define FRAME_H    15   /* a frame's height (a pixel between rows) */
#define FONT_PX    12   /* the labels' font size */
#define CHAR_W     7.08 /* a character's width, estimated (Verdana at 12 px: 0.59 em) */
#define LABEL_MIN  3    /* fewer characters fitting: no label */
#define BOTTOM     30   /* below the frames: the details line */
#define TOP        34   /* above the frames: the title and the controls */
#define TOP_SUB    52   /* the same with a subtitle */
#define DEFAULT_W  1200
#define MAX_W      100000
#define DEFAULT_MW 0.1
#define STR_(x)    #x
#define STR(x)     STR_(x)

typedef struct fnode {
    const char *name;
    uint32_t nlen;
    uint32_t parent;
    uint64_t count; /* of the stacks through it */
    uint32_t kids;  /* the first child in the sorted order (kid[]), NONE without */
    uint32_t nkids;
    uint32_t depth; /* "all" is 0 */
} fnode;

typedef struct kid {
    const char *name;
    uint32_t nlen;
    uint32_t parent;
    uint64_t count;
    uint32_t node;
} kid;

typedef struct flame {
    EK_VEC(fnode) nodes;
    uint32_t *tab; /* node index + 1, 0 empty; capacity a power of two */
    size_t tabcap;
    kid *kid;
    ek_flame_stats st;
    const ek_flame_opts *o;
    const char *unit;
    unsigned width;
    double min_width;
    double scale;    /* pixels per count */
    unsigned base_y; /* the root row's y */
    ek_sbuf *out;
} flame;

static uint64_t name_hash(uint32_t parent, const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ parent; /* FNV-1a, 64 bits */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ull;
    }
    return h ^ (h >> 29);
}

static int tab_grow(flame *f)
{
    size_t cap = f->tabcap ? f->tabcap * 2 : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return EK_ERR_NOMEM;
    for (size_t i = 1; i < f->nodes.n; i++) { /* the root is not in the table */
        const fnode *n = &f->nodes.v[i];
        size_t j = name_hash(n->parent, n->name, n->nlen) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (uint32_t)i + 1;
    }
    free(f->tab);
    f->tab = t;
    f->tabcap = cap;
    return 0;
}

/* The child of parent named s, made when missing; NONE when out of memory. */
static uint32_t child(flame *f, uint32_t parent, const char *s, size_t n)
{
    if ((f->nodes.n + 1) * 2 > f->tabcap && tab_grow(f)) return NONE;
    size_t j = name_hash(parent, s, n) & (f->tabcap - 1);
    for (; f->tab[j]; j = (j + 1) & (f->tabcap - 1)) {
        const fnode *c = &f->nodes.v[f->tab[j] - 1];
        if (c->parent == parent && c->nlen == n && !memcmp(c->name, s, n)) return f->tab[j] - 1;
    }
    if (f->nodes.n >= NONE - 1) return NONE;
    fnode c = {s, (uint32_t)n, parent, 0, NONE, 0, f->nodes.v[parent].depth + 1};
    if (ek_vec_push(&f->nodes, c)) return NONE;
    f->tab[j] = (uint32_t)f->nodes.n;
    return (uint32_t)f->nodes.n - 1;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

/* One line [p, e): 0 used (or blank), 1 bad, EK_ERR_NOMEM. */
static int add_line(flame *f, const char *p, const char *e)
{
    while (e > p && is_blank(e[-1]))
        e--;
    if (e == p) return 0;
    const char *sp = e;
    while (sp > p && sp[-1] != ' ' && sp[-1] != '\t')
        sp--;
    if (sp == p || sp == e) return 1; /* no blank, or nothing after it */
    uint64_t count = 0;
    for (const char *q = sp; q < e; q++) {
        if (*q < '0' || *q > '9') return 1;
        unsigned d = (unsigned)(*q - '0');
        if (count > (UINT64_MAX - d) / 10) return 1;
        count = count * 10 + d;
    }
    const char *se = sp;
    while (se > p && is_blank(se[-1]))
        se--;
    if (se == p) return 1;
    /* every frame not empty (nor beyond 4 GiB), and not too many */
    uint32_t depth = 1;
    const char *fs = p;
    for (const char *q = p; q < se; q++) {
        if (*q != ';') continue;
        if (q == fs || (size_t)(q - fs) > UINT32_MAX || ++depth > EK_FLAME_MAX_DEPTH) return 1;
        fs = q + 1;
    }
    if (fs == se || (size_t)(se - fs) > UINT32_MAX) return 1;
    if (count > UINT64_MAX - f->st.total) return 1;
    f->st.stacks++;
    if (!count) return 0;
    uint32_t at = 0;
    for (const char *q = p; q < se;) {
        const char *fe = memchr(q, ';', (size_t)(se - q));
        if (!fe) fe = se;
        at = child(f, at, q, (size_t)(fe - q));
        if (at == NONE) return EK_ERR_NOMEM;
        f->nodes.v[at].count += count;
        q = fe + 1;
    }
    f->nodes.v[0].count += count;
    f->st.total += count;
    if (depth > f->st.depth) f->st.depth = depth;
    return 0;
}

static int name_cmp(const kid *a, const kid *b)
{
    size_t n = a->nlen < b->nlen ? a->nlen : b->nlen;
    int c = memcmp(a->name, b->name, n);
    if (c) return c;
    return a->nlen < b->nlen ? -1 : a->nlen > b->nlen;
}

static int by_name(const void *pa, const void *pb)
{
    const kid *a = pa, *b = pb;
    if (a->parent != b->parent) return a->parent < b->parent ? -1 : 1;
    return name_cmp(a, b);
}

static int by_weight(const void *pa, const void *pb)
{
    const kid *a = pa, *b = pb;
    if (a->parent != b->parent) return a->parent < b->parent ? -1 : 1;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return name_cmp(a, b);
}

/* ---- text */

/* The code point at s[*i] (advancing *i), or -1 for what XML may not hold as text: a control
 * character, DEL, U+FFFE, U+FFFF, or bytes that are not UTF-8, each maximal part of a
 * sequence that could have begun one (Unicode's "maximal subpart": as browsers and Python
 * decode), all shown as U+FFFD. */
static long next_cp(const char *s, size_t n, size_t *i)
{
    const unsigned char *u = (const unsigned char *)s + *i;
    size_t left = n - *i;
    unsigned c = u[0];
    if (c < 0x80) {
        (*i)++;
        return c < 0x20 || c == 0x7f ? -1 : (long)c;
    }
    unsigned len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc2 || c > 0xf4) {
        (*i)++;
        return -1;
    }
    /* the second byte's range excludes overlong forms, surrogates and beyond U+10FFFF */
    unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    unsigned long cp = c & (0x3fu >> (len - 1));
    for (unsigned k = 1; k < len; k++) {
        if (k >= left || u[k] < (k == 1 ? lo : 0x80) || u[k] > (k == 1 ? hi : 0xbf)) {
            *i += k;
            return -1;
        }
        cp = cp << 6 | (u[k] & 0x3f);
    }
    *i += len;
    return cp == 0xfffe || cp == 0xffff ? -1 : (long)cp;
}

/* The code point s[from, to) decoded to, escaped for XML text and attributes. */
static void put_cp(ek_sbuf *o, const char *s, size_t from, size_t to, long cp)
{
    switch (cp) {
    case -1: ek_sbuf_put(o, "\xef\xbf\xbd", 3); break;
    case '<': ek_sbuf_put(o, "&lt;", 4); break;
    case '>': ek_sbuf_put(o, "&gt;", 4); break;
    case '&': ek_sbuf_put(o, "&amp;", 5); break;
    case '"': ek_sbuf_put(o, "&quot;", 6); break;
    case '\'': ek_sbuf_put(o, "&#39;", 5); break;
    default: ek_sbuf_put(o, s + from, to - from);
    }
}

static void put_xml(ek_sbuf *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t at = i;
        long cp = next_cp(s, n, &i);
        put_cp(o, s, at, i, cp);
    }
}

/* A label of at most max code points: the name, or its start and "..". */
static void put_label(ek_sbuf *o, const char *s, size_t n, int max)
{
    int cps = 0;
    for (size_t i = 0; i < n && cps <= max; cps++)
        next_cp(s, n, &i);
    int keep = cps <= max ? cps : max - 2;
    size_t i = 0;
    for (int k = 0; k < keep; k++) {
        size_t at = i;
        long cp = next_cp(s, n, &i);
        put_cp(o, s, at, i, cp);
    }
    if (keep < cps) ek_sbuf_put(o, "..", 2);
}

/* v >= 0 in hundredths, rounded as it is written: (v * 100 + 0.5) truncated */
static uint64_t hundredths(double v)
{
    return v > 0 ? (uint64_t)(v * 100.0 + 0.5) : 0;
}

/* v >= 0 with two decimals (hundredths) */
static void put_fixed2(ek_sbuf *o, double v)
{
    uint64_t c = hundredths(v);
    ek_sbuf_dec(o, c / 100);
    ek_sbuf_putc(o, '.');
    ek_sbuf_putc(o, (char)('0' + c / 10 % 10));
    ek_sbuf_putc(o, (char)('0' + c % 10));
}

/* 1234567 as "1,234,567" */
static void put_grouped(ek_sbuf *o, uint64_t v)
{
    char d[32];
    int n = 0;
    do {
        if (n % 4 == 3) d[n++] = ',';
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        ek_sbuf_putc(o, d[--n]);
}

/* ---- colours: warm (red to yellow) from a hash of the name; kernel frames ("..._[k]") blue,
 * frames standing for what is not known ("[unknown]", "[gap]": a name in brackets) grey */
static void put_colour(ek_sbuf *o, const char *s, size_t n)
{
    uint32_t h = 2166136261u; /* FNV-1a, 32 bits */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    unsigned a = h & 0xff, b = (h >> 8) & 0xff, c = (h >> 16) & 0xff;
    unsigned r, g, bl;
    if (n >= 4 && !memcmp(s + n - 4, "_[k]", 4)) {
        r = 70 + a * 50 / 255;
        g = 140 + b * 60 / 255;
        bl = 200 + c * 55 / 255;
    } else if (n >= 2 && s[0] == '[' && s[n - 1] == ']') {
        r = g = bl = 175 + a * 35 / 255;
    } else {
        r = 205 + a * 50 / 255;
        g = 50 + b * 150 / 255;
        bl = 20 + c * 50 / 255;
    }
    static const char hx[] = "0123456789abcdef";
    char t[8] = {'#', hx[r >> 4], hx[r & 15], hx[g >> 4], hx[g & 15], hx[bl >> 4], hx[bl & 15], 0};
    ek_sbuf_put(o, t, 7);
}

/* ---- layout */

static uint64_t subtree_size(const flame *f, uint32_t at)
{
    const fnode *n = &f->nodes.v[at];
    uint64_t k = 1;
    for (uint32_t i = 0; i < n->nkids; i++)
        k += subtree_size(f, f->kid[n->kids + i].node);
    return k;
}

/* Frame at (its subtree) from start; skip: the count of its siblings left out just before it
 * (data-skip, so that the script places it exactly when it zooms). 1 when drawn. */
static int put_frame(flame *f, uint32_t at, uint64_t start, uint64_t skip)
{
    const fnode *n = &f->nodes.v[at];
    double w = (double)n->count * f->scale;
    if (w < f->min_width || !n->count) {
        f->st.omitted += subtree_size(f, at);
        return 0;
    }
    double x = (double)start * f->scale;
    x += PAD;
    const char *name = at ? n->name : "all";
    size_t nlen = at ? n->nlen : 3;
    unsigned y = f->base_y - n->depth * ROW;
    ek_sbuf *o = f->out;
    if (skip)
        ek_sbuf_printf(o, "<g data-skip=\"%" PRIu64 "\"><title>", skip);
    else
        ek_sbuf_puts(o, "<g><title>");
    put_xml(o, name, nlen);
    ek_sbuf_puts(o, " (");
    put_grouped(o, n->count);
    ek_sbuf_putc(o, ' ');
    put_xml(o, f->unit, strlen(f->unit));
    ek_sbuf_puts(o, ", ");
    double pct = (double)n->count / (double)f->st.total;
    put_fixed2(o, pct * 100.0);
    ek_sbuf_puts(o, "%)</title><rect x=\"");
    put_fixed2(o, x);
    ek_sbuf_printf(o, "\" y=\"%u\" width=\"", y);
    put_fixed2(o, w);
    ek_sbuf_printf(o, "\" height=\"%d\" fill=\"", FRAME_H);
    put_colour(o, name, nlen);
    ek_sbuf_puts(o, "\"/>");
    /* the characters that fit, from the width as written: the script's rule on the rect's
     * width attribute (at Reset), which the unrounded width could cross */
    const double ww = (double)hundredths(w) / 100.0;
    int fit = ww > 6.0 ? (int)((ww - 6.0) / CHAR_W) : 0;
    if (fit >= LABEL_MIN) {
        ek_sbuf_puts(o, "<text x=\"");
        put_fixed2(o, x + 3.0);
        ek_sbuf_printf(o, "\" y=\"%u\">", y + 11);
        put_label(o, name, nlen, fit);
        ek_sbuf_puts(o, "</text>");
    }
    ek_sbuf_puts(o, "</g>\n");
    f->st.drawn++;
    skip = 0;
    for (uint32_t i = 0; i < n->nkids; i++) {
        uint32_t c = f->kid[n->kids + i].node;
        uint64_t cn = f->nodes.v[c].count;
        skip = put_frame(f, c, start, skip) ? 0 : skip + cn;
        start += cn;
    }
    return 1;
}

static int sort_kids(flame *f)
{
    size_t nk = f->nodes.n - 1;
    if (!nk) return 0;
    f->kid = malloc(nk * sizeof *f->kid);
    if (!f->kid) return EK_ERR_NOMEM;
    for (size_t i = 1; i < f->nodes.n; i++) {
        const fnode *n = &f->nodes.v[i];
        f->kid[i - 1] = (kid){n->name, n->nlen, n->parent, n->count, (uint32_t)i};
    }
    qsort(f->kid, nk, sizeof *f->kid, f->o->order == EK_FLAME_BY_WEIGHT ? by_weight : by_name);
    for (size_t i = 0; i < nk; i++) {
        fnode *p = &f->nodes.v[f->kid[i].parent];
        if (p->kids == NONE) p->kids = (uint32_t)i;
        p->nkids++;
    }
    return 0;
}

/* ---- the document */

/* The script: see docs/FLAMEGRAPH.md for what it does. Frames come in depth-first order; a
 * frame's row gives its depth, the last frame one row below it is its parent; its start (in
 * counts) is its parent's, plus its previous siblings' counts and its data-skip. A zoom places
 * the frames from their counts (exact), a reset puts back the attributes written here. */
static const char script[] =
    "\"use strict\";\n"
    "var NS='http://www.w3.org/2000/svg',PAD=" STR(PAD) ",CW=" STR(
        CHAR_W) ";\n"
                "var fr=[],FW,det,det0,mat,rst,srch,zoomed=null,searched=null;\n"
                "function $(id){return document.getElementById(id);}\n"
                "function init(){\n"
                " FW=+$('frames').ownerSVGElement.getAttribute('width')-2*PAD;\n"
                " det=$('details');det0=det.textContent;mat=$('matched');rst=$('reset');srch=$('"
                "search');\n"
                " var gs=$('frames').children,st=[],base=null;\n"
                " for(var i=0;i<gs.length;i++){\n"
                "  var "
                "g=gs[i],r=g.getElementsByTagName('rect')[0],t=g.firstElementChild.textContent;\n"
                "  var m=/^([\\s\\S]*) \\(([0-9,]+) [\\s\\S]*?, [0-9.]+%\\)$/.exec(t);\n"
                "  var y=+r.getAttribute('y');if(base===null)base=y;\n"
                "  var d=Math.round((base-y)/" STR(
                    ROW) ");\n"
                         "  while(st.length>d)st.pop().end=i;\n"
                         "  var up=d?st[d-1]:null,n=m?Number(m[2].replace(/,/g,'')):0;\n"
                         "  var s=up?up.next+Number(g.getAttribute('data-skip')||0):0;\n"
                         "  var f={g:g,r:r,t:g.getElementsByTagName('text')[0]||null,i:i,d:d,\n"
                         "   name:m?m[1]:t,n:n,s:s,next:s,info:t,end:gs.length,\n"
                         "   x:r.getAttribute('x'),w:r.getAttribute('width'),tx:null};\n"
                         "  if(f.t)f.tx=f.t.getAttribute('x');\n"
                         "  if(up)up.next=s+n;\n"
                         "  st.push(f);fr.push(f);g.onclick=clickf(f);\n"
                         "  "
                         "g.onmouseover=overf(f);g.onmouseout=function(){det.textContent=det0;};\n"
                         " }\n"
                         " rst.onclick=reset;srch.onclick=searchPrompt;\n"
                         " window.addEventListener('keydown',function(e){\n"
                         "  if((e.key==='f'&&(e.ctrlKey||e.metaKey))||e.key==='F3'){\n"
                         "   if(searched===null){e.preventDefault();searchPrompt();}}\n"
                         "  else if(e.key==='Escape'){reset();clearSearch();}\n"
                         " });\n"
                         " var "
                         "q=/[?&]s=([^&]*)/"
                         ".exec(location.search);if(q)search(decodeURIComponent(q[1]));\n"
                         "}\n"
                         "function clickf(f){return function(){zoom(f);};}\n"
                         "function overf(f){return function(){det.textContent=f.info;};}\n"
                         "function fmt(v){return v.toFixed(2);}\n"
                         "function label(f,w){\n"
                         " var fit=w>6?Math.floor((w-6)/CW):0,cs=Array.from(f.name),s='';\n"
                         " if(fit>=" STR(
                             LABEL_MIN) ")s=cs.length<=fit?f.name:cs.slice(0,fit-2).join('')+'..';"
                                        "\n"
                                        " if(!f.t){if(!s)return;f.t=document.createElementNS(NS,'"
                                        "text');\n"
                                        "  "
                                        "f.t.setAttribute('y',+f.r.getAttribute('y')+11);f.g."
                                        "appendChild(f.t);}\n"
                                        " f.t.textContent=s;\n"
                                        "}\n"
                                        "function "
                                        "place(f,x,w){f.r.setAttribute('x',fmt(x));f.r."
                                        "setAttribute('width',fmt(w));\n"
                                        " label(f,w);if(f.t)f.t.setAttribute('x',fmt(x+3));}\n"
                                        "function zoom(f){\n"
                                        " if(f.d===0){reset();return;}\n"
                                        " zoomed=f;var k=FW/f.n;\n"
                                        " for(var i=0;i<fr.length;i++){\n"
                                        "  var e=fr[i],cl=e.g.classList;cl.remove('hide','anc');\n"
                                        "  if(e.i>=f.i&&e.i<f.end)place(e,PAD+(e.s-f.s)*k,e.n*k);\n"
                                        "  else "
                                        "if(e.i<f.i&&e.end>f.i){cl.add('anc');place(e,PAD,FW);}\n"
                                        "  else cl.add('hide');\n"
                                        " }\n"
                                        " rst.classList.remove('hide');\n"
                                        "}\n"
                                        "function reset(){\n"
                                        " zoomed=null;rst.classList.add('hide');\n"
                                        " for(var i=0;i<fr.length;i++){var "
                                        "e=fr[i];e.g.classList.remove('hide','anc');\n"
                                        "  "
                                        "e.r.setAttribute('x',e.x);e.r.setAttribute('width',e.w);"
                                        "label(e,+e.w);\n"
                                        "  if(e.t)e.t.setAttribute('x',e.tx||fmt(+e.x+3));}\n"
                                        "}\n"
                                        "function clearSearch(){\n"
                                        " searched=null;mat.textContent='';srch.textContent='"
                                        "Search';\n"
                                        " for(var "
                                        "i=0;i<fr.length;i++)fr[i].g.classList.remove('hit');\n"
                                        "}\n"
                                        "function searchPrompt(){\n"
                                        " if(searched!==null){clearSearch();return;}\n"
                                        " var s=window.prompt('Search frames (a regular "
                                        "expression; not one: a substring)','');\n"
                                        " if(s)search(s);\n"
                                        "}\n"
                                        "function search(s){\n"
                                        " var re;try{re=new RegExp(s);}catch(x){re=new "
                                        "RegExp(s.replace(/[.*+?^${}()|[\\]\\\\]/g,"
                                        "'\\\\$&'));}\n"
                                        " clearSearch();searched=s;\n"
                                        " var sum=0,upto=-1;\n"
                                        " for(var i=0;i<fr.length;i++){var "
                                        "f=fr[i];if(!re.test(f.name))continue;\n"
                                        "  "
                                        "f.g.classList.add('hit');if(i>=upto){sum+=f.n;upto=f.end;}"
                                        "}\n"
                                        " var tot=fr.length?fr[0].n:0;\n"
                                        " mat.textContent='Matched: "
                                        "'+(tot?(sum/tot*100).toFixed(2):'0.00')+'%';\n"
                                        " srch.textContent='Clear search';\n"
                                        "}\n"
                                        "window.flame={zoom:function(i){zoom(fr[i]);},reset:reset,"
                                        "search:search,"
                                        "clearSearch:clearSearch};\n";

static void put_head(flame *f, unsigned height)
{
    ek_sbuf *o = f->out;
    unsigned w = f->width;
    ek_sbuf_printf(o,
                   "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                   "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
                   "height=\"%u\" viewBox=\"0 0 %u %u\" onload=\"init()\">\n",
                   w, height, w, height);
    ek_sbuf_puts(o, "<style>\n"
                    "text{font-family:Verdana,\"DejaVu Sans\",sans-serif;font-size:" STR(
                        FONT_PX) "px;fill:#000}\n"
                                 "#title{font-size:17px;text-anchor:middle}\n"
                                 "#subtitle{text-anchor:middle;fill:#444}\n"
                                 "#frames g{cursor:pointer}\n"
                                 "#frames text{pointer-events:none}\n"
                                 "#frames g:hover rect{stroke:#000;stroke-width:.5}\n"
                                 ".hide{display:none}\n"
                                 ".anc rect{fill-opacity:.45}\n"
                                 ".hit rect{fill:#e040e0}\n"
                                 ".ctl{cursor:pointer;fill:#0050c0}\n"
                                 "</style>\n");
    ek_sbuf_printf(o, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f6f6f2\"/>\n");
    ek_sbuf_printf(o, "<text id=\"title\" x=\"%u\" y=\"24\">", w / 2);
    const char *t = f->o->title ? f->o->title : "Flame Graph";
    put_xml(o, t, strlen(t));
    ek_sbuf_puts(o, "</text>\n");
    if (f->o->subtitle && *f->o->subtitle) {
        ek_sbuf_printf(o, "<text id=\"subtitle\" x=\"%u\" y=\"42\">", w / 2);
        put_xml(o, f->o->subtitle, strlen(f->o->subtitle));
        ek_sbuf_puts(o, "</text>\n");
    }
    ek_sbuf_printf(o,
                   "<text id=\"reset\" class=\"ctl hide\" x=\"%d\" y=\"24\">Reset zoom</text>\n"
                   "<text id=\"search\" class=\"ctl\" x=\"%u\" y=\"24\" "
                   "text-anchor=\"end\">Search</text>\n"
                   "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n",
                   PAD, w - PAD, w - PAD, height - 10);
}

int ek_flame_svg(const char *folded, size_t len, const ek_flame_opts *o, ek_sbuf *out,
                 ek_flame_stats *stats)
{
    static const ek_flame_opts defaults = EK_FLAME_OPTS_INIT;
    if (!o) o = &defaults;
    if (stats) memset(stats, 0, sizeof *stats);
    if ((!folded && len) || !out) return EK_ERR_ARG;
    if (o->width && (o->width < 2 * PAD + 10 || o->width > MAX_W)) return EK_ERR_ARG;
    if (!(o->min_width >= 0.0) || o->min_width > MAX_W) return EK_ERR_ARG; /* NaN too */
    if (o->order != EK_FLAME_BY_NAME && o->order != EK_FLAME_BY_WEIGHT) return EK_ERR_ARG;
    flame f;
    memset(&f, 0, sizeof f);
    f.o = o;
    f.out = out;
    f.unit = o->unit ? o->unit : "instructions";
    f.width = o->width ? o->width : DEFAULT_W;
    f.min_width = o->min_width > 0 ? o->min_width : DEFAULT_MW;
    fnode root = {"all", 3, NONE, 0, NONE, 0, 0};
    int rc = ek_vec_push(&f.nodes, root) ? EK_ERR_NOMEM : 0;
    for (size_t i = 0; !rc && i < len;) {
        const char *p = folded + i;
        const char *e = memchr(p, '\n', len - i);
        size_t n = e ? (size_t)(e - p) : len - i;
        i += n + 1;
        f.st.lines++;
        int bad = add_line(&f, p, p + n);
        if (bad < 0)
            rc = bad;
        else if (bad && !f.st.bad_lines++)
            f.st.first_bad_line = f.st.lines;
    }
    if (!rc && f.st.bad_lines && !f.st.stacks) rc = EK_ERR_FORMAT;
    if (!rc) rc = sort_kids(&f);
    if (!rc) {
        f.st.frames = f.nodes.n;
        f.scale = f.st.total ? (double)(f.width - 2 * PAD) / (double)f.st.total : 0.0;
        unsigned top = o->subtitle && *o->subtitle ? TOP_SUB : TOP;
        unsigned rows = f.st.total ? f.st.depth + 1 : 1;
        unsigned height = top + rows * ROW + BOTTOM;
        f.base_y = top + (rows - 1) * ROW;
        size_t at = out->len;
        put_head(&f, height);
        ek_sbuf_puts(out, "<g id=\"frames\">\n");
        if (f.st.total) put_frame(&f, 0, 0, 0);
        ek_sbuf_puts(out, "</g>\n");
        if (!f.st.total)
            ek_sbuf_printf(out,
                           "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\">No samples</text>\n",
                           f.width / 2, f.base_y + 11);
        /* the details line: a frame's title while the pointer is on it, else this */
        ek_sbuf_printf(out, "<text id=\"details\" x=\"%d\" y=\"%u\">", PAD, height - 10);
        if (f.st.omitted) {
            put_grouped(out, f.st.omitted);
            ek_sbuf_puts(out, f.st.omitted > 1 ? " frames" : " frame");
            ek_sbuf_puts(out, " narrower than ");
            put_fixed2(out, f.min_width);
            ek_sbuf_puts(out, " px not drawn");
        }
        ek_sbuf_printf(out,
                       "</text>\n<!-- %" PRIu64 " frames, %" PRIu64 " drawn, %" PRIu64
                       " not drawn (narrower than ",
                       f.st.frames, f.st.drawn, f.st.omitted);
        put_fixed2(out, f.min_width);
        ek_sbuf_puts(out, " px) -->\n<script><![CDATA[\n");
        ek_sbuf_put(out, script, sizeof script - 1);
        ek_sbuf_puts(out, "]]></script>\n</svg>\n");
        if (out->oom) {
            rc = EK_ERR_NOMEM;
            out->len = at;
            if (out->p && at < out->cap) out->p[at] = '\0';
        }
    }
    if (stats) *stats = f.st;
    ek_vec_free(&f.nodes);
    free(f.tab);
    free(f.kid);
    return rc;
}
