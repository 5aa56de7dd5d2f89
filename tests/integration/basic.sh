#!/bin/sh
# tests/integration/basic.sh - coreutils, sh pipelines, python3 under trace-only mode: the report names what was touched.
. "$(dirname "$0")/lib.sh"
cd "$W"
R=$W/r.jsonl
echo hello > in.txt
mkdir d; : > d/a; : > d/b
"$ST" run --report "$R" -- sh -c 'cat in.txt > out.txt; ls d >/dev/null; stat -c %s in.txt >/dev/null; test -e nope; cat in.txt | wc -c >/dev/null; rm out.txt; mkdir newdir; mv newdir newdir2'
check "run exits 0" test $? -eq 0
check "read of in.txt"      has R "$W/in.txt" "$R"
check "write of out.txt"    has W "$W/out.txt" "$R"
check "directory listing d" has D "$W/d" "$R"
check "exec of cat (resolved)" has X /usr/bin/cat "$R"
check "missing nope"        has N "$W/nope" "$R"
check "mv: both names written" sh -c "$ST report --list $R | grep -qxF 'W	$W/newdir' && $ST report --list $R | grep -qxF 'W	$W/newdir2'"
check "summary complete"    test "$(summary_field "$R" complete)" = true
check "processes counted"   test "$(summary_field "$R" processes)" -ge 5

# python3 opens a file by itself
R2=$W/py.jsonl
"$ST" run --report "$R2" -- python3 -c 'open("in.txt").read(); open("py.out","w").write("x")'
check "python3 read"  has R "$W/in.txt" "$R2"
check "python3 write" has W "$W/py.out" "$R2"

# a hostile file name is recorded byte for byte and escaped
R3=$W/hostile.jsonl
name=$(printf 'we\tird\nna\\me\377\303\251')
: > "$name"
"$ST" run --report "$R3" -- cat "$name" >/dev/null
check "hostile name escaped in --list" sh -c "$ST report --list $R3 | grep -qxF 'R	$W/we\\x09ird\\x0ana\\x5cme\\xffé'"
check "report is valid JSON" python3 -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1])]' "$R3"

# a path through a symlink is recorded as its target
ln -s in.txt lnk
R4=$W/lnk.jsonl
"$ST" run --report "$R4" -- cat lnk >/dev/null
check "symlink recorded as target" has R "$W/in.txt" "$R4"
"$ST" run --report "$R4" -- "$DRV" readlink lnk >/dev/null
check "readlink recorded as the link (query)" has Q "$W/lnk" "$R4"

# open(O_RDONLY|O_CREAT) is a write
R5=$W/creat.jsonl
"$ST" run --report "$R5" -- "$DRV" open-rdonly-creat t3 >/dev/null
check "O_RDONLY|O_CREAT is a write" has W "$W/t3" "$R5"

# syscall(SYS_openat) is seen
R6=$W/sys.jsonl
"$ST" run --report "$R6" -- "$DRV" syscall-openat in.txt >/dev/null
check "syscall(SYS_openat) recorded" has R "$W/in.txt" "$R6"

# no-cache mode records the same
R7=$W/nc.jsonl
"$ST" run --no-cache --report "$R7" -- cat in.txt >/dev/null
check "--no-cache records reads" has R "$W/in.txt" "$R7"
# a full arena stops caching: nothing is lost (records go over the socket), the report says so
mkdir many; i=0; while [ $i -lt 150 ]; do echo $i > many/f$i; i=$((i+1)); done
R9=$W/full.jsonl
"$ST" run --arena-size 64K --report "$R9" -- sh -c 'for f in many/f*; do cat "$f" >/dev/null; done'
n=$("$ST" report --list "$R9" | grep -c "^R	$W/many/f")
check "full arena: all 150 reads recorded ($n)" test "$n" -eq 150
check "full arena: said in the summary" sh -c "grep -q 'arena filled up' $R9"
# the cache follows symlinks that are repointed during the run
R8=$W/repoint.jsonl
echo a > ta; echo b > tb
"$ST" run --report "$R8" -- sh -c 'ln -sf ta cur; cat cur >/dev/null; ln -sf tb cur; cat cur >/dev/null'
check "repointed link: first target read"  has R "$W/ta" "$R8"
check "repointed link: second target read" has R "$W/tb" "$R8"
# a link to a directory repointed: paths through it resolve anew
mkdir dA dB; echo a > dA/f; echo b > dB/f
R10=$W/repoint-dir.jsonl
"$ST" run --report "$R10" -- sh -c 'ln -sfn dA cd1; cat cd1/f >/dev/null; ln -sfn dB cd1; cat cd1/f >/dev/null'
check "repointed directory link: first target read"  has R "$W/dA/f" "$R10"
check "repointed directory link: second target read" has R "$W/dB/f" "$R10"
# a directory that resolved to itself (remembered: later misses under it
# resolve only their last component) replaced by a link, after a move or
# a removal: paths under it resolve anew
mkdir dC dD dE dF; echo c > dC/f; echo d > dD/f; echo e > dE/f; echo f > dF/f
R11=$W/dir-replaced.jsonl
"$ST" run --report "$R11" -- sh -c 'cat dC/f dE/f >/dev/null; mv dC dC.old; ln -s dD dC;
  rm dE/f; rmdir dE; ln -s dF dE; cat dC/f dE/f >/dev/null'
check "directory moved, link in its place: first read"  has R "$W/dC/f" "$R11"
check "directory moved, link in its place: second read" has R "$W/dD/f" "$R11"
check "directory removed, link in its place: first read"  has R "$W/dE/f" "$R11"
check "directory removed, link in its place: second read" has R "$W/dF/f" "$R11"
done_
