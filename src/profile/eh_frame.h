/* The FDEs of an .eh_frame section: the address range each one describes (no CFA
 * instructions are read). Internal to the profile module (BOLT's functions from FDEs). */
#ifndef ETMKIT_PROFILE_EH_FRAME_H
#define ETMKIT_PROFILE_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

typedef struct ek_eh_frame_stats {
    size_t cies;        /* CIEs read */
    size_t fdes;        /* FDEs handed to the callback */
    size_t unsupported; /* FDEs skipped: a pointer encoding or augmentation not read here */
    size_t bad;         /* FDEs skipped: a CIE pointer to no readable CIE, a field past the entry */
    int truncated;      /* the walk stopped early: an entry's length runs past the section */
} ek_eh_frame_stats;

/* Called once per FDE, in section order: pc_begin and pc_range. A non-zero return stops the
 * walk and is returned. */
typedef int (*ek_eh_frame_fn)(void *ctx, uint64_t start, uint64_t size);

/* Walk .eh_frame bytes (sec_addr: the section's address, for pc-relative pointers;
 * addr_size 4 or 8: absptr's size and the width addresses wrap at; big: big-endian).
 * Reads every field within the section and its entry, allocates nothing, and stops at a
 * zero terminator or the section's end. Unsupported or damaged FDEs are skipped and counted
 * in st (may be NULL). Returns 0 (damage included: st says), or fn's return. */
int ek_eh_frame_walk(const uint8_t *data, size_t size, uint64_t sec_addr, unsigned addr_size,
                     int big, ek_eh_frame_fn fn, void *ctx, ek_eh_frame_stats *st);

#endif
