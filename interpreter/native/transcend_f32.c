/* float32 LOGISTIC, TANH, EXP, ELU, GELU (and HARD_SWISH, plain arithmetic) over values
 * [begin, end), and SOFTMAX over rows, on vexp.h's vectorized e^x.
 * LOGISTIC and EXP, the ones large models run, take the float32 core (8 values per AVX2
 * instruction, within 1 ulp of e^x) and the reference kernel's own float32 steps
 * (LOGISTIC's 1 + e, then 1 / .); TANH and ELU compute in double (tanh and expm1 near 0
 * need it: e^x - 1 cancels) and round once to float32. Accuracy against LiteRT's two
 * kernel sets (both directions of every special value exact): docs/native-float.md.
 *
 * Every loop is branch-free (selects only) so the compiler vectorizes it; GCC does so only
 * when a float comparison may be evaluated speculatively, hence no-trapping-math for this
 * file (no kernel reads the floating-point exception flags). Each loop is built twice on
 * x86-64, baseline (SSE2) and AVX2 (EL_TARGET_AVX2), and picked at run time; both do the
 * same IEEE double arithmetic (no FMA: -std=c11 does not contract; an FMA build measured
 * no faster), so the two give identical floats. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "native.h"
#include "native_float.h"
#include "threadpool.h"
#include "vexp.h"

/* reference_ops::Logistic's cut-offs (reference/logistic.h) */
#define LOGISTIC_UPPER 16.619047164916992188f
#define LOGISTIC_LOWER -9.0f
/* below these |x|, tanh(x) rounds to x and expm1(x) is its cubic Taylor polynomial */
#define TANH_TINY 0x1p-13f
#define EXPM1_SMALL 0x1p-12f

/* reference_ops::Logistic: x > upper -> 1; x < -9 -> expf(x); else 1 / (1 + expf(-x)) in
 * float32. NaN: every comparison is false, e^NaN is NaN. */
static inline float logistic_1(float v)
{
    const float e = el_expf_core_low(v < LOGISTIC_LOWER ? v : -v); /* its argument <= 9 */
    const float mid = 1.0f / (1.0f + e);
    return v > LOGISTIC_UPPER ? 1.0f : v < LOGISTIC_LOWER ? e : mid;
}

/* LOGISTIC then MUL(x, LOGISTIC(x)) -- swish / SiLU, fused at allocate
 * (interpreter/fused_steps.py): the two ops' float32 operations, so their bits */
static inline float swish_1(float v) { return v * logistic_1(v); }

/* std::tanh: tanh(z) = 1 - 2 / (e^2z + 1) for z = |x| in double (z clamped to 10, where
 * tanh is 1 in float32), x itself below 2^-13; the sign copied back (tanh(-0) = -0,
 * NaN stays NaN). */
static inline float tanh_1(float v)
{
    const float z = fabsf(v);
    const double zc = z > 10.0f ? 10.0 : (double)z;
    const double t = 1.0 - 2.0 / (el_exp_core(2.0 * zc) + 1.0);
    return copysignf(z < TANH_TINY ? z : (float)t, v);
}

/* std::exp */
static inline float exp_1(float v) { return el_expf_core(v); }

/* reference/elu.h: x < 0 ? std::expm1(x) : x; expm1 as e^x - 1 in double, or d + d^2 / 2
 * + d^3 / 6 for |x| < 2^-12 (relative error < 2^-38 either way) */
static inline float elu_1(float v)
{
    const double d = el_exp_clamp((double)v);
    const double em = el_exp_core(d) - 1.0;
    const double small = d * (1.0 + d * (0.5 + d * (1.0 / 6.0)));
    return v < 0.0f ? (float)(v > -EXPM1_SMALL ? small : em) : v;
}

/* reference/hard_swish.h: x * min(6, max(0, x + 3)) / 6, left to right in float32 (the
 * numpy kernel's steps too); plain arithmetic, here for the one vectorized pass. NaN stays
 * NaN, -inf gives NaN (-inf * 0) as in the reference. */
