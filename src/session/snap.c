/* A session over a trace snapshot folder (snapshot.ini): every trace source of every buffer
 * decoded, samples made as for perf.data (ek_synth), handed to the same consumers.
 *
 * What a snapshot gives in place of a recording's sideband (docs/SNAPSHOT-SESSION.md):
 *  - threads: none are recorded; every trace source is a thread of its own: pid = tid = its
 *    trace ID, named (comm) after the source's device ("ETM_0");
 *  - cpu: the index of the source's core among the snapshot's cores (devices of class "core",
 *    in device-list order), -1 for a source without a core;
 *  - time: the trace's own time stamps, raw (TIMESTAMP element values, no conversion): a
 *    source configured to emit them (TRCCONFIGR.TS, ETMCR.TimestampEnable) gives every sample
 *    a time, 0 before its first time stamp; the others give none;
 *  - code: the memory dumps of the buffer's cores, as `etmkit dump --decode` reads them
 *    (ek_image_add_snapshot_buffer), with the --image specs laid over them;
 *  - symbols: those of the ELF files given with --image; elsewhere "[unknown]", with the
 *    memory dump's (or the raw image's) file name as the DSO.
 * Order: buffer after buffer (the snapshot's buffer order), and within a buffer the order the
 * decode tree hands out elements: the order of the trace in the buffer (frame by frame), the
 * sources' samples interleaved as they were captured. ek_sample.queue is the buffer's position
 * in that order. The decode follows the architecture (not OpenCSD's departures: no fatal
 * stops), as `etmkit dump --decode` does for its text and JSON listings; a DSTREAM buffer
 * (format=dstream_coresight) is read as DSTREAM records, as `dump --decode --dstream` reads it.
 *
 * Single-threaded: a snapshot's buffers are decoded in turn on the caller's thread, and the
 * consumer's callbacks (ordered or staged) are called from it as samples are made. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "etmkit/account.h"
#include "etmkit/decode.h"
#include "etmkit/etmkit.h"
#include "etmkit/image.h"
#include "etmkit/mapfile.h"
#include "etmkit/snapshot.h"
#include "etmkit/symbols.h"
#include "session/session_int.h"

/* code the resolver names: a memory dump or an --image spec */
typedef struct sregion {
    uint64_t lo, hi;
    const char *dso; /* file name shown as the DSO */
    ek_symtab *syms; /* ELF symbols (by p_vaddr), NULL: none */
    uint64_t bias;   /* address - bias = the ELF's own address */
} sregion;

typedef struct sbuf_state { /* one buffer of the snapshot, in buffer order */
    size_t buffer;          /* index into ss->buffers */
    ek_image *img;          /* its code */
    EK_VEC(sregion) regions;
    int src_of_id[128]; /* index into srcs + 1 (0: none) */
} sbuf_state;

typedef struct ssrc { /* one trace source as decoded from one buffer */
    size_t pos;       /* its buffer's position */
    ek_synth *synth;  /* NULL: no instruction trace */
    int has_time;
    uint64_t time;
} ssrc;

typedef struct snap_nacc {
    uint64_t addr, index;
    uint32_t src; /* index into srcs */
} snap_nacc;

struct snap_sess {
    ek_snapshot *ss;
    int borrowed;         /* ss is the caller's (ek_session_opts.snapshot) */
    ek_image_spec *specs; /* copies of the options' */
    size_t nspecs;
    ek_symtab **spec_syms; /* per spec: its ELF symbols (NULL: none) */
    char **spec_names;
    ek_image_placed *placed;
    sbuf_state *bufs;
    size_t nbufs;
    EK_VEC(ssrc) srcs; /* parallel to acct */
    EK_VEC(ek_account_source) acct;
    EK_VEC(snap_nacc) naccs;
    /* the run */
    const ek_consumer *c;
    void *qctx;
    ek_sbuf out;   /* staged: encoded samples not yet put */
    uint64_t skip; /* --itrace=sN */
    int rc;
    size_t cur; /* the buffer being decoded */
};

