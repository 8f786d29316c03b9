#!/bin/sh
# make demo (issue 11, item 11), run as a new user runs it but with a stand-in cmake (no real
# build, no apt: BUILD_DEPS is emptied): the build says one line, "built BUILD/etmkit", and
# shows cmake's output only when the build fails; the demo then lists the bundled snapshot with
# --decode (its instruction flow, decoded from the snapshot's code), decodes a simulated
# perf.data (script, doctor), and ends with the next steps: perf record -e cs_etm//...,
# etmkit script, etmkit doctor, etmkit dump --decode, each of which etmkit accepts as written,
# and the lines naming the recording's timeline (a Perfetto trace) and flame graph (an SVG),
# both left in the build folder.
set -u
src=$(cd "$ETMKIT_SRC" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# cmake as the build runs it: progress lines, then the program (the one under test)
mkdir -p "$tmp/bin"
cat >"$tmp/bin/cmake" <<'STUB'
#!/bin/sh
case "$1" in
-S) echo "-- The C compiler identification is GNU"; echo "-- Configuring done"; echo "-- Generating done" ;;
--build)
    echo "[  1%] Building C object CMakeFiles/etmkit_objects.dir/src/core/status.c.o"
    if [ -n "${STUB_FAIL:-}" ]; then
        echo "src/core/status.c:1:1: error: stand-in compile error"
        echo "gmake[2]: *** [CMakeFiles/etmkit_objects.dir/build.make:76] Error 1"
        exit 2
    fi
    echo "[100%] Built target etmkit_cli"
    mkdir -p "$2" && ln -sf "$ETMKIT_BIN" "$2/etmkit" ;;
esac
STUB
chmod +x "$tmp/bin/cmake"
demo() { # make demo with the stand-in cmake; stdout in $tmp/out, stderr in $tmp/err
    PATH=$tmp/bin:$PATH make -C "$src" --no-print-directory demo BUILD="$tmp/b" BUILD_DEPS= \
        >"$tmp/out" 2>"$tmp/err"
}

# ---- a failed build: cmake's output, without its progress lines; no "built" line
STUB_FAIL=1 demo && bad "make demo succeeded although the build failed"
grep -q "stand-in compile error" "$tmp/out" "$tmp/err" || bad "the failed build's error is not shown"
! grep -q '^\[ *[0-9]*%\]' "$tmp/out" "$tmp/err" || bad "a failed build shows cmake's progress lines"
! grep -q "^built " "$tmp/out" || bad "a failed build says 'built'"
grep -q "$tmp/b/build.log" "$tmp/err" || bad "a failed build does not name its log: $(cat "$tmp/err")"

# ---- the demo
demo || bad "make demo: exit $?; stderr: $(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || bad "make demo wrote on stderr: $(head -5 "$tmp/err")"
line1=$(sed -n 1p "$tmp/out")
[ "$line1" = "built $tmp/b/etmkit" ] || bad "the build's output starts with '$line1', want 'built $tmp/b/etmkit'"
[ "$(sed -n 2p "$tmp/out")" = "$("$ETMKIT_BIN" --version)" ] || bad "the demo does not start with etmkit --version: $(sed -n 2p "$tmp/out")"
! grep -qE '^\[ *[0-9]+%\]|^-- (Configuring|Generating)' "$tmp/out" || bad "make demo shows cmake's output"
n=$(wc -l <"$tmp/out")
[ "$n" -le 110 ] || bad "the demo is $n lines long (at most 110: two screens)"

# the bundled snapshot with --decode: packets and the instruction flow, every line as
# etmkit dump --decode prints it, in one block
"$ETMKIT_BIN" dump --decode "$src/examples/etm4-hello" >"$tmp/decode"
grep -q '^ *[0-9]*  10  > INSTR_RANGE ' "$tmp/decode" || bad "the example's --decode has no instruction ranges"
! grep -q 'ADDR_NACC' "$tmp/decode" || bad "the example's code is missing from its memory dumps"
python3 - "$tmp/out" "$tmp/decode" <<'PY' || fail=1
import sys
out = open(sys.argv[1]).read().split("\n")
want = open(sys.argv[2]).read().rstrip("\n").split("\n")
starts = [i for i in range(len(out)) if out[i:i + len(want)] == want]
if not starts:
    print("FAIL: the demo does not list `etmkit dump --decode examples/etm4-hello`")
    sys.exit(1)
