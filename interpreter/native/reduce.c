/* int8 / uint8 sums over a block of axes, exact, into int64: the first step of the
 * quantized MEAN / SUM kernels (interpreter/kernels/reduce.py, np.add.reduce(x, axes,
 * dtype=int64)); their output stages (TFLite's fixed point, XNNPACK's float32) then run
 * on the few sums in numpy.
 *
 * The input is seen as (outer, count, inner) -- NHWC's spatial mean is (N, H*W, C) -- and
 * out[o * inner + c] = sum_r x[o, r, c]. The sums run in int32 over blocks of at most
 * 2^23 rows (|x| <= 255: no overflow) and are then added in int64. */
#include <stdint.h>
#include <string.h>

#include "native.h"

#define EL_SUM_BLOCK ((int64_t)1 << 23)

#define EL_SUM_ROWS(NAME, T)                                                             \
    static void NAME(const T *restrict x, int64_t count, int64_t inner,                 \
                     int32_t *restrict acc, int64_t *restrict out)                      \
    {                                                                                    \
        for (int64_t c = 0; c < inner; c++) out[c] = 0;                                  \
        for (int64_t r0 = 0; r0 < count; r0 += EL_SUM_BLOCK) {                           \
            const int64_t r1 = r0 + EL_SUM_BLOCK < count ? r0 + EL_SUM_BLOCK : count;     \
            if (inner == 1) {                                                            \
                int32_t s = 0;                                                           \
                for (int64_t r = r0; r < r1; r++) s += x[r];                             \
                out[0] += s;                                                             \
                continue;                                                                \
            }                                                                            \
            memset(acc, 0, sizeof(int32_t) * (size_t)inner);                             \
            for (int64_t r = r0; r < r1; r++) {                                          \
                const T *restrict row = x + r * inner;                                   \
                for (int64_t c = 0; c < inner; c++) acc[c] += row[c];                    \
            }                                                                            \
            for (int64_t c = 0; c < inner; c++) out[c] += acc[c];                        \
        }                                                                                \
    }

EL_SUM_ROWS(sum_int8, int8_t)
EL_SUM_ROWS(sum_uint8, uint8_t)

void el_sum8(const void *x, int is_uint8, int64_t outer, int64_t count, int64_t inner,
             int32_t *acc, int64_t *out)
{
    for (int64_t o = 0; o < outer; o++) {
        const int64_t at = o * count * inner;
        if (is_uint8) sum_uint8((const uint8_t *)x + at, count, inner, acc, out + o * inner);
        else sum_int8((const int8_t *)x + at, count, inner, acc, out + o * inner);
    }
}
