/* 256-entry table lookups: out[i] = table[bits of x[i]].
 *
 * Every int8 / uint8 op that maps one input value to one output value runs this way in
 * the numpy kernels too (requantize.apply_lut: LOGISTIC, TANH, HARD_SWISH, LEAKY_RELU,
 * the RELUs, QUANTIZE's requantization, ...; and DEQUANTIZE's per-tensor
 * float(double(s) * (q - z)), whose 256 float32 results make a table of 4-byte
 * entries): the table is built in prepare by the kernel set's arithmetic (TFLite's
 * LUTPopulate, XNNPACK's table, gemmlowp fixed point), so a lookup gives its values bit
 * for bit.
 *
 * With AVX2 the byte table runs 32 values at a time as 16 in-register tables of 16 bytes
 * (vpshufb on the low nibble), each kept where the high nibble selects it -- the same
 * entries, looked up without a load per value. */
#include <stdint.h>

#include "native.h"

static void lut8_base(const uint8_t *restrict x, const uint8_t *restrict table,
                      uint8_t *restrict out, int64_t begin, int64_t end)
{
    for (int64_t i = begin; i < end; i++) out[i] = table[x[i]];
}

#ifdef EL_X86_AVX2
#include <immintrin.h>

EL_TARGET_AVX2 static void lut8_avx2(const uint8_t *restrict x, const uint8_t *restrict table,
                                     uint8_t *restrict out, int64_t begin, int64_t end)
{
    __m256i rows[16];
    for (int k = 0; k < 16; k++)
        rows[k] = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(table + 16 * k)));
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    int64_t i = begin;
    for (; i + 32 <= end; i += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(x + i));
        const __m256i low = _mm256_and_si256(v, nibble);
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
        __m256i result = _mm256_setzero_si256();
        for (int k = 0; k < 16; k++) {
            const __m256i mine = _mm256_cmpeq_epi8(high, _mm256_set1_epi8((char)k));
            result = _mm256_or_si256(
                result, _mm256_and_si256(mine, _mm256_shuffle_epi8(rows[k], low)));
        }
        _mm256_storeu_si256((__m256i *)(out + i), result);
    }
    lut8_base(x, table, out, i, end);
}
#endif

void el_lut8(const uint8_t *restrict x, const uint8_t *restrict table, uint8_t *restrict out,
             int64_t begin, int64_t end)
{
#ifdef EL_X86_AVX2
    if (el_have_avx2()) {
        lut8_avx2(x, table, out, begin, end);
        return;
    }
#endif
    lut8_base(x, table, out, begin, end);
}

void el_lut32(const uint8_t *restrict x, const uint32_t *restrict table,
              uint32_t *restrict out, int64_t begin, int64_t end)
{
    for (int64_t i = begin; i < end; i++) out[i] = table[x[i]];
}
