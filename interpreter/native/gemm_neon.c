/* The ARM NEON micro-kernel of the packed int8 / uint8 GEMM (gemm.c) and its fused output
 * stages: aarch64 (where NEON is baseline), 32-bit ARM built with NEON (-mfpu=neon), and
 * other 32-bit ARM Linux GCC builds (Debian's armhf: VFPv3-D16), where this file alone is
 * compiled with NEON and runs if the CPU has it (HWCAP_NEON). Elsewhere (native.h
 * EL_GEMM_NEON) it compiles to nothing and gemm.c never selects it.
 *
 * The panel layout is gemm.c's: per pair of k, 16 channels' two int16 weights side by
 * side. vld2q splits a pair's 32 values into the 16 channels' k-even and k-odd weights;
 * each row's pair (x[k], x[k+1]) multiplies them with vmlal_lane_s16 (int16 x int16 ->
 * int32, added modulo 2^32), so the sums are the generic tile's wrapped int32 sums exactly.
 * This is the int16 "c2"-style scheme of XNNPACK's qs8 NEON mlal GEMMs, on gemm.c's panels.
 *
 * The output stages are requant.c's formulas on 4 lanes at a time:
 *   fp32    float32(acc) * M, clamp to [lo - zp, hi - zp], round half to even, + zp
 *           (XNNPACK's fp32 requantization; the rounding is requant.c's rint_small);
 *   DOUBLE  TFLite's MultiplyByQuantizedMultiplier as in its NEON kernels
 *           (optimized_ops.h): left shift, vqrdmulh -- gemmlowp's NEON
 *           SaturatingRoundingDoublingHighMul -- then RoundingDivideByPOT;
 *   SINGLE  TFLITE_SINGLE_ROUNDING's (x * m + 2^(t-1)) >> t in 64-bit lanes. */
#include <stdint.h>
#include <string.h>

#include "native.h"

#if EL_GEMM_NEON
#if !defined(__ARM_NEON) && !defined(__ARM_NEON__)
#include <sys/auxv.h>
#define NEON_AT_RUN_TIME 1
#pragma GCC target("fpu=neon")
#endif
#include <arm_neon.h>

int el_gemm_neon_available(void)
{
#ifdef NEON_AT_RUN_TIME
    return (getauxval(AT_HWCAP) & (1UL << 12)) != 0; /* HWCAP_NEON, 32-bit asm/hwcap.h */
#else
    return 1;
#endif
}

#define NR EL_GEMM_NR

/* One row's 16 channels: 4 int32x4 accumulators, named fields (not an array) so that the
 * compiler keeps them in registers across the k loop. */
struct acc16 {
    int32x4_t c0, c1, c2, c3;
};

static inline struct acc16 acc_init(const int32_t *init)
{
    return (struct acc16){vld1q_s32(init), vld1q_s32(init + 4), vld1q_s32(init + 8),
                          vld1q_s32(init + 12)};
}

static inline void acc_store(struct acc16 acc, int32_t *tile)
{
    vst1q_s32(tile, acc.c0), vst1q_s32(tile + 4, acc.c1);
    vst1q_s32(tile + 8, acc.c2), vst1q_s32(tile + 12, acc.c3);
}

/* The weights of one k pair: vld2q splits the 32 values into the channels' k-even (e)
 * and k-odd (o) weights, 8 channels a vector; kept as named halves of 4 channels. */
struct pair16 {
    int16x4_t e0, e1, e2, e3, o0, o1, o2, o3;
};

static inline struct pair16 load_pair16(const int16_t *w)
{
    const int16x8x2_t lo = vld2q_s16(w), hi = vld2q_s16(w + 16);
    return (struct pair16){vget_low_s16(lo.val[0]), vget_high_s16(lo.val[0]),
                           vget_low_s16(hi.val[0]), vget_high_s16(hi.val[0]),
                           vget_low_s16(lo.val[1]), vget_high_s16(lo.val[1]),
                           vget_low_s16(hi.val[1]), vget_high_s16(hi.val[1])};
}

