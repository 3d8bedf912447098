/* The int8 / uint8 GEMM of FULLY_CONNECTED and CONV_2D with the requantization fused into
 * its output stage -- the integer core of reference_integer_ops::FullyConnected /
 * ConvPerChannel and reference_ops::FullyConnected / Conv (tensorflow/lite/kernels/
 * internal/reference/...), blocked like gemmlowp / XNNPACK's packed GEMMs:
 *
 *   acc[r, o] = bias[o] + sum_k (w[o, k] - zp_w) * (x[r, k] - zp_x)        int32
 *             = init[o] + sum_k (w[o, k] - zp_w) * x[r, k]
 *   init[o]   = bias[o] - zp_x * sum_k (w[o, k] - zp_w)         (prepare: column sums)
 *
 * so x is never re-centred; padding reads as zp_x, which the column sum cancels. All sums
 * are int32 with two's-complement wrap (unsigned in C, vpaddd in AVX2): the result is
 * wrap32(exact), which is what TFLite's int32 accumulator gives and what the numpy kernels
 * compute from their exact float sums (accumulator.py), so the outputs are identical.
 *
 * Weights are packed once (interpreter/kernels/common/native_gemm.py) into panels of NR = 16
 * output channels: for each pair of k, the 16 channels' two values side by side,
 * (K_pad / 2, 16, 2) int16 -- two 256-bit vectors per k pair. A block of rows of A is
 * widened to int16 (dense rows: FULLY_CONNECTED, 1x1 stride-1 CONV_2D; or im2col rows,
 * conv.c) into a small buffer; the micro-kernel computes an MR x 16 int32 tile over all
 * of K, starting from init: AVX2 where the CPU has it (chosen at run time, GCC / Clang),
 * else SSE2 (x86-64), NEON on ARM (gemm_neon.c), else generic C. The AVX2 kernel is
 * XNNPACK's qs8 "c2" scheme: vpmaddwd of the broadcast pair (x[k], x[k+1]) with a weight
 * vector adds two products per lane, exactly (|product| <= 255 * 255, so a pair sum < 2^17; no saturation). */
#include <stdint.h>
#include <string.h>

#include "native.h"

#define NR EL_GEMM_NR
#define MR EL_GEMM_MR

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define EL_X86_AVX2 1 /* GCC / Clang: AVX2 functions (target attribute), run if the CPU has it */
#include <immintrin.h>
#else
#define EL_X86_AVX2 0
#endif
#if defined(__SSE2__) || defined(_M_X64) || defined(_M_AMD64)
#define EL_SSE2 1 /* every x86-64 CPU */
#include <emmintrin.h>
#else
#define EL_SSE2 0
#endif

