/* int8 / uint8 AVERAGE_POOL_2D straight from the NHWC input (no padded copy), the
 * arithmetic of the numpy kernel (interpreter/kernels/pooling.py), which matches
 * reference_integer_ops::AveragePool
 * (tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h): every window is
 * clipped to the input (filter_x_start = max(0, -in_x_origin), filter_x_end =
 * min(filter_w, in_w - in_x_origin)), so padding never takes part;
 *
 *   out = clamp(trunc((acc + copysign(c / 2, acc)) / c), lo, hi), acc the sum
 *            of the c valid pixels -- TFLite's (acc > 0 ? acc + c/2 : acc - c/2) / c,
 *            computed as the numpy kernel does, in float32 (float64 for windows of 2^14
 *            pixels or more): the quotient lands on the same side of every integer.
 * Rows are (n, out_y) pairs. (MAX_POOL_2D stays numpy: its byte maxima over tap
 * planes are as fast as a C loop over windows.) */
#include <stdint.h>

#include "native.h"

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

#define EL_POOL_ROWS(NAME, T, W, ATTRIBUTE)                                               \
    ATTRIBUTE static void NAME(const struct el_pool *p, int64_t row_begin, int64_t row_end, \
                     int32_t *restrict acc)                                              \
    {                                                                                    \
        const int64_t H = p->h, Wd = p->w, C = p->c, OH = p->oh, OW = p->ow;              \
        const int32_t lo = p->lo, hi = p->hi;                                            \
        const T *restrict x = (const T *)p->x;                                           \
        T *restrict out = (T *)p->out;                                                   \
        for (int64_t r = row_begin; r < row_end; r++) {                                  \
            const int64_t n = r / OH, oy = r % OH;                                       \
            const int64_t iy0 = oy * p->sh - p->pad_t;                                   \
            const int64_t fy0 = max64(0, -iy0), fy1 = min64(p->kh, H - iy0);             \
            for (int64_t ox = 0; ox < OW; ox++) {                                        \
                const int64_t ix0 = ox * p->sw - p->pad_l;                               \
                const int64_t fx0 = max64(0, -ix0), fx1 = min64(p->kw, Wd - ix0);        \
                T *restrict o = out + (r * OW + ox) * C;                                 \
                for (int64_t ch = 0; ch < C; ch++) acc[ch] = 0;                          \
                for (int64_t fy = fy0; fy < fy1; fy++) {                                 \
                    for (int64_t fx = fx0; fx < fx1; fx++) {                             \
                        const T *restrict px = x + ((n * H + iy0 + fy) * Wd + ix0 + fx) * C; \
                        for (int64_t ch = 0; ch < C; ch++) acc[ch] += px[ch];            \
                    }                                                                    \
                }                                                                        \
                {                                                                        \
                    const int64_t cnt = max64(fy1 - fy0, 0) * max64(fx1 - fx0, 0);       \
                    const W count = (W)cnt, half = (W)(cnt / 2);                         \
                    for (int64_t ch = 0; ch < C; ch++) {                                 \
                        const W v = (W)acc[ch];                                          \
                        /* the conversion truncates toward zero: np.trunc */             \
                        int32_t q = cnt ? (int32_t)((v + (v < 0 ? -half : half)) / count) : 0; \
                        q = q < lo ? lo : q;                                             \
                        o[ch] = (T)(q > hi ? hi : q);                                    \
                    }                                                                    \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }

#define EL_POOL_DISPATCH(NAME, SUFFIX, ATTRIBUTE)                                          \
    EL_POOL_ROWS(int8_f32##SUFFIX, int8_t, float, ATTRIBUTE)                              \
    EL_POOL_ROWS(int8_f64##SUFFIX, int8_t, double, ATTRIBUTE)                             \
    EL_POOL_ROWS(uint8_f32##SUFFIX, uint8_t, float, ATTRIBUTE)                            \
    EL_POOL_ROWS(uint8_f64##SUFFIX, uint8_t, double, ATTRIBUTE)                           \
    static void NAME(const struct el_pool *p, int64_t r0, int64_t r1, int32_t *acc)        \
    {                                                                                     \
        if (p->is_uint8 && p->work_f64) uint8_f64##SUFFIX(p, r0, r1, acc);                 \
        else if (p->is_uint8) uint8_f32##SUFFIX(p, r0, r1, acc);                           \
        else if (p->work_f64) int8_f64##SUFFIX(p, r0, r1, acc);                            \
        else int8_f32##SUFFIX(p, r0, r1, acc);                                             \
    }

EL_POOL_DISPATCH(pool_base, _base, )
#ifdef EL_X86_AVX2
EL_POOL_DISPATCH(pool_avx2, _avx2, EL_TARGET_AVX2) /* widening adds, 8 float lanes */
#else
#define pool_avx2 pool_base
#endif

void el_pool(const struct el_pool *p, int64_t row_begin, int64_t row_end, int32_t *acc)
{
    if (el_have_avx2()) pool_avx2(p, row_begin, row_end, acc);
    else pool_base(p, row_begin, row_end, acc);
}
