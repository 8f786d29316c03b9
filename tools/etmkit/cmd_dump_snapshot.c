/* etmkit dump SNAPSHOT_DIR: list the packets of a trace snapshot.
 *
 * The library lists it (ek_snapshot_list, etmkit/listing.h: trc_pkt_lister's decode tree,
 * banners and statistics); this file parses the arguments, opens the snapshot, drives the
 * listing to stdout and reports problems and the exit status. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_bare.h"
#include "cli_progress.h"
#include "etmkit/image.h"
#include "etmkit/listing.h"
#include "etmkit/snapshot.h"

typedef struct dump_opts {
    ek_snapshot_list_opts lo; /* what to list, as the options say */
    ek_image_spec *images;    /* --image */
    size_t nimages;
    int verbose, strict, quiet;
    const char *dir;
    cli_bare bare; /* --trace FILE and its configuration */
} dump_opts;

typedef struct dump_ctx {
    dump_opts o;
    ek_diag_collector *diags;
    ek_diag diag; /* filtered sink in front of 'all' */
    ek_diag all;  /* the collector */
    ek_sbuf first_error; /* the message of the first error reported (the cause, when the
                            snapshot cannot be opened) */
} dump_ctx;

/* Diagnostics below warning level are kept only with --verbose. */
static void diag_filter(void *ctx, const ek_diag_event *ev)
{
    dump_ctx *c = ctx;
    if (ev->sev >= EK_SEV_ERROR && !c->first_error.len && ev->msg)
        ek_sbuf_puts(&c->first_error, ev->msg);
    if (ev->sev >= EK_SEV_WARN || c->o.verbose) c->all.fn(c->all.ctx, ev);
}

static void usage(FILE *f)
{
    fputs("usage: etmkit dump [options] SNAPSHOT_DIR\n"
          "       etmkit dump [options] --trace FILE --framing=F (--protocol=P --reg NAME=VALUE..\n"
          "                   --trace-id=ID --arch=CORE | --config-from=SNAPSHOT_DIR[:DEVICE])..\n"
          "\n"
          "List the trace packets of a trace snapshot folder (snapshot.ini, trace.ini, buffers),\n"
          "or of a bare trace file described by options (what a snapshot's ini files would say).\n"
          "\n"
          "output:\n"
          "  --format=text      etmkit's readable listing (default)\n"
          "  --format=ocsd      lines as OpenCSD's trc_pkt_lister prints them\n"
          "  --format=json      one JSON object per packet\n"
          "  --stats            per-source byte / packet / error counts at the end (with\n"
          "                     --decode also elements by kind, instructions, decode errors)\n"
          "  -v, --verbose      every diagnostic on stderr as it happens, notes included\n"
          "  --strict           exit 1 when any problem (warning or worse) was reported\n"
          "  -q, --quiet        no progress line on stderr (shown on a terminal when the run\n"
          "                     takes more than a second and the listing goes elsewhere)\n"
          "\n"
          "what to list (trc_pkt_lister equivalents in brackets):\n"
          "  --pkt-mon          packets with their raw bytes, as a packet monitor sees them\n"
          "                     [-pkt_mon]; without it or --decode, packets are listed as a\n"
          "                     packet sink sees them (no raw bytes, one I_NOT_SYNC)\n"
          "  --decode           packets with raw bytes, plus the instruction-flow elements\n"
          "                     decoded with the snapshot's memory dumps [-decode]\n"
          "  --decode-only      elements only, no packets [-decode_only]\n"
          "  --src-addr-n       ETE: split source address ranges on N atoms [-src_addr_n]\n"
          "  --image FILE@ADDR  code for --decode the memory dumps lack, laid over them\n"
          "                     (repeatable): an ELF file's executable segments, placed so\n"
          "                     that its lowest PT_LOAD segment starts at ADDR (ELF without\n"
          "                     @ADDR: at its link addresses); any other file: its raw bytes\n"
          "                     at ADDR. The same as a [dumpN] section in the core's ini file\n"
          "  --multi-session    decode every buffer in turn, decoders reset in between\n"
          "                     [-multi_session]; default: the first buffer only\n"
          "  --itm-sync=MODE    ITM sources: 'assume' decodes from the first byte as if a\n"
          "                     sync packet preceded it (streams without sync packets, as\n"
          "                     orbuculum does); 'wait' lists bytes before the first sync\n"
          "                     as ITM_NOTSYNC (OpenCSD). Default: wait with --format=ocsd,\n"
          "                     else assume\n"
          "\n"
          "a bare trace file (docs/DUMP.md):\n"
          "  --trace FILE       the trace: a probe's capture, ETB/ETR memory, one source's bytes\n"
          "  --framing=F        raw (one source, unframed), frames (16-byte CoreSight\n"
          "                     formatter frames), tpiu (frames with FSYNCs), tpiu-hsync (and\n"
          "                     HSYNCs), dstream (DSTREAM records); default: the format of the\n"
          "                     --config-from device's buffer\n"
          "  --protocol=P       a trace source: etm4, ete, etm3, ptm, stm or itm; the options\n"
          "                     below describe the last source named (repeat for several)\n"
          "  --reg NAME=VALUE   one of its registers, named as in a device file's [regs]:\n"
          "                     TRCCONFIGR, TRCIDR0.., ETMCR, ETMIDR, ETMCCER, STMTCSR, ITMTCR\n"
          "  --trace-id=ID      its trace ID (over the ID register's)\n"
          "  --arch=CORE        the core it traces: Cortex-A53, Cortex-M4, ARMv8-A, ARM-AA64..\n"
          "  --config-from=SNAPSHOT_DIR[:DEVICE]\n"
          "                     a source as another snapshot's device file describes it\n"
          "                     (type, registers, its core); without DEVICE every source of\n"
          "                     that snapshot's first buffer; or =DEVICE.ini: a trace\n"
          "                     source's device file alone (its core: --arch)\n"
          "\n"
          "frame formats:\n"
          "  --dstream          buffer is a DSTREAM capture: 504 data + 8 footer bytes\n"
          "                     [-dstream_format]\n"
          "  --tpiu             frames are synchronised by FSYNC patterns [-tpiu]\n"
          "  --tpiu-hsync       ... and carry HSYNC patterns [-tpiu_hsync]\n"
          "  --raw-packed       print raw formatter frames [-o_raw_packed]\n"
          "  --raw-unpacked     print de-formatted bytes per trace ID [-o_raw_unpacked]\n"
          "\n"
          "ETMv4, ETMv4-M, ETE, PTM, ETMv3, STM and ITM sources are decoded. --format=ocsd\n"
          "follows OpenCSD 1.8.0 where it departs from the architecture (fatal stops\n"
          "included); the other formats follow the architecture.\n"
          "Exit status: 0 when some buffer was decoded (damage is reported, not fatal), 1 when\n"
          "nothing was (or --strict and a problem) or the listing cannot be written, 2 on\n"
          "usage errors.\n",
          f);
}

