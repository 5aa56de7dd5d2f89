#!/bin/sh
# B34: paths longer than PATH_MAX reached with openat/fchdir chains; trace mode, then fenced.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B34}
rm -rf "$W" && mkdir -p "$W/t" "$W/f" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
rc=0; (cd t && timeout -k 5 30 ${SHIM_RUN:-} ../repro) || rc=$?
echo "exit=$rc"
# fenced, everything allowed: the deep directory's names are judged, not refused
printf 'allow any /\n' > policy
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	(cd f && timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy ../policy -- ../repro) | sed 's/^/fenced: /'
else
	(cd f && ../repro) | sed 's/^/fenced: /'
fi
