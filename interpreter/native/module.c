/* edgelite.interpreter._native: a thin CPython module over the C kernels. Every function
 * takes numpy arrays through the buffer protocol (C-contiguous; the Python side in
 * interpreter/native.py checks dtypes and shapes) and releases the GIL around the
 * compute, so edgelite's thread pool runs slices at once. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"
#include "threadpool.h"

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

/* The address of a C-contiguous buffer of at least ``need`` bytes (NULL: exception set).
 * The buffer is released at once: the arrays passed here are numpy arrays, whose data
 * stays put while the object lives (the caller holds it, or a step keeps it). */
static void *buffer_at(PyObject *obj, Py_ssize_t need, int writable, const char *what)
{
    Py_buffer b;
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &b, flags) < 0) return NULL;
    void *at = b.buf;
    int ok = check_size(&b, need, what);
    PyBuffer_Release(&b);
    return ok ? at : NULL;
}

/* depthwise(...) / depthwise_step(...)'s arguments (see the method table) into *d; with
 * rows, also the row range. Returns 0, or -1 with an exception set. */
static int depthwise_parse(PyObject *args, int rows, struct el_dw *d, long long *r0,
                           long long *r1)
{
    PyObject *x, *weights, *weights_c, *init, *mult, *shift, *planes, *out, *scratch;
    long long n, h, w, c, m, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow, line_w, o_pad, zp_out, lo,
        hi;
    int x_uint8, zp_x, isa, kind, out_uint8;
    long long threads = 1, tasks = 1; /* the step's split (threadpool.c) */
    const char *format = rows ? "Oi(LLLLL)(LLLLLLLLLL)LiOOOLiiOOOLLLOiOLL"
                              : "Oi(LLLLL)(LLLLLLLLLL)LiOOOLiiOOOLLLOiO|LL";
    if (!PyArg_ParseTuple(args, format, &x, &x_uint8, &n, &h, &w, &c, &m, &kh, &kw, &sh, &sw,
                          &dh, &dw, &pt, &pl, &oh, &ow, &line_w, &zp_x, &weights, &weights_c, &init,
                          &o_pad, &isa, &kind, &mult, &shift, &planes, &zp_out, &lo, &hi, &out,
                          &out_uint8, &scratch, rows ? r0 : &threads, rows ? r1 : &tasks))
        return -1;
    const long long o = c * m, taps = kh * kw, pairs = (taps + 1) / 2;
    if (n < 1 || h < 1 || w < 1 || c < 1 || m < 1 || kh < 1 || kw < 1 || sh < 1 || sw < 1
        || dh < 1 || dw < 1 || pt < 0 || pl < 0 || oh < 1 || ow < 1 || o_pad < o
        || o_pad % 16 || (ow - 1) * sw + (kw - 1) * dw >= line_w || kind < EL_DOUBLE
        || kind > EL_FP32 || (kind <= EL_SINGLE && shift == Py_None)
        || (rows && (*r0 < 0 || *r0 > *r1 || *r1 > n * oh)) || threads < 1
        || threads > EL_POOL_MAX_THREADS || tasks < 1) {
        PyErr_SetString(PyExc_ValueError, "native depthwise: bad geometry or parameters");
        return -1;
    }
    *d = (struct el_dw){
        .x_uint8 = x_uint8, .n = n, .h = h, .w = w, .c = c, .m = m, .o = o, .o_pad = o_pad,
        .kh = kh, .kw = kw, .sh = sh, .sw = sw, .dh = dh, .dw = dw, .pad_t = pt,
        .pad_l = pl, .oh = oh, .ow = ow, .line_w = line_w, .zp_x = zp_x, .isa = isa,
        .threads = (int)threads, .tasks = tasks,
        .scratch_stride = (el_dw_scratch_bytes(kh, taps, line_w, o_pad) + 63) / 64 * 64,
    };
    d->stage = (struct el_stage){.kind = kind, .width = o, .zp_out = zp_out, .lo = lo,
                                 .hi = hi, .out_uint8 = out_uint8};
    const void *mult_at;
    if (!(d->x = buffer_at(x, n * h * w * c, 0, "the input"))
        || !(d->weights = buffer_at(weights, o_pad * pairs * 2 * 2, 0, "the weights"))
        || !(d->weights_c = buffer_at(weights_c, taps * o_pad * 2, 0, "the weights"))
        || !(d->init = buffer_at(init, o_pad * 4, 0, "the initial sums"))
        || !(mult_at = buffer_at(mult, o * (kind == EL_FP32 ? 4 : 8), 0, "the multipliers"))
        || (shift != Py_None && !(d->stage.shift = buffer_at(shift, o * 8, 0, "the shifts")))
        || (kind <= EL_SINGLE && planes != Py_None
            && !(d->stage.planes = buffer_at(planes, o_pad * EL_FIXED_PLANES * 4, 0,
                                             "the fixed-point planes")))
        || !(d->stage.out = buffer_at(out, n * oh * ow * o, 1, "the output"))
        || !(d->scratch = buffer_at(scratch, (threads - 1) * d->scratch_stride
                                                 + el_dw_scratch_bytes(kh, taps, line_w, o_pad),
                                    1, "the scratch")))
        return -1;
    d->stage.mult_f64 = mult_at;
    d->stage.mult_i64 = mult_at;
    d->stage.mult_f32 = mult_at;
    return 0;
}

