/* EK_HOT: a small function on the per-packet or per-sample path that must be inlined into its
 * callers (the compiler's size heuristics otherwise keep some of them as calls, and the calls'
 * register saves cost as much as their bodies). gcc and clang only, as the rest of the tree. */
#ifndef ETMKIT_CORE_HOT_H
#define ETMKIT_CORE_HOT_H

#define EK_HOT static inline __attribute__((always_inline))

#endif
