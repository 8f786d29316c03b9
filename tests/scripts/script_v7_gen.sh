#!/bin/sh
# perf.data recordings with CS_ETMV3 metadata (PTM and ETMv3) through the session: `etmkit
# script --itrace=b` on `etmkit gen --scenario armv7-ptm` and `armv7-etm3`, seeds 1-3, gives
# exactly, in order, the branch samples derived here from the scenario's truth.branches.tsv
# (the scenarios write no expected-branches.txt: perf's sample policy is modelled in the
# simulator for AArch64 only). What is compared, per sample: pid/tid, the kind of branch, ip
# and addr (`-F pid,tid,flags,ip,addr`). Derived from the truth rows as perf's cs_etm (and
# etmkit) sample a decoded trace:
#  - a taken branch or exception row gives one sample, ip = from, addr = to; not-taken rows
#    give none;
#  - flags by the row's kind: bl, blr -> call; ret, eret -> return; irq -> hw int; b -> jmp or
#    jcc (the truth does not say whether the instruction was conditional: both are "jump");
#  - an interrupt's ip is the last instruction that ran before it: the row's branch when the
#    interrupt came before any instruction at its target (that branch then has no sample of
#    its own: no range starts at its target), else the last instruction from the previous
#    row's target to the interrupted address (instruction sizes read from the program in
#    symfs: A32 4 bytes, T32 2 or 4 by the first halfword);
#  - the thread (CONTEXTIDR holds the thread's ID, which the program's IRQ handler changes):
#    ETMv3 reports every instruction, so a branch's sample is taken when its target's first
#    instruction is decoded, in the thread the row names; PTM reports a range at its closing
#    waypoint, after any context ID packet inside it, so a branch's sample carries the thread
#    of the next truth row (where the range it enters ends);
#  - the trace's ends are left out: the first sample ("tr strt", from nothing to the first
#    instruction, which the truth does not record) and, from the final truth row on, the
#    samples of the trace's end (whether the final branch has a sample of its own depends on
#    whether the trace reported an instruction at its target, which the truth does not
#    record); those are at most 2 lines, the last one a "tr end".
set -u
[ -x "${ETMKIT_BIN:-}" ] || { echo "SKIP: no etmkit binary"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is needed to derive the samples"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/derive.py" <<'PY'
import sys
truth, exe, pgoff, proto = sys.argv[1], sys.argv[2], int(sys.argv[3], 0), sys.argv[4]
code = open(exe, 'rb').read()
rows = []
for line in open(truth):
    if line.startswith('#'):
        continue
    f = line.rstrip('\n').split('\t')
    rows.append(dict(pid=int(f[2]), tid=int(f[3]), frm=int(f[5], 16), to=int(f[6], 16),
                     kind=f[7], taken=int(f[8]), to_isa=f[10]))

def size_at(addr, isa):
    if isa == 'A32':
        return 4
    hw = code[pgoff + addr] | code[pgoff + addr + 1] << 8
    return 4 if hw >= 0xE800 else 2

def last_before(start, isa, p):
    a, last = start, None
    while a < p:
        last = a
        a += size_at(a, isa)
    return last

CLS = {'bl': 'call', 'blr': 'call', 'ret': 'return', 'eret': 'return', 'irq': 'hw int', 'b': 'jump'}
out = []
for i in range(len(rows) - 1):
    r, nxt = rows[i], rows[i + 1]
    if not r['taken']:
        continue
    if r['kind'] == 'irq':
        prev = rows[i - 1]
        ip = prev['frm'] if prev['to'] == r['frm'] else last_before(prev['to'], prev['to_isa'], r['frm'])
        out.append('%d/%d hw int %x %x' % (r['pid'], r['tid'], ip, r['to']))
        continue
    if nxt['kind'] == 'irq' and nxt['frm'] == r['to']:
        continue
    tid = nxt['tid'] if proto == 'ptm' else r['tid']
    out.append('%d/%d %s %x %x' % (r['pid'], tid, CLS[r['kind']], r['frm'], r['to']))
print('\n'.join(out))
PY

fail=0
for proto in ptm etm3; do
    for seed in 1 2 3; do
        out="$tmp/$proto-$seed"
        "$ETMKIT_BIN" gen --scenario "armv7-$proto" --seed "$seed" -o "$out" >/dev/null 2>&1 ||
            { echo "armv7-$proto seed $seed: gen failed"; fail=1; continue; }
        # the program's file offset: the MMAP2 of /usr/bin/simv7 ([addr(len) @ pgoff ...])
        map=$("$ETMKIT_BIN" dump --records "$out/perf.data" | grep 'MMAP2.*/usr/bin/simv7' | head -n 1)
        addr=$(echo "$map" | sed -E 's/.*\[(0x[0-9a-f]+)\(.*/\1/')
        pgoff=$(echo "$map" | sed -E 's/.*\) @ (0x[0-9a-f]+) .*/\1/')
        [ "$addr" = 0x0 ] || { echo "armv7-$proto: the program is not mapped at 0 ($map)"; fail=1; continue; }
        python3 "$tmp/derive.py" "$out/truth.branches.tsv" "$out/symfs/usr/bin/simv7" "$pgoff" \
            "$proto" >"$out.want" || { fail=1; continue; }
        "$ETMKIT_BIN" script --symfs "$out/symfs" --itrace=b -F pid,tid,flags,ip,addr \
            "$out/perf.data" 2>"$out.err" |
            sed -E 's/ +/ /g; s/^ //; s/ => / /; s/ (jcc|jmp) / jump /' >"$out.got"
        n=$(wc -l <"$out.want")
        [ "$n" -gt 10000 ] || { echo "armv7-$proto seed $seed: only $n samples derived"; fail=1; continue; }
        head -n 1 "$out.got" | grep -q '^1000/1000 tr strt 0 8000$' ||
            { echo "armv7-$proto seed $seed: first sample: $(head -n 1 "$out.got")"; fail=1; }
        sed -n "2,$((n + 1))p" "$out.got" >"$out.mid"
        if ! cmp -s "$out.want" "$out.mid"; then
            echo "armv7-$proto seed $seed: samples differ from the truth (< truth, > etmkit):"
            diff "$out.want" "$out.mid" | head -20
            cat "$out.err"
            fail=1
            continue
        fi
        tail_n=$(($(wc -l <"$out.got") - n - 1))
        if [ "$tail_n" -lt 1 ] || [ "$tail_n" -gt 2 ] || ! tail -n 1 "$out.got" | grep -q ' tr end '; then
            echo "armv7-$proto seed $seed: the trace's end is not 1-2 samples ending with tr end:"
            sed -n "$((n + 2)),\$p" "$out.got"
            fail=1
            continue
        fi
        [ -s "$out.err" ] && { echo "armv7-$proto seed $seed: etmkit script said:"; cat "$out.err"; fail=1; }
        echo "armv7-$proto seed $seed: $n branch samples identical"
        # doctor names the protocol and finds nothing undecoded
        [ "$proto" = ptm ] && want_p=PTM || want_p=ETMv3
        "$ETMKIT_BIN" doctor --symfs "$out/symfs" "$out/perf.data" >"$out.doc" 2>&1
        if ! head -n 1 "$out.doc" | grep -q "CoreSight trace of 1 CPU ($want_p)," ||
            ! grep -q '^All trace was decoded\.$' "$out.doc"; then
            echo "armv7-$proto seed $seed: etmkit doctor:"
            head -n 8 "$out.doc"
            fail=1
        fi
    done
done
exit $fail