static inline float hard_swish_1(float v)
{
    float r = v + 3.0f;
    r = r < 0.0f ? 0.0f : r;
    r = r > 6.0f ? 6.0f : r;
    return v * r / 6.0f;
}

/* reference/gelu.h, approximate: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) in the
 * reference's float32 order (0.5 x taken first, so x up to FLT_MAX stays finite), tanh as
 * above */
static inline float gelu_tanh_1(float v)
{
    float o = 0.044715f * v;
    o = o * v;
    o = o * v;
    o = 0.7978845608028654f * (v + o); /* float32(sqrt(2 / pi)) */
    return (0.5f * v) * (1.0f + tanh_1(o));
}

/* reference/gelu.h, exact: 0.5 x erfc(-x / sqrt 2), erfc as the numpy kernel's libm.erfc
 * (Numerical Recipes' erfcc, relative error < 1.2e-7) in double on vexp.h's double e^x */
static inline float gelu_erfc_1(float v)
{
    const double x = (double)v, a = x * -0.70710678118654757; /* -sqrt(0.5) */
    const double z = fabs(a), t = 1.0 / (1.0 + 0.5 * z);
    double p = 0.17087277;
    p = p * t - 0.82215223;
    p = p * t + 1.48851587;
    p = p * t - 1.13520398;
    p = p * t + 0.27886807;
    p = p * t - 0.18628806;
    p = p * t + 0.09678418;
    p = p * t + 0.37409196;
    p = p * t + 1.00002368;
    p = p * t - 1.26551223;
    const double ans = t * el_exp_core(el_exp_clamp(-z * z + p));
    return (float)(0.5 * x * (a >= 0.0 ? ans : 2.0 - ans));
}

#define EL_UNARY_LOOP(name, fn, attr)                                                       \
    attr static void name(const float *restrict x, float *restrict out, int64_t begin,      \
                          int64_t end)                                                      \
    {                                                                                       \
        for (int64_t i = begin; i < end; i++) out[i] = fn(x[i]);                            \
    }

