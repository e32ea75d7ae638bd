/* The jail's audit gate (untrusted side): the one audit hook the jail adds, in C.
 *
 * Why C: CPython calls every audit hook on every audited operation, and a hook that is a Python
 * function costs microseconds a call. With the jail's judge (`_hook.py`) added as one, a cheap
 * audited call (`sys._getframe()`, `id()`, a function's `__code__`) took about 100 times as long
 * as in a plain python3, a tell any program could time against an unaudited call of the same
 * shape (red team sandbox5 `w3`), and honest code that makes many such calls ran that much slower.
 *
 * The gate settles in C every event the judge would let pass without a record: the events it does
 * not judge at all, and the common harmless cases of those it does (a frame that is not the
 * sandbox's, a path inside the jail's own directories, a signal to itself, a socketpair's end,
 * `sys.settrace(None)`). Only the rest, rare and mostly refused, reaches the Python judge,
 * noted first in `pending` (see `_hook.make_hook`: a judgement a signal handler stops at the
 * Python hook's entry is found at the next seal). Each fast path here passes only what the judge
 * itself would pass; `tests/tasks/code/test_gate.py` holds the two side by side.
 *
 * What stays is CPython's own cost of there being a hook at all: it builds the event's argument
 * tuple and makes one C call, tens of nanoseconds (docs/sandbox.md, "What it still shows").
 *
 * `install` works once per process and only in a process that has no hook of its own yet; the
 * gate holds the only references to the judge and its state.
 *
 * No candidate code runs under the sandbox's frames either (`shielded`, and the judge's call
 * here), as CPython would run it on its own:
 * - Signal handlers. CPython runs a Python handler on the main thread at its next check, whichever
 *   thread the kernel delivered the signal to, so holding signals back on the main thread is not
 *   enough. While the main thread runs the judge or the jail's code, every signal with a Python
 *   handler has a C handler that only notes it; the handlers already due then run, in the
 *   candidate's frame or none; after, CPython's own handlers are back and each noted signal is
 *   handed to them, so its Python handler runs at the next check, in the caller's or the
 *   candidate's frame. `signal.getsignal` still reads the candidate's handlers: only the kernel's
 *   action changed, which no Python call reads.
 * - The collector's finalizers and `gc.callbacks`: the collector is held off while any thread runs
 *   the judge or the jail's code, and `gc.enable`/`disable`/`isenabled` keep the candidate's
 *   choice, applied once nothing holds it.
 * - And `catching` keeps the exception that ends the program's load, from C.
 *
 * Nor does the candidate see the sandbox's Python code run: faulthandler's dumps and tracemalloc's
 * traces, which read the frames of every thread with no audit event, are routed through wrappers
 * (`ROUTES`), and the recursion depth the candidate has left is a plain python3's
 * (`unstacked`, and the judge's headroom, `JUDGE_HEADROOM`).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* A frame's fast locals, read in place (`frame_local`): CPython 3.11's frame layout. */
#define Py_BUILD_CORE
#include "internal/pycore_frame.h"
#include "opcode.h"
#undef Py_BUILD_CORE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* Event names are looked up in an open-addressed table of FNV-1a hashes: a few nanoseconds for
 * the names nothing judges, which are almost all of them. */
#define TABLE_SIZE 256
#define MAX_NAMES 128
#define MAX_PREFIXES 8
#define MAX_INSIDE 8

enum verdict { PASS = 0, JUDGE };
enum fast {
    FAST_NONE = 0, FAST_GETFRAME, FAST_GETATTR, FAST_SETATTR, FAST_OPEN, FAST_KILL, FAST_PTHREAD_KILL,
    FAST_SOCKET_NEW, FAST_HOSTNAME, FAST_FILE_CHANGE, FAST_NO_TRACE, FAST_FLOCK, FAST_LOCKF, FAST_FCNTL, FAST_OS_LOCKF,
};

typedef struct {
    const char *name; /* owned copy, NULL when the slot is empty */
    enum fast fast;
    unsigned paths, dir_fds; /* FAST_FILE_CHANGE: the positions of its arguments that are paths, and directory descriptors */
} slot;

static struct {
    int installed;
    PyObject *judge;      /* the Python hook: judge(name, args) */
    PyObject *pending;    /* dict: event name -> its arguments' address, noted before the judge is called */
    PyObject *namespaces; /* tuple of the sandbox's module namespaces, told by identity */
    PyObject *sandbox_dir;   /* str ending in "/": code compiled from there is the sandbox's */
    long pid;
    slot table[TABLE_SIZE];
    char *prefixes[MAX_PREFIXES];
    int n_prefixes;
    char *inside[MAX_INSIDE]; /* real paths of the jail's own directories, without a final "/" */
    size_t inside_len[MAX_INSIDE];
    int n_inside;
    char first_chars[256]; /* the first characters of the judged names and prefixes */
} gate;

/* `sys.settrace(None)` and `sys.setprofile(None)` change nothing where no trace can be set (the
 * judge refuses any other), and doctest's run makes the first to restore the trace it found
 * absent. The audit event carries no argument, so the gate reads it: `install` has these two
 * functions of `sys` call the wrappers below (their method definitions' C function, so every
 * reference to them, wherever the candidate took it, is the same object), which note a None for
 * the gate to pass. The judge had told doctest's call by its frame, and a candidate's C callable
 * run under that frame set a tracer (red team sandbox7 `d1`). */
static PyCFunction real_settrace, real_setprofile;
static int setting_none;

static PyObject *settrace_noted(PyObject *self, PyObject *function) {
    setting_none += function == Py_None;
    PyObject *result = real_settrace(self, function);
    setting_none -= function == Py_None;
    return result;
}

static PyObject *setprofile_noted(PyObject *self, PyObject *function) {
    setting_none += function == Py_None;
    PyObject *result = real_setprofile(self, function);
    setting_none -= function == Py_None;
    return result;
}

/* Have `function` (a C function of METH_O or METH_NOARGS, as `flags` says) call `wrapper`,
 * keeping its own C function in `*real`. */
static int route_function(PyObject *function, int flags, PyCFunction wrapper, PyCFunction *real) {
    if (function == NULL || !PyCFunction_Check(function) || PyCFunction_GET_FLAGS(function) != flags) {
        PyErr_SetString(PyExc_RuntimeError, "install: a function to wrap is not the interpreter's own");
        return -1;
    }
    PyMethodDef *definition = ((PyCFunctionObject *)function)->m_ml;
    *real = definition->ml_meth;
    definition->ml_meth = wrapper;
    return 0;
}

/* The collector is off while the judge or the jail's own code runs, on any thread (a collection
 * their allocations set off would run the candidate's finalizers and `gc.callbacks` on their
 * frames). `gc.enable()` from another thread of the candidate's meanwhile (the judge lets the GIL
 * go in its system calls and at the eval loop's switch interval) turned it back on under them (red
 * team sandbox9 `g1`, `g2`: a `__del__` ran in the judge's frame, reached its state and removed
 * the audit hook). So `gc.enable`, `gc.disable` and `gc.isenabled` keep the candidate's choice
 * (`wanted`) and apply it only once no judgement holds the collector. */
static int collector_wanted = 1, collector_holds;

static PyObject *gc_enable_kept(PyObject *self, PyObject *unused) {
    collector_wanted = 1;
    if (collector_holds == 0) PyGC_Enable();
    Py_RETURN_NONE;
}

static PyObject *gc_disable_kept(PyObject *self, PyObject *unused) {
    collector_wanted = 0;
    if (collector_holds == 0) PyGC_Disable();
    Py_RETURN_NONE;
}

static PyObject *gc_isenabled_kept(PyObject *self, PyObject *unused) { return PyBool_FromLong(collector_wanted); }

static PyCFunction real_gc_enable, real_gc_disable, real_gc_isenabled; /* replaced; the wrappers call PyGC_* */
/* `collector_holds` counts the threads in the judge or the jail's own code (each hold is one, made
 * and let go of with the GIL), so it is also what `dump_traceback_waiting` waits out; `own_holds`
 * are the calling thread's own among them. */
static _Thread_local int own_holds;
static int dumps_waiting; /* `dump_traceback` calls waiting for the holds to end */

static void hold_collector(void) {
    /* No thread starts a judgement or the jail's code while a dump waits for those under way to
     * end (red team sandbox10 `d1`: with eight threads of an honest program reading library files,
     * one was almost always being judged, and a dump waited 58 s). One already inside goes on. */
    while (own_holds == 0 && dumps_waiting > 0) {
        Py_BEGIN_ALLOW_THREADS usleep(20);
        Py_END_ALLOW_THREADS
    }
    own_holds++;
    if (collector_holds++ == 0) PyGC_Disable();
}

static void release_collector(void) {
    own_holds--;
    if (--collector_holds == 0 && collector_wanted) PyGC_Enable();
}

