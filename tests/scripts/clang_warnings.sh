#!/bin/bash
# Every C file of the build compiles without a warning under clang too: `make fuzz` builds the
# library with clang (libFuzzer) and -Werror, and the build's gcc does not see everything clang
# does (an atom-table macro's shift of 34 in a branch no header takes stopped the fuzz build,
# while gcc compiled it clean). Each command of the build's compile_commands.json is run with
# clang in place of the compiler, -fsyntax-only. The ASan build leaves it to the main build.
set -u
[ "${ETMKIT_SANITIZE:-0}" = 1 ] && { echo "SKIP: the main build checks this"; exit 77; }
command -v clang >/dev/null || { echo "SKIP: no clang (apt-get install clang)"; exit 77; }
db="${ETMKIT_BUILD:-}/compile_commands.json"
[ -f "$db" ] || { echo "SKIP: no $db"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# one line per file: its directory, then the command's arguments, NUL-separated
/usr/bin/python3 - "$db" "$tmp" <<'PY' || { echo "FAIL: cannot read $db"; exit 1; }
import json, os, shlex, sys
db, out = sys.argv[1], sys.argv[2]
n = 0
for e in json.load(open(db)):
    args = e.get('arguments') or shlex.split(e['command'])
    f = e['file']
    if not f.endswith('.c'):
        continue
    # the compiler's own arguments without the output: clang, syntax only
    keep, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ('-o', '-MF', '-MT', '-MQ'):
            skip = True
            continue
        if a in ('-c', '-MD', '-MMD') or a == f:
            continue
        keep.append(a)
    with open(os.path.join(out, '%04d.cmd' % n), 'w') as o:
        o.write('\0'.join([e['directory'], 'clang', '-fsyntax-only', '-Wno-unknown-warning-option'] + keep + [f]))
    n += 1
print(n, file=open(os.path.join(out, 'count'), 'w'))
PY
n=$(cat "$tmp/count")
[ "$n" -gt 100 ] || { echo "FAIL: only $n C files in $db"; exit 1; }
run_one() { # CMDFILE: directory, then the command
  local -a a
  mapfile -d '' a <"$1"
  (cd "${a[0]}" && "${a[@]:1}") >"$1.log" 2>&1 || echo "$1" >>"$1.bad"
}
export -f run_one
ls "$tmp"/*.cmd | xargs -P 2 -I{} bash -c 'run_one {}'
fail=0
for b in "$tmp"/*.bad; do
  [ -e "$b" ] || continue
  fail=1
  echo "FAIL: clang warns on $(tr '\0' ' ' <"${b%.bad}" | awk '{print $NF}'):"
  head -8 "${b%.bad}.log"
done
[ $fail -eq 0 ] && echo "ok: $n C files compile under clang without a warning"
exit $fail
