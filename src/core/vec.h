/* Growable arrays with overflow-checked growth.
 *   EK_VEC(int) v = {0};
 *   if (ek_vec_push(&v, 42)) -> EK_ERR_NOMEM
 *   ek_vec_free(&v);
 */
#ifndef ETMKIT_CORE_VEC_H
#define ETMKIT_CORE_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#define EK_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

/* Make room for 'need' elements in total. Returns 0 or EK_ERR_NOMEM (-1). */
int ek_vec_reserve_raw(void **v, size_t *cap, size_t need, size_t elsize);

#define ek_vec_reserve(vec, need)                                                                  \
    ek_vec_reserve_raw((void **)&(vec)->v, &(vec)->cap, (need), sizeof(*(vec)->v))
/* the common case (room left) without a call */
#define ek_vec_push(vec, val)                                                                      \
    (((vec)->n < (vec)->cap || !ek_vec_reserve((vec), (vec)->n + 1))                               \
         ? ((vec)->v[(vec)->n++] = (val), 0)                                                       \
         : -1)
#define ek_vec_free(vec)                                                                           \
    do {                                                                                           \
        free((vec)->v);                                                                            \
        (vec)->v = NULL;                                                                           \
        (vec)->n = (vec)->cap = 0;                                                                 \
    } while (0)

#endif
