#!/bin/bash
# etmkit doctor takes the decoding options of etmkit script (issue 11, item 5): one parser
# serves both. Every option script takes is taken by doctor; the options that only shape or
# select samples (-F, --ns, the filters, -q) leave the account as it is; -j N and -i FILE give
# the same account; a bad value or an unknown option gives the same one line in both commands
# (but for the command's name).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$ETMKIT_BIN" gen --scenario kernel-and-user-novmlinux -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen failed"; exit 77; }
P="$T/g/perf.data"
fail=0
"$ETMKIT_BIN" doctor --symfs "$T/g/symfs" "$P" >"$T/base" 2>"$T/base.err"
rc=$?
# the account of this recording has causes (kernel code without an image): a real comparison
[ $rc -eq 0 ] && grep -q 'no kernel image was given' "$T/base" ||
  { echo "FAIL: doctor on the recording: exit $rc, $(head -2 "$T/base.err")"; exit 1; }
same() { # description doctor-options...: the same account as without them
  local what=$1; shift
  if ! "$ETMKIT_BIN" doctor "$@" >"$T/out" 2>"$T/err"; then
    echo "FAIL: doctor $what: exit $?: $(head -2 "$T/err")"; fail=1
  elif ! cmp -s "$T/base" "$T/out"; then
    echo "FAIL: doctor $what: another account"; diff "$T/base" "$T/out" | head -5; fail=1
  elif [ -s "$T/err" ]; then
    echo "FAIL: doctor $what: wrote to stderr: $(head -2 "$T/err")"; fail=1
  else
    echo "ok: doctor $what"
  fi
}
S=(--symfs "$T/g/symfs")
same "-j 2" -j 2 "${S[@]}" "$P"
same "--threads=1" --threads=1 "${S[@]}" "$P"
same "-q" -q "${S[@]}" "$P"
same "--ns" --ns "${S[@]}" "$P"
same "-F" -F ip,sym,cpu "${S[@]}" "$P"
same "--itrace=b (its default)" --itrace=b "${S[@]}" "$P"
same "-i FILE" "${S[@]}" -i "$P"
same "--input=FILE" "${S[@]}" --input="$P"
same "-C 0-1" -C 0-1 "${S[@]}" "$P"
same "--cpu=1" --cpu=1 "${S[@]}" "$P"
same "--pid" --pid 1000 "${S[@]}" "$P"
same "--tid" --tid 1001,1000 "${S[@]}" "$P"
same "--comm" --comm simloop "${S[@]}" "$P"
same "--time" --time 1,2 "${S[@]}" "$P"
same "--symfs=DIR" --symfs="$T/g/symfs" "$P"
same "--kallsyms (symbols only: no code, same causes)" --kallsyms "$T/g/kallsyms" "${S[@]}" "$P"
# the default input: ./perf.data
(cd "$T/g" && "$ETMKIT_BIN" doctor --symfs symfs perf.data >"$T/base" 2>&1 &&
  same "with the default input ./perf.data" --symfs symfs) || fail=1
"$ETMKIT_BIN" doctor --symfs "$T/g/symfs" "$P" >"$T/base" 2>/dev/null
# options that change the account or the status do their job
"$ETMKIT_BIN" doctor --strict "${S[@]}" "$P" >/dev/null 2>&1
rc=$?; [ $rc -eq 1 ] && echo "ok: doctor --strict: exit 1" || { echo "FAIL: doctor --strict: exit $rc, want 1"; fail=1; }
for o in -v --verbose --no-end-flush; do
  "$ETMKIT_BIN" doctor $o "${S[@]}" "$P" >"$T/o" 2>"$T/err"
  rc=$?
  if [ $rc -ne 0 ] || [ -s "$T/err" ] || [ "$(head -1 "$T/o")" != "$(head -1 "$T/base")" ]; then
    echo "FAIL: doctor $o: exit $rc: $(head -2 "$T/err")"; fail=1
  else
    echo "ok: doctor $o"
  fi
done
# the same messages from both commands
for args in "-j abc" "-F ip,,sym" "--itrace=bz" "--bogus" "-C 1-0" "--pid x" "--tid 1,,2" \
            "--comm ," "--time 1.5" "--time 10%" "-k $T/nope" "--symfs $T/nope"; do
  # shellcheck disable=SC2086
  "$ETMKIT_BIN" script $args "$P" >/dev/null 2>"$T/s.err"; rs=$?
  # shellcheck disable=SC2086
  "$ETMKIT_BIN" doctor $args "$P" >/dev/null 2>"$T/d.err"; rd=$?
  sed 's/etmkit: script: /etmkit: CMD: /; s/etmkit script --help/etmkit CMD --help/' "$T/s.err" >"$T/s.cmp"
  sed 's/etmkit: doctor: /etmkit: CMD: /; s/etmkit doctor --help/etmkit CMD --help/' "$T/d.err" >"$T/d.cmp"
  if [ $rs -ne 2 ] || [ $rd -ne 2 ] || ! cmp -s "$T/s.cmp" "$T/d.cmp" || [ "$(wc -l <"$T/s.err")" -ne 1 ]; then
    echo "FAIL: '$args': script exit $rs, doctor exit $rd:"; cat "$T/s.err" "$T/d.err"; fail=1
  else
    echo "ok: '$args': $(cat "$T/d.err")"
  fi
done
exit $fail