/* ---- open ----------------------------------------------------------------------------------- */

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* path, or the working folder joined with it when it is relative (NULL: out of memory) */
static char *absolute_path(const char *path)
{
    char *cwd = path[0] == '/' ? NULL : getcwd(NULL, 0);
    char *out = NULL;
    if (!cwd) return strdup(path);
    if (asprintf(&out, "%s/%s", cwd, path) < 0) out = NULL;
    free(cwd);
    return out;
}

/* The index of device dev among the snapshot's cores, or -1. */
static int32_t core_index(const ek_snapshot *ss, long dev)
{
    if (dev < 0 || (size_t)dev >= ss->ndevices) return -1;
    int32_t n = 0;
    for (long i = 0; i < dev; i++)
        if (ss->devices[i].devclass && !strcmp(ss->devices[i].devclass, "core")) n++;
    return n;
}

int snap_is_dir(const char *path)
{
    char *p = NULL;
    if (asprintf(&p, "%s/snapshot.ini", path) < 0) return 0;
    /* (stat, not open: a FIFO would wait for a writer; the reader says what is wrong with it) */
    struct stat st;
    int is = stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
    free(p);
    return is;
}

int snap_open(ek_session *s)
{
    snap_sess *sn = calloc(1, sizeof *sn);
    if (!sn) return EK_ERR_NOMEM;
    s->snap = sn;
    int rc = 0;
    if (s->o.snapshot) { /* the caller's (a bare trace file): borrowed */
        sn->ss = (ek_snapshot *)s->o.snapshot;
        sn->borrowed = 1;
    } else {
        rc = ek_snapshot_open(s->path, &s->diag, &sn->ss);
    }
    if (rc) return rc;
    if (!sn->ss->nbuffers) {
        ek_diag_emit(&s->diag, EK_SEV_ERROR, "snapshot.no-buffer", EK_ERR_FORMAT, s->path, -1, -1,
                     -1, "the snapshot names no trace buffer");
        return EK_ERR_FORMAT;
    }
    const size_t n = s->o.nimages;
    if (n) {
        sn->specs = calloc(n, sizeof *sn->specs);
        sn->spec_syms = calloc(n, sizeof *sn->spec_syms);
        sn->placed = calloc(n, sizeof *sn->placed);
        if (!sn->specs || !sn->spec_syms || !sn->placed) return EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const ek_image_spec *sp = &s->o.images[i];
        sn->specs[i] = *sp;
        /* a relative path made absolute (symbolic links kept, as given): it names the binary
         * of the samples and profiles, and whoever looks for that binary later (export's lcov
         * and bolt) looks from elsewhere */
        sn->specs[i].path = sp->path ? absolute_path(sp->path) : NULL;
        sn->nspecs = i + 1;
        if (!sn->specs[i].path) return sp->path ? EK_ERR_NOMEM : EK_ERR_ARG;
        /* checked once, here: the same for every buffer */
        ek_image *probe = NULL;
        if ((rc = ek_image_new(&s->diag, &probe))) return rc;
        rc = ek_image_add_spec(probe, &sn->specs[i], EK_MS_ANY, &sn->placed[i]);
        ek_image_free(probe);
        if (rc) return rc;
        if (sn->placed[i].elf &&
            ek_symtab_load_elf(sn->specs[i].path, EK_SYMS_VADDR | EK_SYMS_NO_PLT, &s->diag,
                               &sn->spec_syms[i]))
            sn->spec_syms[i] = NULL; /* (said by the loader) */
    }
    sn->nbufs = sn->ss->nbuffers;
    sn->bufs = calloc(sn->nbufs, sizeof *sn->bufs);
    if (!sn->bufs) return EK_ERR_NOMEM;
    for (size_t k = 0; k < sn->nbufs; k++)
        sn->bufs[k].buffer = sn->ss->buffer_order ? sn->ss->buffer_order[k] : k;
    return 0;
}

void snap_free(snap_sess *sn)
{
    if (!sn) return;
    for (size_t k = 0; k < sn->nbufs; k++) {
        ek_image_free(sn->bufs[k].img);
        ek_vec_free(&sn->bufs[k].regions);
    }
    free(sn->bufs);
    for (size_t i = 0; i < sn->srcs.n; i++)
        ek_synth_free(sn->srcs.v[i].synth);
    ek_vec_free(&sn->srcs);
    ek_vec_free(&sn->acct);
    ek_vec_free(&sn->naccs);
    for (size_t i = 0; i < sn->nspecs; i++) {
        ek_image_spec_free(&sn->specs[i]);
        ek_symtab_free(sn->spec_syms[i]);
    }
    free(sn->specs);
    free(sn->spec_syms);
    free(sn->placed);
    ek_sbuf_free(&sn->out);
    if (!sn->borrowed) ek_snapshot_free(sn->ss);
    free(sn);
}

