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

/* The run loop (runloop.c). A step function runs without the GIL on its bound argument
 * record and returns 0 (anything else: the run raises RuntimeError naming the step).
 * el_step_new copies ``size`` bytes of ``args`` and keeps ``keep`` (the arrays the
 * record points into) alive; it returns a NativeStep (a new reference) or NULL. */
typedef int (*el_step_fn)(void *args);
#ifdef Py_PYTHON_H
PyObject *el_step_new(el_step_fn fn, const void *args, size_t size, PyObject *keep);
int el_runloop_add(PyObject *module);
#endif
#endif
