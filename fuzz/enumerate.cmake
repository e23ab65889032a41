# fuzz/enumerate.cmake - bounded exhaustive checking.
# Included at the end of fuzz/CMakeLists.txt (after zofuzz_core exists).
#
#   zo_enumerate       static lib: generator, order explorer, results files,
#                      zo_enumerate_main() (what `zofuzz enumerate` forwards to)
#   tests              enumerate/* (tests/enumerate/test_enumerate.c): known
#                      verdicts at a small bound, hand-counted scenario counts,
#                      results-file round trip, shard/merge equivalence

add_library(zo_enumerate STATIC ${CMAKE_CURRENT_SOURCE_DIR}/enumerate.c)
target_link_libraries(zo_enumerate PUBLIC zofuzz_core)
target_include_directories(zo_enumerate PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})

# The .scn printer (library zofuzz_scn from fuzz/zofuzz.cmake)
# prints counterexamples when that target exists (it may be defined after
# this file is included: generator expressions are resolved at generate
# time); without it they are printed as bytes (hex), JSON-able with `zofuzz print --json`.
target_link_libraries(zo_enumerate PUBLIC $<TARGET_NAME_IF_EXISTS:zofuzz_scn>)
target_compile_definitions(zo_enumerate PRIVATE $<$<TARGET_EXISTS:zofuzz_scn>:ZO_ENUM_HAVE_SCN=1>)

if(BUILD_TESTING AND ZO_CMOCKA_TARGET
   AND EXISTS ${PROJECT_SOURCE_DIR}/tests/enumerate/test_enumerate.c)
  add_executable(enumerate_test_enumerate ${PROJECT_SOURCE_DIR}/tests/enumerate/test_enumerate.c)
  # zofuzz_scn: the known scenarios are written as .scn text
  target_link_libraries(enumerate_test_enumerate PRIVATE zo_enumerate zofuzz_scn ${ZO_CMOCKA_TARGET})
  add_test(NAME enumerate/test_enumerate COMMAND enumerate_test_enumerate)
  set_tests_properties(enumerate/test_enumerate PROPERTIES TIMEOUT 900)
  # the CLI end to end: a tiny bound, exit 0 (per-call holds)
  add_test(NAME enumerate/cli_tiny
           COMMAND zofuzz enumerate --max-modules 2 --max-calls 2 --max-steps 1 --policy per-call
                   --jobs 2 --quiet --cex ${CMAKE_CURRENT_BINARY_DIR}/enum-cli-cex)
  # --ranks: every single rank edit of a tiny bound in the host
  # world; MoE routing gives I8 unless the router gathers always, no edit
  # never does, and with verify_collectives every divergence is caught at a
  # fingerprint exchange
  set(_rk --ranks --max-modules 3 --max-calls 2 --max-steps 1 --features none --config base --policy per-call --quiet)
  add_test(NAME enumerate/ranks_tiny
           COMMAND sh -c "\"$0\" \"$@\" > rk.txt && cat rk.txt && grep -Eq '^none +[1-9][0-9]* +0 I8$' rk.txt && grep -Eq '^route +[1-9][0-9]* +[1-9][0-9]* I8$' rk.txt && \"$0\" \"$@\" --gather-always > rk-ga.txt && cat rk-ga.txt && grep -Eq '^route +[1-9][0-9]* +0 I8$' rk-ga.txt && \"$0\" \"$@\" --verify > rk-v.txt && cat rk-v.txt && grep -q 'the check let a diverging collective through): 0$' rk-v.txt"
                   $<TARGET_FILE:zofuzz> enumerate ${_rk})
endif()
