/* Study §9.2: dst = 0.5·s0 + 0.5·s1 as the runtime builds it, then the bytes checked. */
#include <stdio.h>
#include "cce.h"

int main(void) {
    const uint64_t srcs[2] = {0x10000000, 0x20000000}, dst = 0xD0000000;
    const float scales[2] = {0.5f, 0.5f};
    cce_build_request req = cce_build_request_default(); /* bf16 in/out, fp32 accumulate */
    req.op = CCE_OP_FMA;
    req.elems = 1024;
    req.srcs = srcs, req.num_srcs = 2;
    req.dsts = &dst, req.num_dsts = 1;
    req.scales = scales, req.num_scales = 2;
    cce_rings *rings = NULL;
    if (cce_build(&req, &rings) != CCE_OK) {
        fprintf(stderr, "cce_build: %s\n", cce_last_error());
        return 1;
    }
    /* The first tx descriptor is source 0's FMA descriptor: the same 16 bytes as the runtime's
     * encoder gives for meta_idx 0, a=input, b=scale, c=stored, scale 0.5, sub-op 1. */
    uint8_t want[16];
    al_sdma_m2s_build_fma_descriptor(want, 0, CCE_FMA_INPUT, CCE_FMA_SCALE, CCE_FMA_STORED, 0.5f, 0, 0, 0, 1, 0);
    size_t len = 0;
    const uint8_t *tx = cce_rings_tx(rings, &len);
    int same = len >= 16;
    for (int i = 0; same && i < 16; i++) same = tx[i] == want[i];
    printf("FMA descriptor W3 = %02x%02x%02x%02x (0.5f): %s\n", tx[15], tx[14], tx[13], tx[12],
           same ? "matches the encoder" : "DIFFERS");
    cce_rings_free(rings);
    return same ? 0 : 1;
}
