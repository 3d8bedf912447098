/* compare's per-sample work on the tensors of two models (converter/accuracy/): the error
 * sums of one tensor pair in one pass, a per-tensor dequantization, and the range counts.
 *
 * The error sums of one tensor pair and one sample in one pass
 * (converter/accuracy/metrics.py, TensorStats.update): with r the reference value and t the
 * tested one, both as doubles, and e = t - r, the sums of r*r, t*t, r*t, e*e and e, and the
 * largest |e|. Each sum runs strictly left to right from 0.0, one rounding per operation (C11
 * mode: no contraction into fused multiply-adds; a double reduction is not reordered without
 * -ffast-math), so metrics.py's numpy fallback (np.add.accumulate) gives the same bits.
 * An integer `test` is first dequantized as LiteRT's DEQUANTIZE does and
 * Interpreter.get_dequantized_tensor reads it: (float)(scale * ((double)q - zero_point)).
 * A NaN anywhere makes the largest |e| NaN, as numpy's max does. The GIL is released. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#define CHUNK 256

typedef struct {
    double rr, tt, rt, ee, es, max_abs;
    int nan;
} Sums;

static void add_chunk(Sums *s, Py_ssize_t n, const float *ref, const float *test)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        double r = ref[i], t = test[i], e = t - r, a = fabs(e);
        s->rr += r * r;
        s->tt += t * t;
        s->rt += r * t;
        s->ee += e * e;
        s->es += e;
        if (a != a)
            s->nan = 1;
        else if (a > s->max_abs)
            s->max_abs = a;
    }
}

/* test's values as float32: kind 'f' float32, 'b' int8, 'B' uint8, 'h' int16 */
static void dequantize(char kind, const void *test, Py_ssize_t start, Py_ssize_t n,
                       double scale, double zero, float *out)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        double q = kind == 'b'   ? ((const int8_t *)test)[start + i]
                   : kind == 'B' ? ((const uint8_t *)test)[start + i]
                                 : ((const int16_t *)test)[start + i];
        out[i] = (float)(scale * (q - zero));
    }
}

static PyObject *tensor_sums(PyObject *self, PyObject *args)
{
    Py_buffer ref, test;
    int kind;
    double scale, zero;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*Cdd", &ref, &test, &kind, &scale, &zero))
        return NULL;
    Py_ssize_t n = ref.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t item = kind == 'f' ? 4 : kind == 'h' ? 2 : 1;
    Sums s = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0};
    if ((kind != 'f' && kind != 'b' && kind != 'B' && kind != 'h') ||
        ref.len != n * (Py_ssize_t)sizeof(float) || test.len != n * item) {
        PyErr_Format(PyExc_ValueError,
                     "tensor_sums: %zd reference bytes and %zd test bytes of kind '%c' do not "
                     "hold the same number of values",
                     ref.len, test.len, (char)kind);
        PyBuffer_Release(&ref);
        PyBuffer_Release(&test);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    const float *r = (const float *)ref.buf;
    if (kind == 'f') {
        add_chunk(&s, n, r, (const float *)test.buf);
    } else {
        float buf[CHUNK];
        for (Py_ssize_t k = 0; k < n; k += CHUNK) {
            Py_ssize_t m = n - k < CHUNK ? n - k : CHUNK;
            dequantize((char)kind, test.buf, k, m, scale, zero, buf);
            add_chunk(&s, m, r + k, buf);
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ref);
    PyBuffer_Release(&test);
    return Py_BuildValue("dddddd", s.rr, s.tt, s.rt, s.ee, s.es, s.nan ? (double)NAN : s.max_abs);
}

/* dequantize(q, kind, scale, zero_point, out_f32): out = (float)(scale * ((double)q - zp)),
 * get_dequantized_tensor's values for a per-tensor quantized tensor */
static PyObject *dequantize_into(PyObject *self, PyObject *args)
{
    Py_buffer test, out;
    int kind;
    double scale, zero;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*Cddw*", &test, &kind, &scale, &zero, &out))
        return NULL;
    Py_ssize_t n = out.len / (Py_ssize_t)sizeof(float);
    Py_ssize_t item = kind == 'h' ? 2 : 1;
    if ((kind != 'b' && kind != 'B' && kind != 'h') || out.len != n * (Py_ssize_t)sizeof(float) ||
        test.len != n * item) {
        PyErr_Format(PyExc_ValueError, "dequantize: %zd bytes of kind '%c' do not fill %zd "
                     "float32 bytes", test.len, (char)kind, out.len);
        PyBuffer_Release(&test);
        PyBuffer_Release(&out);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    dequantize((char)kind, test.buf, 0, n, scale, zero, (float *)out.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&test);
    PyBuffer_Release(&out);
    Py_RETURN_NONE;
}

/* range_counts(ref_f32, low, high, half) -> (values below low or above high, non-zero
 * values of magnitude below half): advice.py's RangeStats counts, comparisons in double */
static PyObject *range_counts(PyObject *self, PyObject *args)
{
    Py_buffer ref;
    double low, high, half;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*ddd", &ref, &low, &high, &half))
        return NULL;
    Py_ssize_t n = ref.len / (Py_ssize_t)sizeof(float), clipped = 0, tiny = 0;
    const float *r = (const float *)ref.buf;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        double v = r[i];
        clipped += (v < low) | (v > high);
        tiny += (v != 0.0) & (fabs(v) < half);
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&ref);
    return Py_BuildValue("nn", clipped, tiny);
}

PyMethodDef tensor_stats_methods[] = {
    {"dequantize_into", dequantize_into, METH_VARARGS,
     "dequantize_into(q, kind, scale, zero_point, out_f32): per-tensor dequantization, as "
     "get_dequantized_tensor (tensor_stats.c)"},
    {"range_counts", range_counts, METH_VARARGS,
     "range_counts(ref_f32, low, high, half) -> (clipped, tiny) (tensor_stats.c)"},
    {"tensor_sums", tensor_sums, METH_VARARGS,
     "tensor_sums(ref_f32, test, kind, scale, zero_point) -> (sum r*r, sum t*t, sum r*t, "
     "sum e*e, sum e, max |e|) of one sample, left to right (tensor_stats.c)"},
    {NULL, NULL, 0, NULL},
};
