/* CONV_2D's rows of A for the packed GEMM (gemm.c): the im2col row of output pixel
 * (n, oy, ox), built for a block of rows at a time in a small reused buffer -- never the
 * whole im2col matrix. Its K = KH * KW * C values follow the OHWI filter's (ky, kx, c)
 * order, as reference_ops::Conv / reference_integer_ops::ConvPerChannel walk them
 * (tensorflow/lite/kernels/internal/reference/conv.h):
 *
 *   in_y = oy * stride_h + ky * dilation_h - pad_top
 *   in_x = ox * stride_w + kx * dilation_w - pad_left
 *
 * An input pixel outside the image is TFLite's skipped tap: it reads as zp_x here, which
 * adds (zp_x - zp_x) * w = 0 once the GEMM's column-sum term is applied. */
#include <stdint.h>

#include "native.h"

/* c values of the input from value at on (1-byte values), widened to int16. */
static inline void widen(const struct el_conv *cv, int64_t at, int64_t c, int16_t *restrict dst)
{
    el_widen8((const char *)cv->x + at, cv->x_uint8, c, dst);
}

static inline void fill(int16_t *restrict dst, int64_t count, int16_t value)
{
    for (int64_t i = 0; i < count; i++) dst[i] = value;
}

/* Rows row .. row + count of the im2col matrix into a (row stride `stride` int16; the
 * values past K are 0). With dilation_w 1, a kernel row whose taps all lie inside the
 * image is one contiguous run of KW * C input values. */
void el_conv_rows(const struct el_conv *cv, int64_t row, int64_t count, int16_t *a,
                  int64_t stride)
{
    const int64_t C = cv->c, KW = cv->kw, k = cv->kh * KW * C;
    const int16_t zp = (int16_t)cv->zp_x;
    for (int64_t i = 0; i < count; i++) {
        const int64_t r = row + i, plane = cv->oh * cv->ow;
        const int64_t n = r / plane, oy = (r % plane) / cv->ow, ox = r % cv->ow;
        const int64_t x0 = ox * cv->sw - cv->pad_l;
        int16_t *dst = a + i * stride;
        for (int64_t ky = 0; ky < cv->kh; ky++, dst += KW * C) {
            const int64_t iy = oy * cv->sh + ky * cv->dh - cv->pad_t;
            if (iy < 0 || iy >= cv->h) {
                fill(dst, KW * C, zp);
                continue;
            }
            const int64_t line = (n * cv->h + iy) * cv->w;
            if (cv->dw == 1 && x0 >= 0 && x0 + KW <= cv->w) {
                widen(cv, (line + x0) * C, KW * C, dst);
                continue;
            }
            for (int64_t kx = 0; kx < KW; kx++) {
                const int64_t ix = x0 + kx * cv->dw;
                if (ix < 0 || ix >= cv->w) fill(dst + kx * C, C, zp);
                else widen(cv, (line + ix) * C, C, dst + kx * C);
            }
        }
        fill(a + i * stride + k, stride - k, 0);
    }
}
