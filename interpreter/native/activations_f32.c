/* The float convolutions' output stage (conv.py's _finish after the BLAS matmul). The
 * element-wise transcendental kernels live in transcend_f32.c. */
#include <stdint.h>

#include "native.h"
#include "native_float.h"

/* A float kernel's output stage in one pass: out = act(out + bias[i % width]) over count
 * values (bias NULL: none), the numpy stage's formulas in its order (add, then max, then
 * min; NaN stays NaN) -- conv.py's _finish after the BLAS matmul; act EL_ACT_SWISH: the
 * fused swish's values (el_swish_inplace_f32) on each row while it is in cache. Built for
 * baseline x86-64 and AVX2, picked at run time. */
#define EL_BIAS_ACT(name, attr)                                                             \
    attr static void name(float *restrict out, int64_t count, const float *restrict bias,   \
                          int64_t width, int clamp, float lo, float hi)                     \
    {                                                                                       \
        for (int64_t r = 0; r < count; r += width) {                                        \
            float *restrict row = out + r;                                                  \
            const int64_t n = count - r < width ? count - r : width;                        \
            if (bias)                                                                       \
                for (int64_t i = 0; i < n; i++) row[i] += bias[i];                          \
            if (clamp == EL_ACT_CLAMP)                                                      \
                for (int64_t i = 0; i < n; i++) {                                           \
                    float v = row[i] < lo ? lo : row[i];                                    \
                    row[i] = v > hi ? hi : v;                                               \
                }                                                                           \
            else if (clamp == EL_ACT_SWISH)                                                 \
                el_swish_inplace_f32(row, n);                                               \
        }                                                                                   \
    }

EL_BIAS_ACT(bias_act_base, )
#ifdef EL_X86_AVX2
EL_BIAS_ACT(bias_act_avx2, EL_TARGET_AVX2)
#else
#define bias_act_avx2 bias_act_base
#endif

void el_bias_act_f32(float *out, int64_t count, const float *bias, int64_t width, int clamp,
                     float lo, float hi)
{
    if (!bias) width = count > 0 ? count : 1;
    if (el_have_avx2()) bias_act_avx2(out, count, bias, width, clamp, lo, hi);
    else bias_act_base(out, count, bias, width, clamp, lo, hi);
}
