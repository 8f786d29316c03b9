#include "etmkit/etmkit.h"

const char *ek_strerror(int status)
{
    switch (status) {
    case EK_OK: return "success";
    case EK_ERR_NOMEM: return "out of memory";
    case EK_ERR_IO: return "input/output error";
    case EK_ERR_FORMAT: return "malformed input";
    case EK_ERR_TRUNCATED: return "input truncated";
    case EK_ERR_UNSUPPORTED: return "unsupported input";
    case EK_ERR_ARG: return "invalid argument";
    case EK_ERR_NOT_FOUND: return "not found";
    case EK_ERR_RANGE: return "value out of range";
    case EK_ERR_NOSYNC: return "trace not synchronised";
    case EK_ERR_BAD_PACKET: return "bad trace packet";
    case EK_ERR_NO_MEMORY_IMAGE: return "no memory image at address";
    case EK_ERR_LIMIT: return "safety limit reached";
    case EK_ERR_EOS: return "end of stream";
    }
    return "unknown error";
}

const char *ek_version(void)
{
    return ETMKIT_VERSION_STRING;
}
