/* float32 DEPTHWISE_CONV_2D -- reference_ops::DepthwiseConv (tensorflow/lite/kernels/
 * internal/reference/depthwiseconv_float.h), its loops reordered so that the channels are
 * innermost:
 *
 *   out[n, y, x, o] = clamp(sum_{ky, kx} in[n, iy, ix, o / M] * w[ky, kx, o] + bias[o])
 *
 * iy = y * sh + ky * dh - pad_t, ix = x * sw + kx * dw - pad_l; taps in the padding are
 * skipped, like the reference kernel. Each output value is one float32 sum in the same order
 * as the numpy kernel (kernels/depthwise_conv.py): the taps in (ky, kx) order from 0, each
 * product rounded to float32 before it is added (no FMA: -std=c11 does not contract), then
 * the bias, then the clamp -- so both backends give the same floats (up to the sign of
 * a zero sum).
 *
 * Per output pixel (multiplier 1) the channels are taken in blocks of BLOCK values held in
 * four 8-float vectors over all taps (GCC / clang vector extensions; other compilers, or
 * -DEL_NO_VECTOR_EXT, take the plain per-channel loop, as multipliers above 1 do), the bias
 * and clamp applied in registers; the loops are built twice on x86-64, baseline (SSE2) and
 * AVX2, and el_have_avx2() picks one at run time, so the build needs no -march. A fused
 * swish (EL_ACT_SWISH: the LOGISTIC + MUL after the op, interpreter/fused_steps.py) is
 * applied to each output row once it is written, while it is in cache. */
#include <stdint.h>

#include "native.h"
#include "native_float.h"
#include "threadpool.h"

#define BLOCK 32 /* channels per accumulator block: 4 AVX2 / 8 SSE2 registers */
#define STACK_TAPS 64 /* taps per chunk of a pixel's sum */

/* The input offsets (in floats) of output pixel (oy, ox)'s taps that fall inside the image,
 * in (ky, kx) order, and their tap indices: at most STACK_TAPS of them from the skip-th on;
 * returns how many, and *total the pixel's count. */
static int64_t pixel_taps(const struct el_dwf *d, int64_t n, int64_t oy, int64_t ox,
                          int64_t skip, int64_t *offset, int64_t *tap, int64_t *total)
{
    int64_t seen = 0, count = 0;
    for (int64_t ky = 0; ky < d->kh; ky++) {
        const int64_t iy = oy * d->sh + ky * d->dh - d->pad_t;
        if (iy < 0 || iy >= d->h) continue;
        for (int64_t kx = 0; kx < d->kw; kx++) {
            const int64_t ix = ox * d->sw + kx * d->dw - d->pad_l;
            if (ix < 0 || ix >= d->w) continue;
            if (seen++ < skip || count == STACK_TAPS) continue;
            offset[count] = ((n * d->h + iy) * d->w + ix) * d->c;
            tap[count++] = ky * d->kw + kx;
        }
    }
    *total = seen;
    return count;
}

/* acc + bias, clamped (NaN stays NaN, like std::min(std::max(x, lo), hi)) */
#define EL_DWF_FINISH(acc, bias, lo, hi, clamp)        \
    do {                                               \
        acc += (bias);                                 \
        if ((clamp) == EL_ACT_CLAMP) {                 \
            acc = acc < (lo) ? (lo) : acc;             \
            acc = acc > (hi) ? (hi) : acc;             \
        }                                              \
    } while (0)

#if (defined(__GNUC__) || defined(__clang__)) && !defined(EL_NO_VECTOR_EXT)
/* 8 floats, loads and stores at any float alignment (GCC / clang vector extensions: AVX2
 * registers in the AVX2 build, SSE2 pairs in the baseline one) */
typedef float v8f __attribute__((vector_size(32), aligned(4)));
typedef int32_t v8i __attribute__((vector_size(32), aligned(4)));
/* where mask (all ones / zeros per lane) pick b, else a */
#define EL_V8_PICK(mask, a, b) ((v8f)(((v8i)(a) & ~(mask)) | ((v8i)(b) & (mask))))
/* EL_DWF_FINISH for 8 lanes */
#define EL_DWF_FINISH8(acc, bias, lo, hi, clamp)               \
    do {                                                       \
        acc += (bias);                                         \
        if ((clamp) == EL_ACT_CLAMP) {                         \
            acc = EL_V8_PICK((v8i)(acc < (lo)), acc, (lo));    \
            acc = EL_V8_PICK((v8i)(acc > (hi)), acc, (hi));    \
        }                                                      \
    } while (0)
#define EL_DWF_VECTORS 1
#else
#define EL_DWF_VECTORS 0
#endif

/* One output pixel's O values from its taps' input offsets (multiplier 1: channel o reads
 * input channel o; else o / M). Multiplier 1 takes BLOCK channels at a time in
 * registers, then 8, then one; each value's sum is 0 + the taps in order, + bias, clamp. */
#define EL_DWF_PIXEL(name, attr)                                                             \
    attr static void name(const struct el_dwf *d, const int64_t *offset, const int64_t *tap, \
                          int64_t count, int first, int last, float *restrict out)           \
    {                                                                                        \
        const int64_t O = d->o, M = d->m;                                                    \
        const float *restrict w = d->weights, *restrict x = d->x, *restrict b = d->bias;     \
        const int clamp = d->clamp;                                                          \
        const float lo = d->lo, hi = d->hi;                                                  \
        int64_t o0 = 0;                                                                      \
        if (EL_DWF_VECTORS && M == 1) {                                                      \
            EL_DWF_VECTOR_BLOCKS                                                             \
        }                                                                                    \
        for (int64_t o = o0; o < O; o++) {                                                   \
            float acc = first ? 0.0f : out[o];                                               \
            const int64_t src = o / M;                                                       \
            for (int64_t t = 0; t < count; t++)                                              \
                acc += x[offset[t] + src] * w[tap[t] * O + o];                               \
            if (last) EL_DWF_FINISH(acc, b ? b[o] : 0.0f, lo, hi, clamp);                    \
            out[o] = acc;                                                                    \
        }                                                                                    \
    }

