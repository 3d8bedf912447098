/* int8 / uint8 DEPTHWISE_CONV_2D in one pass: integer taps, then the requantization fused
 * per tile -- reference_integer_ops::DepthwiseConvPerChannel (int8) and
 * reference_ops::DepthwiseConv (uint8), tensorflow/lite/kernels/internal/reference/
 * integer_ops/depthwise_conv.h and depthwiseconv_uint8.h, arranged like XNNPACK's
 * qs8 / qu8 dwconv micro-kernels:
 *
 *   acc[n, y, x, o] = bias[o] + sum_{ky, kx} (in[n, iy, ix, o / M] - zp_x) * (w[ky, kx, o] - zp_w)
 *                   = init[o] + sum_{ky, kx} in[n, iy, ix, o / M] * (w[ky, kx, o] - zp_w)
 *   init[o]         = bias[o] - zp_x * sum_{ky, kx} (w[ky, kx, o] - zp_w)        (prepare)
 *
 * iy = y * sh + ky * dh - pad_t, ix = x * sw + kx * dw - pad_l. A tap in the padding reads
 * zp_x, which adds (zp_x - zp_x) * w = 0 once init's term is in: TFLite's skipped tap. All
 * sums are int32 with two's-complement wrap (vpaddd / paddd, unsigned in C): wrap32 of
 * the exact value, what TFLite's int32 accumulator gives and what the numpy kernel gets from
 * its exact float sums (accumulator.py). Then the output stage of gemm.c / requant.c (the
 * numpy stage's formulas) writes int8 / uint8.
 *
 * Lines: each input row (n, iy) the current output row reads is widened once to int16 into
 * a line of line_w positions (x = -pad_l ..) of o_pad values, input channel c repeated M
 * times (channel o = c * M + m), the padding positions zp_x, the channels past O 0. A
 * thread keeps KH lines (tagged with their row, reused by the next output row) and one
 * line of zp_x for rows outside the image. Every tap is then a plain load.
 *
 * Weights (prepare, kernels/common/native_depthwise.py), for the SIMD tiles: per block of
 * 16 output channels,
 * per pair of taps (a, b) (an odd last tap pairs with a zero weight), 32 int16 -- the two
 * taps' weights of channels interleaved in AVX2 vpunpck{l,h}wd order: channels 0-3, 8-11
 * (the "lo" vector), then 4-7, 12-15 ("hi"). vpmaddwd of the interleaved inputs with them
 * adds both taps' products per channel (|x| <= 255, |w| <= 255: no saturation). The
 * portable C tile reads them in channel order, (KH * KW, o_pad). */
#include <stdint.h>
#include <string.h>

#include "native.h"
#include "threadpool.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define DW_AVX2 1
#include <immintrin.h>
#else
#define DW_AVX2 0
#endif
#if defined(__SSE2__) || defined(_M_X64) || defined(_M_AMD64)
#define DW_SSE2 1
#include <emmintrin.h>
#else
#define DW_SSE2 0
#endif

#define BLOCK 16 /* output channels per block */
#define PIXELS 4 /* output pixels per tile of the tap kernels */
#define STAGED 16 /* output pixels per call of the output stage (its per-call set-up:
                   * 16 channels' multipliers and shifts, spread over more pixels) */

/* Input row (n, iy) widened into a line (see above): the positions inside the image
 * [p0, p1), padding zp_x around them. With M = 1 and no channel tail the inside is one
 * contiguous run of the input. */
static void fill_line(const struct el_dw *d, int64_t n, int64_t iy, int16_t *restrict line)
{
    const int64_t C = d->c, M = d->m, O = d->o, OP = d->o_pad, LW = d->line_w;
    const int64_t p0 = d->pad_l < LW ? d->pad_l : LW;
    const int64_t p1 = d->pad_l + d->w < LW ? d->pad_l + d->w : LW;
    const int16_t zp = (int16_t)d->zp_x;
    for (int64_t i = 0; i < p0 * OP; i++) line[i] = zp;
    for (int64_t i = p1 * OP; i < LW * OP; i++) line[i] = zp;
    const char *row = (const char *)d->x + (n * d->h + iy) * d->w * C; /* 1-byte values */
    if (M == 1 && C == OP) {
        el_widen8(row, d->x_uint8, (p1 - p0) * C, line + p0 * OP);
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        int16_t *restrict dst = line + p * OP;
        const char *src = row + (p - d->pad_l) * C;
        if (M == 1) {
            el_widen8(src, d->x_uint8, C, dst);
        } else {
            for (int64_t c = 0; c < C; c++) {
                const int16_t v = d->x_uint8 ? ((const uint8_t *)src)[c] : ((const int8_t *)src)[c];
                for (int64_t m = 0; m < M; m++) dst[c * M + m] = v;
            }
        }
        for (int64_t o = O; o < OP; o++) dst[o] = 0;
    }
}

