#!/bin/sh
# tests/integration/audit.sh - the dependency auditor: a header from a package left out of --deps is flagged (and hidden under a fence by an ask rule); owner-map errors name file and line.
. "$(dirname "$0")/lib.sh"
cd "$W"
if ! dpkg-query -W -f='${Status}' zlib1g-dev 2>/dev/null | grep -q ' installed$'; then
	echo "zlib1g-dev is not installed (scripts/setup installs it)"; bad "zlib1g-dev installed"; done_; exit
fi
printf '#include <zlib.h>\nconst char *v(void) { return zlibVersion(); }\n' > z.c
printf 'int main(void) { return 0; }\n' > plain.c
# field REPORT TYPE EXPR: python expression over the records of TYPE, printed
records() {
	python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
rs=[r for r in rs if r.get("type")==sys.argv[2]]
print(eval(sys.argv[3]))' "$@"
}

# 1. audit only: zlib1g-dev, and only it, is used but not declared
R=$W/audit.jsonl
"$ST" run --audit --deps libc6-dev --report "$R" -- gcc -c z.c -o z.o
check "audited build succeeds" test -f z.o
und=$(records "$R" package '" ".join(sorted(r["package"] for r in rs if r.get("declared") is False))')
check "exactly zlib1g-dev undeclared (got: $und)" test "$und" = zlib1g-dev
check "its paths hold zlib.h" test "$(records "$R" package '"/usr/include/zlib.h" in [p for r in rs if r["package"]=="zlib1g-dev" for p in r["paths"]]')" = True
check "first pid recorded" test "$(records "$R" package '[r["first_pid"]>0 for r in rs if r["package"]=="zlib1g-dev"][0]')" = True
check "libc6-dev used, declared direct" test "$(records "$R" package '[r["declared"] for r in rs if r["package"]=="libc6-dev"][0]')" = direct
check "audit summary record" test "$(records "$R" audit 'len(rs)')" = 1
check "registry load time recorded" test "$(records "$R" audit 'rs[0]["load_ms"] > 0')" = True
out=$("$ST" audit "$R")
check "sandtrace audit lists it as undeclared" sh -c "echo \"\$1\" | grep -q '^  zlib1g-dev (first used by pid'" _ "$out"
check "report --audit prints the audit" sh -c "$ST report --audit $R | grep -q 'undeclared packages used: 1'"
# declared: nothing flagged
R=$W/declared.jsonl
"$ST" run --audit --deps libc6-dev,zlib1g-dev --report "$R" -- gcc -c z.c -o z.o
check "declared: nothing undeclared" test "$(records "$R" package 'sum(1 for r in rs if r.get("declared") is False)')" = 0
# a declared package that is never used
R=$W/unused.jsonl
"$ST" run --audit --deps "libc6-dev, zlib1g-dev" --report "$R" -- gcc -c plain.c -o plain.o
check "declared, never used: zlib1g-dev" test "$(records "$R" package '[r["declared"] for r in rs if not r["used"] and r["package"]=="zlib1g-dev"]')" = "['direct']"
# no registry without ask rules or --audit
R=$W/noaudit.jsonl
"$ST" run --deps libc6-dev --report "$R" -- gcc -c plain.c -o plain.o
check "no audit records without --audit" test "$(records "$R" package 'len(rs)')" = 0

