/* float32 CONV_2D (one group) as one native step whose blocks of output pixels run on the
 * C pool, each block's product on gemm_f32.c's packed tiles or numpy's own BLAS
 * (kernels/conv.py picks it; the numpy path stays the reference).
 *
 * Why: the float convolution is one product, which numpy's OpenBLAS runs on the calling
 * thread (its own threads spin, so the Interpreter limits them to one, blas.py). So the
 * step cuts the output pixels into fixed blocks of EL_CONV_BLOCK rows, and every block --
 * on whichever thread of the pool takes it -- builds its im2col rows in that thread's
 * scratch (nothing for a 1x1, stride-1, unpadded filter: the input rows are the matrix),
 * multiplies them by the (K, O) filter -- on gemm_f32.c's tiles where the filter was
 * packed for them (AVX2 + FMA), else with sgemm -- and adds the bias and clamps (or takes
 * the fused swish: EL_ACT_SWISH) while the rows are in cache (activations_f32.c). The
 * blocks are the same whatever the thread count, so the bits are too. The sgemm's address
 * comes from Python (kernels/common/native_conv_blas.py: the cblas_sgemm of the BLAS numpy
 * loaded, found through threadpoolctl), with its integer width (LP64 or ILP64). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

#include "native.h"
#include "native_float.h"
#include "threadpool.h"

#define EL_CONV_BLOCK 128 /* output pixels per block */
#define EL_CONV_MIN_TASKS 8 /* fewer blocks: each also cut into panels of output channels */
#define EL_CONV_MIN_PANEL 64
enum { ROW_MAJOR = 101, NO_TRANS = 111 };

typedef void (*sgemm32_fn)(int, int, int, int32_t, int32_t, int32_t, float, const float *,
                           int32_t, const float *, int32_t, float, float *, int32_t);
typedef void (*sgemm64_fn)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                           int64_t, const float *, int64_t, float, float *, int64_t);

static void *sgemm_address; /* set once by set_sgemm; NULL: no step can be made */
static int sgemm_ilp64;

struct conv_blas {
    const float *x;       /* n, h, w, c */
    const float *weights; /* k = kh * kw * c rows of o */
    const float *bias;    /* o, or NULL */
    float *out;           /* rows = n * oh * ow, o */
    float *scratch;       /* threads blocks of EL_CONV_BLOCK x k (NULL: pointwise) */
    int64_t n, h, w, c, kh, kw, sh, sw, dh, dw, pad_t, pad_l, oh, ow, o, k, rows;
    int clamp;
    float lo, hi;
    int threads;
    int64_t blocks, panels; /* tasks: blocks x panels, fixed by the shape alone */
    int packed;             /* weights packed for el_gemm_f32_packed (else sgemm's (k, o)) */
};

/* c (m x n, row stride ldc) = a (m x k, row stride k) @ b (k x n, row stride ldb) */
static void sgemm(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
                  int64_t ldb, float *c, int64_t ldc)
{
    if (sgemm_ilp64)
        ((sgemm64_fn)sgemm_address)(ROW_MAJOR, NO_TRANS, NO_TRANS, m, n, k, 1.0f, a, k, b,
                                    ldb, 0.0f, c, ldc);
    else
        ((sgemm32_fn)sgemm_address)(ROW_MAJOR, NO_TRANS, NO_TRANS, (int32_t)m, (int32_t)n,
                                    (int32_t)k, 1.0f, a, (int32_t)k, b, (int32_t)ldb, 0.0f,
                                    c, (int32_t)ldc);
}

/* im2col rows [r0, r1) (output pixels) into cols: each row the (ky, kx, ch) window, zeros
 * where it falls outside the input (the numpy kernel's zero padding) */
static void im2col(const struct conv_blas *p, int64_t r0, int64_t r1, float *cols)
{
    const int64_t c = p->c;
    for (int64_t r = r0; r < r1; r++, cols += p->k) {
        const int64_t b = r / (p->oh * p->ow), oy = r / p->ow % p->oh, ox = r % p->ow;
        float *dst = cols;
        const int64_t ix0 = ox * p->sw - p->pad_l, ix1 = ix0 + (p->kw - 1) * p->dw;
        for (int64_t ky = 0; ky < p->kh; ky++) {
            const int64_t iy = oy * p->sh - p->pad_t + ky * p->dh;
            if (p->dw == 1 && ix0 >= 0 && ix1 < p->w && iy >= 0 && iy < p->h) {
                /* the window's row lies inside the input: its kw pixels are adjacent */
                memcpy(dst, p->x + ((b * p->h + iy) * p->w + ix0) * c,
                       sizeof(float) * (size_t)(p->kw * c));
                dst += p->kw * c;
                continue;
            }
            for (int64_t kx = 0; kx < p->kw; kx++, dst += c) {
                const int64_t ix = ox * p->sw - p->pad_l + kx * p->dw;
                if (iy < 0 || iy >= p->h || ix < 0 || ix >= p->w)
                    memset(dst, 0, sizeof(float) * (size_t)c);
                else
                    memcpy(dst, p->x + ((b * p->h + iy) * p->w + ix) * c,
                           sizeof(float) * (size_t)c);
            }
        }
    }
}

