/* edgelite's native kernels: shared declarations (see module.c for the Python side). */
#ifndef EDGELITE_NATIVE_H
#define EDGELITE_NATIVE_H
#include <stdint.h>

enum el_requant_kind { EL_DOUBLE = 0, EL_SINGLE = 1, EL_FLOAT64 = 2, EL_FP32 = 3 };

/* One output stage call: acc is (rows, width) float32 or float64, channels last; the
 * per-value parameters (bias, multipliers, shifts) hold width values. */
struct el_stage {
    const void *acc;
    int acc_f64;
    const void *bias; /* NULL: no bias */
    const double *bias_f64;
    const float *bias_f32;
    int kind;
    const double *mult_f64;
    const int64_t *mult_i64;
    const int64_t *shift;
    const float *mult_f32;
    int64_t width;
    int64_t zp_out, lo, hi;
    int wrap;
    void *out;
    int out_uint8;
    const int32_t *planes; /* el_fixed_planes of mult_i64 / shift (prepared once), or NULL */
};

void el_exact_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end);
void el_fp32_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end);
void el_stage_int32(const struct el_stage *s, const int32_t *acc, int64_t c0, int64_t count,
                    void *out_row);



/* ---- element-wise, table, pool, reduce kernels (elementwise.c, lut.c, pool.c, reduce.c,
 * quantize.c, softmax.c; Python wrappers in module_ops.c) ---- */
#define EL_MAX_DIMS 8

/* On x86-64 (GCC / clang) some loops are built twice, for baseline x86-64 and for AVX2
 * (EL_TARGET_AVX2), and el_have_avx2() picks one at run time: the wheel stays baseline.
 * Both builds do the same IEEE / integer arithmetic (no FMA: -std=c11 does not contract). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EL_X86_AVX2 1
#define EL_TARGET_AVX2 __attribute__((target("avx2")))
#endif
int el_have_avx2(void);
int el_allow_avx2(int allow); /* 0: the baseline builds only (tests); returns the old value */

/* int8 / uint8 ADD / SUB / MUL over the collapsed broadcast shape (elementwise.c); sa / sb:
 * strides in values (0: broadcast); computes the flat output values [begin, end). */
enum el_binary_kind { EL_TABLE = 0, EL_XNN_ADD = 1, EL_XNN_MUL = 2 };

struct el_binary {
    const uint8_t *a, *b;
    int ndim;
    int64_t shape[EL_MAX_DIMS], sa[EL_MAX_DIMS], sb[EL_MAX_DIMS];
    uint8_t *out;
    int kind;
    /* EL_TABLE: out = table[offsets[i] | bits(a) << 8 | bits(b)] */
    const uint8_t *table;
    const uint32_t *offsets; /* NULL: one code path */
    /* EL_XNN_ADD / EL_XNN_MUL */
    int is_uint8;
    int32_t za, zb, zo, lo, hi, ma, mb, shift;
    float scale;
};

void el_binary(const struct el_binary *p, int64_t begin, int64_t end);

/* The broadcast walk shared by the binary kernels (elementwise.c, binary_f32.c): the output
 * values [begin, end) of a collapsed shape (native_ops.collapse) go to ``fn`` row by row
 * (a row: one run of the innermost dimension) -- the row's index r, the offsets in values
 * of its first element in a and in b (strides sa / sb per dimension, 0: broadcast), and the
 * part [from, to) of the row inside [begin, end) (a slice may start or stop inside a row). */
struct el_row {
    int64_t r, oa, ob, from, to;
};
void el_broadcast_rows(int ndim, const int64_t *shape, const int64_t *sa, const int64_t *sb,
                       int64_t begin, int64_t end,
                       void (*fn)(const void *ctx, const struct el_row *row), const void *ctx);
void el_lut8(const uint8_t *x, const uint8_t *table, uint8_t *out, int64_t begin, int64_t end);
void el_lut32(const uint8_t *x, const uint32_t *table, uint32_t *out, int64_t begin,
              int64_t end);
/* sums of an int8 / uint8 (outer, count, inner) array over count, into int64 (reduce.c);
 * acc: inner int32 of scratch */
void el_sum8(const void *x, int is_uint8, int64_t outer, int64_t count, int64_t inner,
             int32_t *acc, int64_t *out);
/* float32 sums of an (outer, count, inner) array over count into out (outer * inner), in
 * np.add.reduce's order (reduce.c) */
void el_sum_f32(const float *x, int64_t outer, int64_t count, int64_t inner, float *out);
/* int8 / uint8 AVERAGE_POOL_2D (pool.c); rows are (n, out_y) pairs; acc: c int32 of
 * scratch */
