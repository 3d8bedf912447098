/* The Python side of the element-wise, table, pool, reduce, quantize and softmax kernels
 * (module.c adds these functions to edgelite.interpreter._native). Arrays come through
 * the buffer protocol (C-contiguous); every size a kernel will touch is checked against
 * the buffers here, and the GIL is released around the compute so edgelite's pool runs
 * slices at once. The Python callers are in interpreter/kernels/common/native_ops.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "native.h"
#include "threadpool.h"

static int need(Py_buffer *b, long long bytes, const char *fn, const char *what)
{
    if (bytes < 0 || b->len < bytes) {
        PyErr_Format(PyExc_ValueError, "native %s: %s holds %zd bytes, needs %lld", fn, what,
                     b->len, bytes);
        return 0;
    }
    return 1;
}

/* n bytes of scratch for one call (PyMem_RawFree it); NULL with MemoryError set */
static void *scratch(size_t n)
{
    void *p = PyMem_RawMalloc(n ? n : 1);
    if (!p) PyErr_NoMemory();
    return p;
}

static int bad(const char *fn, const char *what)
{
    PyErr_Format(PyExc_ValueError, "native %s: %s", fn, what);
    return 0;
}

/* binary(a, b, table | None, offsets | None, params, scale, out, dims, begin, end):
 * params int64 [kind, is_uint8, za, zb, zo, lo, hi, ma, mb, shift]; dims int64
 * [ndim shape values, ndim a strides, ndim b strides]; output values [begin, end).
 * binary_step takes the same arguments. */
struct binary_call {
    struct el_binary p;
    long long r0, r1;
    int threads;     /* [r0, r1) split into tasks over the C pool (threadpool.c) */
    long long tasks;
};

/* binary's arguments checked into *c; 0, or -1 with an exception set. The buffers are
 * released at once: they are numpy arrays (or bytes), whose data stays put while the
 * caller's argument tuple holds them. */
static int binary_parse(PyObject *args, struct binary_call *c)
{
    Py_buffer a, b, params, out, dims, table = {0}, offsets = {0};
    PyObject *table_obj, *offsets_obj;
    double scale;
    int ok = 0;
    c->threads = 1;
    c->tasks = 1;
    if (!PyArg_ParseTuple(args, "y*y*OOy*dw*y*LL|iL", &a, &b, &table_obj, &offsets_obj,
                          &params, &scale, &out, &dims, &c->r0, &c->r1, &c->threads, &c->tasks))
        return -1;
    int have_table = table_obj != Py_None, have_offsets = offsets_obj != Py_None;
    if (have_table && PyObject_GetBuffer(table_obj, &table, PyBUF_SIMPLE) < 0) goto done;
    if (have_offsets && PyObject_GetBuffer(offsets_obj, &offsets, PyBUF_SIMPLE) < 0) goto done;
    if (c->threads < 1 || c->threads > EL_POOL_MAX_THREADS || c->tasks < 1) {
        bad("binary", "threads in 1..64, tasks >= 1");
        goto done;
    }
    const int64_t *q = params.buf, *d = dims.buf;
    if (params.len != 10 * 8) {
        bad("binary", "params must hold 10 int64 values");
        goto done;
    }
    struct el_binary p = {.a = a.buf, .b = b.buf, .out = out.buf, .kind = (int)q[0],
                          .table = have_table ? table.buf : NULL,
                          .offsets = have_offsets ? offsets.buf : NULL,
                          .is_uint8 = q[1] != 0, .za = (int32_t)q[2], .zb = (int32_t)q[3],
                          .zo = (int32_t)q[4], .lo = (int32_t)q[5], .hi = (int32_t)q[6],
                          .ma = (int32_t)q[7], .mb = (int32_t)q[8], .shift = (int32_t)q[9],
                          .scale = (float)scale};
    if ((p.kind == EL_TABLE && !have_table) || p.kind < EL_TABLE || p.kind > EL_XNN_MUL
        || (p.kind == EL_XNN_ADD && (p.shift < 1 || p.shift > 30))) {
        bad("binary", "bad kind, or a table / shift it needs is missing");
        goto done;
    }
    Py_ssize_t values = dims.len / 8;
    if (values % 3 || values / 3 < 1 || values / 3 > EL_MAX_DIMS) {
        bad("binary", "dims must hold 3 * ndim values, ndim 1..8");
        goto done;
    }
    p.ndim = (int)(values / 3);
    long long size = 1, last_a = 0, last_b = 0;
    for (int i = 0; i < p.ndim; i++) {
        p.shape[i] = d[i];
        p.sa[i] = d[p.ndim + i];
        p.sb[i] = d[2 * p.ndim + i];
        if (p.shape[i] < 1 || p.sa[i] < 0 || p.sb[i] < 0) {
            bad("binary", "bad shape or strides");
            goto done;
        }
        size *= p.shape[i];
        last_a += (p.shape[i] - 1) * p.sa[i];
        last_b += (p.shape[i] - 1) * p.sb[i];
    }
    if (c->r0 < 0 || c->r1 > size || c->r0 > c->r1) {
        bad("binary", "values out of range");
        goto done;
    }
    if (!need(&a, last_a + 1, "binary", "the first input")
        || !need(&b, last_b + 1, "binary", "the second input")
        || !need(&out, size, "binary", "the output")
        || (have_table && !need(&table, 65536, "binary", "the table"))
        || (have_offsets && !need(&offsets, 4 * size, "binary", "the path offsets")))
        goto done;
    if (have_offsets && table.len % 65536) {
        bad("binary", "the table must hold whole 65536-entry paths");
        goto done;
    }
    c->p = p;
    ok = 1;
done:
    if (have_table && table.obj) PyBuffer_Release(&table);
    if (have_offsets && offsets.obj) PyBuffer_Release(&offsets);
    PyBuffer_Release(&a);
    PyBuffer_Release(&b);
    PyBuffer_Release(&params);
    PyBuffer_Release(&out);
    PyBuffer_Release(&dims);
    return ok ? 0 : -1;
}

