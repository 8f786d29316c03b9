#!/bin/bash
# -o naming something that is not a regular file: a FIFO, a symbolic link, a character device
# (the null device, made in a temporary folder: only as root). The commands write a regular
# file through a temporary beside it, renamed into place; over a device or a link that rename
# replaced the device or the link with a plain file: `etmkit export -o /dev/null` as root left
# /dev/null a regular file, and -o /dev/stdout replaced the link. Such a name is written in
# place (as open(2) would) and stays what it was: for export (autofdo, folded, perfetto), report
# and merge, the bytes that reach it are the ones -o - writes.
set -u
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$ETMKIT_BIN" gen -q --scenario basic -o "$tmp/rec" || { echo "FAIL: gen exited $?"; exit 1; }
rec=(--symfs "$tmp/rec/symfs" "$tmp/rec/perf.data")
bl="$tmp/p.bl"
"$ETMKIT_BIN" export -q --format=branch-list -o "$bl" "${rec[@]}" || { echo "FAIL: export"; exit 1; }

# name: the command's words before -o; after: its words after OUT
check() {
  local name=$1; shift
  local -a before=() after=()
  while [ "$1" != -- ]; do before+=("$1"); shift; done
  shift
  after=("$@")
  "$ETMKIT_BIN" "${before[@]}" -o - "${after[@]}" >"$tmp/want" 2>/dev/null ||
    { bad "$name -o -: exit $?"; return; }
  [ -s "$tmp/want" ] || { bad "$name -o -: no output"; return; }

  # a FIFO: read while the command writes (bounded: a command that replaced it writes nowhere)
  rm -f "$tmp/fifo" "$tmp/got"
  mkfifo "$tmp/fifo"
  timeout 60 cat "$tmp/fifo" >"$tmp/got" &
  local reader=$!
  pids+=("$reader")
  "$ETMKIT_BIN" "${before[@]}" -o "$tmp/fifo" "${after[@]}" 2>/dev/null || bad "$name -o FIFO: exit $?"
  [ -p "$tmp/fifo" ] || bad "$name -o FIFO: the FIFO was replaced ($(stat -c %F "$tmp/fifo"))"
  [ -p "$tmp/fifo" ] || kill "$reader" 2>/dev/null
  wait "$reader"
  cmp -s "$tmp/want" "$tmp/got" || bad "$name -o FIFO: the reader got other bytes than -o -"

  # a symbolic link to a file: the file gets the output, the link stays
  rm -f "$tmp/link" "$tmp/target"
  echo old >"$tmp/target"
  ln -s target "$tmp/link"
  "$ETMKIT_BIN" "${before[@]}" -o "$tmp/link" "${after[@]}" 2>/dev/null || bad "$name -o LINK: exit $?"
  [ -L "$tmp/link" ] || bad "$name -o LINK: the link was replaced by a $(stat -c %F "$tmp/link")"
  cmp -s "$tmp/want" "$tmp/target" || bad "$name -o LINK: the file it names has other bytes than -o -"

  # the null device (mknod: root only)
  if [ "$(id -u)" = 0 ]; then
    rm -f "$tmp/null"
    if mknod "$tmp/null" c 1 3 2>/dev/null; then
      "$ETMKIT_BIN" "${before[@]}" -o "$tmp/null" "${after[@]}" 2>/dev/null || bad "$name -o NULL: exit $?"
      [ -c "$tmp/null" ] || bad "$name -o a null device: it became a $(stat -c %F "$tmp/null")"
    fi
  fi
}

check "export autofdo" export -q --format=autofdo -- "${rec[@]}"
check "export folded" export -q --format=folded -- "${rec[@]}"
check "export perfetto" export -q --format=perfetto -- "${rec[@]}"
check "report" report -q -- "${rec[@]}"
check "merge" merge -q -- "$bl"
[ "$(id -u)" = 0 ] || echo "note: not root: the null device case was not run (mknod)"
[ $fail = 0 ] && echo "ok: export (autofdo, folded, perfetto), report and merge write a FIFO, a link's file and a device in place"
exit $fail
