/* 256-entry table lookups: out[i] = table[bits of x[i]].
 *
 * Every int8 / uint8 op that maps one input value to one output value runs this way in
 * the numpy kernels too (requantize.apply_lut: LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU,
 * the RELUs, QUANTIZE's requantization, ...; and DEQUANTIZE's per-tensor
 * float(double(s) * (q - z)), whose 256 float32 results make a table of 4-byte
 * entries): the table is built in prepare by the kernel set's arithmetic (TFLite's
 * LUTPopulate, XNNPACK's table, gemmlowp fixed point), so a lookup gives its values bit
 * for bit. */
#include <stdint.h>

#include "native.h"

void el_lut8(const uint8_t *restrict x, const uint8_t *restrict table, uint8_t *restrict out,
             int64_t begin, int64_t end)
{
    for (int64_t i = begin; i < end; i++) out[i] = table[x[i]];
}

void el_lut32(const uint8_t *restrict x, const uint32_t *restrict table,
              uint32_t *restrict out, int64_t begin, int64_t end)
{
    for (int64_t i = begin; i < end; i++) out[i] = table[x[i]];
}
