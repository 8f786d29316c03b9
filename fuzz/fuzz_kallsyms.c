/* Fuzz target: the /proc/kallsyms parser and the symbol table built from it. */
#include <stdlib.h>

#include "etmkit/symbols.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_symtab *t = NULL;
    if (ek_symtab_parse_kallsyms((const char *)data, size, "kallsyms", &fd.sink, &t) == 0 && t) {
        size_t n = ek_symtab_count(t);
        ek_sbuf sb = {0};
        for (size_t i = 0; i < n; i++) {
            const ek_symbol *s = ek_symtab_get(t, i);
            FUZZ_CHECK(!(!s || !s->name),
                       "not (!s || !s->name)");
            const ek_symbol *f = ek_symtab_find(t, s->start);
            ek_symtab_format(&sb, f, s->start, 1);
            if (s->end > s->start)
                ek_symtab_find(t, s->end - 1);
            ek_sbuf_reset(&sb);
        }
        ek_symtab_find(t, 0);
        ek_symtab_find(t, UINT64_MAX);
        ek_sbuf_free(&sb);
        ek_symtab_free(t);
    }
    fuzz_diag_end(&fd);
    return 0;
}
