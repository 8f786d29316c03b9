#!/bin/sh
# The CLI answers --help/--version and rejects unknown commands with exit status 2.
set -eu
"$ETMKIT_BIN" --version | grep -q '^etmkit [0-9]'
"$ETMKIT_BIN" --help | grep -q 'commands:'
set +e
"$ETMKIT_BIN" no-such-command 2>/dev/null; rc=$?
set -e
[ "$rc" -eq 2 ] || { echo "unknown command gave exit $rc, expected 2"; exit 1; }
echo "cli basics ok"