/* What would show the sandbox's own Python code to the candidate: its judge's and its jail's frames
 * on the stack of a thread that runs them, which CPython reads for faulthandler's dumps and for
 * tracemalloc's traces with no audit event (red team sandbox7 `f2`: threads of the candidate's that
 * dumped every thread's stack in a loop got the GIL while the main thread ran the jail's code
 * between calls, and the dump named `_jail.py`, `_wire.py`, `_hook.py`).
 *
 * - `faulthandler.dump_traceback` is made while the caller holds the GIL, so it waits until no other
 *   thread is in the judge or the jail's code, the GIL let go meanwhile, and then dumps at once: its
 *   file is resolved to a descriptor and its `all_threads` read before the wait (faulthandler calls
 *   the file's `fileno()` and `flush()`, Python that could let the GIL go again), so nothing runs
 *   between the last check and the dump.
 *   While one waits, no thread starts a judgement or the jail's code (`hold_collector`).
 * - Those that dump at an instant the candidate picks, from another thread or a signal handler and
 *   without the GIL (`dump_traceback_later`, `register`, and `enable`'s handler of a fatal signal
 *   the candidate sends itself), and tracemalloc's `start` raise an event of their own name first,
 *   which the judge refuses and records (`_hook.OBSERVERS`). `enable` was allowed as the process's
 *   last act, but its dump is a write to a file the candidate picks, and a pipe it keeps full
 *   blocked the dump, and so the death, while the main thread read the dump (red team sandbox10
 *   `f1`: the judge's frames, from threads caught inside it). */
typedef PyObject *(*keywords_function)(PyObject *, PyObject *, PyObject *);
typedef PyObject *(*fast_function)(PyObject *, PyObject *const *, Py_ssize_t);
static keywords_function real_dump_traceback, real_dump_later, real_register, real_enable;
static fast_function real_tracemalloc_start;

/* The descriptor of faulthandler's `file` argument, as faulthandler resolves it (its own error
 * messages); `*held` is the object to keep alive, or NULL for a number. -1 with an exception. */
static int file_descriptor(PyObject *file, PyObject **held) {
    *held = NULL;
    if (file == NULL || file == Py_None) {
        file = PySys_GetObject("stderr");
        if (file == NULL || file == Py_None) {
            PyErr_SetString(PyExc_RuntimeError, file == NULL ? "unable to get sys.stderr" : "sys.stderr is None");
            return -1;
        }
    } else if (PyLong_Check(file)) {
        int fd = _PyLong_AsInt(file);
        if (fd == -1 && PyErr_Occurred()) return -1;
        if (fd < 0) {
            PyErr_SetString(PyExc_ValueError, "file is not a valid file descripter");
            return -1;
        }
        return fd;
    }
    PyObject *number = PyObject_CallMethod(file, "fileno", NULL);
    if (number == NULL) return -1;
    long fd = PyLong_Check(number) ? PyLong_AsLong(number) : -1;
    Py_DECREF(number);
    if (fd < 0 || fd >= INT_MAX) {
        PyErr_Clear();
        PyErr_SetString(PyExc_RuntimeError, "file.fileno() is not a valid file descriptor");
        return -1;
    }
    PyObject *flushed = PyObject_CallMethod(file, "flush", NULL);
    if (flushed == NULL) PyErr_Clear(); /* as faulthandler: a failing flush() is ignored */
    Py_XDECREF(flushed);
    *held = file;
    return (int)fd;
}

static PyObject *dump_traceback_waiting(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"file", "all_threads", NULL};
    PyObject *file = NULL, *held;
    int all_threads = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|Op:dump_traceback", keywords, &file, &all_threads)) return NULL;
    int fd = file_descriptor(file, &held);
    if (fd < 0) return NULL;
    PyObject *resolved = Py_BuildValue("(iO)", fd, all_threads ? Py_True : Py_False);
    if (resolved == NULL) return NULL;
    Py_XINCREF(held); /* the file stays open through the wait */
    dumps_waiting++;
    while (collector_holds > own_holds) {
        Py_BEGIN_ALLOW_THREADS usleep(20);
        Py_END_ALLOW_THREADS
    }
    PyObject *returned = real_dump_traceback(self, resolved, NULL);
    dumps_waiting--;
    Py_DECREF(resolved);
    Py_XDECREF(held);
    return returned;
}

/* What creates a file system entry and raises no event naming where: CPython's `os.open` event names
 * no `dir_fd` (a write relative to a descriptor of a library directory was judged against the
 * working directory: red team sandbox13 `r3`), and `os.mkfifo` and `os.mknod` raise none. Each
 * wrapper raises one the judge decides on, with the path and the descriptor as given (-1 for none),
 * before the call itself. */
typedef PyObject *(*fast_keywords_function)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
static fast_keywords_function real_open, real_mkfifo, real_mknod;

/* Where in `args` the argument at `position` or named `name` is; -1 where it was not given. */
static Py_ssize_t slot_of(Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t position, const char *name) {
    if (position >= 0 && position < nargs) return position;
    for (Py_ssize_t i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++)
        if (PyUnicode_Check(PyTuple_GET_ITEM(kwnames, i)) && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), name) == 0)
            return nargs + i;
    return -1;
}

static PyObject *argument(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, Py_ssize_t position, const char *name) {
    Py_ssize_t slot = slot_of(nargs, kwnames, position, name);
    return slot < 0 ? NULL : args[slot];
}

/* Calls `real` with the path argument as the judge read it: a PathLike's `__fspath__` called once,
 * here, and what it gave handed to the call, as CPython's own conversion would (a second call could
 * give another path than the one judged: red team sandbox14 `r2` had the wrappers raise the
 * PathLike itself, which the judge cannot read). Anything else is handed on as it is: a str or bytes
 * (or a subclass: its characters cannot change, and the judge reads them), or what the call rejects,
 * or a buffer, which the judge counts as outside. */
static PyObject *fspath_name;

static PyObject *with_plain_path(fast_keywords_function real, const char *event, PyObject *module, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames, PyObject *second, PyObject *descriptor) {
    Py_ssize_t slot = slot_of(nargs, kwnames, 0, "path");
    if (slot < 0) return real(module, args, nargs, kwnames); /* the call's own error */
    PyObject *given = args[slot];
    /* In the order CPython's path converter tries them: a buffer is read as bytes, never through
     * `__fspath__` (red team sandbox15 `t3`: a bytearray subclass's was called, which CPython's never is). */
    int path_like = !PyUnicode_Check(given) && !PyBytes_Check(given) && !PyObject_CheckBuffer(given) &&
                    _PyType_Lookup(Py_TYPE(given), fspath_name) != NULL;
    PyObject *path = path_like ? PyOS_FSPath(given) : Py_NewRef(given);
    if (path == NULL) return NULL;
    Py_ssize_t total = nargs + (kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames));
    PyObject **handed = PyMem_Malloc((size_t)(total > 0 ? total : 1) * sizeof(PyObject *));
    if (handed == NULL) {
        Py_DECREF(path);
        return PyErr_NoMemory();
    }
    memcpy(handed, args, (size_t)total * sizeof(PyObject *));
    handed[slot] = path;
    PyObject *returned = NULL;
    int audited = second != NULL ? PySys_Audit(event, "OOO", path, second, descriptor) : PySys_Audit(event, "OO", path, descriptor);
    if (audited == 0) returned = real(module, handed, nargs, kwnames);
    PyMem_Free(handed);
    Py_DECREF(path);
    return returned;
}

static PyObject *no_descriptor;

static PyObject *given_descriptor(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *dir_fd = argument(args, nargs, kwnames, -1, "dir_fd");
    return dir_fd == NULL || dir_fd == Py_None ? no_descriptor : dir_fd;
}

static PyObject *open_judged(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *flags = argument(args, nargs, kwnames, 1, "flags"), *dir_fd = given_descriptor(args, nargs, kwnames);
    if (dir_fd == no_descriptor || flags == NULL) return real_open(module, args, nargs, kwnames); /* its own event judges it */
    return with_plain_path(real_open, "sandbox.open_at", module, args, nargs, kwnames, flags, dir_fd);
}