const ek_snapshot *snap_snapshot(const ek_session *s)
{
    return s->snap ? s->snap->ss : NULL;
}

/* ---- the resolver -----------------------------------------------------------------------------
 */

typedef struct srctx {
    ek_sample_ctx pub; /* first: the consumer's context is the resolver's */
    ek_script_resolver r;
    ek_session *s;
} srctx;

static sbuf_state *buf_of(snap_sess *sn, const ek_sample *smp)
{
    return smp->queue < sn->nbufs ? &sn->bufs[smp->queue] : NULL;
}

static void r_resolve(void *ctx, const ek_sample *smp, uint64_t addr, int fallback,
                      ek_addr_loc *out)
{
    (void)fallback;
    srctx *c = ctx;
    memset(out, 0, sizeof *out);
    sbuf_state *b = buf_of(c->s->snap, smp);
    for (size_t i = 0; b && i < b->regions.n; i++) {
        const sregion *g = &b->regions.v[i];
        if (addr < g->lo || addr >= g->hi) continue;
        out->dso = g->dso;
        if (g->syms) {
            const ek_symbol *sym = ek_symtab_find(g->syms, addr - g->bias);
            if (sym) {
                out->sym = sym->name;
                out->symoff = addr - g->bias - sym->start;
            }
        }
        return;
    }
}

static const char *r_comm(void *ctx, const ek_sample *smp)
{
    srctx *c = ctx;
    snap_sess *sn = c->s->snap;
    sbuf_state *b = buf_of(sn, smp);
    int k = b ? b->src_of_id[smp->trace_id & 127] : 0;
    return k ? sn->acct.v[k - 1].name : NULL;
}

static size_t r_code(void *ctx, const ek_sample *smp, uint64_t addr, void *buf, size_t len)
{
    srctx *c = ctx;
    sbuf_state *b = buf_of(c->s->snap, smp);
    return b && b->img ? ek_image_read(b->img, EK_MS_ANY, addr, buf, len) : 0;
}

static void srctx_init(srctx *c, ek_session *s, size_t pos)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->r.resolve = r_resolve;
    c->r.comm = r_comm;
    c->r.code = r_code;
    c->r.ctx = c;
    c->pub.r = &c->r;
    c->pub.block = (uint32_t)pos + 1;
    c->pub.unstable = 1; /* (answers are not cached by time) */
}

/* ---- samples out --------------------------------------------------------------------------------
 */

static int put_out(snap_sess *sn, int all)
{
    if (!sn->out.len || (!all && sn->out.len < QOUT_CHUNK)) return 0;
    int rc = sn->out.oom ? EK_ERR_NOMEM : sn->c->put(sn->c->ctx, sn->out.p, sn->out.len);
    ek_sbuf_reset(&sn->out);
    return rc;
}

typedef struct sctx { /* ek_synth_io.ctx: one source */
    ek_session *s;
    size_t src;
} sctx;

static int on_sample(ek_session *s, size_t src, const ek_sample *smp)
{
    snap_sess *sn = s->snap;
    ek_account_source *a = &sn->acct.v[src];
    if (smp->kind == EK_SAMPLE_BRANCHES)
        s->st.samples_branches++;
    else
        s->st.samples_instructions++;
    a->samples++;
    const ek_consumer *c = sn->c;
    if (!c) return 0;
    if (sn->skip) { /* counted before the filter, as perf does */
        sn->skip--;
        return 0;
    }
    if (s->o.filter && !ek_sample_filter_match(s->o.filter, smp, a->name)) return 0;
    srctx rc;
    srctx_init(&rc, s, sn->srcs.v[src].pos);
    if (c->encode) {
        c->encode(sn->qctx, &sn->out, smp, &rc.pub);
        return put_out(sn, 0);
    }
    return c->sample ? c->sample(c->ctx, smp, &rc.r) : 0;
}

