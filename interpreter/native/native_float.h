/* edgelite's native float32 kernels: shared declarations (Python side: module_float.c). */
#ifndef EDGELITE_NATIVE_FLOAT_H
#define EDGELITE_NATIVE_FLOAT_H
#include <stdint.h>

/* A float kernel's fused activation (its ``clamp`` field): none, clamp to [lo, hi], or
 * swish -- x * sigmoid(x) of each output, the LOGISTIC + MUL after the op fused into it at
 * allocate (interpreter/fused_steps.py) */
enum { EL_ACT_NONE = 0, EL_ACT_CLAMP = 1, EL_ACT_SWISH = 2 };

/* float32 DEPTHWISE_CONV_2D (depthwise_f32.c); rows are (n, out_y) pairs. */
struct el_dwf {
    const float *x;         /* (N, H, W, C) */
    const float *weights;   /* (KH * KW, O): the filter's taps, O = C * M */
    const float *bias;      /* (O,) or NULL */
    float *out;             /* (N, OH, OW, O) */
    int64_t n, h, w, c, m, o;
    int64_t kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow;
    int clamp;              /* the fused activation: EL_ACT_* */
    float lo, hi;           /* the activation's bounds (hi may be +inf) */
    int threads;            /* the native step's rows split over the C pool */
    int64_t tasks;          /*   in this many parts (threadpool.c) */
};

/* 0, or -1 where a large kernel's tap list could not be allocated */
int el_dwf_rows(const struct el_dwf *d, int64_t row_begin, int64_t row_end);
int el_dwf_step(void *args);

/* float32 element-wise kernels over values [begin, end) (transcend_f32.c) */
typedef void (*el_unary_f32_fn)(const float *x, float *out, int64_t begin, int64_t end);
void el_logistic_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_tanh_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_exp_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_elu_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_hard_swish_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_swish_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_gelu_tanh_f32(const float *x, float *out, int64_t begin, int64_t end);
void el_gelu_erfc_f32(const float *x, float *out, int64_t begin, int64_t end);
/* v[i] = swish(v[i]) for i < n: el_swish_f32's values, in place */
void el_swish_inplace_f32(float *v, int64_t n);

/* a float32 element-wise op's native step: fn over every value, in ``tasks`` runs of values
 * over ``threads`` threads of the C pool (threadpool.c; tasks 1: on the caller) */
struct el_unary_f32 {
    el_unary_f32_fn fn;
    const float *x;
    float *out;
    int64_t count;
    int threads;
    int64_t tasks;
};

int el_unary_f32_step(void *args);

/* float32 SOFTMAX over rows [r0, r1) of depth values (transcend_f32.c); the step: every row,
 * in ``tasks`` runs of rows over ``threads`` threads of the C pool */
struct el_softmax_f32 {
    const float *x;
    float *out;
    int64_t depth, rows;
    float beta;
    int threads;
    int64_t tasks;
};

void el_softmax_f32(const struct el_softmax_f32 *p, int64_t r0, int64_t r1);
int el_softmax_f32_step(void *args);

/* float32 C (m x [c0, c1) of its ldc columns) = A (m x k, row stride lda) @ B, B packed by
 * el_gemm_f32_pack into panels of EL_F32_NR columns (gemm_f32.c); c0 a multiple of
 * EL_F32_NR. el_gemm_f32_fma: 1 where its AVX2 + FMA tile runs (else the plain C one). */
#define EL_F32_MR 6
#define EL_F32_NR 16
int64_t el_gemm_f32_packed_size(int64_t k, int64_t n);
void el_gemm_f32_pack(const float *filter, int64_t k, int64_t n, float *out);
void el_gemm_f32_packed(int64_t m, int64_t k, const float *a, int64_t lda,
                        const float *packed, float *c, int64_t ldc, int64_t c0, int64_t c1);
int el_gemm_f32_fma(void);

/* out = act(out + bias[i % width]) over count float32 values, act an EL_ACT_* (clamp to
 * [lo, hi], or swish) (activations_f32.c) */
void el_bias_act_f32(float *out, int64_t count, const float *bias, int64_t width, int clamp,
                     float lo, float hi);
#endif
