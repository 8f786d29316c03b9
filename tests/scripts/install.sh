#!/bin/bash
# make install (issue 11, item 8): the build directory installs, under a temporary DESTDIR and
# a prefix of its own, the CLI, libetmkit.a and libetmkit.so with its soname, the public
# headers (each compiles alone), etmkit.pc (a program built with `pkg-config --cflags --libs
# etmkit` against the installed tree runs and decodes the example through the public API, as
# does one linked with the static library), manual pages for etmkit and each command (rendered
# with man -l, listing every option of the command's --help), and bash completion (commands,
# options and option values). `make install` passes PREFIX and DESTDIR on to cmake --install.
# cmake --install writes BUILD/install_manifest.txt; the test puts back what was there before.
set -u
build=$(cd "$ETMKIT_BUILD" && pwd)
src=$(cd "$ETMKIT_SRC" && pwd)
tmp=$(mktemp -d)
manifest=$build/install_manifest.txt
if [ -e "$manifest" ]; then cp -p "$manifest" "$tmp/manifest.saved"; fi
restore_manifest() {
    if [ -e "$tmp/manifest.saved" ]; then cp -p "$tmp/manifest.saved" "$manifest"; else rm -f "$manifest"; fi
}
trap 'restore_manifest; rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

version=$("$ETMKIT_BIN" --version | sed -n 's/^etmkit //p')
[ -n "$version" ] || { echo "FAIL: etmkit --version: $("$ETMKIT_BIN" --version 2>&1)"; exit 1; }
major=${version%%.*}
commands=$("$ETMKIT_BIN" --help | awk '/^[Cc]ommands:/ { f = 1; next } f && /^$/ { exit } f { print $1 }')
[ "$(echo $commands)" = "dump script doctor gen merge inject export report" ] || bad "etmkit --help lists the commands '$(echo $commands)'"

# --version works after each command too
for c in $commands; do
    out=$("$ETMKIT_BIN" "$c" --version 2>&1); rc=$?
    [ $rc -eq 0 ] && [ "$out" = "etmkit $version" ] || bad "etmkit $c --version: exit $rc, '$out'"
done

# ---- install into DESTDIR with a prefix of its own
dest=$tmp/dest
prefix=/opt/etmkit-test
root=$dest$prefix
if ! DESTDIR=$dest cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1
fi
outside=$(grep -E '^-- (Installing|Up-to-date): ' "$tmp/install.log" | grep -v "^-- [A-Za-z-]*: $dest/")
[ -z "$outside" ] || bad "installed outside DESTDIR: $outside"

for f in bin/etmkit lib/libetmkit.a "lib/libetmkit.so.$version" lib/pkgconfig/etmkit.pc \
    share/bash-completion/completions/etmkit share/man/man1/etmkit.1; do
    [ -f "$root/$f" ] || bad "not installed: $f"
done
for c in $commands; do [ -f "$root/share/man/man1/etmkit-$c.1" ] || bad "not installed: etmkit-$c.1"; done
# etmkit-fleet beside etmkit, with its page (when the build had /usr/bin/python3)
[ -x "$root/bin/etmkit-fleet" ] || bad "not installed: bin/etmkit-fleet"
if [ -x /usr/bin/python3 ]; then
    [ -f "$root/share/man/man1/etmkit-fleet.1" ] || bad "not installed: etmkit-fleet.1"
    out=$("$root/bin/etmkit-fleet" --version); [ "$out" = "etmkit-fleet $version" ] || bad "installed etmkit-fleet --version: $out"
fi
[ "$(readlink "$root/lib/libetmkit.so")" = "libetmkit.so.$major" ] || bad "libetmkit.so -> $(readlink "$root/lib/libetmkit.so")"
[ "$(readlink "$root/lib/libetmkit.so.$major")" = "libetmkit.so.$version" ] || bad "libetmkit.so.$major -> $(readlink "$root/lib/libetmkit.so.$major")"
soname=$(readelf -d "$root/lib/libetmkit.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libetmkit.so.$major" ] || bad "soname '$soname', want libetmkit.so.$major"
# the public headers (with the bit level's, low/), no more, no less
(cd "$src/include/etmkit" && find . -name '*.h' | sort) >"$tmp/headers.src"
(cd "$root/include/etmkit" && find . ! -type d | sort) >"$tmp/headers.inst"
diff -u "$tmp/headers.src" "$tmp/headers.inst" || bad "installed headers differ from include/etmkit"
out=$("$root/bin/etmkit" --version); [ "$out" = "etmkit $version" ] || bad "installed etmkit --version: $out"

