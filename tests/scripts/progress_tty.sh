#!/bin/sh
# Progress line of long runs (issue 11 item 9), through a pseudo-terminal (tests/scripts/ptyrun.py:
# stderr on a pty, stdout to a file). ETMKIT_PROGRESS_DELAY=0 shows it from the start, so that
# nothing here depends on how fast the machine is; no timing is asserted.
# For gen, script, doctor, dump of a perf.data file and dump of a snapshot folder:
#  - stderr on a terminal: one or more progress lines ("\r" + "etmkit CMD: X of Y (P%)..."),
#    each done <= total, then one wipe ("\r", spaces over the widest line, "\r"), then exactly
#    what the same run writes to a stderr that is not a terminal; stdout is the same as well;
#  - stderr not a terminal: no "\r" at all;
#  - -q on a terminal: stderr is byte for byte what -q writes when it is not a terminal;
#  - on a 30-column terminal no progress line reaches the last column (no line wrap).
set -u
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pty="$ETMKIT_SRC/tests/scripts/ptyrun.py"
export ETMKIT_PROGRESS_DELAY=0
E=$ETMKIT_BIN
fail=0

# the recordings
printf 'truth = off\n' >"$tmp/off.ini" # (the full ground truth of a small run is slow to make)
"$E" gen --scenario workload --trace-size 1M --config "$tmp/off.ini" -o "$tmp/w" 2>/dev/null || { echo "FAIL: gen workload"; exit 1; }
"$E" gen --scenario snapshot-etr -o "$tmp/s" 2>/dev/null || { echo "FAIL: gen snapshot-etr"; exit 1; }

# check NAME WHAT COLS -- CMD...: WHAT is the word after "etmkit " on the progress line
check() {
    name=$1 what=$2 cols=$3
    shift 4
    d="$tmp/$name"
    mkdir -p "$d"
    # gen writes a folder: @OUT@ is a fresh one for every run
    cmd="$*"
    c1=$(echo "$cmd" | sed "s|@OUT@|$d/g1|g")
    c2=$(echo "$cmd" | sed "s|@OUT@|$d/g2|g")
    c3=$(echo "$cmd" | sed "s|@OUT@|$d/g3|g")
    c4=$(echo "$cmd" | sed "s|@OUT@|$d/g4|g")
    c5=$(echo "$cmd" | sed "s|@OUT@|$d/g5|g")
    # shellcheck disable=SC2086
    python3 "$pty" "$cols" "$d/tty.out" "$d/tty.err" $c1; rc1=$?
    # shellcheck disable=SC2086
    $c2 </dev/null >"$d/file.out" 2>"$d/file.err"; rc2=$?
    # shellcheck disable=SC2086
    python3 "$pty" "$cols" "$d/q-tty.out" "$d/q-tty.err" $c3 -q; rc3=$?
    # shellcheck disable=SC2086
    $c4 -q </dev/null >"$d/q-file.out" 2>"$d/q-file.err"; rc4=$?
    # shellcheck disable=SC2086
    python3 "$pty" 30 "$d/narrow.out" "$d/narrow.err" $c5; rc5=$?
    if [ $rc1 != $rc2 ] || [ $rc3 != $rc4 ] || [ $rc1 != $rc3 ] || [ $rc1 != $rc5 ]; then
        echo "FAIL: $name: exit statuses differ: tty $rc1, file $rc2, -q tty $rc3, -q file $rc4, narrow $rc5"
        fail=1
        return
    fi
    if ! python3 - "$what" "$d" <<'PY'; then
import re, sys
what, d = sys.argv[1], sys.argv[2]
rd = lambda n: open(f"{d}/{n}", "rb").read()
bad = []
unit = {b"B": 1, b"KiB": 1 << 10, b"MiB": 1 << 20, b"GiB": 1 << 30, b"TiB": 1 << 40}
size = rb"([0-9.]+) (B|KiB|MiB|GiB|TiB)"
line = re.compile(rb"etmkit " + what.encode() + rb": " + size + rb" of " + size +
                  rb" \(([0-9]+)%\)(, [0-9.]+ (B|KiB|MiB|GiB|TiB)/s(, (<1 s|[0-9]+ s|[0-9]+ min [0-9]+ s|[0-9]+ h [0-9]+ min) left)?)? *$")

def split(err, cols):
    """progress draws, width of the final wipe, the rest"""
    m = re.match(rb"((?:\r[^\r\n]*)+)\r( +)\r", err)
    if not m:
        return None
    draws = m.group(1).split(b"\r")[1:]
    return draws, len(m.group(2)), err[m.end():]

tty, plain = rd("tty.err"), rd("file.err")
if b"\r" in plain:
    bad.append("stderr that is not a terminal holds a carriage return: %r" % plain[:200])
s = split(tty, 200)
if not s:
    bad.append("no progress line followed by a wipe on the terminal: %r" % tty[:300])
else:
    draws, wipe, rest = s
    for dr in draws:
        m = line.match(dr)
        if not m:
            bad.append("not a progress line: %r" % dr)
            continue
        done = float(m.group(1)) * unit[m.group(2)]
        total = float(m.group(3)) * unit[m.group(4)]
        # both rounded to 0.1 of their unit
        if done > total * 1.001 + 0.05 * unit[m.group(2)]:
            bad.append("done beyond total: %r" % dr)
        if len(dr) > wipe:
            bad.append("the wipe (%d columns) is narrower than a line (%d): %r" % (wipe, len(dr), dr))
    if rest != plain:
        bad.append("after the progress, stderr differs from the run without a terminal:\n"
                   "  tty:  %r\n  file: %r" % (rest[:300], plain[:300]))
if rd("tty.out") != rd("file.out"):
    bad.append("stdout differs between the runs with and without a terminal on stderr")
if rd("q-tty.err") != rd("q-file.err"):
    bad.append("-q: stderr on a terminal differs from stderr in a file: %r vs %r"
               % (rd("q-tty.err")[:300], rd("q-file.err")[:300]))
if rd("q-tty.out") != rd("q-file.out"):
    bad.append("-q: stdout differs")
s = split(rd("narrow.err"), 30)
if not s:
    bad.append("30 columns: no progress line")
else:
    for dr in s[0]:
        if len(dr.rstrip(b" ")) > 29 or len(dr) > 29:
            bad.append("30 columns: a line of %d columns: %r" % (len(dr), dr))
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
        echo "FAIL: $name"
        fail=1
    else
        echo "ok: $name: progress on a terminal only, wiped; -q silent"
    fi
}

check gen gen 200 -- "$E" gen --scenario workload --trace-size 8M -o @OUT@
check script script 200 -- "$E" script --itrace=i1000 -F pid,tid,cpu,ip,sym --symfs "$tmp/w/symfs" "$tmp/w/perf.data"
check doctor doctor 200 -- "$E" doctor --symfs "$tmp/w/symfs" "$tmp/w/perf.data"
check dump-perf dump 200 -- "$E" dump --records "$tmp/w/perf.data"
check dump-snapshot dump 200 -- "$E" dump --decode "$tmp/s/snapshot"
exit $fail