int el_gemm_avx2_available(void)
{
#if EL_X86_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

int el_gemm_best_isa(void)
{
    if (el_gemm_avx2_available()) return EL_ISA_AVX2;
#if EL_GEMM_NEON
    if (el_gemm_neon_available()) return EL_ISA_NEON;
#endif
    return EL_SSE2 ? EL_ISA_SSE2 : EL_ISA_GENERIC;
}

/* ---------------------------------------------------------------- micro-kernels */

/* The generic C tile (any compiler, any CPU), one row at a time so that the row's 16
 * sums stay in registers; unsigned sums wrap. The pair loads are stride 2, which NEON
 * reads with one vld2; x86-64 runs the SSE2 tile below instead. */
static void tile_generic(int64_t mr, const int16_t *restrict a, int64_t kp,
                         const int16_t *restrict w, const int32_t *restrict init,
                         int32_t *restrict tile)
{
    for (int64_t m = 0; m < mr; m++) {
        const int16_t *restrict x = a + m * kp;
        uint32_t acc[NR];
        for (int n = 0; n < NR; n++) acc[n] = (uint32_t)init[n];
        for (int64_t j = 0; j < kp / 2; j++) {
            const int32_t x0 = x[2 * j], x1 = x[2 * j + 1];
            const int16_t *restrict wj = w + j * 2 * NR;
            for (int n = 0; n < NR; n++)
                acc[n] += (uint32_t)(x0 * wj[2 * n] + x1 * wj[2 * n + 1]);
        }
        for (int n = 0; n < NR; n++) tile[m * NR + n] = (int32_t)acc[n];
    }
}

static inline int32_t load_pair(const int16_t *p)
{
    int32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

#if EL_SSE2
/* x86-64's baseline: the AVX2 scheme below on 128-bit vectors (pmaddwd), two rows at a
 * time (8 accumulators + 4 weight vectors fit the 16 xmm registers). */
#define SSE2_TILE(NAME, ROWS)                                                              \
    static void NAME(const int16_t *restrict a, int64_t kp, const int16_t *restrict w,     \
                     const int32_t *restrict init, int32_t *restrict tile)                 \
    {                                                                                      \
        __m128i acc[ROWS][4];                                                              \
        for (int m = 0; m < ROWS; m++)                                                     \
            for (int q = 0; q < 4; q++)                                                    \
                acc[m][q] = _mm_loadu_si128((const __m128i *)(init + 4 * q));              \
        for (int64_t j = 0; j < kp / 2; j++) {                                             \
            __m128i wv[4];                                                                 \
            for (int q = 0; q < 4; q++)                                                    \
                wv[q] = _mm_loadu_si128((const __m128i *)(w + j * 2 * NR + 8 * q));        \
            for (int m = 0; m < ROWS; m++) {                                               \
                const __m128i x = _mm_set1_epi32(load_pair(a + m * kp + 2 * j));           \
                for (int q = 0; q < 4; q++)                                                \
                    acc[m][q] = _mm_add_epi32(acc[m][q], _mm_madd_epi16(x, wv[q]));        \
            }                                                                              \
        }                                                                                  \
        for (int m = 0; m < ROWS; m++)                                                     \
            for (int q = 0; q < 4; q++)                                                    \
                _mm_storeu_si128((__m128i *)(tile + m * NR + 4 * q), acc[m][q]);           \
    }

SSE2_TILE(tile_sse2_1, 1)
SSE2_TILE(tile_sse2_2, 2)

static void tile_sse2(int64_t mr, const int16_t *a, int64_t kp, const int16_t *w,
                      const int32_t *init, int32_t *tile)
{
    int64_t m = 0;
    for (; m + 2 <= mr; m += 2) tile_sse2_2(a + m * kp, kp, w, init, tile + m * NR);
    if (m < mr) tile_sse2_1(a + m * kp, kp, w, init, tile + m * NR);
}
#endif

#if EL_X86_AVX2
/* ROWS rows x 16 channels: per k pair two weight vectors, per row one broadcast pair and
 * two vpmaddwd + vpaddd; 2 * ROWS accumulators stay in registers. */
#define AVX2_TILE(NAME, ROWS)                                                              \
    __attribute__((target("avx2"))) static void NAME(                                      \
        const int16_t *restrict a, int64_t kp, const int16_t *restrict w,                  \
        const int32_t *restrict init, int32_t *restrict tile)                              \
    {                                                                                      \
        __m256i lo[ROWS], hi[ROWS];                                                        \
        const __m256i init_lo = _mm256_loadu_si256((const __m256i *)init);                 \
        const __m256i init_hi = _mm256_loadu_si256((const __m256i *)(init + 8));           \
        for (int m = 0; m < ROWS; m++) { lo[m] = init_lo; hi[m] = init_hi; }               \
        for (int64_t j = 0; j < kp / 2; j++) {                                             \
            const __m256i w0 = _mm256_loadu_si256((const __m256i *)(w + j * 2 * NR));      \
            const __m256i w1 = _mm256_loadu_si256((const __m256i *)(w + j * 2 * NR + 16)); \
            for (int m = 0; m < ROWS; m++) {                                               \
                const __m256i x = _mm256_set1_epi32(load_pair(a + m * kp + 2 * j));        \
                lo[m] = _mm256_add_epi32(lo[m], _mm256_madd_epi16(x, w0));                 \
                hi[m] = _mm256_add_epi32(hi[m], _mm256_madd_epi16(x, w1));                 \
            }                                                                              \
        }                                                                                  \
        for (int m = 0; m < ROWS; m++) {                                                   \
            _mm256_storeu_si256((__m256i *)(tile + m * NR), lo[m]);                        \
            _mm256_storeu_si256((__m256i *)(tile + m * NR + 8), hi[m]);                    \
        }                                                                                  \
    }

AVX2_TILE(tile_avx2_1, 1)
AVX2_TILE(tile_avx2_2, 2)
AVX2_TILE(tile_avx2_3, 3)
AVX2_TILE(tile_avx2_4, 4)

/* 16 int32 outputs (two vectors, channel order) -> 8 bits with saturation (a no-op: the
 * values are clamped to the output type already), stored at dst (count <= 16 of them). */
__attribute__((target("avx2"))) static inline void store16(__m256i q0, __m256i q1,
                                                           int out_uint8, int8_t *dst,
                                                           int64_t count)
{
    /* packs works per 128-bit lane: restore the channel order across lanes */
    const __m256i q16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(q0, q1), 0xD8);
    const __m128i a = _mm256_castsi256_si128(q16), b = _mm256_extracti128_si256(q16, 1);
    const __m128i q8 = out_uint8 ? _mm_packus_epi16(a, b) : _mm_packs_epi16(a, b);
    if (count == NR) {
        _mm_storeu_si128((__m128i *)dst, q8);
    } else {
        int8_t bytes[NR];
        _mm_storeu_si128((__m128i *)bytes, q8);
        memcpy(dst, bytes, (size_t)count);
    }
}

/* XNNPACK's fp32 requantization of a tile, in registers: float(acc) * M, clamped to
 * [lo - zp, hi - zp], vcvtps2dq (round to nearest even, as rint), + zp. The same numbers
 * as requant.c's fp32_value, 16 channels at a time. */
__attribute__((target("avx2"))) static void fp32_tile_avx2(
    const struct el_stage *s, const int32_t *tile, int64_t mr, int64_t n0, int64_t count,
    int8_t *out, int64_t row_stride)
{
    float mult[NR] = {0};
    memcpy(mult, s->mult_f32 + n0, sizeof(float) * (size_t)count);
    const __m256 m0 = _mm256_loadu_ps(mult), m1 = _mm256_loadu_ps(mult + 8);
    const __m256 lo = _mm256_set1_ps((float)(s->lo - s->zp_out));
    const __m256 hi = _mm256_set1_ps((float)(s->hi - s->zp_out));
    const __m256i zp = _mm256_set1_epi32((int32_t)s->zp_out);
    for (int64_t m = 0; m < mr; m++) {
        __m256 v0 = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(tile + m * NR)));
        __m256 v1 = _mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(tile + m * NR + 8)));
        v0 = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v0, m0), lo), hi);
        v1 = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(v1, m1), lo), hi);
        store16(_mm256_add_epi32(_mm256_cvtps_epi32(v0), zp),
                _mm256_add_epi32(_mm256_cvtps_epi32(v1), zp), s->out_uint8,
                out + m * row_stride + n0, count);
    }
}

