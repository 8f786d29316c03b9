/* EK_HOT: a small function on the per-packet or per-sample path that must be inlined into its
 * callers (the compiler's size heuristics otherwise keep some of them as calls, and the calls'
 * register saves cost as much as their bodies). gcc and clang only, as the rest of the tree. */
#ifndef ETMKIT_CORE_HOT_H
#define ETMKIT_CORE_HOT_H

#define EK_HOT static inline __attribute__((always_inline))

/* A fixed-size copy in 16-byte moves. gcc 12's generic x86-64 tuning made `rep movsl` of a
 * 64-byte memcpy to an unaligned destination: the copy of script's remembered head into the
 * output was a fifth of `script`'s CPU time with perf's default fields (docs/PERFORMANCE.md).
 * Its `rep movs` / `rep stos` of aligned structs cost no time worth the change here (an
 * element's 80 bytes in the flow decoder, the profile builder's 48-byte locator answer: 1%
 * and nothing, side by side). Every byte is loaded before any is stored. */
typedef unsigned char ek_v16 __attribute__((vector_size(16), aligned(1), may_alias));

EK_HOT void ek_copy64(void *d, const void *s)
{
    const unsigned char *a = s;
    ek_v16 w = *(const ek_v16 *)a, x = *(const ek_v16 *)(a + 16), y = *(const ek_v16 *)(a + 32),
           z = *(const ek_v16 *)(a + 48);
    unsigned char *b = d;
    *(ek_v16 *)b = w;
    *(ek_v16 *)(b + 16) = x;
    *(ek_v16 *)(b + 32) = y;
    *(ek_v16 *)(b + 48) = z;
}

#endif
