/* int8 / uint8 SOFTMAX of TFLite's optimized kernel (optimized_ops::Softmax with the
 * float table of PopulateSoftmaxLookupTable), as the numpy kernel computes it
 * (interpreter/kernels/softmax.py eval_table), per row of `depth` values:
 *
 *   e[c] = table[255 - max + q[c]]                 (float32 table of expf(-s * beta * v))
 *   S    = e[0] + e[1] + ...                       (float32, left to right)
 *   p[c] = e[c] * (1 / (S * out_scale))            (float32)
 *   out  = min(floor(p + 0.5), 255) + qmin         (p >= 0: the conversion floors)
 *
 * The reference kernel set's gemmlowp fixed-point softmax stays numpy. */
#include <stdint.h>

#include "native.h"

#define EL_SOFTMAX_ROWS(NAME, T)                                                           \
    static void NAME(const struct el_softmax *p, int64_t row_begin, int64_t row_end,      \
                     float *restrict exps)                                                \
    {                                                                                     \
        const int64_t depth = p->depth;                                                   \
        const float *restrict table = p->table;                                           \
        for (int64_t r = row_begin; r < row_end; r++) {                                   \
            const T *restrict x = (const T *)p->x + r * depth;                            \
            T *restrict out = (T *)p->out + r * depth;                                    \
            int32_t top = x[0];                                                           \
            for (int64_t c = 1; c < depth; c++) top = x[c] > top ? x[c] : top;            \
            float sum = 0.0f;                                                             \
            for (int64_t c = 0; c < depth; c++) {                                         \
                exps[c] = table[255 - top + x[c]];                                        \
                sum += exps[c];                                                           \
            }                                                                             \
            const float inverse = 1.0f / (sum * p->out_scale);                            \
            for (int64_t c = 0; c < depth; c++) {                                         \
                int32_t q = (int32_t)(exps[c] * inverse + 0.5f);                          \
                out[c] = (T)((q < 255 ? q : 255) + p->qmin);                              \
            }                                                                             \
        }                                                                                 \
    }

EL_SOFTMAX_ROWS(softmax_int8, int8_t)
EL_SOFTMAX_ROWS(softmax_uint8, uint8_t)

void el_softmax(const struct el_softmax *p, int64_t row_begin, int64_t row_end, float *exps)
{
    if (p->is_uint8) softmax_uint8(p, row_begin, row_end, exps);
    else softmax_int8(p, row_begin, row_end, exps);
}
