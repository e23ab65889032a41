"""zoffload._lib - ctypes binding to libzoffload (include/zoffload.h).

Thin: one Python method per C entry point used by the hook protocol, the
structs of the public headers mirrored field for field, and every non-zero
zo_status raised as ZoffloadError carrying zo_strerror() and zo_last_error().

Where the library comes from (first that exists):
  1. $ZOFFLOAD_LIB (a path to libzoffload.so);
  2. libzoffload.so next to this file (cmake --install, or a copy);
  3. the repository's build directories, build/ first (./build.sh), then
     build-test/ (the sanitized test build);
  4. ctypes.util.find_library("zoffload") (an installed library).
A library built with ZO_SANITIZE=ON needs the ASan runtime loaded first
(LD_PRELOAD=$(clang -print-file-name=libclang_rt.asan-x86_64.so)); loading
it without raises ZoffloadError saying so, instead of the loader's abort.
"""

import ctypes
import ctypes.util
import os

c_u8, c_u32, c_u64, c_i64, c_int, c_size = (ctypes.c_uint8, ctypes.c_uint32, ctypes.c_uint64,
                                            ctypes.c_int64, ctypes.c_int, ctypes.c_size_t)
c_vp = ctypes.c_void_p

# status codes (zoffload.h)
OK = 0
ERR_INVALID_ARG, ERR_NOMEM, ERR_BAD_HANDLE, ERR_PROTOCOL, ERR_EXISTS = -1, -2, -3, -4, -5
ERR_OVERFLOW, ERR_BACKEND, ERR_TRACE, ERR_STATE, ERR_NOT_AVAILABLE = -6, -7, -8, -9, -10
ERR_VERSION, ERR_LIMIT, ERR_UNSUPPORTED, ERR_NO_DEVICE, ERR_COLLECTIVE_MISMATCH = -11, -12, -13, -14, -15

NO_MODULE = 0xFFFFFFFF
NO_PARAM = 0xFFFFFFFF
MODULE_Z3_LEAF, MODULE_GATHER_ALWAYS = 0x1, 0x2
PARAM_FROZEN = 0x1
FWD_ROOT, FWD_EVAL = 0x1, 0x2
CALL_GRAD = 0x1
NOT_AVAILABLE, INFLIGHT, AVAILABLE = 0, 1, 2
POLICIES = ("per-call", "reset-on-forward", "lazy-init", "init-at-register")
DS_PROFILES = ("0.19", "0.19-hooks", "0.15")

EVENT_KINDS = ("FORWARD_BEGIN", "FORWARD_END", "PRE_FORWARD", "TRACK_INPUTS", "POST_FORWARD",
               "TRACK_OUTPUTS", "OUTPUT_GRAD", "INPUT_GRAD", "PARAM_GRAD_READY", "PARAM_ACCESS",
               "BACKWARD_BEGIN", "BACKWARD_END", "FORWARD_ABORT", "RELEASE_ALL", "RESET_STEP",
               "PARAM_STATE", "GATHER", "PREFETCH", "WAIT", "RELEASE", "UNPLANNED_FETCH",
               "WINDOW_OPEN", "WINDOW_CLOSE", "LEFTOVER", "COUNTER_UNINIT", "TRACE_COMPLETE",
               "TRACE_INVALIDATED", "ERROR")
EV = {name: i for i, name in enumerate(EVENT_KINDS)}
EVENT_KINDS_LIVE = list(EVENT_KINDS)  # the loaded library's names, index = zo_event_kind


class ZoffloadError(Exception):
    """A libzoffload call failed (status is the negative zo_status, or None
    for an error found on the Python side), or the binding was misused."""

    def __init__(self, message, status=None, call=None):
        super().__init__(message)
        self.status = status
        self.call = call


class Allocator(ctypes.Structure):
    _fields_ = [("alloc", c_vp), ("free", c_vp), ("opaque", c_vp)]


class Config(ctypes.Structure):
    """zo_config, version 3."""
    _fields_ = [("size", c_size), ("version", c_u32), ("world_size", c_int), ("rank", c_int),
                ("grads_policy", c_int), ("param_persistence_threshold", c_u64),
                ("model_persistence_threshold", c_u64), ("prefetch_bucket_size", c_u64),
                ("max_live_parameters", c_u64), ("max_reuse_distance", c_u64),
                ("backend", c_vp), ("allocator", Allocator), ("on_event", c_vp),
                ("event_user", c_vp), ("verify_collectives", c_int), ("ds_profile", c_int)]