static int parse_args(dump_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    ek_snapshot_list_opts_init(&o->lo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int br = cli_bare_arg(&o->bare, "dump", argc, argv, &i);
        if (br > 0) return br;
        if (br < 0) continue;
        if (a[0] != '-') {
            if (o->dir) {
                cli_err("dump: more than one input (%s, %s)", o->dir, a);
                return CLI_USAGE;
            }
            o->dir = a;
            continue;
        }
        const char *fmt = NULL;
        if (!strncmp(a, "--format=", 9))
            fmt = a + 9;
        else if (!strcmp(a, "--format") && i + 1 < argc)
            fmt = argv[++i];
        if (fmt) {
            if (!strcmp(fmt, "ocsd"))
                o->lo.format = EK_LISTING_OCSD;
            else if (!strcmp(fmt, "text"))
                o->lo.format = EK_LISTING_TEXT;
            else if (!strcmp(fmt, "json"))
                o->lo.format = EK_LISTING_JSON;
            else {
                cli_err("dump: unknown format '%s' (ocsd, text or json)", fmt);
                return CLI_USAGE;
            }
            continue;
        }
        const char *sync = NULL;
        if (!strncmp(a, "--itm-sync=", 11))
            sync = a + 11;
        else if (!strcmp(a, "--itm-sync") && i + 1 < argc)
            sync = argv[++i];
        if (sync) {
            if (!strcmp(sync, "wait"))
                o->lo.itm_sync = EK_LIST_ITM_SYNC_WAIT;
            else if (!strcmp(sync, "assume"))
                o->lo.itm_sync = EK_LIST_ITM_SYNC_ASSUME;
            else {
                cli_err("dump: unknown --itm-sync '%s' (wait or assume)", sync);
                return CLI_USAGE;
            }
            continue;
        }
        const char *img = NULL;
        if (!strncmp(a, "--image=", 8))
            img = a + 8;
        else if (!strcmp(a, "--image") && i + 1 < argc)
            img = argv[++i];
        if (img) {
            int r = cli_image_arg("dump", img, &o->images, &o->nimages);
            if (r >= 0) return r;
            continue;
        }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return -1;
        }
#define FLAG(s, field)                                                                             \
    if (!strcmp(a, s)) {                                                                           \
        o->field = 1;                                                                              \
        continue;                                                                                  \
    }
        FLAG("--pkt-mon", lo.pkt_mon)
        FLAG("--decode", lo.decode)
        FLAG("--decode-only", lo.decode_only)
        FLAG("--multi-session", lo.multi_session)
        FLAG("--src-addr-n", lo.src_addr_n)
        FLAG("--stats", lo.stats)
        FLAG("--verbose", verbose)
        FLAG("-v", verbose)
        FLAG("--strict", strict)
        FLAG("-q", quiet)
        FLAG("--quiet", quiet)
        FLAG("--dstream", lo.dstream)
        FLAG("--tpiu", lo.tpiu)
        FLAG("--tpiu-hsync", lo.tpiu_hsync)
        FLAG("--raw-packed", lo.raw_packed)
        FLAG("--raw-unpacked", lo.raw_unpacked)
#undef FLAG
        cli_err("dump: unknown option '%s' (see etmkit dump --help)", a);
        return CLI_USAGE;
    }
    if (cli_bare_given(&o->bare) && o->dir && !o->bare.trace) {
        cli_err("dump: %s describes a bare trace file: give the file with --trace %s",
                o->bare.first_opt, o->dir);
        return CLI_USAGE;
    }
    if (cli_bare_given(&o->bare) && o->dir) {
        cli_err("dump: give one input: --trace %s or %s", o->bare.trace ? o->bare.trace : "FILE",
                o->dir);
        return CLI_USAGE;
    }
    if (!o->dir && !cli_bare_given(&o->bare)) {
        usage(stderr);
        return CLI_USAGE;
    }
    return 0;
}

