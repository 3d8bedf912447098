/* Native steps (docs/native-run-loop.md) of the kernels that need scratch per call:
 * int8 / uint8 AVERAGE_POOL_2D (pool.c), SOFTMAX (softmax.c) and MEAN / SUM with
 * XNNPACK's float32 output stage (reduce.c's sums, then the stage here); and the float32
 * MEAN / SUM (reduce.c's sums in numpy's order), which need no scratch but belong here.
 * The bind checks the arrays once -- the same sizes module_ops.c's avg_pool / softmax
 * check per call -- and takes the scratch as a caller-owned array, so the step allocates
 * nothing while it runs without the GIL. module.c adds these functions to
 * edgelite.interpreter._native; the Python callers are kernels/pooling.py (NativeAverage),
 * kernels/softmax.py (NativeTableSoftmax) and kernels/reduce.py. el_span is shared with
 * the other files' step binds (native.h). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>

#include "native.h"

/* native.h: a C-contiguous buffer of ``obj`` holding at least ``bytes``, released at once
 * (the step keeps ``obj`` alive, and a numpy array's data stays put while it lives) */
void *el_span(PyObject *obj, long long bytes, int writable, const char *fn, const char *what)
{
    Py_buffer b;
    int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &b, flags) < 0) return NULL;
    void *p = b.buf;
    if (bytes < 0 || b.len < bytes) {
        PyErr_Format(PyExc_ValueError, "native %s: %s holds %zd bytes, needs %lld", fn, what,
                     b.len, bytes);
        p = NULL;
    }
    PyBuffer_Release(&b);
    return p;
}

static PyObject *refuse(const char *fn, const char *what)
{
    PyErr_Format(PyExc_ValueError, "native %s: %s", fn, what);
    return NULL;
}

/* ------------------------------------------------------------------ AVERAGE_POOL_2D */

struct pool_call {
    struct el_pool p;
    long long r0, r1;
    int32_t *acc; /* c int32 */
};

static int pool_run(void *args)
{
    const struct pool_call *c = args;
    el_pool(&c->p, c->r0, c->r1, c->acc);
    return 0;
}

/* avg_pool_step(x, out, (is_uint8, work_f64), (n, h, w, c), (kh, kw, sh, sw, pad_t, pad_l,
 * oh, ow), lo, hi, row_begin, row_end, acc): avg_pool's arguments and c int32 of scratch */
static PyObject *avg_pool_step(PyObject *self, PyObject *args)
{
    PyObject *x, *out, *acc;
    struct pool_call c = {0};
    struct el_pool *p = &c.p;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO(ii)(LLLL)(LLLLLLLL)iiLLO", &x, &out, &p->is_uint8,
                          &p->work_f64, &p->n, &p->h, &p->w, &p->c, &p->kh, &p->kw, &p->sh,
                          &p->sw, &p->pad_t, &p->pad_l, &p->oh, &p->ow, &p->lo, &p->hi,
                          &c.r0, &c.r1, &acc))
        return NULL;
    if (p->n < 1 || p->h < 1 || p->w < 1 || p->c < 1 || p->kh < 1 || p->kw < 1 || p->sh < 1
        || p->sw < 1 || p->oh < 1 || p->ow < 1 || p->pad_t < 0 || p->pad_l < 0 || c.r0 < 0
        || c.r1 > p->n * p->oh || c.r0 > c.r1)
        return refuse("avg_pool_step", "bad geometry");
    if (!(p->x = el_span(x, p->n * p->h * p->w * p->c, 0, "avg_pool_step", "the input"))
        || !(p->out = el_span(out, p->n * p->oh * p->ow * p->c, 1, "avg_pool_step", "the output"))
        || !(c.acc = el_span(acc, 4 * p->c, 1, "avg_pool_step", "the scratch")))
        return NULL;
    return el_step_new(pool_run, &c, sizeof c, args); /* args holds every array */
}

/* ------------------------------------------------------------------ SOFTMAX */

struct softmax_call {
    struct el_softmax p;
    long long r0, r1;
    float *exps; /* depth float32 */
};

static int softmax_run(void *args)
{
    const struct softmax_call *c = args;
    el_softmax(&c->p, c->r0, c->r1, c->exps);
    return 0;
}

/* softmax_step(x, out, is_uint8, depth, table, out_scale, qmin, row_begin, row_end, exps):
 * softmax's arguments and depth float32 of scratch */
static PyObject *softmax_step(PyObject *self, PyObject *args)
{
    PyObject *x, *out, *table, *exps;
    struct softmax_call c = {0};
    struct el_softmax *p = &c.p;
    long long depth;
    double out_scale;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOiLOdiLLO", &x, &out, &p->is_uint8, &depth, &table,
                          &out_scale, &p->qmin, &c.r0, &c.r1, &exps))
        return NULL;
    if (depth < 1 || c.r0 < 0 || c.r0 > c.r1)
        return refuse("softmax_step", "bad depth or rows");
    p->depth = depth;
    p->out_scale = (float)out_scale;
    if (!(p->x = el_span(x, c.r1 * depth, 0, "softmax_step", "the input"))
        || !(p->out = el_span(out, c.r1 * depth, 1, "softmax_step", "the output"))
        || !(p->table = el_span(table, 256 * 4, 0, "softmax_step", "the table"))
        || !(c.exps = el_span(exps, 4 * depth, 1, "softmax_step", "the scratch")))
        return NULL;
    return el_step_new(softmax_run, &c, sizeof c, args); /* args holds every array */
}

