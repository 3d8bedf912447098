/* float32 RESIZE_BILINEAR as one native step (kernels/resize.py: BilinearRecord's tables,
 * made in prepare, drive it).
 *
 * reference_ops::ResizeBilinear's blend, evaluated left to right in float32 as the numpy
 * kernel does (-std=c11 keeps every multiply and add apart, no FMA), so the bits are the
 * numpy kernel's and the reference's:
 *     out = in[y0, x0] * (1 - dy) * (1 - dx) + in[y1, x0] * dy * (1 - dx)
 *         + in[y0, x1] * (1 - dy) * dx       + in[y1, x1] * dy * dx
 * y0 / y1 / x0 / x1 (source rows and columns, in range) and the four weights per row and
 * column come from prepare; the step reads nothing else. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "native.h"

struct resize_f32 {
    const float *x; /* n, h, w, c */
    float *out;     /* n, oh, ow, c */
    int64_t n, h, w, c, oh, ow;
    const int64_t *y0, *y1, *x0, *x1; /* oh, oh, ow, ow */
    const float *wy0, *wy1, *wx0, *wx1;
};

static int resize_f32_run(void *args)
{
    const struct resize_f32 *p = args;
    const int64_t row = p->w * p->c;
    for (int64_t b = 0; b < p->n; b++)
        for (int64_t oy = 0; oy < p->oh; oy++) {
            const float *top = p->x + (b * p->h + p->y0[oy]) * row;
            const float *bottom = p->x + (b * p->h + p->y1[oy]) * row;
            const float ty = p->wy0[oy], by = p->wy1[oy];
            float *o = p->out + (b * p->oh + oy) * p->ow * p->c;
            for (int64_t ox = 0; ox < p->ow; ox++, o += p->c) {
                const int64_t l = p->x0[ox] * p->c, r = p->x1[ox] * p->c;
                const float lx = p->wx0[ox], rx = p->wx1[ox];
                for (int64_t ch = 0; ch < p->c; ch++)
                    o[ch] = top[l + ch] * ty * lx + bottom[l + ch] * by * lx
                            + top[r + ch] * ty * rx + bottom[r + ch] * by * rx;
            }
        }
    return 0;
}

/* every index in [0, limit) */
static int indices_ok(const int64_t *at, int64_t count, int64_t limit)
{
    for (int64_t i = 0; i < count; i++)
        if (at[i] < 0 || at[i] >= limit) return 0;
    return 1;
}

/* resize_bilinear_f32_step(x, out, (n, h, w, c, oh, ow), (y0, y1, x0, x1),
 * (wy0, wy1, wx0, wx1)): a NativeStep of the blend above; the index tables int64, the
 * weights float32 */
static PyObject *resize_bilinear_f32_step(PyObject *self, PyObject *args)
{
    PyObject *x, *out, *iy0, *iy1, *ix0, *ix1, *fy0, *fy1, *fx0, *fx1;
    struct resize_f32 p = {0};
    (void)self;
    if (!PyArg_ParseTuple(args, "OO(LLLLLL)(OOOO)(OOOO)", &x, &out, &p.n, &p.h, &p.w, &p.c,
                          &p.oh, &p.ow, &iy0, &iy1, &ix0, &ix1, &fy0, &fy1, &fx0, &fx1))
        return NULL;
    if (p.n < 1 || p.h < 1 || p.w < 1 || p.c < 1 || p.oh < 1 || p.ow < 1) {
        PyErr_SetString(PyExc_ValueError, "native resize_bilinear_f32_step: bad sizes");
        return NULL;
    }
    const long long oh8 = 8 * p.oh, ow8 = 8 * p.ow, oh4 = 4 * p.oh, ow4 = 4 * p.ow;
    const char *fn = "resize_bilinear_f32_step";
    if (!(p.x = el_span(x, 4 * p.n * p.h * p.w * p.c, 0, fn, "the input"))
        || !(p.out = el_span(out, 4 * p.n * p.oh * p.ow * p.c, 1, fn, "the output"))
        || !(p.y0 = el_span(iy0, oh8, 0, fn, "y0")) || !(p.y1 = el_span(iy1, oh8, 0, fn, "y1"))
        || !(p.x0 = el_span(ix0, ow8, 0, fn, "x0")) || !(p.x1 = el_span(ix1, ow8, 0, fn, "x1"))
        || !(p.wy0 = el_span(fy0, oh4, 0, fn, "wy0")) || !(p.wy1 = el_span(fy1, oh4, 0, fn, "wy1"))
        || !(p.wx0 = el_span(fx0, ow4, 0, fn, "wx0")) || !(p.wx1 = el_span(fx1, ow4, 0, fn, "wx1")))
        return NULL;
    if (!indices_ok(p.y0, p.oh, p.h) || !indices_ok(p.y1, p.oh, p.h)
        || !indices_ok(p.x0, p.ow, p.w) || !indices_ok(p.x1, p.ow, p.w)) {
        PyErr_SetString(PyExc_ValueError, "native resize_bilinear_f32_step: index out of range");
        return NULL;
    }
    return el_step_new(resize_f32_run, &p, sizeof p, args); /* args holds every array */
}

PyMethodDef el_resize_f32_methods[] = {
    {"resize_bilinear_f32_step", resize_bilinear_f32_step, METH_VARARGS,
     "resize_bilinear_f32_step(x, out, (n, h, w, c, oh, ow), (y0, y1, x0, x1), (wy0, wy1, "
     "wx0, wx1)): a NativeStep of a float32 RESIZE_BILINEAR (resize_f32.c)"},
    {NULL, NULL, 0, NULL},
};
