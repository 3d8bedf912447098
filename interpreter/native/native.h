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
};

void el_exact_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end);
void el_fp32_stage(const struct el_stage *s, int64_t row_begin, int64_t row_end);
void el_stage_int32(const struct el_stage *s, const int32_t *acc, int64_t c0, int64_t count,
                    void *out_row);



/* DEPTHWISE_CONV_2D int8 / uint8 accumulators (depthwise.c); rows are (n, out_y) pairs. */
struct el_depthwise {
    const void *x;
    int x_uint8;
    int64_t n, h, w, c, m;
    int32_t zp_x;
    const void *weights; /* (KH, KW, C*M): w - zp_w, in the accumulator's float type */
    int64_t kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow;
    void *acc;
    int acc_f64;
};

void el_depthwise_acc(const struct el_depthwise *d, int64_t row_begin, int64_t row_end,
                      void *centered);

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
enum el_isa { EL_ISA_GENERIC = 0, EL_ISA_SSE2 = 1, EL_ISA_AVX2 = 2 }; /* AVX2: if the CPU has it */
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
int el_gemm_best_isa(void); /* the best micro-kernel this build and CPU run */
void el_gemm_rows(const struct el_gemm *g, int64_t row_begin, int64_t row_end,
                  int64_t panel_begin, int64_t panel_end, int16_t *a);
#endif
