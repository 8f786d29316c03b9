/* A program built against an installed etmkit (tests/scripts/install.sh): prints the library
 * version, then lists the packets of the first trace source of a snapshot folder through the
 * public API, in the lines `etmkit dump --format=text` prints. Only <etmkit/...> headers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <etmkit/etm4.h>
#include <etmkit/low/etm4.h> /* the packet parser: bit level */
#include <etmkit/etmkit.h>
#include <etmkit/listing.h>
#include <etmkit/sbuf.h>
#include <etmkit/snapshot.h>

static void print_diag(void *ctx, const ek_diag_event *ev)
{
    (void)ctx;
    if (ev->sev < EK_SEV_WARN) return;
    fprintf(stderr, "list_packets: %s\n", ev->msg);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: list_packets SNAPSHOT_DIR\n");
        return 2;
    }
    printf("etmkit %s\n", ek_version());
    if (strcmp(ek_version(), ETMKIT_VERSION_STRING) != 0) {
        fprintf(stderr, "list_packets: library %s, header %s\n", ek_version(),
                ETMKIT_VERSION_STRING);
        return 1;
    }

    ek_diag diag = {print_diag, NULL};
    ek_snapshot *ss = NULL;
    int rc = ek_snapshot_open(argv[1], &diag, &ss);
    if (rc < 0) {
        fprintf(stderr, "list_packets: %s: %s\n", argv[1], ek_strerror(rc));
        return 1;
    }
    if (ss->nsources == 0 || ss->sources[0].buffer < 0) {
        fprintf(stderr, "list_packets: %s: no trace source with a buffer\n", argv[1]);
        ek_snapshot_free(ss);
        return 1;
    }
    const ek_snap_source *src = &ss->sources[0];
    const ek_snap_buffer *buf = &ss->buffers[src->buffer];

    /* the whole buffer file (a few bytes here) */
    FILE *f = buf->path ? fopen(buf->path, "rb") : NULL;
    uint8_t *data = f ? malloc(buf->file_size ? buf->file_size : 1) : NULL;
    size_t len = data ? fread(data, 1, buf->file_size, f) : 0;
    if (f) fclose(f);
    if (!data || len != buf->file_size) {
        fprintf(stderr, "list_packets: cannot read the trace buffer\n");
        free(data);
        ek_snapshot_free(ss);
        return 1;
    }

    ek_etm4_config cfg;
    rc = ek_etm4_config_from_source(&cfg, &src->cfg);
    if (rc < 0) {
        fprintf(stderr, "list_packets: source configuration: %s\n", ek_strerror(rc));
        free(data);
        ek_snapshot_free(ss);
        return 1;
    }
    ek_etm4_parser parser;
    ek_etm4_parser_init(&parser, &cfg);
    ek_sbuf out = EK_SBUF_INIT;
    const ek_etm4_packet *pkt;
    ek_etm4_feed(&parser, data, len, 0);
    while (ek_etm4_next(&parser, &pkt) > 0)
        ek_list_etm4_text(&out, pkt, cfg.trace_id, &cfg);
    ek_etm4_eot(&parser);
    while (ek_etm4_next(&parser, &pkt) > 0)
        ek_list_etm4_text(&out, pkt, cfg.trace_id, &cfg);
    if (out.len) fwrite(out.p, 1, out.len, stdout);

    ek_sbuf_free(&out);
    free(data);
    ek_snapshot_free(ss);
    return 0;
}
