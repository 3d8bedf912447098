/* float32 LOGISTIC -- reference_ops::Logistic (tensorflow/lite/kernels/internal/reference/
 * logistic.h), one pass:
 *
 *   x > 16.619047164916992188  ->  1
 *   x < -9                     ->  expf(x)
 *   otherwise                  ->  1 / (1 + expf(-x))
 *
 * with the C library's expf, as the reference kernel's std::exp(float); NaN stays NaN (both
 * comparisons are false). The numpy kernel (kernels/activations.py) computes the same
 * branches with numpy's exp, which may differ from expf by an ulp. */
#include <math.h>
#include <stdint.h>

#include "native.h"
#include "native_float.h"

#define LOGISTIC_UPPER 16.619047164916992188f
#define LOGISTIC_LOWER -9.0f

void el_logistic_f32(const float *restrict x, float *restrict out, int64_t begin, int64_t end)
{
    for (int64_t i = begin; i < end; i++) {
        const float v = x[i];
        if (v > LOGISTIC_UPPER) out[i] = 1.0f;
        else if (v < LOGISTIC_LOWER) out[i] = expf(v);
        else out[i] = 1.0f / (1.0f + expf(-v));
    }
}

int el_logistic_f32_step(void *args)
{
    const struct el_unary_f32 *u = args;
    el_logistic_f32(u->x, u->out, 0, u->count);
    return 0;
}

/* A float kernel's output stage in one pass: out = clamp(out + bias[i % width]) over count
 * values (bias NULL: none; clamp 0: none), the numpy stage's formulas in its order (add,
 * then max, then min; NaN stays NaN) -- conv.py's _finish after the BLAS matmul. Built for
 * baseline x86-64 and AVX2, picked at run time. */
#define EL_BIAS_ACT(name, attr)                                                             \
    attr static void name(float *restrict out, int64_t count, const float *restrict bias,   \
                          int64_t width, int clamp, float lo, float hi)                     \
    {                                                                                       \
        for (int64_t r = 0; r < count; r += width) {                                        \
            float *restrict row = out + r;                                                  \
            const int64_t n = count - r < width ? count - r : width;                        \
            if (bias)                                                                       \
                for (int64_t i = 0; i < n; i++) row[i] += bias[i];                          \
            if (clamp)                                                                      \
                for (int64_t i = 0; i < n; i++) {                                           \
                    float v = row[i] < lo ? lo : row[i];                                    \
                    row[i] = v > hi ? hi : v;                                               \
                }                                                                           \
        }                                                                                   \
    }

EL_BIAS_ACT(bias_act_base, )
#ifdef EL_X86_AVX2
EL_BIAS_ACT(bias_act_avx2, EL_TARGET_AVX2)
#else
#define bias_act_avx2 bias_act_base
#endif

void el_bias_act_f32(float *out, int64_t count, const float *bias, int64_t width, int clamp,
                     float lo, float hi)
{
    if (!bias) width = count > 0 ? count : 1;
    if (el_have_avx2()) bias_act_avx2(out, count, bias, width, clamp, lo, hi);
    else bias_act_base(out, count, bias, width, clamp, lo, hi);
}
