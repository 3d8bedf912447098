/* Small float32 FULLY_CONNECTED as one native step (kernels/fully_connected.py picks it
 * below SMALL_FC multiply-adds, where a BLAS call's fixed cost is most of the op; larger
 * ones stay one BLAS product).
 *
 * The arithmetic is LiteRT's reference kernel's (reference_ops::FullyConnected, float):
 *     total = 0; total += x[b, d] * w[o, d] for d = 0, 1, ...   (one rounding each:
 *     -std=c11 keeps the multiply and the add apart, no FMA)
 *     out[b, o] = clamp(total + bias[o])
 * so its results are that kernel's bit for bit (a fused activation clamps; without one
 * nothing is clamped, as the numpy kernel does). The loop runs over d outside and o inside
 * on the transposed weights (I, O): every output keeps its own order over d, and the
 * compiler vectorizes across outputs. Baseline x86-64 and AVX2 builds, picked at run time. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "native.h"

struct fc_f32 {
    const float *x;         /* rows x depth */
    const float *weights_t; /* depth x units */
    const float *bias;      /* units, or NULL */
    float *out;             /* rows x units */
    int64_t rows, depth, units;
    int clamp;
    float lo, hi;
};

#define EL_FC_F32(name, attr)                                                              \
    attr static void name(const struct fc_f32 *p)                                          \
    {                                                                                      \
        for (int64_t b = 0; b < p->rows; b++) {                                            \
            const float *restrict x = p->x + b * p->depth;                                 \
            float *restrict acc = p->out + b * p->units;                                   \
            for (int64_t o = 0; o < p->units; o++) acc[o] = 0.0f;                          \
            for (int64_t d = 0; d < p->depth; d++) {                                       \
                const float v = x[d];                                                      \
                const float *restrict w = p->weights_t + d * p->units;                     \
                for (int64_t o = 0; o < p->units; o++) acc[o] += v * w[o];                 \
            }                                                                              \
            if (p->bias)                                                                   \
                for (int64_t o = 0; o < p->units; o++) acc[o] += p->bias[o];               \
            if (p->clamp)                                                                  \
                for (int64_t o = 0; o < p->units; o++) {                                   \
                    float v = acc[o] < p->lo ? p->lo : acc[o];                             \
                    acc[o] = v > p->hi ? p->hi : v;                                        \
                }                                                                          \
        }                                                                                  \
    }

EL_FC_F32(fc_base, )
#ifdef EL_X86_AVX2
EL_FC_F32(fc_avx2, EL_TARGET_AVX2)
#else
#define fc_avx2 fc_base
#endif

static int fc_f32_run(void *args)
{
    const struct fc_f32 *p = args;
    if (el_have_avx2()) fc_avx2(p);
    else fc_base(p);
    return 0;
}

/* fc_f32_step(x, weights_t, bias, out, rows, depth, units, clamp, lo, hi): a NativeStep of
 * out (rows, units) = clamp(x (rows, depth) @ weights_t (depth, units) + bias); bias None:
 * none */
static PyObject *fc_f32_step(PyObject *self, PyObject *args)
{
    PyObject *x, *weights_t, *bias, *out;
    struct fc_f32 p = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "OOOOLLLpff", &x, &weights_t, &bias, &out, &p.rows, &p.depth,
                          &p.units, &p.clamp, &p.lo, &p.hi))
        return NULL;
    if (p.rows < 1 || p.depth < 1 || p.units < 1) {
        PyErr_SetString(PyExc_ValueError, "native fc_f32_step: bad sizes");
        return NULL;
    }
    const char *fn = "fc_f32_step";
    if (!(p.x = el_span(x, 4 * p.rows * p.depth, 0, fn, "the input"))
        || !(p.weights_t = el_span(weights_t, 4 * p.depth * p.units, 0, fn, "the weights"))
        || (bias != Py_None && !(p.bias = el_span(bias, 4 * p.units, 0, fn, "the bias")))
        || !(p.out = el_span(out, 4 * p.rows * p.units, 1, fn, "the output")))
        return NULL;
    return el_step_new(fc_f32_run, &p, sizeof p, args); /* args holds every array */
}

PyMethodDef el_fc_f32_methods[] = {
    {"fc_f32_step", fc_f32_step, METH_VARARGS,
     "fc_f32_step(x, weights_t, bias, out, rows, depth, units, clamp, lo, hi): a NativeStep "
     "of a small float32 FULLY_CONNECTED in LiteRT's reference order (fc_f32.c)"},
    {NULL, NULL, 0, NULL},
};
