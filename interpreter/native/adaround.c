/* AdaRound's Adam loop (converter/quantize/adaround.py, _Relaxed) fused into two passes per
 * step: the element-wise work between numpy's exp and the BLAS product (relax_rounding), and
 * between the product and the next step (relax_update: the gradient's scale, the
 * regulariser's term, dh and Adam). Each value is computed with the float32 operations of
 * the numpy loop, in its order, one rounding per operation (no contraction into fused
 * multiply-adds: C11 mode, -ffp-contract=off; SSE2 or NEON lanes round as scalars do), so V
 * is bit for bit numpy's; exp and pow stay numpy's (their float32 results are numpy's own
 * implementation's). Arrays: float32 (masks 0.0 / 1.0), C-contiguous, n values each, checked here; the
 * GIL is released around the loops. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#include "native.h"

#if defined(_MSC_VER)
#define EL_RESTRICT __restrict
#else
#define EL_RESTRICT restrict
#endif

#if defined(__GNUC__) && !defined(__clang__)
/* the clip's selects vectorise only without FP-exception semantics (values are unchanged) */
#pragma GCC optimize("no-trapping-math")
#endif

static int sized(Py_buffer *b, Py_ssize_t n, Py_ssize_t item, const char *what)
{
    if (b->len != n * item) {
        PyErr_Format(PyExc_ValueError, "native adaround: %s holds %zd bytes, needs %zd", what,
                     b->len, n * item);
        return 0;
    }
    return 1;
}

/* per weight, from e = exp(-V): sig = 1 / (e + 1), h = sig * stretch + shift,
 * dh = sig * stretch * (1 - sig) where 0 < h < 1 (inside = 1), else 0; h clipped to [0, 1];
 * d = h * free + base - w (the rounding's offset from w); a = 2 h - 1 and r = |a| */
static inline __attribute__((always_inline)) void rounding_body(
    Py_ssize_t n, const float *EL_RESTRICT e, const float *EL_RESTRICT base,
    const float *EL_RESTRICT w, const float *EL_RESTRICT free_, float *EL_RESTRICT d,
    float *EL_RESTRICT dh, float *EL_RESTRICT in, float *EL_RESTRICT a, float *EL_RESTRICT r,
    float stretch, float shift)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        float s = 1.0f / (e[i] + 1.0f);
        float h = s * stretch;
        h = h + shift;
        float g = s * stretch;
        g = g * (1.0f - s);
        float inside = (float)((h > 0.0f) & (h < 1.0f));
        dh[i] = g * inside;
        in[i] = inside;
        h = h > 0.0f ? h : 0.0f;   /* numpy's clip: max, then min */
        h = h < 1.0f ? h : 1.0f;
        float t = h * free_[i];
        t = t + base[i];
        d[i] = t - w[i];
        float m = h * 2.0f;
        m = m - 1.0f;
        a[i] = m;
        r[i] = fabsf(m);
    }
}

/* per weight: g = (g + offset) * scale, minus a * factor * p where `on` and inside (p:
 * |a|^(beta - 2)), times dh; then Adam on x: m = m b1 + g c1, v = v b2 + g c2 g,
 * x -= m lr / (sqrt(v) + eps) */
static inline __attribute__((always_inline)) void update_body(
    Py_ssize_t n, float *EL_RESTRICT g, const float *EL_RESTRICT off,
    const float *EL_RESTRICT sc, float on, const float *EL_RESTRICT a,
    const float *EL_RESTRICT p, const float *EL_RESTRICT in, float factor,
    const float *EL_RESTRICT dh, float *EL_RESTRICT x, float *EL_RESTRICT m,
    float *EL_RESTRICT v, const float k[6])
{
    const float b1 = k[0], c1 = k[1], b2 = k[2], c2 = k[3], lr = k[4], eps = k[5];
    for (Py_ssize_t i = 0; i < n; i++) {
        float t = g[i] + off[i];
        t = t * sc[i];
        float term = a[i] * factor;
        term = term * p[i];
        t = t - term * (on * in[i]);   /* - term, or - 0 (a sign of 0 at most) */
        t = t * dh[i];
        g[i] = t;
        float mi = m[i] * b1;
        mi = mi + t * c1;
        float vi = v[i] * b2;
        float q = t * c2;
        vi = vi + q * t;
        m[i] = mi;
        v[i] = vi;
        float den = sqrtf(vi) + eps;
        float step = mi * lr;
        x[i] = x[i] - step / den;
    }
}

