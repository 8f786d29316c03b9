#!/bin/bash
# docs/DESIGN.md's module picture is the one cmake/modules.cmake gives (cmake/depcheck.cmake,
# MODE=diagram): the table and its picture cannot drift apart.
set -u
src=${ETMKIT_SRC:?}
cmake -DSRC="$src" -DMODE=diagram -P "$src/cmake/depcheck.cmake"
