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

