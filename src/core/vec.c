#include "core/vec.h"
#include "etmkit/etmkit.h"

int ek_vec_reserve_raw(void **v, size_t *cap, size_t need, size_t elsize)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return EK_ERR_NOMEM;
        ncap *= 2;
    }
    if (elsize && ncap > SIZE_MAX / elsize)
        return EK_ERR_NOMEM;
    void *nv = realloc(*v, ncap * elsize);
    if (!nv)
        return EK_ERR_NOMEM;
    *v = nv;
    *cap = ncap;
    return 0;
}
