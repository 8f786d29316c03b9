#!/bin/bash
# Output that cannot be written is an error said against standard output: every command that
# writes to stdout checks it at the end, and a write that fails during a run (a full disk, a
# closed stdout, a pipe whose reader left with SIGPIPE ignored) is said with its own cause, not
# as "FILE: input/output error" against the input whose listing stopped. Each case runs with
# stdout on /dev/full and with stdout closed (>&-) and checks the exit status (1) and the whole
# of stderr (one line: "etmkit: CMD: standard output: <strerror>"); small outputs (still in
# stdio's buffer at the end) and large ones (a write fails during the run) both. With the
# default SIGPIPE, `| head -1` stays quiet.
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
E=$ETMKIT_BIN
"$E" gen -q --scenario basic -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
"$E" gen -q --scenario snapshot-etr -o "$T/s" >/dev/null 2>&1 || { echo "SKIP: etmkit gen snapshot-etr failed"; exit 77; }
P="$T/g/perf.data"
SY="$T/g/symfs"
SS="$T/s/snapshot"
"$E" export --format=branch-list -q -o "$T/bl.txt" --symfs "$SY" "$P" 2>/dev/null || { echo "FAIL: export branch-list"; exit 1; }
fail=0
# run HOW STATUS STDERR-LINE command...: stdout to /dev/full (HOW=full) or closed (HOW=closed);
# exit status and stderr exactly
run() {
  local how=$1 want=$2 line=$3 rc; shift 3
  case $how in
    full) "$@" >/dev/full 2>"$T/err"; rc=$? ;;
    closed) "$@" >&- 2>"$T/err"; rc=$? ;;
  esac
  printf '%s\n' "$line" >"$T/want"
  if [ "$rc" -ne "$want" ] || ! cmp -s "$T/want" "$T/err"; then
    echo "FAIL: $* >$how: exit $rc (want $want), stderr:"; sed 's/^/    /' "$T/err" | head -5
    echo "  wanted:"; sed 's/^/    /' "$T/want"
    fail=1
  else
    echo "ok: $* >$how"
  fi
}
have_full=1
[ -c /dev/full ] || { have_full=0; echo "note: /dev/full is absent: only the closed-stdout cases run"; }
# both CMD-NAME command...: exit 1 and the one line, on /dev/full and with stdout closed
both() {
  local cmd=$1; shift
  [ $have_full = 1 ] && run full 1 "etmkit: $cmd: standard output: No space left on device" "$@"
  run closed 1 "etmkit: $cmd: standard output: Bad file descriptor" "$@"
}
# the same commands succeed when stdout can be written (the checks refuse nothing)
accept() {
  if ! "$@" >/dev/null 2>"$T/err"; then
    echo "FAIL: $*: refused:"; head -3 "$T/err"; fail=1
  else
    echo "ok: $* (accepted)"
  fi
}

# doctor: the account, large (-v) and JSON
both doctor "$E" doctor -v --symfs "$SY" "$P"
both doctor "$E" doctor --format=json --symfs "$SY" "$P"
accept "$E" doctor -v --symfs "$SY" "$P"
# script: a few samples (in stdio's buffer at the end) and megabytes (a write fails during it)
both script "$E" script --itrace=i100000 --symfs "$SY" "$P"
both script "$E" script --symfs "$SY" "$P"
# without time stamps and with -j 2 the writer itself makes the text from the decoders' records
# (session/run.c, defer): small and large again
printf 'timestamps = 0\n' >"$T/nots.cfg"
if "$E" gen -q --scenario basic --config "$T/nots.cfg" -o "$T/n" >/dev/null 2>&1; then
  both script "$E" script -j 2 --itrace=i100000 --symfs "$T/n/symfs" "$T/n/perf.data"
  both script "$E" script -j 2 --symfs "$T/n/symfs" "$T/n/perf.data"
  accept "$E" script -j 2 --symfs "$T/n/symfs" "$T/n/perf.data"
