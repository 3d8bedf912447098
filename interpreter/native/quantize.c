/* QUANTIZE float32 -> int8 / uint8 / int16, per tensor: the three formulas of the numpy
 * kernel (interpreter/kernels/quantize.py), step for step:
 *
 * EL_Q_XNN        XNNPACK's f32 -> qs8 / qu8 convert (scale = float32(1 / s)):
 *                     q = clamp(rint(x * scale)) + z, in float32; NaN gives the maximum
 *                 (clamped in float before rounding: the bounds are integers)
 * EL_Q_REFERENCE  reference_ops::AffineQuantize: q = clamp(wrap32(int32(round(x / s)) + z)),
 *                 float32 division, round half away from zero; out of int32 range and NaN
 *                 convert to INT32_MIN (x86's cvttss2si)
 * EL_Q_OPTIMIZED  optimized_ops::AffineQuantize: values [0, split) as its NEON loop
 *                 (rint(x * float32(1 / double(s))), half to even), the rest as its scalar
 *                 tail (round(double(x) / double(s))); both convert like x86 and wrap
 *                 the zero point's addition in int32. */
#include <math.h>
#include <stdint.h>

#include "native.h"

static inline int32_t to_int32_x86(double r)
{
    /* r integral: out of range and NaN give INT32_MIN, as cvttss2si / cvtps2dq */
    return fabs(r) < 2147483648.0 ? (int32_t)r : INT32_MIN;
}

static inline double round_half_away(double v)
{
    /* std::round, exactly: the fraction v - trunc(v) is exact in floating point */
    if (!(fabs(v) < 4503599627370496.0)) return v; /* 2^52: integral (or inf / NaN) */
    const double whole = (double)(int64_t)v, frac = v - whole;
    return frac >= 0.5 ? whole + 1.0 : (frac <= -0.5 ? whole - 1.0 : whole);
}

static inline int32_t add_zero_point(int32_t q, int32_t zp, int32_t lo, int32_t hi)
{
    int32_t v = (int32_t)(uint32_t)((uint32_t)q + (uint32_t)zp); /* wraps, as vaddq_s32 */
    return v < lo ? lo : (v > hi ? hi : v);
}

#define EL_QUANTIZE(NAME, T)                                                               \
    static void NAME(const struct el_quantize *p, int64_t begin, int64_t end)             \
    {                                                                                     \
        const float *restrict x = p->x;                                                   \
        T *restrict out = (T *)p->out;                                                    \
        const int32_t zp = p->zp, lo = p->lo, hi = p->hi;                                 \
        if (p->mode == EL_Q_XNN) {                                                        \
            const float scale = p->scale, flo = (float)(lo - zp), fhi = (float)(hi - zp); \
            const float magic = 12582912.0f; /* rint for |v| < 2^22, half to even */      \
            for (int64_t i = begin; i < end; i++) {                                       \
                float v = x[i] * scale;                                                   \
                v = v != v ? fhi : v;                                                     \
                v = v < flo ? flo : v;                                                    \
                v = v > fhi ? fhi : v;                                                    \
                out[i] = (T)((int32_t)((v + magic) - magic) + zp);                        \
            }                                                                             \
        } else if (p->mode == EL_Q_REFERENCE) {                                           \
            const float s = p->scale;                                                     \
            for (int64_t i = begin; i < end; i++) {                                       \
                const float v = x[i] / s; /* float32 division, then an exact rounding */  \
                out[i] = (T)add_zero_point(to_int32_x86(round_half_away(v)), zp, lo, hi); \
            }                                                                             \
        } else {                                                                          \
            const float inverse = p->scale;                                               \
            const int64_t split = p->split < end ? p->split : end;                        \
            for (int64_t i = begin; i < split; i++) {                                     \
                const double r = rint(x[i] * inverse); /* float32 product */              \
                out[i] = (T)add_zero_point(to_int32_x86(r), zp, lo, hi);                  \
            }                                                                             \
            for (int64_t i = split > begin ? split : begin; i < end; i++) {               \
                const double r = round_half_away((double)x[i] / p->scale64);              \
                out[i] = (T)add_zero_point(to_int32_x86(r), zp, lo, hi);                  \
            }                                                                             \
        }                                                                                 \
    }

EL_QUANTIZE(quantize_int8, int8_t)
EL_QUANTIZE(quantize_uint8, uint8_t)
EL_QUANTIZE(quantize_int16, int16_t)

void el_quantize(const struct el_quantize *p, int64_t begin, int64_t end)
{
    if (p->out_type == EL_Q_INT8) quantize_int8(p, begin, end);
    else if (p->out_type == EL_Q_UINT8) quantize_uint8(p, begin, end);
    else quantize_int16(p, begin, end);
}