#ifdef EL_X86_AVX2
#define EL_UNARY(name, fn)                                                                  \
    EL_UNARY_LOOP(name##_base, fn, )                                                        \
    EL_UNARY_LOOP(name##_avx2, fn, EL_TARGET_AVX2)                                          \
    void name(const float *x, float *out, int64_t begin, int64_t end)                       \
    {                                                                                       \
        if (el_have_avx2()) name##_avx2(x, out, begin, end);                                \
        else name##_base(x, out, begin, end);                                               \
    }
#else
#define EL_UNARY(name, fn)                                                                  \
    EL_UNARY_LOOP(name##_base, fn, )                                                        \
    void name(const float *x, float *out, int64_t begin, int64_t end)                       \
    {                                                                                       \
        name##_base(x, out, begin, end);                                                    \
    }
#endif

EL_UNARY(el_logistic_f32, logistic_1)
EL_UNARY(el_tanh_f32, tanh_1)
EL_UNARY(el_exp_f32, exp_1)
EL_UNARY(el_elu_f32, elu_1)
EL_UNARY(el_hard_swish_f32, hard_swish_1)
EL_UNARY(el_swish_f32, swish_1)
EL_UNARY(el_gelu_tanh_f32, gelu_tanh_1)
EL_UNARY(el_gelu_erfc_f32, gelu_erfc_1)

/* swish over a convolution's output rows in place (EL_ACT_SWISH): swish_1 per value, as
 * el_swish_f32 (the same operations, so the same bits; no restrict: v is read and written) */
#define EL_INPLACE_LOOP(name, fn, attr)                                                     \
    attr static void name(float *v, int64_t n)                                              \
    {                                                                                       \
        for (int64_t i = 0; i < n; i++) v[i] = fn(v[i]);                                    \
    }

EL_INPLACE_LOOP(swish_inplace_base, swish_1, )
#ifdef EL_X86_AVX2
EL_INPLACE_LOOP(swish_inplace_avx2, swish_1, EL_TARGET_AVX2)
#else
#define swish_inplace_avx2 swish_inplace_base
#endif

void el_swish_inplace_f32(float *v, int64_t n)
{
    if (el_have_avx2()) swish_inplace_avx2(v, n);
    else swish_inplace_base(v, n);
}

/* float32 SOFTMAX -- reference_ops::Softmax (reference/softmax.h) over rows [r0, r1) of
 * depth values: m = the row's max (std::max: NaN never wins, from -FLT_MAX), e_c =
 * expf((x_c - m) * beta), out_c = e_c / sum(e). The max and the sum take 8 partial lanes
 * so they vectorize (the max is exact in any order; the sum's order differs from the
 * reference's left-to-right float sum by rounding only). */
#define EL_LANES 8
#define EL_SOFTMAX_ROWS(name, attr)                                                         \
    attr static void name(const struct el_softmax_f32 *p, int64_t r0, int64_t r1)          \
    {                                                                                       \
        const int64_t depth = p->depth;                                                     \
        for (int64_t r = r0; r < r1; r++) {                                                 \
            const float *restrict in = p->x + r * depth;                                    \
            float *restrict o = p->out + r * depth;                                         \
            float lane[EL_LANES], m = -FLT_MAX, sum = 0.0f;                                 \
            int64_t c = 0;                                                                  \
            for (int k = 0; k < EL_LANES; k++) lane[k] = -FLT_MAX;                          \
            for (; c + EL_LANES <= depth; c += EL_LANES)                                    \
                for (int k = 0; k < EL_LANES; k++)                                          \
                    lane[k] = lane[k] < in[c + k] ? in[c + k] : lane[k];                    \
            for (; c < depth; c++) m = m < in[c] ? in[c] : m;                               \
            for (int k = 0; k < EL_LANES; k++) m = m < lane[k] ? lane[k] : m;               \
            for (c = 0; c < depth; c++) o[c] = el_expf_core((in[c] - m) * p->beta);         \
            for (int k = 0; k < EL_LANES; k++) lane[k] = 0.0f;                              \
            for (c = 0; c + EL_LANES <= depth; c += EL_LANES)                               \
                for (int k = 0; k < EL_LANES; k++) lane[k] += o[c + k];                     \
            for (; c < depth; c++) sum += o[c];                                             \
            for (int k = 0; k < EL_LANES; k++) sum += lane[k];                              \
            for (c = 0; c < depth; c++) o[c] = o[c] / sum;                                  \
        }                                                                                   \
    }

EL_SOFTMAX_ROWS(softmax_base, )
#ifdef EL_X86_AVX2
EL_SOFTMAX_ROWS(softmax_avx2, EL_TARGET_AVX2)
#else
#define softmax_avx2 softmax_base
#endif

void el_softmax_f32(const struct el_softmax_f32 *p, int64_t r0, int64_t r1)
{
    if (el_have_avx2()) softmax_avx2(p, r0, r1);
    else softmax_base(p, r0, r1);
}

/* The steps split their rows / values into tasks on the C pool; every value's result is
 * independent of where a task starts (the kernels are per value, or per row), so the bits
 * do not depend on the thread count. */
static void softmax_task(void *ctx, int64_t task, int worker)
{
    const struct el_softmax_f32 *p = ctx;
    (void)worker;
    el_softmax_f32(p, el_part(0, p->rows, p->tasks, task, 1),
                   el_part(0, p->rows, p->tasks, task + 1, 1));
}

int el_softmax_f32_step(void *args)
{
    const struct el_softmax_f32 *p = args;
    if (p->tasks > 1) el_pool_run(p->threads, p->tasks, softmax_task, args);
    else el_softmax_f32(p, 0, p->rows);
    return 0;
}

static void unary_task(void *ctx, int64_t task, int worker)
{
    const struct el_unary_f32 *u = ctx;
    (void)worker;
    u->fn(u->x, u->out, el_part(0, u->count, u->tasks, task, 64),
          el_part(0, u->count, u->tasks, task + 1, 64));
}

int el_unary_f32_step(void *args)
{
    const struct el_unary_f32 *u = args;
    if (u->tasks > 1) el_pool_run(u->threads, u->tasks, unary_task, args);
    else u->fn(u->x, u->out, 0, u->count);
    return 0;
}