/* acc += the row's pair (x[2j], x[2j + 1]) times the pair's weights, modulo 2^32. */
static inline struct acc16 acc_step(struct acc16 acc, struct pair16 p, const int16_t *x)
{
    int32_t bits;
    memcpy(&bits, x, sizeof bits);
    const int16x4_t v = vreinterpret_s16_s32(vdup_n_s32(bits)); /* x0 x1 x0 x1 */
    acc.c0 = vmlal_lane_s16(vmlal_lane_s16(acc.c0, p.e0, v, 0), p.o0, v, 1);
    acc.c1 = vmlal_lane_s16(vmlal_lane_s16(acc.c1, p.e1, v, 0), p.o1, v, 1);
    acc.c2 = vmlal_lane_s16(vmlal_lane_s16(acc.c2, p.e2, v, 0), p.o2, v, 1);
    acc.c3 = vmlal_lane_s16(vmlal_lane_s16(acc.c3, p.e3, v, 0), p.o3, v, 1);
    return acc;
}

/* 4 rows x 16 channels over all of K (aarch64: 16 accumulators + 8 weight halves + the
 * x pairs in its 32 registers), and 1 row for the tails. */
static void tile_4(const int16_t *restrict a, int64_t kp, const int16_t *restrict w,
                   const int32_t *restrict init, int32_t *restrict tile)
{
    struct acc16 r0 = acc_init(init), r1 = r0, r2 = r0, r3 = r0;
    for (int64_t j = 0; j < kp / 2; j++) {
        const struct pair16 p = load_pair16(w + j * 2 * NR);
        r0 = acc_step(r0, p, a + 2 * j);
        r1 = acc_step(r1, p, a + kp + 2 * j);
        r2 = acc_step(r2, p, a + 2 * kp + 2 * j);
        r3 = acc_step(r3, p, a + 3 * kp + 2 * j);
    }
    acc_store(r0, tile), acc_store(r1, tile + NR);
    acc_store(r2, tile + 2 * NR), acc_store(r3, tile + 3 * NR);
}

static void tile_1(const int16_t *restrict a, int64_t kp, const int16_t *restrict w,
                   const int32_t *restrict init, int32_t *restrict tile)
{
    struct acc16 r0 = acc_init(init);
    for (int64_t j = 0; j < kp / 2; j++) r0 = acc_step(r0, load_pair16(w + j * 2 * NR), a + 2 * j);
    acc_store(r0, tile);
}

void el_gemm_tile_neon(int64_t mr, const int16_t *a, int64_t kp, const int16_t *w,
                       const int32_t *init, int32_t *tile)
{
    if (mr == EL_GEMM_MR) {
        tile_4(a, kp, w, init, tile);
        return;
    }
    for (int64_t m = 0; m < mr; m++) tile_1(a + m * kp, kp, w, init, tile + m * NR);
}

/* 16 clamped int32 values (channel order) + zp -> int8 / uint8 at dst, count <= 16 of them
 * (the saturating narrows change nothing: the values are in range already). */
static inline void store16(const int32x4_t v[4], int32x4_t zp, int out_uint8, int8_t *dst,
                           int64_t count)
{
    const int16x8_t h0 = vcombine_s16(vqmovn_s32(vaddq_s32(v[0], zp)),
                                      vqmovn_s32(vaddq_s32(v[1], zp)));
    const int16x8_t h1 = vcombine_s16(vqmovn_s32(vaddq_s32(v[2], zp)),
                                      vqmovn_s32(vaddq_s32(v[3], zp)));
    int8_t bytes[NR];
    if (out_uint8) {
        vst1q_u8((uint8_t *)bytes, vcombine_u8(vqmovun_s16(h0), vqmovun_s16(h1)));
    } else {
        vst1q_s8(bytes, vcombine_s8(vqmovn_s16(h0), vqmovn_s16(h1)));
    }
    memcpy(dst, bytes, (size_t)count);
}

/* fp32: requant.c's fp32_value on 4 lanes. Rounding adds and removes 1.5 * 2^23 (|v| <
 * 2^22 after the clamp), which is exact IEEE arithmetic on aarch64 and on 32-bit NEON
 * alike (its flush-to-zero cannot touch an integer-valued sum); the truncating
 * conversion of the integer-valued result is exact. */
static inline int32x4_t fp32_lanes(int32x4_t acc, float32x4_t m, float32x4_t lo,
                                   float32x4_t hi)
{
    const float32x4_t magic = vdupq_n_f32(12582912.0f);
    float32x4_t v = vmulq_f32(vcvtq_f32_s32(acc), m);
    v = vminq_f32(vmaxq_f32(v, lo), hi);
    return vcvtq_s32_f32(vsubq_f32(vaddq_f32(v, magic), magic));
}

