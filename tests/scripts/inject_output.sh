#!/bin/bash
# etmkit inject's output file (docs/PROFILES.md, "etmkit inject"). OUT is written beside itself
# and renamed into place, so that
# - OUT may name the recording itself: `inject -o s.data s.data` wrote over the file it was
#   reading (mapped: the run died of SIGBUS and left s.data empty); now s.data becomes the
#   injected file, and a link that names the recording (written in place) is refused, exit 2;
# - a failed run leaves an OUT that was there as it was, and no temporary file (it removed OUT:
#   a write that failed for lack of space, here a file size limit, lost the previous file).
# Its messages name OUT and the system's reason (they all said 'input/output error'): a full
# device (/dev/full), a missing folder, a directory, a read-only folder (not as root), a folder
# that is a file.
# `-o -` writes standard output in perf's pipe mode, as `perf inject -o -` does (it wrote a file
# named '-'): a 16-byte header, the same sideband and samples as the file (etmkit dump's
# listing of both), through a pipe, and so does an OUT that cannot seek (a FIFO: the file
# mode's seek back to the header failed); standard output that is the recording is refused
# (exit 2). A link's file and /dev/null are written in place and stay what they are.
# inject_perf.sh checks that perf reads the stream.
set -u
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$ETMKIT_BIN" gen -q --scenario basic -o "$tmp/rec" || { echo "FAIL: gen exited $?"; exit 1; }
sym=(--symfs "$tmp/rec/symfs")
rec=$tmp/rec/perf.data
mkdir "$tmp/w"
cd "$tmp/w" || exit 1
"$ETMKIT_BIN" inject -q "${sym[@]}" -o ref.data "$rec" 2>err || { bad "inject: exit $?"; cat err; exit 1; }
[ -s ref.data ] || { bad "inject wrote an empty file"; exit 1; }

# the files of the folder besides the ones named: none left behind by a run
leftovers() {
  local f extra=
  for f in * .*; do
    case " . .. $* " in *" $f "*) continue ;; esac
    [ -e "$f" ] && extra="$extra $f"
  done
  [ -z "$extra" ] || bad "$1: left behind:$extra"
  rm -rf -- $extra
}

# OUT is the recording: replaced by the injected file
cp "$rec" s.data
"$ETMKIT_BIN" inject -q "${sym[@]}" -o s.data s.data 2>err
rc=$?
[ $rc = 0 ] || bad "inject -o s.data s.data: exit $rc ($(head -1 err))"
cmp -s s.data ref.data || bad "inject -o s.data s.data: s.data is not the injected file ($(wc -c <s.data) bytes)"
leftovers "inject -o s.data s.data" ref.data s.data err

# a link to the recording: written in place it would be the recording; refused, both kept
cp "$rec" r.data
ln -s r.data link.data
"$ETMKIT_BIN" inject -q "${sym[@]}" -o link.data r.data 2>err
rc=$?
[ $rc = 2 ] || bad "inject -o LINK-TO-INPUT: exit $rc, not 2"
grep -q 'link.data' err || bad "inject -o LINK-TO-INPUT: the message does not name it: $(head -1 err)"
cmp -s r.data "$rec" || bad "inject -o LINK-TO-INPUT: the recording changed"
[ -L link.data ] || bad "inject -o LINK-TO-INPUT: the link was replaced"
leftovers "inject -o LINK-TO-INPUT" ref.data s.data err r.data link.data
rm -f r.data link.data

# a run that fails while writing (a 4 KiB file size limit, SIGXFSZ ignored: EFBIG) leaves the
# OUT that was there
echo previous >keep.data
(ulimit -f 4 && trap '' XFSZ && exec "$ETMKIT_BIN" inject -q "${sym[@]}" -o keep.data "$rec") 2>err
rc=$?
[ $rc = 1 ] || bad "inject over a size limit: exit $rc, not 1"
[ "$(cat keep.data 2>/dev/null)" = previous ] || bad "inject over a size limit: the existing OUT was not kept"
grep -q 'keep.data: File too large' err || bad "inject over a size limit: message: $(head -1 err)"
leftovers "inject over a size limit" ref.data s.data err keep.data

