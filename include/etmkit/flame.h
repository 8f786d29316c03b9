/* Flame graphs: folded stacks in, one self-contained interactive SVG out (docs/FLAMEGRAPH.md).
 *
 * Folded stacks (Brendan Gregg's format, `etmkit export --format=folded`): one line per stack,
 * the frames outermost first, separated by ';', then a blank and the count (here: instructions
 * executed), e.g.
 *
 *     main;parse;strtoul 1200
 *
 * A frame name may hold blanks (the count is after the last one) but neither ';' nor a line
 * end. Lines of the same stack add up. The picture has a root frame "all" (the total) at the
 * bottom, each frame above its caller, as wide as its count; siblings left to right in byte
 * order of their names (flamegraph.pl's order) or heaviest first (EK_FLAME_BY_WEIGHT).
 *
 * Wiring it to a command is one call:
 *
 *     ek_flame_opts o = EK_FLAME_OPTS_INIT;
 *     o.title = "perf.data";
 *     o.subtitle = "instructions executed, 12345 samples";
 *     ek_flame_stats st;
 *     int rc = ek_flame_svg(folded.p, folded.len, &o, &svg, &st);   // svg: an ek_sbuf
 *     // rc 0: write svg (st.bad_lines lines were skipped, the first at line st.first_bad_line)
 *
 * The SVG needs nothing else (inline style and script, no fonts, no URLs); with its script
 * it shows a frame's name, count and share on hover, zooms into a frame on click, searches
 * (regular expression) and shows the matched share; without it (as an <img>) it is a picture.
 */
#ifndef ETMKIT_FLAME_H
#define ETMKIT_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

/* Siblings' order, left to right. */
#define EK_FLAME_BY_NAME   0 /* byte order of the names (as flamegraph.pl) */
#define EK_FLAME_BY_WEIGHT 1 /* largest count first, equal counts by name */

/* The deepest stack drawn (frames, "all" not counted): a deeper line is skipped as bad. */
#define EK_FLAME_MAX_DEPTH 1024

typedef struct ek_flame_opts {
    const char *title;    /* UTF-8; NULL: "Flame Graph" */
    const char *subtitle; /* UTF-8; NULL or "": none */
    const char *unit;     /* what a count counts (plural); NULL: "instructions" */
    unsigned width;       /* of the picture, pixels; 0: 1200 */
    double min_width;     /* frames narrower (pixels) are not drawn (but counted); 0: 0.1 */
    int order;            /* EK_FLAME_BY_NAME or EK_FLAME_BY_WEIGHT */
} ek_flame_opts;

#define EK_FLAME_OPTS_INIT                                                                         \
    {                                                                                              \
        NULL, NULL, NULL, 0, 0.0, EK_FLAME_BY_NAME                                                 \
    }

typedef struct ek_flame_stats {
    uint64_t lines;          /* lines read (blank ones included) */
    uint64_t stacks;         /* lines used */
    uint64_t bad_lines;      /* lines skipped: no count, a bad count, an empty frame, too deep,
                                or a count the total (uint64_t) cannot hold */
    uint64_t first_bad_line; /* its number (from 1), 0 when none */
    uint64_t total;          /* the sum of the counts used */
    uint64_t frames;         /* frames of the merged tree, "all" included */
    uint64_t drawn;          /* frames drawn */
    uint64_t omitted;        /* frames not drawn: narrower than min_width (or under one) */
    uint32_t depth;          /* the deepest stack used, frames */
} ek_flame_stats;

/* Renders folded stacks (len bytes, need not end in NUL or a line end) as an SVG document
 * appended to out. Bad lines are skipped and counted (stats). Returns 0 (an empty input, or
 * only blank lines, gives a picture that says so), EK_ERR_FORMAT when there were lines but
 * none could be used (nothing appended), EK_ERR_ARG, or EK_ERR_NOMEM. stats may be NULL. */
int ek_flame_svg(const char *folded, size_t len, const ek_flame_opts *o, ek_sbuf *out,
                 ek_flame_stats *stats);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