struct el_pool {
    const void *x;
    void *out;
    int is_uint8, work_f64;
    int64_t n, h, w, c, kh, kw, sh, sw, pad_t, pad_l, oh, ow;
    int32_t lo, hi;
};

void el_pool(const struct el_pool *p, int64_t row_begin, int64_t row_end, int32_t *acc);
/* QUANTIZE float32 -> int8 / uint8 / int16, per tensor (quantize.c) */
enum el_quantize_mode { EL_Q_XNN = 0, EL_Q_REFERENCE = 1, EL_Q_OPTIMIZED = 2 };
enum el_quantize_type { EL_Q_INT8 = 0, EL_Q_UINT8 = 1, EL_Q_INT16 = 2 };

struct el_quantize {
    const float *x;
    void *out;
    int mode, out_type;
    float scale;    /* XNN: float32(1 / s); REFERENCE: s; OPTIMIZED: float32(1 / double(s)) */
    double scale64; /* OPTIMIZED: double(s), the scalar tail's divisor */
    int64_t split;  /* OPTIMIZED: values [0, split) take the vector loop's formula */
    int32_t zp, lo, hi;
};

void el_quantize(const struct el_quantize *p, int64_t begin, int64_t end);
/* int8 / uint8 SOFTMAX, TFLite's optimized (float table) kernel (softmax.c); exps: depth
 * floats of scratch */
struct el_softmax {
    const void *x;
    void *out;
    int is_uint8;
    int64_t depth;
    const float *table; /* 256 entries: table[255 - v] = expf(-s * beta * v) */
    float out_scale;
    int32_t qmin;
};

void el_softmax(const struct el_softmax *p, int64_t row_begin, int64_t row_end, float *exps);
/* ---- end of the element-wise block ---- */

/* count int8 / uint8 values widened to int16 (conv.c's and depthwise.c's rows of input) */
static inline void el_widen8(const void *src, int is_uint8, int64_t count,
                             int16_t *restrict dst)
{
    if (is_uint8) {
        const uint8_t *restrict x = (const uint8_t *)src;
        for (int64_t i = 0; i < count; i++) dst[i] = x[i];
    } else {
        const int8_t *restrict x = (const int8_t *)src;
        for (int64_t i = 0; i < count; i++) dst[i] = x[i];
    }
}

/* CONV_2D's im2col rows (conv.c): row r is output pixel (n, oy, ox); its K = KH*KW*C
 * values in the filter's (ky, kx, c) order, padding read as zp_x. */
struct el_conv {
    const void *x;
    int x_uint8;
    int64_t n, h, w, c;
    int64_t kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow;
    int32_t zp_x;
};

void el_conv_rows(const struct el_conv *cv, int64_t row, int64_t count, int16_t *a,
                  int64_t stride);

/* The int8 / uint8 GEMM with the output stage fused (gemm.c):
 *   out[r, o] = stage(init[o] + sum_k x[r, k] * w[o, k])   in wrapping int32 */
#define EL_GEMM_NR 16 /* output channels per packed panel */
#define EL_GEMM_MR 4  /* rows per micro-kernel tile */
/* ISA levels: 1 is the architecture's baseline SIMD (SSE2 on x86-64, NEON on aarch64 or
 * 32-bit ARM built with NEON), 2 AVX2 where the CPU has it. */
enum el_isa { EL_ISA_GENERIC = 0, EL_ISA_SSE2 = 1, EL_ISA_AVX2 = 2, EL_ISA_NEON = 1 };
struct el_gemm {
    const void *x;               /* dense rows (rows, K), or the conv input when conv */
    int x_uint8;
    const struct el_conv *conv;  /* NULL: x holds the rows */
    const int16_t *panels;       /* (O_pad / NR, K_pad / 2, NR, 2) of w - zp_w */
    const int32_t *init;         /* (O_pad,) bias - zp_x * sum_k (w - zp_w), wrapped */
    int64_t k, k_pad, o;
    int64_t block;               /* rows per packed block of A (a multiple of MR) */
    int isa;                     /* the best micro-kernel allowed: EL_ISA_* */
    const struct el_stage *stage;
};

int el_gemm_avx2_available(void);
/* gemm_neon.c: the ARM NEON micro-kernel and fused fp32 / fixed stage. Built on aarch64
 * and on 32-bit ARM compiled with NEON (-mfpu=neon); on other 32-bit ARM Linux builds GCC
 * turns NEON on for that file alone and el_gemm_neon_available() asks the kernel. */
#if defined(__aarch64__) || defined(__ARM_NEON) || defined(__ARM_NEON__) ||               \
    (defined(__arm__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) && \
     __GNUC__ >= 8)
