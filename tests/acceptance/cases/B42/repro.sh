#!/bin/sh
# B42: catopen by name along NLSPATH, the time zone's file; trace mode, then fenced with the
# first places (nls/, zone/, zdir/) hidden: each search goes on as if they were not there.
set -eu
D=$(cd "$(dirname "$0")" && pwd); W=${WORK:-/tmp/sandtrace-acceptance/work/B42}
rm -rf "$W" && mkdir -p "$W/t/nls/fr" "$W/t/alt" "$W/t/zone" "$W/t/zdir" && cd "$W/t"
gcc -O0 -o ../repro "$D/repro.c"
mk() { printf '$set 1\n1 %s\n' "$2" > ../m.msg && gencat "$1" ../m.msg; }
mk nls/fr/hello.cat first; mk alt/hello.cat second; mk alt/other.cat other; mk rel.cat rel
cp /usr/share/zoneinfo/Asia/Tokyo zone/tokyo; cp /usr/share/zoneinfo/Asia/Tokyo zdir/Tokyo
cp /usr/share/zoneinfo/Asia/Kolkata zdir/Zulu; cp /usr/share/zoneinfo/Asia/Kolkata zone/kolkata
export LANG=fr_FR NLSPATH="$W/t/nls/%l/%N.cat:$W/t/alt/%N.cat:%N.cat" TZ=":$W/t/zone/tokyo" TZDIR="$W/t/zdir" ZONE2="$W/t/zone/kolkata"
rc=0; timeout -k 5 30 ${SHIM_RUN:-} ../repro || rc=$?
echo "exit=$rc"
if [ -n "${SANDTRACE_BIN:-}" ] && [ -n "${SHIM_RUN:-}" ]; then
	printf 'deny any %s/t/nls\ndeny any %s/t/zone\ndeny any %s/t/zdir\nallow any /\n' "$W" "$W" "$W" > ../policy
	timeout -k 5 30 "$SANDTRACE_BIN" run --fence --policy ../policy -- ../repro | sed 's/^/fenced: /'
else	# what the program prints when the hidden places are not there
	mkdir ../gone && mv nls zone zdir ../gone/
	../repro | sed 's/^/fenced: /'
	mv ../gone/* . && rmdir ../gone
fi
