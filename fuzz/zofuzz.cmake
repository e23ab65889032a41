# fuzz/zofuzz.cmake - the .scn format, the minimiser, the zofuzz tool, the
# fuzz_scn_parse target and the corpus tests.  Included at the end
# of fuzz/CMakeLists.txt (after zofuzz_core and the engine targets exist).
#
#   zofuzz_scn              static lib: scn.c (parser/printer) + minimize.c + export.c
#                           (Python reproducers; embeds export_template.py)
#   zofuzz                  the CLI (run / repro / minimize / check / print /
#                           compile / trace / verify / seeds / export)
#   fuzz_scn_parse(_replay) parser fuzz target (engine build when
#                           ZO_FUZZ_ENGINE is set) and its engine-less replay
#   corpus_seeds            custom target: regenerate corpus/seeds/<target>/
#                           in the source tree from corpus/models and
#                           corpus/regressions (`zofuzz seeds`)
#   tests                   corpus/* (see below)

# export.c embeds the Python part of `zofuzz export`'s scripts
add_custom_command(
  OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/export_template.h
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_SOURCE_DIR}/export_template.py
          -DOUT=${CMAKE_CURRENT_BINARY_DIR}/export_template.h -DNAME=zs_export_template
          -P ${CMAKE_CURRENT_SOURCE_DIR}/embed_text.cmake
  DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/export_template.py ${CMAKE_CURRENT_SOURCE_DIR}/embed_text.cmake
  COMMENT "embedding fuzz/export_template.py"
  VERBATIM)