#define MADE_JUDGED(wrapper, event, real)                                                                      \
    static PyObject *wrapper(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {    \
        return with_plain_path(real, event, module, args, nargs, kwnames, NULL, given_descriptor(args, nargs, kwnames)); \
    }
MADE_JUDGED(mkfifo_judged, "sandbox.mkfifo", real_mkfifo)
MADE_JUDGED(mknod_judged, "sandbox.mknod", real_mknod)

/* A wrapper that raises `event` (refused and recorded by the judge) before it calls `real`. */
#define REFUSED(wrapper, event, real, parameters, arguments)                      \
    static PyObject *wrapper parameters {                                         \
        if (PySys_Audit(event, NULL) < 0) return NULL;                            \
        return real arguments;                                                    \
    }
REFUSED(dump_later_refused, "faulthandler.dump_traceback_later", real_dump_later,
        (PyObject *self, PyObject *args, PyObject *kwargs), (self, args, kwargs))
REFUSED(register_refused, "faulthandler.register", real_register, (PyObject *self, PyObject *args, PyObject *kwargs),
        (self, args, kwargs))
REFUSED(enable_refused, "faulthandler.enable", real_enable, (PyObject *self, PyObject *args, PyObject *kwargs),
        (self, args, kwargs))
REFUSED(tracemalloc_start_refused, "tracemalloc.start", real_tracemalloc_start,
        (PyObject *self, PyObject *const *args, Py_ssize_t nargs), (self, args, nargs))

static unsigned long fnv(const char *text) {
    unsigned long hash = 1469598103934665603UL;
    for (; *text; text++) hash = (hash ^ (unsigned char)*text) * 1099511628211UL;
    return hash;
}

static slot *lookup(const char *name) {
    unsigned long at = fnv(name) % TABLE_SIZE;
    for (int probe = 0; probe < TABLE_SIZE; probe++, at = (at + 1) % TABLE_SIZE) {
        slot *here = &gate.table[at];
        if (here->name == NULL || strcmp(here->name, name) == 0) return here;
    }
    return NULL; /* full: never, MAX_NAMES < TABLE_SIZE */
}

static int judged_by_prefix(const char *event) {
    for (int i = 0; i < gate.n_prefixes; i++)
        if (strncmp(event, gate.prefixes[i], strlen(gate.prefixes[i])) == 0) return 1;
    return 0;
}

/* `globals` is one of the sandbox's module namespaces. */
static int sandbox_namespace(PyObject *globals) {
    Py_ssize_t n = PyTuple_GET_SIZE(gate.namespaces);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyTuple_GET_ITEM(gate.namespaces, i) == globals) return 1;
    return 0;
}

static int sandbox_frame(PyObject *object) {
    if (!PyFrame_Check(object)) return 0;
    PyObject *globals = PyFrame_GetGlobals((PyFrameObject *)object);
    int ours = sandbox_namespace(globals);
    Py_XDECREF(globals);
    return ours;
}

/* A path with no ".." component. */
static int no_parent_step(const char *path) {
    const char *part = path;
    while (*part) {
        const char *end = strchr(part, '/');
        size_t length = end ? (size_t)(end - part) : strlen(part);
        if (length == 2 && part[0] == '.' && part[1] == '.') return 0;
        if (!end) break;
        part = end + 1;
    }
    return 1;
}

static int below(const char *path, size_t path_len, int i) {
    size_t n = gate.inside_len[i];
    return path_len > n && strncmp(path, gate.inside[i], n) == 0 && path[n] == '/';
}

/* `object` is a str naming a path inside the jail's own directories without resolving anything:
 * no ".." step, and either absolute below one of them or relative to a working directory that is
 * one of them (or below). Symbolic links there point inside too: the judge refuses any other
 * (`os.symlink` is judged on both its paths). Anything else is left to the judge. */
static int plainly_inside(PyObject *object) {
    if (!PyUnicode_CheckExact(object)) return 0;
    Py_ssize_t size;
    const char *path = PyUnicode_AsUTF8AndSize(object, &size);
    if (path == NULL) {
        PyErr_Clear();
        return 0;
    }
    if ((size_t)size != strlen(path) || size == 0 || !no_parent_step(path)) return 0;
    if (path[0] == '/') {
        for (int i = 0; i < gate.n_inside; i++)
            if (below(path, (size_t)size, i)) return 1;
        return 0;
    }
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == NULL) return 0;
    size_t cwd_len = strlen(cwd);
    for (int i = 0; i < gate.n_inside; i++)
        if ((cwd_len == gate.inside_len[i] && strcmp(cwd, gate.inside[i]) == 0) || below(cwd, cwd_len, i)) return 1;
    return 0;
}

static int exact_str_equals(PyObject *object, const char *text) {
    return PyUnicode_CheckExact(object) && PyUnicode_CompareWithASCIIString(object, text) == 0;
}

/* -1 (CPython's events) or None (`shutil.rmtree`'s): the path is relative to the working directory. */
static int no_descriptor_given(PyObject *dir_fd) {
    if (dir_fd == Py_None) return 1;
    if (!PyLong_CheckExact(dir_fd)) return 0;
    int overflow = 0;
    return PyLong_AsLongAndOverflow(dir_fd, &overflow) == -1 && !overflow && !PyErr_Occurred();
}

/* What the judge would do with the event, decided here where that is plainly "pass". */
static enum verdict fast_verdict(const slot *entry, PyObject *args) {
    Py_ssize_t n = PyTuple_Check(args) ? PyTuple_GET_SIZE(args) : -1;
    switch (entry->fast) {
    case FAST_GETFRAME: /* (frame,): the frame sys._getframe hands out */
        return n >= 1 && sandbox_frame(PyTuple_GET_ITEM(args, 0)) ? JUDGE : PASS;
    case FAST_GETATTR: { /* (object, name): an audited attribute read */
        if (n != 2 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(args, 1))) return PASS;
        PyObject *holder = PyTuple_GET_ITEM(args, 0), *name = PyTuple_GET_ITEM(args, 1);
        /* Every name judged here is "??_frame": any other (`__code__`, `f_code`, ...) passes at once. */
        if (PyUnicode_GET_LENGTH(name) != 8 || PyUnicode_KIND(name) != PyUnicode_1BYTE_KIND ||
            memcmp((const char *)PyUnicode_DATA(name) + 2, "_frame", 6) != 0)
            return PASS;
        if (exact_str_equals(name, "tb_frame"))
            return Py_IS_TYPE(holder, &PyTraceBack_Type) &&
                           sandbox_frame((PyObject *)((PyTracebackObject *)holder)->tb_frame)
                       ? JUDGE : PASS;
        if (exact_str_equals(name, "gi_frame") || exact_str_equals(name, "cr_frame") || exact_str_equals(name, "ag_frame"))
            return JUDGE; /* the judge reads the frame with the type's own getter */
        return PASS;
    }
    case FAST_SETATTR: { /* (object, name, value): a function's code or defaults, on the sandbox's own */
        if (n != 3 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(args, 1))) return PASS;
        PyObject *target = PyTuple_GET_ITEM(args, 0), *name = PyTuple_GET_ITEM(args, 1);
        if (!(exact_str_equals(name, "__code__") || exact_str_equals(name, "__defaults__") ||
              exact_str_equals(name, "__kwdefaults__")))
            return PASS;
        if (!Py_IS_TYPE(target, &PyFunction_Type)) return PASS;
        PyObject *filename = ((PyCodeObject *)PyFunction_GET_CODE(target))->co_filename;
        return PyUnicode_Tailmatch(filename, gate.sandbox_dir, 0, PY_SSIZE_T_MAX, -1) == 1 ? JUDGE : PASS;
    }
    case FAST_OPEN: /* (path, mode, flags) */
        if (n != 3) return JUDGE;
        if (PyLong_CheckExact(PyTuple_GET_ITEM(args, 0))) return PASS; /* a descriptor: its opening was judged */
        return plainly_inside(PyTuple_GET_ITEM(args, 0)) ? PASS : JUDGE;
    case FAST_KILL: { /* (pid, signal): to itself or its own group */
        if (n < 1 || !PyLong_CheckExact(PyTuple_GET_ITEM(args, 0))) return JUDGE;
        int overflow = 0;
        long pid = PyLong_AsLongAndOverflow(PyTuple_GET_ITEM(args, 0), &overflow);
        if (overflow || (pid == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return JUDGE;
        }
        return pid == gate.pid || pid == 0 || pid == -gate.pid ? PASS : JUDGE;
    }
    case FAST_PTHREAD_KILL: /* (thread id, signal): one of its own threads */
        return n >= 1 && PyLong_CheckExact(PyTuple_GET_ITEM(args, 0)) ? PASS : JUDGE;
    case FAST_SOCKET_NEW: { /* (socket, family, type, proto): a socketpair's end */
        if (n < 3 || !PyLong_CheckExact(PyTuple_GET_ITEM(args, 1)) || !PyLong_CheckExact(PyTuple_GET_ITEM(args, 2)))
            return JUDGE;
        long family = PyLong_AsLong(PyTuple_GET_ITEM(args, 1)), kind = PyLong_AsLong(PyTuple_GET_ITEM(args, 2));
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return JUDGE;
        }
        return family == 1 && kind == 1 ? PASS : JUDGE; /* AF_UNIX, SOCK_STREAM */
    }
    case FAST_HOSTNAME: /* the UTS namespace's own name */
        return PASS;
    case FAST_NO_TRACE: /* sys.settrace(None), sys.setprofile(None): noted by the wrappers */
        return setting_none > 0 ? PASS : JUDGE;
    case FAST_FILE_CHANGE: /* each path a str plainly inside, or a descriptor, and relative to no descriptor */
        for (Py_ssize_t i = 0; i < n && i < 8; i++) {
            PyObject *argument = PyTuple_GET_ITEM(args, i);
            /* Anything else the judge reads (a str subclass, bytes) or counts as outside (a buffer:
             * red team sandbox14 `r1`); a path relative to a descriptor: the judge reads its directory. */
            if ((entry->paths >> i & 1) && !PyLong_CheckExact(argument) && !plainly_inside(argument)) return JUDGE;
            if ((entry->dir_fds >> i & 1) && !no_descriptor_given(argument)) return JUDGE;
        }
        return n >= 0 ? PASS : JUDGE;
    case FAST_FLOCK:
    case FAST_LOCKF:
    case FAST_FCNTL:
    case FAST_OS_LOCKF: /* answered in `gate_hook` by `lock_check` */
    case FAST_NONE:
        break;
    }
    return JUDGE;
}

