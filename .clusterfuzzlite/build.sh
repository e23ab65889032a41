#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script: compile runs this with CC, CXX,
# CFLAGS, CXXFLAGS, LIB_FUZZING_ENGINE, SANITIZER, SRC, OUT and WORK set.
# The repository's build.sh does the work unchanged: with LIB_FUZZING_ENGINE
# and OUT set and no mode it builds every fuzz target with $CC $CFLAGS,
# links it with $LIB_FUZZING_ENGINE and copies it to $OUT with its .dict,
# .options and <target>_seed_corpus.zip (tests/ossfuzz/run.sh checks this
# for SANITIZER=address, undefined, memory and coverage).
exec "$SRC/zoffload/build.sh"
