/* The output stage of the int8 / uint8 accumulating kernels (CONV_2D, DEPTHWISE_CONV_2D,
 * FULLY_CONNECTED): acc (+ bias) -> requantize -> + zero point -> clamp -> int8 / uint8,
 * one pass over the accumulator. Each formula is the numpy one in
 * interpreter/kernels/requantize.py, step for step, so results are identical:
 *
 *   fixed, DOUBLE  MultiplyByQuantizedMultiplier (TFLite common.h, gemmlowp
 *                  SaturatingRoundingDoublingHighMul + RoundingDivideByPOT)
 *   fixed, SINGLE  the TFLITE_SINGLE_ROUNDING form (x * m + 2^(t-1)) >> t
 *   float64        reference_integer_ops::FullyConnected's round(double(acc) * M)
 *   fp32           XNNPACK's fp32 requantization: rint(float32(acc) * float32 M)
 */
#include <math.h>
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

void el_exact_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end)
{
    const int64_t w = s->width;
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t c = 0; c < w; c++) {
            int64_t i = r * w + c;
            double a = load(s->acc, s->acc_f64, i);
            if (s->bias) a += s->bias_f64[c];
            if (s->wrap) a = wrap_int32_double(a);
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
            store(s->out, s->out_uint8, i, v);
        }
    }
}

void el_fp32_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end)
{
    const int64_t w = s->width;
    const float lo = (float)(s->lo - s->zp_out), hi = (float)(s->hi - s->zp_out);
    for (int64_t r = row_begin; r < row_end; r++) {
        for (int64_t c = 0; c < w; c++) {
            int64_t i = r * w + c;
            float v;
            if (s->acc_f64) {
                double a = ((const double *)s->acc)[i];
                if (s->bias) a += s->bias_f64[c];
                if (s->wrap) a = wrap_int32_double(a);
                v = (float)a;
            } else {
                v = ((const float *)s->acc)[i];
                if (s->bias) v += s->bias_f32[c];
            }
            v *= s->mult_f32[c];
            if (v < lo) v = lo; /* clip before rint: the bounds are integers */
            if (v > hi) v = hi;
            v = nearbyintf(v); /* half to even in the default rounding mode, as np.rint */
            store(s->out, s->out_uint8, i, (int64_t)v + s->zp_out);
        }
    }
}