static PyObject *getsignal; /* _signal.getsignal, bound when the fork server imports this module */
static volatile sig_atomic_t noted[NSIG];

static void note_signal(int signal_number) { noted[signal_number] = 1; }

/* The signals held, process-wide: the judge runs on whatever thread makes an audited call, so holds
 * nest and overlap. The first hold saves each signal's action and the last release restores it; a
 * save and restore per hold let two threads restore each other's noting handler, which then stayed
 * for good (red team sandbox8 `s2`, `h1`: the candidate's handler never ran again). */
static struct {
    int depth;
    int count;
    int signals[NSIG];
    struct sigaction actions[NSIG];
} held;

static int is_held(int number) {
    for (int i = 0; i < held.count; i++)
        if (held.signals[i] == number) return 1;
    return 0;
}

/* Give every signal with a Python handler a C handler that only notes it, then run the handlers
 * already due, in the current frame (the candidate's, or none): in that order, so that no signal
 * can be handed to CPython's handler between the two (red team sandbox8 `c4`: one tripped there
 * ran its handler in the judge's frame). -1, with the exception, when such a handler raised. */
static unsigned long main_thread; /* the jail's main thread, where CPython runs Python handlers */

static int hold_handlers(void) {
    hold_collector();
    /* Only the main thread runs Python handlers: a judgement on another thread holds no signal
     * back, or `signal.raise_signal` on the main thread returned before its handler ran, a tell
     * (red team sandbox9 `s1`). */
    if (PyThread_get_thread_ident() != main_thread) return 0;
    held.depth++;
    PyObject *pending_type, *pending_value, *pending_trace;
    PyErr_Fetch(&pending_type, &pending_value, &pending_trace);
    for (int number = 1; number < NSIG; number++) {
        if (is_held(number)) continue;
        PyObject *handler = PyObject_CallFunction(getsignal, "i", number);
        if (handler == NULL) {
            PyErr_Clear();
            continue;
        }
        int in_python = handler != Py_None && !PyLong_Check(handler); /* not SIG_DFL, SIG_IGN, or unset */
        Py_DECREF(handler);
        if (!in_python) continue;
        struct sigaction noting, previous;
        if (sigaction(number, NULL, &previous) != 0 || (previous.sa_flags & SA_SIGINFO) ||
            previous.sa_handler == SIG_DFL || previous.sa_handler == SIG_IGN || previous.sa_handler == note_signal)
            continue;
        noting = previous;
        noting.sa_handler = note_signal;
        if (sigaction(number, &noting, NULL) == 0) {
            held.signals[held.count] = number;
            held.actions[held.count++] = previous;
        }
    }
    PyErr_Restore(pending_type, pending_value, pending_trace);
    return PyErr_CheckSignals();
}

/* At the last release, CPython's handlers back, and each signal noted meanwhile handed to them. */
static void release_handlers(void) {
    if (PyThread_get_thread_ident() != main_thread) {
        release_collector();
        return;
    }
    release_collector();
    if (--held.depth > 0) return;
    int count = held.count;
    held.count = 0;
    for (int i = 0; i < count; i++) sigaction(held.signals[i], &held.actions[i], NULL);
    for (int i = 0; i < count; i++) {
        int number = held.signals[i];
        if (noted[number]) {
            noted[number] = 0;
            held.actions[i].sa_handler(number);
        }
    }
}

/* The recursion depth the judge may use beyond the candidate's limit: its frames are none of the
 * candidate's, and a plain python3 has none of them, so a judged call at the candidate's limit
 * succeeds as it does there, and its record is made (it failed with RecursionError, unrecorded).
 * The judge's own depth is a few tens of levels; nothing of the candidate's runs inside it. */
#define JUDGE_HEADROOM 200

/* `_thread.interrupt_main(signum)` trips a signal inside CPython with no kernel signal, so the
 * noting handlers never saw it, and the candidate's handler ran at the main thread's next check,
 * inside the judge or the jail's steps, handed their frames (red team sandbox11 `i1`-`i3`: from
 * the judge's, it reached the judge's state and removed the audit hook). While the main thread
 * holds, it is noted as the noting handler notes a kernel signal, and handed on at the release. */
static PyCFunction real_interrupt_main;

static PyObject *interrupt_main_held(PyObject *self, PyObject *args) {
    int number = SIGINT;
    if (!PyArg_ParseTuple(args, "|i:interrupt_main", &number)) return NULL;
    if (held.depth > 0 && number > 0 && number < NSIG && is_held(number)) {
        noted[number] = 1;
        Py_RETURN_NONE;
    }
    return real_interrupt_main(self, args);
}

/* The exception being raised, made as one a C function raises: no traceback (the judge's frames
 * were in it, and `tb_next`/`tb_lineno`, which raise no audit event, read their count and lines:
 * red team sandbox10 `r1`), no cause, and as its context what the candidate was handling, not
 * what the judge was. */
static void as_from_c(void) {
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    Py_XDECREF(trace);
    if (value != NULL && PyExceptionInstance_Check(value)) {
        PyException_SetTraceback(value, Py_None);
        PyException_SetCause(value, NULL);
        ((PyBaseExceptionObject *)value)->suppress_context = 0;
        PyObject *handled = PyErr_GetHandledException();
        if (handled == Py_None) Py_CLEAR(handled);
        PyException_SetContext(value, handled == value ? (Py_DECREF(handled), NULL) : handled);
    }
    PyErr_Restore(type, value, NULL);
}

static int hand_to_judge(const char *event, PyObject *args) {
    /* No signal handler of the candidate's runs inside the judge: those due run here, before
     * anything is noted, in the candidate's frame (a raise fails the operation, as it would if the
     * handler ran right after it); those that come while the judge runs, after it. */
    if (hold_handlers() < 0) {
        release_handlers();
        return -1;
    }
    PyObject *name = PyUnicode_FromString(event);
    /* The note is the arguments' address, never the arguments: a note left over held the
     * candidate's objects until the seal let go of them in the judge's frame, where a generator's
     * `finally` walked `f_back` into the judge (red team sandbox10 `p1`). */
    PyObject *note = PyLong_FromVoidPtr(args);
    PyObject *noted = note == NULL || name == NULL ? NULL : PyDict_SetDefault(gate.pending, name, note);
    Py_XDECREF(note);
    if (noted == NULL) {
        Py_XDECREF(name);
        release_handlers();
        return -1;
    }
    PyThreadState *thread = PyThreadState_Get();
    PyThreadState_EnterTracing(thread); /* as CPython runs its own hooks: no tracing inside */
    thread->recursion_remaining += JUDGE_HEADROOM;
    PyObject *returned = PyObject_CallFunctionObjArgs(gate.judge, name, args, NULL);
    thread->recursion_remaining -= JUDGE_HEADROOM;
    PyThreadState_LeaveTracing(thread);
    release_handlers();
    Py_DECREF(name);
    if (returned == NULL) {
        as_from_c();
        return -1;
    }
    Py_DECREF(returned);
    return 0;
}

/* Locks succeed without touching any kernel object (`_seccomp._LOCKS_DONE`, `_FCNTL_DONE`), so the
 * filter never sees a request the kernel would refuse: a lock on a descriptor that is not open, a
 * read lock on one not open for reading or a write lock on one not open for writing, an unknown
 * operation. Each answered as the kernel answers it, in its order (the descriptor first), from
 * here, before the call: `fcntl.flock`, `fcntl.lockf`, `fcntl.fcntl`'s lock commands and
 * `os.lockf` raise an event first (red team sandbox18: a lock on a closed descriptor, or a write
 * lock on a read-only one, succeeded in the jail alone). `write` and `read`: what the lock needs
 * the descriptor opened for. 0 where the kernel takes the request. */