/* The low 32 bits of the 64-bit lanes of even (lanes 0, 2, ..) and odd (1, 3, ..)
 * products, back in one vector of 8 int32. */
__attribute__((target("avx2"))) static inline __m256i join_halves(__m256i even, __m256i odd)
{
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* gemmlowp SaturatingRoundingDoublingHighMul on 4 int64 products ab = a * b (|ab| < 2^62;
 * b is never INT32_MIN: QuantizeMultiplier's m < 2^31): (ab + nudge) / 2^31 truncating,
 * nudge = ab >= 0 ? 2^30 : 1 - 2^30. For ab < 0 the sum v = ab + 1 - 2^30 is negative and
 * truncation is ceil(v / 2^31) = floor((v + 2^31 - 1) / 2^31) = floor((ab + 2^30) / 2^31),
 * the ab >= 0 formula: one add and a shift (XNNPACK's gemmlowp requantization uses the same
 * identity). The quotient fits int32, so the low 32 bits of a logical shift by 31 are it. */
__attribute__((target("avx2"))) static inline __m256i srdhm64(__m256i ab)
{
    return _mm256_srli_epi64(_mm256_add_epi64(ab, _mm256_set1_epi64x(1LL << 30)), 31);
}

/* The low 32 bits of (p + 2^(t-1)) >> t (arithmetic), p = x * m in 4 int64 lanes, t in
 * [1, 62]: TFLITE_SINGLE_ROUNDING's MBQM. AVX2 has no 64-bit arithmetic shift; with
 * u = p + 2^(t-1) + 2^63 (the sign bit flipped: u >= 0 as unsigned), floor(v / 2^t) =
 * (u >> t, logical) - 2^(63-t). round = 2^(t-1) + 2^63; the 2^(63-t) term is subtracted
 * in 32 bits by the caller (el_fixed_planes' third plane holds its low 32 bits). */
__attribute__((target("avx2"))) static inline __m256i single64(__m256i p, __m256i round,
                                                              __m256i t)
{
    return _mm256_srlv_epi64(_mm256_add_epi64(p, round), t);
}

/* MultiplyByQuantizedMultiplier (requant.c's mbqm) on 8 lanes: m the int32 multipliers;
 * SINGLE: a holds t = 31 - shift, r the low 32 bits of 2^(63 - t); DOUBLE: a the left
 * shifts max(shift, 0) (wrapping), r the right shifts -min(shift, 0) and mask 2^r - 1 of
 * RoundingDivideByPOT (el_fixed_planes). */
__attribute__((target("avx2"))) static inline __m256i mbqm8(__m256i x, __m256i m, __m256i a,
                                                           __m256i r, __m256i mask, int single)
{
    const __m256i zero = _mm256_setzero_si256();
    if (single) { /* a: t = 31 - shift; r: the low 32 bits of 2^(63 - t) */
        const __m256i low = _mm256_set1_epi64x(0xFFFFFFFFLL), one = _mm256_set1_epi64x(1);
        const __m256i t_even = _mm256_and_si256(a, low), t_odd = _mm256_srli_epi64(a, 32);
        const __m256i top = _mm256_set1_epi64x(INT64_MIN);
        const __m256i even = single64(
            _mm256_mul_epi32(x, m),
            _mm256_or_si256(_mm256_sllv_epi64(one, _mm256_sub_epi64(t_even, one)), top), t_even);
        const __m256i odd = single64(
            _mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(m, 32)),
            _mm256_or_si256(_mm256_sllv_epi64(one, _mm256_sub_epi64(t_odd, one)), top), t_odd);
        return _mm256_sub_epi32(join_halves(even, odd), r);
    }
    x = _mm256_sllv_epi32(x, a);
    const __m256i q = join_halves(
        srdhm64(_mm256_mul_epi32(x, m)),
        srdhm64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), _mm256_srli_epi64(m, 32))));
    /* RoundingDivideByPOT: (q >> r) + (remainder > (mask >> 1) + (q < 0)) */
    const __m256i rem = _mm256_and_si256(q, mask);
    const __m256i threshold = _mm256_sub_epi32(_mm256_srli_epi32(mask, 1),
                                               _mm256_cmpgt_epi32(zero, q));
    return _mm256_sub_epi32(_mm256_srav_epi32(q, r), _mm256_cmpgt_epi32(rem, threshold));
}

