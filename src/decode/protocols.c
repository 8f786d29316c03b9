/* The protocols the decode tree knows: one operations table each (etmkit/decode.h). A new
 * protocol adds its table here. */
#include "decode/decode_int.h"

static const ek_decode_proto *const builtin[] = {
    &ek_decode_proto_etm4, &ek_decode_proto_ptm, &ek_decode_proto_etm3,
    &ek_decode_proto_stm,  &ek_decode_proto_itm,
};

const ek_decode_proto *ek_decode_proto_find(ek_protocol p)
{
    if ((unsigned)p >= 32) return NULL;
    for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++)
        if (builtin[i]->protocols & (1u << p)) return builtin[i];
    return NULL;
}
