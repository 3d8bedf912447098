/* edgelite.interpreter._native: a thin CPython module over the C kernels. Every function
 * takes numpy arrays through the buffer protocol (C-contiguous; the Python side in
 * interpreter/native.py checks dtypes and shapes) and releases the GIL around the
 * compute, so edgelite's thread pool runs slices at once. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"

static int check_size(Py_buffer *b, Py_ssize_t need, const char *what)
{
    if (b->len < need) {
        PyErr_Format(PyExc_ValueError, "native output stage: %s holds %zd bytes, needs %zd",
                     what, b->len, need);
        return 0;
    }
    return 1;
}

static PyObject *output_stage(PyObject *self, PyObject *args)
{
    Py_buffer acc, mult, out, bias = {0}, shift = {0};
    PyObject *bias_obj, *shift_obj;
    int acc_f64, kind, wrap, out_uint8;
    long long width, zp_out, lo, hi;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iOiy*OLLLLiw*i", &acc, &acc_f64, &bias_obj, &kind, &mult,
                          &shift_obj, &width, &zp_out, &lo, &hi, &wrap, &out, &out_uint8))
        return NULL;
    PyObject *result = NULL;
    int have_bias = bias_obj != Py_None, have_shift = shift_obj != Py_None;
    if (have_bias && PyObject_GetBuffer(bias_obj, &bias, PyBUF_SIMPLE) < 0) goto done;
    if (have_shift && PyObject_GetBuffer(shift_obj, &shift, PyBUF_SIMPLE) < 0) goto done;
    if (width <= 0 || kind < EL_DOUBLE || kind > EL_FP32) {
        PyErr_SetString(PyExc_ValueError, "native output stage: bad width or kind");
        goto done;
    }
    Py_ssize_t item = acc_f64 ? 8 : 4;
    Py_ssize_t count = acc.len / item;
    Py_ssize_t rows = count / width;
    int fp32_bias = kind == EL_FP32 && !acc_f64;
    if (count % width || !check_size(&out, count, "the output")
        || !check_size(&mult, width * (kind == EL_FP32 ? 4 : 8), "the multipliers")
        || (have_bias && !check_size(&bias, width * (fp32_bias ? 4 : 8), "the bias")))
        goto done;
    if (kind <= EL_SINGLE && (!have_shift || !check_size(&shift, width * 8, "the shifts"))) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "native output stage: fixed point needs shifts");
        goto done;
    }
    struct el_stage s = {
        .acc = acc.buf, .acc_f64 = acc_f64,
        .bias = have_bias ? bias.buf : NULL,
        .bias_f64 = have_bias ? (const double *)bias.buf : NULL,
        .bias_f32 = have_bias ? (const float *)bias.buf : NULL,
        .kind = kind,
        .mult_f64 = (const double *)mult.buf, .mult_i64 = (const int64_t *)mult.buf,
        .shift = have_shift ? (const int64_t *)shift.buf : NULL,
        .mult_f32 = (const float *)mult.buf,
        .width = width, .zp_out = zp_out, .lo = lo, .hi = hi, .wrap = wrap,
        .out = out.buf, .out_uint8 = out_uint8,
    };
    Py_BEGIN_ALLOW_THREADS
    if (kind == EL_FP32) el_fp32_stage(&s, 0, rows);
    else el_exact_stage(&s, 0, rows);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    if (have_bias && bias.obj) PyBuffer_Release(&bias);
    if (have_shift && shift.obj) PyBuffer_Release(&shift);
    PyBuffer_Release(&acc);
    PyBuffer_Release(&mult);
    PyBuffer_Release(&out);
    return result;
}

static PyObject *depthwise_acc(PyObject *self, PyObject *args)
{
    Py_buffer x, weights, acc;
    struct el_depthwise d;
    long long n, h, w, c, m, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow, r0, r1;
    int zp_x;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*i(LLLLL)iy*(LLLLLLLLLL)w*iLL", &x, &d.x_uint8, &n, &h, &w,
                          &c, &m, &zp_x, &weights, &kh, &kw, &sh, &sw, &dh, &dw, &pt, &pl,
                          &oh, &ow, &acc, &d.acc_f64, &r0, &r1))
        return NULL;
    PyObject *result = NULL;
    double *scratch = NULL;
    const long long O = c * m;
    if (n < 1 || h < 1 || w < 1 || c < 1 || m < 1 || kh < 1 || kw < 1 || oh < 1 || ow < 1
        || r0 < 0 || r1 > n * oh || r0 > r1 || !check_size(&x, n * h * w * c, "the input")
        || !check_size(&weights, kh * kw * O * (d.acc_f64 ? 8 : 4), "the weights")
        || !check_size(&acc, n * oh * ow * O * (d.acc_f64 ? 8 : 4), "the accumulator")) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native depthwise: bad geometry");
        goto done;
    }
    scratch = PyMem_RawMalloc(sizeof(double) * (size_t)c);
    if (!scratch) { PyErr_NoMemory(); goto done; }
    d.x = x.buf; d.n = n; d.h = h; d.w = w; d.c = c; d.m = m; d.zp_x = zp_x;
    d.weights = weights.buf; d.kh = kh; d.kw = kw; d.sh = sh; d.sw = sw; d.dh = dh;
    d.dw = dw; d.pad_t = pt; d.pad_l = pl; d.oh = oh; d.ow = ow; d.acc = acc.buf;
    Py_BEGIN_ALLOW_THREADS
    el_depthwise_acc(&d, r0, r1, scratch);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_RawFree(scratch);
    PyBuffer_Release(&x);
    PyBuffer_Release(&weights);
    PyBuffer_Release(&acc);
    return result;
}

static PyMethodDef methods[] = {
    {"depthwise_acc", depthwise_acc, METH_VARARGS,
     "depthwise_acc(x, x_uint8, (n, h, w, c, m), zp_x, weights, (kh, kw, sh, sw, dh, dw, "
     "pad_t, pad_l, oh, ow), acc, acc_f64, row_begin, row_end): int8 / uint8 depthwise "
     "accumulators of output rows [row_begin, row_end) of the (n, oh) rows"},
    {"output_stage", output_stage, METH_VARARGS,
     "output_stage(acc, acc_f64, bias, kind, mult, shift, width, zp_out, lo, hi, wrap, out, "
     "out_uint8): requantize an int8 / uint8 kernel's accumulator into its output"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "edgelite's native (C) kernels", -1, methods};

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m && el_runloop_add(m) < 0) Py_CLEAR(m); /* runloop.c */
    return m;
}