/* DOUBLE rounding, shifts in -31..30 (gemm.c's el_fixed_planes): x << left wraps
 * (vshlq_s32 by a positive count), vqrdmulh is gemmlowp's SRDHM (its one saturating case,
 * both INT32_MIN, cannot occur: m >= 0), RoundingDivideByPOT as requant.c's
 * (q >> right) + (remainder > (mask >> 1) + (q < 0)), mask = 2^right - 1. */
static inline int32x4_t double_lanes(int32x4_t x, int32x4_t m, int32x4_t left,
                                     int32x4_t right, int32x4_t mask)
{
    const int32x4_t q = vqrdmulhq_s32(vshlq_s32(x, left), m);
    const int32x4_t rem = vandq_s32(q, mask);
    /* (mask >> 1) + (q < 0): q >> 31 is -1 for a negative q */
    const int32x4_t threshold = vsubq_s32(vshrq_n_s32(mask, 1), vshrq_n_s32(q, 31));
    const int32x4_t up = vreinterpretq_s32_u32(vcgtq_s32(rem, threshold)); /* -1 or 0 */
    return vsubq_s32(vshlq_s32(q, vnegq_s32(right)), up);
}

/* SINGLE rounding, t = 31 - shift in 1..62: the 64-bit product plus 2^(t-1), shifted
 * right arithmetically (vshlq_s64 by -t), its low 32 bits kept (requant.c's wrap32). */
static inline int64x2_t single_half(int32x2_t x, int32x2_t m, int64x2_t t)
{
    const int64x2_t round = vshlq_s64(vdupq_n_s64(1), vsubq_s64(t, vdupq_n_s64(1)));
    return vshlq_s64(vaddq_s64(vmull_s32(x, m), round), vsubq_s64(vdupq_n_s64(0), t));
}

static inline int32x4_t single_lanes(int32x4_t x, int32x4_t m, const int64x2_t t[2])
{
    return vcombine_s32(vmovn_s64(single_half(vget_low_s32(x), vget_low_s32(m), t[0])),
                        vmovn_s64(single_half(vget_high_s32(x), vget_high_s32(m), t[1])));
}

/* The stage of an mr x 16 tile, channels n0 .. n0 + count - 1 of out's rows (row_stride
 * values apart): fp32, or fixed point from the stage's planes (gemm.c's el_fixed_planes). */
void el_gemm_stage_neon(const struct el_stage *s, const int32_t *tile, int64_t mr,
                        int64_t n0, int64_t count, int8_t *out, int64_t row_stride)
{
    const int32x4_t zp = vdupq_n_s32((int32_t)s->zp_out);
    const int32_t lo = (int32_t)(s->lo - s->zp_out), hi = (int32_t)(s->hi - s->zp_out);
    int32x4_t v[4];
    if (s->kind == EL_FP32) {
        float mult[NR] = {0};
        memcpy(mult, s->mult_f32 + n0, sizeof(float) * (size_t)count);
        const float32x4_t flo = vdupq_n_f32((float)lo), fhi = vdupq_n_f32((float)hi);
        for (int64_t m = 0; m < mr; m++) {
            for (int q = 0; q < 4; q++)
                v[q] = fp32_lanes(vld1q_s32(tile + m * NR + 4 * q), vld1q_f32(mult + 4 * q),
                                  flo, fhi);
            store16(v, zp, s->out_uint8, out + m * row_stride + n0, count);
        }
        return;
    }
    /* the fixed-point parameters, prepared once (gemm.c's el_fixed_planes); n0: a
     * multiple of NR */
    const int32_t *pl = s->planes + n0 * EL_FIXED_PLANES;
    const int single = s->kind == EL_SINGLE;
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi);
    for (int64_t m = 0; m < mr; m++) {
        for (int q = 0; q < 4; q++) {
            const int32x4_t x = vld1q_s32(tile + m * NR + 4 * q);
            const int32x4_t mq = vld1q_s32(pl + 4 * q);
            const int32x4_t a = vld1q_s32(pl + NR + 4 * q); /* DOUBLE: left; SINGLE: t */
            int32x4_t r;
            if (single) {
                const int64x2_t tq[2] = {vmovl_s32(vget_low_s32(a)), vmovl_s32(vget_high_s32(a))};
                r = single_lanes(x, mq, tq);
            } else {
                r = double_lanes(x, mq, a, vld1q_s32(pl + 2 * NR + 4 * q),
                                 vld1q_s32(pl + 3 * NR + 4 * q));
            }
            v[q] = vminq_s32(vmaxq_s32(r, vlo), vhi);
        }
        store16(v, zp, s->out_uint8, out + m * row_stride + n0, count);
    }
}
#endif