/* Task t: its part of [r0, r1), whole 64-value runs (the vector loops') but the last. */
static void binary_task(void *ctx, int64_t t, int worker)
{
    const struct binary_call *c = ctx;
    (void)worker;
    el_binary(&c->p, el_part(c->r0, c->r1, c->tasks, t, 64),
              el_part(c->r0, c->r1, c->tasks, t + 1, 64));
}

static int binary_run(void *args)
{
    struct binary_call *c = args;
    el_pool_run(c->threads, c->tasks, binary_task, c);
    return 0;
}

static PyObject *binary(PyObject *self, PyObject *args)
{
    struct binary_call c;
    (void)self;
    return binary_parse(args, &c) < 0 ? NULL : el_step_run(binary_run, &c);
}

static PyObject *binary_step(PyObject *self, PyObject *args)
{
    struct binary_call c;
    (void)self; /* args holds every array the record points into */
    return binary_parse(args, &c) < 0 ? NULL : el_step_new(binary_run, &c, sizeof c, args);
}

/* lut(x, table, out, begin, end): 1-byte entries (256 bytes) or 4-byte ones (1024).
 * lut_step(x, out, slices): a step running the (table, begin, end) slices in order. */
#define LUT_PIECES 4
struct lut_piece {
    const uint8_t *x;
    const void *table;
    void *out;
    long long begin, end;
    int wide;
};

struct lut_call {
    int count;
    struct lut_piece piece[LUT_PIECES];
};

static int lut_parse(PyObject *x_obj, PyObject *table_obj, PyObject *out_obj, long long begin,
                     long long end, struct lut_piece *p)
{
    Py_buffer x, table, out;
    int ok = 0;
    if (PyObject_GetBuffer(x_obj, &x, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (PyObject_GetBuffer(table_obj, &table, PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&x);
        return -1;
    }
    if (PyObject_GetBuffer(out_obj, &out, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&x);
        PyBuffer_Release(&table);
        return -1;
    }
    int wide = table.len == 1024;
    if ((table.len != 256 && !wide) || begin < 0 || begin > end)
        bad("lut", "the table holds 256 one- or four-byte entries; begin <= end");
    else if (need(&x, end, "lut", "the input")
             && need(&out, end * (wide ? 4 : 1), "lut", "the output")) {
        *p = (struct lut_piece){x.buf, table.buf, out.buf, begin, end, wide};
        ok = 1;
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&table);
    PyBuffer_Release(&out);
    return ok ? 0 : -1;
}

static int lut_run(void *args)
{
    const struct lut_call *c = args;
    for (int i = 0; i < c->count; i++) {
        const struct lut_piece *p = &c->piece[i];
        if (p->wide) el_lut32(p->x, p->table, p->out, p->begin, p->end);
        else el_lut8(p->x, p->table, p->out, p->begin, p->end);
    }
    return 0;
}

static PyObject *lut(PyObject *self, PyObject *args)
{
    PyObject *x, *table, *out;
    struct lut_call c = {.count = 1};
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOLL", &x, &table, &out, &c.piece[0].begin,
                          &c.piece[0].end)
        || lut_parse(x, table, out, c.piece[0].begin, c.piece[0].end, &c.piece[0]) < 0)
        return NULL;
    return el_step_run(lut_run, &c);
}

