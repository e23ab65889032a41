#!/usr/bin/env bash
# tools/deps.sh - install what zoffload's builds and tests need, when it is
# missing (Debian/Ubuntu, apt-get; sudo when not root): cmake, clang and its
# libFuzzer runtime, pkg-config, cmocka, Debian's python3-torch (the torch
# 1.13 oracle), zip, Open MPI, python3-venv.  Does nothing when everything is
# there; ZO_NO_APT=1 skips the check.  `./build.sh deps` runs it, and every
# build.sh mode that builds calls it first.  The oracles' PyPI venvs are
# tools/oracle_venv.sh's job.  build.sh sources it for ensure_deps and
# clang_major; run on its own it installs and exits.

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    set -euo pipefail
    say() { printf '[deps] %s\n' "$*" >&2; }
    die() { printf '[deps] error: %s\n' "$*" >&2; exit 1; }
fi

clang_major() {
    clang --version 2>/dev/null | sed -n 's/.*clang version \([0-9][0-9]*\).*/\1/p' | head -n1
}

have_libfuzzer() {
    command -v clang >/dev/null 2>&1 || return 1
    local rd arch
    rd="$(clang -print-resource-dir 2>/dev/null)" || return 1
    arch="$(uname -m)"
    [[ -f "$rd/lib/linux/libclang_rt.fuzzer-$arch.a" ||
       -f "$rd/lib/$arch-unknown-linux-gnu/libclang_rt.fuzzer.a" ]]
}

have_cmocka() {
    if command -v pkg-config >/dev/null 2>&1 && pkg-config --exists cmocka; then
        return 0
    fi
    [[ -f /usr/include/cmocka.h ]]
}

have_torch() {
    [[ -x /usr/bin/python3 ]] || return 1
    /usr/bin/python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("torch") is None)' \
        >/dev/null 2>&1
}

apt_has() { apt-cache show "$1" >/dev/null 2>&1; }

# The package that ships libFuzzer for the installed (or about to be
# installed) clang: Debian 12 splits it into libclang-rt-N-dev, older
# releases keep it in libclang-common-N-dev.
libfuzzer_package() {
    local major
    major="$(clang_major)"
    if [[ -n "$major" ]]; then
        if apt_has "libclang-rt-$major-dev"; then echo "libclang-rt-$major-dev"; return; fi
        if apt_has "libclang-common-$major-dev"; then echo "libclang-common-$major-dev"; return; fi
    fi
    if apt_has libclang-rt-dev; then echo libclang-rt-dev; else echo libclang-common-dev; fi
}

ensure_deps() {
    if [[ "${ZO_NO_APT:-0}" == 1 ]]; then
        say "ZO_NO_APT=1: not checking dependencies"
        return 0
    fi
    local missing=() need_fuzzer=0
    command -v cmake >/dev/null 2>&1 || missing+=(cmake)
    command -v clang >/dev/null 2>&1 || missing+=(clang)
    have_libfuzzer || need_fuzzer=1
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    have_cmocka || missing+=(libcmocka-dev)
    have_torch || missing+=(python3-torch)
    command -v zip >/dev/null 2>&1 || missing+=(zip)
    # Open MPI: the MPI backend and its multi-process tests (tests/mpi:
    # ctest mpi/replay, mpi/divergence under mpiexec -np 4) and the NCCL
    # backend's MPI bootstrap check (nccl/mpi_check)
    command -v mpicc >/dev/null 2>&1 || missing+=(libopenmpi-dev)
    command -v mpirun >/dev/null 2>&1 || missing+=(openmpi-bin)
    # the DeepSpeed oracle's venv (tools/oracle_venv.sh)
    /usr/bin/python3 -c 'import ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
    if ((${#missing[@]} == 0 && need_fuzzer == 0)); then
        return 0
    fi
    local what="${missing[*]:-}"
    ((need_fuzzer)) && what="$what libFuzzer"
    command -v apt-get >/dev/null 2>&1 ||
        die "missing build dependencies ($what) and no apt-get to install them"
    local sudo=()
    if [[ "$(id -u)" != 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "missing build dependencies ($what), not root and no sudo"
        sudo=(sudo)
    fi
    # env: sudo does not pass DEBIAN_FRONTEND through by default.
    local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
    say "installing missing dependencies: ${what# }"
    "${apt[@]}" update -qq
    if ((${#missing[@]})); then
        "${apt[@]}" install -y -qq --no-install-recommends "${missing[@]}"
    fi
    # libFuzzer last: its package name depends on the clang just installed.
    if ! have_libfuzzer; then
        local pkg
        pkg="$(libfuzzer_package)"
        "${apt[@]}" install -y -qq --no-install-recommends "$pkg"
        have_libfuzzer || die "installed $pkg but clang's libFuzzer (libclang_rt.fuzzer) is still missing"
    fi
    have_cmocka || die "libcmocka-dev installed but cmocka.h/pkg-config cmocka not found"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
    (($# == 0)) || die "takes no arguments (got: $*)"
    ensure_deps
fi
