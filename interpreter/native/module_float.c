/* The Python side of the native float32 kernels (depthwise_f32.c, transcend_f32.c,
 * activations_f32.c): argument parsing and buffer checks; the GIL is released around the
 * compute. PyInit__native (module.c) adds el_float_methods to the module. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"
#include "native_float.h"
#include "threadpool.h"

/* The address of a C-contiguous buffer of at least ``need`` bytes (NULL: exception set).
 * Released at once: numpy arrays' data stays put while the caller (or a step) holds them. */
static void *float_buffer(PyObject *obj, Py_ssize_t need, int writable, const char *what)
{
    Py_buffer b;
    if (PyObject_GetBuffer(obj, &b, PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return NULL;
    void *at = b.buf;
    const Py_ssize_t len = b.len;
    PyBuffer_Release(&b);
    if (len < need) {
        PyErr_Format(PyExc_ValueError, "native float kernel: %s holds %zd bytes, needs %zd",
                     what, len, need);
        return NULL;
    }
    return at;
}

/* a step's (threads, tasks) out of range: ValueError set, 1 */
static int split_bad(int threads, long long tasks)
{
    if (threads >= 1 && threads <= EL_POOL_MAX_THREADS && tasks >= 1 && tasks <= (1 << 20))
        return 0;
    PyErr_SetString(PyExc_ValueError, "native float kernel: bad threads or tasks");
    return 1;
}

/* depthwise_f32(...) / depthwise_f32_step(...)'s arguments into *d (with rows, also the
 * row range). Returns 0, or -1 with an exception set. */
static int dwf_parse(PyObject *args, int rows, struct el_dwf *d, long long *r0,
                     long long *r1)
{
    PyObject *x, *weights, *bias, *out;
    long long n, h, w, c, m, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow;
    int clamp;
    float lo, hi;
    long long threads = 1, tasks = 1; /* the step's split over the C pool */
    const char *format = rows ? "O(LLLLL)(LLLLLLLLLL)OOiffOLL" : "O(LLLLL)(LLLLLLLLLL)OOiffO|LL";
    if (!PyArg_ParseTuple(args, format, &x, &n, &h, &w, &c, &m, &kh, &kw, &sh, &sw, &dh, &dw,
                          &pt, &pl, &oh, &ow, &weights, &bias, &clamp, &lo, &hi, &out,
                          rows ? r0 : &threads, rows ? r1 : &tasks))
        return -1;
    if (n < 1 || h < 1 || w < 1 || c < 1 || m < 1 || kh < 1 || kw < 1 || sh < 1 || sw < 1
        || dh < 1 || dw < 1 || pt < 0 || pl < 0 || oh < 1 || ow < 1
        || clamp < EL_ACT_NONE || clamp > EL_ACT_SWISH
        || (rows && (*r0 < 0 || *r0 > *r1 || *r1 > n * oh)) || threads < 1 || tasks < 1
        || threads > EL_POOL_MAX_THREADS) {
        PyErr_SetString(PyExc_ValueError, "native float depthwise: bad geometry");
        return -1;
    }
    const long long o = c * m, f = (long long)sizeof(float);
    *d = (struct el_dwf){
        .n = n, .h = h, .w = w, .c = c, .m = m, .o = o, .kh = kh, .kw = kw, .sh = sh,
        .sw = sw, .dh = dh, .dw = dw, .pad_t = pt, .pad_l = pl, .oh = oh, .ow = ow,
        .clamp = clamp, .lo = lo, .hi = hi, .threads = (int)threads, .tasks = tasks,
    };
    if (!(d->x = float_buffer(x, n * h * w * c * f, 0, "the input"))
        || !(d->weights = float_buffer(weights, kh * kw * o * f, 0, "the filter"))
        || (bias != Py_None && !(d->bias = float_buffer(bias, o * f, 0, "the bias")))
        || !(d->out = float_buffer(out, n * oh * ow * o * f, 1, "the output")))
        return -1;
    return 0;
}

static PyObject *depthwise_f32(PyObject *self, PyObject *args)
{
    struct el_dwf d;
    long long r0, r1;
    int status;
    (void)self;
    if (dwf_parse(args, 1, &d, &r0, &r1) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    status = el_dwf_rows(&d, r0, r1);
    Py_END_ALLOW_THREADS
    if (status) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static PyObject *depthwise_f32_step(PyObject *self, PyObject *args)
{
    struct el_dwf d;
    (void)self;
    if (dwf_parse(args, 0, &d, NULL, NULL) < 0) return NULL;
    return el_step_new(el_dwf_step, &d, sizeof d, args); /* args holds every array */
}

/* <op>_f32(x, out, begin, end) / <op>_f32_step(x, out[, threads, tasks]): x and out
 * float32 of the same size (at least end values); fn computes the op (transcend_f32.c) */
static int unary_parse(PyObject *args, int rows, el_unary_f32_fn fn, struct el_unary_f32 *u,
                       long long *r0, long long *r1)
{
    PyObject *x, *out;
    long long tasks = 1;
    u->threads = 1;
    if (rows ? !PyArg_ParseTuple(args, "OOLL", &x, &out, r0, r1)
             : !PyArg_ParseTuple(args, "OO|iL", &x, &out, &u->threads, &tasks))
        return -1;
    if (split_bad(u->threads, tasks)) return -1;
    u->tasks = tasks;
    Py_buffer b;
    if (PyObject_GetBuffer(x, &b, PyBUF_C_CONTIGUOUS) < 0) return -1;
    u->fn = fn;
    u->x = b.buf;
    u->count = b.len / (Py_ssize_t)sizeof(float);
    PyBuffer_Release(&b);
    if (!(u->out = float_buffer(out, u->count * (Py_ssize_t)sizeof(float), 1, "the output")))
        return -1;
    if (rows && (*r0 < 0 || *r0 > *r1 || *r1 > u->count)) {
        PyErr_SetString(PyExc_ValueError, "native float element-wise kernel: bad range");
        return -1;
    }
    return 0;
}

static PyObject *unary_call(PyObject *args, el_unary_f32_fn fn)
{
    struct el_unary_f32 u;
    long long r0, r1;
    if (unary_parse(args, 1, fn, &u, &r0, &r1) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    fn(u.x, u.out, r0, r1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *unary_step(PyObject *args, el_unary_f32_fn fn)
{
    struct el_unary_f32 u;
    if (unary_parse(args, 0, fn, &u, NULL, NULL) < 0) return NULL;
    return el_step_new(el_unary_f32_step, &u, sizeof u, args);
}

/* op_f32 and op_f32_step for the C kernel el_op_f32 */
#define EL_UNARY_METHODS(op)                                                                \
    static PyObject *op##_f32(PyObject *self, PyObject *args)                               \
    {                                                                                       \
        (void)self;                                                                         \
        return unary_call(args, el_##op##_f32);                                             \
    }                                                                                       \
    static PyObject *op##_f32_step(PyObject *self, PyObject *args)                          \
    {                                                                                       \
        (void)self;                                                                         \
        return unary_step(args, el_##op##_f32);                                             \
    }

EL_UNARY_METHODS(logistic)
EL_UNARY_METHODS(tanh)
EL_UNARY_METHODS(exp)
EL_UNARY_METHODS(elu)
EL_UNARY_METHODS(hard_swish)
EL_UNARY_METHODS(swish)
EL_UNARY_METHODS(gelu_tanh)
EL_UNARY_METHODS(gelu_erfc)

/* softmax_f32(x, out, depth, beta, row_begin, row_end) / softmax_f32_step(x, out, depth,
 * beta): x and out float32 of the same size, a whole number of rows of depth values */
static int softmax_parse(PyObject *args, int rows, struct el_softmax_f32 *p, long long *r0,
                         long long *r1)
{
    PyObject *x, *out;
    long long depth, tasks = 1;
    p->threads = 1;
    if (rows ? !PyArg_ParseTuple(args, "OOLfLL", &x, &out, &depth, &p->beta, r0, r1)
             : !PyArg_ParseTuple(args, "OOLf|iL", &x, &out, &depth, &p->beta, &p->threads,
                                 &tasks))
        return -1;
    if (split_bad(p->threads, tasks)) return -1;
    p->tasks = tasks;
    Py_buffer b;
    if (PyObject_GetBuffer(x, &b, PyBUF_C_CONTIGUOUS) < 0) return -1;
    p->x = b.buf;
    const long long count = b.len / (Py_ssize_t)sizeof(float);
    PyBuffer_Release(&b);
    if (depth < 1 || count % depth) {
        PyErr_SetString(PyExc_ValueError, "native float softmax: bad depth");
        return -1;
    }
    p->depth = depth;
    p->rows = count / depth;
    if (!(p->out = float_buffer(out, count * (Py_ssize_t)sizeof(float), 1, "the output")))
        return -1;
    if (rows && (*r0 < 0 || *r0 > *r1 || *r1 > p->rows)) {
        PyErr_SetString(PyExc_ValueError, "native float softmax: bad rows");
        return -1;
    }
    return 0;
}

static PyObject *softmax_f32(PyObject *self, PyObject *args)
{
    struct el_softmax_f32 p;
    long long r0, r1;
    (void)self;
    if (softmax_parse(args, 1, &p, &r0, &r1) < 0) return NULL;
    Py_BEGIN_ALLOW_THREADS
    el_softmax_f32(&p, r0, r1);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

static PyObject *softmax_f32_step(PyObject *self, PyObject *args)
{
    struct el_softmax_f32 p;
    (void)self;
    if (softmax_parse(args, 0, &p, NULL, NULL) < 0) return NULL;
    return el_step_new(el_softmax_f32_step, &p, sizeof p, args);
}

static PyObject *bias_act_f32(PyObject *self, PyObject *args)
{
    PyObject *out, *bias;
    long long width;
    int clamp;
    float lo, hi;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOLpff", &out, &bias, &width, &clamp, &lo, &hi)) return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(out, &b, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return NULL;
    float *at = b.buf;
    const long long count = b.len / (Py_ssize_t)sizeof(float);
    PyBuffer_Release(&b);
    const float *bias_at = NULL;
    if (width < 1 || (bias != Py_None
                      && !(bias_at = float_buffer(bias, width * (Py_ssize_t)sizeof(float), 0,
                                                  "the bias")))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "native bias_act: bad width");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    el_bias_act_f32(at, count, bias_at, width, clamp, lo, hi);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

PyMethodDef el_float_methods[] = {
    {"bias_act_f32", bias_act_f32, METH_VARARGS,
     "bias_act_f32(out, bias, width, clamp, lo, hi): out = clamp(out + bias[i % width]) in "
     "place, float32 (bias None: none; activations_f32.c)"},
#define EL_UNARY_ENTRIES(op, what)                                                          \
    {#op "_f32", op##_f32, METH_VARARGS,                                                    \
     #op "_f32(x, out, begin, end): float32 " what " of values [begin, end) "               \
     "(transcend_f32.c)"},                                                                  \
    {#op "_f32_step", op##_f32_step, METH_VARARGS,                                          \
     #op "_f32_step(x, out): a NativeStep running " what " over every value"},
    EL_UNARY_ENTRIES(logistic, "LOGISTIC")
    EL_UNARY_ENTRIES(tanh, "TANH")
    EL_UNARY_ENTRIES(exp, "EXP")
    EL_UNARY_ENTRIES(elu, "ELU")
    EL_UNARY_ENTRIES(hard_swish, "HARD_SWISH")
    EL_UNARY_ENTRIES(swish, "x * LOGISTIC(x)")
    EL_UNARY_ENTRIES(gelu_tanh, "GELU (approximate)")
    EL_UNARY_ENTRIES(gelu_erfc, "GELU (exact)")
    {"softmax_f32", softmax_f32, METH_VARARGS,
     "softmax_f32(x, out, depth, beta, row_begin, row_end): float32 SOFTMAX of those rows of "
     "depth values (transcend_f32.c)"},
    {"softmax_f32_step", softmax_f32_step, METH_VARARGS,
     "softmax_f32_step(x, out, depth, beta): a NativeStep running SOFTMAX over every row"},
    {"depthwise_f32", depthwise_f32, METH_VARARGS,
     "depthwise_f32(x, (n, h, w, c, m), (kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow), "
     "weights, bias, clamp, lo, hi, out, row_begin, row_end): float32 DEPTHWISE_CONV_2D "
     "output rows (depthwise_f32.c)"},
    {"depthwise_f32_step", depthwise_f32_step, METH_VARARGS,
     "depthwise_f32_step(... as depthwise_f32 without the row range[, threads, tasks]): a "
     "NativeStep running every row, split into tasks over threads"},
    {NULL, NULL, 0, NULL},
};
