#!/bin/sh
# tests/integration/manifest.sh - input manifests (--manifest), digests hashed once, --verify between and during runs, diff.
. "$(dirname "$0")/lib.sh"
cd "$W"
HELLO=5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03
# mline KIND PATH MANIFEST: the manifest's line(s) of PATH with KIND
mline() { awk -F'\t' -v k="$1" -v p="$2" '$1 == k && $9 == p' "$3"; }
# mfield KIND PATH FIELD MANIFEST: one field (1-based) of the first such line
mfield() { mline "$1" "$2" "$4" | head -1 | cut -f"$3"; }
# flags_match KIND PATH MANIFEST ERE: the first line's FLAGS match ERE exactly
flags_match() { mfield "$1" "$2" 8 "$3" | grep -Eqx "$4"; }
# rec TYPE FIELD REPORT: FIELD of the first record of TYPE
rec() {
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")==sys.argv[2]: print(json.dumps(r.get(sys.argv[3]))); break' "$3" "$1" "$2"
}
# integrity REPORT PATH: the report has an integrity violation of PATH
integrity() {
	python3 -c 'import json,sys
sys.exit(0 if any(r.get("type")=="violation" and r.get("class")=="integrity" and r.get("path")==sys.argv[2]
                  for r in map(json.loads, open(sys.argv[1]))) else 1)' "$1" "$2"
}

echo hello > in.txt
echo data > rw.txt
ln in.txt hard.txt

# ---- libcrypto is loaded when a digest is needed, not by every start ----
for bin in "$ST" "$(dirname "$ST")/sandtraced"; do
	check "$(basename "$bin") does not link libcrypto (it is loaded for digests only)" \
		sh -c "! readelf -d '$bin' | grep -q 'NEEDED.*libcrypto'"