/* Both loops built for baseline x86-64 and for AVX2, picked at run time (native.h): the
 * same IEEE operations in the same order, 8 lanes instead of 4 (no FMA: not contracted). */
#define EL_ROUNDING_ARGS Py_ssize_t n, const float *EL_RESTRICT e, const float *EL_RESTRICT base, \
    const float *EL_RESTRICT w, const float *EL_RESTRICT fr, float *EL_RESTRICT d,               \
    float *EL_RESTRICT dh, float *EL_RESTRICT in, float *EL_RESTRICT a, float *EL_RESTRICT r,    \
    float stretch, float shift
#define EL_UPDATE_ARGS Py_ssize_t n, float *EL_RESTRICT g, const float *EL_RESTRICT off,          \
    const float *EL_RESTRICT sc, float on, const float *EL_RESTRICT a,                           \
    const float *EL_RESTRICT p, const float *EL_RESTRICT in, float factor,                       \
    const float *EL_RESTRICT dh, float *EL_RESTRICT x, float *EL_RESTRICT m,                     \
    float *EL_RESTRICT v, const float k[6]

static void rounding_base(EL_ROUNDING_ARGS)
{
    rounding_body(n, e, base, w, fr, d, dh, in, a, r, stretch, shift);
}

static void update_base(EL_UPDATE_ARGS)
{
    update_body(n, g, off, sc, on, a, p, in, factor, dh, x, m, v, k);
}

#ifdef EL_X86_AVX2
EL_TARGET_AVX2 static void rounding_avx2(EL_ROUNDING_ARGS)
{
    rounding_body(n, e, base, w, fr, d, dh, in, a, r, stretch, shift);
}

EL_TARGET_AVX2 static void update_avx2(EL_UPDATE_ARGS)
{
    update_body(n, g, off, sc, on, a, p, in, factor, dh, x, m, v, k);
}
#else
#define rounding_avx2 rounding_base
#define update_avx2 update_base
#endif

static void rounding_loop(EL_ROUNDING_ARGS)
{
    (el_have_avx2() ? rounding_avx2 : rounding_base)(n, e, base, w, fr, d, dh, in, a, r,
                                                     stretch, shift);
}

static void update_loop(EL_UPDATE_ARGS)
{
    (el_have_avx2() ? update_avx2 : update_base)(n, g, off, sc, on, a, p, in, factor, dh, x, m,
                                                 v, k);
}

/* the weights still inside 0 < h < 1 (the only ones whose regulariser term is not
 * multiplied by dh = 0): their indices into at, their |a| into val, in order; returns how
 * many (branch-free: every index is written, the count advances on the live ones) */
static Py_ssize_t live_loop(Py_ssize_t n, const float *EL_RESTRICT in,
                           const float *EL_RESTRICT r, int32_t *EL_RESTRICT at,
                           float *EL_RESTRICT val)
{
    Py_ssize_t c = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        at[c] = (int32_t)i;
        val[c] = r[i];
        c += in[i] != 0.0f;
    }
    return c;
}

/* relax_rounding(e, base, w, free, d, dh, inside, a, abs_a, live_at, live_abs, stretch,
 * shift) -> the number of live weights (live_loop) */