/* ------------------------------------------------------------------ MEAN / SUM */

/* int8 / uint8 MEAN or SUM of the default set: reduce.finish_mean_xnn's float32 stage,
 * v = rint(float32(sum) * scale + bias) clamped to [lo, hi] (XNNPACK's reduce output
 * stage; rint rounds half to even, as np.rint; -std=c11 keeps the multiply and add
 * apart, no FMA) */
struct mean_call {
    const void *x;
    int is_uint8;
    long long outer, count, inner;
    int32_t *acc;   /* inner int32 */
    int64_t *total; /* outer * inner int64 */
    float scale, bias, lo, hi;
    void *out;
};

static int mean_run(void *args)
{
    const struct mean_call *c = args;
    el_sum8(c->x, c->is_uint8, c->outer, c->count, c->inner, c->acc, c->total);
    for (long long i = 0; i < c->outer * c->inner; i++) {
        float v = (float)c->total[i] * c->scale;
        v = nearbyintf(v + c->bias);
        v = v < c->lo ? c->lo : v > c->hi ? c->hi : v;
        if (c->is_uint8) ((uint8_t *)c->out)[i] = (uint8_t)v;
        else ((int8_t *)c->out)[i] = (int8_t)v;
    }
    return 0;
}

/* mean_step(x, is_uint8, outer, count, inner, total, scale, bias, lo, hi, out, acc): the
 * sums of x viewed as (outer, count, inner) over count into total (int64), then the
 * float32 stage into out; acc: inner int32 of scratch */
static PyObject *mean_step(PyObject *self, PyObject *args)
{
    PyObject *x, *total, *out, *acc;
    struct mean_call c = {0};
    double scale, bias;
    int lo, hi;
    (void)self;
    if (!PyArg_ParseTuple(args, "OiLLLOddiiOO", &x, &c.is_uint8, &c.outer, &c.count,
                          &c.inner, &total, &scale, &bias, &lo, &hi, &out, &acc))
        return NULL;
    if (c.outer < 1 || c.count < 1 || c.inner < 1 || lo > hi || lo < (c.is_uint8 ? 0 : -128)
        || hi > (c.is_uint8 ? 255 : 127))
        return refuse("mean_step", "bad sizes or bounds");
    c.scale = (float)scale;
    c.bias = (float)bias;
    c.lo = (float)lo;
    c.hi = (float)hi;
    long long values = c.outer * c.inner;
    if (!(c.x = el_span(x, values * c.count, 0, "mean_step", "the input"))
        || !(c.total = el_span(total, 8 * values, 1, "mean_step", "the sums"))
        || !(c.out = el_span(out, values, 1, "mean_step", "the output"))
        || !(c.acc = el_span(acc, 4 * c.inner, 1, "mean_step", "the scratch")))
        return NULL;
    return el_step_new(mean_run, &c, sizeof c, args); /* args holds every array */
}

/* float32 MEAN / SUM: numpy's sums (el_sum_f32), MEAN then divided by the count in float32
 * (np.true_divide(out, count): a float32 divide) */
struct sum_f32_call {
    const float *x;
    long long outer, count, inner;
    int mean;
    float *out;
};

static int sum_f32_run(void *args)
{
    const struct sum_f32_call *c = args;
    el_sum_f32(c->x, c->outer, c->count, c->inner, c->out);
    if (c->mean) {
        const float n = (float)c->count;
        for (long long i = 0; i < c->outer * c->inner; i++) c->out[i] /= n;
    }
    return 0;
}

/* sum_f32_step(x, outer, count, inner, mean, out): the float32 sums of x viewed as
 * (outer, count, inner) over count into out; mean: divided by count */
static PyObject *sum_f32_step(PyObject *self, PyObject *args)
{
    PyObject *x, *out;
    struct sum_f32_call c = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "OLLLpO", &x, &c.outer, &c.count, &c.inner, &c.mean, &out))
        return NULL;
    if (c.outer < 1 || c.count < 1 || c.inner < 1)
        return refuse("sum_f32_step", "bad sizes");
    long long values = c.outer * c.inner;
    if (!(c.x = el_span(x, 4 * values * c.count, 0, "sum_f32_step", "the input"))
        || !(c.out = el_span(out, 4 * values, 1, "sum_f32_step", "the output")))
        return NULL;
    return el_step_new(sum_f32_run, &c, sizeof c, args); /* args holds every array */
}

PyMethodDef el_steps_methods[] = {
    {"sum_f32_step", sum_f32_step, METH_VARARGS,
     "sum_f32_step(x, outer, count, inner, mean, out): a NativeStep of a float32 MEAN / SUM "
     "in np.add.reduce's order"},
    {"mean_step", mean_step, METH_VARARGS,
     "mean_step(x, is_uint8, outer, count, inner, total, scale, bias, lo, hi, out, acc): a "
     "NativeStep of an int8 / uint8 MEAN / SUM with XNNPACK's float32 output stage"},
    {"avg_pool_step", avg_pool_step, METH_VARARGS,
     "avg_pool_step(... as avg_pool, acc): a NativeStep pooling those rows with c int32 of "
     "scratch"},
    {"softmax_step", softmax_step, METH_VARARGS,
     "softmax_step(... as softmax, exps): a NativeStep over those rows with depth float32 "
     "of scratch"},
    {NULL, NULL, 0, NULL},
};
