/* A standalone check of gemm.c's SIMD micro-kernels against its generic C tile, built with
 * gemm.c, gemm_neon.c, requant.c and conv.c only (no Python): the cross-compiled ARM build
 * runs it under qemu-user (tests/interpreter/kernels/common/test_native_gemm.py).
 *
 *   gemm_isa_check check SEED CASES   random GEMMs, generic tile vs the best ISA's, bit for
 *                                     bit; prints "ok <cases> isa=<n>", exit 0, or the
 *                                     first differing case, exit 1
 *   gemm_isa_check bench REPS         median seconds of one GEMM per stage, generic vs best
 *
 * The random cases cover partial panels (O % 16) and tiles (rows % 4), odd K, int8 / uint8
 * inputs and outputs, int32 wrap (init near the extremes, extreme inputs and weights), every
 * output stage (fp32, fixed DOUBLE / SINGLE, float64 -- the per-value fallback -- and fixed
 * shifts outside the vector stage's range), dense rows and im2col CONV_2D rows. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "native.h"

static uint64_t rng_state = 1;

static uint64_t next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)(next() % (uint64_t)(hi - lo + 1)); }

/* One GEMM: its inputs, packed, and the stage's parameters. */
struct gemm_case {
    int64_t rows, k, o, kp, block;
    int x_uint8, out_uint8, kind, conv;
    struct el_conv cv;
    void *x;
    int16_t *panels;
    int32_t *init;
    float *mult_f32;
    double *mult_f64;
    int64_t *mult_i64, *shift;
    int32_t *planes;
    struct el_stage stage;
};

static void pack(struct gemm_case *c, const int16_t *w) /* native_gemm.pack_panels */
{
    const int64_t panels = (c->o + EL_GEMM_NR - 1) / EL_GEMM_NR;
    c->panels = calloc((size_t)(panels * EL_GEMM_NR * c->kp), sizeof(int16_t));
    for (int64_t o = 0; o < c->o; o++)
        for (int64_t k = 0; k < c->k; k++)
            c->panels[((o / EL_GEMM_NR) * (c->kp / 2) + k / 2) * 2 * EL_GEMM_NR +
                      (o % EL_GEMM_NR) * 2 + k % 2] = w[o * c->k + k];
}

/* The fixed-point planes of the stage, as the extension prepares them (native_gemm.py
 * with_planes): NULL where out of the vector stages' range (the per-value code runs). */
static void prepare_planes(struct gemm_case *c)
{
    const int64_t padded = (c->o + EL_GEMM_NR - 1) / EL_GEMM_NR * EL_GEMM_NR;
    free(c->planes);
    c->planes = malloc(sizeof(int32_t) * (size_t)(padded * EL_FIXED_PLANES));
    c->stage.planes = el_fixed_planes(c->stage.kind, c->mult_i64, c->shift, c->o, c->planes)
                          ? c->planes : NULL;
}

static void random_stage(struct gemm_case *c)
{
    c->kind = (int)pick(0, 4); /* 4: fixed DOUBLE with a shift beyond the vector range */
    c->mult_f32 = malloc(sizeof(float) * (size_t)c->o);
    c->mult_f64 = malloc(sizeof(double) * (size_t)c->o);
    c->mult_i64 = malloc(sizeof(int64_t) * (size_t)c->o);
    c->shift = malloc(sizeof(int64_t) * (size_t)c->o);
    const int wide = pick(0, 3) == 0; /* shifts over the whole vector range */
    for (int64_t i = 0; i < c->o; i++) {
        const double unit = (double)(next() % 1000000) / 1000000.0;
        const double f32_scales[4] = {1e-5, 1e-4, 1e-3, 10.0}; /* 10: mostly clamped */
        c->mult_f32[i] = (float)(unit * f32_scales[pick(0, 3)]);
        c->mult_f64[i] = unit * 1e-3;
        c->mult_i64[i] = pick(0, 7) ? pick(1LL << 30, INT32_MAX) : pick(0, INT32_MAX);
        c->shift[i] = wide ? pick(-31, 30) : pick(-16, 2);
    }
    if (c->kind == 4) c->shift[pick(0, c->o - 1)] = -pick(32, 40);
    const int kinds[5] = {EL_FP32, EL_DOUBLE, EL_SINGLE, EL_FLOAT64, EL_DOUBLE};
    struct el_stage *s = &c->stage;
    memset(s, 0, sizeof *s);
    s->kind = kinds[c->kind];
    s->mult_f32 = c->mult_f32;
    s->mult_f64 = c->mult_f64;
    s->mult_i64 = c->mult_i64;
    s->shift = c->shift;
    s->width = c->o;
    s->out_uint8 = c->out_uint8;
    const int64_t tmin = c->out_uint8 ? 0 : -128, tmax = c->out_uint8 ? 255 : 127;
    s->zp_out = pick(tmin, tmax);
    s->lo = pick(0, 1) ? tmin : pick(tmin, s->zp_out);
    s->hi = pick(0, 1) ? tmax : pick(s->lo, tmax);
    prepare_planes(c);
}