int cmd_dump_snapshot(int argc, char **argv)
{
    dump_ctx ctx;
    dump_ctx *c = &ctx;
    memset(c, 0, sizeof *c);
    int rc = parse_args(&c->o, argc, argv);
    if (rc) {
        cli_images_free(c->o.images, c->o.nimages);
        cli_bare_free(&c->o.bare);
        return rc < 0 ? CLI_OK : rc;
    }

    c->diags = ek_diag_collector_new(4);
    if (!c->diags) {
        cli_err("out of memory");
        return CLI_FAIL;
    }
    c->all = ek_diag_collector_sink(c->diags);
    c->diag.fn = diag_filter;
    c->diag.ctx = c;
    if (c->o.verbose) {
        ek_diag err = cli_diag_stderr();
        ek_diag_collector_forward(c->diags, &err);
    }

    int status = CLI_FAIL;
    ek_snapshot *ss = NULL;
    if (cli_bare_given(&c->o.bare)) {
        rc = cli_bare_open(&c->o.bare, "dump", &c->diag, &c->o.lo.tpiu, &c->o.lo.tpiu_hsync,
                           &c->o.lo.dstream, &ss);
        if (rc) {
            ek_diag_collector_free(c->diags);
            ek_sbuf_free(&c->first_error);
            cli_images_free(c->o.images, c->o.nimages);
            cli_bare_free(&c->o.bare);
            return rc;
        }
        c->o.dir = c->o.bare.trace;
    } else
        rc = ek_snapshot_open(c->o.dir, &c->diag, &ss);
    if (rc || !ss) {
        /* what the reader said, with its files and lines (as script says it; with --verbose
         * every event was printed as it came), else the status */
        if (!c->o.verbose && ek_diag_collector_count(c->diags, EK_SEV_WARN))
            cli_print_diag_summary(c->diags, 0);
        if (!c->first_error.len)
            cli_err("%s: not a usable trace snapshot (%s)", c->o.dir, ek_strerror(rc));
        ek_diag_collector_free(c->diags);
        ek_sbuf_free(&c->first_error);
        cli_images_free(c->o.images, c->o.nimages);
        return CLI_FAIL;
    }
    if (!ss->nbuffers) {
        cli_err("%s: the snapshot names no trace buffer", c->o.dir);
        goto out;
    }

    ek_snapshot_list_opts lo = c->o.lo;
    lo.path = c->o.dir;
    lo.write = cli_stdout_write; /* the listing's text, straight to stdout */
    lo.diag = &c->diag;
    lo.images = c->o.images;
    lo.nimages = c->o.nimages;
    cli_progress pr;
    cli_progress_start(&pr, "dump", c->o.quiet, 1);
    lo.progress = cli_progress_update;
    lo.progress_ctx = &pr;
    rc = ek_snapshot_list(ss, &lo);
    cli_progress_end(&pr);
    if (rc == EK_ERR_IO && cli_stdout_failed()) {
        /* writing the listing failed: said below, against standard output */
    } else if (rc == EK_ERR_UNSUPPORTED)
        cli_err("%s: buffer %s has no source of a protocol etmkit decodes", c->o.dir,
                ss->buffers[ss->buffer_order ? ss->buffer_order[0] : 0].name);
    else if (rc < 0 && c->first_error.len && c->o.nimages)
        cli_err("%s", c->first_error.p);
    else if (rc < 0)
        cli_err("%s", ek_strerror(rc));
    status = rc > 0 ? CLI_OK : CLI_FAIL;
    if (c->o.strict && ek_diag_collector_count(c->diags, EK_SEV_WARN)) status = CLI_FAIL;

out:
    if (cli_stdout_check("dump")) status = CLI_FAIL;
    /* with --verbose every event was printed as it came */
    if (!c->o.verbose && ek_diag_collector_count(c->diags, EK_SEV_WARN))
        cli_print_diag_summary(c->diags, 0);
    ek_snapshot_free(ss);
    ek_diag_collector_free(c->diags);
    ek_sbuf_free(&c->first_error);
    cli_images_free(c->o.images, c->o.nimages);
    cli_bare_free(&c->o.bare);
    return status;
}
