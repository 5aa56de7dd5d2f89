#!/bin/sh
# B33: files opened by pthread_atfork handlers; trace mode, then fenced (the handlers' files denied).
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B33}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
gcc -O0 -pthread -o repro "$D/repro.c"
echo p > in-prepare; echo q > in-parent; echo c > in-child
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/in-prepare\ndeny any %s/in-parent\ndeny any %s/in-child\nallow any /\n' "$W" "$W" "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy policy -- ./repro | sed 's/^/fenced: /'
else # what the fence must give: the three names as missing
	mv in-prepare x-prepare; mv in-parent x-parent; mv in-child x-child
	./repro | sed 's/^/fenced: /'
fi
