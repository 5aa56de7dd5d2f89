#!/bin/sh
# B44: setlocale/newlocale with LOCPATH; trace mode, then fenced with the first LOCPATH
# directory (hid/) hidden: the locale must be found where it is found without hid/.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B44}
rm -rf "$W" && mkdir -p "$W/hid" "$W/vis" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
C=/usr/lib/locale/C.utf8
cp -r $C hid/xx_YY.utf8; cp -r $C vis/xx_YY.utf8; cp -r $C hid/zz_ZZ
export LOCPATH="$W/hid:$W/vis" LC_ALL=xx_YY.UTF-8
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/hid\nallow any /\n' "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy policy --report fenced.jsonl -- ./repro |
		sed 's/^/fenced: /'
	"$SANDTRACE_BIN" report --list fenced.jsonl | grep -c "	$W/vis/xx_YY.utf8/LC_" | sed 's/^/fenced: vis files /'
else	# what the program prints when hid/ is not there
	mv hid gone && ./repro | sed 's/^/fenced: /' && mv gone hid
	echo "fenced: vis files 12"
fi