head = [l for l in out[:starts[0]] if l.startswith("== ")]
if not head or "dump --decode" not in head[-1] or "examples/etm4-hello" not in head[-1]:
    print("FAIL: the --decode listing is not under a '== etmkit dump --decode examples/etm4-hello' heading")
    sys.exit(1)
PY

# the simulated recording: samples and the doctor's account
sec() { awk -v h="$1" 'index($0, "== ") == 1 { f = (index($0, h) > 0); next } f' "$tmp/out"; }
sec "== etmkit script " | grep -qE '^ +[0-9]+/[0-9]+ +\[[0-9]+\] ' || bad "no samples under '== etmkit script'"
[ -n "$(sec "== etmkit doctor " | tr -d ' \n')" ] || bad "nothing under '== etmkit doctor'"
sec "== etmkit export " | grep -qE '^[0-9a-f]+-[0-9a-f]+:[0-9]+$' || bad "no AutoFDO range counts under '== etmkit export'"

# the last section: next steps, the commands in this order
last=$(grep '^== ' "$tmp/out" | tail -1)
case $last in "== Next steps"*) ;; *) bad "the demo ends with '$last', not '== Next steps'" ;; esac
sec "== Next steps" >"$tmp/next"
awk 'BEGIN { n = split("perf record -e cs_etm//|etmkit script |etmkit doctor |etmkit dump --decode ", w, "|"); i = 1 }
     i <= n && index($0, w[i]) { i++ }
     END { if (i <= n) { print "FAIL: next steps lack \"" w[i] "\" (in order)"; exit 1 } }' "$tmp/next" || fail=1
# each etmkit command of the next steps is accepted as written (perf.data: a simulated recording
# without its binaries, SNAPSHOT_DIR: the example): no usage error, no crash
"$ETMKIT_BIN" gen --scenario basic -o "$tmp/rec" >/dev/null 2>&1 || bad "etmkit gen --scenario basic"
grep -E "^ +$tmp/b/etmkit [a-z]+ " "$tmp/next" | sed 's/#.*//' >"$tmp/cmds"
[ "$(wc -l <"$tmp/cmds")" -ge 3 ] || bad "next steps: $(wc -l <"$tmp/cmds") etmkit commands"
while read -r cmd; do
    run=$(echo "$cmd" | sed "s|^$tmp/b/etmkit|$ETMKIT_BIN|; s|SNAPSHOT_DIR|$src/examples/etm4-hello|")
    (cd "$tmp/rec" && eval "$run") >"$tmp/cmd.out" 2>"$tmp/cmd.err"
    rc=$?
    if [ $rc -gt 1 ] || grep -qiE 'usage|unknown option|unexpected argument' "$tmp/cmd.err"; then
        bad "next step '$cmd': exit $rc, $(head -2 "$tmp/cmd.err")"
    fi
done <"$tmp/cmds"

# the last two lines: the demo's recording as a timeline and a flame graph, kept in the build
# folder, and how to open them
tl="$tmp/b/demo-timeline.perfetto-trace"
[ -s "$tl" ] || bad "make demo wrote no timeline at $tl"
tail -2 "$tmp/out" | head -1 | grep -qF "$tl -- open it at https://ui.perfetto.dev" ||
    bad "the demo does not end with its timeline and how to open it: $(tail -2 "$tmp/out" | head -1)"
fg="$tmp/b/demo-flame.svg"
[ -s "$fg" ] || bad "make demo wrote no flame graph at $fg"
grep -q '<svg' "$fg" || bad "$fg is not an SVG picture"
tail -1 "$tmp/out" | grep -qF "$fg -- open it in a web browser" ||
    bad "the demo does not end with its flame graph and how to open it: $(tail -1 "$tmp/out")"

[ $fail -eq 0 ] && echo "demo ok"
exit $fail
