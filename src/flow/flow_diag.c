/* The flow decoder's diagnostics as OpenCSD's error-log lines (for ocsd-format listings). */
#include <string.h>

#include "etmkit/flow.h"

static const struct {
    const char *kind;
    unsigned code;
    const char *name;
    const char *text;
} ocsd_errors[] = {
    {"flow.bad-packet", 0x19, "OCSD_ERR_BAD_DECODE_PKT", "Reserved or unknown packet in decoder."},
    {"flow.unsupported", 0x18, "OCSD_ERR_UNSUPP_DECODE_PKT", "Packet not supported in decoder"},
    {"flow.bad-sequence", 0x13, "OCSD_ERR_BAD_PACKET_SEQ", "Bad packet sequence"},
    {"flow.commit-overrun", 0x1a, "OCSD_ERR_COMMIT_PKT_OVERRUN",
     "Overrun in commit packet stack - tried to commit more than available"},
    {"flow.return-stack", 0x1c, "OCSD_ERR_RET_STACK_OVERFLOW",
     "Internal return stack overflow checks failed - popped more than we pushed."},
    {"flow.bad-image", 0x2e, "OCSD_ERR_BAD_DECODE_IMAGE",
     "Mismatch between trace packets and decode image."},
    {"flow.config", 0x17, "OCSD_ERR_HW_CFG_UNSUPP",
     "Programmed trace configuration not supported by decodUer."},
};

static int find_error(const ek_diag_event *ev)
{
    if (!ev->kind || strncmp(ev->kind, "flow.", 5) != 0) return -1;
    for (size_t i = 0; i < sizeof ocsd_errors / sizeof ocsd_errors[0]; i++)
        if (!strcmp(ev->kind, ocsd_errors[i].kind)) return (int)i;
    return -1;
}

int ek_flow_diag_logged(const ek_diag_event *ev)
{
    return find_error(ev) >= 0;
}

int ek_flow_diag_ocsd(ek_sbuf *out, const ek_diag_event *ev, int with_instance)
{
    const int i = find_error(ev);
    if (i < 0) return 0;
    if (with_instance > 0)
        ek_sbuf_printf(out, "DCD_ETMV4_%04d : ", ev->trace_id >= 0 ? ev->trace_id : 0);
    else if (with_instance == 0)
        ek_sbuf_puts(out, "DCD_ETMV4 : ");
    ek_sbuf_printf(out, "0x%04x (%s) [%s]; ", ocsd_errors[i].code, ocsd_errors[i].name,
                   ocsd_errors[i].text);
    if (ev->offset >= 0) ek_sbuf_printf(out, "TrcIdx=%lld; ", (long long)ev->offset);
    if (ev->trace_id >= 0) ek_sbuf_printf(out, "CS ID=%02x; ", (unsigned)ev->trace_id);
    ek_sbuf_puts(out, ev->msg ? ev->msg : "");
    return 1;
}
