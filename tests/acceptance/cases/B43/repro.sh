#!/bin/sh
# B43: dlopen/dlmopen of a bare name along LD_LIBRARY_PATH; trace mode, then fenced with the
# first directory (hid/) hidden: the loader must find what it finds when hid/ is not there.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B43}
rm -rf "$W" && mkdir -p "$W/hid" "$W/vis" && cd "$W"
gcc -O0 -o repro "$D/repro.c"
lib() { echo "int which(void) { return $3; }" > x.c && gcc -shared -fPIC -o "$1/$2" x.c; }
lib hid libb43.so 1; lib vis libb43.so 2; lib hid libm43.so 3; lib vis libm43.so 4
lib hid libonly.so 5
export LD_LIBRARY_PATH="$W/hid:$W/vis"
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ./repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/hid\nallow any /\n' "$W" > policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy policy -- ./repro | sed 's/^/fenced: /'
else	# what the program prints when hid/ is not there
	mv hid gone && ./repro | sed 's/^/fenced: /' && mv gone hid
fi