def config_init():
    """ZO_CONFIG_INIT."""
    c = Config()
    c.size, c.version, c.world_size, c.rank, c.grads_policy = ctypes.sizeof(Config), 3, 1, 0, 0
    c.param_persistence_threshold = 100000
    c.model_persistence_threshold = 2 ** 64 - 1
    c.prefetch_bucket_size = 50000000
    c.max_live_parameters = 1000000000
    c.max_reuse_distance = 1000000000
    c.ds_profile = 0
    return c


class Event(ctypes.Structure):
    _fields_ = [("kind", c_int), ("seq", c_u64), ("step", c_u64), ("module", c_u32),
                ("param", c_u32), ("graph", c_u64), ("counter_before", c_i64),
                ("counter_after", c_i64), ("counter_valid", c_int), ("from_", c_int),
                ("to", c_int), ("status", c_int), ("detail", ctypes.c_char_p)]


EVENT_FN = ctypes.CFUNCTYPE(None, c_vp, ctypes.POINTER(Event))


class ParamInfo(ctypes.Structure):
    _fields_ = [("status", c_int), ("numel", c_u64), ("partition_numel", c_u64),
                ("elem_size", c_u32), ("owner", c_u32), ("persistent", c_int),
                ("trainable", c_int), ("inflight", c_int), ("n_active", c_u32),
                ("gathers", c_u64)]


class ModuleInfo(ctypes.Structure):
    _fields_ = [("parent", c_u32), ("flags", ctypes.c_uint), ("in_leaf", c_int),
                ("grads_remaining", c_i64), ("grads_initialised", c_int),
                ("pre_backward_ref_cnt", c_i64), ("open_windows", c_u32), ("open_calls", c_u32),
                ("n_params", c_u64), ("gather_holder", c_u32)]


class Stats(ctypes.Structure):
    _fields_ = [("n_modules", c_u32), ("n_params", c_u32), ("gathers", c_u64),
                ("prefetches", c_u64), ("releases", c_u64), ("bytes_gathered", c_u64),
                ("live_numel", c_u64), ("peak_live_numel", c_u64),
                ("persistent_live_numel", c_u64), ("inflight_params", c_u64),
                ("blocking_waits", c_u64), ("unplanned_fetches", c_u64), ("leftovers", c_u64),
                ("uninit_counter_events", c_u64), ("trace_invalidations", c_u64),
                ("steps", c_u64), ("open_windows", c_u64), ("forward_stack_depth", c_u32)]

    def as_dict(self):
        return {name: getattr(self, name) for name, _ in self._fields_}


class GatherItem(ctypes.Structure):
    _fields_ = [("param", c_u32), ("full", c_vp), ("numel", c_u64), ("partition_numel", c_u64),
                ("elem_size", c_u32)]


# zo_backend_ops (version 2) callbacks
_F_INT = ctypes.CFUNCTYPE(c_int, c_vp)
_F_PARAM_ADD = ctypes.CFUNCTYPE(c_int, c_vp, c_u32, c_u64, c_u32, c_u64)
_F_PARAM_REMOVE = ctypes.CFUNCTYPE(None, c_vp, c_u32)
_F_FULL_ALLOC = ctypes.CFUNCTYPE(c_int, c_vp, c_u32, c_size, ctypes.POINTER(c_vp))
_F_FULL_FREE = ctypes.CFUNCTYPE(None, c_vp, c_u32, c_vp)
_F_GATHER = ctypes.CFUNCTYPE(c_int, c_vp, ctypes.POINTER(GatherItem), c_size, ctypes.POINTER(c_vp))
_F_WAIT = ctypes.CFUNCTYPE(c_int, c_vp, c_vp)
_F_QUERY = ctypes.CFUNCTYPE(c_int, c_vp, c_vp, ctypes.POINTER(c_int))
_F_WORK_FREE = ctypes.CFUNCTYPE(None, c_vp, c_vp)
_F_REDUCE = ctypes.CFUNCTYPE(c_int, c_vp, c_u32, c_vp, c_vp, c_u64, c_u64, c_int)
_F_LAST_ERROR = ctypes.CFUNCTYPE(c_vp, c_vp)
_F_DESTROY = ctypes.CFUNCTYPE(None, c_vp)
_F_EXCHANGE = ctypes.CFUNCTYPE(c_int, c_vp, c_vp, c_size, c_vp)