# ---- pkg-config and programs built against the installed tree
export PKG_CONFIG_PATH=$root/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
[ "$(pkg-config --modversion etmkit)" = "$version" ] || bad "pkg-config --modversion: $(pkg-config --modversion etmkit)"
grep -qx "prefix=$prefix" "$root/lib/pkgconfig/etmkit.pc" || bad "etmkit.pc: $(grep prefix= "$root/lib/pkgconfig/etmkit.pc")"
cflags=$(pkg-config --cflags etmkit) && libs=$(pkg-config --libs etmkit) || { echo "FAIL: pkg-config"; exit 1; }
case " $cflags " in *" -I$root/include "*) ;; *) bad "pkg-config --cflags: $cflags" ;; esac
case " $libs " in *" -L$root/lib "*"-letmkit "*) ;; *) bad "pkg-config --libs: $libs" ;; esac
san=""
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && san="-fsanitize=address,undefined"   # the library's runtime
CC=${CC:-cc}
std="-std=c11 -Wall -Wextra -Werror $san"

for h in "$root"/include/etmkit/*.h "$root"/include/etmkit/low/*.h; do
    n=etmkit/${h#"$root"/include/etmkit/}
    printf '#include <%s>\n#include <%s>\nint ek_header_test;\n' "$n" "$n" >"$tmp/h.c"
    $CC $std -pedantic -Wstrict-prototypes $cflags -c "$tmp/h.c" -o "$tmp/h.o" 2>"$tmp/h.err" ||
        bad "$n does not compile on its own: $(head -3 "$tmp/h.err")"
done

"$ETMKIT_BIN" dump --format=text "$src/examples/etm4-hello" >"$tmp/packets.want"
{ echo "etmkit $version"; cat "$tmp/packets.want"; } >"$tmp/want"
[ -s "$tmp/packets.want" ] || bad "etmkit dump listed nothing"
# shared: -letmkit finds libetmkit.so, found at run time through LD_LIBRARY_PATH
if $CC $std "$src/tests/data/install/list_packets.c" $cflags $libs -o "$tmp/lp-shared" 2>"$tmp/cc.err"; then
    readelf -d "$tmp/lp-shared" | grep -q "NEEDED.*\[libetmkit.so.$major\]" || bad "list_packets does not use libetmkit.so.$major"
    LD_LIBRARY_PATH=$root/lib "$tmp/lp-shared" "$src/examples/etm4-hello" >"$tmp/out-shared" ||
        bad "list_packets (shared) exit $?"
    diff -u "$tmp/want" "$tmp/out-shared" || bad "list_packets (shared) output"
else
    cat "$tmp/cc.err"; bad "building list_packets with pkg-config --cflags --libs etmkit"
fi
# static: libetmkit.a with the private dependencies pkg-config --static names
slibs=$(pkg-config --static --libs etmkit | sed 's/ -letmkit / -l:libetmkit.a /; s/^-letmkit /-l:libetmkit.a /')
if $CC $std "$src/tests/data/install/list_packets.c" $cflags $slibs -o "$tmp/lp-static" 2>"$tmp/cc.err"; then
    ! readelf -d "$tmp/lp-static" | grep -q 'NEEDED.*libetmkit' || bad "list_packets (static) needs libetmkit.so"
    "$tmp/lp-static" "$src/examples/etm4-hello" >"$tmp/out-static" || bad "list_packets (static) exit $?"
    diff -u "$tmp/want" "$tmp/out-static" || bad "list_packets (static) output"
else
    cat "$tmp/cc.err"; bad "building list_packets with libetmkit.a and pkg-config --static --libs etmkit"
fi
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

# ---- manual pages: rendered, NAME and SYNOPSIS, every option of --help
render() { LC_ALL=C MANWIDTH=100 man -l "$1" 2>"$tmp/man.err"; }
for page in etmkit $(for c in $commands; do echo "etmkit-$c"; done); do
    f=$root/share/man/man1/$page.1
    [ -f "$f" ] || continue
    render "$f" >"$tmp/man.txt"
    [ -s "$tmp/man.txt" ] || { bad "man -l $page.1: nothing"; continue; }
    [ ! -s "$tmp/man.err" ] || bad "man -l $page.1: $(head -3 "$tmp/man.err")"
    for s in NAME SYNOPSIS; do grep -qx "$s" "$tmp/man.txt" || bad "$page.1: no $s section"; done
    grep -qE "^ +$page - [^ ]" "$tmp/man.txt" || bad "$page.1: NAME is '$(grep -A1 -x NAME "$tmp/man.txt" | tail -1)'"
    if [ "$page" = etmkit ]; then
        for c in $commands; do grep -q "etmkit-$c(1)" "$tmp/man.txt" || bad "etmkit.1 does not point to etmkit-$c(1)"; done
        continue
    fi
    c=${page#etmkit-}
    grep -qE "^ +etmkit $c " "$tmp/man.txt" || bad "$page.1: SYNOPSIS lacks 'etmkit $c'"
    # the options of the option column of --help
    "$ETMKIT_BIN" "$c" --help | awk 'match($0, /^ +-/) && RLENGTH <= 11 {
            n = split($0, w, " ")
            for (i = 1; i <= n && w[i] ~ /^-/; i++) { t = w[i]; sub(/[,=].*$/, "", t); print t }
        }' | sort -u >"$tmp/opts"
    [ -s "$tmp/opts" ] || bad "etmkit $c --help: no options found"
    while read -r o; do
        grep -qE -- "(^|[ ,])$o([ =,]|$)" "$tmp/man.txt" || bad "$page.1 lacks $o"
    done <"$tmp/opts"
done

# ---- bash completion, with the installed etmkit on PATH
if [ -f /usr/share/bash-completion/bash_completion ]; then
    mkdir -p "$tmp/cwd/somedir" && : >"$tmp/cwd/somefile"
    cd "$tmp/cwd" || exit 1
    PATH=$root/bin:$PATH COMPLETION=$root/share/bash-completion/completions/etmkit bash --norc -c '
        source /usr/share/bash-completion/bash_completion
        source "$COMPLETION"
        fail=0
        # complete LINE (the cursor at its end) and compare the sorted candidates with WANT
        check() {
            local line=$1 want=$2 got
            # the words as readline splits them: blanks, and "=" on its own
            read -r -a COMP_WORDS <<<"${line//=/ = }"
            [[ $line == *" " ]] && COMP_WORDS+=("")
            COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
            COMP_LINE=$line; COMP_POINT=${#line}
            COMPREPLY=()
            local fn; fn=$(complete -p etmkit | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
            "$fn" etmkit "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
            got=$(printf "%s\n" "${COMPREPLY[@]}" | sed "s,/$,," | sort | tr "\n" " ")
            if [[ "$got" != "$want " ]]; then echo "FAIL: completing \"$line\": \"$got\", want \"$want \""; fail=1
            else echo "ok: completing \"$line\""; fi
        }
        check "etmkit " "--help --version doctor dump export gen inject merge report script"
        check "etmkit scr" "script"
        check "etmkit inject --out" "--output="
        check "etmkit script --itr" "--itrace="
        check "etmkit doctor --sym" "--symfs="
        check "etmkit dump --format=" "json ocsd text"
        check "etmkit dump --format=o" "ocsd"
        check "etmkit merge --format=" "autofdo bolt branch-list"
        check "etmkit gen --scenario per-" "per-cpu-trbe per-thread per-thread-trbe per-thread-trbe-biglittle per-thread-two-cpus"
        check "etmkit script --symfs=" "somedir"
        check "etmkit script -k " "somedir somefile"
        check "etmkit script " "somedir somefile"
        exit $fail
    ' || fail=1
    cd / || exit 1
else
    bad "/usr/share/bash-completion/bash_completion is missing (Debian package bash-completion)"
fi

# ---- make install: PREFIX and DESTDIR as GNU make conventions want them, given to cmake --install
mkdir -p "$tmp/bin"
cat >"$tmp/bin/cmake" <<'STUB'
#!/bin/sh
echo "cmake $* DESTDIR=${DESTDIR-unset}" >>"$CMAKE_CALLS"
case "$1" in --build) mkdir -p "$2" && : >"$2/etmkit" ;; esac
STUB
chmod +x "$tmp/bin/cmake"
CMAKE_CALLS=$tmp/calls PATH=$tmp/bin:$PATH make -s -C "$src" --no-print-directory install BUILD_DEPS= \
    BUILD="$tmp/b" PREFIX=/usr DESTDIR="$tmp/stage" >"$tmp/make.out" 2>&1 || bad "make install: $(cat "$tmp/make.out")"
grep -qx "cmake --install $tmp/b --prefix /usr DESTDIR=$tmp/stage" "$tmp/calls" ||
    bad "make install PREFIX=/usr DESTDIR=...: cmake calls: $(cat "$tmp/calls")"
CMAKE_CALLS=$tmp/calls2 PATH=$tmp/bin:$PATH make -s -C "$src" --no-print-directory install BUILD_DEPS= \
    BUILD="$tmp/b" >"$tmp/make.out" 2>&1 || bad "make install: $(cat "$tmp/make.out")"
grep -qx "cmake --install $tmp/b --prefix /usr/local DESTDIR=" "$tmp/calls2" ||
    bad "make install (defaults): cmake calls: $(cat "$tmp/calls2")"

[ $fail -eq 0 ] && echo "install ok"
exit $fail
