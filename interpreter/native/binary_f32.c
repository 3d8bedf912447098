/* float32 ADD, SUB, MUL with broadcasting and a fused activation, as one native step
 * (kernels/arithmetic.py: FloatBinaryRecord). Each output value is one IEEE operation on
 * its two inputs -- the numpy kernel's ufunc, so the same bits -- then the clamp in the
 * numpy stage's order (max, then min; NaN stays NaN).
 *
 * Operands are described by broadcast strides over the output's collapsed shape
 * (native_ops.collapse: dimensions of 1 dropped, neighbours merged), in values; a stride
 * of 0 repeats the value. A "row" is one run of the innermost dimension. Large ops split
 * their values into tasks over the C pool (threadpool.c); a value's result does not depend
 * on the split. Baseline x86-64 and AVX2 builds, picked at run time. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "native.h"
#include "threadpool.h"

enum { F32_ADD = 0, F32_SUB = 1, F32_MUL = 2 };

struct binary_f32 {
    const float *a, *b;
    float *out;
    int ndim, op, clamp;
    int64_t shape[EL_MAX_DIMS], sa[EL_MAX_DIMS], sb[EL_MAX_DIMS];
    int64_t size;
    float lo, hi;
    int threads;
    int64_t tasks;
};

/* one row; op, clamp and the strides (0 or 1 in the specialized calls) are constants in
 * each expansion, so the compiler emits a vector loop per pattern */
static inline void row(const float *a, int64_t sa, const float *b, int64_t sb,
                       float *out, int64_t n, const int op, const int clamp, float lo,
                       float hi)
{
    for (int64_t i = 0; i < n; i++) {
        const float x = a[i * sa], y = b[i * sb];
        float v = op == F32_ADD ? x + y : op == F32_SUB ? x - y : x * y;
        if (clamp) {
            v = v < lo ? lo : v;
            v = v > hi ? hi : v;
        }
        out[i] = v;
    }
}

#define EL_F32_STRIDES(OP, CLAMP)                                                         \
    do {                                                                                  \
        if (sa == 1 && sb == 1) row(a, 1, b, 1, out, n, OP, CLAMP, p->lo, p->hi);         \
        else if (sa == 1 && sb == 0) row(a, 1, b, 0, out, n, OP, CLAMP, p->lo, p->hi);    \
        else if (sa == 0 && sb == 1) row(a, 0, b, 1, out, n, OP, CLAMP, p->lo, p->hi);    \
        else row(a, sa, b, sb, out, n, OP, CLAMP, p->lo, p->hi);                          \
    } while (0)

#define EL_F32_ROW(NAME, ATTRIBUTE)                                                       \
    ATTRIBUTE static void NAME(const struct binary_f32 *p, const float *a, int64_t sa,    \
                               const float *b, int64_t sb, float *out, int64_t n)         \
    {                                                                                     \
        if (p->op == F32_ADD && p->clamp) EL_F32_STRIDES(F32_ADD, 1);                     \
        else if (p->op == F32_ADD) EL_F32_STRIDES(F32_ADD, 0);                            \
        else if (p->op == F32_SUB && p->clamp) EL_F32_STRIDES(F32_SUB, 1);                \
        else if (p->op == F32_SUB) EL_F32_STRIDES(F32_SUB, 0);                            \
        else if (p->clamp) EL_F32_STRIDES(F32_MUL, 1);                                    \
        else EL_F32_STRIDES(F32_MUL, 0);                                                  \
    }

EL_F32_ROW(row_base, )
#ifdef EL_X86_AVX2
EL_F32_ROW(row_avx2, EL_TARGET_AVX2)
#else
#define row_avx2 row_base
#endif

