#!/bin/bash
# An input that cannot be opened is said by the reader's own lines (file, record, offset),
# the same in every command, and nothing more: script, doctor, report and export added a line
# "etmkit: FILE: malformed input", dump a line "FILE: no usable perf.data content (...)", and
# dump of a snapshot printed only the reader's first error text against the folder, without
# the file or the line that was damaged. Inputs: a perf.data file cut inside its header, and a
# snapshot whose trace.ini has a section header without its ']'.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
E=$ETMKIT_BIN
"$E" gen -q --scenario basic -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
"$E" gen -q --scenario snapshot-etr -o "$T/s" >/dev/null 2>&1 || { echo "SKIP: etmkit gen snapshot-etr failed"; exit 77; }
fail=0
# run NAME command...: exit status 1, stderr kept in $T/NAME.err
run() {
  local name=$1; shift
  "$@" >/dev/null 2>"$T/$name.err"
  local rc=$?
  [ $rc -eq 1 ] || { echo "FAIL $name: exit $rc, want 1: $(head -3 "$T/$name.err")"; fail=1; }
}
same() { # A B: the two stderr texts are equal
  cmp -s "$T/$1.err" "$T/$2.err" || { echo "FAIL: $2 says other than $1:"; diff "$T/$1.err" "$T/$2.err" | head -8; fail=1; }
}

# 1. perf.data cut at 100 bytes: one line naming the file and the header's offset
head -c 100 "$T/g/perf.data" >"$T/cut.data"
run script "$E" script "$T/cut.data"
[ "$(wc -l <"$T/script.err")" -eq 1 ] || { echo "FAIL script: $(wc -l <"$T/script.err") lines:"; cat "$T/script.err"; fail=1; }
grep -q "^$T/cut.data: offset 0x[0-9a-f]*: error: " "$T/script.err" ||
  { echo "FAIL script: the line names no file and offset: $(cat "$T/script.err")"; fail=1; }
run doctor "$E" doctor "$T/cut.data"
run report "$E" report "$T/cut.data"
run export "$E" export --format=folded -o "$T/x.folded" "$T/cut.data"
run dump "$E" dump "$T/cut.data"
for c in doctor report export dump; do same script $c; done

# 2. a snapshot whose trace.ini line 4 is '[buffer0': dump names the file of the error and
# the damaged line, as script does (their summaries keep different numbers of offsets)
cp -r "$T/s/snapshot" "$T/br"
sed -i 's/^\[buffer0\]$/[buffer0/' "$T/br/trace.ini"
run sscript "$E" script "$T/br"
run sdump "$E" dump "$T/br"
for n in sscript sdump; do
  head -1 "$T/$n.err" | grep -qxF "$T/br/trace.ini: error: no usable trace buffer in the trace description [snapshot.missing-key]" ||
    { echo "FAIL $n: the first line is not the error with its file: $(head -1 "$T/$n.err")"; fail=1; }
done
grep -qxF "$T/br/trace.ini: record 4: offset 0x21: warning: unterminated '[' in section header (keys up to the next section are ignored); line skipped [ini.malformed-line]" "$T/sdump.err" ||
  { echo "FAIL dump of the snapshot: the damaged line is not named:"; cat "$T/sdump.err"; fail=1; }
grep -q "malformed input" "$T/sscript.err" && { echo "FAIL script of the snapshot: a 'malformed input' line"; fail=1; }
[ $fail -eq 0 ] && echo "ok: inputs that cannot be opened are said once, by the reader, in every command"
exit $fail
