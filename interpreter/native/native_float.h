/* edgelite's native float32 kernels: shared declarations (Python side: module_float.c). */
#ifndef EDGELITE_NATIVE_FLOAT_H
#define EDGELITE_NATIVE_FLOAT_H
#include <stdint.h>

/* float32 DEPTHWISE_CONV_2D (depthwise_f32.c); rows are (n, out_y) pairs. */
struct el_dwf {
    const float *x;         /* (N, H, W, C) */
    const float *weights;   /* (KH * KW, O): the filter's taps, O = C * M */
    const float *bias;      /* (O,) or NULL */
    float *out;             /* (N, OH, OW, O) */
    int64_t n, h, w, c, m, o;
    int64_t kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow;
    int clamp;              /* 0: no fused activation */
    float lo, hi;           /* the activation's bounds (hi may be +inf) */
    int threads;            /* the native step's rows split over the C pool */
    int64_t tasks;          /*   in this many parts (threadpool.c) */
};

/* 0, or -1 where a large kernel's tap list could not be allocated */
int el_dwf_rows(const struct el_dwf *d, int64_t row_begin, int64_t row_end);
int el_dwf_step(void *args);

/* float32 LOGISTIC over values [begin, end) (activations_f32.c) */
void el_logistic_f32(const float *x, float *out, int64_t begin, int64_t end);

/* a float32 element-wise op's native step: every value */
struct el_unary_f32 {
    const float *x;
    float *out;
    int64_t count;
};

int el_logistic_f32_step(void *args);

/* out = clamp(out + bias[i % width]) over count float32 values (activations_f32.c) */
void el_bias_act_f32(float *out, int64_t count, const float *bias, int64_t width, int clamp,
                     float lo, float hi);
#endif
