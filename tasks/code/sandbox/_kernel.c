/* The few kernel calls the jail's set-up makes that Python's `os` module lacks (untrusted side).
 *
 * Why a C module and not ctypes: the jail is forked from the fork server, so whatever the server
 * has loaded, the candidate has in its memory too. With ctypes there, the candidate reached native
 * code from pure Python (`object.__subclasses__()` lists ctypes' types, a frame's `f_back` the
 * jail's `libc`): it could read and write any address, silence the audit hook and make any system
 * call the seccomp filter lets through. This module offers exactly the calls below, each with
 * arguments that are Python integers and bytes, never addresses: reached by the candidate, after
 * the jail has dropped its privileges and loaded its filter, every one of them fails or only
 * narrows what the jail may do (a Landlock layer or a seccomp filter more).
 *
 * And the jail seals the module (`seal()`) once its set-up is done, before any candidate code:
 * from then on every call here raises PermissionError, so nothing is left for a candidate that
 * reaches the module through the jail's frames.
 *
 * Each returns what the system call returns (-1 on failure) and leaves errno for `errno()`,
 * as libc does, so the Python call sites read as the C they stand for.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

static int last_errno;
static int sealed;

#define REFUSE_IF_SEALED()                                                          \
    if (sealed) {                                                                   \
        PyErr_SetString(PyExc_PermissionError, "the jail's kernel calls are sealed"); \
        return NULL;                                                                \
    }

static PyObject *result(long value) {
    last_errno = value < 0 ? errno : 0;
    return PyLong_FromLong(value);
}

/* A bytes argument that may be None: NULL then. */
static int optional_bytes(PyObject *object, const char **out) {
    if (object == Py_None) {
        *out = NULL;
        return 1;
    }
    if (!PyBytes_Check(object)) {
        PyErr_SetString(PyExc_TypeError, "expected bytes or None");
        return 0;
    }
    *out = PyBytes_AS_STRING(object);
    return 1;
}

static PyObject *k_errno(PyObject *self, PyObject *args) { return PyLong_FromLong(last_errno); }

static PyObject *k_seal(PyObject *self, PyObject *args) {
    sealed = 1;
    Py_RETURN_NONE;
}

static PyObject *k_unshare(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    int flags;
    if (!PyArg_ParseTuple(args, "i", &flags)) return NULL;
    return result(unshare(flags));
}

static PyObject *k_setns(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    int fd, kind;
    if (!PyArg_ParseTuple(args, "ii", &fd, &kind)) return NULL;
    return result(setns(fd, kind));
}

static PyObject *k_mount(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    PyObject *source, *target, *kind, *data;
    unsigned long flags;
    const char *source_s, *target_s, *kind_s, *data_s;
    if (!PyArg_ParseTuple(args, "OOOkO", &source, &target, &kind, &flags, &data)) return NULL;
    if (!optional_bytes(source, &source_s) || !optional_bytes(target, &target_s) || !optional_bytes(kind, &kind_s) ||
        !optional_bytes(data, &data_s))
        return NULL;
    if (target_s == NULL) {
        PyErr_SetString(PyExc_TypeError, "mount: the target is required");
        return NULL;
    }
    return result(mount(source_s, target_s, kind_s, flags, data_s));
}

static PyObject *k_umount2(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    const char *target;
    int flags;
    if (!PyArg_ParseTuple(args, "yi", &target, &flags)) return NULL;
    return result(umount2(target, flags));
}

static PyObject *k_pivot_root(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    const char *new_root, *put_old;
    if (!PyArg_ParseTuple(args, "yy", &new_root, &put_old)) return NULL;
    return result(syscall(SYS_pivot_root, new_root, put_old));
}

/* prctl with integer arguments only; the options that take a pointer are refused here, so no
 * caller can hand the kernel an address (PR_SET_SECCOMP has `seccomp_filter` below). */
static PyObject *k_prctl(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    int option;
    unsigned long a2 = 0, a3 = 0, a4 = 0, a5 = 0;
    if (!PyArg_ParseTuple(args, "i|kkkk", &option, &a2, &a3, &a4, &a5)) return NULL;
    switch (option) {
    case PR_SET_PDEATHSIG:
    case PR_SET_DUMPABLE:
    case PR_CAPBSET_DROP:
    case PR_SET_NO_NEW_PRIVS:
        return result(prctl(option, a2, a3, a4, a5));
    default:
        PyErr_Format(PyExc_ValueError, "prctl: option %d is not one the jail uses", option);
        return NULL;
    }
}