/* the synthesiser's samples: sources live in a growing vector, so the callback's context is
 * the index (in a small record that does not move) */
static int synth_sample(void *ctx, const ek_sample *smp)
{
    sctx *x = ctx;
    return on_sample(x->s, x->src, smp);
}

static size_t synth_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    sctx *x = ctx;
    sbuf_state *b = &x->s->snap->bufs[x->s->snap->srcs.v[x->src].pos];
    return b->img ? ek_image_read(b->img, EK_MS_ANY, addr, buf, len) : 0;
}

/* ---- decoding a buffer --------------------------------------------------------------------------
 */

static int has_flow(ek_protocol p)
{
    return p == EK_PROTO_ETMV4 || p == EK_PROTO_ETMV4M || p == EK_PROTO_ETE ||
           p == EK_PROTO_ETMV3 || p == EK_PROTO_PTM;
}

/* The source is configured to emit time stamps (ETMv4 / ETE: TRCCONFIGR.TS; ETMv3 / PTM:
 * ETMCR.TimestampEnable). */
static int source_timed(const ek_source_config *c)
{
    switch (c->protocol) {
    case EK_PROTO_ETMV4:
    case EK_PROTO_ETMV4M:
    case EK_PROTO_ETE: return (c->regs.etm4.configr >> 11) & 1;
    case EK_PROTO_ETMV3:
    case EK_PROTO_PTM: return (c->regs.etm3.etmcr >> 28) & 1;
    default: return 0;
    }
}

/* The regions the resolver names in buffer b: the --image specs first (they win), then the
 * memory dumps of the cores of the buffer's sources. */
static int buf_regions(ek_session *s, sbuf_state *b)
{
    snap_sess *sn = s->snap;
    const ek_snapshot *ss = sn->ss;
    for (size_t i = 0; i < sn->nspecs; i++) {
        sregion g = {sn->placed[i].lo, sn->placed[i].hi, sn->specs[i].path, sn->spec_syms[i],
                     sn->placed[i].bias};
        if (ek_vec_push(&b->regions, g)) return EK_ERR_NOMEM;
    }
    for (size_t i = 0; i < ss->nsources; i++) {
        const ek_snap_source *src = &ss->sources[i];
        if (src->buffer != (long)b->buffer || src->core < 0) continue;
        const ek_snap_device *dev = &ss->devices[src->core];
        for (size_t j = 0; j < dev->ndumps; j++) {
            const ek_snap_dump *d = &dev->dumps[j];
            if (!d->present) continue;
            uint64_t len = d->has_length              ? d->length
                           : d->file_size > d->offset ? d->file_size - d->offset
                                                      : 0;
            if (d->has_length && d->file_size > d->offset && len > d->file_size - d->offset)
                len = d->file_size - d->offset;
            sregion g = {d->address, d->address + len, base_name(d->path), NULL, 0};
            if (len && ek_vec_push(&b->regions, g)) return EK_ERR_NOMEM;
        }
    }
    return 0;
}

