#!/bin/bash
# etmkit export counts each queue's samples on the thread that decodes it (a builder per
# queue, EK_PROFILE_BUILD_LOCAL) and only the pending branches in output order (the shared
# builder), then merges. The profile and everything export says must be what counting every
# sample in output order gives (ETMKIT_EXPORT_ORDERED=1: one builder on the writer's thread):
# the same bytes (branch-list, which holds every count; autofdo) and the same stderr but for
# the output's name, on every gen scenario that writes a perf recording (seed 1), with -j 1
# and -j 2, for --itrace=b and il16, and on the shared real recordings.
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/no-cache"
fail=0 n=0

# same NAME ARGS...: export staged and ordered, compared
same() {
  local name=$1; shift
  "$ETMKIT_BIN" export --buildid-dir "$tmp/no-cache" -o "$tmp/st" "$@" 2>"$tmp/st.err"
  local rs=$?
  ETMKIT_EXPORT_ORDERED=1 "$ETMKIT_BIN" export --buildid-dir "$tmp/no-cache" -o "$tmp/or" "$@" \
    2>"$tmp/or.err"
  local ro=$?
  sed -i "s|$tmp/st|OUT|g" "$tmp/st.err"
  sed -i "s|$tmp/or|OUT|g" "$tmp/or.err"
  n=$((n + 1))
  if [ "$rs" != "$ro" ]; then
    echo "FAIL $name: exit status $rs staged, $ro in order"; fail=1; return
  fi
  if [ -e "$tmp/st" ] || [ -e "$tmp/or" ]; then
    cmp -s "$tmp/st" "$tmp/or" || { echo "FAIL $name: the profiles differ"; diff "$tmp/or" "$tmp/st" | head -5; fail=1; }
  fi
  cmp -s "$tmp/st.err" "$tmp/or.err" || { echo "FAIL $name: stderr differs"; diff "$tmp/or.err" "$tmp/st.err" | head -5; fail=1; }
  rm -f "$tmp/st" "$tmp/or"
}

for sc in $("$ETMKIT_BIN" gen --list | awk '{ print $1 }'); do
  case $sc in snapshot-etr|snapshot-ete-trbe|workload|workload-real) continue ;; esac
  "$ETMKIT_BIN" gen -q --scenario "$sc" -o "$tmp/g" >/dev/null 2>&1 || { rm -rf "$tmp/g"; continue; }
  [ -f "$tmp/g/perf.data" ] || { rm -rf "$tmp/g"; continue; }
  extra=()
  case $sc in per-thread-trbe-biglittle) extra=(--raw-cpu=1) ;; esac
  same "$sc b" --format=branch-list --symfs "$tmp/g/symfs" "${extra[@]}" "$tmp/g/perf.data"
  same "$sc b -j1" --format=branch-list -j 1 --symfs "$tmp/g/symfs" "${extra[@]}" "$tmp/g/perf.data"
  same "$sc il16 autofdo" --format=autofdo --itrace=i100il16 --symfs "$tmp/g/symfs" "${extra[@]}" \
    "$tmp/g/perf.data"
  rm -rf "$tmp/g"
done
# the workload at 1 MiB: 4 CPUs, kernel and user, dlopen cycles, exec
"$ETMKIT_BIN" gen -q --scenario workload --trace-size 1M -o "$tmp/w" >/dev/null 2>&1 ||
  { echo "FAIL: gen workload"; exit 1; }
same "workload b" --format=branch-list --symfs "$tmp/w/symfs" "$tmp/w/perf.data"
same "workload b -j2" --format=autofdo -j 2 --symfs "$tmp/w/symfs" "$tmp/w/perf.data"
same "workload b -C 1,2" --format=branch-list -C 1,2 --symfs "$tmp/w/symfs" "$tmp/w/perf.data"

S=${ETMKIT_SHARED:-}/testdata/perf
if [ -d "$S/files" ]; then
  for f in "$S"/files/*; do
    [ -f "$f" ] || continue
    [ "$(head -c 8 "$f" 2>/dev/null | tr -d '\000')" = "PERFILE2" ] || continue
    same "$(basename "$f")" --format=branch-list --symfs "$S/symfs" "$f"
  done
else
  echo "note: $S is absent: gen recordings only"
fi
[ "$fail" -eq 0 ] && echo "ok: $n exports counted per queue are the exports counted in order"
exit $fail
