/* The entropy calibration's KL search (converter/quantize/observers/entropy.py,
 * kl_divergences) for a block of candidate thresholds, in two passes around numpy's log:
 *   kl_prepare: per candidate i, the reference P and the quantized Q of its first i bins,
 *     both smoothed and normalised, into p and r = P / Q (row k of the block at offset
 *     sum of the earlier rows' lengths), and whether the row is usable;
 *   kl_finish: per usable row, D = sum p * log(P / Q) (r already holds numpy's log).
 * Each value is computed with the float64 operations of the numpy code, in its order, one
 * rounding each (C11, -ffp-contract=off), and every sum over a row is numpy's pairwise sum
 * (numpy/_core/src/umath/loops_utils.h.src: 8 accumulators up to 128 values, halves
 * beyond), so D is bit for bit the numpy search's and the chosen threshold is the same.
 * The log stays numpy's (its float64 log may be its own SIMD code, not libm's).
 * Arrays: float64 / int64, C-contiguous, sizes checked here; the GIL is released. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#define KL_EPS 1e-4   /* entropy.py EPS: the counts a zero bin gets when smoothed */

/* numpy's pairwise sum of a[0 .. n) (as np.add.reduce on a contiguous float64 row) */
static double pairwise(const double *a, Py_ssize_t n)
{
    if (n < 8) {
        double res = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        Py_ssize_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    Py_ssize_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise(a, n2) + pairwise(a + n2, n - n2);
}

/* entropy.py _smooth on one row of n values: zero bins get KL_EPS, taken evenly from the
 * non-zero ones; returns whether the row has a non-zero bin */
static int smooth(double *x, Py_ssize_t n)
{
    Py_ssize_t zeros = 0;
    for (Py_ssize_t j = 0; j < n; j++) zeros += x[j] == 0.0;
    Py_ssize_t nonzero = n - zeros;
    if (zeros > 0) {
        double take = nonzero > 0 ? (KL_EPS * (double)zeros) / (double)nonzero : 0.0;
        for (Py_ssize_t j = 0; j < n; j++) x[j] = x[j] == 0.0 ? KL_EPS : x[j] - take;
    }
    return nonzero > 0;
}

/* one candidate i (levels <= i <= bins): P into p, Q into q (both i values), smoothed,
 * normalised; r = P / Q. Returns whether the row is usable (both have a non-zero bin and
 * no value <= 0 after smoothing). */
static int prepare_row(Py_ssize_t i, Py_ssize_t levels, const double *hist,
                       const double *suffix, const double *counts, const int64_t *filled,
                       double *p, double *q, double *r)
{
    for (Py_ssize_t j = 0; j < i; j++) p[j] = hist[j];
    p[i - 1] += suffix[i];                      /* the outliers go to the last bin */
    Py_ssize_t merged = i / levels;             /* bins per quantized level */
    for (Py_ssize_t g = 0; g < levels; g++) {
        Py_ssize_t s = g * merged, e = g == levels - 1 ? i : s + merged;
        double group = counts[e] - counts[s];
        double norm = (double)(filled[e] - filled[s]);
        if (g == levels - 1)                    /* the last bin's outliers */
            norm += (double)(hist[i - 1] == 0.0 && suffix[i] != 0.0);
        double per_bin = norm > 0 ? group / norm : 0.0;
        for (Py_ssize_t j = s; j < e; j++) q[j] = p[j] != 0.0 ? per_bin : 0.0;
    }
    int ok = smooth(p, i) & smooth(q, i);
    for (Py_ssize_t j = 0; ok && j < i; j++) ok = p[j] > 0.0 && q[j] > 0.0;
    if (!ok) {
        for (Py_ssize_t j = 0; j < i; j++) r[j] = 1.0;   /* (a log numpy takes quietly) */
        return 0;
    }
    double p_sum = 0.0 + pairwise(p, i), q_sum = 0.0 + pairwise(q, i);
    for (Py_ssize_t j = 0; j < i; j++) {
        p[j] = p[j] / p_sum;
        r[j] = p[j] / (q[j] / q_sum);
    }
    return 1;
}

static int sized(Py_buffer *b, Py_ssize_t n, const char *what)
{
    if (b->len != n * 8) {
        PyErr_Format(PyExc_ValueError, "native entropy: %s holds %zd bytes, needs %zd", what,
                     b->len, n * 8);
        return 0;
    }
    return 1;
}

/* kl_prepare(hist, suffix, counts, filled, levels, first, rows, p, r, ok): candidates
 * first .. first + rows - 1; hist: bins values, suffix / counts / filled: bins + 1 (sums
 * of hist[i:], of hist[:i], of hist[:i] != 0); p, r: the rows' lengths summed; ok: rows
 * (float64 1.0 / 0.0) */
static PyObject *kl_prepare(PyObject *self, PyObject *args)
{
    Py_buffer hist, suffix, counts, filled, p, r, ok;
    Py_ssize_t levels, first, rows;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*y*y*nnnw*w*w*", &hist, &suffix, &counts, &filled,
                          &levels, &first, &rows, &p, &r, &ok))
        return NULL;
    Py_ssize_t bins = hist.len / 8;
    Py_ssize_t total = rows * first + rows * (rows - 1) / 2;
    PyObject *result = NULL;
    double *q = NULL;
    if (levels < 1 || first < levels || rows < 0 || first + rows - 1 > bins) {
        PyErr_SetString(PyExc_ValueError, "native entropy: candidates outside levels .. bins");
    } else if (sized(&hist, bins, "hist") && sized(&suffix, bins + 1, "suffix") &&
               sized(&counts, bins + 1, "counts") && sized(&filled, bins + 1, "filled") &&
               sized(&p, total, "p") && sized(&r, total, "r") && sized(&ok, rows, "ok")) {
        q = PyMem_RawMalloc((size_t)(bins > 0 ? bins : 1) * sizeof(double));
        if (q == NULL) {
            PyErr_NoMemory();
        } else {
            Py_BEGIN_ALLOW_THREADS
            Py_ssize_t at = 0;
            for (Py_ssize_t k = 0; k < rows; k++) {
                Py_ssize_t i = first + k;
                ((double *)ok.buf)[k] = prepare_row(i, levels, hist.buf, suffix.buf,
                                                    counts.buf, filled.buf,
                                                    (double *)p.buf + at, q,
                                                    (double *)r.buf + at);
                at += i;
            }
            Py_END_ALLOW_THREADS
            PyMem_RawFree(q);
            result = Py_NewRef(Py_None);
        }
    }
    PyBuffer_Release(&hist); PyBuffer_Release(&suffix); PyBuffer_Release(&counts);
    PyBuffer_Release(&filled); PyBuffer_Release(&p); PyBuffer_Release(&r);
    PyBuffer_Release(&ok);
    return result;
}