/* The scratch of one thread: KH + 1 lines, their row tags, the rows the current output
 * row wants, the taps' line pointers. */
struct lines {
    int16_t *line;       /* (KH + 1) lines; the last one all zp_x */
    int64_t *tag;        /* KH: n * H + iy held by line k, or -1 */
    int64_t *want;       /* KH: the row tap row ky reads, or -1 (outside the image) */
    const int16_t **tap; /* 2 * pairs: the line position 0 of each tap (pairs' b taps) */
};

int64_t el_dw_scratch_bytes(int64_t kh, int64_t taps, int64_t line_w, int64_t o_pad)
{
    const int64_t pairs = (taps + 1) / 2;
    return (kh + 1) * line_w * o_pad * (int64_t)sizeof(int16_t)
           + 2 * kh * (int64_t)sizeof(int64_t) + 2 * pairs * (int64_t)sizeof(int16_t *);
}

static struct lines carve(const struct el_dw *d, void *scratch)
{
    struct lines s;
    s.line = (int16_t *)scratch; /* (KH + 1) * line_w * o_pad: a multiple of 16 values */
    s.tag = (int64_t *)(s.line + (d->kh + 1) * d->line_w * d->o_pad);
    s.want = s.tag + d->kh;
    s.tap = (const int16_t **)(s.want + d->kh);
    return s;
}

static int wanted(const struct el_dw *d, const struct lines *s, int64_t tag)
{
    for (int64_t ky = 0; ky < d->kh; ky++)
        if (s->want[ky] == tag) return 1;
    return 0;
}

/* The line holding row ``tag``: found among the KH lines, or widened into one the
 * current output row does not want (there is one: it wants at most KH rows). */
static const int16_t *line_of(const struct el_dw *d, struct lines *s, int64_t tag)
{
    const int64_t size = d->line_w * d->o_pad;
    for (int64_t k = 0; k < d->kh; k++)
        if (s->tag[k] == tag) return s->line + k * size;
    int64_t k = 0;
    while (k < d->kh - 1 && s->tag[k] >= 0 && wanted(d, s, s->tag[k])) k++;
    s->tag[k] = tag;
    fill_line(d, tag / d->h, tag % d->h, s->line + k * size);
    return s->line + k * size;
}

/* Points s->tap at output row (n, oy)'s input lines, widening the rows not held yet. */
static void bind_row(const struct el_dw *d, struct lines *s, int64_t n, int64_t oy)
{
    const int64_t KH = d->kh, KW = d->kw, taps = KH * KW, pairs = (taps + 1) / 2;
    for (int64_t ky = 0; ky < KH; ky++) {
        const int64_t iy = oy * d->sh + ky * d->dh - d->pad_t;
        s->want[ky] = iy < 0 || iy >= d->h ? -1 : n * d->h + iy;
    }
    const int16_t *zp_line = s->line + KH * d->line_w * d->o_pad;
    for (int64_t t = 0; t < 2 * pairs; t++) {
        const int64_t u = t < taps ? t : taps - 1; /* the zero-weight partner */
        const int64_t ky = u / KW, kx = u % KW;
        const int16_t *row = s->want[ky] < 0 ? zp_line : line_of(d, s, s->want[ky]);
        s->tap[t] = row + kx * d->dw * d->o_pad;
    }
}

/* ---------------------------------------------------------------- tiles of accumulators */

/* tile[p * 16 + i] = init + the taps of pixel ox + p, channel block cb, p < np: portable
 * C, one tap at a time on the taps' weights in channel order (d->weights_c), a loop
 * compilers vectorize (int16 x int16 -> int32 multiply-adds; unsigned sums wrap). */
static void tile_generic(const struct el_dw *d, const struct lines *s, int64_t ox, int64_t np,
                         int64_t cb, int32_t *restrict tile)
{
    const int64_t taps = d->kh * d->kw, OP = d->o_pad, step = d->sw * OP;
    const int16_t *restrict w = d->weights_c + cb * BLOCK;
    for (int64_t p = 0; p < np; p++)
        memcpy(tile + p * BLOCK, d->init + cb * BLOCK, sizeof(int32_t) * BLOCK);
    /* taps outside, the np * 16 values of the tile inside: one long loop to vectorize */
    for (int64_t t = 0; t < taps; t++) {
        const int16_t *restrict x = s->tap[t] + ox * step + cb * BLOCK;
        const int16_t *restrict wt = w + t * OP;
        for (int64_t p = 0; p < np; p++) {
            uint32_t *restrict acc = (uint32_t *)tile + p * BLOCK;
            const int16_t *restrict xp = x + p * step;
            for (int64_t i = 0; i < BLOCK; i++) acc[i] += (uint32_t)((int32_t)xp[i] * wt[i]);
        }
    }
}

