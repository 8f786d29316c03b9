/* Fuzz target: the flame graph (src/output/flame_svg.c): folded stacks in, an SVG out. The
 * input is the folded text; its length's parity picks the siblings' order. Invariants: the
 * status is 0 or EK_ERR_FORMAT (nothing written, no line used, some bad), the stats add up, and
 * the document is valid UTF-8 without characters XML refuses, ending in "</svg>\n". */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "etmkit/etmkit.h"
#include "etmkit/flame.h"

/* 1 when s is UTF-8 XML may hold as text: no control character but tab and line end, no
 * surrogate, no U+FFFE or U+FFFF, nothing beyond U+10FFFF, nothing overlong. */
static int xml_utf8(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c < 0x80) {
            if (c < 0x20 && c != '\n' && c != '\t') return 0;
            i++;
            continue;
        }
        unsigned len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
        if (!len || c > 0xf4 || i + len > n) return 0;
        unsigned long cp = c & (0x3fu >> (len - 1));
        for (unsigned k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i + k] & 0x3f);
        }
        static const unsigned long min[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
            cp == 0xffff)
            return 0;
        i += len;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ek_flame_opts o = EK_FLAME_OPTS_INIT;
    o.order = size & 1 ? EK_FLAME_BY_WEIGHT : EK_FLAME_BY_NAME;
    o.title = "fuzz";
    ek_sbuf out = EK_SBUF_INIT;
    ek_flame_stats st;
    int rc = ek_flame_svg((const char *)data, size, &o, &out, &st);
    FUZZ_CHECK(rc == 0 || rc == EK_ERR_FORMAT || rc == EK_ERR_NOMEM, "an unexpected status");
    FUZZ_CHECK(st.stacks + st.bad_lines <= st.lines, "more lines used and bad than read");
    FUZZ_CHECK(!st.bad_lines == !st.first_bad_line && st.first_bad_line <= st.lines,
               "first_bad_line does not go with bad_lines");
    if (rc == EK_ERR_FORMAT) {
        FUZZ_CHECK(out.len == 0, "EK_ERR_FORMAT wrote something");
        FUZZ_CHECK(st.bad_lines && !st.stacks, "EK_ERR_FORMAT with a line used or none bad");
    } else if (rc == 0) {
        FUZZ_CHECK(out.len > 7 && !memcmp(out.p + out.len - 7, "</svg>\n", 7),
                   "the document does not end in </svg>");
        FUZZ_CHECK(xml_utf8((const unsigned char *)out.p, out.len),
                   "the document is not UTF-8 that XML may hold");
        FUZZ_CHECK(st.drawn + st.omitted == (st.total ? st.frames : 0),
                   "frames drawn and not drawn do not add up");
        FUZZ_CHECK(st.depth <= EK_FLAME_MAX_DEPTH, "deeper than EK_FLAME_MAX_DEPTH");
    }
    ek_sbuf_free(&out);
    return 0;
}