/* Task t: block t / panels of output pixels, panel t % panels of output channels (whole
 * multiples of 16 but the last) */
static void conv_task(void *ctx, int64_t t, int worker)
{
    const struct conv_blas *p = ctx;
    const int64_t block = t / p->panels, panel = t % p->panels;
    const int64_t r0 = block * EL_CONV_BLOCK;
    const int64_t r1 = r0 + EL_CONV_BLOCK < p->rows ? r0 + EL_CONV_BLOCK : p->rows;
    const int64_t c0 = el_part(0, p->o, p->panels, panel, 16);
    const int64_t c1 = el_part(0, p->o, p->panels, panel + 1, 16);
    const float *a = p->x + r0 * p->k; /* pointwise: the input rows are the matrix */
    if (p->scratch) {
        float *cols = p->scratch + (int64_t)worker * EL_CONV_BLOCK * p->k;
        im2col(p, r0, r1, cols);
        a = cols;
    }
    float *c = p->out + r0 * p->o + c0;
    if (p->packed) el_gemm_f32_packed(r1 - r0, p->k, a, p->k, p->weights, c - c0, p->o, c0, c1);
    else sgemm(r1 - r0, c1 - c0, p->k, a, p->weights + c0, p->o, c, p->o);
    if (p->bias || p->clamp)
        for (int64_t r = 0; r < r1 - r0; r++)
            el_bias_act_f32(c + r * p->o, c1 - c0, p->bias ? p->bias + c0 : NULL, c1 - c0,
                            p->clamp, p->lo, p->hi);
}

static int conv_blas_run(void *args)
{
    const struct conv_blas *p = args;
    const int64_t tasks = p->blocks * p->panels;
    if (p->threads > 1) el_pool_run(p->threads, tasks, conv_task, args);
    else
        for (int64_t t = 0; t < tasks; t++) conv_task(args, t, 0);
    return 0;
}

/* conv_blas_step(x, weights, bias, out, scratch, (n, h, w, c, o), (kh, kw, sh, sw, dh, dw,
 * pad_t, pad_l, oh, ow), act, lo, hi, threads[, packed]): a NativeStep of the convolution
 * above (act: EL_ACT_*; packed: weights from pack_f32_panels, the product gemm_f32.c's);
 * scratch None for a pointwise filter, else threads x EL_CONV_BLOCK x k float32 */
static PyObject *conv_blas_step(PyObject *self, PyObject *args)
{
    PyObject *x, *weights, *bias, *out, *scratch;
    struct conv_blas p = {0};
    const char *fn = "conv_blas_step";
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOO(LLLLL)(LLLLLLLLLL)iffi|p", &x, &weights, &bias, &out,
                          &scratch, &p.n, &p.h, &p.w, &p.c, &p.o, &p.kh, &p.kw, &p.sh, &p.sw,
                          &p.dh, &p.dw, &p.pad_t, &p.pad_l, &p.oh, &p.ow, &p.clamp, &p.lo,
                          &p.hi, &p.threads, &p.packed))
        return NULL;
    const int64_t big = (int64_t)1 << 31;
    const int64_t dims[] = {p.n, p.h, p.w, p.c, p.o, p.kh, p.kw, p.sh, p.sw, p.dh, p.dw,
                            p.oh, p.ow};
    int ok = (p.packed || sgemm_address != NULL) && p.threads >= 1
             && p.threads <= EL_POOL_MAX_THREADS
             && p.clamp >= EL_ACT_NONE && p.clamp <= EL_ACT_SWISH
             && p.pad_t >= 0 && p.pad_l >= 0 && p.pad_t < big && p.pad_l < big;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        ok = ok && dims[i] >= 1 && dims[i] < big;
    if (ok) {
        p.k = p.kh * p.kw * p.c;
        p.rows = p.n * p.oh * p.ow;
        ok = (double)p.rows * (double)p.k < 1e15 && (double)p.n * p.h * p.w * p.c < 1e15
             && (double)p.rows * (double)p.o < 1e15 && (double)p.k * (double)p.o < 1e15
             && (sgemm_ilp64 || (p.k < big && p.o < big));
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError,
                        p.packed || sgemm_address
                            ? "native conv_blas_step: bad geometry or threads"
                            : "native conv_blas_step: no sgemm (set_sgemm first)");
        return NULL;
    }
    p.blocks = (p.rows + EL_CONV_BLOCK - 1) / EL_CONV_BLOCK;
    p.panels = 1;
    if (p.blocks < EL_CONV_MIN_TASKS) {
        const int64_t want = (EL_CONV_MIN_TASKS + p.blocks - 1) / p.blocks;
        const int64_t most = p.o / EL_CONV_MIN_PANEL;
        p.panels = want < most ? want : most > 1 ? most : 1;
    }
    const int pointwise = scratch == Py_None;
    if (pointwise && (p.kh != 1 || p.kw != 1 || p.sh != 1 || p.sw != 1 || p.pad_t || p.pad_l
                      || p.oh != p.h || p.ow != p.w)) {
        PyErr_SetString(PyExc_ValueError, "native conv_blas_step: only a 1x1, stride-1, "
                                          "unpadded filter runs without scratch");
        return NULL;
    }
    if (!(p.x = el_span(x, 4 * p.n * p.h * p.w * p.c, 0, fn, "the input"))
        || !(p.weights = el_span(weights, 4 * (p.packed ? el_gemm_f32_packed_size(p.k, p.o)
                                                        : p.k * p.o), 0, fn, "the filter"))
        || (bias != Py_None && !(p.bias = el_span(bias, 4 * p.o, 0, fn, "the bias")))
        || !(p.out = el_span(out, 4 * p.rows * p.o, 1, fn, "the output"))
        || (!pointwise && !(p.scratch = el_span(scratch, 4 * (long long)p.threads
                                                                 * EL_CONV_BLOCK * p.k,
                                                   1, fn, "the scratch"))))
        return NULL;
    return el_step_new(conv_blas_run, &p, sizeof p, args); /* args holds every array */
}