#if DW_SSE2
/* x86-64's baseline: per 8 channels, punpck{l,h}wd of the two taps and pmaddwd. */
static void tile_sse2(const struct el_dw *d, const struct lines *s, int64_t ox, int64_t np,
                      int64_t cb, int32_t *restrict tile)
{
    const int64_t pairs = (d->kh * d->kw + 1) / 2, OP = d->o_pad;
    const int16_t *w = d->weights + cb * pairs * 2 * BLOCK;
    for (int64_t p = 0; p < np; p++) {
        const int64_t at = (ox + p) * d->sw * OP + cb * BLOCK;
        __m128i acc[4]; /* channels 0-3, 4-7, 8-11, 12-15 */
        for (int q = 0; q < 4; q++)
            acc[q] = _mm_loadu_si128((const __m128i *)(d->init + cb * BLOCK + 4 * q));
        for (int64_t j = 0; j < pairs; j++) {
            const int16_t *wj = w + j * 2 * BLOCK;
            const int16_t *ta = s->tap[2 * j] + at, *tb = s->tap[2 * j + 1] + at;
            for (int h = 0; h < 2; h++) {
                const __m128i a = _mm_loadu_si128((const __m128i *)(ta + 8 * h));
                const __m128i b = _mm_loadu_si128((const __m128i *)(tb + 8 * h));
                const __m128i wl = _mm_loadu_si128((const __m128i *)(wj + 8 * h));
                const __m128i wh = _mm_loadu_si128((const __m128i *)(wj + 16 + 8 * h));
                acc[2 * h] = _mm_add_epi32(acc[2 * h],
                                           _mm_madd_epi16(_mm_unpacklo_epi16(a, b), wl));
                acc[2 * h + 1] = _mm_add_epi32(acc[2 * h + 1],
                                               _mm_madd_epi16(_mm_unpackhi_epi16(a, b), wh));
            }
        }
        for (int q = 0; q < 4; q++) _mm_storeu_si128((__m128i *)(tile + p * BLOCK + 4 * q), acc[q]);
    }
}
#endif

#if DW_AVX2
/* ROWS pixels x 16 channels: per tap pair two weight vectors shared by the pixels, per
 * pixel two loads, two vpunpck and two vpmaddwd + vpaddd; the lanes come out as channels
 * (0-3, 8-11) and (4-7, 12-15), put back in order once per tile. PAIRS: the pair count,
 * 0 for any (read from d); a constant lets the compiler unroll the 3x3 case (measured
 * 15-24% faster per layer; a 5x5 one gained nothing). */
#define DW_AVX2_TILE(NAME, ROWS, PAIRS)                                                    \
    __attribute__((target("avx2"))) static void NAME(                                     \
        const struct el_dw *d, const struct lines *s, int64_t ox, int64_t cb,              \
        int32_t *restrict tile)                                                            \
    {                                                                                      \
        const int64_t pairs = PAIRS ? PAIRS : (d->kh * d->kw + 1) / 2, OP = d->o_pad;       \
        const int16_t *w = d->weights + cb * pairs * 2 * BLOCK;                            \
        const int16_t *const *tap = s->tap;                                                \
        const int64_t step = d->sw * OP, at = ox * step + cb * BLOCK;                      \
        __m256i lo[ROWS], hi[ROWS];                                                        \
        for (int p = 0; p < ROWS; p++) lo[p] = hi[p] = _mm256_setzero_si256();             \
        for (int64_t j = 0; j < pairs; j++) {                                              \
            const __m256i wl = _mm256_loadu_si256((const __m256i *)(w + j * 2 * BLOCK));   \
            const __m256i wh = _mm256_loadu_si256((const __m256i *)(w + j * 2 * BLOCK + 16)); \
            const int16_t *a = tap[2 * j] + at, *b = tap[2 * j + 1] + at;                  \
            for (int p = 0; p < ROWS; p++) {                                               \
                const __m256i va = _mm256_loadu_si256((const __m256i *)(a + p * step));    \
                const __m256i vb = _mm256_loadu_si256((const __m256i *)(b + p * step));    \
                const __m256i pl = _mm256_unpacklo_epi16(va, vb);                          \
                const __m256i ph = _mm256_unpackhi_epi16(va, vb);                          \
                lo[p] = _mm256_add_epi32(lo[p], _mm256_madd_epi16(pl, wl));                \
                hi[p] = _mm256_add_epi32(hi[p], _mm256_madd_epi16(ph, wh));                \
            }                                                                              \
        }                                                                                  \
        const __m256i i0 = _mm256_loadu_si256((const __m256i *)(d->init + cb * BLOCK));    \
        const __m256i i1 = _mm256_loadu_si256((const __m256i *)(d->init + cb * BLOCK + 8)); \
        for (int p = 0; p < ROWS; p++) {                                                   \
            const __m256i c0 = _mm256_permute2x128_si256(lo[p], hi[p], 0x20);              \
            const __m256i c1 = _mm256_permute2x128_si256(lo[p], hi[p], 0x31);              \
            _mm256_storeu_si256((__m256i *)(tile + p * BLOCK), _mm256_add_epi32(c0, i0));  \
            _mm256_storeu_si256((__m256i *)(tile + p * BLOCK + 8), _mm256_add_epi32(c1, i1)); \
        }                                                                                  \
    }