class BackendOps(ctypes.Structure):
    _fields_ = [("version", c_u32), ("name", ctypes.c_char_p), ("world_size", _F_INT),
                ("rank", _F_INT), ("param_add", _F_PARAM_ADD), ("param_remove", _F_PARAM_REMOVE),
                ("full_alloc", _F_FULL_ALLOC), ("full_free", _F_FULL_FREE),
                ("all_gather_start", _F_GATHER), ("wait", _F_WAIT), ("query", _F_QUERY),
                ("work_free", _F_WORK_FREE), ("reduce_scatter", _F_REDUCE),
                ("last_error", _F_LAST_ERROR), ("destroy", _F_DESTROY), ("exchange", _F_EXCHANGE)]


class Backend(ctypes.Structure):
    _fields_ = [("ops", ctypes.POINTER(BackendOps)), ("ctx", c_vp)]


_SIGS = {
    "zo_strerror": (ctypes.c_char_p, [c_int]),
    "zo_last_error": (ctypes.c_char_p, [c_vp]),
    "zo_policy_name": (ctypes.c_char_p, [c_int]),
    "zo_policy_from_name": (c_int, [ctypes.c_char_p, ctypes.POINTER(c_int)]),
    "zo_ds_profile_name": (ctypes.c_char_p, [c_int]),
    "zo_param_status_name": (ctypes.c_char_p, [c_int]),
    "zo_event_kind_name": (ctypes.c_char_p, [c_int]),
    "zo_transition_legal": (c_int, [c_int, c_int]),
    "zo_runtime_create": (c_int, [ctypes.POINTER(Config), ctypes.POINTER(c_vp)]),
    "zo_runtime_destroy": (c_int, [c_vp]),
    "zo_module_register": (c_int, [c_vp, c_u32, ctypes.c_char_p, ctypes.c_uint, ctypes.POINTER(c_u32)]),
    "zo_param_register": (c_int, [c_vp, c_u32, ctypes.c_char_p, c_u64, c_u32, ctypes.c_uint,
                                  ctypes.POINTER(c_u32)]),
    "zo_module_use_param": (c_int, [c_vp, c_u32, c_u32]),
    "zo_forward_begin": (c_int, [c_vp, ctypes.c_uint, ctypes.POINTER(c_u64)]),
    "zo_forward_end": (c_int, [c_vp, c_u64]),
    "zo_pre_forward": (c_int, [c_vp, c_u32, ctypes.c_uint]),
    "zo_track_inputs": (c_int, [c_vp, c_u32, c_size, ctypes.POINTER(c_u8), ctypes.POINTER(c_u64)]),
    "zo_post_forward": (c_int, [c_vp, c_u32]),
    "zo_track_outputs": (c_int, [c_vp, c_u32, c_size, ctypes.POINTER(c_u8), ctypes.POINTER(c_u64)]),
    "zo_forward_abort": (c_int, [c_vp, c_u32]),
    "zo_backward_begin": (c_int, [c_vp, c_u64, c_int]),
    "zo_output_grad": (c_int, [c_vp, c_u64]),
    "zo_input_grad": (c_int, [c_vp, c_u64]),
    "zo_param_grad_ready": (c_int, [c_vp, c_u32]),
    "zo_backward_end": (c_int, [c_vp, c_u64]),
    "zo_graph_discard": (c_int, [c_vp, c_u64]),
    "zo_param_access": (c_int, [c_vp, c_u32, c_u32, ctypes.POINTER(c_vp), ctypes.POINTER(c_size)]),
    "zo_release_all": (c_int, [c_vp]),
    "zo_reset_step": (c_int, [c_vp, c_int]),
    "zo_param_get_info": (c_int, [c_vp, c_u32, ctypes.POINTER(ParamInfo)]),
    "zo_param_is_active_for": (c_int, [c_vp, c_u32, c_u32]),
    "zo_module_get_info": (c_int, [c_vp, c_u32, ctypes.POINTER(ModuleInfo)]),
    "zo_module_params": (c_int, [c_vp, c_u32, ctypes.POINTER(c_u32), c_size, ctypes.POINTER(c_size)]),
    "zo_get_stats": (c_int, [c_vp, ctypes.POINTER(Stats)]),
    "zo_check_consistency": (c_int, [c_vp]),
}


def _candidates():
    env = os.environ.get("ZOFFLOAD_LIB")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    out = [os.path.join(here, "libzoffload.so")]
    out += [os.path.join(repo, d, "libzoffload.so") for d in ("build", "build-test")]
    found = ctypes.util.find_library("zoffload")
    if found:
        out.append(found)
    return out


_LIB = None


