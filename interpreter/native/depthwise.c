/* int8 / uint8 DEPTHWISE_CONV_2D accumulators, exact integers (the sum part of
 * reference_integer_ops::DepthwiseConvPerChannel / reference_ops::DepthwiseConv,
 * tensorflow/lite/kernels/internal/reference/integer_ops/depthwise_conv.h):
 *
 *   acc[n, y, x, c*M + m] = sum_{ky, kx} (in[n, iy, ix, c] - zp_x) * w[ky, kx, c*M + m]
 *
 * taps falling in the padding skipped (they add 0, as TFLite's bounds check). w holds
 * w - zp_w. The sums run in the accumulator's float type, like the numpy kernel: its
 * accumulator plan picks float32 only where every partial sum is an exact integer there
 * (products of 9-bit values, sums below 2^24), else float64 -- so they are exact, and
 * vectorize on baseline SIMD (no packed int32 multiply before SSE4.1). */
#include <stdint.h>
#include <string.h>

#include "native.h"

#define DEPTHWISE_ROWS(NAME, T)                                                              \
    static void NAME(const struct el_depthwise *d, int64_t row_begin, int64_t row_end,       \
                     T *restrict centered)                                                   \
    {                                                                                        \
        /* locals: the stores could alias *d */                                              \
        const int64_t C = d->c, M = d->m, O = d->c * d->m, H = d->h, W = d->w;              \
        const int64_t OH = d->oh, OW = d->ow, KH = d->kh, KW = d->kw;                        \
        const int32_t zp = d->zp_x;                                                          \
        const T *restrict weights = (const T *)d->weights;                                   \
        for (int64_t r = row_begin; r < row_end; r++) {                                      \
            const int64_t n = r / OH, oy = r % OH;                                           \
            for (int64_t ox = 0; ox < OW; ox++) {                                            \
                T *restrict acc = (T *)d->acc + (r * OW + ox) * O;                           \
                memset(acc, 0, sizeof(T) * O);                                               \
                for (int64_t ky = 0; ky < KH; ky++) {                                        \
                    const int64_t iy = oy * d->sh + ky * d->dh - d->pad_t;                   \
                    if (iy < 0 || iy >= H) continue;                                         \
                    for (int64_t kx = 0; kx < KW; kx++) {                                    \
                        const int64_t ix = ox * d->sw + kx * d->dw - d->pad_l;               \
                        if (ix < 0 || ix >= W) continue;                                     \
                        const int64_t base = ((n * H + iy) * W + ix) * C;                    \
                        if (d->x_uint8) {                                                    \
                            const uint8_t *restrict x = (const uint8_t *)d->x + base;        \
                            for (int64_t c = 0; c < C; c++) centered[c] = (T)((int32_t)x[c] - zp); \
                        } else {                                                             \
                            const int8_t *restrict x = (const int8_t *)d->x + base;          \
                            for (int64_t c = 0; c < C; c++) centered[c] = (T)((int32_t)x[c] - zp); \
                        }                                                                    \
                        const T *restrict wt = weights + (ky * KW + kx) * O;                 \
                        if (M == 1) {                                                        \
                            for (int64_t o = 0; o < O; o++) acc[o] += centered[o] * wt[o];   \
                        } else {                                                             \
                            for (int64_t o = 0; o < O; o++) acc[o] += centered[o / M] * wt[o]; \
                        }                                                                    \
                    }                                                                        \
                }                                                                            \
            }                                                                                \
        }                                                                                    \
    }

DEPTHWISE_ROWS(rows_f32, float)
DEPTHWISE_ROWS(rows_f64, double)

void el_depthwise_acc(const struct el_depthwise *d, int64_t row_begin, int64_t row_end,
                      void *centered)
{
    if (d->acc_f64) rows_f64(d, row_begin, row_end, (double *)centered);
    else rows_f32(d, row_begin, row_end, (float *)centered);
}
