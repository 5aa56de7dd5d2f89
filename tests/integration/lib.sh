# tests/integration/lib.sh - helpers for scenario scripts: run under sandtrace, look into the report, count checks.
# usage: . lib.sh BUILD_DIR SOURCE_DIR
B=$1; S=$2
ST=$B/daemon/sandtrace
DRV=$B/tests/drivers/stdriver
LOGORDER=$B/tests/drivers/logorder
CHAIN=$B/tests/drivers/chain
SWAPRACE=$B/tests/drivers/swaprace
W=$(mktemp -d /tmp/st-integ.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$W"' EXIT
FSFUZZ=$B/tests/drivers/fsfuzz
PASS=0; FAIL=0
ok()   { PASS=$((PASS+1)); echo "ok   - $*"; }
bad()  { FAIL=$((FAIL+1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION COMMAND...
	d=$1; shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}
# has KIND PATH REPORT: the report lists an access of KIND to PATH (exact)
has() { "$ST" report --list "$3" | grep -qxF "$1	$2"; }
# not_has PATH REPORT: no access of any kind to PATH
not_has() { ! "$ST" report --list "$2" | cut -f2- | grep -qxF "$1"; }
# hasany PATH REPORT: any kind
hasany() { "$ST" report --list "$2" | cut -f2- | grep -qxF "$1"; }
summary_field() { # summary_field REPORT FIELD -> value
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")=="summary": v=r.get(sys.argv[2]); print(v if isinstance(v,str) else json.dumps(v))' "$1" "$2"
}
# system_rules: the policy lines every fenced scenario starts from: the system
# prefixes readable (and /usr executable), /dev/null writable
system_rules() {
	printf 'allow read /usr\nallow exec /usr\nallow read /etc\nallow read /proc\nallow read /dev\nallow any /dev/null\n'
}
done_() {
	echo "$PASS passed, $FAIL failed"
	[ "$FAIL" -eq 0 ]
}