else
  echo "FAIL: etmkit gen basic with timestamps = 0"; fail=1
fi
accept "$E" script --itrace=i100000 --symfs "$SY" "$P"
# dump of a perf.data file: the header (small), the packets (large)
both dump "$E" dump --header "$P"
both dump "$E" dump --packets "$P"
accept "$E" dump --header "$P"
# dump of a snapshot folder: small (the example) and large (gen's 64 KiB ETR)
both dump "$E" dump "$ETMKIT_SRC/examples/etm4-hello"
both dump "$E" dump "$SS"
accept "$E" dump "$SS"
SH="${ETMKIT_SHARED:-$ETMKIT_SRC/../shared}/testdata/opencsd/snapshots/a57_single_step"
if [ -d "$SH" ]; then
  both dump "$E" dump "$SH"
else
  echo "note: $SH is absent (the shared hardware snapshots): its case is left out"
fi

# the commands that write their whole output at the end: standard output named as such, with
# or without -o -; a file is still named by -o
both report "$E" report --symfs "$SY" "$P"
both report "$E" report -o - --symfs "$SY" "$P"
both export "$E" export --symfs "$SY" "$P"
both export "$E" export -o - --format=branch-list --symfs "$SY" "$P"
both export "$E" export --format=folded --symfs "$SY" "$P"
both export "$E" export --format=svg -o - --symfs "$SY" "$P"
both export "$E" export --format=perfetto --symfs "$SY" "$P"
both merge "$E" merge -o - "$T/bl.txt"
both merge "$E" merge --format=autofdo -o - "$T/bl.txt"
accept "$E" report --symfs "$SY" "$P"
accept "$E" export --format=perfetto --symfs "$SY" "$P"
accept "$E" merge -o - "$T/bl.txt"
if [ $have_full = 1 ]; then
  run full 1 "etmkit: export: -o /dev/full: No space left on device" \
    "$E" export -o /dev/full --symfs "$SY" "$P"
  run full 1 "etmkit: merge: -o /dev/full: No space left on device" "$E" merge -o /dev/full "$T/bl.txt"
fi
# what the commands print on their own: help, version, gen --list
both gen "$E" gen --list
both script "$E" script --help
both dump "$E" dump --help
both script "$E" script --version
[ $have_full = 1 ] && run full 1 "etmkit: standard output: No space left on device" "$E" --help
run closed 1 "etmkit: standard output: Bad file descriptor" "$E" --version
accept "$E" --version

# a reader that leaves: with SIGPIPE ignored the write fails with EPIPE, said against stdout;
# with the default SIGPIPE the signal ends the run, quietly
pipe() {
  local want=$1 line=$2 rc; shift 2
  "$@" 2>"$T/err" | head -1 >/dev/null
  rc=${PIPESTATUS[0]}
  if [ -z "$line" ]; then : >"$T/want"; else printf '%s\n' "$line" >"$T/want"; fi
  if [ "$rc" -ne "$want" ] || ! cmp -s "$T/want" "$T/err"; then
    echo "FAIL: $* | head -1: exit $rc (want $want), stderr:"; sed 's/^/    /' "$T/err" | head -5
    echo "  wanted:"; sed 's/^/    /' "$T/want"
    fail=1
    return 1
  fi
  echo "ok: $* | head -1 (exit $rc)"
}
ign=$(awk '/^SigIgn:/ {print $2}' /proc/$$/status 2>/dev/null)
for c in "script --symfs $SY $P" "dump --packets $P" "dump $SS"; do
  cmd=${c%% *}
  (trap '' PIPE; pipe 1 "etmkit: $cmd: standard output: Broken pipe" "$E" $c) || fail=1
  if [ -n "$ign" ] && (((0x$ign >> 12) & 1)); then # SIGPIPE (13): bit 12
    echo "note: SIGPIPE is ignored by the test's parent: the default-SIGPIPE case is left out"
  else
    pipe 141 "" "$E" $c
  fi
done

exit $fail