static PyObject *lut_step(PyObject *self, PyObject *args)
{
    PyObject *x, *out, *slices;
    struct lut_call c = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO!", &x, &out, &PyTuple_Type, &slices)) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(slices);
    if (count < 1 || count > LUT_PIECES) {
        bad("lut_step", "1 to 4 slices");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *table;
        long long begin, end;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(slices, i), "OLL", &table, &begin, &end)
            || lut_parse(x, table, out, begin, end, &c.piece[i]) < 0)
            return NULL;
    }
    c.count = (int)count;
    return el_step_new(lut_run, &c, sizeof c, args); /* args holds every array */
}

/* sum8(x, is_uint8, outer, count, inner, out): out (int64, outer * inner) = sums of the
 * int8 / uint8 (outer, count, inner) x over count */
static PyObject *sum8(PyObject *self, PyObject *args)
{
    Py_buffer x, out;
    int is_uint8;
    long long outer, count, inner;
    PyObject *result = NULL;
    int32_t *acc = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iLLLw*", &x, &is_uint8, &outer, &count, &inner, &out))
        return NULL;
    if (outer < 1 || count < 1 || inner < 1) {
        bad("sum8", "outer, count and inner must be >= 1");
        goto done;
    }
    if (!need(&x, outer * count * inner, "sum8", "the input")
        || !need(&out, 8 * outer * inner, "sum8", "the sums"))
        goto done;
    if (!(acc = scratch(sizeof(int32_t) * (size_t)inner))) goto done;
    Py_BEGIN_ALLOW_THREADS
    el_sum8(x.buf, is_uint8, outer, count, inner, acc, out.buf);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_RawFree(acc);
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

/* avg_pool(x, out, (is_uint8, work_f64), (n, h, w, c), (kh, kw, sh, sw, pad_t, pad_l,
 * oh, ow), lo, hi, row_begin, row_end) */
static PyObject *avg_pool(PyObject *self, PyObject *args)
{
    Py_buffer x, out;
    struct el_pool p;
    long long n, h, w, c, kh, kw, sh, sw, pt, pl, oh, ow, r0, r1;
    PyObject *result = NULL;
    int32_t *acc = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*(ii)(LLLL)(LLLLLLLL)iiLL", &x, &out, &p.is_uint8,
                          &p.work_f64, &n, &h, &w, &c, &kh, &kw, &sh, &sw, &pt,
                          &pl, &oh, &ow, &p.lo, &p.hi, &r0, &r1))
        return NULL;
    if (n < 1 || h < 1 || w < 1 || c < 1 || kh < 1 || kw < 1 || sh < 1 || sw < 1 || oh < 1
        || ow < 1 || pt < 0 || pl < 0 || r0 < 0 || r1 > n * oh || r0 > r1) {
        bad("avg_pool", "bad geometry");
        goto done;
    }
    if (!need(&x, n * h * w * c, "avg_pool", "the input")
        || !need(&out, n * oh * ow * c, "avg_pool", "the output"))
        goto done;
    if (!(acc = scratch(sizeof(int32_t) * (size_t)c))) goto done;
    p.x = x.buf; p.out = out.buf; p.n = n; p.h = h; p.w = w; p.c = c; p.kh = kh; p.kw = kw;
    p.sh = sh; p.sw = sw; p.pad_t = pt; p.pad_l = pl; p.oh = oh; p.ow = ow;
    Py_BEGIN_ALLOW_THREADS
    el_pool(&p, r0, r1, acc);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_RawFree(acc);
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return result;
}

/* quantize(x, out, (mode, out_type), scale, scale64, split, (zp, lo, hi), begin, end);
 * quantize_step takes the same arguments. */
struct quantize_call {
    struct el_quantize p;
    long long begin, end;
};

static int quantize_parse(PyObject *args, struct quantize_call *c)
{
    Py_buffer x, out;
    struct el_quantize p;
    double scale;
    long long split;
    int ok = 0;
    if (!PyArg_ParseTuple(args, "y*w*(ii)ddL(iii)LL", &x, &out, &p.mode, &p.out_type, &scale,
                          &p.scale64, &split, &p.zp, &p.lo, &p.hi, &c->begin, &c->end))
        return -1;
    if (p.mode < EL_Q_XNN || p.mode > EL_Q_OPTIMIZED || p.out_type < EL_Q_INT8
        || p.out_type > EL_Q_INT16 || c->begin < 0 || c->begin > c->end || split < 0)
        bad("quantize", "bad mode, type or range");
    else if (need(&x, 4 * c->end, "quantize", "the input")
             && need(&out, c->end * (p.out_type == EL_Q_INT16 ? 2 : 1), "quantize",
                     "the output")) {
        p.x = x.buf;
        p.out = out.buf;
        p.scale = (float)scale;
        p.split = split;
        c->p = p;
        ok = 1;
    }
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    return ok ? 0 : -1;
}