def lib():
    """The loaded library (loaded once).  ZoffloadError if none is found or
    it cannot be loaded (the reason, and what was tried)."""
    global _LIB
    if _LIB is not None:
        return _LIB
    tried = []
    for path in _candidates():
        if not (os.path.exists(path) or not os.path.dirname(path)):
            tried.append(path + " (absent)")
            continue
        if _needs_asan(path) and not _asan_loaded():
            tried.append(path + " (built with ZO_SANITIZE=ON: run with LD_PRELOAD=$(clang "
                         "-print-file-name=libclang_rt.asan-x86_64.so) ASAN_OPTIONS=detect_leaks=0)")
            continue
        try:
            L = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        for name, (res, args) in _SIGS.items():
            f = getattr(L, name)
            f.restype, f.argtypes = res, args
        L.zo_path = path
        _sync_event_kinds(L)
        _check_names(L)
        _LIB = L
        return L
    raise ZoffloadError("libzoffload not found; build it (./build.sh, or cmake --build BUILD --target "
                        "zoffload_shared) or set $ZOFFLOAD_LIB.  Tried: " + "; ".join(tried))


def _sync_event_kinds(L):
    """EVENT_KINDS / EV from the library's own zo_event_kind_name (the
    list above is its order when this was written), so a library with
    more kinds is still read right."""
    names = []
    for k in range(256):
        n = L.zo_event_kind_name(k)
        if not n or n == b"UNKNOWN":
            break
        names.append(n.decode())
    if names and tuple(names) != EVENT_KINDS:
        EVENT_KINDS_LIVE[:] = names
    else:
        EVENT_KINDS_LIVE[:] = list(EVENT_KINDS)
    EV.clear()
    EV.update({name: i for i, name in enumerate(EVENT_KINDS_LIVE)})


def _check_names(L):
    """The policy and DeepSpeed profile names and the status codes above
    are the library's (zoffload.h's X-macro lists, read through
    zo_policy_name / zo_ds_profile_name / zo_strerror): a library whose lists
    differ is refused, so no name is silently mapped to another value."""
    def names(fn):
        out = []
        for k in range(64):
            n = fn(k)
            if not n:
                break
            out.append(n.decode())
        return tuple(out)
    pol = names(L.zo_policy_name)
    prof = names(L.zo_ds_profile_name)
    status = {}
    for k in range(1, 64):
        head = L.zo_strerror(-k).decode().split(":")[0]
        if head == "ZO_ERR_UNKNOWN":
            break
        status[head[len("ZO_"):]] = -k
    mine = {k: v for k, v in globals().items() if k.startswith("ERR_") and isinstance(v, int)}
    if pol != POLICIES or prof != DS_PROFILES or status != mine:
        raise ZoffloadError("%s does not match this binding: policies %s (binding %s), DeepSpeed profiles %s "
                            "(binding %s), status codes %s (binding %s)"
                            % (L.zo_path, pol, POLICIES, prof, DS_PROFILES, sorted(status.items()),
                               sorted(mine.items())))


def _needs_asan(path):
    try:
        with open(path, "rb") as f:
            return b"__asan_init" in f.read()
    except OSError:
        return False


def _asan_loaded():
    try:
        with open("/proc/self/maps") as f:
            maps = f.read()
        return "libclang_rt.asan" in maps or "libasan" in maps
    except OSError:
        return False


def strerror(status):
    return lib().zo_strerror(status).decode()


def last_error(rt_ptr=None):
    return (lib().zo_last_error(rt_ptr) or b"").decode(errors="replace")


def error_text(call, status, message):
    """"call: ZO_ERR_X: what: message" (the message's own status prefix not repeated)."""
    head = strerror(status)
    if message.startswith(head):
        return "%s: %s" % (call, message)
    return "%s: %s: %s" % (call, head, message) if message else "%s: %s" % (call, head)


def check(status, rt_ptr, call):
    """Raises ZoffloadError for a non-zero status, with zo_last_error(rt_ptr)."""
    if status != OK:
        raise ZoffloadError(error_text(call, status, last_error(rt_ptr)), status, call)


def policy_from_name(name):
    out = c_int()
    check(lib().zo_policy_from_name(name.encode(), ctypes.byref(out)), None, "zo_policy_from_name")
    return out.value


def ds_profile_from_name(name):
    if name not in DS_PROFILES:
        raise ZoffloadError("unknown DeepSpeed profile %r (one of %s)" % (name, ", ".join(DS_PROFILES)))
    return DS_PROFILES.index(name)


def param_status_name(s):
    return lib().zo_param_status_name(s).decode()


