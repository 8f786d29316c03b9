#!/bin/sh
# etmkit dump FILE on perf.data: golden text of a small real recording, JSON that parses for
# every recording, section selection, exit statuses, damaged input.
set -u
files="${ETMKIT_SHARED:-/nonexistent}/testdata/perf/files"
if [ ! -d "$files" ]; then
  echo "SKIP: $files is absent"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 1. golden text (run from the folder so that the file name in the listing is stable)
(cd "$files" && "$ETMKIT_BIN" dump perf_etm.data) >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "dump perf_etm.data exited $?"
if ! diff -u "$ETMKIT_SRC/tests/golden/perf_etm.data.dump.txt" "$tmp/out.txt" >"$tmp/diff"; then
  head -40 "$tmp/diff"
  fail "dump perf_etm.data differs from tests/golden/perf_etm.data.dump.txt"
fi
grep -q 'perf.index-simpleperf' "$tmp/err.txt" || fail "simpleperf index note missing on stderr"

# 2. JSON parses, for every recording (published and fixed-index)
for f in "$files"/perf*.data* "$files"/../fixed-index/*; do
  [ -f "$f" ] || continue
  case "$f" in *perf_inject.data) continue ;; esac
  "$ETMKIT_BIN" dump --format=json "$f" >"$tmp/out.json" 2>/dev/null || fail "json dump of $f exited $?"
  python3 - "$tmp/out.json" "$f" <<'EOF' || fail "json of $f"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("header", "attrs", "features", "records", "config", "queues", "buffers", "diagnostics"):
    assert k in d, k
assert d["config"]["header_version"] in (0, 1, 2)
assert len(d["records"]) > 50
for q in d["queues"]:
    for s in q["slices"]:
        assert s["data_size"] <= s["aux_size"]
assert not [x for x in d["diagnostics"] if x["severity"] == "error"]
EOF
done

# 3. section selection
(cd "$files" && "$ETMKIT_BIN" dump --slices perf_kernel.data) >"$tmp/s.txt" 2>/dev/null || fail "--slices"
head -1 "$tmp/s.txt" | grep -qx '# AUX slices' || fail "--slices should start with its section"
grep -q '^# records' "$tmp/s.txt" && fail "--slices printed records"
grep -c '^  slice ' "$tmp/s.txt" | grep -qx 3 || fail "perf_kernel.data should have 3 slices"
(cd "$files" && "$ETMKIT_BIN" dump --config --records perf_kernel.data) >"$tmp/c.txt" 2>/dev/null ||
  fail "--config --records"
grep -q '^# cs_etm configuration' "$tmp/c.txt" || fail "--config section missing"
grep -q '^# AUX slices' "$tmp/c.txt" && fail "--config printed slices"
[ "$(grep -c ' #[0-9]* MMAP ' "$tmp/c.txt")" -eq 329 ] || fail "perf_kernel.data should list 329 MMAP records"

# 4. exit statuses
"$ETMKIT_BIN" dump --help | grep -q -- '--format=text|ocsd|json' || fail "--help"
"$ETMKIT_BIN" dump --help | grep -q -- '--packets' || fail "--help: --packets"
"$ETMKIT_BIN" dump --format=xml "$files/perf_etm.data" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 2 ] || fail "bad --format gave $rc, expected 2"
"$ETMKIT_BIN" dump "$tmp/no-such-file" >/dev/null 2>&1; rc=$?
[ "$rc" -eq 1 ] || fail "missing file gave $rc, expected 1"
"$ETMKIT_BIN" dump "$files/perf_inject.data" >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" -eq 1 ] || fail "non-perf.data gave $rc, expected 1"
grep -q 'not a perf.data file' "$tmp/e" || fail "non-perf.data: no reason given"
"$ETMKIT_BIN" dump "$files/perf_with_missing_aux_data.data" >"$tmp/m.txt" 2>"$tmp/e"; rc=$?
[ "$rc" -eq 0 ] || fail "missing AUX data is not fatal (gave $rc)"
grep -q 'PROBLEM no-data' "$tmp/m.txt" || fail "missing AUX data not shown on the slices"
grep -q 'perf.aux-no-data' "$tmp/e" || fail "missing AUX data not reported"

# 5. a truncated copy still lists what is there and names the offset of the damage
head -c 20000 "$files/perf_kernel.data" >"$tmp/trunc.data"
"$ETMKIT_BIN" dump "$tmp/trunc.data" >"$tmp/t.txt" 2>"$tmp/e"; rc=$?
[ "$rc" -eq 0 ] || fail "truncated file gave $rc"
grep -q 'offset 0x[0-9a-f]*: warning' "$tmp/e" || fail "truncation not reported with an offset"
grep -q ' MMAP ' "$tmp/t.txt" || fail "records before the damage not listed"
# 6. a perf.data folder (perf record -o DIR with kcore_dir: DIR/data, no snapshot.ini) is
#    dumped as its recording, not taken for a snapshot folder
mkdir "$tmp/rec" && cp "$files/perf_etm.data" "$tmp/rec/data"
"$ETMKIT_BIN" dump "$tmp/rec" >"$tmp/f.txt" 2>"$tmp/e" || fail "dump of a perf.data folder exited $?"
"$ETMKIT_BIN" dump "$tmp/rec/data" >"$tmp/d.txt" 2>/dev/null || fail "dump of DIR/data exited $?"
cmp -s "$tmp/f.txt" "$tmp/d.txt" || fail "dump DIR differs from dump DIR/data"
echo "dump perf ok"