static int quantize_run(void *args)
{
    const struct quantize_call *c = args;
    el_quantize(&c->p, c->begin, c->end);
    return 0;
}

static PyObject *quantize(PyObject *self, PyObject *args)
{
    struct quantize_call c;
    (void)self;
    return quantize_parse(args, &c) < 0 ? NULL : el_step_run(quantize_run, &c);
}

static PyObject *quantize_step(PyObject *self, PyObject *args)
{
    struct quantize_call c;
    (void)self; /* args holds every array the record points into */
    return quantize_parse(args, &c) < 0 ? NULL : el_step_new(quantize_run, &c, sizeof c, args);
}

/* softmax(x, out, is_uint8, depth, table, out_scale, qmin, row_begin, row_end) */
static PyObject *softmax(PyObject *self, PyObject *args)
{
    Py_buffer x, out, table;
    struct el_softmax p;
    long long depth, r0, r1;
    double out_scale;
    PyObject *result = NULL;
    float *exps = NULL;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*w*iLy*diLL", &x, &out, &p.is_uint8, &depth, &table,
                          &out_scale, &p.qmin, &r0, &r1))
        return NULL;
    if (depth < 1 || r0 < 0 || r0 > r1) {
        bad("softmax", "bad depth or rows");
        goto done;
    }
    if (!need(&x, r1 * depth, "softmax", "the input")
        || !need(&out, r1 * depth, "softmax", "the output")
        || !need(&table, 256 * 4, "softmax", "the table"))
        goto done;
    if (!(exps = scratch(sizeof(float) * (size_t)depth))) goto done;
    p.x = x.buf;
    p.out = out.buf;
    p.depth = depth;
    p.table = table.buf;
    p.out_scale = (float)out_scale;
    Py_BEGIN_ALLOW_THREADS
    el_softmax(&p, r0, r1, exps);
    Py_END_ALLOW_THREADS
    result = Py_NewRef(Py_None);
done:
    PyMem_RawFree(exps);
    PyBuffer_Release(&x);
    PyBuffer_Release(&out);
    PyBuffer_Release(&table);
    return result;
}

static PyObject *allow_avx2(PyObject *self, PyObject *args)
{
    int allow;
    (void)self;
    if (!PyArg_ParseTuple(args, "p", &allow)) return NULL;
    return PyBool_FromLong(el_allow_avx2(allow));
}

static PyObject *has_avx2(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyBool_FromLong(el_have_avx2());
}

PyMethodDef el_ops_methods[] = {
    {"allow_avx2", allow_avx2, METH_VARARGS,
     "allow_avx2(flag) -> previous: False makes the kernels built twice run their "
     "baseline x86-64 build (tests of that build on an AVX2 machine)"},
    {"has_avx2", has_avx2, METH_NOARGS, "has_avx2(): the AVX2 builds run"},
    {"softmax", softmax, METH_VARARGS,
     "softmax(x, out, is_uint8, depth, table, out_scale, qmin, row_begin, row_end): int8 / "
     "uint8 softmax rows by TFLite's optimized float-table kernel"},
    {"quantize", quantize, METH_VARARGS,
     "quantize(x, out, (mode, out_type), scale, scale64, split, (zp, lo, hi), begin, end): "
     "float32 -> int8 / uint8 / int16 values [begin, end)"},
    {"avg_pool", avg_pool, METH_VARARGS,
     "avg_pool(x, out, (is_uint8, work_f64), (n, h, w, c), (kh, kw, sh, sw, pad_t, pad_l, "
     "oh, ow), lo, hi, row_begin, row_end): int8 / uint8 average pool rows"},
    {"sum8", sum8, METH_VARARGS,
     "sum8(x, is_uint8, outer, count, inner, out): int64 sums of an int8 / uint8 "
     "(outer, count, inner) array over count"},
    {"quantize_step", quantize_step, METH_VARARGS,
     "quantize_step(... as quantize): a NativeStep running that range"},
    {"binary_step", binary_step, METH_VARARGS,
     "binary_step(... as binary[, threads, tasks]): a NativeStep running that value range, "
     "split into tasks over threads (the C pool)"},
    {"lut_step", lut_step, METH_VARARGS,
     "lut_step(x, out, slices): a NativeStep looking up each (table, begin, end) slice"},
    {"binary", binary, METH_VARARGS,
     "binary(a, b, table, offsets, params, scale, out, dims, begin, end): int8 / uint8 "
     "ADD / SUB / MUL by table or XNNPACK formula over broadcast output values [begin, end)"},
    {"lut", lut, METH_VARARGS,
     "lut(x, table, out, begin, end): out[i] = table[x[i] as uint8], i in [begin, end)"},
    {NULL, NULL, 0, NULL},
};