static PyObject *depthwise(PyObject *self, PyObject *args)
{
    struct el_dw d;
    long long r0, r1;
    (void)self;
    if (depthwise_parse(args, 1, &d, &r0, &r1) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    el_dw_rows(&d, r0, r1, d.scratch);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *depthwise_step(PyObject *self, PyObject *args)
{
    struct el_dw d;
    (void)self;
    if (depthwise_parse(args, 0, &d, NULL, NULL) < 0) return NULL;
    return el_step_new(el_dw_step, &d, sizeof d, args); /* args holds every array */
}

static PyObject *depthwise_scratch(PyObject *self, PyObject *args)
{
    long long kh, taps, line_w, o_pad;
    (void)self;
    if (!PyArg_ParseTuple(args, "LLLL", &kh, &taps, &line_w, &o_pad)) return NULL;
    return PyLong_FromLongLong(el_dw_scratch_bytes(kh, taps, line_w, o_pad));
}

/* The GEMM's parameters that describe the rows of A: dense (conv None) or a CONV_2D
 * geometry (n, h, w, c, kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow). Returns the
 * number of rows, or -1 with an exception set. */
static long long gemm_source(PyObject *conv_obj, struct el_conv *cv, Py_buffer *x,
                             long long k)
{
    if (conv_obj == Py_None) return x->len / (k > 0 ? k : 1);
    long long g[14];
    if (!PyArg_ParseTuple(conv_obj, "LLLLLLLLLLLLLL", &g[0], &g[1], &g[2], &g[3], &g[4],
                          &g[5], &g[6], &g[7], &g[8], &g[9], &g[10], &g[11], &g[12], &g[13]))
        return -1;
    for (int i = 0; i < 14; i++)
        if (g[i] < (i == 10 || i == 11 ? 0 : 1)) {
            PyErr_SetString(PyExc_ValueError, "native gemm: bad conv geometry");
            return -1;
        }
    cv->n = g[0]; cv->h = g[1]; cv->w = g[2]; cv->c = g[3]; cv->kh = g[4]; cv->kw = g[5];
    cv->sh = g[6]; cv->sw = g[7]; cv->dh = g[8]; cv->dw = g[9]; cv->pad_t = g[10];
    cv->pad_l = g[11]; cv->oh = g[12]; cv->ow = g[13];
    if (k != cv->kh * cv->kw * cv->c) {
        PyErr_SetString(PyExc_ValueError, "native gemm: K is not KH * KW * C");
        return -1;
    }
    if (!check_size(x, cv->n * cv->h * cv->w * cv->c, "the input")) return -1;
    return cv->n * cv->oh * cv->ow;
}

/* gemm's arguments (see the method table) checked into one record; gemm_run fixes the
 * record's inner pointers itself, so it may be copied (a NativeStep's). */
struct gemm_call {
    struct el_gemm g;
    struct el_stage s;
    struct el_conv cv;
    long long r0, r1, p0, p1;
    int16_t *a;               /* threads buffers of a_stride int16: one per thread */
    long long a_stride;
    int threads;              /* the C pool's (threadpool.c); 1: the calling thread */
    long long row_parts, panel_parts; /* tasks: a grid over the rows and the panels */
};

static int gemm_parse(PyObject *args, struct gemm_call *c)
{
    Py_buffer x, panels, init, mult, out, a, shift = {0}, planes = {0};
    PyObject *conv_obj, *shift_obj, *planes_obj;
    int x_uint8, zp_x, isa, kind, out_uint8, ok = 0;
    long long k, k_pad, o, block, zp_out, lo, hi;
    c->threads = 1;
    c->row_parts = c->panel_parts = 1;
    if (!PyArg_ParseTuple(args, "y*iOiy*y*LLLLiiy*OOLLLw*iLLLLw*|iLL", &x, &x_uint8, &conv_obj,
                          &zp_x, &panels, &init, &k, &k_pad, &o, &block, &isa, &kind, &mult,
                          &shift_obj, &planes_obj, &zp_out, &lo, &hi, &out, &out_uint8, &c->r0,
                          &c->r1, &c->p0, &c->p1, &a, &c->threads, &c->row_parts,
                          &c->panel_parts))
        return -1;
    c->cv = (struct el_conv){.x = x.buf, .x_uint8 = x_uint8, .zp_x = zp_x};
    int have_shift = shift_obj != Py_None;
    int have_planes = planes_obj != Py_None && kind <= EL_SINGLE;
    if (have_shift && PyObject_GetBuffer(shift_obj, &shift, PyBUF_SIMPLE) < 0) goto done;
    if (have_planes && PyObject_GetBuffer(planes_obj, &planes, PyBUF_C_CONTIGUOUS) < 0) goto done;
    if (k < 1 || o < 1 || k_pad < k || k_pad % 2 || block < 1 || block % EL_GEMM_MR
        || kind < EL_DOUBLE || kind > EL_FP32 || c->threads < 1
        || c->threads > EL_POOL_MAX_THREADS || c->row_parts < 1 || c->panel_parts < 1) {
        PyErr_SetString(PyExc_ValueError, "native gemm: bad sizes or kind");
        goto done;
    }
    long long rows = gemm_source(conv_obj, &c->cv, &x, k);
    long long o_pad = (o + EL_GEMM_NR - 1) / EL_GEMM_NR * EL_GEMM_NR;
    if (rows < 0) goto done;
    if (c->r0 < 0 || c->r0 > c->r1 || c->r1 > rows || c->p0 < 0 || c->p0 > c->p1
        || c->p1 * EL_GEMM_NR > o_pad) {
        PyErr_SetString(PyExc_ValueError, "native gemm: rows or panels out of range");
        goto done;
    }
    if (!check_size(&panels, o_pad * k_pad * 2, "the packed weights")
        || !check_size(&init, o_pad * 4, "the initial sums")
        || !check_size(&mult, o * (kind == EL_FP32 ? 4 : 8), "the multipliers")
        || !check_size(&out, c->r1 * o, "the output")
        || !check_size(&a, c->threads * block * k_pad * 2, "the buffer")
        || (have_planes && !check_size(&planes, o_pad * EL_FIXED_PLANES * 4,
                                       "the fixed-point planes")))
        goto done;
    if (kind <= EL_SINGLE && (!have_shift || !check_size(&shift, o * 8, "the shifts"))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native gemm: no shifts");
        goto done;
    }
    c->s = (struct el_stage){
        .kind = kind, .mult_f64 = (const double *)mult.buf,
        .mult_i64 = (const int64_t *)mult.buf, .mult_f32 = (const float *)mult.buf,
        .shift = have_shift ? (const int64_t *)shift.buf : NULL, .width = o,
        .zp_out = zp_out, .lo = lo, .hi = hi, .out = out.buf, .out_uint8 = out_uint8,
        .planes = have_planes ? (const int32_t *)planes.buf : NULL,
    };
    c->g = (struct el_gemm){
        .x = x.buf, .x_uint8 = x_uint8, .conv = conv_obj == Py_None ? NULL : &c->cv,
        .panels = (const int16_t *)panels.buf, .init = (const int32_t *)init.buf,
        .k = k, .k_pad = k_pad, .o = o, .block = block, .isa = isa, .stage = &c->s,
    };
    c->a = (int16_t *)a.buf;
    c->a_stride = block * k_pad;
    ok = 1;
done: /* the arrays stay put while the caller's argument tuple holds them */
    if (have_shift && shift.obj) PyBuffer_Release(&shift);
    if (have_planes && planes.obj) PyBuffer_Release(&planes);
    PyBuffer_Release(&x);
    PyBuffer_Release(&panels);
    PyBuffer_Release(&init);
    PyBuffer_Release(&mult);
    PyBuffer_Release(&out);
    PyBuffer_Release(&a);
    return ok ? 0 : -1;
}

/* Task t of the grid: rows part t / panel_parts (whole tiles of MR rows), panels part
 * t % panel_parts, on thread worker's buffer. */
static void gemm_task(void *ctx, int64_t t, int worker)
{
    const struct gemm_call *c = ctx;
    const int64_t ri = t / c->panel_parts, pi = t % c->panel_parts;
    const int64_t rp = c->row_parts, pp = c->panel_parts;
    el_gemm_rows(&c->g, el_part(c->r0, c->r1, rp, ri, EL_GEMM_MR),
                 el_part(c->r0, c->r1, rp, ri + 1, EL_GEMM_MR), el_part(c->p0, c->p1, pp, pi, 1),
                 el_part(c->p0, c->p1, pp, pi + 1, 1), c->a + worker * c->a_stride);
}

static int gemm_run(void *args)
{
    struct gemm_call *c = args;
    if (c->g.conv) c->g.conv = &c->cv;
    c->g.stage = &c->s;
    el_pool_run(c->threads, c->row_parts * c->panel_parts, gemm_task, c);
    return 0;
}

static PyObject *gemm(PyObject *self, PyObject *args)
{
    struct gemm_call c;
    (void)self;
    return gemm_parse(args, &c) < 0 ? NULL : el_step_run(gemm_run, &c);
}

static PyObject *gemm_step(PyObject *self, PyObject *args)
{
    struct gemm_call c;
    (void)self; /* args holds every array the record points into */
    return gemm_parse(args, &c) < 0 ? NULL : el_step_new(gemm_run, &c, sizeof c, args);
}

/* fixed_planes(kind, mult, shift, width, planes): el_fixed_planes into planes (int32,
 * writable); True, or False where the kind or a value is outside the vector stages'. */
static PyObject *fixed_planes(PyObject *self, PyObject *args)
{
    PyObject *mult, *shift, *planes;
    int kind;
    long long width;
    (void)self;
    if (!PyArg_ParseTuple(args, "iOOLO", &kind, &mult, &shift, &width, &planes)) return NULL;
    if (width < 1 || kind < EL_DOUBLE || kind > EL_SINGLE) Py_RETURN_FALSE;
    const long long padded = (width + EL_GEMM_NR - 1) / EL_GEMM_NR * EL_GEMM_NR;
    const int64_t *m, *sh;
    int32_t *at;
    if (!(m = buffer_at(mult, width * 8, 0, "the multipliers"))
        || !(sh = buffer_at(shift, width * 8, 0, "the shifts"))
        || !(at = buffer_at(planes, padded * EL_FIXED_PLANES * 4, 1, "the fixed-point planes")))
        return NULL;
    return PyBool_FromLong(el_fixed_planes(kind, m, sh, width, at));
}

static PyObject *pool_workers(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromLong(el_pool_workers());
}

static PyObject *pool_shutdown(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_BEGIN_ALLOW_THREADS
    el_pool_shutdown();
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *gemm_isa(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyLong_FromLong(el_gemm_best_isa());
}

static PyMethodDef methods[] = {
    {"depthwise", depthwise, METH_VARARGS,
     "depthwise(x, x_uint8, (n, h, w, c, m), (kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow), "
     "line_w, zp_x, weights, weights_c, init, o_pad, isa, kind, mult, shift, planes, zp_out, lo, "
     "hi, out, "
     "out_uint8, scratch, row_begin, row_end): int8 / uint8 DEPTHWISE_CONV_2D output rows, "
     "requantized (depthwise.c)"},
    {"depthwise_step", depthwise_step, METH_VARARGS,
     "depthwise_step(... as depthwise without the row range[, threads, tasks]): a NativeStep "
     "running every row, split into tasks over threads (scratch: one per thread, each "
     "depthwise_scratch rounded up to 64 bytes)"},
    {"depthwise_scratch", depthwise_scratch, METH_VARARGS,
     "depthwise_scratch(kh, taps, line_w, o_pad): bytes of one thread's scratch"},
    {"gemm", gemm, METH_VARARGS,
     "gemm(x, x_uint8, conv, zp_x, panels, init, k, k_pad, o, block, isa, kind, mult, shift, "
     "planes, zp_out, lo, hi, out, out_uint8, row_begin, row_end, panel_begin, panel_end, a"
     "[, threads, row_parts, panel_parts]): output rows [row_begin, row_end), channels "
     "[16 panel_begin, 16 panel_end) of an int8 / uint8 FULLY_CONNECTED / CONV_2D, requantized "
     "(gemm.c); split into row_parts x panel_parts tasks over threads (a: one block buffer "
     "per thread)"},
    {"gemm_step", gemm_step, METH_VARARGS,
     "gemm_step(... as gemm): a NativeStep running those rows and panels"},
    {"pool_workers", pool_workers, METH_NOARGS,
     "pool_workers(): how many C pool worker threads run now (threadpool.c)"},
    {"pool_shutdown", pool_shutdown, METH_NOARGS,
     "pool_shutdown(): stop and join the C pool's workers (the next split run starts new ones)"},
    {"fixed_planes", fixed_planes, METH_VARARGS,
     "fixed_planes(kind, mult, shift, width, planes): the fixed-point tile stages' "
     "parameters prepared into planes (native.h el_fixed_planes); False: out of their range"},
    {"gemm_isa", gemm_isa, METH_NOARGS,
     "gemm_isa(): the best GEMM micro-kernel here: 0 generic C, 1 SSE2 / NEON, 2 AVX2"},
    {"output_stage", output_stage, METH_VARARGS,
     "output_stage(acc, acc_f64, bias, kind, mult, shift, width, zp_out, lo, hi, wrap, out, "
     "out_uint8): requantize an int8 / uint8 kernel's accumulator into its output"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_native",
                                    "edgelite's native (C) kernels", -1, methods};

/* element-wise, table, pool, reduce, quantize and softmax kernels: module_ops.c */
extern PyMethodDef el_ops_methods[];
extern PyMethodDef adaround_methods[]; /* adaround.c: the converter's AdaRound loop */
extern PyMethodDef tensor_stats_methods[]; /* tensor_stats.c: compare's error sums */
extern PyMethodDef entropy_methods[];  /* entropy.c: the entropy calibration's KL search */
/* native steps of the kernels with scratch (AVERAGE_POOL_2D, SOFTMAX): steps.c */
extern PyMethodDef el_steps_methods[];
extern PyMethodDef el_float_methods[]; /* float32 kernels: module_float.c */
extern PyMethodDef el_fc_f32_methods[]; /* small float32 FULLY_CONNECTED: fc_f32.c */
extern PyMethodDef el_resize_f32_methods[]; /* float32 RESIZE_BILINEAR: resize_f32.c */
extern PyMethodDef el_binary_f32_methods[]; /* float32 ADD / SUB / MUL: binary_f32.c */
extern PyMethodDef el_pool_f32_methods[]; /* float32 MAX / AVERAGE pools: pool_f32.c */
extern PyMethodDef el_conv_blas_methods[]; /* float32 CONV_2D blocks on BLAS: conv_blas.c */

PyMODINIT_FUNC PyInit__native(void)
{
    el_pool_init(); /* the C pool's fork handler; its workers are joined at exit */
    (void)Py_AtExit(el_pool_shutdown); /* -1 where the 32 slots are taken: workers then die
                                        * with the process */
    PyObject *m = PyModule_Create(&module);
    if (m && PyModule_AddFunctions(m, el_ops_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, adaround_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, tensor_stats_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, entropy_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_steps_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_float_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_fc_f32_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_resize_f32_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_binary_f32_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_pool_f32_methods) < 0) Py_CLEAR(m);
    if (m && PyModule_AddFunctions(m, el_conv_blas_methods) < 0) Py_CLEAR(m);
    if (m && el_runloop_add(m) < 0) Py_CLEAR(m); /* runloop.c */
    return m;
}
