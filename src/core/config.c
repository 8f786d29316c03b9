/* Names of the core enums of etmkit/config.h: one copy for every module that prints them. */
#include "etmkit/config.h"

const char *ek_protocol_name(ek_protocol p)
{
    switch (p) {
    case EK_PROTO_ETMV4: return "ETMv4";
    case EK_PROTO_ETMV4M: return "ETMv4-M";
    case EK_PROTO_ETE: return "ETE";
    case EK_PROTO_ETMV3: return "ETMv3";
    case EK_PROTO_PTM: return "PTM";
    case EK_PROTO_STM: return "STM";
    case EK_PROTO_ITM: return "ITM";
    default: return "unknown";
    }
}

const char *ek_arch_name(ek_arch a)
{
    switch (a) {
    case EK_ARCH_V7A: return "v7-A";
    case EK_ARCH_V7R: return "v7-R";
    case EK_ARCH_V7M: return "v7-M";
    case EK_ARCH_V8A: return "v8-A";
    case EK_ARCH_V8_3A: return "v8.3-A";
    case EK_ARCH_V8R: return "v8-R";
    case EK_ARCH_V8M: return "v8-M";
    case EK_ARCH_V8_1M: return "v8.1-M";
    case EK_ARCH_V9A: return "v9-A";
    default: return "unknown";
    }
}