static PyObject *relax_rounding(PyObject *self, PyObject *args)
{
    Py_buffer e, base, w, fr, d, dh, in, a, r, at, val;
    double stretch, shift;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*w*w*w*w*w*w*w*dd", &e, &base, &w, &fr, &d, &dh, &in,
                          &a, &r, &at, &val, &stretch, &shift))
        return NULL;
    Py_ssize_t n = e.len / 4;
    PyObject *result = NULL;
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "native adaround: more than 2^31 weights");
    } else if (sized(&e, n, 4, "e") && sized(&base, n, 4, "base") && sized(&w, n, 4, "w") &&
               sized(&fr, n, 4, "free") && sized(&d, n, 4, "d") && sized(&dh, n, 4, "dh") &&
               sized(&in, n, 4, "inside") && sized(&a, n, 4, "a") && sized(&r, n, 4, "|a|") &&
               sized(&at, n, 4, "live_at") && sized(&val, n, 4, "live_abs")) {
        Py_ssize_t live;
        Py_BEGIN_ALLOW_THREADS
        rounding_loop(n, e.buf, base.buf, w.buf, fr.buf, d.buf, dh.buf, in.buf, a.buf,
                      r.buf, (float)stretch, (float)shift);
        live = live_loop(n, in.buf, r.buf, at.buf, val.buf);
        Py_END_ALLOW_THREADS
        result = PyLong_FromSsize_t(live);
    }
    PyBuffer_Release(&e); PyBuffer_Release(&base); PyBuffer_Release(&w);
    PyBuffer_Release(&fr); PyBuffer_Release(&d); PyBuffer_Release(&dh);
    PyBuffer_Release(&in); PyBuffer_Release(&a); PyBuffer_Release(&r);
    PyBuffer_Release(&at); PyBuffer_Release(&val);
    return result;
}

/* relax_update(g, offset, scale, regularise, a, power, inside, factor, dh, x, m, v,
 *              b1, c1, b2, c2, lr, eps, live_at, live_pow, live): with `regularise`,
 * power[live_at[j]] = live_pow[j] for j < live first (|a|^(beta - 2) of the live weights;
 * the others keep |a| = 1, which is 1^(beta - 2)) */
static PyObject *relax_update(PyObject *self, PyObject *args)
{
    Py_buffer g, off, sc, a, pw, in, dh, x, m, v, at, lp;
    int regularise;
    double factor, s[6];
    Py_ssize_t live;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*y*py*w*y*dy*w*w*w*ddddddy*y*n", &g, &off, &sc,
                          &regularise, &a, &pw, &in, &factor, &dh, &x, &m, &v, &s[0], &s[1],
                          &s[2], &s[3], &s[4], &s[5], &at, &lp, &live))
        return NULL;
    Py_ssize_t n = g.len / 4;
    PyObject *result = NULL;
    if (live < 0 || live > n || at.len < live * 4 || lp.len < live * 4) {
        PyErr_SetString(PyExc_ValueError, "native adaround: live count outside the arrays");
    } else if (sized(&g, n, 4, "g") && sized(&off, n, 4, "offset") &&
               sized(&sc, n, 4, "scale") && sized(&a, n, 4, "a") &&
               sized(&pw, n, 4, "power") && sized(&in, n, 4, "inside") &&
               sized(&dh, n, 4, "dh") && sized(&x, n, 4, "x") && sized(&m, n, 4, "m") &&
               sized(&v, n, 4, "v")) {
        float k[6];
        for (int i = 0; i < 6; i++) k[i] = (float)s[i];   /* as numpy rounds Python floats */
        const int32_t *idx = at.buf;
        for (Py_ssize_t j = 0; j < live; j++)
            if (idx[j] < 0 || idx[j] >= n) live = -1;       /* (checked before any write) */
        if (live < 0) {
            PyErr_SetString(PyExc_ValueError, "native adaround: live index outside 0 .. n");
            goto done;
        }
        Py_BEGIN_ALLOW_THREADS
        if (regularise) {
            float *p = pw.buf;
            const float *lpv = lp.buf;
            for (Py_ssize_t j = 0; j < live; j++) p[idx[j]] = lpv[j];
        }
        update_loop(n, g.buf, off.buf, sc.buf, regularise ? 1.0f : 0.0f, a.buf, pw.buf,
                    in.buf, (float)factor, dh.buf, x.buf, m.buf, v.buf, k);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
done:
    PyBuffer_Release(&g); PyBuffer_Release(&off); PyBuffer_Release(&sc);
    PyBuffer_Release(&a); PyBuffer_Release(&pw); PyBuffer_Release(&in);
    PyBuffer_Release(&dh); PyBuffer_Release(&x); PyBuffer_Release(&m); PyBuffer_Release(&v);
    PyBuffer_Release(&at); PyBuffer_Release(&lp);
    return result;
}

