/* The output stage of the int8 / uint8 accumulating kernels (CONV_2D, DEPTHWISE_CONV_2D,
 * FULLY_CONNECTED): acc (+ bias) -> requantize -> + zero point -> clamp -> int8 / uint8,
 * one pass over the accumulator. Each formula is the numpy one in
 * interpreter/kernels/common/requantize.py, step for step, so results are identical:
 *
 *   fixed, DOUBLE  MultiplyByQuantizedMultiplier (TFLite common.h, gemmlowp
 *                  SaturatingRoundingDoublingHighMul + RoundingDivideByPOT)
 *   fixed, SINGLE  the TFLITE_SINGLE_ROUNDING form (x * m + 2^(t-1)) >> t
 *   float64        reference_integer_ops::FullyConnected's round(double(acc) * M)
 *   fp32           XNNPACK's fp32 requantization: rint(float32(acc) * float32 M)
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "native.h"

static inline double wrap_int32_double(double v)
{
    /* two's complement wrap of an exact integer below 2^53 (accumulator.wrap_int32_float) */
    double turns = floor((v + 2147483648.0) * (1.0 / 4294967296.0));
    return v - turns * 4294967296.0;
}

static inline int64_t wrap32(int64_t v) { return (int64_t)(int32_t)(uint32_t)(uint64_t)v; }

static inline int64_t srdhm(int64_t a, int64_t b)
{
    /* gemmlowp SaturatingRoundingDoublingHighMul on int32 values */
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    int64_t ab = a * b;
    int64_t nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
    int64_t q = ab + nudge;
    /* division by 2^31 truncating towards zero, as C's int64 division */
    return q >= 0 ? (q >> 31) : -((-q) >> 31);
}

static inline int64_t rounding_divide_by_pot(int64_t x, int exponent)
{
    if (exponent <= 0) return x;
    int64_t mask = (1LL << exponent) - 1;
    int64_t remainder = x & mask;
    int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

static inline int64_t mbqm(int64_t x, int64_t m, int shift, int single)
{
    if (single) {
        int t = 31 - shift;
        return wrap32((x * m + (1LL << (t - 1))) >> t);
    }
    int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
    if (left) x = wrap32((int64_t)((uint64_t)x << left));
    return rounding_divide_by_pot(srdhm(x, m), right);
}

static inline double round_half_away(double v)
{
    double whole = trunc(v);
    double frac = fabs(v - whole);
    return frac >= 0.5 ? whole + copysign(1.0, v) : whole;
}

static inline void store(void *out, int is_uint8, int64_t i, int64_t v)
{
    if (is_uint8) ((uint8_t *)out)[i] = (uint8_t)v;
    else ((int8_t *)out)[i] = (int8_t)v;
}

static inline double load(const void *acc, int acc_f64, int64_t i)
{
    return acc_f64 ? ((const double *)acc)[i] : (double)((const float *)acc)[i];
}

/* One value of the exact stage: the integer accumulator a (bias added, wrapped) of
 * channel c -> requantized, + zero point, clamped. */
static inline int64_t exact_value(const struct el_stage *s, double a, int64_t c)
{
    int64_t v;
    if (s->kind == EL_FLOAT64) {
        double q = round_half_away(a * s->mult_f64[c]);
        if (q < -2147483648.0) q = -2147483648.0;
        if (q > 2147483647.0) q = 2147483647.0;
        v = (int64_t)q;
    } else {
        v = mbqm((int64_t)a, s->mult_i64[c], (int)s->shift[c], s->kind == EL_SINGLE);
    }
    v += s->zp_out;
    if (v < s->lo) v = s->lo;
    if (v > s->hi) v = s->hi;
    return v;
}

void el_exact_stage(const struct el_stage *stage, int64_t row_begin, int64_t row_end)
{
    const struct el_stage copy = *stage, *s = &copy; /* a local: stores cannot alias it */
    const int64_t w = s->width;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t c = 0; c < w; c++) {
            int64_t i = r * w + c;
            double a = load(s->acc, s->acc_f64, i);
            if (s->bias) a += s->bias_f64[c];
            if (s->wrap) a = wrap_int32_double(a);
            store(s->out, s->out_uint8, i, exact_value(s, a, c));
        }
    }
}

/* rint for |v| < 2^22 in the default rounding mode (half to even, as np.rint):
 * adding and removing 1.5 * 2^23 leaves v rounded to an integer. Portable and
 * branch-free, where rintf is a library call on baseline x86-64. */