/* One source of the tree: its account entry and synthesiser. */
static int add_source(ek_session *s, size_t pos, const ek_decode_source_info *si, sctx *ctxs,
                      size_t maxctx)
{
    snap_sess *sn = s->snap;
    const ek_snapshot *ss = sn->ss;
    sbuf_state *b = &sn->bufs[pos];
    ek_account_source a;
    memset(&a, 0, sizeof a);
    a.name = si->name;
    a.buffer = ss->buffers[b->buffer].name;
    a.trace_id = si->cfg->trace_id;
    a.protocol = si->cfg->protocol;
    a.cpu = -1;
    a.decoded = si->proto != NULL;
    for (size_t i = 0; i < ss->nsources; i++) {
        const ek_snap_device *dev = &ss->devices[ss->sources[i].device];
        if (dev->name && si->name && !strcmp(dev->name, si->name)) {
            long core = ss->sources[i].core;
            a.cpu = core_index(ss, core);
            a.core = core >= 0 ? ss->devices[core].name : NULL;
            a.core_ini = core >= 0 ? ss->devices[core].ini_path : NULL;
            a.source_ini = dev->ini_path;
            break;
        }
    }
    ssrc x = {pos, NULL, 0, 0};
    const size_t idx = sn->srcs.n;
    if (idx >= maxctx) return 0;
    ctxs[idx].s = s;
    ctxs[idx].src = idx;
    if (a.decoded && has_flow(si->cfg->protocol)) {
        ek_synth_config sc;
        ek_synth_config_init(&sc);
        /* --itrace=sN counts the session's output (on_sample), not a source's */
        ek_itrace it = s->o.itrace;
        it.initial_skip = 0;
        sc.itrace = &it;
        sc.protocol = si->cfg->protocol;
        sc.cpu = a.cpu;
        sc.trace_id = (uint8_t)a.trace_id;
        sc.queue = (uint32_t)pos;
        sc.io.read = synth_read;
        sc.io.sample = synth_sample;
        sc.io.ctx = &ctxs[idx];
        sc.no_insn = s->no_insn;
        int rc = ek_synth_new(&sc, &x.synth);
        if (rc) return rc;
        ek_synth_set_thread(x.synth, a.trace_id, a.trace_id);
        /* a source that emits time stamps: its samples all carry a time, 0 before its first
         * time stamp */
        if (source_timed(si->cfg)) {
            a.time_stamps = 1;
            x.has_time = 1;
            x.time = 0;
            ek_synth_set_time(x.synth, 0);
        }
    }
    if (ek_vec_push(&sn->srcs, x) || ek_vec_push(&sn->acct, a)) {
        ek_synth_free(x.synth);
        return EK_ERR_NOMEM;
    }
    if (a.decoded && !b->src_of_id[a.trace_id & 127]) b->src_of_id[a.trace_id & 127] = (int)idx + 1;
    return 0;
}

static int elem_out(ek_session *s, size_t src, const ek_elem *e)
{
    snap_sess *sn = s->snap;
    const ek_consumer *c = sn->c;
    if (!c || c->encode || !c->elem || !(c->wants & EK_CONSUME_ELEMS) ||
        !session_wants_elem(c->elem_types, c->elem_flags, e))
        return 0;
    const ek_account_source *a = &sn->acct.v[src];
    const ssrc *x = &sn->srcs.v[src];
    ek_session_elem se = {e, a->trace_id, a->trace_id, a->cpu, x->has_time, x->time};
    return c->elem(c->ctx, &se);
}

static int on_elem(ek_session *s, size_t src, const ek_elem *e)
{
    snap_sess *sn = s->snap;
    ssrc *x = &sn->srcs.v[src];
    ek_account_source *a = &sn->acct.v[src];
    s->st.elements++;
    int rc;
    if (e->type == EK_ELEM_TIMESTAMP) {
        x->has_time = 1;
        x->time = e->timestamp;
        if (x->synth) ek_synth_set_time(x->synth, e->timestamp);
    } else if (e->type == EK_ELEM_ADDR_NACC) {
        a->nacc++;
        s->st.nacc++;
        snap_nacc n = {e->st_addr, e->index, (uint32_t)src};
        if (ek_vec_push(&sn->naccs, n)) return EK_ERR_NOMEM;
    }
    if ((rc = elem_out(s, src, e))) return rc;
    return x->synth ? ek_synth_elem(x->synth, e) : 0;
}

static int drain(ek_session *s, ek_decode *t, size_t pos)
{
    snap_sess *sn = s->snap;
    sbuf_state *b = &sn->bufs[pos];
    ek_decode_item it;
    int r;
    while ((r = ek_decode_next(t, &it)) > 0) {
        if (it.kind != EK_DI_ELEMS) continue;
        int k = b->src_of_id[it.trace_id & 127];
        if (!k) continue;
        for (size_t i = 0; i < it.count; i++) {
            int rc = on_elem(s, (size_t)k - 1, &it.elems[i]);
            if (rc) return rc;
        }
    }
    return r;
}