# each message names OUT and says why
# msg NAME OUT EXPECTED
msg() {
  "$ETMKIT_BIN" inject -q "${sym[@]}" -o "$2" "$rec" 2>err
  local rc=$?
  [ $rc = 1 ] || bad "$1: exit $rc, not 1"
  grep -qxF "etmkit inject: $2: $3" err || bad "$1: message '$(head -1 err)', not '$2: $3'"
}
msg "a full device" /dev/full "No space left on device"
[ -c /dev/full ] || bad "/dev/full is no longer a character device"
msg "a missing folder" nodir/x.data "No such file or directory"
[ -e nodir ] && bad "a missing folder: made"
mkdir dir
msg "a directory" dir "Is a directory"
msg "a file as a folder" s.data/x.data "Not a directory"
mkdir ro
chmod 555 ro
if [ "$(id -u)" != 0 ]; then
  msg "a read-only folder" ro/x.data "Permission denied"
  [ -z "$(ls -A ro)" ] || bad "a read-only folder: $(ls -A ro) made in it"
else
  echo "note: root: the read-only folder case was not run"
fi
leftovers "the failed runs" ref.data s.data err keep.data dir ro

# -o -: standard output, pipe mode, through a pipe
rm -rf ./*
"$ETMKIT_BIN" inject -q "${sym[@]}" -o ref.data "$rec" 2>err || bad "inject -o ref.data: exit $?"
"$ETMKIT_BIN" inject -q "${sym[@]}" -o - "$rec" 2>err | cat >pipe.data
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || bad "inject -o -: exit $rc ($(head -1 err))"
[ -e ./- ] && bad "inject -o -: wrote a file named '-'"
[ "$(head -c 8 pipe.data | tr -d '\000')" = PERFILE2 ] || bad "inject -o -: no perf.data magic on standard output"
[ "$(od -An -tx1 -j8 -N8 pipe.data | tr -d ' ')" = 1000000000000000 ] ||
  bad "inject -o -: not pipe mode (header size $(od -An -tu8 -j8 -N8 pipe.data))"
# the records but the header ones (attributes, features, build-ids), without their offsets
records() {
  "$ETMKIT_BIN" dump "$1" 2>/dev/null | sed -n '/^# records/,$p' | grep '^0x' | grep -v ' HEADER_' |
    cut -d' ' -f3-
}
records ref.data >want.rec
records pipe.data >got.rec
[ -s want.rec ] || bad "etmkit dump lists no records of the injected file"
cmp -s want.rec got.rec || bad "inject -o -: other records than -o FILE ($(wc -l <got.rec) for $(wc -l <want.rec))"
for h in HEADER_ATTR HEADER_FEATURE HEADER_BUILD_ID; do
  "$ETMKIT_BIN" dump pipe.data 2>/dev/null | grep -q " $h " || bad "inject -o -: no $h record"
done
leftovers "inject -o -" ref.data pipe.data err want.rec got.rec

# in place: a FIFO gets the pipe-mode stream (a file-mode writer's seek back to the header
# failed: 'Illegal seek'), a link's file the file, and both stay what they were
rm -f fifo got.fifo
mkfifo fifo
timeout 60 cat fifo >got.fifo &
reader=$!
"$ETMKIT_BIN" inject -q "${sym[@]}" -o fifo "$rec" 2>err || bad "inject -o FIFO: exit $? ($(head -1 err))"
[ -p fifo ] || { bad "inject -o FIFO: the FIFO was replaced"; kill $reader 2>/dev/null; }
wait $reader
cmp -s got.fifo pipe.data || bad "inject -o FIFO: the reader got other bytes than -o - writes"
echo old >target
ln -s target link
"$ETMKIT_BIN" inject -q "${sym[@]}" -o link "$rec" 2>err || bad "inject -o LINK: exit $? ($(head -1 err))"
[ -L link ] || bad "inject -o LINK: the link was replaced"
cmp -s target ref.data || bad "inject -o LINK: the file it names is not the injected file"
"$ETMKIT_BIN" inject -q "${sym[@]}" -o /dev/null "$rec" 2>err || bad "inject -o /dev/null: exit $?"
[ -c /dev/null ] || bad "inject -o /dev/null: no longer a character device"
leftovers "inject -o FIFO, LINK" ref.data pipe.data err want.rec got.rec fifo got.fifo target link

# standard output that is the recording (opened without truncating it): refused
cp "$rec" r.data
"$ETMKIT_BIN" inject -q "${sym[@]}" -o - r.data 1<>r.data 2>err
rc=$?
[ $rc = 2 ] || bad "inject -o - 1<>INPUT: exit $rc, not 2"
cmp -s r.data "$rec" || bad "inject -o - 1<>INPUT: the recording changed"

[ $fail = 0 ] && echo "ok: inject writes OUT beside itself, keeps it on failure and says why; -o - is pipe mode"
exit $fail