static int lock_refusal(long fd, int read, int write) {
    if (fd < 0 || fd > INT_MAX) return EBADF;
    int flags = fcntl((int)fd, F_GETFL);
    if (flags < 0) return errno;
    int mode = flags & O_ACCMODE, readable = mode == O_RDONLY || mode == O_RDWR, writable = mode == O_WRONLY || mode == O_RDWR;
    /* `read` and `write` both set: either will do (flock's locks). O_ACCMODE itself, opened for
     * neither, takes no lock but an unlock (red team sandbox19 `l7`). */
    if ((flags & O_PATH) || (read && write ? !(readable || writable) : (read && !readable) || (write && !writable))) return EBADF;
    return 0;
}

static long long_item(PyObject *args, Py_ssize_t index, int *valid) {
    PyObject *item = PyTuple_Check(args) && PyTuple_GET_SIZE(args) > index ? PyTuple_GET_ITEM(args, index) : NULL;
    if (item == NULL || !PyLong_CheckExact(item)) {
        *valid = 0;
        return 0;
    }
    int overflow = 0;
    long value = PyLong_AsLongAndOverflow(item, &overflow);
    if (overflow || (value == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        *valid = 0;
    }
    return value;
}

/* The kernel's answer to the lock request of a lock event, or 0 to let the call go on: anything
 * this cannot read goes on as it is (CPython raises its own errors after the event). */
static int lock_check(enum fast kind, PyObject *args) {
    int valid = 1;
    long fd = long_item(args, 0, &valid), command = long_item(args, 1, &valid);
    if (!valid) return 0;
    switch (kind) {
    case FAST_FLOCK: { /* (fd, operation) */
        if (command & 32) return 0; /* LOCK_MAND: Linux takes it as a no-op before anything else */
        long base = command & ~LOCK_NB;
        if (base != LOCK_SH && base != LOCK_EX && base != LOCK_UN) return EINVAL; /* before the descriptor */
        return base == LOCK_UN ? lock_refusal(fd, 0, 0) : lock_refusal(fd, 1, 1);
    }
    case FAST_LOCKF: /* (fd, LOCK_* operation, len, start, whence): as CPython makes it a record lock */
        if (command == LOCK_UN) return lock_refusal(fd, 0, 0);
        if (command & LOCK_SH) return lock_refusal(fd, 1, 0);
        if (command & LOCK_EX) return lock_refusal(fd, 0, 1);
        return 0; /* CPython raises ValueError */
    case FAST_OS_LOCKF: /* (fd, F_LOCK/F_TLOCK/F_ULOCK/F_TEST, length): glibc's record locks */
        if (command == F_LOCK || command == F_TLOCK) return lock_refusal(fd, 0, 1);
        if (command == F_ULOCK) return lock_refusal(fd, 0, 0);
        if (command == F_TEST) return 0; /* a lock test: refused by the filter itself */
        return EINVAL; /* glibc's, before the descriptor */
    case FAST_FCNTL: { /* (fd, command, argument): its lock commands, given a struct flock as bytes */
        if (command != F_SETLK && command != F_SETLKW && command != F_OFD_SETLK && command != F_OFD_SETLKW) return 0;
        PyObject *argument = PyTuple_GET_SIZE(args) > 2 ? PyTuple_GET_ITEM(args, 2) : NULL;
        /* Anything but an int or bytes of at most 1024 (CPython's buffer) CPython refuses itself
         * after the event, TypeError or ValueError, whatever the descriptor (red team sandbox19
         * `l5`, `l6`). */
        if (argument != NULL && !PyLong_Check(argument) && (!PyBytes_CheckExact(argument) || PyBytes_GET_SIZE(argument) > 1024))
            return 0;
        int refused = lock_refusal(fd, 0, 0);
        if (refused) return refused;
        if (argument == NULL || PyLong_Check(argument)) return EFAULT; /* an int is an address */
        struct flock lock;
        memset(&lock, 0, sizeof lock);
        memcpy(&lock, PyBytes_AS_STRING(argument), (size_t)PyBytes_GET_SIZE(argument) < sizeof lock ? (size_t)PyBytes_GET_SIZE(argument) : sizeof lock);
        if (lock.l_type != F_RDLCK && lock.l_type != F_WRLCK && lock.l_type != F_UNLCK) return EINVAL;
        if (lock.l_whence != SEEK_SET && lock.l_whence != SEEK_CUR && lock.l_whence != SEEK_END) return EINVAL;
        refused = lock_refusal(fd, lock.l_type == F_RDLCK, lock.l_type == F_WRLCK);
        if (refused) return refused;
        return (command == F_OFD_SETLK || command == F_OFD_SETLKW) && lock.l_pid != 0 ? EINVAL : 0;
    }
    default:
        return 0;
    }
}

static int gate_hook(const char *event, PyObject *args, void *unused) {
    if (!gate.first_chars[(unsigned char)event[0]]) return 0; /* no judged name starts so: `builtins.id` */
    slot *entry = lookup(event);
    enum verdict verdict;
    if (entry != NULL && entry->name != NULL && entry->fast >= FAST_FLOCK) {
        int refused = lock_check(entry->fast, args);
        if (refused == 0) return 0;
        errno = refused;
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
    if (entry != NULL && entry->name != NULL)
        verdict = entry->fast == FAST_NONE ? JUDGE : fast_verdict(entry, args);
    else
        verdict = judged_by_prefix(event) ? JUDGE : PASS;
    return verdict == PASS ? 0 : hand_to_judge(event, args);
}

/* Each event's fast path; a file change's paths and directory descriptors by position (as
 * `_hook._CHANGED_PATHS` lists them; a descriptor is -1, or None, where none was given). */
#define AT(position) (1u << (position))
static const struct {
    const char *name;
    enum fast fast;
    unsigned paths, dir_fds;
} FAST_PATHS[] = {
    {"sys._getframe", FAST_GETFRAME, 0, 0}, {"object.__getattr__", FAST_GETATTR, 0, 0}, {"object.__setattr__", FAST_SETATTR, 0, 0},
    {"open", FAST_OPEN, 0, 0}, {"os.kill", FAST_KILL, 0, 0}, {"os.killpg", FAST_KILL, 0, 0},
    {"signal.pthread_kill", FAST_PTHREAD_KILL, 0, 0}, {"socket.__new__", FAST_SOCKET_NEW, 0, 0},
    {"socket.gethostname", FAST_HOSTNAME, 0, 0}, {"sys.settrace", FAST_NO_TRACE, 0, 0}, {"sys.setprofile", FAST_NO_TRACE, 0, 0},
    {"os.remove", FAST_FILE_CHANGE, AT(0), AT(1)}, {"os.rmdir", FAST_FILE_CHANGE, AT(0), AT(1)},
    {"shutil.rmtree", FAST_FILE_CHANGE, AT(0), AT(1)}, {"os.mkdir", FAST_FILE_CHANGE, AT(0), AT(2)},
    {"os.chmod", FAST_FILE_CHANGE, AT(0), AT(2)}, {"os.chown", FAST_FILE_CHANGE, AT(0), AT(3)},
    {"os.utime", FAST_FILE_CHANGE, AT(0), AT(3)}, {"os.rename", FAST_FILE_CHANGE, AT(0) | AT(1), AT(2) | AT(3)},
    {"os.link", FAST_FILE_CHANGE, AT(0) | AT(1), AT(2) | AT(3)}, {"os.symlink", FAST_FILE_CHANGE, AT(0) | AT(1), AT(2)},
    {"os.truncate", FAST_FILE_CHANGE, AT(0), 0}, {"os.setxattr", FAST_FILE_CHANGE, AT(0), 0},
    {"os.removexattr", FAST_FILE_CHANGE, AT(0), 0}, {"sandbox.mkfifo", FAST_FILE_CHANGE, AT(0), AT(1)},
    {"sandbox.mknod", FAST_FILE_CHANGE, AT(0), AT(1)},
    {"fcntl.flock", FAST_FLOCK, 0, 0}, {"fcntl.lockf", FAST_LOCKF, 0, 0}, {"fcntl.fcntl", FAST_FCNTL, 0, 0},
    {"os.lockf", FAST_OS_LOCKF, 0, 0},
};

static char *copy_text(PyObject *text) {
    const char *utf8 = PyUnicode_Check(text) ? PyUnicode_AsUTF8(text) : NULL;
    return utf8 ? strdup(utf8) : NULL;
}

static int add_name(PyObject *name) {
    char *copy = copy_text(name);
    if (copy == NULL) return -1;
    slot *entry = lookup(copy);
    if (entry->name != NULL) {
        free(copy);
        return 0;
    }
    entry->name = copy;
    entry->fast = FAST_NONE;
    gate.first_chars[(unsigned char)copy[0]] = 1;
    for (size_t i = 0; i < sizeof FAST_PATHS / sizeof FAST_PATHS[0]; i++)
        if (strcmp(copy, FAST_PATHS[i].name) == 0)
            entry->fast = FAST_PATHS[i].fast, entry->paths = FAST_PATHS[i].paths, entry->dir_fds = FAST_PATHS[i].dir_fds;
    return 0;
}

/* Every C function the gate routes through a wrapper of its own (`route_function`: their method
 * definitions' C function, so every reference to them, wherever the candidate took it, is the
 * same object). Their modules are kept here: cut from `sys.modules` with the rest of the set-up's
 * imports, `faulthandler` was garbage that a collection under `gc.DEBUG_SAVEALL` showed the
 * candidate (red team sandbox11 `t2`). */
#define WRAPPER(function) ((PyCFunction)(void (*)(void))(function))
#define KEYWORDS (METH_VARARGS | METH_KEYWORDS)
static const struct {
    const char *module, *name;
    int flags;
    PyCFunction wrapper;
    PyCFunction *real;
} ROUTES[] = {
    {"sys", "settrace", METH_O, settrace_noted, &real_settrace},
    {"sys", "setprofile", METH_O, setprofile_noted, &real_setprofile},
    {"gc", "enable", METH_NOARGS, gc_enable_kept, &real_gc_enable},
    {"gc", "disable", METH_NOARGS, gc_disable_kept, &real_gc_disable},
    {"gc", "isenabled", METH_NOARGS, gc_isenabled_kept, &real_gc_isenabled},
    {"faulthandler", "dump_traceback", KEYWORDS, WRAPPER(dump_traceback_waiting), (PyCFunction *)&real_dump_traceback},
    {"faulthandler", "dump_traceback_later", KEYWORDS, WRAPPER(dump_later_refused), (PyCFunction *)&real_dump_later},
    {"faulthandler", "register", KEYWORDS, WRAPPER(register_refused), (PyCFunction *)&real_register},
    {"faulthandler", "enable", KEYWORDS, WRAPPER(enable_refused), (PyCFunction *)&real_enable},
    {"_tracemalloc", "start", METH_FASTCALL, WRAPPER(tracemalloc_start_refused), (PyCFunction *)&real_tracemalloc_start},
    {"_thread", "interrupt_main", METH_VARARGS, interrupt_main_held, &real_interrupt_main},
    {"posix", "open", METH_FASTCALL | METH_KEYWORDS, WRAPPER(open_judged), (PyCFunction *)&real_open},
    {"posix", "mkfifo", METH_FASTCALL | METH_KEYWORDS, WRAPPER(mkfifo_judged), (PyCFunction *)&real_mkfifo},
    {"posix", "mknod", METH_FASTCALL | METH_KEYWORDS, WRAPPER(mknod_judged), (PyCFunction *)&real_mknod},
};
#define ROUTE_COUNT (sizeof ROUTES / sizeof ROUTES[0])
static PyObject *routed_modules[ROUTE_COUNT];

static int route_all(void) {
    if ((no_descriptor = PyLong_FromLong(-1)) == NULL || (fspath_name = PyUnicode_InternFromString("__fspath__")) == NULL) return -1;
    for (size_t i = 0; i < ROUTE_COUNT; i++) {
        PyObject *module = routed_modules[i] = PyImport_ImportModule(ROUTES[i].module);
        PyObject *function = module == NULL ? NULL : PyObject_GetAttrString(module, ROUTES[i].name);
        int failed = route_function(function, ROUTES[i].flags, ROUTES[i].wrapper, ROUTES[i].real);
        Py_XDECREF(function);
        if (failed) return -1;
    }
    collector_wanted = PyGC_IsEnabled();
    return 0;
}

/* install(judge, pending, names, prefixes, namespaces, sandbox_dir, inside, pid) */
static PyObject *g_install(PyObject *self, PyObject *args) {
    PyObject *judge, *pending, *names, *prefixes, *namespaces, *sandbox_dir, *inside;
    long pid;
    if (!PyArg_ParseTuple(args, "OO!O!O!O!UO!l", &judge, &PyDict_Type, &pending, &PyTuple_Type, &names,
                          &PyTuple_Type, &prefixes, &PyTuple_Type, &namespaces, &sandbox_dir, &PyTuple_Type, &inside,
                          &pid))
        return NULL;
    if (gate.installed) {
        PyErr_SetString(PyExc_PermissionError, "the jail's audit gate is installed once");
        return NULL;
    }
    if (PyTuple_GET_SIZE(names) >= MAX_NAMES || PyTuple_GET_SIZE(prefixes) > MAX_PREFIXES ||
        PyTuple_GET_SIZE(inside) > MAX_INSIDE) {
        PyErr_SetString(PyExc_ValueError, "install: too many names, prefixes or directories");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++)
        if (add_name(PyTuple_GET_ITEM(names, i)) < 0) goto bad_text;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++) {
        if ((gate.prefixes[gate.n_prefixes] = copy_text(PyTuple_GET_ITEM(prefixes, i))) == NULL) goto bad_text;
        gate.first_chars[(unsigned char)gate.prefixes[gate.n_prefixes][0]] = 1;
        gate.n_prefixes++;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inside); i++) {
        char *path = copy_text(PyTuple_GET_ITEM(inside, i));
        if (path == NULL) goto bad_text;
        size_t length = strlen(path);
        while (length > 1 && path[length - 1] == '/') path[--length] = '\0';
        gate.inside[gate.n_inside] = path;
        gate.inside_len[gate.n_inside++] = length;
    }
    Py_INCREF(judge), Py_INCREF(pending), Py_INCREF(namespaces), Py_INCREF(sandbox_dir);
    gate.judge = judge, gate.pending = pending, gate.namespaces = namespaces;
    gate.sandbox_dir = sandbox_dir, gate.pid = pid;
    if (route_all() < 0)
        return NULL;
    main_thread = PyThread_get_thread_ident();
    gate.installed = 1; /* before the hook: its own addition raises an event */
    if (PySys_AddAuditHook(gate_hook, NULL) < 0) return NULL;
    Py_RETURN_NONE;
bad_text:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "install: names, prefixes and directories are str");
    return NULL;
}