static int decode_buffer(ek_session *s, size_t pos, sctx *ctxs, size_t maxctx)
{
    snap_sess *sn = s->snap;
    const ek_snapshot *ss = sn->ss;
    sbuf_state *b = &sn->bufs[pos];
    const ek_snap_buffer *buf = &ss->buffers[b->buffer];
    int rc = ek_image_new(&s->diag, &b->img);
    if (rc) return rc;
    rc = ek_image_add_snapshot_buffer(b->img, ss, b->buffer);
    if (rc == EK_ERR_NOMEM) return rc;
    for (size_t i = 0; i < sn->nspecs; i++)
        if ((rc = ek_image_add_spec(b->img, &sn->specs[i], EK_MS_ANY, NULL))) return rc;
    if ((rc = buf_regions(s, b))) return rc;
    if (!buf->path) {
        ek_diag_emit(&s->diag, EK_SEV_ERROR, "snapshot.no-file", EK_ERR_NOT_FOUND, ss->trace_ini,
                     -1, -1, -1, "buffer %s has no trace file", buf->name);
        return 0;
    }
    ek_decode_config dc;
    ek_decode_config_init(&dc);
    dc.flags = EK_DECODE_ELEMS | EK_DECODE_BATCH | EK_DECODE_DIAG_STREAM;
    /* a DSTREAM capture is read as its records (504 data + 8 footer bytes): what `dump
     * --dstream` (trc_pkt_lister's -dstream_format) asks for by hand */
    if (buf->format == EK_BUF_DSTREAM) dc.flags |= EK_DECODE_DSTREAM;
    dc.model = EK_DECODE_MODEL_OCSD;
    dc.mem = ek_flow_mem_image(b->img);
    dc.diag = &s->diag;
    dc.file = buf->path;
    dc.source_flags = EK_SRC_ITM_ASSUME_SYNC;
    ek_decode *t = NULL;
    if ((rc = ek_decode_new(&dc, &t))) return rc;
    rc = ek_decode_add_snapshot_buffer(t, ss, b->buffer);
    if (rc < 0) {
        ek_decode_free(t);
        return rc;
    }
    rc = 0;
    const size_t first = sn->srcs.n;
    const size_t nsrc = ek_decode_source_count(t);
    for (size_t i = 0; i < nsrc && !rc; i++) {
        ek_decode_source_info si;
        if (!ek_decode_source_info_get(t, i, &si)) rc = add_source(s, pos, &si, ctxs, maxctx);
    }
    ek_mapped m;
    memset(&m, 0, sizeof m);
    /* (not present: no regular file, which the reader said with its trace.ini line: not said
     * again; /dev/zero read whole never ends) */
    int mrc = rc ? 0 : buf->present ? ek_map_file(buf->path, &m) : EK_ERR_IO;
    if (mrc && buf->present) {
        ek_diag_emit(&s->diag, EK_SEV_ERROR, "snapshot.unreadable", mrc, buf->path, -1, -1, -1,
                     "cannot read trace buffer %s (%s)", buf->name, strerror(errno));
    } else if (!rc && !mrc) {
        ek_decode_item it;
        while (ek_decode_next(t, &it) > 0) /* (what the decoders said as they were made) */
            ;
        s->st.trace_bytes += m.size;
        ek_decode_feed(t, m.data, m.size, 0);
        rc = drain(s, t, pos);
        /* the end of the buffer: perf's end of a block (the last-branch flush), then the end
         * of trace */
        for (size_t i = first; i < sn->srcs.n && !rc; i++)
            if (sn->srcs.v[i].synth) rc = ek_synth_end_block(sn->srcs.v[i].synth);
        if (!rc) {
            ek_decode_end(t);
            rc = drain(s, t, pos);
        }
        s->progress_done += m.size;
    }
    /* counters */
    for (size_t i = first; i < sn->srcs.n; i++) {
        ek_account_source *a = &sn->acct.v[i];
        ek_decode_source_stats st;
        if (!a->decoded || ek_decode_source_stats_get(t, (unsigned)a->trace_id, &st)) continue;
        if (b->src_of_id[a->trace_id & 127] != (int)i + 1) continue;
        a->bytes = st.bytes;
        a->packets = st.packets;
        a->bad_packets = st.bad_packets;
        if (st.has_flow) {
            a->instructions = st.flow.instructions;
            a->sync_losses = st.flow.resyncs;
            a->errors = st.flow.errors;
        }
        s->st.packets += st.packets;
        s->st.instructions += a->instructions;
        s->st.decode_errors += a->errors + a->bad_packets;
        s->st.trace_bytes_decoded += st.packet_bytes;
    }
    if (!mrc) ek_unmap_file(&m);
    ek_decode_free(t);
    return rc;
}