DW_AVX2_TILE(tile_avx2_1, 1, 0)
DW_AVX2_TILE(tile_avx2_2, 2, 0)
DW_AVX2_TILE(tile_avx2_3, 3, 0)
DW_AVX2_TILE(tile_avx2_4, 4, 0)
DW_AVX2_TILE(tile_avx2_1_3x3, 1, 5)
DW_AVX2_TILE(tile_avx2_2_3x3, 2, 5)
DW_AVX2_TILE(tile_avx2_3_3x3, 3, 5)
DW_AVX2_TILE(tile_avx2_4_3x3, 4, 5)

typedef void (*dw_avx2_fn)(const struct el_dw *d, const struct lines *s, int64_t ox,
                           int64_t cb, int32_t *restrict tile);

static void tile_avx2(const struct el_dw *d, const struct lines *s, int64_t ox, int64_t np,
                      int64_t cb, int32_t *restrict tile)
{
    static const dw_avx2_fn any[PIXELS] = {tile_avx2_1, tile_avx2_2, tile_avx2_3, tile_avx2_4};
    static const dw_avx2_fn k3x3[PIXELS] = {tile_avx2_1_3x3, tile_avx2_2_3x3, tile_avx2_3_3x3,
                                            tile_avx2_4_3x3};
    (d->kh * d->kw == 9 ? k3x3 : any)[np - 1](d, s, ox, cb, tile);
}
#endif

typedef void (*dw_tile_fn)(const struct el_dw *d, const struct lines *s, int64_t ox,
                           int64_t np, int64_t cb, int32_t *restrict tile);

/* ---------------------------------------------------------------- driver */

/* Output rows [row_begin, row_end) of (n, out_y); scratch: el_dw_scratch_bytes of it,
 * the thread's own. */
void el_dw_rows(const struct el_dw *d, int64_t row_begin, int64_t row_end, void *scratch)
{
    dw_tile_fn tile_kernel = tile_generic;
#if DW_SSE2
    if (d->isa >= EL_ISA_SSE2) tile_kernel = tile_sse2;
#endif
#if DW_AVX2
    if (d->isa >= EL_ISA_AVX2 && el_gemm_avx2_available()) tile_kernel = tile_avx2;
#endif
    el_tile_stage_fn stage = el_tile_stage(&d->stage, d->isa);
    struct lines s = carve(d, scratch);
    const int64_t size = d->line_w * d->o_pad, O = d->o;
    for (int64_t k = 0; k < d->kh; k++) s.tag[k] = -1;
    for (int64_t i = 0; i < size; i++) s.line[d->kh * size + i] = (int16_t)d->zp_x;
    int32_t tile[STAGED * BLOCK];
    for (int64_t r = row_begin; r < row_end; r++) {
        bind_row(d, &s, r / d->oh, r % d->oh);
        int8_t *out = (int8_t *)d->stage.out + r * d->ow * O;
        for (int64_t cb = 0; cb < d->o_pad / BLOCK; cb++) {
            const int64_t n0 = cb * BLOCK, count = O - n0 < BLOCK ? O - n0 : BLOCK;
            for (int64_t ox = 0; ox < d->ow; ox += STAGED) {
                const int64_t staged = d->ow - ox < STAGED ? d->ow - ox : STAGED;
                for (int64_t p = 0; p < staged; p += PIXELS)
                    tile_kernel(d, &s, ox + p, staged - p < PIXELS ? staged - p : PIXELS, cb,
                                tile + p * BLOCK);
                stage(&d->stage, tile, staged, n0, count, out + ox * O, O);
            }
        }
    }
}

/* Task t of the native step: its part of the rows, on thread worker's scratch. */
static void dw_task(void *ctx, int64_t t, int worker)
{
    const struct el_dw *d = ctx;
    const int64_t rows = d->n * d->oh;
    el_dw_rows(d, el_part(0, rows, d->tasks, t, 1), el_part(0, rows, d->tasks, t + 1, 1),
               (char *)d->scratch + worker * d->scratch_stride);
}

/* The native step: every row, split into d->tasks parts over d->threads threads. */
int el_dw_step(void *args)
{
    struct el_dw *d = args;
    el_pool_run(d->threads, d->tasks, dw_task, d);
    return 0;
}