/* out[o] = d[o] G[o] for each output channel o of a depthwise layer (d: o x k, G: o x k x k,
 * out: o x k): as numpy's einsum("ok,okl->ol") adds, k by k in order, each product rounded
 * (Quadratic.apply); the rows of G are contiguous, so the inner loop runs along them */
static inline __attribute__((always_inline)) void depthwise_body(
    Py_ssize_t o, Py_ssize_t k, const float *EL_RESTRICT d, const float *EL_RESTRICT G,
    float *EL_RESTRICT out)
{
    for (Py_ssize_t c = 0; c < o; c++) {
        const float *dc = d + c * k, *gc = G + c * k * k;
        float *oc = out + c * k;
        for (Py_ssize_t l = 0; l < k; l++) oc[l] = dc[0] * gc[l];
        for (Py_ssize_t j = 1; j < k; j++) {
            const float x = dc[j];
            const float *row = gc + j * k;
            for (Py_ssize_t l = 0; l < k; l++) {
                float p = x * row[l];
                oc[l] = oc[l] + p;
            }
        }
    }
}

static void depthwise_base(Py_ssize_t o, Py_ssize_t k, const float *EL_RESTRICT d,
                           const float *EL_RESTRICT G, float *EL_RESTRICT out)
{
    depthwise_body(o, k, d, G, out);
}

#ifdef EL_X86_AVX2
EL_TARGET_AVX2 static void depthwise_avx2(Py_ssize_t o, Py_ssize_t k, const float *EL_RESTRICT d,
                                          const float *EL_RESTRICT G, float *EL_RESTRICT out)
{
    depthwise_body(o, k, d, G, out);
}
#else
#define depthwise_avx2 depthwise_base
#endif

/* relax_depthwise(d, G, out, k): out = d G per channel (depthwise_body); float32,
 * C-contiguous, d and out o x k values, G o x k x k */
static PyObject *relax_depthwise(PyObject *self, PyObject *args)
{
    Py_buffer d, G, out;
    Py_ssize_t k;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*w*n", &d, &G, &out, &k)) return NULL;
    PyObject *result = NULL;
    const Py_ssize_t o = k > 0 ? d.len / 4 / k : 0;
    if (k <= 0 || k > 65536 || d.len != o * k * 4) {
        PyErr_SetString(PyExc_ValueError, "native adaround: d is not o x k float32 values");
    } else if (sized(&G, o * k * k, 4, "G") && sized(&out, o * k, 4, "out")) {
        Py_BEGIN_ALLOW_THREADS
        (el_have_avx2() ? depthwise_avx2 : depthwise_base)(o, k, d.buf, G.buf, out.buf);
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&d); PyBuffer_Release(&G); PyBuffer_Release(&out);
    return result;
}

PyMethodDef adaround_methods[] = {
    {"relax_rounding", relax_rounding, METH_VARARGS,
     "relax_rounding(e, base, w, free, d, dh, inside, a, abs_a, live_at, live_abs, stretch, "
     "shift) -> live: AdaRound's element-wise work from e = exp(-V) to the rounding offset d, "
     "and the live weights' |a| (adaround.c)"},
    {"relax_update", relax_update, METH_VARARGS,
     "relax_update(g, offset, scale, regularise, a, power, inside, factor, dh, x, m, v, b1, "
     "c1, b2, c2, lr, eps, live_at, live_pow, live): AdaRound's gradient from g = d G and "
     "one Adam step (adaround.c)"},
    {"relax_depthwise", relax_depthwise, METH_VARARGS,
     "relax_depthwise(d, G, out, k): out = d G per output channel of a depthwise layer, as "
     "einsum('ok,okl->ol') adds (adaround.c)"},
    {NULL, NULL, 0, NULL},
};
