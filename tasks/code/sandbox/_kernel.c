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
 * Each returns what the system call returns (-1 on failure), as libc does, so the Python call
 * sites read as the C they stand for.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

static int sealed;

#define REFUSE_IF_SEALED()                                                          \
    if (sealed) {                                                                   \
        PyErr_SetString(PyExc_PermissionError, "the jail's kernel calls are sealed"); \
        return NULL;                                                                \
    }

static PyObject *result(long value) { return PyLong_FromLong(value); }

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

/* The jail's fork, made by a thread of its own that has no Python frame (docs/sandbox.md, "The
 * stack"). The thread takes the GIL (a thread state of its own, which `_thread._count()` does not
 * count, as it counts only threads `_thread` started), forks with CPython's fork protocol, and in
 * the child, where it is the only thread and so the main one, CPython runs the after-fork
 * callbacks registered before: the jail's life, which ends in os._exit. In the parent the thread
 * then waits for the child and notes its status: it lives as long as the child, whose
 * parent-death signal is tied to the thread that forked it. One such child per process at a time
 * (the jail's shell has one). */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int go, forked, exited, error, status;
    pid_t pid;
} bare = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

static int write_last_pid(long pid) {
    char text[32];
    int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int length = snprintf(text, sizeof text, "%ld", pid);
    int written = (int)write(fd, text, (size_t)length);
    close(fd);
    return written == length ? 0 : -1;
}

static void *bare_thread(void *unused) {
    pthread_mutex_lock(&bare.lock);
    while (!bare.go) pthread_cond_wait(&bare.changed, &bare.lock);
    pthread_mutex_unlock(&bare.lock);
    PyGILState_STATE gil = PyGILState_Ensure();
    PyOS_BeforeFork();
    pid_t pid = fork();
    if (pid == 0) {
        PyOS_AfterFork_Child(); /* the jail's life: it ends in os._exit */
        _exit(70);
    }
    int error = errno;
    PyOS_AfterFork_Parent();
    PyGILState_Release(gil);
    pthread_mutex_lock(&bare.lock);
    bare.pid = pid, bare.error = error, bare.forked = 1;
    pthread_cond_broadcast(&bare.changed);
    pthread_mutex_unlock(&bare.lock);
    if (pid < 0) return NULL;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pthread_mutex_lock(&bare.lock);
    bare.status = status, bare.exited = 1;
    pthread_cond_broadcast(&bare.changed);
    pthread_mutex_unlock(&bare.lock);
    return NULL;
}

/* bare_fork(thread_pid, child_pid): fork the child (after-fork callbacks registered), return its
 * pid. With positive pids, and the right to set the PID namespace's next pid, the forking thread
 * gets an id from `thread_pid` on and the child `child_pid`. */
static PyObject *k_bare_fork(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    long thread_pid = 0, child_pid = 0;
    if (!PyArg_ParseTuple(args, "|ll", &thread_pid, &child_pid)) return NULL;
    if (bare.go) {
        PyErr_SetString(PyExc_RuntimeError, "bare_fork: one child per process");
        return NULL;
    }
    pthread_t thread;
    int placed = thread_pid > 0 && child_pid > 0 && write_last_pid(thread_pid - 1) == 0;
    int error = pthread_create(&thread, NULL, bare_thread, NULL);
    if (error != 0) {
        errno = error;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    pthread_detach(thread);
    Py_BEGIN_ALLOW_THREADS
    if (placed) write_last_pid(child_pid - 1);
    pthread_mutex_lock(&bare.lock);
    bare.go = 1;
    pthread_cond_broadcast(&bare.changed);
    while (!bare.forked) pthread_cond_wait(&bare.changed, &bare.lock);
    pthread_mutex_unlock(&bare.lock);
    Py_END_ALLOW_THREADS
    if (bare.pid < 0) {
        errno = bare.error;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromLong(bare.pid);
}

/* bare_wait(): the wait status of the child `bare_fork` made, once it has exited. */
static PyObject *k_bare_wait(PyObject *self, PyObject *args) {
    REFUSE_IF_SEALED();
    if (!bare.forked || bare.pid < 0) {
        PyErr_SetString(PyExc_RuntimeError, "bare_wait: no child");
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&bare.lock);
    while (!bare.exited) pthread_cond_wait(&bare.changed, &bare.lock);
    pthread_mutex_unlock(&bare.lock);
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(bare.status);
}

static PyMethodDef methods[] = {
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
    {"bare_fork", k_bare_fork, METH_VARARGS, "bare_fork(thread_pid, child_pid): fork from a thread with no Python frame"},
    {"bare_wait", k_bare_wait, METH_NOARGS, "bare_wait(): the wait status of bare_fork's child"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernel", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernel(void) { return PyModule_Create(&module); }
