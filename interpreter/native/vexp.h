/* e^x in forms compilers vectorize (no table, no branch, no float -> integer conversion):
 * the float kernels' transcendental core (transcend_f32.c), in two precisions.
 *
 * el_exp_core: in double. Rounded to float32 it is the correctly rounded e^x except where
 * e^x lies within about 2^-45 of a halfway point between two floats (the C library's expf
 * -- reference_ops' std::exp(float) -- differs from it only where expf itself misrounds).
 * 4 values per AVX2 instruction.
 *
 *   n = round(x / ln 2)          the 1.5 * 2^52 shift: t's low mantissa bits hold n
 *   r = x - n * ln 2             ln 2 in two parts (hi has 17 trailing zero bits, so
 *                                n * hi is exact for |n| < 2^17), |r| <= ln 2 / 2
 *   e^r                          Taylor to r^11 / 11! (truncation < 2^-47 relative)
 *   e^x = e^r * 2^n              2^n built from t's bits: (n + 1023) << 52
 *
 * x must lie in [EL_EXP_LO, EL_EXP_HI] or be NaN (el_exp_clamp): there n + 1023 stays a
 * normal exponent, e^x a normal double, and the conversion to float32 gives +inf above
 * 88.72, float32 denormals and 0 below -87.34 with one rounding. NaN gives NaN: t's bits
 * are then garbage, but e^r is NaN and NaN * anything is NaN. */
#ifndef EDGELITE_VEXP_H
#define EDGELITE_VEXP_H
#include <stdint.h>
#include <string.h>

#define EL_EXP_LO -120.0
#define EL_EXP_HI 100.0

/* x clamped to [EL_EXP_LO, EL_EXP_HI]; NaN stays NaN (both comparisons are false) */
static inline double el_exp_clamp(double x)
{
    x = x < EL_EXP_LO ? EL_EXP_LO : x;
    return x > EL_EXP_HI ? EL_EXP_HI : x;
}

static inline double el_exp_core(double x)
{
    const double shift = 0x1.8p52, log2e = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fefa0000p-1, ln2_lo = 0x1.cf79abc9e3b3ap-40;
    const double t = x * log2e + shift;
    const double n = t - shift;
    const double r = (x - n * ln2_hi) - n * ln2_lo;
    double p = 1.0 / 39916800.0;          /* 1 / 11! */
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    uint64_t bits;
    memcpy(&bits, &t, sizeof bits);
    bits = (bits + 1023u) << 52; /* t = shift + n: its low bits are n (two's complement) */
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* e^r of x's reduction, e^x = p * 2^n: returns p and sets *k = n (x already clamped) */
static inline float el_expf_poly(float x, int32_t *k)
{
    const float shift = 0x1.8p23f, log2e = 0x1.715476p0f;
    const float ln2_hi = 0x1.62e4p-1f, ln2_lo = 0x1.7f7d1cp-20f;
    const float t = x * log2e + shift;
    const float n = t - shift;
    const float r = (x - n * ln2_hi) - n * ln2_lo;
    float p = 0x1.6da764p-10f;
    p = p * r + 0x1.126fbap-7f;
    p = p * r + 0x1.555464p-5f;
    p = p * r + 0x1.555404p-3f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    memcpy(k, &t, sizeof *k);
    *k -= 0x4b400000; /* t's bits less the shift's: n */
    return p;
}

/* a float32 power of two from its biased exponent (1 .. 254) */
static inline float el_pow2f_biased(int32_t e)
{
    const uint32_t b = (uint32_t)e << 23;
    float s;
    memcpy(&s, &b, sizeof s);
    return s;
}

/* el_expf_core: the same steps in float32, 8 values per AVX2 instruction: at most 1 ulp
 * from the correctly rounded e^x (measured over every float32), for every x. x is clamped
 * to [-104, 89] first (NaN stays NaN); n = round(x / ln 2) then lies in [-150, 128], so
 * 2^n is applied as two normal factors 2^(n >> 1) * 2^(n - (n >> 1)): float32 denormal
 * results round once, overflow gives +inf. ln 2's high part has 9 trailing zero bits
 * (n * hi exact for |n| < 2^9); e^r is a degree-6 least-squares fit on [-ln2/2, ln2/2]
 * (relative error 2^-28). */
static inline float el_expf_core(float x)
{
    x = x < -104.0f ? -104.0f : x;
    x = x > 89.0f ? 89.0f : x;
    int32_t k;
    const float p = el_expf_poly(x, &k);
    const int32_t k1 = k >> 1, k2 = k - k1;
    return p * el_pow2f_biased(k1 + 127) * el_pow2f_biased(k2 + 127);
}

/* el_expf_core's value for x <= 40 (LOGISTIC's e^x, x <= 9), with fewer steps: x clamped
 * below only, and 2^n applied as 2^(n + 64) then 2^-64. n lies in [-150, 58], so 2^(n + 64)
 * is a normal float, p * 2^(n + 64) is exact, and the one rounding is the last product's --
 * into the denormals where e^x is one -- the same single rounding of p * 2^n as the core's
 * two factors: the same bits (checked over every float32 input of LOGISTIC, SSE2 and AVX2
 * builds). */
static inline float el_expf_core_low(float x)
{
    x = x < -104.0f ? -104.0f : x;
    int32_t k;
    const float p = el_expf_poly(x, &k);
    return p * el_pow2f_biased(k + 127 + 64) * 0x1p-64f;
}
#endif