add_library(zofuzz_scn STATIC scn.c minimize.c export.c ${CMAKE_CURRENT_BINARY_DIR}/export_template.h)
target_include_directories(zofuzz_scn PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_include_directories(zofuzz_scn PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
target_link_libraries(zofuzz_scn PUBLIC zofuzz_core)

add_executable(zofuzz zofuzz.c)
target_link_libraries(zofuzz PRIVATE zofuzz_scn)
if(TARGET zo_enumerate)
  # `zofuzz enumerate` forwards to the enumerator (fuzz/enumerate.cmake, included first)
  target_link_libraries(zofuzz PRIVATE zo_enumerate)
  target_compile_definitions(zofuzz PRIVATE ZOFUZZ_HAVE_ENUMERATE=1)
endif()
target_compile_definitions(zofuzz PRIVATE ZO_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

add_executable(fuzz_scn_parse_replay fuzz_scn_parse.c regression_driver.c)
target_link_libraries(fuzz_scn_parse_replay PRIVATE zofuzz_scn)
if(ZO_FUZZ_ENGINE)
  add_executable(fuzz_scn_parse fuzz_scn_parse.c)
  target_link_libraries(fuzz_scn_parse PRIVATE zofuzz_scn)
  zo_link_fuzz_engine(fuzz_scn_parse)
  foreach(_ext dict options)
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_scn_parse.${_ext})
      configure_file(fuzz_scn_parse.${_ext} ${CMAKE_CURRENT_BINARY_DIR}/fuzz_scn_parse.${_ext} COPYONLY)
    endif()
  endforeach()
endif()

# Seeds in the source tree (committed; build.sh oss-fuzz zips them):
#   cmake --build <dir> --target corpus_seeds
add_custom_target(corpus_seeds
  COMMAND zofuzz seeds -o ${PROJECT_SOURCE_DIR}/corpus/seeds
  DEPENDS zofuzz
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
  COMMENT "zofuzz seeds: corpus/models + corpus/regressions -> corpus/seeds/{fuzz_hooks,fuzz_scn_parse}"
  VERBATIM)

if(BUILD_TESTING)
  set(_src ${PROJECT_SOURCE_DIR})
  set(_tc ${PROJECT_SOURCE_DIR}/tests/corpus)

  # cmocka: parser/printer round trip property + error positions, minimiser
  if(ZO_CMOCKA_TARGET)
    foreach(_name test_scn test_minimize)
      if(EXISTS ${_tc}/${_name}.c)
        add_executable(corpus_${_name} ${_tc}/${_name}.c)
        target_link_libraries(corpus_${_name} PRIVATE zofuzz_scn ${ZO_CMOCKA_TARGET})
        target_compile_definitions(corpus_${_name} PRIVATE ZO_SOURCE_DIR="${_src}")
        add_test(NAME corpus/${_name} COMMAND corpus_${_name})
      endif()
    endforeach()
  endif()

  # every regression and model scenario under every policy of its expect line
  # (and under per-call, which must hold in every file); one test per file
  file(GLOB _scn_files CONFIGURE_DEPENDS
    ${_src}/corpus/regressions/*.scn ${_src}/corpus/models/*.scn)
  foreach(_f ${_scn_files})
    get_filename_component(_d ${_f} DIRECTORY)
    get_filename_component(_d ${_d} NAME)
    get_filename_component(_n ${_f} NAME_WE)
    add_test(NAME corpus/verify/${_d}/${_n} COMMAND zofuzz verify ${_f})
  endforeach()

  # open per-call findings of the corpus tools, stated as they must be
  # (per-call=ok): each fails until the runtime (or harness) is fixed, then
  # moves to corpus/regressions/ with its measured expect line
  file(GLOB _open_files CONFIGURE_DEPENDS ${_tc}/open-findings/*.scn)
  foreach(_f ${_open_files})
    get_filename_component(_n ${_f} NAME_WE)
    add_test(NAME corpus/open_finding/${_n} COMMAND zofuzz verify ${_f})
  endforeach()

  # the parser target replays every corpus text (its properties: no crash,
  # print/parse round trip, canonical printing)
  set(_parse_inputs)
  foreach(_d corpus/seeds/fuzz_scn_parse corpus/models corpus/regressions tests/corpus/open-findings)
    if(IS_DIRECTORY ${_src}/${_d})
      list(APPEND _parse_inputs ${_src}/${_d})
    endif()
  endforeach()
  if(_parse_inputs)
    add_test(NAME corpus/replay_fuzz_scn_parse COMMAND fuzz_scn_parse_replay ${_parse_inputs})
  endif()

  # property testing without an engine: the default policy must hold ...
  # (all-ranks scenarios run in the host world; their random rank edits
  # diverge by construction, so I8 is checked by the two tests below)
  add_test(NAME corpus/check_per_call
    COMMAND zofuzz check --seed 7 --trials 2000 --policy per-call --invariants no-I8)
  # ... I8 holds with MoE routing alone once every router gathers always (engine
  # order: under fuzzed orders an expert's backward op can run after its router
  # released the subtree, see docs/fuzzing.md) ...
  add_test(NAME corpus/check_per_call_routers_gather_always
    COMMAND zofuzz check --seed 7 --trials 1000 --max-len 2048 --order engine --policy per-call --edits route --gather-always routers)
  # ... and without the remedy the routing divergence is found (exit exactly 1)
  add_test(NAME corpus/check_finds_i8_routing
    COMMAND sh -c "$0 check --seed 7 --trials 400 --max-len 2048 --policy per-call --edits route --max-failures 1 --no-minimize --quiet | tee /dev/stderr | grep -q 'invariant I8 violated'"
            $<TARGET_FILE:zofuzz>)
  # ... and the legacy policies must be caught (exit status exactly 1)
  foreach(_p reset-on-forward lazy-init init-at-register)
    add_test(NAME corpus/check_finds_${_p}
      COMMAND sh -c "$0 check --seed 7 --trials 400 --policy ${_p} --max-failures 1 --quiet; test $? -eq 1"
              $<TARGET_FILE:zofuzz>)
  endforeach()

  # repro: ALBERT-style reuse goes to -1 under reset-on-forward, holds by default
  set(_albert ${_src}/corpus/models/albert.scn)
  if(NOT EXISTS ${_albert})
    set(_albert ${_src}/corpus/regressions/module-reuse-albert.scn)
  endif()
  if(EXISTS ${_albert})
    add_test(NAME corpus/repro_albert_reset_on_forward
      COMMAND sh -c "out=$($0 repro $1 --policy reset-on-forward); rc=$?; echo \"$out\" | tail -n 40; test $rc -eq 1 && echo \"$out\" | grep -q -- '->-1' && echo \"$out\" | grep -q '^violated: invariant I1 '"
              $<TARGET_FILE:zofuzz> ${_albert})
    add_test(NAME corpus/repro_albert_per_call
      COMMAND zofuzz repro ${_albert} --quiet)
  endif()

  # the committed seeds match the .scn sources (and the current codec)
  if(EXISTS ${_tc}/seeds_current.sh)
    add_test(NAME corpus/seeds_current COMMAND sh ${_tc}/seeds_current.sh $<TARGET_FILE:zofuzz> ${_src})
  endif()

  # the main job with the real engine: a legacy crash minimised into a
  # regression file, and a clean per-call run with progress and summary
  if(ZO_FUZZ_ENGINE AND TARGET fuzz_hooks AND EXISTS ${_tc}/run_e2e.sh)
    add_test(NAME corpus/run_e2e COMMAND sh ${_tc}/run_e2e.sh $<TARGET_FILE:zofuzz>)
    set_tests_properties(corpus/run_e2e PROPERTIES TIMEOUT 300)
  endif()

  # zofuzz export: every corpus scenario to both targets, through py_compile
  if(EXISTS ${_tc}/export.sh)
    add_test(NAME corpus/export_compile COMMAND sh ${_tc}/export.sh $<TARGET_FILE:zofuzz> ${_src})
    set_tests_properties(corpus/export_compile PROPERTIES TIMEOUT 1200)
  endif()
  # ... and run on DeepSpeed 0.19.8 (.venv-current; skipped without it)
  if(EXISTS ${_tc}/export_run.sh)
    add_test(NAME corpus/export_run_deepspeed
      COMMAND sh ${_tc}/export_run.sh $<TARGET_FILE:zofuzz> ${_src} ${CMAKE_BINARY_DIR}/torch_extensions)
    # long set (./build.sh test-long): three DeepSpeed starts; the fast set's
    # corpus/upstream_findings runs exported scripts on DeepSpeed too
    set_tests_properties(corpus/export_run_deepspeed PROPERTIES TIMEOUT 1800 SKIP_RETURN_CODE 77 LABELS long)
  endif()
  # the exported DeepSpeed repros of the corpus (corpus/deepspeed/, the
  # table docs/upstream-findings.md): current, and on DeepSpeed 0.19.8 each
  # exits as corpus/deepspeed/expected.tsv says (.venv-current; skipped
  # without it)
  if(EXISTS ${_src}/tools/upstream_findings.py)
    # fast set: every script current, two of them (a finding, a clean run)
    # run on DeepSpeed; the long set runs all of them there
    add_test(NAME corpus/upstream_findings
      COMMAND /usr/bin/python3 ${_src}/tools/upstream_findings.py --check --zofuzz $<TARGET_FILE:zofuzz>
              --jobs 1 --only regressions-module-reuse-albert.py,models-gpt2.py)
    set_tests_properties(corpus/upstream_findings PROPERTIES TIMEOUT 900 SKIP_RETURN_CODE 77)
    add_test(NAME corpus/upstream_findings_full
      COMMAND /usr/bin/python3 ${_src}/tools/upstream_findings.py --check --zofuzz $<TARGET_FILE:zofuzz>)
    set_tests_properties(corpus/upstream_findings_full PROPERTIES TIMEOUT 1800 SKIP_RETURN_CODE 77
                         LABELS long PROCESSORS 2)
  endif()

  # the CLI's usage errors and bytes/text round trip
  if(EXISTS ${_tc}/cli.sh)
    add_test(NAME corpus/cli COMMAND sh ${_tc}/cli.sh $<TARGET_FILE:zofuzz> ${_src})
    add_test(NAME corpus/cli_hostile COMMAND sh ${_tc}/cli_hostile.sh $<TARGET_FILE:zofuzz> ${_src})
    # docs/fuzzing.md carries the settings table zofuzz prints (fuzz/settings.h)
    add_test(NAME corpus/settings_docs COMMAND sh ${_tc}/settings_docs.sh $<TARGET_FILE:zofuzz> ${_src}/docs/fuzzing.md)
    # every subcommand x every option of its usage synopsis: missing,
    # repeated, malformed, out-of-range, unwritable; every file operand empty,
    # a directory, missing, binary (generated from zofuzz's own help)
    add_test(NAME corpus/cli_matrix COMMAND bash ${_tc}/cli_matrix.sh $<TARGET_FILE:zofuzz> ${_src})
    set_tests_properties(corpus/cli_matrix PROPERTIES TIMEOUT 300)
  endif()
endif()