static void binary_f32_row(const void *ctx, const struct el_row *w)
{
    const struct binary_f32 *p = ctx;
    const int last = p->ndim - 1;
    const int64_t n = p->shape[last], sa = p->sa[last], sb = p->sb[last];
    const float *a = p->a + w->oa + w->from * sa, *b = p->b + w->ob + w->from * sb;
    float *out = p->out + w->r * n + w->from;
    if (el_have_avx2()) row_avx2(p, a, sa, b, sb, out, w->to - w->from);
    else row_base(p, a, sa, b, sb, out, w->to - w->from);
}

/* output values [begin, end) */
static void binary_f32_values(const struct binary_f32 *p, int64_t begin, int64_t end)
{
    el_broadcast_rows(p->ndim, p->shape, p->sa, p->sb, begin, end, binary_f32_row, p);
}

static void binary_f32_task(void *ctx, int64_t t, int worker)
{
    const struct binary_f32 *p = ctx;
    (void)worker;
    binary_f32_values(p, el_part(0, p->size, p->tasks, t, 64),
                      el_part(0, p->size, p->tasks, t + 1, 64));
}

static int binary_f32_run(void *args)
{
    const struct binary_f32 *p = args;
    if (p->tasks > 1) el_pool_run(p->threads, p->tasks, binary_f32_task, args);
    else binary_f32_values(p, 0, p->size);
    return 0;
}

/* binary_f32_step(a, b, out, op, dims, clamp, lo, hi, threads, tasks): a NativeStep of
 * out = clamp(a op b) (op 0 ADD, 1 SUB, 2 MUL); dims int64 [ndim shape values, ndim a
 * strides, ndim b strides], in values */
static PyObject *binary_f32_step(PyObject *self, PyObject *args)
{
    PyObject *a, *b, *out, *dims;
    struct binary_f32 p = {0};
    const char *fn = "binary_f32_step";
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOiOpffiL", &a, &b, &out, &p.op, &dims, &p.clamp, &p.lo,
                          &p.hi, &p.threads, &p.tasks))
        return NULL;
    Py_buffer d;
    if (PyObject_GetBuffer(dims, &d, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    const Py_ssize_t values = d.len / 8;
    const int64_t *dv = d.buf;
    int ok = p.op >= F32_ADD && p.op <= F32_MUL && p.threads >= 1
             && p.threads <= EL_POOL_MAX_THREADS && p.tasks >= 1 && d.len % 8 == 0
             && values % 3 == 0 && values / 3 >= 1 && values / 3 <= EL_MAX_DIMS;
    long long last_a = 0, last_b = 0;
    p.size = 1;
    p.ndim = ok ? (int)(values / 3) : 0;
    for (int i = 0; i < p.ndim && ok; i++) {
        p.shape[i] = dv[i];
        p.sa[i] = dv[p.ndim + i];
        p.sb[i] = dv[2 * p.ndim + i];
        ok = p.shape[i] >= 1 && p.sa[i] >= 0 && p.sb[i] >= 0 && p.shape[i] < ((int64_t)1 << 40);
        p.size *= ok ? p.shape[i] : 1;
        ok = ok && p.size < ((int64_t)1 << 40);
        last_a += (p.shape[i] - 1) * p.sa[i];
        last_b += (p.shape[i] - 1) * p.sb[i];
    }
    PyBuffer_Release(&d);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "native binary_f32_step: bad op, dims or split");
        return NULL;
    }
    if (!(p.a = el_span(a, 4 * (last_a + 1), 0, fn, "the first input"))
        || !(p.b = el_span(b, 4 * (last_b + 1), 0, fn, "the second input"))
        || !(p.out = el_span(out, 4 * p.size, 1, fn, "the output")))
        return NULL;
    return el_step_new(binary_f32_run, &p, sizeof p, args); /* args holds every array */
}

PyMethodDef el_binary_f32_methods[] = {
    {"binary_f32_step", binary_f32_step, METH_VARARGS,
     "binary_f32_step(a, b, out, op, dims, clamp, lo, hi, threads, tasks): a NativeStep of "
     "a float32 ADD / SUB / MUL with broadcasting (binary_f32.c)"},
    {NULL, NULL, 0, NULL},
};
