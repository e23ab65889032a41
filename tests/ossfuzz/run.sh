#!/usr/bin/env bash
# tests/ossfuzz/run.sh - runs ./build.sh the way OSS-Fuzz's `compile` does
# (infra/base-images/base-builder: compile + Dockerfile ENV) for each
# SANITIZER and checks what it leaves in $OUT.
#
#   tests/ossfuzz/run.sh [address] [undefined] [memory] [coverage]
#                        (default: all four)
#
# For each sanitizer it sets, like compile does with FUZZING_ENGINE=libfuzzer:
#   CC=clang CXX=clang++
#   CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only
#           -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION $SANITIZER_FLAGS $COVERAGE_FLAGS"
#   CXXFLAGS="$CFLAGS -stdlib=libc++" (only if libc++ can link here)
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer, SRC, OUT, WORK, SANITIZER,
#   FUZZING_ENGINE, ARCHITECTURE
# with SANITIZER_FLAGS/COVERAGE_FLAGS as OSS-Fuzz's base-builder Dockerfile
# defines them (COVERAGE_FLAGS=-fsanitize=fuzzer-no-link, or the profile
# flags for SANITIZER=coverage), runs `bash -eu $SRC/zoffload/build.sh` with
# no arguments from $SRC/zoffload, and asserts:
#   - fuzz_hooks, fuzz_api, fuzz_scn_parse are in $OUT, executable, and are
#     the only executables there (no replay drivers, no test programs);
#   - each .dict/.options of fuzz/ and each corpus/seeds/<t>/ zip is beside
#     its target; the zips list every seed;
#   - the binaries carry the sanitizer's runtime (__asan_init,
#     __ubsan_handle_*, __msan_init, __llvm_profile_*) - i.e. $CFLAGS reached
#     every compile - and no CUDA/NCCL library is linked;
#   - every target runs: on each seed of its zip (first 20), or 100 fixed
#     pseudo-random inputs for a target without seeds, exit 0; the coverage build writes a
#     profile that llvm-profdata merges.
# Build trees are kept in build-ci-ossfuzz/<sanitizer>/ (re-runs are
# incremental).  Exit 0 when every sanitizer passed.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BASE="$ROOT/build-ci-ossfuzz"
TARGETS=(fuzz_hooks fuzz_api fuzz_scn_parse)

say() { printf '[ossfuzz] %s\n' "$*"; }
failures=0
check() { # check DESCRIPTION COMMAND... : one assertion
    local what="$1"; shift
    if "$@" >/dev/null 2>&1; then
        say "  ok: $what"
    else
        say "  FAIL: $what"
        failures=$((failures + 1))
    fi
}

base_cflags="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
SANITIZER_FLAGS_address="-fsanitize=address -fsanitize-address-use-after-scope"
SANITIZER_FLAGS_undefined="-fsanitize=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr -fno-sanitize-recover=array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
SANITIZER_FLAGS_memory="-fsanitize=memory -fsanitize-memory-track-origins"
SANITIZER_FLAGS_coverage=""
COVERAGE_FLAGS_default="-fsanitize=fuzzer-no-link"
COVERAGE_FLAGS_coverage="-fprofile-instr-generate -fcoverage-mapping -pthread -Wl,--no-as-needed -Wl,-ldl -Wl,-lm -Wno-unused-command-line-argument"

have_libcxx() {
    echo 'int main(){return 0;}' | clang++ -stdlib=libc++ -x c++ - -o /dev/null >/dev/null 2>&1
}