static inline float rint_small(float v)
{
    const float magic = 12582912.0f; /* IEEE arithmetic (no -ffast-math): not folded */
    return (v + magic) - magic;
}

/* One value of the fp32 stage: float32(acc + bias) of a channel with multiplier m ->
 * rint(clamp(v * m)) + zero point; lo / hi are the clamp bounds minus the zero point. */
static inline int32_t fp32_value(float v, float m, float lo, float hi, int32_t zp)
{
    v *= m;
    v = v < lo ? lo : v; /* clip before rounding: the bounds are integers */
    v = v > hi ? hi : v;
    return (int32_t)rint_small(v) + zp;
}

static inline void fp32_rows(const struct el_stage *s, int64_t row_begin, int64_t row_end,
                             const int acc_f64, const int has_bias, const int wrap,
                             const int out_uint8)
{
    /* everything in locals: the int8 stores could alias the struct's fields */
    const int64_t w = s->width;
    const float lo = (float)(s->lo - s->zp_out), hi = (float)(s->hi - s->zp_out);
    const int32_t zp = (int32_t)s->zp_out;
    const float *restrict mult = s->mult_f32;
    const float *restrict bias32 = s->bias_f32;
    const double *restrict bias64 = s->bias_f64;
    const float *restrict acc32 = (const float *)s->acc;
    const double *restrict acc64 = (const double *)s->acc;
    int8_t *restrict out8 = (int8_t *)s->out;
    uint8_t *restrict outu8 = (uint8_t *)s->out;
    for (int64_t r = row_begin; r < row_end; r++) {
        const int64_t at = r * w;
        for (int64_t c = 0; c < w; c++) {
            float v;
            if (acc_f64) {
                double a = acc64[at + c];
                if (has_bias) a += bias64[c];
                if (wrap) a = wrap_int32_double(a);
                v = (float)a;
            } else {
                v = acc32[at + c];
                if (has_bias) v += bias32[c];
            }
            const int32_t q = fp32_value(v, mult[c], lo, hi, zp);
            if (out_uint8) outu8[at + c] = (uint8_t)q;
            else out8[at + c] = (int8_t)q;
        }
    }
}

void el_fp32_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end)
{
    /* one specialized loop per case (the flags are constants in each call) */
    const int b = s->bias != NULL, u = s->out_uint8;
    if (!s->acc_f64 && b && !u) fp32_rows(s, row_begin, row_end, 0, 1, 0, 0);
    else if (!s->acc_f64 && b) fp32_rows(s, row_begin, row_end, 0, 1, 0, 1);
    else if (!s->acc_f64) fp32_rows(s, row_begin, row_end, 0, 0, 0, u);
    else if (s->wrap) fp32_rows(s, row_begin, row_end, 1, b, 1, u);
    else fp32_rows(s, row_begin, row_end, 1, b, 0, u);
}

/* The stage of count int32 accumulators of one output row, channels c0 .. c0 + count - 1
 * (the GEMM's tiles: bias already folded in, the int32 wrap done by the int32 sums):
 * the same per-value formulas as above, acc taken as the exact integer it is. out_row
 * points at the row's channel 0. */
void el_stage_int32(const struct el_stage *s, const int32_t *restrict acc, int64_t c0,
                    int64_t count, void *out_row)
{
    if (s->kind == EL_FP32) {
        const float lo = (float)(s->lo - s->zp_out), hi = (float)(s->hi - s->zp_out);
        const int32_t zp = (int32_t)s->zp_out;
        const float *restrict mult = s->mult_f32 + c0;
        int32_t q[64];
        for (int64_t done = 0; done < count; done += 64) {
            const int64_t n = count - done < 64 ? count - done : 64;
            for (int64_t i = 0; i < n; i++)
                q[i] = fp32_value((float)acc[done + i], mult[done + i], lo, hi, zp);
            if (s->out_uint8) {
                uint8_t *restrict o = (uint8_t *)out_row + c0 + done;
                for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)q[i];
            } else {
                int8_t *restrict o = (int8_t *)out_row + c0 + done;
                for (int64_t i = 0; i < n; i++) o[i] = (int8_t)q[i];
            }
        }
        return;
    }
    for (int64_t i = 0; i < count; i++)
        store(out_row, s->out_uint8, c0 + i, exact_value(s, (double)acc[i], c0 + i));
}