# 2. ask rules: the include is hidden under a fence, reported (not hidden) without one
cat > "$W/policy" <<P
ask   read  /usr/include
$(system_rules)
allow any   ${W}
allow any   /tmp
P
R=$W/fenced.jsonl
msg=$("$ST" run --fence --policy "$W/policy" --deps libc6-dev --report "$R" -- gcc -c z.c -o zf.o 2>&1); rc=$?
check "fenced: compile fails" test $rc -ne 0
check "fenced: zlib.h missing" sh -c "echo \"\$1\" | grep -q 'zlib.h: No such file or directory'" _ "$msg"
check "fenced: violation names zlib1g-dev, hidden" test "$(records "$R" violation '[(r.get("package"), r.get("hidden")) for r in rs if r["path"]=="/usr/include/zlib.h"][:1]')" = "[('zlib1g-dev', True)]"
check "fenced: stdio.h from a declared package still seen" sh -c "\"$ST\" run --fence --policy \"$W/policy\" --deps libc6-dev -- gcc -c plain.c -o plainf.o"
check "fenced: declared zlib1g-dev allowed" sh -c "\"$ST\" run --fence --policy \"$W/policy\" --deps libc6-dev,zlib1g-dev -- gcc -c z.c -o zd.o"
R=$W/open.jsonl
"$ST" run --policy "$W/policy" --deps libc6-dev --report "$R" -- gcc -c z.c -o zo.o; rc=$?
check "not fenced: compile succeeds" test $rc -eq 0
check "not fenced: violation reported, not hidden" test "$(records "$R" violation '[(r.get("package"), r.get("hidden")) for r in rs if r["path"]=="/usr/include/zlib.h"][:1]')" = "[('zlib1g-dev', False)]"
check "asked: access record says undeclared" test "$(records "$R" access '[r.get("asked") for r in rs if r["path"]=="/usr/include/zlib.h"][:1]')" = "['undeclared']"
check "asked: declared header says declared" test "$(records "$R" access '[r.get("asked") for r in rs if r["path"]=="/usr/include/stdc-predef.h"][:1]')" = "['declared']"

# 3. an owner map (another package manager) with the fixture's status
mkdir -p "$W/opt/include"
echo '#define ZZ 1' > "$W/opt/include/zz.h"
echo '#define OK 1' > "$W/opt/include/ok.h"
printf '# exported\n%s/opt/include/zz.h\tzz-port\n%s/opt/include/ok.h\tok-port\n' "$W" "$W" > "$W/owners"
printf '#include "zz.h"\n#include "ok.h"\n' > uses.c
R=$W/owners.jsonl
"$ST" run --audit --owners "$W/owners" --dpkg-root "$S/tests/fixtures/dpkg" --no-implicit-deps --deps ok-port --report "$R" -- gcc -I"$W/opt/include" -c uses.c -o uses.o
check "owner map: zz-port undeclared" test "$(records "$R" package '" ".join(sorted(r["package"] for r in rs if r.get("declared") is False))')" = zz-port
printf 'ask read %s/opt\nallow any /\n' "$W" > "$W/policy2"
"$ST" run --fence --policy "$W/policy2" --owners "$W/owners" --dpkg-root "$S/tests/fixtures/dpkg" --no-implicit-deps --deps ok-port -- gcc -I"$W/opt/include" -c uses.c -o uses2.o 2>/dev/null
check "owner map + fence: undeclared header hidden" test ! -e uses2.o
# a program (or an interpreter) run by a name that is a symlink: the link's
# package was used (gcc -> gcc-12 is package gcc's, ar -> x86_64-linux-gnu-ar
# binutils'); the exec was recorded only as what the link leads to, so the
# package that owns the link was never counted, with the arena or without it
# linked OPT OWNERS REPORT CMD...: CMD run with --audit (OPT: "" or --no-cache), the
# packages of OWNERS, only real-port declared; undeclared REPORT: the packages it used
# and did not declare
linked() {
	opt=$1 owners=$2 rep=$3; shift 3
	"$ST" run $opt --audit --owners "$owners" --dpkg-root "$S/tests/fixtures/dpkg" --no-implicit-deps \
		--deps real-port --report "$rep" -- "$@"
}
undeclared() { records "$1" package '" ".join(sorted(r["package"] for r in rs if r.get("declared") is False))'; }
mkdir -p "$W/lk"; cp /bin/true "$W/lk/real-tool"; ln -s real-tool "$W/lk/tool"; ln -s /bin/sh "$W/lk/interp"
printf '#!%s/lk/interp\nexit 0\n' "$W" > "$W/lk/script"; chmod +x "$W/lk/script"
printf '%s/lk/tool\tlink-port\n%s/lk/real-tool\treal-port\n%s/lk/interp\tinterp-port\n%s/lk/script\treal-port\n' "$W" "$W" "$W" "$W" > "$W/lk/owners"
for nc in "" --no-cache; do
	R=$W/lk/r$nc.jsonl
	linked "$nc" "$W/lk/owners" "$R" sh -c "$W/lk/tool && $W/lk/script && cd $W/lk && PATH=$W/lk ./tool && PATH=$W/lk tool"
	got=$(undeclared "$R")
	check "a program and an interpreter run through links${nc:+ ($nc)}: the links' packages used, undeclared (got: $got)" \
		test "$got" = "interp-port link-port"
	check "... the link recorded once, as a query of its name${nc:+ ($nc)}" \
		test "$("$ST" report --list "$R" | grep -c "^Q	$W/lk/tool\$")" = 1
