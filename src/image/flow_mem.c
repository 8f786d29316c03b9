/* Adapter: a memory image as the flow decoders' code access (ek_flow_mem, etmkit/image.h). */
#include "etmkit/image.h"

static int image_find(void *ctx, uint64_t addr, uint32_t space, uint8_t trace_id, ek_mem_span *out)
{
    (void)trace_id;
    const uint8_t *p = NULL;
    size_t n = ek_image_map((ek_image *)ctx, (ek_mem_space)space, addr, &p);
    if (!n || !p) return 0;
    out->start = addr;
    out->size = n;
    out->data = p;
    return 1;
}

static uint64_t image_generation(void *ctx)
{
    return ek_image_region_count((const ek_image *)ctx);
}

ek_flow_mem ek_flow_mem_image(ek_image *img)
{
    ek_flow_mem m = {image_find, image_generation, img};
    return m;
}
