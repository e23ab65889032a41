#!/bin/sh
# tests/live/run.sh LIB SCRIPT [ARGS...] - runs a live-mode test (tests/live/*.py)
# with the current-stack venv (.venv-current: torch 2.15.0, transformers,
# peft; tools/oracle_venv.sh --current) against the shared library LIB.
# A library built with ZO_SANITIZE=ON gets the ASan runtime preloaded into
# the interpreter (leak detection off: CPython and torch keep their
# allocations to exit); UBSan stays fatal.  77 (skip) when the venv or the
# library is missing.
set -u
lib=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${ZO_LIVE_PYTHON:-$root/.venv-current/bin/python}
if [ ! -x "$py" ]; then
    echo "live: no current-stack venv at $py (tools/oracle_venv.sh --current): skip"
    exit 77
fi
if [ ! -f "$lib" ]; then
    echo "live: $lib not built: skip"
    exit 77
fi
if grep -q __asan_init "$lib" 2>/dev/null; then
    # the runtime of the compiler that built it (ZO_LIVE_CC: CMAKE_C_COMPILER)
    cc=${ZO_LIVE_CC:-${CC:-clang}}
    asan=$("$cc" -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
    [ -f "$asan" ] || asan=$("$cc" -print-file-name=libasan.so 2>/dev/null)
    if [ ! -f "$asan" ]; then
        echo "live: $lib is sanitized but the ASan runtime library was not found: skip"
        exit 77
    fi
    export LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}"
    export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:print_stacktrace=1"
fi
export ZOFFLOAD_LIB="$lib"
export PYTHONDONTWRITEBYTECODE=1
exec "$py" "$@"
