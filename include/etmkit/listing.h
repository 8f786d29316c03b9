/* Packet listings: text renderings of parsed packets and deformatter output.
 * Every function appends to an ek_sbuf; nothing is printed. */
#ifndef ETMKIT_LISTING_H
#define ETMKIT_LISTING_H

#include <stdint.h>

#include "etmkit/etm4.h"
#include "etmkit/frame.h"
#include "etmkit/sbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One OpenCSD trc_pkt_lister packet line, newline included:
 *   with_raw:  "Idx:<dec>; ID:<hex>; [0xNN 0xNN ];\t<NAME> : <description>\n"  (packet monitor)
 *   otherwise: "Idx:<dec>; ID:<hex>;\t<NAME> : <description>\n"               (packet sink)
 * The text matches OpenCSD 1.8.0's EtmV4ITrcPacket::toString(). */
void ek_list_etm4_ocsd(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id, int with_raw,
                       const ek_etm4_config *cfg);

/* Just "<NAME> : <description>" of the line above. */
void ek_list_etm4_ocsd_desc(ek_sbuf *out, const ek_etm4_packet *pkt, const ek_etm4_config *cfg);

/* etmkit's own readable line: index, ID, type, decoded fields, raw bytes. */
void ek_list_etm4_text(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id,
                       const ek_etm4_config *cfg);

/* One JSON object per packet, newline-terminated:
 * {"idx":N,"id":N,"type":"ATOM_F1","raw":"f7",...decoded fields...} */
void ek_list_etm4_json(ek_sbuf *out, const ek_etm4_packet *pkt, unsigned trace_id,
                       const ek_etm4_config *cfg);

/* Raw frame lines as trc_pkt_lister prints them with -o_raw_packed / -o_raw_unpacked:
 *   "Frame Data; Index<%7u>;    RAW_PACKED; ff ff ... (16 bytes a line)\n"
 *   "Frame Data; Index<%7u>;   ID_DATA[0x10]; ...\n"   (unknown ID: ID_DATA[????])
 * it->kind selects the form (DATA items print as ID_DATA). */
void ek_list_frame_ocsd(ek_sbuf *out, const ek_dfmt_item *it);

#ifdef __cplusplus
}
#endif
#endif
