#!/bin/sh
# B31: the cwd moved by libc's own calls (nftw FTW_CHDIR, fts_close); trace mode, then fenced.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B31}
rm -rf "$W" && mkdir -p "$W/run/tree/sub" && cd "$W/run"
gcc -O0 -o ../repro "$D/repro.c"
echo T > top; echo b > tree/sub/b
# a decoy where a stale cwd would look: the tree's name at the top
echo X > b
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ../repro || rc=$?
echo "exit=$rc"
# fenced: the decoy is denied, and so is the name a stale cwd would give
# "top" after fts_close; the callback must still read the tree's file
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/run/b\ndeny any %s/run/tree/sub/top\nallow any /\n' "$W" "$W" > ../policy
	rc=0; timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy ../policy -- ../repro | sed 's/^/fenced: /' || rc=$?
	echo "fenced exit=$rc"
else
	../repro | sed 's/^/fenced: /'; echo "fenced exit=0"
fi
