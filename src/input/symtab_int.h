/* Internal: insert a fully described symbol (name/module copied). 'bracket' marks a
 * kallsyms module symbol for perf's fixup_end rule. */
#ifndef ETMKIT_INPUT_SYMTAB_INT_H
#define ETMKIT_INPUT_SYMTAB_INT_H

#include "etmkit/symbols.h"

int ek_symtab_insert_full(ek_symtab *t, const ek_symbol *s, int bracket);

#endif

#ifndef ETMKIT_INPUT_SYMTAB_INT_H2
#define ETMKIT_INPUT_SYMTAB_INT_H2
/* For tests: perf's tree walk on the current tree (bypassing the flattened runs), and a
 * check of the red-black invariants (returns 0 when they hold). */
const ek_symbol *ek_symtab_tree_find(ek_symtab *t, uint64_t addr);
int ek_symtab_check_tree(const ek_symtab *t);
#endif