class Runtime:
    """One zo_runtime: create, the hook entry points, introspection, destroy.
    Every method raises ZoffloadError on a non-zero status, with the
    runtime's message; after destroy() every method raises ZoffloadError
    ("runtime destroyed") instead of touching freed memory."""

    def __init__(self, cfg, keep=()):
        L = lib()
        self._L = L
        self._keep = list(keep)  # ctypes callbacks and buffers the C side points into
        self._cfg = cfg
        h = c_vp()
        check(L.zo_runtime_create(ctypes.byref(cfg), ctypes.byref(h)), None, "zo_runtime_create")
        self._h = h.value
        self.after_call = None  # called after every hook entry point (the live checker)
        self.after_error = None  # called with (call, status) before a failed call raises

    @property
    def alive(self):
        return self._h is not None

    def _rt(self, call):
        if self._h is None:
            raise ZoffloadError("%s: the runtime was destroyed (zoffload.torch: close() or unwrap() ran)"
                                % call, None, call)
        return self._h

    def _call(self, name, *args):
        h = self._rt(name)
        st = getattr(self._L, name)(h, *args)
        if st != OK:
            if self.after_error is not None:
                self.after_error(name, st)
            raise ZoffloadError(error_text(name, st, last_error(h)), st, name)
        if self.after_call is not None:
            self.after_call(name)

    def destroy(self):
        if self._h is None:
            return
        h, self._h = self._h, None
        check(self._L.zo_runtime_destroy(h), None, "zo_runtime_destroy")

    def last_error(self):
        return last_error(self._h) if self._h else ""

    # registration
    def module_register(self, parent, name, flags=0):
        out = c_u32()
        self._call("zo_module_register", parent, name.encode(), flags, ctypes.byref(out))
        return out.value

    def param_register(self, owner, name, numel, elem_size, flags=0):
        out = c_u32()
        self._call("zo_param_register", owner, name.encode(), numel, elem_size, flags, ctypes.byref(out))
        return out.value

    def module_use_param(self, m, p):
        self._call("zo_module_use_param", m, p)

    # forward
    def forward_begin(self, flags):
        g = c_u64()
        self._call("zo_forward_begin", flags, ctypes.byref(g))
        return g.value

    def forward_end(self, g):
        self._call("zo_forward_end", g)

    def pre_forward(self, m, flags):
        self._call("zo_pre_forward", m, flags)

    def _track(self, name, m, rg):
        n = len(rg)
        arr = (c_u8 * max(n, 1))(*rg)
        out = (c_u64 * max(n, 1))()
        self._call(name, m, n, arr, out)
        return list(out)[:n]

    def track_inputs(self, m, requires_grad):
        return self._track("zo_track_inputs", m, requires_grad)

    def post_forward(self, m):
        self._call("zo_post_forward", m)

    def track_outputs(self, m, requires_grad):
        return self._track("zo_track_outputs", m, requires_grad)

    def forward_abort(self, catcher):
        self._call("zo_forward_abort", catcher)

    # backward
    def backward_begin(self, g, retain_graph):
        self._call("zo_backward_begin", g, 1 if retain_graph else 0)

    def output_grad(self, h):
        self._call("zo_output_grad", h)

    def input_grad(self, h):
        self._call("zo_input_grad", h)

    def param_grad_ready(self, p):
        self._call("zo_param_grad_ready", p)

    def backward_end(self, g):
        self._call("zo_backward_end", g)

    def graph_discard(self, g):
        self._call("zo_graph_discard", g)

    # access, step
    def param_access(self, m, p):
        """(address, bytes) of p's full tensor, runtime- (backend-) owned."""
        data, n = c_vp(), c_size()
        self._call("zo_param_access", m, p, ctypes.byref(data), ctypes.byref(n))
        return data.value, n.value

    def release_all(self):
        self._call("zo_release_all")

    def reset_step(self, eval_=0):
        self._call("zo_reset_step", eval_)

    # introspection (no after_call: they change nothing)
    def _intro(self, name, *args):
        h = self._rt(name)
        st = getattr(self._L, name)(h, *args)
        if st != OK:
            raise ZoffloadError(error_text(name, st, last_error(h)), st, name)

    def param_info(self, p):
        out = ParamInfo()
        self._intro("zo_param_get_info", p, ctypes.byref(out))
        return out

    def module_info(self, m):
        out = ModuleInfo()
        self._intro("zo_module_get_info", m, ctypes.byref(out))
        return out

    def module_params(self, m):
        n = c_size()
        self._intro("zo_module_params", m, None, 0, ctypes.byref(n))
        buf = (c_u32 * max(n.value, 1))()
        self._intro("zo_module_params", m, buf, n.value, ctypes.byref(n))
        return list(buf)[:n.value]

    def stats(self):
        out = Stats()
        self._intro("zo_get_stats", ctypes.byref(out))
        return out

    def check_consistency(self):
        self._intro("zo_check_consistency")
