/* The run loop in C (interpreter/runloop.py): invoke()'s list of prepared steps without
 * the Python loop, and NativeStep, a C kernel whose arguments were bound at allocate
 * time, run with no Python call at all.
 *
 * A step is the tuple (eval, record, inputs, outputs). run_steps calls eval(record,
 * inputs, outputs) for each (vectorcall), except when eval is this module's
 * run_native_step and record a NativeStep: then it calls the step's C function directly,
 * and a run of consecutive native steps runs with the GIL released once. A kernel
 * written in C joins by returning such a step from its bind function (native.h:
 * el_step_new copies its argument record and keeps the arrays it points into alive).
 * An exception raised by a step gets the attribute step_index (its position). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <structmember.h> /* T_OBJECT_EX, READONLY (Python 3.11) */
#include <string.h>

#include "native.h"

typedef struct {
    PyObject_HEAD
    el_step_fn fn;
    void *args;     /* owned copy of the argument record */
    PyObject *keep; /* what args points into */
} NativeStep;

static PyObject *run_native_step_fn; /* the module's run_native_step, the marker */

static void step_dealloc(NativeStep *s)
{
    PyObject_GC_UnTrack(s);
    Py_CLEAR(s->keep);
    PyMem_RawFree(s->args);
    PyObject_GC_Del(s);
}

static int step_traverse(NativeStep *s, visitproc visit, void *arg)
{
    Py_VISIT(s->keep);
    return 0;
}

static PyObject *step_failed(Py_ssize_t code)
{
    PyErr_Format(PyExc_RuntimeError, "native step failed (code %zd)", code);
    return NULL;
}

PyObject *el_step_run(el_step_fn fn, void *args)
{
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = fn(args);
    Py_END_ALLOW_THREADS
    if (rc) return step_failed(rc);
    Py_RETURN_NONE;
}

static PyObject *step_call(NativeStep *s, PyObject *args, PyObject *kw)
{
    (void)args; (void)kw;
    return el_step_run(s->fn, s->args);
}

/* step.keep: what the step's C record points into (read-only; e.g. for memory accounting) */
static PyMemberDef step_members[] = {
    {"keep", T_OBJECT_EX, offsetof(NativeStep, keep), READONLY,
     "the objects (arrays, argument tuple) the bound C record points into"},
    {NULL},
};

static PyTypeObject NativeStepType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "edgelite.interpreter._native.NativeStep",
    .tp_basicsize = sizeof(NativeStep),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A C kernel with its arguments bound; calling it runs it (GIL released).",
    .tp_dealloc = (destructor)step_dealloc,
    .tp_traverse = (traverseproc)step_traverse,
    .tp_call = (ternaryfunc)step_call,
    .tp_members = step_members,
};

PyObject *el_step_new(el_step_fn fn, const void *args, size_t size, PyObject *keep)
{
    NativeStep *s = PyObject_GC_New(NativeStep, &NativeStepType);
    if (!s) return NULL;
    s->fn = fn;
    s->keep = Py_XNewRef(keep);
    s->args = PyMem_RawMalloc(size ? size : 1);
    if (!s->args) {
        s->fn = NULL;
        PyObject_GC_Track(s);
        Py_DECREF(s);
        return PyErr_NoMemory();
    }
    memcpy(s->args, args, size);
    PyObject_GC_Track(s);
    return (PyObject *)s;
}

/* ---------------------------------------------------------------- the loop */

static void mark_step(Py_ssize_t index)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value) {
        PyObject *i = PyLong_FromSsize_t(index);
        if (!i || PyObject_SetAttrString(value, "step_index", i) < 0) PyErr_Clear();
        Py_XDECREF(i);
    }
    if (tb && value) PyException_SetTraceback(value, tb);
    PyErr_Restore(type, value, tb);
}

static int is_native(PyObject *fn, PyObject *record)
{
    return fn == run_native_step_fn && Py_IS_TYPE(record, &NativeStepType);
}