/* TFLite's fixed-point requantization of a tile (the reference and micro kernel sets):
 * MBQM, clamped to [lo - zp, hi - zp] (no int32 overflow from adding zp first), + zp. The
 * parameters are loaded from the stage's planes, prepared once (el_fixed_planes). */
__attribute__((target("avx2"))) static void fixed_tile_avx2(
    const struct el_stage *s, const int32_t *tile, int64_t mr, int64_t n0, int64_t count,
    int8_t *out, int64_t row_stride)
{
    const int32_t *pl = s->planes + n0 * EL_FIXED_PLANES; /* n0: a multiple of NR */
    __m256i v[EL_FIXED_PLANES][2];
    for (int k = 0; k < EL_FIXED_PLANES; k++)
        for (int h = 0; h < 2; h++)
            v[k][h] = _mm256_loadu_si256((const __m256i *)(pl + k * NR + 8 * h));
    const int single = s->kind == EL_SINGLE;
    const __m256i lo = _mm256_set1_epi32((int32_t)(s->lo - s->zp_out));
    const __m256i hi = _mm256_set1_epi32((int32_t)(s->hi - s->zp_out));
    const __m256i zp = _mm256_set1_epi32((int32_t)s->zp_out);
    for (int64_t m = 0; m < mr; m++) {
        __m256i q[2];
        for (int h = 0; h < 2; h++) {
            const __m256i x = _mm256_loadu_si256((const __m256i *)(tile + m * NR + 8 * h));
            q[h] = mbqm8(x, v[0][h], v[1][h], v[2][h], v[3][h], single);
            q[h] = _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(q[h], lo), hi), zp);
        }
        store16(q[0], q[1], s->out_uint8, out + m * row_stride + n0, count);
    }
}

