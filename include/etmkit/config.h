/* Typed trace-source configuration, shared by the snapshot reader, the perf.data reader and
 * the simulator. Register values are kept as the hardware reports them; decoders derive the
 * features they need from them (see etmkit/etm4.h for ETMv4/ETE). */
#ifndef ETMKIT_CONFIG_H
#define ETMKIT_CONFIG_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default) /* the API: all libetmkit.so exports */

typedef enum ek_protocol {
    EK_PROTO_UNKNOWN = 0,
    EK_PROTO_ETMV4,  /* ETMv4.x instruction trace (A/R profile) */
    EK_PROTO_ETMV4M, /* ETMv4 on an M-profile core (Armv8-M / 8.1-M) */
    EK_PROTO_ETE,    /* Embedded Trace Extension (Armv9) */
    EK_PROTO_ETMV3,
    EK_PROTO_PTM,
    EK_PROTO_STM,
    EK_PROTO_ITM,
} ek_protocol;

/* Short names: "ETMv4", "ETE", "PTM" ...; "v8-A", "v9-A" ... ("unknown" otherwise, never
 * NULL). */
const char *ek_protocol_name(ek_protocol p);

/* Architecture of the traced core: decides which instruction encodings exist. */
typedef enum ek_arch {
    EK_ARCH_UNKNOWN = 0,
    EK_ARCH_V7A,
    EK_ARCH_V7R,
    EK_ARCH_V7M,
    EK_ARCH_V8A,   /* Armv8.0-A .. 8.2-A */
    EK_ARCH_V8_3A, /* Armv8.3-A and later 8.x: pointer authentication */
    EK_ARCH_V8R,
    EK_ARCH_V8M,   /* Armv8-M baseline/mainline */
    EK_ARCH_V8_1M, /* Armv8.1-M (low-overhead branches, BF*) */
    EK_ARCH_V9A,   /* Armv9-A and later (ETE systems) */
} ek_arch;
const char *ek_arch_name(ek_arch a);

typedef enum ek_arch_profile {
    EK_PROFILE_UNKNOWN = 0,
    EK_PROFILE_A,
    EK_PROFILE_R,
    EK_PROFILE_M,
} ek_arch_profile;

typedef struct ek_etm4_regs {
    uint32_t configr;    /* TRCCONFIGR */
    uint32_t traceidr;   /* TRCTRACEIDR */
    uint32_t authstatus; /* TRCAUTHSTATUS */
    uint32_t devarch;    /* TRCDEVARCH (ETE) */
    uint32_t idr[14];    /* TRCIDR0 .. TRCIDR13 */
    uint32_t present;    /* bit i: idr[i] was given; bits 16.. see EK_ETM4_HAVE_* */
} ek_etm4_regs;

#define EK_ETM4_HAVE_CONFIGR    (1u << 16)
#define EK_ETM4_HAVE_TRACEIDR   (1u << 17)
#define EK_ETM4_HAVE_AUTHSTATUS (1u << 18)
#define EK_ETM4_HAVE_DEVARCH    (1u << 19)

typedef struct ek_etm3_regs {
    uint32_t etmcr, etmidr, etmccer, etmtraceidr;
} ek_etm3_regs;

typedef struct ek_source_config {
    ek_protocol protocol;
    uint8_t trace_id;         /* CoreSight trace ID (7 bits) */
    ek_arch arch;             /* of the core this source traces (UNKNOWN if none) */
    ek_arch_profile profile;
    union {
        ek_etm4_regs etm4;    /* ETMV4, ETMV4M, ETE */
        ek_etm3_regs etm3;    /* ETMV3, PTM */
        uint32_t tcr;         /* STM STMTCSR / ITM ITMTCR */
    } regs;
    uint32_t flags;           /* EK_SRC_*: how to decode it (0: as OpenCSD does) */
} ek_source_config;

/* ek_source_config.flags
 *  ITM_ASSUME_SYNC  ITM: decode from the first byte as if an A-Sync preceded it (streams
 *                   without sync packets, as orbuculum assumes); EK_ITM_ASSUME_SYNC of
 *                   etmkit/low/itm.h. Without it nothing is decoded before the first A-Sync. */
#define EK_SRC_ITM_ASSUME_SYNC 0x0001u

/* Memory spaces: which exception level / security state an image or a trace address is in.
 * A bit set: EK_MS_ANY matches everything. */
typedef enum ek_mem_space {
    EK_MS_NONE = 0,
    EK_MS_EL1S = 0x1,
    EK_MS_EL1N = 0x2,
    EK_MS_EL2 = 0x4,  /* EL2 non-secure */
    EK_MS_EL3 = 0x8,
    EK_MS_EL2S = 0x10,
    EK_MS_EL1R = 0x20, /* realm */
    EK_MS_EL2R = 0x40,
    EK_MS_ROOT = 0x80,
    EK_MS_S = EK_MS_EL1S | EK_MS_EL2S | EK_MS_EL3,
    EK_MS_N = EK_MS_EL1N | EK_MS_EL2,
    EK_MS_R = EK_MS_EL1R | EK_MS_EL2R,
    EK_MS_ANY = 0xff,
} ek_mem_space;

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif
#endif
