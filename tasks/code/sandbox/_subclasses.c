/* What `type.__subclasses__()` shows the jail's candidate (untrusted side).
 *
 * Why: the jail is forked from the fork server, so every class the server made or imported is
 * alive in it: the server's own (`__main__._Server`), the sandbox modules' (`_jail`, `_wire`,
 * `_seccomp`, `_cgroup`) and those of the modules it uses (`socket`, `selectors`, `select`,
 * `array`). Walking `object.__subclasses__()` found them from pure Python with no audit event: a
 * tell of the jail in both runs, which differential execution cannot catch. `hide(keep)` takes
 * every class but those of `keep` (the ids of the classes a plain python3 holds when its program
 * starts, measured by the fork server before its own imports) out of its bases' lists of
 * subclasses, so the walk finds what it finds in a plain python3; a module the candidate imports
 * is a fresh import (the jail cuts `sys.modules` back too), with classes of its own.
 *
 * Hidden classes work as before for whoever holds them (the jail's own code); only changes made
 * to one of their bases later no longer reach them, and no candidate holds one to see that.
 * CPython 3.11 keeps each type's subclasses in its `tp_subclasses` dict ({id: weak reference});
 * removing a subclass's entry is what CPython itself does when that subclass is freed.
 *
 * `hide` works once per process.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000
#error "_subclasses.c reads CPython 3.11's tp_subclasses; 3.12 keeps static types' subclasses elsewhere"
#endif

static int hidden_once;

/* Every class reachable from `object` through the lists of subclasses, each once. */
static PyObject *every_class(void) {
    PyObject *found = PyList_New(0), *seen = PySet_New(NULL);
    if (found == NULL || seen == NULL) goto fail;
    if (PyList_Append(found, (PyObject *)&PyBaseObject_Type) < 0) goto fail;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(found); i++) {
        PyTypeObject *type = (PyTypeObject *)PyList_GET_ITEM(found, i);
        PyObject *subclasses = type->tp_subclasses;
        if (subclasses == NULL || !PyDict_Check(subclasses)) continue;
        Py_ssize_t at = 0;
        PyObject *key, *reference;
        while (PyDict_Next(subclasses, &at, &key, &reference)) {
            PyObject *subclass = PyWeakref_GET_OBJECT(reference);
            if (subclass == Py_None || !PyType_Check(subclass)) continue;
            int known = PySet_Contains(seen, key);
            if (known < 0) goto fail;
            if (known) continue;
            if (PySet_Add(seen, key) < 0 || PyList_Append(found, subclass) < 0) goto fail;
        }
    }
    Py_DECREF(seen);
    return found;
fail:
    Py_XDECREF(found);
    Py_XDECREF(seen);
    return NULL;
}

/* hide(keep): take every class whose id is not in `keep` out of its bases' lists of subclasses;
 * the number of classes hidden. */
static PyObject *s_hide(PyObject *self, PyObject *keep) {
    if (!PyAnySet_Check(keep)) {
        PyErr_SetString(PyExc_TypeError, "hide(keep): keep is a set of class ids");
        return NULL;
    }
    if (hidden_once) {
        PyErr_SetString(PyExc_PermissionError, "the classes were hidden once");
        return NULL;
    }
    hidden_once = 1;
    PyObject *classes = every_class();
    if (classes == NULL) return NULL;
    long hidden = 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(classes); i++) {
        PyTypeObject *type = (PyTypeObject *)PyList_GET_ITEM(classes, i);
        PyObject *key = PyLong_FromVoidPtr(type);
        if (key == NULL) goto fail;
        int kept = PySet_Contains(keep, key);
        if (kept < 0) {
            Py_DECREF(key);
            goto fail;
        }
        if (!kept) {
            PyObject *bases = type->tp_bases;
            for (Py_ssize_t b = 0; bases != NULL && b < PyTuple_GET_SIZE(bases); b++) {
                PyObject *listed = ((PyTypeObject *)PyTuple_GET_ITEM(bases, b))->tp_subclasses;
                if (listed != NULL && PyDict_Check(listed) && PyDict_DelItem(listed, key) < 0) PyErr_Clear();
            }
            hidden++;
        }
        Py_DECREF(key);
    }
    Py_DECREF(classes);
    return PyLong_FromLong(hidden);
fail:
    Py_DECREF(classes);
    return NULL;
}

static PyMethodDef methods[] = {
    {"hide", s_hide, METH_O, "hide(keep): hide every class whose id is not in keep from type.__subclasses__(), once"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_subclasses", NULL, -1, methods};

PyMODINIT_FUNC PyInit__subclasses(void) { return PyModule_Create(&module); }
