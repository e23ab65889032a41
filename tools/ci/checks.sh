# Sourced by ./build.sh (not run on its own): the CI and reliability modes: replay, smoke, msan,
# valgrind, reliability, coverage (docs/ci-fuzzing.md).
# Each function is one build.sh mode or a piece of one; ROOT, JOBS, say and
# die come from build.sh.  The build variants' flags are CMakePresets.json's
# presets (release, test, fuzz, msan, valgrind, coverage).

FUZZ_TARGETS=(fuzz_hooks fuzz_api fuzz_scn_parse)

# corpus_dirs T : the committed corpus directories of target T (one a line)
corpus_dirs() {
    local t="$1" d
    for d in "corpus/seeds/$t" "corpus/regressions/$t"; do
        [[ -d "$d" ]] && echo "$ROOT/$d"
    done
    if [[ "$t" == fuzz_scn_parse ]]; then
        # the parser also replays every scenario text and the open findings
        for d in corpus/models corpus/regressions tests/corpus/open-findings; do
            [[ -d "$d" ]] && echo "$ROOT/$d"
        done
    fi
    # inputs the smoke runs kept (fuzz_api has no committed corpus)
    for d in build-ci-smoke/"$t"-*/corpus; do
        [[ -d "$d" ]] && echo "$ROOT/$d"
    done
    return 0
}

# replay_all BUILD_DIR [wrapper...] : every target's corpora through its
# engine-less replay driver; fails on the first failing replay
replay_all() {
    local dir="$1"; shift
    local t dirs n
    for t in "${FUZZ_TARGETS[@]}"; do
        local bin="$dir/fuzz/${t}_replay"
        [[ -x "$bin" ]] || die "$bin was not built"
        mapfile -t dirs < <(corpus_dirs "$t")
        if [[ "$t" == fuzz_api ]]; then
            # no committed corpus: 200 fixed pseudo-random programs as well
            mkdir -p "$dir/generated-$t"
            python3 -c 'import random,sys
r = random.Random(6)
for i in range(200):
    open("%s/gen-%03d" % (sys.argv[1], i), "wb").write(bytes(r.randrange(256) for _ in range(r.randrange(1, 2048))))' "$dir/generated-$t"
            dirs+=("$dir/generated-$t")
        fi
        if ((${#dirs[@]} == 0)); then
            say "replay $t: no corpus"
            continue
        fi
        n=$(find "${dirs[@]}" -maxdepth 1 -type f | wc -l)
        say "replay $t: $n inputs from ${dirs[*]#$ROOT/}"
        "$@" "$bin" "${dirs[@]}" >"$dir/replay-$t.log" 2>&1 || {
            tail -n 40 "$dir/replay-$t.log" >&2
            die "replay of $t failed (log: $dir/replay-$t.log)"
        }
        tail -n 2 "$dir/replay-$t.log" >&2
    done
}

mode_replay() {
    ensure_deps
    if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
        configure_sanitized fuzz
    fi
    cmake --build build-fuzz -j"$JOBS" --target fuzz_hooks_replay fuzz_api_replay fuzz_scn_parse_replay >&2
    replay_all build-fuzz
    say "replay: every corpus replayed clean (ASan+UBSan)"
}

# Prints one crash input of target t readably: fuzz_hooks crashes are
# minimised by zofuzz run itself (printed as .scn); fuzz_api prints its
# call sequence; fuzz_scn_parse its text.
show_crash() {
    local t="$1" f="$2"
    case "$t" in
        fuzz_hooks)
            if [[ -f "$f.scn" ]]; then
                echo "---- $f (minimised scenario) ----"; cat "$f.scn"
            else
                echo "---- $f (zofuzz minimize) ----"
                build-fuzz/fuzz/zofuzz minimize "$f" 2>&1 | tail -n 80 || true
            fi ;;
        fuzz_api)
            echo "---- $f: call sequence (ZOFUZZ_TRACE=1 fuzz_api_replay) ----"
            ZOFUZZ_TRACE=1 build-fuzz/fuzz/fuzz_api_replay "$f" 2>&1 | tail -n 120 || true ;;
        *)
            echo "---- $f: input text ----"
            head -c 4000 "$f" | cat -v; echo
            build-fuzz/fuzz/"${t}_replay" "$f" 2>&1 | tail -n 40 || true ;;
    esac
}