done
# a chain of links (cc -> /etc/alternatives/cc -> /usr/bin/gcc -> gcc-12): each link
# was read by the kernel and may be another package's; only the first was recorded
mkdir -p "$W/lc/alt"; cp /bin/true "$W/lc/real-cc"; ln -s real-cc "$W/lc/gcc"; ln -s ../gcc "$W/lc/alt/cc"
ln -s "$W/lc/alt/cc" "$W/lc/cc"
printf '%s/lc/cc\tcc-port\n%s/lc/alt/cc\talt-port\n%s/lc/gcc\tgcc-port\n%s/lc/real-cc\treal-port\n' "$W" "$W" "$W" "$W" > "$W/lc/owners"
for nc in "" --no-cache; do
	R=$W/lc/r$nc.jsonl
	linked "$nc" "$W/lc/owners" "$R" sh -c "$W/lc/cc && cd $W/lc && PATH=$W/lc cc"
	got=$(undeclared "$R")
	check "a program run through a chain of links${nc:+ ($nc)}: every link's package used (got: $got)" \
		test "$got" = "alt-port cc-port gcc-port"
done
# a no-follow exec of a link (execveat AT_SYMLINK_NOFOLLOW) fails with ELOOP: nothing
# ran through the link, whose package was counted used all the same
for nc in "" --no-cache; do
	R=$W/lc/nf$nc.jsonl
	linked "$nc" "$W/lc/owners" "$R" "$DRV" execveat-nofollow "$W/lc" gcc > /dev/null
	check "a no-follow exec of a link${nc:+ ($nc)}: the link not recorded as run through" \
		sh -c "! '$ST' report --list '$R' | grep -q '^Q	$W/lc/gcc\$'"