static void random_case(struct gemm_case *c)
{
    memset(c, 0, sizeof *c);
    c->x_uint8 = (int)pick(0, 1);
    c->out_uint8 = (int)pick(0, 1);
    c->conv = pick(0, 3) == 0;
    c->o = pick(1, 70);
    c->block = EL_GEMM_MR * pick(1, 16);
    int64_t xcount;
    if (c->conv) {
        struct el_conv *cv = &c->cv;
        cv->x_uint8 = c->x_uint8;
        cv->n = pick(1, 2), cv->h = pick(1, 9), cv->w = pick(1, 9), cv->c = pick(1, 9);
        cv->kh = pick(1, 3), cv->kw = pick(1, 3), cv->sh = pick(1, 2), cv->sw = pick(1, 2);
        cv->dh = pick(1, 2), cv->dw = pick(1, 2);
        cv->pad_t = pick(0, cv->kh - 1), cv->pad_l = pick(0, cv->kw - 1);
        const int64_t span_h = cv->dh * (cv->kh - 1) + 1, span_w = cv->dw * (cv->kw - 1) + 1;
        const int64_t in_h = cv->h + 2 * cv->pad_t, in_w = cv->w + 2 * cv->pad_l;
        cv->oh = in_h >= span_h ? (in_h - span_h) / cv->sh + 1 : 1;
        cv->ow = in_w >= span_w ? (in_w - span_w) / cv->sw + 1 : 1;
        cv->zp_x = (int32_t)(c->x_uint8 ? pick(0, 255) : pick(-128, 127));
        c->rows = cv->n * cv->oh * cv->ow;
        c->k = cv->kh * cv->kw * cv->c;
        xcount = cv->n * cv->h * cv->w * cv->c;
    } else {
        c->rows = pick(1, 23);
        c->k = pick(1, 200);
        xcount = c->rows * c->k;
    }
    c->kp = c->k + c->k % 2;
    const int extreme = pick(0, 4) == 0; /* saturated inputs and weights */
    uint8_t *x = malloc((size_t)xcount);
    for (int64_t i = 0; i < xcount; i++)
        x[i] = extreme ? (c->x_uint8 ? 255 : 0x80) : (uint8_t)next();
    c->x = x;
    c->cv.x = x;
    int16_t *w = malloc(sizeof(int16_t) * (size_t)(c->o * c->k));
    const int64_t wmax = pick(0, 1) ? 255 : 127;
    for (int64_t i = 0; i < c->o * c->k; i++)
        w[i] = (int16_t)(extreme ? (c->x_uint8 ? wmax : -wmax) : pick(-wmax, wmax));
    pack(c, w);
    free(w);
    const int64_t padded = (c->o + EL_GEMM_NR - 1) / EL_GEMM_NR * EL_GEMM_NR;
    c->init = calloc((size_t)padded, sizeof(int32_t));
    for (int64_t i = 0; i < c->o; i++) {
        const int64_t near = pick(0, 3); /* the int32 extremes (wrap), small, any */
        c->init[i] = near == 0 ? INT32_MAX - (int32_t)pick(0, 1 << 20)
                   : near == 1 ? INT32_MIN + (int32_t)pick(0, 1 << 20)
                   : near == 2 ? (int32_t)pick(-(1 << 16), 1 << 16) : (int32_t)next();
    }
    random_stage(c);
}

static void free_case(struct gemm_case *c)
{
    free(c->x), free(c->panels), free(c->init), free(c->mult_f32), free(c->mult_f64);
    free(c->mult_i64), free(c->shift), free(c->planes);
}