static void tile_avx2(int64_t mr, const int16_t *a, int64_t kp, const int16_t *w,
                      const int32_t *init, int32_t *tile)
{
    switch (mr) {
    case 4: tile_avx2_4(a, kp, w, init, tile); break;
    case 3: tile_avx2_3(a, kp, w, init, tile); break;
    case 2: tile_avx2_2(a, kp, w, init, tile); break;
    default: tile_avx2_1(a, kp, w, init, tile); break;
    }
}
#endif

typedef void (*tile_fn)(int64_t mr, const int16_t *a, int64_t kp, const int16_t *w,
                        const int32_t *init, int32_t *tile);

/* ---------------------------------------------------------------- rows of A */

/* Dense rows r .. r + count of (rows, K) int8 / uint8, widened to int16 rows of stride
 * k_pad (the odd k's partner is 0: its packed weight is 0 too). */
static void dense_rows(const struct el_gemm *g, int64_t row, int64_t count, int16_t *a)
{
    const int64_t k = g->k, kp = g->k_pad;
    for (int64_t i = 0; i < count; i++) {
        int16_t *restrict dst = a + i * kp;
        if (g->x_uint8) {
            const uint8_t *restrict src = (const uint8_t *)g->x + (row + i) * k;
            for (int64_t j = 0; j < k; j++) dst[j] = src[j];
        } else {
            const int8_t *restrict src = (const int8_t *)g->x + (row + i) * k;
            for (int64_t j = 0; j < k; j++) dst[j] = src[j];
        }
        for (int64_t j = k; j < kp; j++) dst[j] = 0;
    }
}

/* ---------------------------------------------------------------- driver */

typedef void (*stage_fn)(const struct el_stage *s, const int32_t *tile, int64_t mr,
                         int64_t n0, int64_t count, int8_t *out, int64_t row_stride);

/* native.h: the fixed-point stages' planes, prepared once per op. fixed_tile_avx2 and
 * el_gemm_stage_neon take multipliers in [0, 2^31) (QuantizeMultiplier's) and shifts whose
 * 32- / 64-bit vector shifts stay in range (DOUBLE: -31..30; SINGLE: t = 31 - shift in
 * 1..62); padding channels get multiplier 0 and shift 0 (DOUBLE) / t = 31 (SINGLE). */
int el_fixed_planes(int kind, const int64_t *mult, const int64_t *shift, int64_t width,
                    int32_t *planes)
{
    if (kind != EL_DOUBLE && kind != EL_SINGLE) return 0;
    for (int64_t c = 0; c < width; c++)
        if (mult[c] < 0 || mult[c] > INT32_MAX || shift[c] < -31 || shift[c] > 30) return 0;
    const int64_t padded = (width + NR - 1) / NR * NR;
    for (int64_t c = 0; c < padded; c++) {
        const int32_t m = c < width ? (int32_t)mult[c] : 0;
        const int32_t sh = c < width ? (int32_t)shift[c] : 0;
        const int32_t left = sh > 0 ? sh : 0, right = sh > 0 ? 0 : -sh, t = 31 - sh;
        int32_t *at = planes + (c / NR) * EL_FIXED_PLANES * NR + c % NR;
        at[0] = m;
        at[NR] = kind == EL_SINGLE ? t : left;
        /* SINGLE: the low 32 bits of 2^(63 - t) (single64), nonzero for t >= 32 */
        at[2 * NR] = kind != EL_SINGLE ? right : t >= 32 ? (int32_t)(1u << (63 - t)) : 0;
        at[3 * NR] = kind == EL_SINGLE ? 0 : (int32_t)((1u << right) - 1u);
    }
    return 1;
}