/* kl_finish(p, log_r, ok, first, d): d[k] = sum of p * log_r over row k where ok, else
 * inf (rows as kl_prepare's) */
static PyObject *kl_finish(PyObject *self, PyObject *args)
{
    Py_buffer p, lr, ok, d;
    Py_ssize_t first;
    (void)self;
    if (!PyArg_ParseTuple(args, "w*y*y*nw*", &p, &lr, &ok, &first, &d))
        return NULL;
    Py_ssize_t rows = ok.len / 8;
    Py_ssize_t total = rows * first + rows * (rows - 1) / 2;
    PyObject *result = NULL;
    if (first < 1) {
        PyErr_SetString(PyExc_ValueError, "native entropy: first candidate < 1");
    } else if (sized(&p, total, "p") && sized(&lr, total, "log r") && sized(&d, rows, "d")) {
        Py_BEGIN_ALLOW_THREADS
        double *t = p.buf;
        const double *l = lr.buf, *good = ok.buf;
        double *out = d.buf;
        Py_ssize_t at = 0;
        for (Py_ssize_t k = 0; k < rows; k++) {
            Py_ssize_t i = first + k;
            if (good[k] != 0.0) {
                for (Py_ssize_t j = at; j < at + i; j++) t[j] = t[j] * l[j];
                out[k] = 0.0 + pairwise(t + at, i);
            } else {
                out[k] = Py_HUGE_VAL;
            }
            at += i;
        }
        Py_END_ALLOW_THREADS
        result = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&p); PyBuffer_Release(&lr); PyBuffer_Release(&ok); PyBuffer_Release(&d);
    return result;
}

PyMethodDef entropy_methods[] = {
    {"kl_prepare", kl_prepare, METH_VARARGS,
     "kl_prepare(hist, suffix, counts, filled, levels, first, rows, p, r, ok): the entropy "
     "search's smoothed, normalised P and P / Q for a block of candidates (entropy.c)"},
    {"kl_finish", kl_finish, METH_VARARGS,
     "kl_finish(p, log_r, ok, first, d): each candidate's KL divergence from kl_prepare's "
     "rows and numpy's log of r (entropy.c)"},
    {NULL, NULL, 0, NULL},
};