int snap_run(ek_session *s, const ek_consumer *c)
{
    snap_sess *sn = s->snap;
    if (s->ran) return EK_ERR_ARG;
    s->ran = 1;
    memset(&s->st, 0, sizeof s->st);
    s->st.queues = sn->nbufs;
    s->st.slices = sn->nbufs;
    sn->c = c;
    sn->skip = s->o.itrace.initial_skip;
    s->no_insn = c ? c->no_insn : 1;
    /* the synthesisers' callback contexts: one per source of the snapshot, at most */
    size_t maxctx = 0;
    for (size_t k = 0; k < sn->nbufs; k++)
        maxctx += sn->ss->nsources + 1;
    sctx *ctxs = calloc(maxctx ? maxctx : 1, sizeof *ctxs);
    if (!ctxs) return EK_ERR_NOMEM;
    if (c && c->encode && c->queue_begin) sn->qctx = c->queue_begin(c->ctx);
    if (s->o.progress) {
        for (size_t k = 0; k < sn->nbufs; k++)
            s->progress_total += sn->ss->buffers[sn->bufs[k].buffer].file_size;
        s->o.progress(s->o.progress_ctx, 0, s->progress_total);
    }
    int rc = 0;
    for (size_t k = 0; k < sn->nbufs && !rc; k++) {
        sn->cur = k;
        rc = decode_buffer(s, k, ctxs, maxctx);
        if (s->o.progress) s->o.progress(s->o.progress_ctx, s->progress_done, s->progress_total);
    }
    if (!rc && c && c->encode) rc = put_out(sn, 1);
    if (c && c->encode && c->queue_end) c->queue_end(c->ctx, sn->qctx);
    /* the synthesisers point at the contexts: done with both */
    for (size_t i = 0; i < sn->srcs.n; i++) {
        ek_synth_free(sn->srcs.v[i].synth);
        sn->srcs.v[i].synth = NULL;
    }
    free(ctxs);
    sn->c = NULL;
    return rc;
}

/* ---- what the account needs ---------------------------------------------------------------------
 */

const ek_account_source *snap_sources(const ek_session *s, size_t *n)
{
    *n = s->snap->acct.n;
    return s->snap->acct.v;
}

static int nacc_cmp(const void *a, const void *b)
{
    const snap_nacc *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Unreadable code as address ranges: the NACC addresses sorted, a new range where the next
 * address is more than SNAP_RANGE_GAP past the last one, one range per core's ini file (where a
 * [dump] section would go). */
int snap_nacc_ranges(ek_session *s, snap_range **out, size_t *n)
{
    snap_sess *sn = s->snap;
    *out = NULL;
    *n = 0;
    if (!sn->naccs.n) return 0;
    qsort(sn->naccs.v, sn->naccs.n, sizeof *sn->naccs.v, nacc_cmp);
    EK_VEC(snap_range) v = {0};
    for (size_t i = 0; i < sn->naccs.n; i++) {
        const snap_nacc *x = &sn->naccs.v[i];
        const ek_account_source *a = &sn->acct.v[x->src];
        const char *ini = a->core_ini ? a->core_ini : a->source_ini;
        snap_range *r = NULL;
        for (size_t k = v.n; k-- > 0 && !r;)
            if (v.v[k].ini == ini && x->addr - v.v[k].hi <= SNAP_RANGE_GAP) r = &v.v[k];
        if (!r) {
            snap_range nr = {x->addr, x->addr, 0, x->index, a->trace_id, ini, a->core};
            if (ek_vec_push(&v, nr)) {
                ek_vec_free(&v);
                return EK_ERR_NOMEM;
            }
            r = &v.v[v.n - 1];
        }
        r->hi = x->addr;
        r->count++;
        if (x->index < r->first_index) r->first_index = x->index;
        if (r->trace_id != a->trace_id) r->trace_id = -1;
    }
    *out = v.v;
    *n = v.n;
    return 0;
}
