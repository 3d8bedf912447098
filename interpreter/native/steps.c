/* Native steps (docs/native-run-loop.md) of the kernels that need scratch per call:
 * int8 / uint8 AVERAGE_POOL_2D (pool.c) and SOFTMAX (softmax.c). The bind checks the
 * arrays once -- the same sizes module_ops.c's avg_pool / softmax check per call -- and
 * takes the scratch as a caller-owned array, so the step allocates nothing while it runs
 * without the GIL. module.c adds these functions to edgelite.interpreter._native; the
 * Python callers are kernels/pooling.py (NativeAverage) and kernels/softmax.py
 * (NativeTableSoftmax). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"

/* a C-contiguous buffer of ``obj`` holding at least ``bytes``; its pointer, or NULL with
 * ValueError set naming ``fn`` and ``what``. The buffer is released at once: the step
 * keeps ``obj`` alive, and a numpy array's data stays put while it lives. */
static void *span(PyObject *obj, long long bytes, int writable, const char *fn,
                  const char *what)
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
    if (!(p->x = span(x, p->n * p->h * p->w * p->c, 0, "avg_pool_step", "the input"))
        || !(p->out = span(out, p->n * p->oh * p->ow * p->c, 1, "avg_pool_step", "the output"))
        || !(c.acc = span(acc, 4 * p->c, 1, "avg_pool_step", "the scratch")))
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
    if (!(p->x = span(x, c.r1 * depth, 0, "softmax_step", "the input"))
        || !(p->out = span(out, c.r1 * depth, 1, "softmax_step", "the output"))
        || !(p->table = span(table, 256 * 4, 0, "softmax_step", "the table"))
        || !(c.exps = span(exps, 4 * depth, 1, "softmax_step", "the scratch")))
        return NULL;
    return el_step_new(softmax_run, &c, sizeof c, args); /* args holds every array */
}

PyMethodDef el_steps_methods[] = {
    {"avg_pool_step", avg_pool_step, METH_VARARGS,
     "avg_pool_step(... as avg_pool, acc): a NativeStep pooling those rows with c int32 of "
     "scratch"},
    {"softmax_step", softmax_step, METH_VARARGS,
     "softmax_step(... as softmax, exps): a NativeStep over those rows with depth float32 "
     "of scratch"},
    {NULL, NULL, 0, NULL},
};
