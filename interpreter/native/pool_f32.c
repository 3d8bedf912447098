/* float32 MAX_POOL_2D and AVERAGE_POOL_2D straight from the NHWC input, as one native step
 * (kernels/pooling.py: PoolRecord.native_step), in reference_ops::MaxPool / AveragePool's
 * arithmetic (reference/pooling.h): every window is clipped to the input,
 *     filter_x_start = max(0, -in_x_origin), filter_x_end = min(filter_w, in_w - in_x_origin)
 * so padding never takes part;
 *   AVERAGE: total = 0; total += x over the valid pixels in (filter_y, filter_x) order;
 *            out = clamp(total / count)            (float32; the numpy kernel's values)
 *   MAX:     m = lowest(); m = m < x ? x : m      (std::max: a NaN pixel never wins)
 *            out = clamp(m)
 * Rows are (n, out_y) pairs, split into tasks over the C pool for large pools; a row's
 * values do not depend on the split. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <float.h>
#include <stdint.h>

#include "native.h"
#include "threadpool.h"

struct pool_f32 {
    const float *x; /* n, h, w, c */
    float *out;     /* n, oh, ow, c */
    int64_t n, h, w, c, kh, kw, sh, sw, pad_t, pad_l, oh, ow;
    int is_max, clamp;
    float lo, hi;
    int threads;
    int64_t tasks;
};

static inline int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

#define EL_POOL_F32_ROWS(NAME, ATTRIBUTE)                                                  \
    ATTRIBUTE static void NAME(const struct pool_f32 *p, int64_t r0, int64_t r1)           \
    {                                                                                      \
        const int64_t C = p->c;                                                            \
        for (int64_t r = r0; r < r1; r++) {                                                \
            const int64_t b = r / p->oh, oy = r % p->oh;                                   \
            const int64_t iy = oy * p->sh - p->pad_t;                                      \
            const int64_t fy0 = max64(0, -iy), fy1 = min64(p->kh, p->h - iy);              \
            for (int64_t ox = 0; ox < p->ow; ox++) {                                       \
                const int64_t ix = ox * p->sw - p->pad_l;                                  \
                const int64_t fx0 = max64(0, -ix), fx1 = min64(p->kw, p->w - ix);          \
                float *restrict o = p->out + (r * p->ow + ox) * C;                         \
                const float start = p->is_max ? -FLT_MAX : 0.0f;                           \
                for (int64_t ch = 0; ch < C; ch++) o[ch] = start;                          \
                for (int64_t fy = fy0; fy < fy1; fy++)                                     \
                    for (int64_t fx = fx0; fx < fx1; fx++) {                               \
                        const float *restrict px =                                         \
                            p->x + ((b * p->h + iy + fy) * p->w + ix + fx) * C;            \
                        if (p->is_max)                                                     \
                            for (int64_t ch = 0; ch < C; ch++)                             \
                                o[ch] = o[ch] < px[ch] ? px[ch] : o[ch];                   \
                        else                                                               \
                            for (int64_t ch = 0; ch < C; ch++) o[ch] += px[ch];            \
                    }                                                                      \
                if (!p->is_max) {                                                          \
                    const float count =                                                    \
                        (float)(max64(fy1 - fy0, 0) * max64(fx1 - fx0, 0));                \
                    for (int64_t ch = 0; ch < C; ch++) o[ch] /= count;                     \
                }                                                                          \
                if (p->clamp)                                                              \
                    for (int64_t ch = 0; ch < C; ch++) {                                   \
                        const float v = o[ch] < p->lo ? p->lo : o[ch];                     \
                        o[ch] = v > p->hi ? p->hi : v;                                     \
                    }                                                                      \
            }                                                                              \
        }                                                                                  \
    }

EL_POOL_F32_ROWS(rows_base, )
#ifdef EL_X86_AVX2
EL_POOL_F32_ROWS(rows_avx2, EL_TARGET_AVX2)
#else
#define rows_avx2 rows_base
#endif

static void pool_f32_rows(const struct pool_f32 *p, int64_t r0, int64_t r1)
{
    if (el_have_avx2()) rows_avx2(p, r0, r1);
    else rows_base(p, r0, r1);
}

static void pool_f32_task(void *ctx, int64_t t, int worker)
{
    const struct pool_f32 *p = ctx;
    const int64_t rows = p->n * p->oh;
    (void)worker;
    pool_f32_rows(p, el_part(0, rows, p->tasks, t, 1), el_part(0, rows, p->tasks, t + 1, 1));
}

static int pool_f32_run(void *args)
{
    const struct pool_f32 *p = args;
    if (p->tasks > 1) el_pool_run(p->threads, p->tasks, pool_f32_task, args);
    else pool_f32_rows(p, 0, p->n * p->oh);
    return 0;
}

/* pool_f32_step(x, out, is_max, (n, h, w, c), (kh, kw, sh, sw, pad_t, pad_l, oh, ow),
 * clamp, lo, hi, threads, tasks): a NativeStep of a float32 MAX / AVERAGE pool */
static PyObject *pool_f32_step(PyObject *self, PyObject *args)
{
    PyObject *x, *out;
    struct pool_f32 p = {0};
    const char *fn = "pool_f32_step";
    (void)self;
    if (!PyArg_ParseTuple(args, "OOp(LLLL)(LLLLLLLL)pffiL", &x, &out, &p.is_max, &p.n, &p.h,
                          &p.w, &p.c, &p.kh, &p.kw, &p.sh, &p.sw, &p.pad_t, &p.pad_l, &p.oh,
                          &p.ow, &p.clamp, &p.lo, &p.hi, &p.threads, &p.tasks))
        return NULL;
    const int64_t big = (int64_t)1 << 31;
    if (p.n < 1 || p.h < 1 || p.w < 1 || p.c < 1 || p.kh < 1 || p.kw < 1 || p.sh < 1
        || p.sw < 1 || p.oh < 1 || p.ow < 1 || p.pad_t < 0 || p.pad_l < 0 || p.n > big
        || p.h > big || p.w > big || p.c > big || p.kh > big || p.kw > big || p.sh > big
        || p.sw > big || p.oh > big || p.ow > big || p.pad_t > big || p.pad_l > big
        || p.threads < 1 || p.threads > EL_POOL_MAX_THREADS || p.tasks < 1
        || (double)p.n * (double)p.h * (double)p.w * (double)p.c > 1e15
        || (double)p.n * (double)p.oh * (double)p.ow * (double)p.c > 1e15) {
        PyErr_SetString(PyExc_ValueError, "native pool_f32_step: bad geometry or split");
        return NULL;
    }
    if (!(p.x = el_span(x, 4 * p.n * p.h * p.w * p.c, 0, fn, "the input"))
        || !(p.out = el_span(out, 4 * p.n * p.oh * p.ow * p.c, 1, fn, "the output")))
        return NULL;
    return el_step_new(pool_f32_run, &p, sizeof p, args); /* args holds every array */
}

PyMethodDef el_pool_f32_methods[] = {
    {"pool_f32_step", pool_f32_step, METH_VARARGS,
     "pool_f32_step(x, out, is_max, (n, h, w, c), (kh, kw, sh, sw, pad_t, pad_l, oh, ow), "
     "clamp, lo, hi, threads, tasks): a NativeStep of a float32 MAX_POOL_2D / "
     "AVERAGE_POOL_2D (pool_f32.c)"},
    {NULL, NULL, 0, NULL},
};
