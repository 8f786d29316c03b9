#!/bin/sh
# `etmkit gen -o OUT` (issue 11 item 10):
#  - a new OUT, or an existing empty folder, is written;
#  - an existing non-empty OUT is refused (exit 2) and left as it was;
#  - --force replaces an earlier gen output wholesale: afterwards OUT holds exactly what a run into
#    a new folder writes (no file of the old run survives beside the new recording);
#  - --force does not replace a folder that gen did not write (no truth.summary), nor a file;
#  - a run that fails (a bad --config; a file that cannot be written, under `ulimit -f` with
#    SIGXFSZ ignored) exits 1 and leaves no OUT and nothing else beside it;
#  - `gen --list`: the descriptions start in one column, after the longest name.
set -u
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
E=$ETMKIT_BIN
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# listing of a folder: every path with the checksum of its content
sums() { (cd "$1" && find . -type f -exec md5sum {} + | sort -k 2) 2>/dev/null; }

# two scenarios that write different sets of files: session-arbitration has two sessions
# (perf-1.data, expected-branches-1.txt, ...), basic one
"$E" gen -s basic -o "$tmp/ref-basic" 2>/dev/null || bad "gen basic into a new folder"
"$E" gen -s session-arbitration -o "$tmp/ref-arb" 2>/dev/null || bad "gen session-arbitration"
[ -f "$tmp/ref-arb/perf-1.data" ] && [ ! -e "$tmp/ref-basic/perf-1.data" ] ||
    bad "the two scenarios do not differ in their files (perf-1.data): the --force check below means nothing"

# an existing empty folder
mkdir "$tmp/empty"
if "$E" gen -s basic -o "$tmp/empty" 2>/dev/null; then
    [ "$(sums "$tmp/empty")" = "$(sums "$tmp/ref-basic")" ] || bad "empty folder: not the output of a run into a new folder"
else
    bad "gen into an existing empty folder failed"
fi

# non-empty: refused, untouched
cp -a "$tmp/ref-arb" "$tmp/out"
before=$(sums "$tmp/out")
"$E" gen -s basic -o "$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] || bad "non-empty -o without --force: exit $rc, not 2"
grep -q "not empty" "$tmp/err" || bad "non-empty -o: message does not say so: $(cat "$tmp/err")"
[ "$(sums "$tmp/out")" = "$before" ] || bad "non-empty -o without --force: the folder changed"

# --force: exactly the new run's files
if "$E" gen -s basic --force -o "$tmp/out" 2>/dev/null; then
    if [ "$(sums "$tmp/out")" != "$(sums "$tmp/ref-basic")" ]; then
        bad "--force: the folder is not what a run into a new folder writes:"
        diff -r "$tmp/out" "$tmp/ref-basic" | head -5
    fi
else
    bad "--force over an earlier gen output failed"
fi

# --force never replaces what gen did not write
mkdir "$tmp/mine"
echo precious >"$tmp/mine/notes.txt"
"$E" gen -s basic --force -o "$tmp/mine" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] || bad "--force on a folder without truth.summary: exit $rc, not 2"
[ "$(ls -A "$tmp/mine")" = notes.txt ] && [ "$(cat "$tmp/mine/notes.txt")" = precious ] ||
    bad "--force on a folder without truth.summary changed it"
echo x >"$tmp/file"
"$E" gen -s basic --force -o "$tmp/file" 2>"$tmp/err"
rc=$?
[ $rc = 2 ] && [ "$(cat "$tmp/file")" = x ] || bad "-o naming a file: exit $rc or the file changed"

# failed runs leave nothing: a bad configuration file, a file that cannot be written
mkdir "$tmp/p1" "$tmp/p2" "$tmp/p3"
printf 'no_such_key = 1\n' >"$tmp/bad.ini"
"$E" gen -s basic --config "$tmp/bad.ini" -o "$tmp/p1/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || bad "bad --config: exit $rc, not 1"
[ -z "$(ls -A "$tmp/p1")" ] || bad "bad --config: left behind: $(ls -A "$tmp/p1")"
# 128 KiB per file at most (ulimit -f counts 512-byte blocks in sh, 1 KiB in bash: run sh)
sh -c 'trap "" XFSZ; ulimit -f 256 && exec "$0" gen -s basic -o "$1"' "$E" "$tmp/p2/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || bad "a file that cannot be written: exit $rc, not 1 ($(cat "$tmp/err"))"
[ -z "$(ls -A "$tmp/p2")" ] || bad "a file that cannot be written: left behind: $(ls -A "$tmp/p2")"
# ... and with --force the old folder stays as it was
cp -a "$tmp/ref-arb" "$tmp/p3/out"
before=$(sums "$tmp/p3/out")
"$E" gen -s basic --force --config "$tmp/bad.ini" -o "$tmp/p3/out" 2>"$tmp/err"
rc=$?
[ $rc = 1 ] || bad "--force and a bad --config: exit $rc, not 1"
[ "$(ls -A "$tmp/p3")" = out ] && [ "$(sums "$tmp/p3/out")" = "$before" ] ||
    bad "--force and a failed run: the old folder changed or something was left beside it"

# --list: one description column after the longest name
"$E" gen --list >"$tmp/list" || bad "gen --list failed"
if ! awk '{ n = length($1); if (n > w) w = n
            match($0, /^[^ ]+ +/); c[NR] = RLENGTH }
          END { for (i = 1; i <= NR; i++) if (c[i] != c[1] || c[i] <= w + 1) {
                    print "  line " i ": description at column " c[i] + 1 ", longest name " w; bad = 1 }
                exit bad }' "$tmp/list"; then
    bad "gen --list: descriptions are not in one column after the longest name"
fi
[ $fail = 0 ] && echo "ok: gen -o: refuses, replaces with --force, leaves nothing on failure; --list aligned"
exit $fail
