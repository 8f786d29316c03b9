/* Internals of the listings shared by their files. */
#ifndef ETMKIT_OUTPUT_LIST_INT_H
#define ETMKIT_OUTPUT_LIST_INT_H

#include "etmkit/listing.h"

/* The formatters by protocol (list_protos.c), for ek_list_proto_find in line. */
extern const ek_list_proto *const ek_list_protos_by_protocol[32];

static inline const ek_list_proto *list_proto(ek_protocol p)
{
    return (unsigned)p < 32 ? ek_list_protos_by_protocol[p] : NULL;
}

#endif