static PyObject *k_mallopt(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    int parameter, value;
    if (!PyArg_ParseTuple(args, "ii", &parameter, &value)) return NULL;
    return PyLong_FromLong(mallopt(parameter, value));
}

/* landlock_create_ruleset(attr, flags): `attr` is the packed struct landlock_ruleset_attr (its
 * length is the size passed), or None with flags LANDLOCK_CREATE_RULESET_VERSION. */
static PyObject *k_landlock_create_ruleset(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    PyObject *attr;
    unsigned int flags;
    const char *attr_s;
    if (!PyArg_ParseTuple(args, "OI", &attr, &flags) || !optional_bytes(attr, &attr_s)) return NULL;
    return result(syscall(SYS_landlock_create_ruleset, attr_s, attr_s ? (size_t)PyBytes_GET_SIZE(attr) : 0, flags));
}

static PyObject *k_landlock_add_rule(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    int ruleset, kind;
    const char *attr;
    Py_ssize_t size;
    unsigned int flags;
    if (!PyArg_ParseTuple(args, "iiy#I", &ruleset, &kind, &attr, &size, &flags)) return NULL;
    if (size < 12) {
        PyErr_SetString(PyExc_ValueError, "landlock_add_rule: the rule is shorter than struct landlock_path_beneath_attr");
        return NULL;
    }
    return result(syscall(SYS_landlock_add_rule, ruleset, kind, attr, flags));
}

static PyObject *k_landlock_restrict_self(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    int ruleset;
    unsigned int flags;
    if (!PyArg_ParseTuple(args, "iI", &ruleset, &flags)) return NULL;
    return result(syscall(SYS_landlock_restrict_self, ruleset, flags));
}

/* Load a classic BPF program (packed struct sock_filter entries) as this process's seccomp
 * filter, after no_new_privs (which the kernel requires of an unprivileged caller). */
static PyObject *k_seccomp_filter(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    const char *program;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "y#", &program, &size)) return NULL;
    if (size == 0 || size % sizeof(struct sock_filter) != 0 || size / sizeof(struct sock_filter) > BPF_MAXINSNS) {
        PyErr_SetString(PyExc_ValueError, "seccomp_filter: not a whole BPF program");
        return NULL;
    }
    struct sock_fprog fprog = {(unsigned short)(size / sizeof(struct sock_filter)), (struct sock_filter *)program};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return result(-1);
    return result(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0));
}

static PyMethodDef methods[] = {
    {"errno", k_errno, METH_NOARGS, "errno of the last failed call here (0 after a success)."},
    {"seal", k_seal, METH_NOARGS, "seal(): every other call here raises PermissionError from now on."},
    {"unshare", k_unshare, METH_VARARGS, "unshare(flags)"},
    {"setns", k_setns, METH_VARARGS, "setns(fd, nstype)"},
    {"mount", k_mount, METH_VARARGS, "mount(source, target, fstype, flags, data): bytes or None"},
    {"umount2", k_umount2, METH_VARARGS, "umount2(target, flags)"},
    {"pivot_root", k_pivot_root, METH_VARARGS, "pivot_root(new_root, put_old)"},
    {"prctl", k_prctl, METH_VARARGS, "prctl(option, ...): the integer options the jail uses only"},
    {"mallopt", k_mallopt, METH_VARARGS, "mallopt(parameter, value)"},
    {"landlock_create_ruleset", k_landlock_create_ruleset, METH_VARARGS, "landlock_create_ruleset(attr, flags)"},
    {"landlock_add_rule", k_landlock_add_rule, METH_VARARGS, "landlock_add_rule(ruleset, type, attr, flags)"},
    {"landlock_restrict_self", k_landlock_restrict_self, METH_VARARGS, "landlock_restrict_self(ruleset, flags)"},
    {"seccomp_filter", k_seccomp_filter, METH_VARARGS, "seccomp_filter(program): load a BPF program"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