done
printf '/a\tp\n/b p\n' > "$W/bad-owners"
msg=$("$ST" run --audit --owners "$W/bad-owners" -- true 2>&1); rc=$?
check "malformed owner map refused" test $rc -eq 125
check "error names file:line" sh -c "echo \"\$1\" | grep -q '$W/bad-owners:2:'" _ "$msg"
msg=$("$ST" run --audit --deps 'a (>= 1' -- true 2>&1); rc=$?
check "malformed --deps refused" test $rc -eq 125
# an ask rule that comes with a reload answers for itself: the old policy's
# verdict of the same path is never taken for its answer (a review found the two
# keys equal after one link to a directory and one reload, and the file read)
mkdir -p "$W/ak/P" "$W/ak/tgt"; echo SECRET > "$W/ak/P/secret"
printf '%s/ak/P/secret\tzz-port\n' "$W" > "$W/ak/owners"
printf 'deny any %s/ak/never\nallow any /\n' "$W" > "$W/ak/pol"
out=$("$ST" run --audit --fence --policy "$W/ak/pol" --owners "$W/ak/owners" --dpkg-root "$S/tests/fixtures/dpkg" \
	--no-implicit-deps --deps ok-port --pidfile "$W/ak/pid" -- sh -c "
	ln -s $W/ak/tgt $W/ak/dlink; cat $W/ak/P/secret
	printf 'ask read %s/ak/P\nallow any /\n' $W > $W/ak/pol; kill -HUP \$(cat $W/ak/pid); sleep 1
	cat $W/ak/P/secret 2>/dev/null; echo end" 2>/dev/null)
check "after a reload that asks for it: an undeclared package's file hidden (got: $(echo $out))" \
	test "$(echo $out)" = "SECRET end"
# the arena counts each request that waits for an answer (the daemon's log
# drain yields to it): one per path first asked, none for answers the Ctrie
# holds (the same paths again, in other processes: the asker stores the answer
# before its call returns)
mkdir -p "$W/asks"; for i in 1 2 3; do echo $i > "$W/asks/f$i"; done
printf 'ask read %s/asks\nallow any /\n' "$W" > "$W/asks.pol"
R=$W/asks.jsonl
"$ST" run --policy "$W/asks.pol" --report "$R" -- sh -c "for i in 1 2 3 1 2 3; do $DRV open-r $W/asks/f\$i; done" > "$W/asks.out"
check "asked files read (got: $(echo $(cat "$W/asks.out")))" test "$(echo $(cat "$W/asks.out"))" = "ok ok ok ok ok ok"
check "arena counts one request per path first asked (got: $(records "$R" arena '[r.get("asks") for r in rs]'))" \
	test "$(records "$R" arena '[r.get("asks") for r in rs]')" = "[3]"
# an asker that cannot map the arena (an address space too small for it:
# ulimit -v) gets its answer by the socket, uncounted, and the daemon stores
# it for the others: only f2's first read, by a process with the arena, asks
R=$W/asks2.jsonl
"$ST" run --policy "$W/asks.pol" --report "$R" -- sh -c "(ulimit -v 200000; $DRV open-r $W/asks/f1)
	$DRV open-r $W/asks/f1; $DRV open-r $W/asks/f2; $DRV open-r $W/asks/f2" > "$W/asks2.out"
check "asked files read, one reader without the arena (got: $(echo $(cat "$W/asks2.out")))" \
	test "$(echo $(cat "$W/asks2.out"))" = "ok ok ok ok"
check "... which ran without it" test "$(records "$R" process '[r.get("cache") for r in rs if r.get("argv", [""])[-1:] == ["'"$W"'/asks/f1"]][:1]')" = "[False]"
check "the daemon stored its answer for the others: one ask in all (got: $(records "$R" arena '[r.get("asks") for r in rs]'))" \
	test "$(records "$R" arena '[r.get("asks") for r in rs]')" = "[1]"
# A dpkg database the registry cannot load: one without its info/ directory passed the
# start's check (status only) and failed at the end of the run, and every load error
# (a diversions file cut short, an info/ entry that is a directory) left a report whose
# `sandtrace audit` said "no audit in this report (run with --audit, or ask rules)" of a
# run made with --audit. Now a database without info/ stops the run before it starts,
# and the audit names the registry's error.
mkdir -p "$W/bdb"
cp -r "$S/tests/fixtures/dpkg" "$W/bdb/noinfo"; rm -r "$W/bdb/noinfo/info"
msg=$("$ST" run --audit --dpkg-root "$W/bdb/noinfo" --report "$W/bdb/r0.jsonl" -- sh -c ": > $W/bdb/started" 2>&1); rc=$?
check "--dpkg-root without info/: refused before the run (125, CMD not run; got $rc)" \
	sh -c "test $rc -eq 125 && test ! -e '$W/bdb/started'"
check "--dpkg-root without info/: the error names it ($(echo "$msg" | head -1))" \
	sh -c "echo \"\$1\" | grep -q 'noinfo/info: No such file or directory'" _ "$msg"
cp -r "$S/tests/fixtures/dpkg" "$W/bdb/div"; head -2 "$S/tests/fixtures/dpkg/diversions" > "$W/bdb/div/diversions"
cp -r "$S/tests/fixtures/dpkg" "$W/bdb/dirlist"; mkdir "$W/bdb/dirlist/info/odd.list"
# (a diversions file that is a directory was read as one of no diversion at all)
cp -r "$S/tests/fixtures/dpkg" "$W/bdb/divdir"; rm "$W/bdb/divdir/diversions"; mkdir "$W/bdb/divdir/diversions"
for db in div:'div/diversions:2: a diversion needs 3 lines' dirlist:'dirlist/info/odd.list: Is a directory' \
	divdir:'divdir/diversions: Is a directory'; do
	name=${db%%:*} want=${db#*:}
	"$ST" run --audit --dpkg-root "$W/bdb/$name" --no-implicit-deps --deps libfoo-dev --report "$W/bdb/$name.jsonl" -- true
	msg=$("$ST" audit "$W/bdb/$name.jsonl" 2>&1); rc=$?
	check "a registry that fails to load ($name): sandtrace audit exits 1 and names its error ($msg)" \
		sh -c "test $rc -eq 1 && echo \"\$1\" | grep -q 'the package registry could not be loaded (.*$want' && ! echo \"\$1\" | grep -q 'run with --audit'" _ "$msg"
done
# A file several packages list (dpkg allows it for Multi-Arch: same instances and
# Replaces; an owner map may give a path twice): the registry kept the first owner
# read (info/'s directory order), so a run that declared another of them had the file
# counted as the first's, UNDECLARED, and an ask rule under a fence hid it. Each lister
# is an owner now, and a declared one answers for the file.
mkdir -p "$W/shr"; echo shared > "$W/shr/f"
cp -r "$S/tests/fixtures/dpkg" "$W/shr/db"
for l in libzz-dev:amd64 libfoo-dev libc-fix:amd64; do echo "$W/shr/f" >> "$W/shr/db/info/$l.list"; done
printf 'ask read %s/shr/f\nallow any /\n' "$W" > "$W/shr/pol"
for dep in libzz-dev libfoo-dev libc-fix; do
	R=$W/shr/$dep.jsonl
	"$ST" run --audit --dpkg-root "$W/shr/db" --no-implicit-deps --deps "$dep" --report "$R" -- cat "$W/shr/f" > /dev/null
	check "a file three packages list, $dep declared: counted as $dep's, declared (got: $(records "$R" package '[(r["package"], r["declared"]) for r in rs if r.get("used")]'))" \
		test "$(records "$R" package '[(r["package"], r["declared"]) for r in rs if r.get("used")]')" = "[('$dep', 'direct')]"
	out=$("$ST" run --fence --policy "$W/shr/pol" --dpkg-root "$W/shr/db" --no-implicit-deps --deps "$dep" -- cat "$W/shr/f" 2>&1)
	check "a file three packages list, $dep declared: an ask rule under a fence lets it be read (got: $out)" test "$out" = shared
done
R=$W/shr/none.jsonl
"$ST" run --audit --dpkg-root "$W/shr/db" --no-implicit-deps --deps mta-real --report "$R" -- cat "$W/shr/f" > /dev/null
check "a file three packages list, none declared: undeclared (got: $(records "$R" package '[r["declared"] for r in rs if r.get("used")]'))" \
	test "$(records "$R" package '[r["declared"] for r in rs if r.get("used")]')" = "[False]"
printf '%s/shr/f\tone-port\n%s/shr/f\ttwo-port\n' "$W" "$W" > "$W/shr/owners"
R=$W/shr/owners.jsonl
"$ST" run --audit --owners "$W/shr/owners" --dpkg-root "$S/tests/fixtures/dpkg" --no-implicit-deps --deps two-port --report "$R" -- cat "$W/shr/f" > /dev/null
check "an owner map giving a path to two ports, the second declared: declared (got: $(records "$R" package '[(r["package"], r["declared"]) for r in rs if r.get("used")]'))" \
	test "$(records "$R" package '[(r["package"], r["declared"]) for r in rs if r.get("used")]')" = "[('two-port', 'direct')]"
# An owner map's line the registry can never match: a NUL byte in it (the path, or the
# package's name, ends there) or a path spelled unfolded ("//", "." or ".."; the report's
# paths are folded) was taken silently, and the file it named stayed unowned. Each is
# refused, with the file and the line; "/." (dpkg lists' root) is skipped.
mkdir -p "$W/om"
i=0
for line in '/etc/host\0name\tp' '/etc/hostname\tp\0q' '//etc/hostname\tp' '/etc//hostname\tp' \
	'/etc/./hostname\tp' '/etc/../etc/hostname\tp' '/etc/hostname/.\tp' '/etc/hostname//\tp' '/..\tp'; do
	i=$((i+1))
	printf "# map\n$line\n" > "$W/om/o$i"
	msg=$("$ST" run --audit --owners "$W/om/o$i" --dpkg-root "$S/tests/fixtures/dpkg" -- sh -c ": > $W/om/started$i" 2>&1); rc=$?
	check "owner map line '$(printf '%s' "$line" | tr '\\' '^')' refused before the run, with file and line (got $rc: $(echo "$msg" | head -1))" \
		sh -c "test $rc -eq 125 && test ! -e '$W/om/started$i' && echo \"\$1\" | grep -q 'om/o$i:2: '" _ "$msg"
done
printf '/.\tp\n/etc/.x\tp\n/etc/..x\tp\n/\tp\n/etc/\tp\n' > "$W/om/fine"
check "owner map: '/.', dot names and '/' accepted" "$ST" run --audit --owners "$W/om/fine" --dpkg-root "$S/tests/fixtures/dpkg" -- true
# The audit leaves the run's working tree out of the files no package owns; a run
# started at the root (a service's working directory is "/") took "/" for that tree and
# reported no unowned file at all.
mkdir -p "$W/rt"; printf '%s/rt/none\tsome-port\n' "$W" > "$W/rt/owners"
for dir in "$W" /; do
	R=$W/rt/r$(echo "$dir" | tr / _).jsonl
	(cd "$dir" && "$ST" run --audit --owners "$W/rt/owners" --dpkg-root "$S/tests/fixtures/dpkg" \
		--report "$R" -- cat /etc/hostname > /dev/null)
	check "a run started in $dir: /etc/hostname, which no package owns, listed unowned (got: $(records "$R" unowned '[r["path"] for r in rs]'))" \
		test "$(records "$R" unowned '"/etc/hostname" in [r["path"] for r in rs]')" = True
done
# --owners with a --dpkg-root: package records come from its status "when there is one"
# (README), but a --dpkg-root without one failed the registry at the end of the run (no
# audit), and one that is not there at all was found only then too. A root without status
# is fine now; a root that is not a directory stops the run before it starts.
mkdir -p "$W/ro/empty"; printf '/etc/hostname\tsome-port\n' > "$W/ro/owners"
R=$W/ro/empty.jsonl
"$ST" run --audit --owners "$W/ro/owners" --dpkg-root "$W/ro/empty" --report "$R" -- cat /etc/hostname > /dev/null
check "--owners, a --dpkg-root without status: the audit is there, the map's package used (got: $(records "$R" package '[r["package"] for r in rs if r.get("used")]'))" \
	test "$(records "$R" package '[r["package"] for r in rs if r.get("used")]')" = "['some-port']"
for root in "$W/ro/none" /etc/hostname; do
	msg=$("$ST" run --audit --owners "$W/ro/owners" --dpkg-root "$root" -- sh -c ": > $W/ro/started" 2>&1); rc=$?
	check "--owners, --dpkg-root $root: refused before the run (got $rc: $(echo "$msg" | head -1))" \
		sh -c "test $rc -eq 125 && test ! -e '$W/ro/started' && echo \"\$1\" | grep -q -- '--dpkg-root $root: '" _ "$msg"
done
# --deps-from DIR whose debian/control cannot be read (a directory there): getline's
# error ended the reading as the end of the file does, and the run declared nothing.
mkdir -p "$W/dfd/debian/control"
msg=$("$ST" run --audit --deps-from "$W/dfd" -- sh -c ": > $W/dfd/started" 2>&1); rc=$?
check "--deps-from, debian/control a directory: refused before the run (got $rc: $(echo "$msg" | head -1))" \
	sh -c "test $rc -eq 125 && test ! -e '$W/dfd/started' && echo \"\$1\" | grep -q 'dfd/debian/control: Is a directory'" _ "$msg"
done_