static PyObject *run_steps(PyObject *self, PyObject *seq)
{
    (void)self;
    PyObject *fast = PySequence_Fast(seq, "run_steps: steps must be a sequence");
    if (!fast) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *step = items[i];
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 4) {
            PyErr_SetString(PyExc_TypeError,
                            "run_steps: a step is a tuple (eval, record, inputs, outputs)");
            mark_step(i);
            Py_DECREF(fast);
            return NULL;
        }
        PyObject **parts = &PyTuple_GET_ITEM(step, 0);
        if (is_native(parts[0], parts[1])) {
            /* this step and the native steps after it, without the GIL */
            Py_ssize_t j = i, rc = 0;
            Py_BEGIN_ALLOW_THREADS
            for (; j < n; j++) {
                PyObject *t = items[j];
                if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 4
                    || !is_native(PyTuple_GET_ITEM(t, 0), PyTuple_GET_ITEM(t, 1)))
                    break;
                NativeStep *s = (NativeStep *)PyTuple_GET_ITEM(t, 1);
                rc = s->fn(s->args);
                if (rc) break;
            }
            Py_END_ALLOW_THREADS
            if (rc) {
                step_failed(rc);
                mark_step(j);
                Py_DECREF(fast);
                return NULL;
            }
            i = j - 1;
            continue;
        }
        PyObject *result = PyObject_Vectorcall(parts[0], parts + 1, 3, NULL);
        if (!result) {
            mark_step(i);
            Py_DECREF(fast);
            return NULL;
        }
        Py_DECREF(result);
    }
    Py_DECREF(fast);
    Py_RETURN_NONE;
}

static PyObject *run_native_step(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 3 || !Py_IS_TYPE(args[0], &NativeStepType)) {
        PyErr_SetString(PyExc_TypeError, "run_native_step(step, inputs, outputs)");
        return NULL;
    }
    return step_call((NativeStep *)args[0], NULL, NULL);
}

/* ---------------------------------------------------------------- copy step */

struct el_copy { const void *src; void *dst; size_t nbytes; };

static int copy_run(void *args)
{
    const struct el_copy *c = args;
    memmove(c->dst, c->src, c->nbytes);
    return 0;
}

static PyObject *copy_step(PyObject *self, PyObject *args)
{
    PyObject *source, *target;
    (void)self;
    if (!PyArg_ParseTuple(args, "OO", &source, &target)) return NULL;
    Py_buffer src, dst;
    if (PyObject_GetBuffer(source, &src, PyBUF_C_CONTIGUOUS) < 0) return NULL;
    if (PyObject_GetBuffer(target, &dst, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&src);
        return NULL;
    }
    PyObject *result = NULL;
    if (src.len != dst.len) {
        PyErr_Format(PyExc_ValueError, "copy_step: %zd bytes into %zd", src.len, dst.len);
    } else {
        struct el_copy c = {src.buf, dst.buf, (size_t)src.len};
        PyObject *keep = PyTuple_Pack(2, source, target);
        if (keep) {
            PyObject *step = el_step_new(copy_run, &c, sizeof c, keep);
            Py_DECREF(keep);
            if (step) {
                result = PyTuple_Pack(4, run_native_step_fn, step, Py_None, Py_None);
                Py_DECREF(step);
            }
        }
    }
    PyBuffer_Release(&src);
    PyBuffer_Release(&dst);
    return result;
}

static PyMethodDef runloop_methods[] = {
    {"run_steps", run_steps, METH_O,
     "run_steps(steps): call eval(record, inputs, outputs) for each step in order; "
     "native steps run in C without the GIL"},
    {"run_native_step", (PyCFunction)(void (*)(void))run_native_step, METH_FASTCALL,
     "run_native_step(step, inputs, outputs): run a NativeStep (the eval of its step tuple)"},
    {"copy_step", copy_step, METH_VARARGS,
     "copy_step(source, target): the step tuple copying source's bytes into target"},
    {NULL, NULL, 0, NULL},
};

int el_runloop_add(PyObject *module)
{
    if (PyType_Ready(&NativeStepType) < 0) return -1;
    if (PyModule_AddFunctions(module, runloop_methods) < 0) return -1;
    run_native_step_fn = PyObject_GetAttrString(module, "run_native_step");
    if (!run_native_step_fn) return -1;
    Py_INCREF(&NativeStepType);
    if (PyModule_AddObject(module, "NativeStep", (PyObject *)&NativeStepType) < 0) {
        Py_DECREF(&NativeStepType);
        return -1;
    }
    return 0;
}