/* A call of `self` (the wrapped callable) with no signal handler of the candidate's run inside it:
 * those due run first, those that come meanwhile after. */
static PyObject *shielded_call(PyObject *self, PyObject *unused) {
    if (hold_handlers() < 0) {
        release_handlers();
        return NULL;
    }
    /* The jail's code gets the judge's headroom too: at a recursion limit the candidate set low
     * (12), its reply failed and ended the jail where a plain python3 passes (red team sandbox13
     * `h12`). */
    PyThreadState *thread = PyThreadState_Get();
    thread->recursion_remaining += JUDGE_HEADROOM;
    PyObject *returned = PyObject_CallNoArgs(self);
    thread->recursion_remaining -= JUDGE_HEADROOM;
    release_handlers();
    return returned;
}

static PyMethodDef shielded_def = {"shielded", shielded_call, METH_NOARGS, NULL};

/* A call of `self` (the jail's loop of calls, `_jail.life`) with the judge's headroom beyond the
 * candidate's recursion limit: the C chains of the loop (each a level: `deque`, `map`, `partial`,
 * `methodcaller`) lie above `unstacked`, which gives the levels below each call back, and at a
 * limit the candidate set at 9 or 8 they ran out of depth and ended the jail, where a plain
 * python3 passes (red team sandbox17 `h8`, `h9`). `unstacked` sets each call's depth by difference,
 * so the candidate's call sees its own limit still. */
static PyObject *headroom_call(PyObject *self, PyObject *unused) {
    PyThreadState *thread = PyThreadState_Get();
    thread->recursion_remaining += JUDGE_HEADROOM;
    PyObject *returned = PyObject_CallNoArgs(self);
    thread->recursion_remaining -= JUDGE_HEADROOM;
    return returned;
}

static PyMethodDef headroom_def = {"headroom", headroom_call, METH_NOARGS, NULL};

static PyObject *g_headroom(PyObject *self, PyObject *callable) {
    if (!PyCallable_Check(callable)) {
        PyErr_SetString(PyExc_TypeError, "headroom(callable)");
        return NULL;
    }
    return PyCFunction_New(&headroom_def, callable);
}

/* A call of `self` (the program's module code as a function, each call's caller) with the
 * recursion depth of the Python frames on the stack only: the jail's C chains below it
 * (`_jail.life`: the after-fork callback, `deque`, `map`, `partial`, this function) took levels of
 * the candidate's limit, 3 at the load and 7 in a call, where in a plain python3 the frames it
 * sees and the depth it has left add up to the limit. The levels given back are taken again
 * after, by difference, so a limit the candidate set meanwhile holds as set. */