/* set_sgemm(address, ilp64): the cblas_sgemm the steps call (0: none) */
static PyObject *set_sgemm(PyObject *self, PyObject *args)
{
    unsigned long long address;
    int ilp64;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kp", &address, &ilp64)) return NULL;
    sgemm_address = (void *)(uintptr_t)address;
    sgemm_ilp64 = ilp64;
    Py_RETURN_NONE;
}

/* pack_f32_panels(filter, k, o, out): the (o, k) float32 filter (a row per output
 * channel) into out (float32, gemm_f32_packed_size(k, o) values) as gemm_f32.c's panels */
static PyObject *pack_f32_panels(PyObject *self, PyObject *args)
{
    PyObject *src, *dst;
    long long k, o;
    (void)self;
    if (!PyArg_ParseTuple(args, "OLLO", &src, &k, &o, &dst)) return NULL;
    if (k < 1 || o < 1 || (double)k * (double)o >= 1e15) {
        PyErr_SetString(PyExc_ValueError, "native pack_f32_panels: bad shape");
        return NULL;
    }
    const float *w;
    float *out;
    if (!(w = el_span(src, 4 * k * o, 0, "pack_f32_panels", "the filter"))
        || !(out = el_span(dst, 4 * el_gemm_f32_packed_size(k, o), 1, "pack_f32_panels",
                           "the panels")))
        return NULL;
    el_gemm_f32_pack(w, k, o, out);
    Py_RETURN_NONE;
}

static PyObject *gemm_f32_packed_size(PyObject *self, PyObject *args)
{
    long long k, o;
    (void)self;
    if (!PyArg_ParseTuple(args, "LL", &k, &o)) return NULL;
    return PyLong_FromLongLong(el_gemm_f32_packed_size(k, o));
}

static PyObject *gemm_f32_fma(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(el_gemm_f32_fma());
}

static PyObject *conv_blas_block(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyLong_FromLong(EL_CONV_BLOCK);
}

PyMethodDef el_conv_blas_methods[] = {
    {"conv_blas_step", conv_blas_step, METH_VARARGS,
     "conv_blas_step(x, weights, bias, out, scratch, (n, h, w, c, o), (kh, kw, sh, sw, dh, "
     "dw, pad_t, pad_l, oh, ow), clamp, lo, hi, threads): a NativeStep of a float32 CONV_2D "
     "in blocks of output pixels over the C pool, each on BLAS (conv_blas.c)"},
    {"set_sgemm", set_sgemm, METH_VARARGS,
     "set_sgemm(address, ilp64): the cblas_sgemm conv_blas_step calls"},
    {"pack_f32_panels", pack_f32_panels, METH_VARARGS,
     "pack_f32_panels(filter, k, o, out): the (o, k) float32 filter in gemm_f32.c's panels"},
    {"gemm_f32_packed_size", gemm_f32_packed_size, METH_VARARGS,
     "gemm_f32_packed_size(k, o): float32 values pack_f32_panels writes"},
    {"gemm_f32_fma", gemm_f32_fma, METH_NOARGS,
     "gemm_f32_fma(): True where gemm_f32.c's AVX2 + FMA tile runs"},
    {"conv_blas_block", conv_blas_block, METH_NOARGS,
     "conv_blas_block(): output pixels per block (the scratch holds threads such blocks)"},
    {NULL, NULL, 0, NULL},
};
