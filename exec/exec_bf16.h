/*
 * exec_bf16.h: bf16 on the host, the one conversion of exec/. A bf16 is the
 * upper half of an IEEE fp32 (Google's bfloat16, CUDA's __nv_bfloat16);
 * narrowing rounds to nearest, ties to even, as __float2bfloat16 does;
 * infinities stay, a NaN stays a NaN (its quiet bit set, so that no NaN
 * narrows to an infinity).
 */
#ifndef SMD_EXEC_BF16_H
#define SMD_EXEC_BF16_H

#include <stdint.h>
#include <string.h>

static inline uint16_t exec_bf16_from_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u) /* inf stays; NaN stays NaN */
        return (uint16_t)((u >> 16) | ((u & 0x007fffffu) ? 0x0040u : 0u));
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static inline float exec_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f rounded to the nearest bf16, as a float. */
static inline float exec_bf16_round(float f)
{
    return exec_bf16_to_f32(exec_bf16_from_f32(f));
}

#endif