mode_smoke() {
    local secs="${1:-60}" t rc failed=()
    (($# <= 1)) || die "smoke takes one argument, the seconds per target (got: $*)"
    # checked before the build: a positive decimal of at most 7 digits
    # (no leading 0: bash and zofuzz would read 010 differently)
    [[ "$secs" =~ ^[1-9][0-9]{0,6}$ ]] || die "smoke: seconds must be a number in 1..9999999, got '$secs'"
    local policy="${ZO_SMOKE_POLICY:-per-call}"
    case "$policy" in
        per-call|reset-on-forward|lazy-init|init-at-register) ;;
        *) die "smoke: ZO_SMOKE_POLICY '$policy' is not per-call, reset-on-forward, lazy-init or init-at-register" ;;
    esac
    mode_fuzz
    local work="$ROOT/build-ci-smoke"
    mkdir -p "$work"
    # ZO_SMOKE_POLICY (by hand only): a legacy policy, to see the crash path
    for t in "${FUZZ_TARGETS[@]}"; do
        [[ -x build-fuzz/fuzz/$t ]] || die "build-fuzz/fuzz/$t was not built"
        say "smoke: $t for ${secs}s (policy $policy)"
        rc=0
        touch "$work/.stamp-$t"
        build-fuzz/fuzz/zofuzz run --target "$t" --time "$secs" --work "$work" \
            --policy "$policy" --progress 20 --max-repro 3 || rc=$?
        if ((rc == 1)); then
            failed+=("$t")
            local c
            while IFS= read -r c; do show_crash "$t" "$c"; done < <(
                find "$work/$t-"*/crashes-* -maxdepth 1 -type f \
                    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
                    ! -name '*.scn' -newer "$work/.stamp-$t" 2>/dev/null | head -n 3)
        elif ((rc != 0)); then
            die "smoke: zofuzz run --target $t failed to run (exit $rc)"
        fi
    done
    ((${#failed[@]} == 0)) || die "smoke: crashes found in ${failed[*]} (inputs under $work/<target>-$policy/crashes-*)"
    say "smoke: ${FUZZ_TARGETS[*]} ran ${secs}s each without a crash"
}

mode_msan() {
    ensure_deps
    command -v clang >/dev/null 2>&1 || die "clang not found"
    # C only: libc is the only uninstrumented code, which MSan intercepts.
    # No cmocka (not MSan-instrumented), no engine (replay drivers only).
    configure_preset msan
    cmake --build build-msan -j"$JOBS" --target fuzz_hooks_replay fuzz_api_replay \
        fuzz_scn_parse_replay zofuzz >&2
    export MSAN_OPTIONS="${MSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
    replay_all build-msan
    local f n=0
    for f in corpus/models/*.scn corpus/regressions/*.scn; do
        build-msan/fuzz/zofuzz verify "$f" >build-msan/verify.log 2>&1 || {
            cat build-msan/verify.log >&2; die "msan: zofuzz verify $f failed"; }
        n=$((n + 1))
    done
    say "msan: zofuzz verify: $n scenario files clean"
    build-msan/fuzz/zofuzz check --seed 1 --trials 300 --policy per-call --invariants no-I8 --no-minimize \
        >build-msan/smoke.log 2>&1 || { tail -n 40 build-msan/smoke.log >&2; die "msan: zofuzz check failed"; }
    say "msan: zofuzz check --seed 1 --trials 300 clean"
    say "msan: harness clean under MemorySanitizer"
}

mode_valgrind() {
    ensure_deps
    command -v valgrind >/dev/null 2>&1 || die "valgrind not found (apt-get install valgrind)"
    local cc=gcc
    command -v clang >/dev/null 2>&1 && cc=clang
    # DWARF 4: valgrind 3.16 cannot read clang 14's default DWARF 5
    CC=$cc configure_preset valgrind
    local units=() f
    for f in tests/unit/test_*.c; do units+=("$(basename "$f" .c)"); done
    cmake --build build-valgrind -j"$JOBS" --target "${units[@]}" fuzz_hooks_replay fuzz_api_replay \
        fuzz_scn_parse_replay >&2
    CC=$cc build_reliability build-valgrind/reliability -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gdwarf-4" -DZO_SANITIZE=OFF -DZO_POISON=ON
    # memcheck verdict: exit 99 on an error; "ERROR SUMMARY: 0 errors" must be
    # in the log (a valgrind that gave up exits 1 without one)
    local vg=(valgrind --tool=memcheck --error-exitcode=99 --leak-check=full
              --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
              --track-origins=yes)
    local bad=0 u
    vg_clean() { grep -q 'ERROR SUMMARY: 0 errors' "$1" && ! grep -q "I can't recover" "$1"; }
    for u in "${units[@]}"; do
        if "${vg[@]}" "build-valgrind/tests/$u" >"build-valgrind/$u.valgrind.log" 2>&1 &&
            vg_clean "build-valgrind/$u.valgrind.log"; then
            say "valgrind: $u clean"
        else
            bad=1; tail -n 60 "build-valgrind/$u.valgrind.log" >&2; say "valgrind: $u FAILED"
        fi
    done
    # reliability: every backend fault; allocation failure on a small
    # scenario and the public-API scenario (the model loop is too slow here)
    local rel=(build-valgrind/reliability/reliability_backend_fault
               "build-valgrind/reliability/reliability_alloc_fail $ROOT/corpus/regressions/tied-params.scn")
    for u in "${rel[@]}"; do
        local log rc=0
        log="build-valgrind/$(basename "${u%% *}").valgrind.log"
        # shellcheck disable=SC2086
        "${vg[@]}" $u >"$log" 2>&1 || rc=$?
        if ! vg_clean "$log"; then
            bad=1; tail -n 60 "$log" >&2; say "valgrind: $(basename "${u%% *}") memcheck errors or valgrind failed"
        elif ((rc == 0)); then
            say "valgrind: $(basename "${u%% *}") clean"
        elif ((rc == 99)); then
            bad=1; tail -n 60 "$log" >&2; say "valgrind: $(basename "${u%% *}") memcheck errors"
        else
            # a test verdict, not a memory error: the reliability step reports it
            say "valgrind: $(basename "${u%% *}") memcheck clean; the test itself exited $rc (see $log)"
        fi
    done
    replay_all build-valgrind "${vg[@]}" || bad=1
    ((bad == 0)) || die "valgrind memcheck found errors (logs: build-valgrind/*.valgrind.log)"
    say "valgrind: unit tests and corpus replays clean"
}

# build_reliability DIR [cmake args] : the standalone tests/reliability build
build_reliability() {
    local dir="$1"; shift
    cmake -S "$ROOT/tests/reliability" -B "$dir" -DZO_NCCL=OFF -DZO_FUZZ_ENGINE= "$@" >&2
    cmake --build "$dir" -j"$JOBS" >&2
}

mode_reliability() {
    ensure_deps
    CC=clang build_reliability build-reliability -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" -DZO_SANITIZE=ON
    cd build-reliability
    ctest --output-on-failure --no-tests=error --timeout 1800 -j"$JOBS"
}

mode_coverage() {
    ensure_deps
    command -v clang >/dev/null 2>&1 || die "clang not found"
    local profdata llvmcov v
    v="$(clang_major)"
    profdata="$(command -v "llvm-profdata-$v" || command -v llvm-profdata || true)"
    llvmcov="$(command -v "llvm-cov-$v" || command -v llvm-cov || true)"
    [[ -n "$profdata" && -n "$llvmcov" ]] || die "llvm-profdata/llvm-cov not found (apt-get install llvm-$v)"
    local B="$ROOT/build-coverage"
    local covflags="-fprofile-instr-generate -fcoverage-mapping -O0 -g"
    configure_preset coverage
    build_dir "$B"
    CC=clang CFLAGS="$covflags" build_reliability "$B/reliability" -DCMAKE_BUILD_TYPE= -DZO_SANITIZE=OFF -DZO_POISON=ON
    rm -rf "$B/profiles"; mkdir -p "$B/profiles"
    export LLVM_PROFILE_FILE="$B/profiles/%p-%m.profraw"
    # 1. the test suites (a failing test does not stop the report: the
    #    coverage of what ran is still measured; the failures are listed),
    #    less the long oracle runs that ./build.sh test already made and
    #    that add no runtime coverage (DeepSpeed difftests, the exported
    #    upstream scripts, the model captures; the full sets, label long)
    local rc=0
    (cd "$B" && ctest --timeout 900 -j"$JOBS" -LE long -E '^(tools/difftest_deepspeed|corpus/upstream_findings|tools/capture_)' >"$B/ctest.log" 2>&1) || rc=$?
    grep -E 'tests passed|\*\*\*Failed|Not Run|Timeout' "$B/ctest.log" >&2 || true
    (cd "$B/reliability" && ctest --timeout 1800 -j"$JOBS" >"$B/ctest-reliability.log" 2>&1) || rc=$?
    grep -E 'tests passed|\*\*\*Failed' "$B/ctest-reliability.log" >&2 || true
    # 2. every corpus through the replay drivers
    replay_all "$B" || rc=$?
    unset LLVM_PROFILE_FILE
    # 3. merge and report
    "$profdata" merge -sparse "$B"/profiles/*.profraw -o "$B/zoffload.profdata"
    local objs=() o first=""
    while IFS= read -r o; do
        if [[ -z "$first" ]]; then first="$o"; else objs+=(-object "$o"); fi
    done < <(find "$B" -name CMakeFiles -prune -o -type f -perm -u+x ! -name '*.so*' -print |
                 while IFS= read -r o; do [[ "$(head -c4 "$o" | tail -c3)" == ELF ]] && echo "$o"; done | sort)
    [[ -n "$first" ]] || die "coverage: no instrumented binaries found in $B"
    local srcs=()
    for o in runtime/*.c; do [[ "$o" == runtime/backend_nccl* ]] || srcs+=("$ROOT/$o"); done
    "$llvmcov" report "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" "${srcs[@]}" \
        >"$B/report-runtime.txt"
    "$llvmcov" report "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" \
        -ignore-filename-regex='(tests|examples|bench|tools)/' >"$B/report-all.txt"
    rm -rf "$B/html"
    "$llvmcov" show "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" -format=html \
        -show-branches=count -show-line-counts-or-regions -output-dir="$B/html" \
        -ignore-filename-regex='(tests|examples|bench|tools)/' >/dev/null
    # uncovered runtime lines: "file:line: code"
    "$llvmcov" show "$first" "${objs[@]}" -instr-profile="$B/zoffload.profdata" "${srcs[@]}" \
        -format=text -show-line-counts >"$B/show-runtime.txt"
    awk -v root="$ROOT/" '
        /^\/.*\.c:$/ { f = substr($0, 1, length($0) - 1); sub(root, "", f); next }
        match($0, /^ *[0-9]+\| *0\|/) {
            split($0, a, "|"); ln = a[1] + 0; code = substr($0, index($0, a[3]))
            sub(/^ */, "", code); print f ":" ln ": " code }' "$B/show-runtime.txt" >"$B/uncovered-runtime.txt"
    cat "$B/report-runtime.txt" >&2
    local total
    total="$(grep '^TOTAL' "$B/report-runtime.txt")"
    # TOTAL regions missed cover functions missed cover lines missed cover branches missed cover
    read -r _ _ _ regc _ _ funcc _ _ linec _ _ brc <<<"$total"
    echo "coverage runtime/ (runtime/*.c without backend_nccl*.c): lines $linec, branches $brc, functions $funcc, regions $regc; uncovered lines: $(wc -l <"$B/uncovered-runtime.txt") (build-coverage/uncovered-runtime.txt); HTML: build-coverage/html/index.html" |
        tee "$B/summary.txt"
    ((rc == 0)) || say "coverage: some tests failed while measuring (see $B/ctest*.log); the figures cover what ran"
}
