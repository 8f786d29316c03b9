/* ek_flame FOLDED OUT.svg [TITLE [SUBTITLE]] [--by-weight] [--width=N] [--min-width=PX]: the
 * library's flame graph (etmkit/flame.h) of a folded-stacks file, for tests/scripts/flame_svg.sh
 * (until `etmkit export --format=svg` calls it). Prints the stats on stdout, one "name value" a
 * line; exits 0, 1 on an error (said on stderr). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etmkit/etmkit.h"
#include "etmkit/flame.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char *p = malloc(cap);
    for (size_t got; p && (got = fread(p + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            char *q = realloc(p, cap *= 2);
            if (!q) free(p);
            p = q;
        }
    }
    if (ferror(f)) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = n;
    return p;
}

int main(int argc, char **argv)
{
    ek_flame_opts o = EK_FLAME_OPTS_INIT;
    const char *pos[4] = {0};
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--by-weight"))
            o.order = EK_FLAME_BY_WEIGHT;
        else if (!strncmp(argv[i], "--width=", 8))
            o.width = (unsigned)strtoul(argv[i] + 8, NULL, 10);
        else if (!strncmp(argv[i], "--min-width=", 12))
            o.min_width = strtod(argv[i] + 12, NULL);
        else if (npos < 4)
            pos[npos++] = argv[i];
    }
    if (npos < 2) {
        fprintf(stderr, "usage: ek_flame FOLDED OUT.svg [TITLE [SUBTITLE]] [--by-weight] "
                        "[--width=N] [--min-width=PX]\n");
        return 1;
    }
    o.title = pos[2];
    o.subtitle = pos[3];
    size_t len;
    char *in = slurp(pos[0], &len);
    if (!in) {
        fprintf(stderr, "ek_flame: %s: cannot read\n", pos[0]);
        return 1;
    }
    ek_sbuf svg = EK_SBUF_INIT;
    ek_flame_stats st;
    int rc = ek_flame_svg(in, len, &o, &svg, &st);
    free(in);
    printf("lines %" PRIu64 "\nstacks %" PRIu64 "\nbad_lines %" PRIu64 "\nfirst_bad_line %" PRIu64
           "\ntotal %" PRIu64 "\nframes %" PRIu64 "\ndrawn %" PRIu64 "\nomitted %" PRIu64
           "\ndepth %" PRIu32 "\n",
           st.lines, st.stacks, st.bad_lines, st.first_bad_line, st.total, st.frames, st.drawn,
           st.omitted, st.depth);
    if (rc) {
        fprintf(stderr, "ek_flame: %s: %s\n", pos[0], ek_strerror(rc));
        ek_sbuf_free(&svg);
        return 1;
    }
    FILE *f = fopen(pos[1], "wb");
    if (!f || fwrite(svg.p, 1, svg.len, f) != svg.len || fclose(f)) {
        fprintf(stderr, "ek_flame: %s: cannot write\n", pos[1]);
        ek_sbuf_free(&svg);
        return 1;
    }
    ek_sbuf_free(&svg);
    return 0;
}
