/* What account_text.c and account_json.c share. Private to src/output. */
#ifndef ETMKIT_OUTPUT_ACCOUNT_INT_H
#define ETMKIT_OUTPUT_ACCOUNT_INT_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of a recorded build-id to show. A record without its size (no
 * PERF_RECORD_MISC_BUILD_ID_SIZE: older perf) holds 20 bytes, a shorter id (8 with lld's
 * --build-id=fast, 16 for md5 or uuid) padded with zeros; such ids come as 20 bytes, and their
 * zero 4-byte words at the end are padding (build-ids are whole words; a SHA-1 ends in a zero
 * word once in 2^32). Any other length is the recorded size: every byte, a last zero byte too
 * (one id in 256 has one). */
static inline size_t account_id_len(const uint8_t *id, size_t len)
{
    if (len != 20) return len;
    while (len >= 4 && !(id[len - 1] | id[len - 2] | id[len - 3] | id[len - 4]))
        len -= 4;
    return len;
}

#endif