#if EL_DWF_VECTORS
/* BLOCK (4 x 8) channels, then 8, in registers over all taps; the bias is added as
 * 0.0f where there is none (x + 0.0f == x, -0.0f aside). */
#define EL_DWF_VECTOR_BLOCKS                                                                 \
    const v8f zero = {0}, vlo = zero + lo, vhi = zero + hi;                                  \
    for (; o0 + BLOCK <= O; o0 += BLOCK) {                                                   \
        v8f *ov = (v8f *)(out + o0);                                                         \
        v8f a0 = first ? zero : ov[0], a1 = first ? zero : ov[1];                            \
        v8f a2 = first ? zero : ov[2], a3 = first ? zero : ov[3];                            \
        for (int64_t t = 0; t < count; t++) {                                                \
            const v8f *xv = (const v8f *)(x + offset[t] + o0);                               \
            const v8f *wv = (const v8f *)(w + tap[t] * O + o0);                              \
            a0 += xv[0] * wv[0];                                                             \
            a1 += xv[1] * wv[1];                                                             \
            a2 += xv[2] * wv[2];                                                             \
            a3 += xv[3] * wv[3];                                                             \
        }                                                                                    \
        const v8f *bv = (const v8f *)(b + o0);                                               \
        v8f acc[4] = {a0, a1, a2, a3};                                                       \
        for (int j = 0; j < 4; j++) {                                                        \
            if (last) EL_DWF_FINISH8(acc[j], b ? bv[j] : zero, vlo, vhi, clamp);               \
            ov[j] = acc[j];                                                                  \
        }                                                                                    \
    }                                                                                        \
    for (; o0 + 8 <= O; o0 += 8) {                                                           \
        v8f a = first ? zero : *(v8f *)(out + o0);                                           \
        for (int64_t t = 0; t < count; t++)                                                  \
            a += *(const v8f *)(x + offset[t] + o0) * *(const v8f *)(w + tap[t] * O + o0);   \
        if (last) EL_DWF_FINISH8(a, b ? *(const v8f *)(b + o0) : zero, vlo, vhi, clamp);       \
        *(v8f *)(out + o0) = a;                                                              \
    }
#else
#define EL_DWF_VECTOR_BLOCKS
#endif

EL_DWF_PIXEL(pixel_base, )
#ifdef EL_X86_AVX2
EL_DWF_PIXEL(pixel_avx2, EL_TARGET_AVX2)
#else
#define pixel_avx2 pixel_base
#endif

int el_dwf_rows(const struct el_dwf *d, int64_t row_begin, int64_t row_end)
{
    int64_t offset[STACK_TAPS], tap[STACK_TAPS]; /* a pixel's taps, STACK_TAPS at a time */
    const int avx2 = el_have_avx2();
    const int64_t taps = d->kh * d->kw, step = d->sw * d->c;
    for (int64_t row = row_begin; row < row_end; row++) {
        const int64_t n = row / d->oh, oy = row % d->oh;
        const int64_t iy0 = oy * d->sh - d->pad_t;
        const int row_inside = iy0 >= 0 && iy0 + (d->kh - 1) * d->dh < d->h;
        int held = 0; /* offset / tap hold the previous pixel's whole tap list */
        for (int64_t ox = 0; ox < d->ow; ox++) {
            float *out = d->out + (row * d->ow + ox) * d->o;
            const int64_t ix0 = ox * d->sw - d->pad_l;
            const int inside = row_inside && ix0 >= 0 && ix0 + (d->kw - 1) * d->dw < d->w
                               && taps <= STACK_TAPS;
            if (inside && held) { /* the same taps, one stride to the right */
                for (int64_t t = 0; t < taps; t++) offset[t] += step;
                if (avx2) pixel_avx2(d, offset, tap, taps, 1, 1, out);
                else pixel_base(d, offset, tap, taps, 1, 1, out);
                continue;
            }
            int64_t skip = 0, total = 0;
            do { /* larger kernels: the partial sums stay in out between chunks */
                const int64_t count = pixel_taps(d, n, oy, ox, skip, offset, tap, &total);
                const int first = skip == 0, last = skip + count >= total;
                if (avx2) pixel_avx2(d, offset, tap, count, first, last, out);
                else pixel_base(d, offset, tap, count, first, last, out);
                skip += count;
            } while (skip < total);
            held = inside;
        }
        if (d->clamp == EL_ACT_SWISH) /* the row just written, while it is in cache */
            el_swish_inplace_f32(d->out + row * d->ow * d->o, d->ow * d->o);
    }
    return 0;
}

/* Task t of the native step: its part of the rows (every thread sums each value in the same
 * order, so the split changes no bit). */
static void dwf_task(void *ctx, int64_t t, int worker)
{
    const struct el_dwf *d = ctx;
    const int64_t rows = d->n * d->oh;
    (void)worker;
    el_dwf_rows(d, el_part(0, rows, d->tasks, t, 1), el_part(0, rows, d->tasks, t + 1, 1));
}

int el_dwf_step(void *args)
{
    struct el_dwf *d = args;
    el_pool_run(d->threads, d->tasks, dwf_task, d);
    return 0;
}
