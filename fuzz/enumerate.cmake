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