static PyObject *unstacked_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    PyThreadState *thread = PyThreadState_Get();
    int frames = 0;
    PyFrameObject *frame = PyThreadState_GetFrame(thread);
    while (frame != NULL) {
        PyFrameObject *below = PyFrame_GetBack(frame);
        Py_DECREF(frame);
        frame = below;
        frames++;
    }
    /* A list holds what to call: its last item, taken out first, so that nothing but this call
     * holds it while it runs (the jail's call of each module code, made from C: `_jail._caller`). */
    PyObject *target = self;
    if (PyList_CheckExact(self)) {
        Py_ssize_t count = PyList_GET_SIZE(self);
        if (count == 0) {
            PyErr_SetString(PyExc_IndexError, "unstacked: nothing to call");
            return NULL;
        }
        target = Py_NewRef(PyList_GET_ITEM(self, count - 1));
        if (PyList_SetSlice(self, count - 1, count, NULL) < 0) {
            Py_DECREF(target);
            return NULL;
        }
    } else {
        Py_INCREF(target);
    }
    /* Below `headroom` (the loop's levels beyond the limit) `hidden` is negative: for the test
     * file's module code (a list's item) it is taken away, so that its frames and the candidate's
     * have the depth of a plain run's; the jail's own steps (a callable) keep it. */
    int hidden = thread->recursion_limit - thread->recursion_remaining - frames;
    if (hidden < 0 && target == self) hidden = 0;
    thread->recursion_remaining += hidden;
    PyObject *returned = PyObject_Call(target, args, kwargs);
    thread->recursion_remaining -= hidden;
    Py_DECREF(target);
    return returned;
}

static PyMethodDef unstacked_def = {"unstacked", (PyCFunction)(void (*)(void))unstacked_call, METH_VARARGS | METH_KEYWORDS, NULL};

/* Callables the test file's module code calls between calls (the reply, the wait, the next call),
 * that hold nothing the candidate can reach: each is a C function with no `__self__` (None) and
 * no module, calling a target kept here, so neither the jail's closures nor its state are
 * reachable from the test module's namespace or its code. A candidate that calls one itself
 * only upsets its own run (a reply out of turn, a wait for a call that never comes). */
#define OPAQUE_SLOTS 4
static PyObject *opaque_targets[OPAQUE_SLOTS];
static PyMethodDef opaque_defs[OPAQUE_SLOTS];
static int opaque_count;

/* Calls each callable of the tuple `targets` in turn, with no arguments; the last one's result. */
static PyObject *call_each(PyObject *targets) {
    PyObject *result = Py_NewRef(Py_None);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(targets); i++) {
        Py_DECREF(result);
        result = PyObject_CallNoArgs(PyTuple_GET_ITEM(targets, i));
        if (result == NULL) return NULL;
    }
    return result;
}

#define OPAQUE_CALL(n) \
    static PyObject *opaque_call_##n(PyObject *self, PyObject *unused) { return call_each(opaque_targets[n]); }
OPAQUE_CALL(0)
OPAQUE_CALL(1)
OPAQUE_CALL(2)
OPAQUE_CALL(3)
static const PyCFunction OPAQUE_CALLS[OPAQUE_SLOTS] = {opaque_call_0, opaque_call_1, opaque_call_2, opaque_call_3};

/* opaque(callables, name): a function named `name` that calls each of `callables` (a tuple) in
 * turn with no arguments. */
static PyObject *g_opaque(PyObject *self, PyObject *args) {
    PyObject *callable;
    const char *name;
    if (!PyArg_ParseTuple(args, "O!s", &PyTuple_Type, &callable, &name)) return NULL;
    int all_callable = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(callable); i++) all_callable &= PyCallable_Check(PyTuple_GET_ITEM(callable, i));
    if (!all_callable || opaque_count >= OPAQUE_SLOTS) {
        PyErr_SetString(PyExc_ValueError, "opaque(callables, name): a tuple of callables, at most four times");
        return NULL;
    }
    char *kept = strdup(name);
    if (kept == NULL) return PyErr_NoMemory();
    int slot = opaque_count++;
    Py_INCREF(callable);
    opaque_targets[slot] = callable;
    opaque_defs[slot] = (PyMethodDef){kept, OPAQUE_CALLS[slot], METH_NOARGS, NULL};
    return PyCFunction_NewEx(&opaque_defs[slot], NULL, NULL);
}

static PyObject *g_unstacked(PyObject *self, PyObject *callable) {
    if (!PyCallable_Check(callable) && !PyList_CheckExact(callable)) {
        PyErr_SetString(PyExc_TypeError, "unstacked(callable or list)");
        return NULL;
    }
    return PyCFunction_New(&unstacked_def, callable);
}

/* A call of `self[0]` whose exception, should it raise, is appended to the list `self[1]` instead:
 * the jail's load, whose outcome it read from `sys.unraisablehook`, set for the while to a list's
 * `append`, which handed the candidate that list through `__self__` (red team sandbox7 `u1`: a
 * fake `SystemExit(0)` put first made a load that crashed a clean exit). */
