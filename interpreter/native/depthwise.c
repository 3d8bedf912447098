/* int8 / uint8 DEPTHWISE_CONV_2D accumulators, exact integers (the sum part of
 * reference_integer_ops::DepthwiseConvPerChannel / reference_ops::DepthwiseConv,
 * tensorflow/lite/kernels/internal/reference/integer_ops/depthwise_conv.h):
 *
 *   acc[n, y, x, c*M + m] = sum_{ky, kx} (in[n, iy, ix, c] - zp_x) * w[ky, kx, c*M + m]
 *
 * taps falling in the padding skipped (they add 0, as TFLite's bounds check). w holds
 * w - zp_w. Accumulated in int32 (the caller checks KH*KW*255*255 fits), written to the
 * float32 / float64 accumulator the output stage reads (exact: the numpy kernel's
 * accumulator plan keeps sums within the float type's integers). */
#include <stdint.h>
#include <string.h>

#include "native.h"

static inline int32_t in_at(const struct el_depthwise *d, int64_t i)
{
    return d->x_uint8 ? (int32_t)((const uint8_t *)d->x)[i]
                      : (int32_t)((const int8_t *)d->x)[i];
}

void el_depthwise_acc(const struct el_depthwise *d, int64_t row_begin, int64_t row_end,
                      int32_t *row_acc, int32_t *centered)
{
    const int64_t O = d->c * d->m;
    for (int64_t r = row_begin; r < row_end; r++) {
        const int64_t n = r / d->oh, oy = r % d->oh;
        for (int64_t ox = 0; ox < d->ow; ox++) {
            memset(row_acc, 0, sizeof(int32_t) * O);
            for (int64_t ky = 0; ky < d->kh; ky++) {
                const int64_t iy = oy * d->sh + ky * d->dh - d->pad_t;
                if (iy < 0 || iy >= d->h) continue;
                for (int64_t kx = 0; kx < d->kw; kx++) {
                    const int64_t ix = ox * d->sw + kx * d->dw - d->pad_l;
                    if (ix < 0 || ix >= d->w) continue;
                    const int64_t base = ((n * d->h + iy) * d->w + ix) * d->c;
                    const int32_t *restrict wt = d->weights + (ky * d->kw + kx) * O;
                    if (d->m == 1) {
                        for (int64_t c = 0; c < O; c++) centered[c] = in_at(d, base + c) - d->zp_x;
                        for (int64_t o = 0; o < O; o++) row_acc[o] += centered[o] * wt[o];
                    } else {
                        for (int64_t o = 0; o < O; o++)
                            row_acc[o] += (in_at(d, base + o / d->m) - d->zp_x) * wt[o];
                    }
                }
            }
            const int64_t at = (r * d->ow + ox) * O;
            if (d->acc_f64) {
                double *restrict a = (double *)d->acc + at;
                for (int64_t o = 0; o < O; o++) a[o] = (double)row_acc[o];
            } else {
                float *restrict a = (float *)d->acc + at;
                for (int64_t o = 0; o < O; o++) a[o] = (float)row_acc[o];
            }
        }
    }
}
