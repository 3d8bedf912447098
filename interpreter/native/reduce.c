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

/* float32 sums in numpy's order, bit for bit np.add.reduce's (the float MEAN / SUM kernels'
 * arithmetic, kernels/reduce.py): numpy starts each sum from 0 (add's identity) and
 * - where the reduced block is the innermost (inner == 1), adds the pairwise sum of its
 *   values (pairwise_f32; the input is contiguous, so numpy does not buffer it in chunks);
 * - else adds whole rows in order: out[c] += x[r, c] for r = 0, 1, ... (one rounding per
 *   add, no reassociation: -std=c11 without -ffast-math keeps it so). */
/* numpy's pairwise_sum for float32 (umath/loops_utils.h): fewer than 8 values in order;
 * up to 128 in 8 running sums combined as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) +
 * (r6 + r7)) then the tail in order; more: the two halves (cut at a multiple of 8) */
static float pairwise_f32(const float *a, int64_t n)
{
    if (n < 8) {
        float res = 0.0f;
        for (int64_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        float r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        int64_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    int64_t half = n / 2;
    half -= half % 8;
    return pairwise_f32(a, half) + pairwise_f32(a + half, n - half);
}

void el_sum_f32(const float *x, int64_t outer, int64_t count, int64_t inner, float *out)
{
    for (int64_t o = 0; o < outer; o++) {
        const float *src = x + o * count * inner;
        float *dst = out + o * inner;
        if (inner == 1) {
            dst[0] = 0.0f + pairwise_f32(src, count);
            continue;
        }
        for (int64_t c = 0; c < inner; c++) dst[c] = 0.0f;
        for (int64_t r = 0; r < count; r++)
            for (int64_t c = 0; c < inner; c++) dst[c] += src[r * inner + c];
    }
}
