#!/bin/sh
# The first symbol lookup into a DSO keyed its address before the DSO's symbols were loaded,
# with the key kind the symbols had not set yet (a file's, pgoff + offset): for a kernel map
# whose pgoff is not its start address that named the wrong symbol for the first kernel sample,
# and decoder threads read the key kind while another thread loading the symbols wrote it (a
# data race ThreadSanitizer reported on `script -j 2`). Now the kind is known before any key
# is made (dso_key_kind). Test: a gen kernel recording and the same file with the kernel
# MMAP's pgoff set to 0 give the same lines (kernel symbols are keyed by address, whatever the
# pgoff); before the fix one line differed.
set -u
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$ETMKIT_BIN" gen -q --scenario kernel-and-user --seed 1 -o "$T/k" || exit 1
python3 - "$T/k/perf.data" "$T/k/perf-pgoff0.data" <<'PY' || exit 1
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
ds, dsz = struct.unpack_from('<QQ', d, 40)
pos, n = ds, 0
while pos + 8 <= ds + dsz:
    typ, misc, size = struct.unpack_from('<IHH', d, pos)
    if size < 8:
        break
    if typ == 1:  # MMAP: pid, tid, start, len, pgoff, filename
        name = bytes(d[pos + 40:pos + size]).split(b'\0')[0]
        if name.startswith(b'[kernel.kallsyms]'):
            struct.pack_into('<Q', d, pos + 32, 0)
            n += 1
    pos += size + (struct.unpack_from('<Q', d, pos + 8)[0] if typ == 71 else 0)
if n != 1:
    sys.exit('expected one kernel MMAP, found %d' % n)
open(sys.argv[2], 'wb').write(d)
PY
fail=0
for j in 1 2; do
    "$ETMKIT_BIN" script -q -j $j --symfs "$T/k/symfs" --itrace=b -F cpu,ip,sym,symoff,dso,addr \
        "$T/k/perf.data" >"$T/a" 2>/dev/null
    "$ETMKIT_BIN" script -q -j $j --symfs "$T/k/symfs" --itrace=b -F cpu,ip,sym,symoff,dso,addr \
        "$T/k/perf-pgoff0.data" >"$T/b" 2>/dev/null
    grep -q kernel "$T/a" || { echo "FAIL: no kernel samples"; fail=1; }
    if ! cmp -s "$T/a" "$T/b"; then
        echo "FAIL (-j $j): the kernel MMAP's pgoff changed these lines:"
        diff "$T/a" "$T/b" | head -6
        fail=1
    fi
done
[ $fail = 0 ] && echo "ok: $(wc -l <"$T/a") lines the same"
exit $fail
