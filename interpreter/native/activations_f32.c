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