/* Output rows [row_begin, row_end), channels of panels [panel_begin, panel_end): blocks
 * of g->block rows of A are widened into a (a buffer of block * k_pad int16, one per
 * thread) and, panel by panel, multiplied by the panel's weights -- the panel (16 * K_pad
 * int16) stays in cache across the block's tiles, the block across the panels. Each
 * MR x 16 tile goes through the output stage at once (AVX2 / NEON: in registers, fp32 or
 * fixed point; else requant.c's per-value code). */
void el_gemm_rows(const struct el_gemm *g, int64_t row_begin, int64_t row_end,
                  int64_t panel_begin, int64_t panel_end, int16_t *a)
{
    tile_fn tile_kernel = tile_generic;
    stage_fn fused = NULL; /* an AVX2 output stage for whole tiles */
#if EL_SSE2
    if (g->isa >= EL_ISA_SSE2) tile_kernel = tile_sse2;
#endif
#if EL_X86_AVX2
    if (g->isa >= EL_ISA_AVX2 && el_gemm_avx2_available()) {
        tile_kernel = tile_avx2;
        if (g->stage->kind == EL_FP32) fused = fp32_tile_avx2;
        else if (g->stage->planes) fused = fixed_tile_avx2;
    }
#endif
#if EL_GEMM_NEON
    if (g->isa >= EL_ISA_NEON && el_gemm_neon_available()) {
        tile_kernel = el_gemm_tile_neon;
        if (g->stage->kind == EL_FP32 || g->stage->planes) fused = el_gemm_stage_neon;
    }
#endif
    const int64_t kp = g->k_pad, o = g->o;
    int32_t tile[MR * NR];
    for (int64_t b0 = row_begin; b0 < row_end; b0 += g->block) {
        const int64_t rows = row_end - b0 < g->block ? row_end - b0 : g->block;
        if (g->conv) el_conv_rows(g->conv, b0, rows, a, kp);
        else dense_rows(g, b0, rows, a);
        for (int64_t p = panel_begin; p < panel_end; p++) {
            const int16_t *w = g->panels + p * kp * NR;
            const int64_t n0 = p * NR, count = o - n0 < NR ? o - n0 : NR;
            for (int64_t m0 = 0; m0 < rows; m0 += MR) {
                const int64_t mr = rows - m0 < MR ? rows - m0 : MR;
                tile_kernel(mr, a + m0 * kp, kp, w, g->init + n0, tile);
                int8_t *out = (int8_t *)g->stage->out + (b0 + m0) * o;
                if (fused) {
                    fused(g->stage, tile, mr, n0, count, out, o);
                    continue;
                }
                for (int64_t i = 0; i < mr; i++)
                    el_stage_int32(g->stage, tile + i * NR, n0, count, out + i * o);
            }
        }
    }
}

/* The tile output stage above for other kernels (depthwise.c): native.h el_tile_stage. */
static void tile_stage_generic(const struct el_stage *s, const int32_t *tile, int64_t mr,
                               int64_t n0, int64_t count, int8_t *out, int64_t row_stride)
{
    for (int64_t i = 0; i < mr; i++)
        el_stage_int32(s, tile + i * NR, n0, count, out + i * row_stride);
}

el_tile_stage_fn el_tile_stage(const struct el_stage *s, int isa)
{
#if EL_X86_AVX2
    if (isa >= EL_ISA_AVX2 && el_gemm_avx2_available()) {
        if (s->kind == EL_FP32) return fp32_tile_avx2;
        if (s->planes) return fixed_tile_avx2;
    }
#else
    (void)isa;
#endif
    return tile_stage_generic;
}