#define EL_GEMM_NEON 1
#else
#define EL_GEMM_NEON 0
#endif
int el_gemm_neon_available(void);
void el_gemm_tile_neon(int64_t mr, const int16_t *a, int64_t kp, const int16_t *w,
                       const int32_t *init, int32_t *tile);
void el_gemm_stage_neon(const struct el_stage *s, const int32_t *tile, int64_t mr,
                        int64_t n0, int64_t count, int8_t *out, int64_t row_stride);
int el_gemm_best_isa(void); /* the best micro-kernel this build and CPU run */
void el_gemm_rows(const struct el_gemm *g, int64_t row_begin, int64_t row_end,
                  int64_t panel_begin, int64_t panel_end, int16_t *a);

/* The fused output stage gemm.c runs on tiles of mr rows x 16 int32 accumulators
 * (row stride 16), channels n0 .. n0 + count - 1 (n0 a multiple of 16), writing
 * out + m * row_stride + n0: AVX2 in registers where isa allows and the stage is fp32 or
 * has its fixed-point planes, else requant.c's per-value code. */
/* The fixed-point tile stages' parameters, prepared once per op (gemm.c): per 16 channels,
 * EL_FIXED_PLANES rows of 16 int32 -- the multipliers; DOUBLE: the left shifts, the right
 * shifts, the RoundingDivideByPOT masks 2^right - 1; SINGLE: t = 31 - shift, the low 32
 * bits of 2^(63 - t) (the AVX2 stage's arithmetic-shift correction), 0 -- so a
 * tile call loads them (channels past width: multiplier 0, valid shifts). planes holds
 * EL_FIXED_PLANES * 16 * ceil(width / 16) values; returns 0 (planes untouched) where the
 * kind is not fixed point or a value is outside the vector stages' range, so the per-value
 * stage runs. */
#define EL_FIXED_PLANES 4
int el_fixed_planes(int kind, const int64_t *mult, const int64_t *shift, int64_t width,
                    int32_t *planes);
typedef void (*el_tile_stage_fn)(const struct el_stage *s, const int32_t *tile, int64_t mr,
                                 int64_t n0, int64_t count, int8_t *out, int64_t row_stride);
el_tile_stage_fn el_tile_stage(const struct el_stage *s, int isa);

/* int8 / uint8 DEPTHWISE_CONV_2D with the output stage fused (depthwise.c); rows are
 * (n, out_y) pairs. */
struct el_dw {
    const void *x;
    int x_uint8;
    int64_t n, h, w, c, m, o, o_pad;
    int64_t kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow;
    int64_t line_w;         /* positions of a widened input line: pad_l + ... */
    int32_t zp_x;
    const int16_t *weights; /* (o_pad / 16, pairs of taps, 32): w - zp_w, AVX2 order */
    const int16_t *weights_c; /* (KH * KW, o_pad): the same in channel order (C tile) */
    const int32_t *init;    /* (o_pad,) bias - zp_x * sum of the taps' w - zp_w, wrapped */
    int isa;                /* the best micro-kernel allowed: EL_ISA_* */
    struct el_stage stage;  /* out, requantization, zero point, clamp (no bias) */
    void *scratch;          /* the native step's: threads * scratch_stride bytes */
    int64_t scratch_stride; /* el_dw_scratch_bytes rounded up to 64: one thread's */
    int threads;            /* the step's rows split over the C pool (threadpool.c) */
    int64_t tasks;          /*   in this many parts */
};

int64_t el_dw_scratch_bytes(int64_t kh, int64_t taps, int64_t line_w, int64_t o_pad);
void el_dw_rows(const struct el_dw *d, int64_t row_begin, int64_t row_end, void *scratch);
int el_dw_step(void *args);

/* The run loop (runloop.c). A step function runs without the GIL on its bound argument
 * record and returns 0 (anything else: the run raises RuntimeError naming the step).
 * el_step_new copies ``size`` bytes of ``args`` and keeps ``keep`` (the arrays the
 * record points into) alive; it returns a NativeStep (a new reference) or NULL. */
typedef int (*el_step_fn)(void *args);
#ifdef Py_PYTHON_H
PyObject *el_step_new(el_step_fn fn, const void *args, size_t size, PyObject *keep);
/* a C-contiguous buffer of ``obj`` holding at least ``bytes`` (writable if asked): its
 * pointer, or NULL with ValueError set naming ``fn`` and ``what`` (steps.c). The buffer is
 * released at once: the caller's step keeps ``obj`` alive. */
void *el_span(PyObject *obj, long long bytes, int writable, const char *fn, const char *what);
/* fn(args) now, the GIL released: None, or NULL with RuntimeError (a kernel's direct call) */
PyObject *el_step_run(el_step_fn fn, void *args);
int el_runloop_add(PyObject *module);
#endif
#endif
