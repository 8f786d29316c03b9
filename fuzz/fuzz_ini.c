/* Fuzz target: the INI reader (src/input/ini.c) and every lookup on what it returns. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "etmkit/ini.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_diag fd;
    fuzz_diag_begin(&fd);
    ek_ini *ini = NULL;
    if (ek_ini_parse((const char *)data, size, "fuzz.ini", &fd.sink, &ini) == 0 && ini) {
        for (size_t s = 0; s < ini->nsec; s++) {
            const ek_ini_section *sec = &ini->sec[s];
            const ek_ini_section *again = ek_ini_section_find(ini, sec->name);
            FUZZ_CHECK(!(!again),
                       "a section that is there must be found by its own name");
            while (again)
                again = ek_ini_next_section(ini, again);
            for (size_t k = 0; k < sec->nkv; k++) {
                const ek_ini_kv *kv = &sec->kv[k];
                FUZZ_CHECK(!(!kv->key || !kv->key[0] || !kv->value || !ek_ini_find(sec, kv->key)),
                           "not (!kv->key || !kv->key[0] || !kv->value || !ek_ini_find(sec, kv->key))");
                size_t pos = 0;
                while (ek_ini_find_next(sec, kv->key, &pos))
                    ;
                uint64_t v;
                (void)ek_ini_parse_u64(kv->value, &v);
                (void)ek_ini_lookup(ini, sec->name, kv->key);
            }
        }
        ek_ini_free(ini);
    }
    fuzz_diag_end(&fd);
    return 0;
}
