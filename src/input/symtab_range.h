/* Symbol lookups with the range of addresses that give the same answer (for callers that
 * remember answers by range: the session's resolver). */
#ifndef ETMKIT_INPUT_SYMTAB_RANGE_H
#define ETMKIT_INPUT_SYMTAB_RANGE_H

#include <stdint.h>

#include "etmkit/symbols.h"

/* ek_symtab_find, and [*lo, *hi): the addresses with the same answer (NULL included: the gap
 * between the symbols around addr); an empty range when not known. Not thread-safe. */
const ek_symbol *ek_symtab_find_range(ek_symtab *t, uint64_t addr, uint64_t *lo, uint64_t *hi);

#endif