static PyObject *catching_call(PyObject *self, PyObject *unused) {
    PyObject *result = PyObject_CallNoArgs(PyTuple_GET_ITEM(self, 0));
    if (result != NULL) {
        Py_DECREF(result);
        Py_RETURN_NONE;
    }
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    if (value != NULL && trace != NULL) PyException_SetTraceback(value, trace);
    int appended = value != NULL ? PyList_Append(PyTuple_GET_ITEM(self, 1), value) : 0;
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(trace);
    if (appended < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef catching_def = {"catching", catching_call, METH_NOARGS, NULL};

/* catching(callable, into): a C callable that calls `callable` and appends what it raises to the
 * list `into`. */
static PyObject *g_catching(PyObject *self, PyObject *args) {
    PyObject *callable, *into;
    if (!PyArg_ParseTuple(args, "OO!", &callable, &PyList_Type, &into)) return NULL;
    PyObject *both = PyTuple_Pack(2, callable, into);
    if (both == NULL) return NULL;
    PyObject *function = PyCFunction_New(&catching_def, both);
    Py_DECREF(both);
    return function;
}

/* The list the test file's code records each call's outcome in (`recorders`): [True, the value]
 * once the call returned, [False, the exception, its text] once it raised, emptied by the jail
 * after the reply. Kept here, so that the two functions that fill it hold nothing reachable: each
 * is a C function with no `__self__` and no module, a constant of that code. */
static PyObject *recorded_outcome;

/* Called with the candidate's answer in the test file's `try` block. */
static PyObject *returned_call(PyObject *unused, PyObject *value) {
    PyObject *record = PyList_New(2);
    if (record == NULL) return NULL;
    PyList_SET_ITEM(record, 0, Py_NewRef(Py_True));
    PyList_SET_ITEM(record, 1, Py_NewRef(value));
    int failed = PyList_SetSlice(recorded_outcome, 0, PY_SSIZE_T_MAX, record) < 0;
    Py_DECREF(record);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

/* Called in the test file's `except` block: the exception being handled and its text (None where
 * `str` of it raises), as the block's own Python did with `except BaseException as error:` and
 * `str(error)`, which looked `error` and `str` up by name, in the test module's namespace and in
 * `builtins`, where the candidate can put names of its own (red team sandbox16 `g1`, `g2`). The
 * exception's `__str__` still runs here, with the test file's frame below it, as a test runner's
 * report of a failure runs it. */
static PyObject *failed_call(PyObject *unused, PyObject *unused_args) {
    PyObject *error = PyErr_GetHandledException();
    if (error == NULL) error = Py_NewRef(Py_None);
    PyObject *text = PyObject_Str(error);
    if (text == NULL) {
        PyErr_Clear();
        text = Py_NewRef(Py_None);
    }
    PyObject *record = PyList_New(0);
    int failed = record == NULL || PyList_Append(record, Py_False) < 0 || PyList_Append(record, error) < 0 ||
                 PyList_Append(record, text) < 0 || PyList_SetSlice(recorded_outcome, 0, PY_SSIZE_T_MAX, record) < 0;
    Py_XDECREF(record);
    Py_DECREF(text);
    Py_DECREF(error);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef returned_def = {"returned", returned_call, METH_O, NULL};
static PyMethodDef failed_def = {"failed", failed_call, METH_NOARGS, NULL};

/* recorders(outcome, returned_name, failed_name): the two functions that record a call's outcome
 * in the list `outcome`, named as the test file names them; once per process. */
static PyObject *g_recorders(PyObject *self, PyObject *args) {
    PyObject *outcome;
    const char *returned_name, *failed_name;
    if (!PyArg_ParseTuple(args, "O!ss", &PyList_Type, &outcome, &returned_name, &failed_name)) return NULL;
    if (recorded_outcome != NULL) {
        PyErr_SetString(PyExc_ValueError, "recorders: once per process");
        return NULL;
    }
    returned_def.ml_name = strdup(returned_name);
    failed_def.ml_name = strdup(failed_name);
    if (returned_def.ml_name == NULL || failed_def.ml_name == NULL) return PyErr_NoMemory();
    recorded_outcome = Py_NewRef(outcome);
    PyObject *returned = PyCFunction_NewEx(&returned_def, NULL, NULL), *failed = PyCFunction_NewEx(&failed_def, NULL, NULL);
    PyObject *both = returned != NULL && failed != NULL ? PyTuple_Pack(2, returned, failed) : NULL;
    Py_XDECREF(returned);
    Py_XDECREF(failed);
    return both;
}

static int is_name_op(int op) {
    switch (op) {
    case STORE_NAME: case DELETE_NAME: case STORE_ATTR: case DELETE_ATTR: case STORE_GLOBAL: case DELETE_GLOBAL:
    case LOAD_NAME: case LOAD_ATTR: case IMPORT_NAME: case IMPORT_FROM: case LOAD_GLOBAL: case LOAD_METHOD:
        return 1;
    default:
        return 0;
    }
}

/* The index into `co_names` an instruction's argument names (LOAD_GLOBAL's low bit is a flag). */
static int name_index(int op, int arg) { return op == LOAD_GLOBAL ? arg >> 1 : arg; }

/* rebuilt(code, bytecode, consts, names): `code` with that bytecode, those constants and those
 * names, made through the C API, which raises no audit event: `code.replace` raises
 * `code.__new__`, which the judge refuses of anyone (a code object of the candidate's making reads
 * and writes memory at will), and the jail makes each call's code between calls
 * (`_testfile.bound`). Only what `bound` changes is accepted: `LOAD_NAME`s made `LOAD_CONST`s of
 * an index within `consts`; constants added after the code's own, and of its own only strings
 * replaced (the call's stand-ins); the names renumbered, each instruction that names one naming
 * the same string, with no EXTENDED_ARG before any (`co_code` holds its caches as zeros, CACHE). */
static PyObject *g_rebuilt(PyObject *self, PyObject *args) {
    PyCodeObject *code;
    PyObject *bytecode, *consts, *names;
    if (!PyArg_ParseTuple(args, "O!O!O!O!", &PyCode_Type, &code, &PyBytes_Type, &bytecode, &PyTuple_Type, &consts, &PyTuple_Type, &names))
        return NULL;
    PyObject *own = PyCode_GetCode(code);
    if (own == NULL) return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(own), count = PyTuple_GET_SIZE(consts), own_count = PyTuple_GET_SIZE(code->co_consts);
    Py_ssize_t name_count = PyTuple_GET_SIZE(names), own_names = PyTuple_GET_SIZE(code->co_names);
    int valid = PyBytes_GET_SIZE(bytecode) == size && count >= own_count && size % 2 == 0;
    const unsigned char *before = (const unsigned char *)PyBytes_AS_STRING(own), *after = (const unsigned char *)PyBytes_AS_STRING(bytecode);
    for (Py_ssize_t at = 0; valid && at < size; at += 2) {
        int extended = at > 0 && before[at - 2] == EXTENDED_ARG;
        if (before[at] == LOAD_NAME && after[at] == LOAD_CONST) {
            valid = after[at + 1] < count && !extended;
        } else if (is_name_op(before[at])) {
            int was = name_index(before[at], before[at + 1]), now = name_index(after[at], after[at + 1]);
            valid = after[at] == before[at] && !extended && (before[at] != LOAD_GLOBAL || (before[at + 1] & 1) == (after[at + 1] & 1)) &&
                    was < own_names && now < name_count &&
                    PyUnicode_Compare(PyTuple_GET_ITEM(code->co_names, was), PyTuple_GET_ITEM(names, now)) == 0;
        } else {
            valid = before[at] == after[at] && before[at + 1] == after[at + 1];
        }
    }
    for (Py_ssize_t i = 0; valid && i < own_count; i++) {
        PyObject *was = PyTuple_GET_ITEM(code->co_consts, i);
        valid = PyTuple_GET_ITEM(consts, i) == was || PyUnicode_CheckExact(was);
    }
    for (Py_ssize_t i = 0; valid && i < name_count; i++) valid = PyUnicode_CheckExact(PyTuple_GET_ITEM(names, i));
    if (!valid) {
        Py_DECREF(own);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "rebuilt: only LOAD_NAMEs made LOAD_CONSTs, constants added or stand-ins replaced, names renumbered");
        return NULL;
    }
    PyObject *varnames = PyCode_GetVarnames(code), *cellvars = PyCode_GetCellvars(code), *freevars = PyCode_GetFreevars(code);
    PyObject *made = NULL;
    if (varnames != NULL && cellvars != NULL && freevars != NULL)
        made = (PyObject *)PyCode_NewWithPosOnlyArgs(
            code->co_argcount, code->co_posonlyargcount, code->co_kwonlyargcount, code->co_nlocals, code->co_stacksize,
            code->co_flags, bytecode, consts, names, varnames, freevars, cellvars, code->co_filename,
            code->co_name, code->co_qualname, code->co_firstlineno, code->co_linetable, code->co_exceptiontable);
    Py_XDECREF(varnames);
    Py_XDECREF(cellvars);
    Py_XDECREF(freevars);
    Py_DECREF(own);
    return made;
}

/* shielded(callable): a C callable that calls `callable` with no signal handler of the
 * candidate's run inside it (the jail's own code between calls: `_jail.life`). */
static PyObject *g_shielded(PyObject *self, PyObject *callable) {
    if (!PyCallable_Check(callable)) {
        PyErr_SetString(PyExc_TypeError, "shielded(callable)");
        return NULL;
    }
    return PyCFunction_New(&shielded_def, callable);
}

/* frame_local(frame, name): the value the frame's local `name` holds now, or None (unbound, or no
 * such local), read in place. The judge read them through `frame.f_locals`, which in CPython 3.11
 * stores every local into the frame's dict of them first: a key of the candidate's planted there,
 * with the hash of the name and an `__eq__` of its own, ran inside the judge, and could swap what
 * the judge then read (red team sandbox15 `k6`, `k7`: a code object with constants of the
 * candidate's passed as the library's own, and from it memory read and written at will). Nothing
 * here calls Python: the names are the frame's code's own, compared as exact strings. */
static PyObject *g_frame_local(PyObject *self, PyObject *args) {
    PyObject *frame, *name;
    if (!PyArg_ParseTuple(args, "O!U", &PyFrame_Type, &frame, &name)) return NULL;
    if (!PyUnicode_CheckExact(name)) Py_RETURN_NONE;
    _PyInterpreterFrame *data = ((PyFrameObject *)frame)->f_frame;
    PyObject *names = data->f_code->co_localsplusnames;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); i++) {
        PyObject *local = PyTuple_GET_ITEM(names, i);
        if (PyUnicode_CheckExact(local) && PyUnicode_Compare(local, name) == 0) {
            PyObject *value = data->localsplus[i];
            return Py_NewRef(value != NULL ? value : Py_None);
        }
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"frame_local", g_frame_local, METH_VARARGS, "frame_local(frame, name): a frame's local, read in place (None when unbound)"},
    {"headroom", g_headroom, METH_O, "headroom(callable): a callable that runs it with the judge's headroom beyond the recursion limit"},
    {"shielded", g_shielded, METH_O, "shielded(callable): a callable that runs it with no Python signal handler inside"},
    {"catching", g_catching, METH_VARARGS, "catching(callable, into): a callable that runs it and appends what it raises to into"},
    {"rebuilt", g_rebuilt, METH_VARARGS, "rebuilt(code, bytecode, consts, names): code with LOAD_NAMEs made LOAD_CONSTs, constants added and names renumbered, raising no event"},
    {"recorders", g_recorders, METH_VARARGS, "recorders(outcome, returned_name, failed_name): the functions that record a call's outcome in outcome"},
    {"opaque", g_opaque, METH_VARARGS, "opaque(callables, name): a function named name that calls each of callables, holding nothing reachable"},
    {"unstacked", g_unstacked, METH_O,
     "unstacked(callable): a callable that runs it with the recursion depth of the Python frames on the stack only "
     "(given a list, each call takes its last item out and runs that)"},
    {"install", g_install, METH_VARARGS,
     "install(judge, pending, names, prefixes, namespaces, sandbox_dir, inside, pid): "
     "add the gate as this process's audit hook, once"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_gate", NULL, -1, methods};

PyMODINIT_FUNC PyInit__gate(void) {
    PyObject *signals = PyImport_ImportModule("_signal");
    if (signals == NULL) return NULL;
    getsignal = PyObject_GetAttrString(signals, "getsignal");
    Py_DECREF(signals);
    if (getsignal == NULL) return NULL;
    return PyModule_Create(&module);
}