/* The GEMM of case c with micro-kernels up to isa, into out (rows * o bytes). */
static void run(struct gemm_case *c, int isa, int8_t *out, int16_t *a)
{
    c->stage.out = out;
    const struct el_gemm g = {
        .x = c->x, .x_uint8 = c->x_uint8, .conv = c->conv ? &c->cv : NULL,
        .panels = c->panels, .init = c->init, .k = c->k, .k_pad = c->kp, .o = c->o,
        .block = c->block, .isa = isa, .stage = &c->stage,
    };
    el_gemm_rows(&g, 0, c->rows, 0, (c->o + EL_GEMM_NR - 1) / EL_GEMM_NR, a);
}

static int check(uint64_t seed, int cases)
{
    rng_state = seed | 1;
    const int best = el_gemm_best_isa();
    for (int i = 0; i < cases; i++) {
        struct gemm_case c;
        random_case(&c);
        const size_t n = (size_t)(c.rows * c.o);
        int8_t *want = malloc(n), *got = malloc(n);
        int16_t *a = malloc(sizeof(int16_t) * (size_t)(c.block * c.kp));
        memset(want, 0x5A, n), memset(got, 0x3C, n); /* different fills: no stale match */
        run(&c, EL_ISA_GENERIC, want, a);
        run(&c, best, got, a);
        for (size_t j = 0; j < n; j++) {
            if (want[j] != got[j]) {
                printf("case %d: rows %lld k %lld o %lld stage %d conv %d x_uint8 %d "
                       "out_uint8 %d: value %zu generic %d isa %d: %d\n", i,
                       (long long)c.rows, (long long)c.k, (long long)c.o, c.kind, c.conv,
                       c.x_uint8, c.out_uint8, j, want[j], best, got[j]);
                return 1;
            }
        }
        free(want), free(got), free(a);
        free_case(&c);
    }
    printf("ok %d isa=%d\n", cases, best);
    return 0;
}

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A 1x1 CONV_2D of MobileNet's middle (14 x 14 pixels, 192 -> 64 channels) per stage kind,
 * the generic tile and the best ISA's interleaved; median seconds of each. */
static int bench(int reps)
{
    const int kinds[2] = {EL_FP32, EL_DOUBLE};
    for (int s = 0; s < 2; s++) {
        struct gemm_case c;
        rng_state = 7;
        memset(&c, 0, sizeof c);
        c.rows = 196, c.k = 192, c.kp = 192, c.o = 64, c.block = 48;
        uint8_t *x = malloc((size_t)(c.rows * c.k));
        for (int64_t i = 0; i < c.rows * c.k; i++) x[i] = (uint8_t)next();
        c.x = x;
        int16_t *w = malloc(sizeof(int16_t) * (size_t)(c.o * c.k));
        for (int64_t i = 0; i < c.o * c.k; i++) w[i] = (int16_t)pick(-127, 127);
        pack(&c, w);
        free(w);
        c.init = calloc((size_t)c.o, sizeof(int32_t));
        random_stage(&c);
        c.stage.kind = kinds[s];
        for (int64_t i = 0; i < c.o; i++) c.shift[i] = -8;
        prepare_planes(&c);
        int8_t *out = malloc((size_t)(c.rows * c.o));
        int16_t *a = malloc(sizeof(int16_t) * (size_t)(c.block * c.kp));
        double *t[2] = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps)};
        for (int r = 0; r < reps; r++) {
            for (int which = 0; which < 2; which++) {
                const double t0 = seconds();
                run(&c, which ? el_gemm_best_isa() : EL_ISA_GENERIC, out, a);
                t[which][r] = seconds() - t0;
            }
        }
        qsort(t[0], (size_t)reps, sizeof(double), compare_doubles);
        qsort(t[1], (size_t)reps, sizeof(double), compare_doubles);
        printf("%s generic %.6f s isa %d %.6f s speedup %.2f\n", s ? "fixed" : "fp32",
               t[0][reps / 2], el_gemm_best_isa(), t[1][reps / 2], t[0][reps / 2] / t[1][reps / 2]);
        free(t[0]), free(t[1]), free(out), free(a);
        free_case(&c);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "check") == 0)
        return check(strtoull(argv[2], NULL, 10), atoi(argv[3]));
    if (argc == 3 && strcmp(argv[1], "bench") == 0) return bench(atoi(argv[2]));
    fprintf(stderr, "usage: %s check SEED CASES | bench REPS\n", argv[0]);
    return 2;
}
