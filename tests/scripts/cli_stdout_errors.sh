#!/bin/bash
# Output that cannot be written is an error said against standard output: every command that
# writes to stdout checks it at the end (a small output is still in stdio's buffer when the run
# ends). Each case runs with stdout on /dev/full and with stdout closed (>&-) and checks the
# exit status (1) and the whole of stderr (one line: "etmkit: CMD: standard output:
# <strerror>").
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
E=$ETMKIT_BIN
"$E" gen -q --scenario basic -o "$T/g" >/dev/null 2>&1 || { echo "SKIP: etmkit gen basic failed"; exit 77; }
P="$T/g/perf.data"
SY="$T/g/symfs"
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
# script: a few samples
both script "$E" script --itrace=i100000 --symfs "$SY" "$P"
accept "$E" script --itrace=i100000 --symfs "$SY" "$P"
# dump of a perf.data file: the header
both dump "$E" dump --header "$P"
accept "$E" dump --header "$P"
# dump of a snapshot folder
both dump "$E" dump "$ETMKIT_SRC/examples/etm4-hello"
SH="${ETMKIT_SHARED:-$ETMKIT_SRC/../shared}/testdata/opencsd/snapshots/a57_single_step"
if [ -d "$SH" ]; then
  both dump "$E" dump "$SH"
else
  echo "note: $SH is absent (the shared hardware snapshots): its case is left out"
fi

# what the commands print on their own: help, version, gen --list
both gen "$E" gen --list
both script "$E" script --help
both dump "$E" dump --help
both script "$E" script --version
[ $have_full = 1 ] && run full 1 "etmkit: standard output: No space left on device" "$E" --help
run closed 1 "etmkit: standard output: Bad file descriptor" "$E" --version
accept "$E" --version

exit $fail