done
# a libcrypto that cannot be loaded: a manifest run stops before the command with the
# reason, a run without a manifest does not notice (a stand-in of the same soname on
# LD_LIBRARY_PATH, without the symbols; and one whose dependency is missing)
mkdir -p "$W/nocrypto" "$W/nodep"
soname=$(readelf -d "$(ldconfig -p | awk '/libcrypto\.so\.[0-9]+ .*x86-64/ {print $NF; exit}')" 2>/dev/null |
	sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
soname=${soname:-libcrypto.so.3}
echo 'int st_stand_in;' > "$W/nocrypto/s.c"
gcc -shared -fPIC -Wl,-soname,"$soname" -o "$W/nocrypto/$soname" "$W/nocrypto/s.c"
gcc -shared -fPIC -Wl,-soname,libstnothere.so -o "$W/nodep/libstnothere.so" "$W/nocrypto/s.c"
gcc -shared -fPIC -Wl,-soname,"$soname" -o "$W/nodep/$soname" "$W/nocrypto/s.c" -L"$W/nodep" -Wl,--no-as-needed -lstnothere
rm "$W/nodep/libstnothere.so"
for d in nocrypto nodep; do
	rm -f "$W/ran.$d"
	msg=$(LD_LIBRARY_PATH="$W/$d" "$ST" run --manifest "$W/m.$d" --report "$W/r.$d" -- touch "$W/ran.$d" 2>&1); rc=$?
	check "libcrypto unloadable ($d): exit 125, the command not run, the reason named (got $rc: $msg)" \
		sh -c "[ $rc -eq 125 ] && [ ! -e '$W/ran.$d' ] && echo '$msg' | grep -q 'loading $soname for SHA-256: '"
done
LD_LIBRARY_PATH="$W/nocrypto" "$ST" run --report "$W/r.nomf" -- true; rc=$?
check "libcrypto unloadable: a run without a manifest is not affected" test $rc -eq 0

# ---- the manifest of a run ----
"$ST" run --manifest m1 --hash-cache none --report r1.jsonl -- \
	sh -c 'cat in.txt >/dev/null; cat rw.txt >/dev/null; echo more >> rw.txt; echo x > out.txt; cat out.txt >/dev/null'
check "run --manifest exits 0" test $? -eq 0
check "manifest header" test "$(head -1 m1)" = "sandtrace-manifest 1"
check "input listed with its SHA-256" test "$(mfield R "$W/in.txt" 2 m1)" = "$HELLO"
check "input size" test "$(mfield R "$W/in.txt" 3 m1)" = 6
check "input dev/ino" test "$(mfield R "$W/in.txt" 6 m1)" = "$(stat -c %i in.txt)"
check "input mtime ns" test "$(mfield R "$W/in.txt" 4 m1 | cut -c1-10)" = "$(stat -c %Y in.txt)"
check "executed program listed (X)" sh -c "awk -F'\t' '\$1 == \"X\" && \$9 == \"/usr/bin/cat\"' m1 | grep -q ."
check "output listed (W)" test -n "$(mline W "$W/out.txt" m1)"
# (its digest may be missing: the build may rewrite it before a worker reads it: "rw,unhashed")
check "read-then-written input flagged rw" flags_match R "$W/rw.txt" m1 'rw(,unhashed)?'
check "read-then-written output flagged rw" test "$(mfield W "$W/rw.txt" 8 m1)" = rw
check "generated input flagged wr, not hashed" test "$(mfield R "$W/out.txt" 8 m1)/$(mfield R "$W/out.txt" 2 m1)" = "wr/-"
check "manifest record in the report" test "$(rec manifest outputs r1.jsonl)" -ge 2
check "summary counts hashed files" test "$(summary_field r1.jsonl hashed_files)" -ge 2

# ---- an unchanged file is hashed once: more reads (processes, a hard link) hash nothing more ----
"$ST" run --manifest ma --hash-cache none --report ra.jsonl -- sh -c 'cat in.txt >/dev/null'
"$ST" run --manifest mb --hash-cache none --report rb.jsonl -- \
	sh -c 'cat in.txt >/dev/null; cat in.txt >/dev/null; cat hard.txt >/dev/null; cat in.txt hard.txt >/dev/null'
ha=$(summary_field ra.jsonl hashed_files); hb=$(summary_field rb.jsonl hashed_files)
check "unchanged file hashed once in a run ($ha = $hb)" test "$ha" = "$hb"
check "second path of the same file: a cache hit" test "$(summary_field rb.jsonl hash_cache_hits)" -ge 1
check "hard link listed with the same digest" test "$(mfield R "$W/hard.txt" 2 mb)" = "$HELLO"
# and once across runs: the persistent cache
"$ST" run --manifest mc --hash-cache hc --report rc.jsonl -- sh -c 'cat in.txt >/dev/null'
"$ST" run --manifest md --hash-cache hc --report rd.jsonl -- sh -c 'cat in.txt >/dev/null'
check "first run with a cache file hashes" test "$(summary_field rc.jsonl hashed_files)" -ge 1
check "next run hashes nothing unchanged" test "$(summary_field rd.jsonl hashed_files)" = 0
check "next run: digests from the cache file" test "$(summary_field rd.jsonl hash_disk_hits)" -ge 1
check "cache file written" test "$(head -1 hc)" = "sandtrace-hash-cache 1"

# ---- --verify: unchanged passes, modified between two runs is caught ----
"$ST" run --manifest ref --hash-cache none --report rref.jsonl -- sh -c 'cat in.txt >/dev/null'
"$ST" run --verify ref --hash-cache none --report rv1.jsonl -- sh -c 'cat in.txt >/dev/null'
check "verify of an unchanged tree: no violation" test "$(summary_field rv1.jsonl violations)" = 0
check "verify: the unchanged file cost an identity comparison" test "$(rec manifest verify_identity_ok rv1.jsonl)" -ge 1
cp in.txt in.orig
echo tampered > in.txt
"$ST" run --verify ref --hash-cache none --report rv2.jsonl -- sh -c 'cat in.txt >/dev/null'
check "verify: file modified between runs is a violation" integrity rv2.jsonl "$W/in.txt"
check "verify: violation counted in the summary" test "$(summary_field rv2.jsonl integrity_violations)" = 1
"$ST" run --verify ref --hash-cache none --strict --report rv3.jsonl -- sh -c 'cat in.txt >/dev/null'
check "verify --strict exits 121 on a mismatch" test $? -eq 121
printf 'allow any /\n' > allow.policy
out=$("$ST" run --fence --policy allow.policy --verify ref --hash-cache none --report rv4.jsonl -- \
	/bin/sh -c 'cat in.txt; echo "st=$?"' 2>&1)
check "verify --fence: the open fails with EACCES" sh -c "echo '$out' | grep -q 'Permission denied'"
check "verify --fence: the program saw the failure" sh -c "echo '$out' | grep -q 'st=1'"
check "verify --fence: violation marked hidden" sh -c "grep '\"class\":\"integrity\"' rv4.jsonl | grep -q '\"hidden\":true'"
# every entry point that opens for reading refuses the failed version, and closes only
# what it opened (the raw openat2's long result was never taken for a descriptor)
"$ST" run --fence --policy allow.policy --verify ref --hash-cache none --report rv4b.jsonl -- \
	"$DRV" reads in.txt </dev/null > reads.out 2>&1
for e in open open64 openat __open_2 __openat_2 syscall-open syscall-openat syscall-openat2 fopen; do
	check "verify --fence: $e of the failed version gives EACCES" grep -qx "$e=EACCES" reads.out
done
check "verify --fence: the program's descriptors 0-2 still open" \
	test "$(grep -c '^fd[012]=open$' reads.out)" = 3

# ---- files libc reads by path inside a call and keeps no descriptor of (catopen's
# catalog, which it maps; tzset's zone file): a version that fails verification is
# refused under a fence as an open of it is (it was read: catopen gave the catalog,
# localtime used the zone) ----
if command -v gencat >/dev/null && [ -e /usr/share/zoneinfo/Asia/Tokyo ] &&
	[ -e /usr/share/zoneinfo/America/New_York ]; then
	printf '$set 1\n1 first\n' > cat.msg && gencat cat.cat cat.msg
	cp /usr/share/zoneinfo/Asia/Tokyo zone
	# "CATALOG ZONE-OFFSET": a catopen of cat.cat (by path) and localtime under TZ=zone
	cat > cz.py <<'PY'
import ctypes, sys, time
c = ctypes.CDLL(None)
c.catopen.restype = ctypes.c_void_p
d = c.catopen(sys.argv[1].encode(), 0)
print("refused" if d in (None, 2**64 - 1) else "opened", time.strftime("%z", time.localtime(0)))
PY
	export TZ="$W/zone"
	out=$("$ST" run --manifest mcz --hash-cache none --report rmcz.jsonl -- python3 cz.py "$W/cat.cat")
	check "manifest: the catalog and the zone file are read (got: $out)" test "$out" = "opened +0900"
	out=$("$ST" run --fence --policy allow.policy --verify mcz --hash-cache none --report rvcz0.jsonl -- python3 cz.py "$W/cat.cat")
	check "verify --fence, catalog and zone unchanged: used (got: $out)" test "$out" = "opened +0900"
	printf '$set 1\n1 second\n' > cat.msg && gencat cat.cat cat.msg
	cp /usr/share/zoneinfo/America/New_York zone
	out=$("$ST" run --fence --policy allow.policy --verify mcz --hash-cache none --report rvcz.jsonl -- python3 cz.py "$W/cat.cat")
	check "verify --fence, catalog and zone changed: both refused, the zone as a missing one (got: $out)" \
		test "$out" = "refused +0000"
	check "verify --fence, catalog and zone changed: two violations marked hidden" \
		test "$(grep '"class":"integrity"' rvcz.jsonl | grep -c '"hidden":true')" = 2
	unset TZ
fi
# ---- files libc opens by itself at a path it fixes (wrap_libc.c st__own_check, the core
# the zone file's judge shares): getdate's DATEMSK file, getusershell's /etc/shells,
# getfsent's /etc/fstab.  Read by path inside the call, they are refused as the zone
# file is when their version fails verification under a fence; only the zone file's judge
# marked its read so, and a changed DATEMSK file or /etc/shells was reported and read ----
printf '%%Y-%%m-%%d\n' > datemsk
# "getdate=ok|errN shells=K fstab=F": getdate of a date DATEMSK's template matches, the
# shells getusershell lists (glibc's two defaults when it cannot open /etc/shells), then
# getfsent (F: its entries)
cat > own.py <<'PY'
import ctypes
c = ctypes.CDLL(None)
c.getdate.restype = ctypes.c_void_p
c.getdate.argtypes = [ctypes.c_char_p]
r = c.getdate(b"2020-01-02")
err = ctypes.c_int.in_dll(c, "getdate_err").value
c.getusershell.restype = ctypes.c_char_p
n = 0
while c.getusershell():
    n += 1
c.getfsent.restype = ctypes.c_void_p
f = 0
while c.getfsent():
    f += 1
print("getdate=" + ("ok" if r else "err%d" % err), "shells=%d" % n, "fstab=%d" % f)
PY
# listed_digest PATH MANIFEST: PATH is an input with a SHA-256
listed_digest() { mfield R "$1" 2 "$2" | grep -Eqx '[0-9a-f]{64}'; }
# integrity_hidden REPORT PATH true|false: an integrity violation of PATH, hidden or not
integrity_hidden() {
	python3 -c 'import json,sys
sys.exit(0 if any(r.get("type")=="violation" and r.get("class")=="integrity" and r.get("path")==sys.argv[2]
                  and json.dumps(r.get("hidden"))==sys.argv[3] for r in map(json.loads, open(sys.argv[1]))) else 1)' "$1" "$2" "$3"
}
# tamper PATH MANIFEST: the manifest holds another version of PATH than the file (a system
# file the test cannot change): its mtime and digest changed, so that neither the identity
# nor the digest of the file there matches
tamper() {
	awk -F'\t' -v OFS='\t' -v p="$1" '$9 == p && $1 == "R" { $4 = 1; $2 = "0000000000000000000000000000000000000000000000000000000000000000" } 1' \
		"$2" > "$2.t" && mv "$2.t" "$2"
}
if [ -r /etc/shells ] && [ -r /etc/fstab ]; then
	export DATEMSK="$W/datemsk"
	nsh=$(grep -c '^/' /etc/shells)
	out=$("$ST" run --manifest mown --hash-cache none --report rmown.jsonl -- python3 own.py)
	check "manifest: getdate used DATEMSK's file, getusershell /etc/shells (got: $out)" \
		sh -c "echo '$out' | grep -q '^getdate=ok shells=$nsh '"
	for f in "$W/datemsk" /etc/shells /etc/fstab; do
		check "manifest: $f read by libc itself is listed with its digest" listed_digest "$f" mown
	done
	fs=$(echo "$out" | sed 's/.* fstab=//')
	out=$("$ST" run --fence --policy allow.policy --verify mown --hash-cache none --report rvown0.jsonl -- python3 own.py)
	check "verify --fence, DATEMSK, /etc/shells and /etc/fstab unchanged: used (got: $out)" \
		test "$out" = "getdate=ok shells=$nsh fstab=$fs"
	check "verify --fence, unchanged: no violation" test "$(summary_field rvown0.jsonl violations)" = 0
	printf '%%Y-%%m-%%d\n%%d.%%m.%%Y\n' > datemsk
	tamper /etc/shells mown
	tamper /etc/fstab mown
	out=$("$ST" run --fence --policy allow.policy --verify mown --hash-cache none --report rvown.jsonl -- python3 own.py)
	check "verify --fence, DATEMSK's file, /etc/shells and /etc/fstab changed: refused as missing ones (got: $out)" \
		test "$out" = "getdate=err3 shells=2 fstab=0"
	# own_changed REPORT HIDDEN RUN SAYS: each changed file an integrity
	# violation in REPORT whose "hidden" is HIDDEN
	own_changed() {
		for f in "$W/datemsk" /etc/shells /etc/fstab; do
			check "$3, $f changed: an integrity violation, $4" integrity_hidden "$1" "$f" "$2"
		done
	}
	own_changed rvown.jsonl true "verify --fence" "marked hidden"
	# trace only (no fence): the changed versions are reported and read
	out=$("$ST" run --verify mown --hash-cache none --report rvown2.jsonl -- python3 own.py)
	check "verify without --fence, changed: read all the same (got: $out)" \
		test "$out" = "getdate=ok shells=$nsh fstab=$fs"
	own_changed rvown2.jsonl false "verify without --fence" "not hidden"
	unset DATEMSK
fi
# ... while a file libc maps after the call (a locale's, from LOCPATH) is verified and
# reported, not refused: its violation says it was not hidden
if [ -d /usr/lib/locale/C.utf8 ]; then
	mkdir -p loc && cp -r /usr/lib/locale/C.utf8 loc/xx_YY.utf8
	lc() { LOCPATH="$W/loc" LC_ALL=xx_YY.UTF-8 "$ST" run "$@" -- python3 -c 'import locale; print(locale.setlocale(locale.LC_ALL, ""))'; }
	lc --manifest mlc --hash-cache none --report rmlc.jsonl > /dev/null
	printf x >> loc/xx_YY.utf8/LC_IDENTIFICATION
	out=$(lc --fence --policy allow.policy --verify mlc --hash-cache none --report rvlc.jsonl)
	check "verify --fence, a locale's changed file: the locale is used (got: $out)" test "$out" = xx_YY.UTF-8
	check "verify --fence, a locale's changed file: a violation, not marked hidden" \
		test "$(grep '"class":"integrity"' rvlc.jsonl | grep -c '"hidden":false')" = 1
fi

# ---- a library dlopen'ed by path, or by a name with $LIB or $PLATFORM: a version that
# fails verification is refused at the dlopen under a fence (it was loaded: a dlopen has no
# descriptor to undo, and the $LIB name was not even recorded at the call) ----
printf 'int v_f(void) { return 1; }\n' > v.c
if cc -shared -fPIC -o libv.so v.c; then
	lib=lib/$(cc -print-multiarch 2>/dev/null)
	plat=$(LD_SHOW_AUXV=1 /bin/true | sed -n 's/^AT_PLATFORM: *//p')
	for d in "$lib" lib64 lib "plat/$plat" plat/haswell plat/xeon_phi; do
		mkdir -p "dl/$d" && cp libv.so "dl/$d/libv.so"
	done
	for name in "$W/dl/lib/libv.so" "$W/dl/\$LIB/libv.so" "$W/dl/plat/\$PLATFORM/libv.so"; do
		"$ST" run --manifest mdl --hash-cache none --report rmdl.jsonl -- "$DRV" dlopen "$name" >/dev/null
		out=$("$ST" run --fence --policy allow.policy --verify mdl --hash-cache none --report rvdl0.jsonl -- "$DRV" dlopen "$name")
		check "verify --fence, dlopen $name unchanged: loaded (got: $out)" test "$out" = ok
		for d in "$lib" lib64 lib "plat/$plat" plat/haswell plat/xeon_phi; do printf x >> "dl/$d/libv.so"; done
		out=$("$ST" run --fence --policy allow.policy --verify mdl --hash-cache none --report rvdl.jsonl -- "$DRV" dlopen "$name")
		check "verify --fence, dlopen $name changed: refused (got: $out)" test "$out" = ENOENT
		check "verify --fence, dlopen $name changed: violation marked hidden" sh -c "grep '\"class\":\"integrity\"' rvdl.jsonl | grep -q '\"hidden\":true'"
		for d in "$lib" lib64 lib "plat/$plat" plat/haswell plat/xeon_phi; do cp libv.so "dl/$d/libv.so"; done
	done
	# a library it brings along, its DT_NEEDED (opened inside the loader, where no wrapper
	# sees it), whose version fails verification: loaded and only reported, and now the
	# dlopen fails as if that library were missing (EACCES's words), unloaded again
	mkdir -p dl/need
	printf 'int v_f(void);\nint vn_f(void) { return v_f(); }\n' > vn.c
	if cc -shared -fPIC -Wl,-soname,libv.so -o dl/need/libv.so v.c &&
		cc -shared -fPIC -o dl/libvn.so vn.c -Ldl/need -lv -Wl,-rpath,"$W/dl/need"; then
		for how in "" ns; do
			"$ST" run --manifest mdn --hash-cache none --report rmdn.jsonl -- "$DRV" dlerror-text "$W/dl/libvn.so" $how >/dev/null
			out=$(LC_ALL=C "$ST" run --fence --policy allow.policy --verify mdn --hash-cache none --report rvdn0.jsonl -- "$DRV" dlerror-text "$W/dl/libvn.so" $how)
			check "verify --fence, dlopen${how:+ ($how)} of a library whose DT_NEEDED is unchanged: loaded (got: $out)" test "$out" = "ok|(null)"
			printf x >> dl/need/libv.so
			out=$(LC_ALL=C "$ST" run --fence --policy allow.policy --verify mdn --hash-cache none --report rvdn.jsonl -- "$DRV" dlerror-text "$W/dl/libvn.so" $how)
			check "verify --fence, dlopen${how:+ ($how)} of a library whose DT_NEEDED changed: refused, naming it (got: $out)" \
				test "$out" = "libv.so: cannot open shared object file: Permission denied|(null)"
			check "... its integrity violation marked hidden" sh -c "grep '\"class\":\"integrity\"' rvdn.jsonl | grep -F '$W/dl/need/libv.so' | grep -q '\"hidden\":true'"
			cc -shared -fPIC -Wl,-soname,libv.so -o dl/need/libv.so v.c
		done
	else
		bad "cc: the DT_NEEDED verify test could not be built"
	fi
else
	bad "cc: the dlopen verify test could not be built"
fi

# ---- a file modified during a run, between two processes' reads ----
cp in.orig in.txt
"$ST" run --manifest ref2 --hash-cache none --report rref2.jsonl -- sh -c 'cat in.txt >/dev/null'
"$ST" run --verify ref2 --hash-cache none --report rv5.jsonl -- \
	sh -c 'cat in.txt >/dev/null; echo changed > in.txt; cat in.txt >/dev/null'
check "verify: modification during the run caught at the second read" integrity rv5.jsonl "$W/in.txt"
check "verify: only the new version failed" test "$(rec manifest verify_mismatches rv5.jsonl)" = 1
cp in.orig in.txt
"$ST" run --manifest mv --hash-cache none --report rmv.jsonl -- \
	sh -c 'cat in.txt >/dev/null; echo changed > in.txt; cat in.txt >/dev/null'
check "manifest: both versions listed" test "$(mline R "$W/in.txt" mv | wc -l)" = 2
check "manifest: versions and rw flagged" flags_match R "$W/in.txt" mv 'rw,versions(,unhashed)?'

# ---- diff ----
cp in.orig in.txt
"$ST" run --manifest d1 --hash-cache none --report rd1.jsonl -- sh -c 'cat in.txt rw.txt >/dev/null'
echo other > in.txt
"$ST" run --manifest d2 --hash-cache none --report rd2.jsonl -- sh -c 'cat in.txt hard.txt >/dev/null'
"$ST" diff d1 d2 > diff.out
check "diff exits 1 on differences" test $? -eq 1
check "diff: changed input" grep -q "^changed	$W/in.txt	" diff.out
check "diff: removed input" grep -qxF "removed	$W/rw.txt" diff.out
check "diff: added input" grep -qxF "added	$W/hard.txt" diff.out
"$ST" diff d1 d1 >/dev/null
check "diff of a manifest with itself exits 0" test $? -eq 0

# ---- a malformed manifest stops the run before it starts, naming the line ----
printf 'sandtrace-manifest 1\nR\tnot-a-digest\n' > bad
out=$("$ST" run --verify bad --hash-cache none -- true 2>&1)
check "malformed --verify manifest: exit 125" test $? -eq 125
check "malformed manifest: error names file and line" sh -c "echo '$out' | grep -q 'bad:2:'"
"$ST" diff bad d1 2>/dev/null
check "diff of a malformed manifest: exit 125" test $? -eq 125

# ---- a --manifest that cannot be written stops the run before the command runs ----
# (a FIFO stands for a device: the end's rename once replaced /dev/null with a file)
mkfifo fifo
for m in "$W/no/such/dir/m" /proc/version "$W" "$W/fifo"; do
	rm -f ran
	"$ST" run --manifest "$m" --hash-cache none -- touch ran 2>/dev/null; rc=$?
	check "--manifest $m refused (125), command not run" sh -c "[ $rc -eq 125 ] && [ ! -e ran ]"
done
check "a refused --manifest leaves the FIFO it named" test -p fifo

# --hash-cache is a file the run writes, but the check that no two of the run's files
# are one left it out, and that check compared only files already there: a --hash-cache
# naming the --verify manifest or the --policy replaced it with the digests (the run went
# on, exit 0), and --log, --manifest and --hash-cache naming one file not there yet wrote
# into each other (the manifest lost). Each pair is refused before the run (125).
mkdir -p "$W/same"; cd "$W/same"
echo hi > in; printf 'allow any /\n' > pol
"$ST" run --manifest m0 --hash-cache none -- cat in > /dev/null
cp m0 m0.orig; cp pol pol.orig
i=0
for args in "--verify m0 --hash-cache m0" "--policy pol --hash-cache ./pol" \
	"--manifest new1 --hash-cache new1" "--log new2 --manifest ../same/new2" \
	"--log new3 --hash-cache $W/same/new3" "--report r4 --hash-cache r4"; do
	i=$((i+1))
	# shellcheck disable=SC2086
	"$ST" run $args -- sh -c ": > started$i" 2> err$i; rc=$?
	check "the run's files the same ($args): refused before the run (got $rc: $(cat err$i))" \
		sh -c "test $rc -eq 125 && test ! -e started$i && grep -q 'are the same file' err$i"
done
check "... the --verify manifest and the policy left as they were" sh -c "cmp -s m0 m0.orig && cmp -s pol pol.orig"
check "... no file made for a pair refused" sh -c "test ! -e new1 && test ! -e new2 && test ! -e new3"
check "different files are fine" "$ST" run --manifest m5 --hash-cache hc5 --log lg5 --report r5 -- true
cd "$W"
# A manifest that is a directory: fread's EISDIR was reported as "Input/output error".
mkdir -p "$W/mdir"
"$ST" run --manifest "$W/mdir/m" --hash-cache none -- true
for args in "diff $W/mdir $W/mdir/m" "diff $W/mdir/m $W/mdir" "run --verify $W/mdir -- true"; do
	# shellcheck disable=SC2086
	msg=$("$ST" $args 2>&1); rc=$?
	check "a manifest that is a directory ($args): 125, 'Is a directory' (got $rc: $(echo "$msg" | head -1))" \
		sh -c "test $rc -eq 125 && echo \"\$1\" | grep -q '$W/mdir: Is a directory'" _ "$msg"
done
done_