run_one() {
    local san="$1"
    local d="$BASE/$san"
    local src="$d/src"
    mkdir -p "$src" "$d/work"
    rm -rf "$d/out"; mkdir -p "$d/out"
    ln -sfn "$ROOT" "$src/zoffload"
    local sflags cflags
    case "$san" in
        address) sflags="$SANITIZER_FLAGS_address" ;;
        undefined) sflags="$SANITIZER_FLAGS_undefined" ;;
        memory) sflags="$SANITIZER_FLAGS_memory" ;;
        coverage) sflags="$SANITIZER_FLAGS_coverage" ;;
        *) say "unknown sanitizer $san"; return 2 ;;
    esac
    if [[ "$san" == coverage ]]; then
        cflags="$base_cflags $sflags $COVERAGE_FLAGS_coverage"
    else
        cflags="$base_cflags $sflags $COVERAGE_FLAGS_default"
    fi
    local cxxflags="$cflags"
    if have_libcxx; then cxxflags="$cflags -stdlib=libc++"; fi
    say "SANITIZER=$san: compile (log $d/compile.log)"
    local t0=$SECONDS rc=0
    (
        cd "$src/zoffload"
        env -i PATH="$PATH" HOME="${HOME:-/tmp}" \
            CC=clang CXX=clang++ CFLAGS="$cflags" CXXFLAGS="$cxxflags" \
            LIB_FUZZING_ENGINE=-fsanitize=fuzzer FUZZING_ENGINE=libfuzzer SANITIZER="$san" \
            ARCHITECTURE=x86_64 SRC="$src" OUT="$d/out" WORK="$d/work" \
            bash -eu ./build.sh
    ) >"$d/compile.log" 2>&1 || rc=$?
    if ((rc != 0)); then
        tail -n 30 "$d/compile.log"
        say "  FAIL: build.sh exited $rc under SANITIZER=$san"
        failures=$((failures + 1))
        return 0
    fi
    say "  built in $((SECONDS - t0)) s"
    local out="$d/out" t
    check "CMake used \$CC (clang)" grep -q '^CMAKE_C_COMPILER:.*clang' "$d/work/build-oss-fuzz/CMakeCache.txt"
    local exes
    exes="$(find "$out" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort | tr '\n' ' ')"
    check "only the engine targets are executables in \$OUT ($exes)" test "$exes" == "fuzz_api fuzz_hooks fuzz_scn_parse "
    local marker
    case "$san" in
        address) marker='__asan_init' ;;
        undefined) marker='__ubsan_handle_' ;;
        memory) marker='__msan_init' ;;
        coverage) marker='__llvm_profile_' ;;
    esac
    for t in "${TARGETS[@]}"; do
        check "$t is in \$OUT and executable" test -x "$out/$t"
        [[ -x "$out/$t" ]] || continue
        check "$t carries the $san runtime ($marker)" sh -c "nm '$out/$t' | grep -q '$marker'"
        check "$t links no CUDA/NCCL library" sh -c "! ldd '$out/$t' | grep -Eqi 'cuda|nccl'"
        local ext
        for ext in dict options; do
            if [[ -f "$ROOT/fuzz/$t.$ext" ]]; then
                check "$t.$ext beside it" cmp -s "$ROOT/fuzz/$t.$ext" "$out/$t.$ext"
            fi
        done
        local runenv=(env ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:allocator_may_return_null=1
                      UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:silence_unsigned_overflow=1
                      MSAN_OPTIONS=halt_on_error=1 LLVM_PROFILE_FILE="$d/prof-%p.profraw")
        rm -f "$d"/prof-*.profraw
        if [[ -d "$ROOT/corpus/seeds/$t" ]]; then
            local zip="$out/${t}_seed_corpus.zip" n_seeds
            n_seeds=$(find "$ROOT/corpus/seeds/$t" -maxdepth 1 -type f | wc -l)
            check "${t}_seed_corpus.zip beside it" test -f "$zip"
            [[ -f "$zip" ]] || continue
            check "${t}_seed_corpus.zip lists all $n_seeds seeds" \
                sh -c "test \$(python3 -c 'import sys,zipfile; print(len(zipfile.ZipFile(sys.argv[1]).namelist()))' '$zip') -eq $n_seeds"
            rm -rf "$d/seeds-$t"; mkdir -p "$d/seeds-$t"
            python3 -c 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$zip" "$d/seeds-$t"
            local seeds=()
            mapfile -t seeds < <(find "$d/seeds-$t" -type f | sort | head -n 20)
            check "$t runs ${#seeds[@]} seeds from its zip (exit 0)" \
                "${runenv[@]}" "$out/$t" -runs=0 "${seeds[@]}"
        else
            # no seeds: 100 fixed pseudo-random inputs (a coverage build has
            # no libFuzzer feedback to generate inputs from)
            rm -rf "$d/gen-$t"; mkdir -p "$d/gen-$t"
            python3 -c 'import random,sys
r = random.Random(1)
for i in range(100):
    open("%s/in-%03d" % (sys.argv[1], i), "wb").write(bytes(r.randrange(256) for _ in range(r.randrange(1, 1024))))' "$d/gen-$t"
            check "$t runs 100 generated inputs (exit 0)" \
                "${runenv[@]}" "$out/$t" -runs=0 "$d/gen-$t"
        fi
        if [[ "$san" == coverage ]]; then
            check "$t wrote a coverage profile that llvm-profdata merges" \
                sh -c "ls '$d'/prof-*.profraw && llvm-profdata merge -sparse '$d'/prof-*.profraw -o '$d/$t.profdata'"
        fi
    done
}

sans=("$@")
((${#sans[@]})) || sans=(address undefined memory coverage)
t_all=$SECONDS
for s in "${sans[@]}"; do run_one "$s"; done
say "${#sans[@]} sanitizer build(s) in $((SECONDS - t_all)) s; $failures failed assertion(s)"
((failures == 0))
