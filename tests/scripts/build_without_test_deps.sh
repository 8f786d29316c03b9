#!/bin/bash
# A build needs only the build packages (issue 32, item 1): on a machine without the test
# packages, `make install` and `make demo` succeed from a clean build folder, and the test suite
# is simply not configured. The test packages are hidden from the build by giving pkg-config
# (the only way the project finds cmocka) a search path that holds every .pc file of this
# machine but cmocka's. `make ... TESTS=ON` (what `make test` asks for) must then fail, naming
# cmocka. Real cmake, real compiler: one full build, in the normal build's run only.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: the build without test packages is checked in the normal build"; exit 77; }
src=$(cd "$ETMKIT_SRC" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# pkg-config without cmocka: every .pc file of its default search path but cmocka.pc
mkdir -p "$tmp/pc"
IFS=: read -r -a dirs <<<"$(pkg-config --variable pc_path pkg-config)"
for d in "${dirs[@]}"; do
    for f in "$d"/*.pc; do
        [ -e "$f" ] || continue
        case ${f##*/} in cmocka.pc) continue ;; esac
        [ -e "$tmp/pc/${f##*/}" ] || ln -s "$f" "$tmp/pc/${f##*/}"
    done
done
export PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH=
pkg-config --exists cmocka && { echo "FAIL: cmocka is still visible to pkg-config"; exit 1; }
pkg-config --exists libelf libzstd || { echo "FAIL: the hidden search path lost the build packages"; exit 1; }

# The Makefile's targets as a user runs them; BUILD_DEPS emptied (no apt: the build packages
# are installed, and this test must not install anything).
mk() { make -C "$src" --no-print-directory BUILD="$tmp/b" BUILD_DEPS= JOBS="${JOBS:-2}" "$@"; }

# ---- make install, into a DESTDIR, from an empty build folder
if mk install DESTDIR="$tmp/stage" PREFIX=/usr >"$tmp/install.out" 2>&1; then
    [ -x "$tmp/stage/usr/bin/etmkit" ] || bad "make install did not install bin/etmkit"
    "$tmp/stage/usr/bin/etmkit" --version >/dev/null 2>&1 || bad "the installed etmkit does not run"
else
    bad "make install without the test packages failed:"; tail -20 "$tmp/install.out"
fi
grep -q "cmocka not found: the test suite is not configured" "$tmp/b/build.log" ||
    bad "the configure step does not say that the test suite was left out"
# no test was configured, and none of the test programs was built
if [ -e "$tmp/b/tests" ] || [ -e "$tmp/b/fuzz" ]; then bad "the test suite was configured: $(ls -d "$tmp"/b/tests "$tmp"/b/fuzz 2>/dev/null)"; fi

# ---- make demo in the same folder
if mk demo >"$tmp/demo.out" 2>"$tmp/demo.err"; then
    grep -q "^built $tmp/b/etmkit\$" "$tmp/demo.out" || bad "make demo: no 'built' line: $(head -3 "$tmp/demo.out")"
    grep -q '^== Next steps' "$tmp/demo.out" || bad "make demo did not reach its last section"
else
    bad "make demo without the test packages failed: $(tail -5 "$tmp/demo.err")"
fi

# ---- asking for the tests without their packages fails, and says what is missing
if mk build TESTS=ON >"$tmp/on.out" 2>&1; then
    bad "a build with TESTS=ON succeeded without cmocka"
else
    grep -q "cmocka" "$tmp/on.out" || bad "a build with TESTS=ON fails without naming cmocka: $(tail -5 "$tmp/on.out")"
fi
# ... and an unknown value is refused
mk build TESTS=maybe >"$tmp/bad.out" 2>&1 && bad "ETMKIT_TESTS=maybe was accepted"
grep -q "ETMKIT_TESTS is AUTO, ON or OFF" "$tmp/bad.out" || bad "ETMKIT_TESTS=maybe: $(tail -3 "$tmp/bad.out")"

[ $fail -eq 0 ] && echo "build without test packages ok"
exit $fail
