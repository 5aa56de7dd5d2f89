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

# the launcher (the CLI's child about to exec the command) is not a process of the build,
# whether its exec is settled in the arena or asked of the daemon (--no-cache)
for mode in "" --no-cache; do
	"$ST" run $mode --report "$W/launch.jsonl" -- /bin/true
	check "run ${mode:-(cache)} -- /bin/true: one process record, the command's" python3 -c '
import json, os, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
procs = [r for r in recs if r.get("type") == "process"]
assert [p["exe"] for p in procs] == [os.path.realpath("/bin/true")], procs
assert recs[-1]["type"] == "summary" and recs[-1]["processes"] == 1, recs[-1]' "$W/launch.jsonl"
done

# python3 opens a file by itself
R2=$W/py.jsonl
"$ST" run --report "$R2" -- python3 -c 'open("in.txt").read(); open("py.out","w").write("x")'
check "python3 read"  has R "$W/in.txt" "$R2"
check "python3 write" has W "$W/py.out" "$R2"

# POSIX shared memory and named semaphores are files in /dev/shm that glibc opens
# itself: each is recorded under its file's name
R2s=$W/shm.jsonl
shm=st-basic-$$
"$ST" run --report "$R2s" -- sh -c "$DRV shm-open /$shm && $DRV shm-unlink /$shm && $DRV sem-open /$shm && $DRV sem-unlink /$shm" >/dev/null
check "shm_open, sem_open: run exits 0" test $? -eq 0
check "shm_open: a write of /dev/shm/$shm" has W "/dev/shm/$shm" "$R2s"
check "sem_open: a write of /dev/shm/sem.$shm" has W "/dev/shm/sem.$shm" "$R2s"

# the cwd cache holds a short cwd in st__g and a long one (256 bytes or more) in a buffer of
# its own: relative names in each, in turn, twice each (the second from the cache), in one
# process, are recorded under the cwd they were opened in
seg=c1234567890123456789012345678901234567890123456789012345678901234567890123456789
mkdir -p "$W/cw/$seg/$seg/$seg/$seg" "$W/cs"
: > "$W/cw/$seg/$seg/$seg/$seg/lf"; : > "$W/cs/sf"
R2c=$W/cwd.jsonl
"$ST" run --report "$R2c" -- python3 -c '
import os, sys
for d, f in ((sys.argv[1], "lf"), (sys.argv[2], "sf"), (sys.argv[1], "lf"), (sys.argv[2], "sf")):
    os.chdir(d)
    open(f).read(); open(f).read()
    try:
        os.stat("missing-" + f)
    except OSError:
        pass' "$W/cw/$seg/$seg/$seg/$seg" "$W/cs"
check "long cwd: a relative read recorded under it" has R "$W/cw/$seg/$seg/$seg/$seg/lf" "$R2c"
check "long cwd: a relative miss recorded under it" has N "$W/cw/$seg/$seg/$seg/$seg/missing-lf" "$R2c"
check "short cwd: a relative read recorded under it" has R "$W/cs/sf" "$R2c"
check "short cwd: a relative miss recorded under it" has N "$W/cs/missing-sf" "$R2c"
check "no name joined to the other cwd" sh -c "! $ST report --list $R2c | grep -e '$W/cs/.*lf' -e '$seg/[ms].*sf'"

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

# absolute spellings that are not clean are recorded cleaned; clean ones (a dot-name too) as
# they are (make_abs checks cleanness in the program's buffer before its copy)
touch .hid
R6c=$W/spell.jsonl
"$ST" run --report "$R6c" -- sh -c "\"$DRV\" stat $W//in.txt; \"$DRV\" stat $W/./.hid; \"$DRV\" stat $W/in.txt" >/dev/null
check "spelled //: recorded clean" has Q "$W/in.txt" "$R6c"
check "spelled /./ before a dot-name: recorded clean" has Q "$W/.hid" "$R6c"
check "nothing recorded unclean" sh -c "! \"$ST\" report --list \"$R6c\" | grep -q -e '//' -e '/\./'"

# syscall(SYS_openat) is seen
R6=$W/sys.jsonl
"$ST" run --report "$R6" -- "$DRV" syscall-openat in.txt >/dev/null
check "syscall(SYS_openat) recorded" has R "$W/in.txt" "$R6"

# no-cache mode records the same
R7=$W/nc.jsonl
"$ST" run --no-cache --report "$R7" -- cat in.txt >/dev/null
check "--no-cache records reads" has R "$W/in.txt" "$R7"
# the connection's descriptor closed where no close() is seen (inside libc by fclose, or by
# an inline system call), then a socket of the program's at its number: not one byte of the
# shim's may reach that socket, no request may hang on it, and no later access may be lost
# (a newcomer's review of a per-request check that trusted the close wrappers found all three)
touch cf cf-after; for i in $(seq 0 19); do touch cf-after-$i; done
out=$(timeout 60 "$ST" run --no-cache --report "$W/fdopen-conn.jsonl" -- "$DRV" fdopen-conn "$W/cf")
check "connection closed inside libc, a socket at its number: nothing leaked ($out)" test "$out" = ok
check "... and the next access recorded" has Q "$W/cf-after" "$W/fdopen-conn.jsonl"
out=$(timeout 60 "$ST" run --no-cache --report "$W/rawclose-conn.jsonl" -- "$DRV" rawclose-conn "$W/cf")
n=$("$ST" report --list "$W/rawclose-conn.jsonl" | grep -c "$W/cf-after-")
check "connection closed by an inline system call: all 20 later accesses recorded ($out, $n)" test "$n" = 20
n=$(grep '"type":"process"' "$W/rawclose-conn.jsonl" | grep -c '"exe":"[^"]*/stdriver"')
check "... and the reconnection is the same image, not a second one ($n)" test "$n" = 1
# the program's own file at the connection's number when it forks (dup2 onto 900): the
# child's copy is the program's, not the connection to drop; closed as the parent's
# connection, the child's shim connected again at 900 and the child's writes went to the
# daemon (fork, syscall(SYS_clone), and a clone no wrapper sees)
for way in fork clone rawclone; do
	out=$(timeout 60 "$ST" run --no-cache --report "$W/dup2-conn-$way.jsonl" -- "$DRV" dup2-conn-fork "$W/cf" $way)
	check "program's socket at the connection's number, child by $way: intact ($out)" test "$out" = ok
	check "... and the child's access recorded" has N "$W/cf-child" "$W/dup2-conn-$way.jsonl"
done
# a program that makes every descriptor it has non-blocking (the connection among them):
# a request's answer not there yet is no lost daemon; under a fence the accesses were refused
printf 'allow any %s\n%s\n' "$W" "$(system_rules)" > "$W/nb.policy"
printf 'allow read %s\nallow exec %s\n' "$B/tests/drivers" "$B/tests/drivers" >> "$W/nb.policy"
out=$(timeout 60 "$ST" run --no-cache --fence --policy "$W/nb.policy" --report "$W/nonblock-conn.jsonl" -- "$DRV" nonblock-conn "$W/cf")
check "connection made non-blocking by the program: every request answered ($out)" test "$out" = ok
# the loader-audit module's connection, its number taken by the program (closefrom, then
# dup2 onto 900..909): not written to nor closed, and the next load still recorded
out=$(timeout 60 "$ST" run --loader-audit --no-cache --report "$W/audit-conn.jsonl" -- "$DRV" audit-conn libm.so.6 libz.so.1)
check "audit module's number taken by the program: left alone ($out)" test "$out" = ok
check "... and the next load recorded" sh -c "'$ST' report --list '$W/audit-conn.jsonl' | grep -q '^R	.*/libz\.so'"
# a fork in a vfork child: the grandchild is a process of its own (its pid on
# its accesses, its record, child of the vfork child, its exit status)
out=$(timeout 60 "$ST" run --report "$W/vff.jsonl" -- "$DRV" vfork-fork "$W/vff")
check "fork in a vfork child: own pids, records, parents, statuses ($out)" python3 -c '
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
procs = {r["pid"]: r for r in recs if r["type"] == "process"}
vc, gcs, bad = None, [], []
for r in recs:
    m = re.search(r"/vff-(vc|gc)-([0-9]+)$", r.get("path", "")) if r["type"] == "access" else None
    if m:
        pid = int(m.group(2))
        if pid != r["pid"]:
            bad.append((r["path"], r["pid"]))
        if m.group(1) == "vc":
            vc = pid
        else:
            gcs.append(pid)
for g in gcs:
    p = procs.get(g)
    if p is None or p.get("ppid") != vc or p.get("exit") != 3:
        bad.append(("grandchild", g, p))
sys.exit(0 if vc and len(gcs) == 3 and not bad else "vc %r, grandchildren %r, wrong %r" % (vc, gcs, bad))' "$W/vff.jsonl"
# children of clone(2) sharing the memory (CLONE_VM) or the descriptor table (CLONE_FILES)
# with their parent: each access carries its own process's pid (with --no-cache, each on
# its own connection); with the arena too, for a child that
# leaves its parent waiting (CLONE_VFORK: the vfork wrapper's state) or has memory of its own
for how in clone-vm clone-files "clone-vfork --arena" "clone-files --arena"; do
	set -- $how
	mode=--no-cache; [ "${2:-}" = --arena ] && mode=
	out=$(timeout 60 "$ST" run $mode --report "$W/$1$2.jsonl" -- "$DRV" $1 "$W/cl")
	how="$1 ${mode:-(arena)}"
	check "$how: every access carries its own pid ($out)" python3 -c '
import json, re, sys
seen, bad = 0, []
for r in map(json.loads, open(sys.argv[1])):
    m = re.search(r"/cl-(child|parent)-([0-9]+)$", r.get("path", "")) if r["type"] == "access" else None
    if m:
        seen += 1
        if int(m.group(2)) != r["pid"]:
            bad.append((r["path"], r["pid"]))
sys.exit(0 if seen >= 4 and not bad else "seen %d, wrong %r" % (seen, bad))' "$W/$1$2.jsonl"
done
# a child of a raw clone (no fork wrapper saw it) makes its own connection: its request
# carries its own pid, and parent and child each get their own answers (no timeout)
only_pid() { # only_pid REPORT PATH PID: PATH's access records exist, all of process PID
	python3 -c '
import json, sys
got = [r.get("pid") for r in map(json.loads, open(sys.argv[1]))
       if r["type"] == "access" and r.get("path") == sys.argv[2]]
sys.exit(0 if got and all(p == int(sys.argv[3]) for p in got) else "pids %r" % got)' "$@"
}
R7b=$W/rawfork.jsonl
touch rf rf-child rf-after
out=$(timeout 30 "$ST" run --no-cache --report "$R7b" -- "$DRV" rawfork-stat "$W/rf")
cpid=$(echo "$out" | sed -n 's/^child //p')
check "raw clone: parent and child done ($out)" test "$(echo "$out" | tail -1)" = ok
check "raw clone: the child's stat is the child's (pid $cpid)" \
	only_pid "$R7b" "$W/rf-child" "${cpid:-0}"
check "raw clone: the parent's stat after it recorded" has Q "$W/rf-after" "$R7b"
# the same with the arena (the default): the child's record goes to a log chunk of its
# own with its own pid, and the child has a process record; likewise for libc's
# clone() without CLONE_VM
for call in rawfork-stat clonefn-stat; do
	R7c=$W/$call-arena.jsonl
	out=$(timeout 30 "$ST" run --report "$R7c" -- "$DRV" $call "$W/rf")
	cpid=$(echo "$out" | sed -n 's/^child //p')
	check "$call (arena): parent and child done ($out)" test "$(echo "$out" | tail -1)" = ok
	check "$call (arena): the child's stat is the child's (pid $cpid)" \
		only_pid "$R7c" "$W/rf-child" "${cpid:-0}"
	check "$call (arena): a process record of the child" \
		sh -c "grep '\"type\":\"process\"' '$R7c' | grep -q '\"pid\":${cpid:-0},'"
done
# a full arena stops caching: nothing is lost (records go over the socket), the report says so
mkdir many; i=0; while [ $i -lt 150 ]; do echo $i > many/f$i; i=$((i+1)); done
R9=$W/full.jsonl
"$ST" run --arena-size 64K --report "$R9" -- sh -c 'for f in many/f*; do cat "$f" >/dev/null; done'
n=$("$ST" report --list "$R9" | grep -c "^R	$W/many/f")
check "full arena: all 150 reads recorded ($n)" test "$n" -eq 150
check "full arena: said in the summary's notes, the trace complete (nothing was lost)" python3 -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
sys.exit(not (s["complete"] is True and not s["reasons"] and any("arena filled up" in n for n in s.get("notes", []))))' "$R9"
out=$("$ST" run --arena-size 64K --strict --summary -- sh -c 'for f in many/f*; do cat "$f" >/dev/null; done' 2>&1)
check "full arena: --strict exits 0, the summary notes it (got: $?)" test $? -eq 0
check "full arena: the printed summary says the note and complete" \
	sh -c "echo '$out' | grep -q 'note: the arena filled up' && echo '$out' | grep -q 'trace complete'"
# ... a forked child's process record goes by the socket when the log is
# full (the same commands in a 1 MiB arena, which fills while xargs forks its
# cats, and in a 16 MiB one: as many processes; files of the test's own, so
# that the fill does not depend on the machine)
mkdir lots
python3 -c 'for i in range(3000): open("lots/f%04d.txt" % i, "w").write("x")'
for sz in 1M 16M; do
	"$ST" run --arena-size $sz --report "$W/forks-$sz.jsonl" -- sh -c 'for i in 1 2 3 4 5; do
	  ls /usr/bin >/dev/null; done; find lots -type f | xargs -n 500 cat >/dev/null' 2>/dev/null
done
n1=$(grep -c '"type":"process"' "$W/forks-1M.jsonl"); n16=$(grep -c '"type":"process"' "$W/forks-16M.jsonl")
check "full arena: forked children's process records all there ($n1 of $n16)" test "$n1" -eq "$n16"
check "... and the 1 MiB arena did fill" sh -c "grep -q 'arena filled up' $W/forks-1M.jsonl"
# ... and while it fills, one process's images keep their order: the image
# before an exec logged its records in the arena, the exec'd one (the log
# full) sends its HELLO and EXIT by the socket, which must not overtake them
# (each pid: every record but its last is an image that exec'd, and the exit
# status belongs to the last)
R9b=$W/full-order.jsonl
"$ST" run --arena-size 64K --report "$R9b" -- sh -c 'for i in 1 2 3 4 5; do ls /usr/bin >/dev/null; done
  find /usr/include -type f | head -3000 | xargs cat >/dev/null' 2>/dev/null
check "full arena: every process's images in order, the exit status on the last" python3 -c '
import collections, json, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "process":
        d[r["pid"]].append(r)
bad = [(p, [(x["exe"], x.get("execed", False)) for x in v]) for p, v in d.items()
       if any(not x.get("execed") for x in v[:-1]) or v[-1].get("execed")]
if bad:
    sys.exit("out of order: %r" % bad)' "$R9b"
# every image's executable as the kernel names it (/proc/PID/exe), whether the parent's
# exec wrapper named it (SANDTRACE_EXE, checked against the image's AT_EXECFN) or the
# image asked the kernel: through a link, a script (its interpreter), a script whose
# interpreter is a script, a relative spelling, a raw exec with the inherited name (made
# for another exec), and names that are malformed or do not fit; then a spawn through a
# /proc/self link its file actions change, an execute-only script (the shim cannot read it),
# and a raw re-exec of the same path after its link was repointed.  The link and the
# script run twice: the second exec's check is a cache hit, and its parent names the
# program from its open descriptor (/proc/self/fd), not from a resolution
mkdir -p "$W/exe"
ln -sf /bin/true "$W/exe/t-link"
printf '#!/bin/sh\nexit 0\n' > "$W/exe/scr"
printf '#!%s\nexit 0\n' "$W/exe/scr" > "$W/exe/scr2"
chmod +x "$W/exe/scr" "$W/exe/scr2"
R7e=$W/exe.jsonl
"$ST" run --report "$R7e" -- sh -c '"$1/t-link"; "$1/t-link"; "$1/scr"; "$1/scr"; "$1/scr2"; cd "$1" && ./t-link
for h in = - x 9:/bin/tru 10:/bin/true 9:/bin/truerel 99999999999999999999:/bin/true \
    9:/bin/true/fake/exe; do "$2" rawexec /bin/true "$h"; done' sh "$W/exe" "$DRV"
# an image that names itself with a long command (its HELLO's iovecs and the name share
# the slot's buffer): both whole
R7m=$W/exemany.jsonl
"$ST" run --report "$R7m" -- "$DRV" rawexec-many /bin/true 40 >/dev/null
check "an image naming itself, 40 arguments: its executable and argv whole" python3 -c '
import json, os, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "process" and r.get("argv", [""])[0] == "/bin/true":
        assert r["exe"] == os.path.realpath("/bin/true"), r
        assert r["argv"] == ["/bin/true"] + ["a%d" % i for i in range(1, 41)], r
        sys.exit(0)
sys.exit(1)' "$R7m"
check "each image's executable: resolved as the kernel names it, a hint taken only for its own exec" python3 -c '
import json, os, sys
w, rep = sys.argv[1], sys.argv[2]
true, dash = os.path.realpath("/bin/true"), os.path.realpath("/bin/sh")
want = {(w + "/t-link",): true, ("/bin/sh", w + "/scr"): dash,
        ("/bin/sh", w + "/scr", w + "/scr2"): dash, ("./t-link",): true}
for h in ["=", "-", "x", "9:/bin/tru", "10:/bin/true", "9:/bin/truerel",
          "99999999999999999999:/bin/true"]:
    want[("/bin/true", h)] = true
want[("/bin/true", "9:/bin/true/fake/exe")] = "/fake/exe"  # made for this exec: taken
got = {}
for l in open(rep):
    r = json.loads(l)
    if r.get("type") == "process" and tuple(r.get("argv", [])) in want:
        got.setdefault(tuple(r["argv"]), []).append(r.get("exe"))
bad = {k: (got.get(k), v) for k, v in want.items() if not got.get(k) or set(got[k]) != {v}}
twice = [k for k in [(w + "/t-link",), ("/bin/sh", w + "/scr")] if len(got.get(k, [])) != 2]
if bad or twice:
    sys.exit("exe (got, want): %r; not run twice: %r" % (bad, twice))' "$W/exe" "$R7e"
# the program's name read from the exec'ing thread's own descriptor table (a thread
# that unshared it: /proc/self/fd shows the leader's), run twice (the second exec's
# check a cache hit); a program replaced after it started, re-exec'd through
# /proc/self/exe: the kernel names it "... (deleted)", and so must the record
cp /bin/sh "$W/exe/rsh"; cp /bin/sh "$W/exe/rsh.new"
cat > "$W/exe/reexec.sh" <<'EOF'
mv "$1/rsh.new" "$1/rsh"
exec /proc/self/exe -c 'readlink /proc/$$/exe > "$0/rsh-name"' "$1"
EOF
R7u=$W/exe-unshared.jsonl
"$ST" run --report "$R7u" -- sh -c '"$2" unshared-exec "$1/t-link"; "$2" unshared-exec "$1/t-link"
"$1/rsh" "$1/reexec.sh" "$1"' sh "$W/exe" "$DRV"
check "exe: a thread with its own descriptors, a replaced program re-exec'd" python3 -c '
import json, os, sys
w, rep = sys.argv[1], sys.argv[2]
true = os.path.realpath("/bin/true")
kernel = open(w + "/rsh-name").read().rstrip("\n")
imgs = [r for r in map(json.loads, open(rep)) if r["type"] == "process"]
thr = [r["exe"] for r in imgs if r.get("argv") == [w + "/t-link"]]
again = [r["exe"] for r in imgs if r.get("argv", [""])[0] == "/proc/self/exe"]  # and its fork
bad = []
if thr != [true, true]:
    bad.append(("thread", thr))
if not kernel.endswith(" (deleted)") or not again or set(again) != {kernel}:
    bad.append(("re-exec", kernel, again))
sys.exit("; ".join(map(repr, bad)) if bad else 0)' "$W/exe" "$R7u"
# a descriptor named from the calling thread's own table: a path relative to a
# directory descriptor, in a thread that unshared its table (/proc/self/fd shows the
# leader's, where that number is /etc)
mkdir -p "$W/ud"; echo x > "$W/ud/hostname"
R7d=$W/unshared-openat.jsonl
out=$("$ST" run --report "$R7d" -- "$DRV" unshared-openat "$W/ud" hostname)
check "openat in a thread with its own descriptors: its directory's name ($out)" sh -c \
	'[ "$1" = ok ] && "$2" report --list "$3" | grep -qxF "R	$4/ud/hostname" &&
	 ! "$2" report --list "$3" | grep -qxF "R	/etc/hostname"' sh "$out" "$ST" "$R7d" "$W"
mkdir -p "$W/exe/A" "$W/exe/B"
cp "$DRV" "$W/exe/A/X"; cp "$DRV" "$W/exe/B/X"; ln -sfn A "$W/exe/L"
R7f=$W/exe2.jsonl
"$ST" run --report "$R7f" -- sh -c '
python3 -c "
import os, sys
w = sys.argv[1]
a = os.open(w + \"/A\", os.O_RDONLY | os.O_DIRECTORY); os.dup2(a, 50)
b = os.open(w + \"/B\", os.O_RDONLY | os.O_DIRECTORY)
pid = os.posix_spawn(\"/proc/self/fd/50/X\", [\"X\", \"stat\", \"/spawned\"], os.environ,
                     file_actions=[(os.POSIX_SPAWN_DUP2, b, 50)])
os.waitpid(pid, 0)" "$1"
"$1/L/X" retarget-reexec "$1/L" B
env | grep -c "^SANDTRACE_EXE=" > "$1/env-count"; true' sh "$W/exe"
check "exe: a spawn through /proc/self/fd (file actions), a re-exec after a repointed link; no SANDTRACE_EXE in environ" python3 -c '
import json, sys
w, rep = sys.argv[1], sys.argv[2]
want = {("X", "stat", "/spawned"): w + "/B/X", (w + "/L/X", "stat", "/"): w + "/B/X"}
got = {tuple(r["argv"]): r.get("exe") for r in map(json.loads, open(rep))
       if r.get("type") == "process" and tuple(r.get("argv", [])) in want}
bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
n = open(w + "/env-count").read().strip()
if bad or n != "0":
    sys.exit("exe (got, want): %r; SANDTRACE_EXE in environ: %s" % (bad, n))' "$W/exe" "$R7f"
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	# execute-only: the shim cannot read it to find its interpreter
	chmod 755 "$W"; mkdir -p "$W/xo"; chmod 777 "$W/xo"
	printf '#!/bin/sh\nexit 0\n' > "$W/xo/xs"; chmod 0711 "$W/xo/xs"
	R7g=$W/xo/exe3.jsonl
	setpriv --reuid=65534 --regid=65534 --clear-groups "$ST" run --report "$R7g" -- \
		sh -c "\"$W/xo/xs\"; true" >/dev/null 2>&1
	check "exe: an execute-only script's image names its interpreter" python3 -c '
import json, os, sys
p = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "process"
     and r.get("argv", [None])[-1] == sys.argv[2]]
sys.exit(0 if p and all(r.get("exe") == os.path.realpath("/bin/sh") for r in p) else "images: %r" % p)' "$R7g" "$W/xo/xs"
fi
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
# names that become links without a link to a directory being made or moved
# (a newcomer's review found each one recorded under the old spelling):
# a directory removed and a dangling link put in its place, whose target is
# made afterwards (the link then leads to a directory: mkdir changed it)
mkdir -p m1/w/d/e; echo a > m1/w/d/e/f
R12=$W/became-link.jsonl
"$ST" run --report "$R12" -- sh -c 'cat m1/w/d/e/f >/dev/null; rm -rf m1/w/d; ln -s tgt m1/w/d;
  mkdir -p m1/w/tgt/e; echo g > m1/w/tgt/e/g; cat m1/w/d/e/g >/dev/null'
check "dangling link made a directory's by mkdir: read recorded where it went" \
	has R "$W/m1/w/tgt/e/g" "$R12"
# a link renamed over a regular file (whose own lookups were cached), from a
# directory where it resolves differently (absolute: to a file both ways)
mkdir -p m2/w m2/o; echo p > m2/w/file; echo t > m2/w/t.txt
"$ST" run --report "$R12.2" -- sh -c "cat m2/w/file >/dev/null; ln -s $W/m2/w/t.txt m2/o/l;
  mv -T m2/o/l m2/w/file; cat m2/w/file >/dev/null"
check "link renamed over a file: the second read recorded at its target" has R "$W/m2/w/t.txt" "$R12.2"
# the same with a relative link that dangles where it is made and leads to a
# directory where it lands; the file's name was remembered as resolving to itself
mkdir -p m3/w/den m3/o; echo p > m3/w/file; echo s > m3/w/den/g
"$ST" run --report "$R12.3" -- sh -c 'cat m3/w/file/x 2>/dev/null; ln -s den m3/o/l;
  mv -T m3/o/l m3/w/file; cat m3/w/file/g >/dev/null'
check "dangling link renamed to where it leads to a directory: read recorded there" \
	has R "$W/m3/w/den/g" "$R12.3"
# a directory removed, a link to a file in its place, the file replaced by a
# directory: what was cached under the old directory must not answer
mkdir -p m4/d/e; echo 1 > m4/d/e/f; echo 2 > m4/t
"$ST" run --report "$R12.4" -- sh -c 'cat m4/d/e/f >/dev/null; rm -rf m4/d; ln -s t m4/d;
  rm m4/t; mkdir -p m4/t/e; echo 3 > m4/t/e/f; cat m4/d/e/f >/dev/null'
check "removed directory's entries do not outlive it" has R "$W/m4/t/e/f" "$R12.4"
# a cwd moved by another process: relative names are the new ones
mkdir -p m5/a/b; echo x > m5/a/b/f; echo y > m5/a/b/g
"$ST" run --report "$R12.5" -- sh -c 'cd m5/a/b; read x < f; mv ../../a ../../a2; read x < g'
check "cwd moved by another process: read recorded under the new name" has R "$W/m5/a2/b/g" "$R12.5"
# a directory whose name ends in " (deleted)" (the kernel's mark of a removed
# one in /proc/self/fd) keeps its name when a path is taken relative to it
mkdir -p "m6/x (deleted)"; echo z > "m6/x (deleted)/f"
"$ST" run --report "$R12.6" -- python3 -c 'import os
d = os.open("m6/x (deleted)", os.O_RDONLY)
os.close(os.open("f", os.O_RDONLY, dir_fd=d))'
check "a directory named '... (deleted)' keeps its name" has R "$W/m6/x (deleted)/f" "$R12.6"
# and a name really removed loses the kernel's mark, even when the file lives on
# under another link (a hard link: its link count is not 0)
echo h > m6/h1; ln m6/h1 m6/h2
"$ST" run --report "$R12.6b" -- python3 -c 'import os
fd = os.open("m6/h1", os.O_RDWR); os.unlink("m6/h1"); os.fchmod(fd, 0o644)'
check "a removed name with another hard link: no ' (deleted)' recorded" not_has "$W/m6/h1 (deleted)" "$R12.6b"
# a name a process holds warm (its thread's memo answers) replaced by another
# process: the next read is recorded at the new target
mkdir -p m7/o; echo a > m7/f; echo b > m7/t2
"$ST" run --report "$R12.7" -- sh -c "\"$DRV\" read-wait $W/m7/f m7/go > m7/out &
  i=0; while ! grep -q warm m7/out && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
  ln -s $W/m7/t2 m7/o/l; mv -T m7/o/l m7/f; touch m7/go; wait"
check "warm name replaced by a link: the read after it recorded at the target" has R "$W/m7/t2" "$R12.7"
# the wrappers' fast path (the memo, past its trial, answers before any access
# slot is set up) meets an outcome it has not seen: a warm name another process
# removes (no link involved: the arena epoch stays) is recorded as missing
mkdir -p m7b; echo a > m7b/f
"$ST" run --report "$R12.7b" -- sh -c "\"$DRV\" stat-wait $W/m7b/f m7b/go > m7b/out &
  i=0; while ! grep -q warm m7b/out && [ \$i -lt 400 ]; do sleep 0.05; i=\$((i+1)); done
  rm m7b/f; touch m7b/go; wait"
check "warm stat, then the file removed by another process: the stat fails" grep -qx ENOENT m7b/out
check "... and its missing outcome is recorded" has N "$W/m7b/f" "$R12.7b"
check "... beside the query of when it was there" has Q "$W/m7b/f" "$R12.7b"
# a link elsewhere pointing at a name that becomes a link: the read through it
# is recorded where it went
mkdir -p m8/x/y/A m8/B; echo p > m8/B/file; echo q > m8/t3; ln -s "$W/m8/B/file" m8/x/y/A/L1
"$ST" run --report "$R12.8" -- sh -c "cat m8/x/y/A/L1 >/dev/null; rm m8/B/file; ln -s $W/m8/t3 m8/B/file;
  cat m8/x/y/A/L1 >/dev/null"
check "a link to a name that became a link: the read recorded at the new target" has R "$W/m8/t3" "$R12.8"
# /proc/self/cwd means the cwd of the moment: looked at anew after a chdir
mkdir -p m9/a m9/b; echo a > m9/a/f; echo b > m9/b/f
"$ST" run --report "$R12.9" -- python3 -c 'import os, sys
os.chdir(sys.argv[1]); os.stat("/proc/self/cwd/f"); os.chdir(sys.argv[2]); os.stat("/proc/self/cwd/f")' \
	"$W/m9/a" "$W/m9/b"
check "/proc/self/cwd/f after a chdir: the second stat recorded in the new cwd" has Q "$W/m9/b/f" "$R12.9"
# the hit path (st__fast_pre, st__fast_post: the Ctrie answers before any
# access slot is set up, the thread's memo not in use yet) meets outcomes it has
# not recorded: a name removed by another process is recorded missing, a name
# made after failed stats is recorded when it is there
mkdir -p hp; echo a > hp/f
"$ST" run --report "$W/hp.jsonl" -- python3 -c "
import os, subprocess
def st(p):
    try: os.stat(p)
    except FileNotFoundError: pass
for i in range(3): st('$W/hp/f')
subprocess.run(['rm', '$W/hp/f'])
for i in range(2): st('$W/hp/f')
for i in range(2): st('$W/hp/g')
subprocess.run(['touch', '$W/hp/g'])
for i in range(2): st('$W/hp/g')
for i in range(2): st('$W//hp/./g')"
check "hit path: a warm name removed by another process is recorded missing" has N "$W/hp/f" "$W/hp.jsonl"
check "... beside its query" has Q "$W/hp/f" "$W/hp.jsonl"
check "hit path: a name missing, then made by another process: its missing stat recorded" \
	has N "$W/hp/g" "$W/hp.jsonl"
check "... and its query once it is there" has Q "$W/hp/g" "$W/hp.jsonl"
check "... an unclean spelling recorded as its clean one" not_has "$W//hp/./g" "$W/hp.jsonl"
# /proc/self leads to each process's own directory: what a process reads under it
# is recorded for every process, not once for the first (no key may hold it)
"$ST" run --report "$W/ps.jsonl" -- python3 -c "
import os
for k in range(3):
    p = os.fork()
    if p == 0:
        os.close(os.open('/proc/self/status', os.O_RDONLY)); os.stat('/proc/self/comm'); os._exit(0)
    os.waitpid(p, 0)"
n=$("$ST" report --list "$W/ps.jsonl" | grep -c '/proc/[0-9]*/status$')
check "/proc/self/status read by three processes: three records (got $n)" test "$n" -eq 3
n=$("$ST" report --list "$W/ps.jsonl" | grep -c '/proc/[0-9]*/comm$')
check "... and /proc/self/comm queried by three: three records (got $n)" test "$n" -eq 3
# a thread's own directory has the same per-process links: /proc/P/task/T/cwd
# follows the cwd of the moment (a review found the first cwd's answer kept)
mkdir -p tc/a tc/b; echo a > tc/a/f; echo b > tc/b/f
"$ST" run --report "$W/tc.jsonl" -- python3 -c "
import os
p = '/proc/%d/task/%d/cwd/f' % (os.getpid(), os.getpid())
os.chdir('$W/tc/a'); os.stat(p); os.stat(p); os.chdir('$W/tc/b'); os.stat(p)"
check "/proc/P/task/T/cwd/f after a chdir: recorded in the new cwd" has Q "$W/tc/b/f" "$W/tc.jsonl"
# a record larger than the daemon's line buffer (2 KiB: a process record with a
# long argument) is written whole by the other way, and the report stays valid
long=$(python3 -c 'print("x" * 3000)')
"$ST" run --report "$W/long.jsonl" -- /bin/echo "$long" > /dev/null
check "a record over 2 KiB written whole" python3 -c 'import json,sys
rs=[json.loads(l) for l in open(sys.argv[1])]
sys.exit(0 if [len(a) for r in rs if r["type"]=="process" and r.get("exe","").endswith("/echo") for a in r["argv"]] == [9, 3000] else "argv %r" % [r.get("argv") for r in rs if r["type"]=="process"])' "$W/long.jsonl"
# dlopen of a bare name searches the calling program's DT_RUNPATH, and a $ORIGIN in the
# name is the program's directory: glibc takes the caller from dlopen's return address, so
# the shim's wrapper enters the real dlopen by a tail call (a review found both failing
# traced); what it loads is recorded at the next checked call, here the open after it
mkdir -p "$W/rp/lib"
printf 'int rp_f(void) { return 42; }\n' > "$W/rp/l.c"
printf '#include <dlfcn.h>\n#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\nint main(int c, char **v) { void *h = dlopen(v[1], RTLD_NOW); close(open(v[2], O_RDONLY)); puts(h ? "found" : "missing"); return !h; }\n' > "$W/rp/m.c"
if cc -shared -fPIC -o "$W/rp/lib/librpx.so" "$W/rp/l.c" &&
   cc -o "$W/rp/m" "$W/rp/m.c" -ldl -Wl,--enable-new-dtags,-rpath,"$W/rp/lib"; then
	: > "$W/rp/after"
	for name in librpx.so '$ORIGIN/lib/librpx.so'; do
		out=$("$ST" run --report "$W/rp/r.jsonl" -- "$W/rp/m" "$name" "$W/rp/after")
		check "dlopen($name) from a program with a RUNPATH: found traced (got: $out)" test "$out" = found
		check "dlopen($name): the library recorded before the access after it" python3 -c '
import json, sys
rs = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "access"]
seq = {r["path"]: r["seq"] for r in rs}
sys.exit(0 if sys.argv[2] in seq and sys.argv[3] in seq and seq[sys.argv[2]] < seq[sys.argv[3]] else "seq %r" % seq)' "$W/rp/r.jsonl" "$W/rp/lib/librpx.so" "$W/rp/after"
	done
else
	bad "cc: the RUNPATH test could not be built"
fi
# dlopen of a bare name from an object whose search for it is the shim's (no DT_RPATH or
# DT_RUNPATH of its own: LD_LIBRARY_PATH and the system's directories) is entered by a plain
# call and recorded at once: with the tail call (recorded at the next checked call) a
# process killed right after it, a library closed before the next checked call and a
# dlopen in an atexit handler (past the exit's look) were not recorded at all
mkdir -p "$W/dl/lib" "$W/dl/f"
cat > "$W/dl/dl.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static char **av;
static volatile int warm;
static void late(void) { puts(dlopen(av[2], RTLD_NOW) ? "found" : "missing"); }
/* race: the loader blocks on the FIFO named av[3] (the first directory of the program's
 * RUNPATH) while this thread makes a checked call; then a 32-bit ELF header, which the
 * loader skips for the next directory */
static void *feeder(void *p)
{
	int fd, n = 0;
	struct stat st;
	close(open("/", O_RDONLY)); /* the wrappers' first calls, before the loader's lock is held */
	stat("/", &st);
	warm = 1;
	while ((fd = open(av[3], O_WRONLY | O_NONBLOCK)) < 0)
		if (++n > 10000 || usleep(1000) != 0)
			return p;
	stat("/", &st);
	char h[64] = "\177ELF\1\1\1";
	if (write(fd, h, sizeof h) != sizeof h)
		return p;
	close(fd);
	return p;
}
static void *opener(void *p)
{
	return dlopen(av[2], RTLD_NOW);
}
int main(int argc, char **argv)
{
	void *h;
	av = argv;
	if (!strcmp(argv[1], "close")) { /* closed before any other call */
		h = dlopen(argv[2], RTLD_NOW);
		if (h)
			dlclose(h);
		close(open(argv[argc - 1], O_RDONLY));
	} else if (!strcmp(argv[1], "kill") || !strcmp(argv[1], "mkill")) { /* killed right after */
		h = argv[1][0] == 'm' ? dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW) : dlopen(argv[2], RTLD_NOW);
		puts(h ? "found" : "missing");
		fflush(stdout);
		raise(SIGKILL);
	} else if (!strcmp(argv[1], "atexit")) {
		atexit(late);
		return 0;
	} else if (!strcmp(argv[1], "race")) { /* killed after a checked call of its own */
		pthread_t t;
		pthread_create(&t, NULL, feeder, NULL);
		while (!warm)
			usleep(1000);
		h = dlopen(argv[2], RTLD_NOW);
		if (!h)
			return 1;
		pthread_join(t, NULL);
		close(open(argv[4], O_RDONLY));
		puts("found");
		fflush(stdout);
		raise(SIGKILL);
	} else if (!strcmp(argv[1], "race2")) { /* the same, the dlopen in a thread that ends then */
		pthread_t t;
		pthread_create(&t, NULL, opener, NULL);
		feeder(NULL);
		pthread_join(t, &h);
		if (!h)
			return 1;
		puts("found");
		fflush(stdout);
		raise(SIGKILL);
	} else if (!strcmp(argv[1], "ns")) {
		h = dlmopen(LM_ID_NEWLM, argv[2], RTLD_NOW);
	} else {
		h = dlopen(argv[2], RTLD_NOW);
	}
	puts(h ? "found" : "missing");
	return !h;
}
EOF
printf 'int x_f(void) { return 1; }\n' > "$W/dl/l.c"
ok_=true
for n in kill close atexit; do
	cc -shared -fPIC -o "$W/dl/lib/libx$n.so" "$W/dl/l.c" || ok_=false
done
if $ok_ && cc -o "$W/dl/dl" "$W/dl/dl.c" -ldl -lpthread; then
	: > "$W/dl/after"
	for m in kill close atexit; do
		out=$(LD_LIBRARY_PATH="$W/dl/lib" "$ST" run --report "$W/dl/$m.jsonl" -- "$W/dl/dl" $m "libx$m.so" "$W/dl/after")
		check "dlopen by name ($m): output as untraced (got: $out)" test "$out" = found
		check "dlopen by name ($m): the library recorded" has R "$W/dl/lib/libx$m.so" "$W/dl/$m.jsonl"
	done
	# a path with $LIB or $PLATFORM (the loader's library directory, its platform: the same
	# for every caller) was entered by the tail call too: what it loaded was recorded at the
	# next checked call, never when the process was killed right after.  The candidates
	# of each token's expansion all hold the library: the one the loader opened is recorded
	lib=lib/$(cc -print-multiarch 2>/dev/null)
	plat=$(LD_SHOW_AUXV=1 /bin/true | sed -n 's/^AT_PLATFORM: *//p')
	for d in "$lib" lib64 lib "plat/$plat" plat/haswell plat/xeon_phi; do
		mkdir -p "$W/dl/dst/$d" && cp "$W/dl/lib/libxkill.so" "$W/dl/dst/$d/libxdst.so"
	done
	for name in '$LIB/libxdst.so' '${LIB}/libxdst.so' 'plat/$PLATFORM/libxdst.so'; do
		for m in kill mkill; do
			out=$("$ST" run --report "$W/dl/dst.jsonl" -- "$W/dl/dl" $m "$W/dl/dst/$name")
			check "dlopen of $name ($m): output as untraced (got: $out)" test "$out" = found
			got=$("$ST" report --list "$W/dl/dst.jsonl" | grep -c "^R	$W/dl/dst/.*/libxdst.so\$")
			check "dlopen of $name ($m): the library the loader opened recorded, killed right after (got $got records)" test "$got" = 1
		done
	done
else
	bad "cc: the dlopen tests could not be built"
fi
# a dlopen that finds nothing: the loader's own opens are not seen, and the real dlopen
# keeps errno; a name not found along the search was not recorded at all, a missing path
# was recorded as a read that succeeded.  Each place looked in vain is a failed lookup (N)
mkdir -p "$W/dlnf/lib" "$W/dlnf/lib2"
for nc in "" --no-cache; do
	out=$(LD_LIBRARY_PATH="$W/dlnf/lib:$W/dlnf/lib2" "$ST" run $nc --report "$W/dlnf/r$nc.jsonl" -- "$DRV" dlopen libdoesnotexist.so.1)
	lst=$("$ST" report --list "$W/dlnf/r$nc.jsonl" | grep libdoesnotexist | tr '\n' ' ')
	check "dlopen of a name not found$nc: each directory of the search a failed lookup (got: $out; $lst)" \
		sh -c "has() { echo '$lst' | grep -q \"\$1\"; }; test '$out' = ENOENT &&
		has 'N	$W/dlnf/lib/libdoesnotexist.so.1 ' && has 'N	$W/dlnf/lib2/libdoesnotexist.so.1 ' &&
		has 'N	/usr/lib/[^ ]*libdoesnotexist.so.1 ' && ! echo '$lst' | grep -q '^R\|[^N]	'"
	out=$("$ST" run $nc --report "$W/dlnf/p$nc.jsonl" -- "$DRV" dlopen "$W/dlnf/nothere/libx.so")
	check "dlopen of a missing path$nc: a failed lookup, not a read (got: $out)" \
		sh -c "test '$out' = ENOENT && ! '$ST' report --list '$W/dlnf/p$nc.jsonl' | grep -q '^R	$W/dlnf/nothere'"
	check "... its N record$nc" has N "$W/dlnf/nothere/libx.so" "$W/dlnf/p$nc.jsonl"
	# the search's dlinfo cleared dlerror()'s message (NULL: a caller's puts(dlerror())
	# crashed), and a relative directory of the search (LD_LIBRARY_PATH's empty entry, the
	# cwd; a relative one) was left out of the failed lookups
	out=$(cd "$W/dlnf" && LD_LIBRARY_PATH=":lib2::$W/dlnf/lib" "$ST" run $nc --report "$W/dlnf/e$nc.jsonl" -- "$DRV" dlerror libdoesnotexist.so.2 | tr '\n' ' ')
	check "dlopen of a name not found$nc: dlerror() says why, twice (got: $out)" test "$out" = "msg msg "
	for d in "" /lib2 /lib; do
		check "... a relative or empty LD_LIBRARY_PATH entry$nc: N $W/dlnf$d/libdoesnotexist.so.2" \
			has N "$W/dlnf$d/libdoesnotexist.so.2" "$W/dlnf/e$nc.jsonl"
	done
	# a library the loader found along a relative directory (its name "rel/libz.so.1",
	# below the cwd) was not recorded: only absolute names were; twice in one run (two
	# processes, the second one's set from the library sets' memo) and from another cwd
	mkdir -p "$W/dlnf/rel" "$W/dlnf/other/rel"
	cp -L /lib/x86_64-linux-gnu/libz.so.1 "$W/dlnf/rel/libz.so.1" 2>/dev/null &&
	cp -L /lib/x86_64-linux-gnu/libz.so.1 "$W/dlnf/other/rel/libz.so.1" && {
	out=$(cd "$W/dlnf" && LD_LIBRARY_PATH=rel "$ST" run $nc --report "$W/dlnf/rel$nc.jsonl" -- sh -c \
		'"$0" dlopen libz.so.1; "$0" dlopen libz.so.1; cd other && "$0" dlopen libz.so.1' "$DRV" | tr '\n' ' ')
	check "dlopen along a relative LD_LIBRARY_PATH entry$nc: loaded (got: $out)" test "$out" = "ok ok ok "
	check "... its read recorded where it is$nc" has R "$W/dlnf/rel/libz.so.1" "$W/dlnf/rel$nc.jsonl"
	check "... and the same name from another cwd$nc" has R "$W/dlnf/other/rel/libz.so.1" "$W/dlnf/rel$nc.jsonl"
	}
done
# the dlerror wrapper finds libc's own without a dl call: with dlsym, its first call dropped
# the message of a dlsym that failed just before (dlerror() said NULL)
out=$("$ST" run --report "$W/dlnf/sym.jsonl" -- "$DRV" dlsym-text st_no_such_symbol)
check "dlsym that fails, then dlerror(): its message kept (got: $out)" \
	sh -c "echo '$out' | grep -q 'undefined symbol: st_no_such_symbol'"
# a dlopen the shim enters by a tail call (the caller has a RUNPATH of its own, or the name
# a \$ORIGIN) that finds nothing left no record at all: each place the loader looked is a
# failed lookup now, as for a name searched the shim's way: LD_LIBRARY_PATH, the RUNPATH
# (its \$ORIGIN expanded), the system's directories; a \$ORIGIN name expanded for the caller;
# dlmopen the same.  A name the loader knows already (a loaded object's soname: no file of
# that name anywhere) and one it finds are no failed lookup
mkdir -p "$W/rp2/lib" "$W/rp2/lib2" "$W/rp2/llp" "$W/rp2/sn"
cat > "$W/rp2/m.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		void *h = strcmp(argv[i], "ns") ? dlopen(argv[i], RTLD_NOW)
						: dlmopen(LM_ID_NEWLM, argv[++i], RTLD_NOW);
		const char *e = h ? NULL : dlerror();
		printf("%s%s", h ? "found " : "missing ", e && strstr(e, "cannot open") ? "msg " : "");
	}
	puts("");
	return 0;
}
EOF
if cc -shared -fPIC -o "$W/rp2/lib2/librp2.so" "$W/rp/l.c" &&
   cc -shared -fPIC -Wl,-soname,librp2sn.so.1 -o "$W/rp2/sn/libsn.so" "$W/rp/l.c" &&
   cc -o "$W/rp2/m" "$W/rp2/m.c" -ldl -Wl,--enable-new-dtags,-rpath,"\$ORIGIN/lib:$W/rp2/lib2"; then
	for nc in "" --no-cache; do
		R=$W/rp2/r$nc.jsonl
		out=$(LD_LIBRARY_PATH="$W/rp2/llp" "$ST" run $nc --report "$R" -- "$W/rp2/m" librp2none.so.1 \
			'$ORIGIN/lib/librp2none.so.2' ns librp2none.so.3 ns '${ORIGIN}/librp2none.so.4' \
			librp2.so "$W/rp2/sn/libsn.so" librp2sn.so.1)
		check "RUNPATH program, names not found$nc: missing, dlerror() says why; the others found (got: $out)" \
			test "$out" = "missing msg missing msg missing msg missing msg found found found "
		for sub in llp lib lib2; do # (check sets d)
			check "... dlopen of a bare name$nc: N in $sub" has N "$W/rp2/$sub/librp2none.so.1" "$R"
			check "... dlmopen of a bare name$nc: N in $sub" has N "$W/rp2/$sub/librp2none.so.3" "$R"
		done
		check "... dlopen of a bare name$nc: N in the system's directories" \
			sh -c "'$ST' report --list '$R' | grep -q '^N	/usr/lib/[^	]*librp2none.so.1\$'"
		check "... dlopen of a \$ORIGIN name$nc: N where it was looked for" \
			has N "$W/rp2/lib/librp2none.so.2" "$R"
		check "... dlmopen of a \${ORIGIN} name$nc: N where it was looked for" \
			has N "$W/rp2/librp2none.so.4" "$R"
		check "... a name found, or known by its soname: no failed lookup$nc" \
			sh -c "! '$ST' report --list '$R' | grep -q '^N	.*/\\(librp2.so\\|librp2sn.so.1\\)\$'"
	done
else
	bad "cc: the RUNPATH not-found test could not be built"
fi
# the same from a program with a RUNPATH (the tail call, recorded later): a library closed
# before the next checked call is recorded at the dlclose, one loaded in an atexit handler
# at the shim's destructor, and the thread that made the dlopen records it at its own next
# checked call, or at its end (race2), even when another thread's came while the loader was
# searching (here: blocked on a FIFO in the RUNPATH's first directory), so that it is there
# when the process is killed; the four were lost
mkfifo "$W/dl/f/libxrace.so" "$W/dl/f/libxrace2.so"
if cc -shared -fPIC -o "$W/dl/lib/libxrace.so" "$W/dl/l.c" && cp "$W/dl/lib/libxrace.so" "$W/dl/lib/libxrace2.so" &&
   cc -o "$W/dl/dlr" "$W/dl/dl.c" -ldl -lpthread -Wl,--enable-new-dtags,-rpath,"$W/dl/f:$W/dl/lib"; then
	for m in close atexit race race2; do
		out=$("$ST" run --report "$W/dl/r$m.jsonl" -- "$W/dl/dlr" $m "libx$m.so" "$W/dl/f/libx$m.so" "$W/dl/after")
		check "dlopen by name from a RUNPATH program ($m): output as untraced (got: $out)" test "$out" = found
		check "dlopen by name from a RUNPATH program ($m): the library recorded" has R "$W/dl/lib/libx$m.so" "$W/dl/r$m.jsonl"
	done
else
	bad "cc: the RUNPATH dlopen tests could not be built"
fi
# a '$' that starts no dynamic string token ($ORIGIN, $LIB, $PLATFORM) is a plain character
# of the path: a dlopen of it is judged as any other, and a policy's deny refuses it (with
# every '$' taken for a token, it was loaded and only noted after the fact)
mkdir -p "$W/dl/d\$x"
if cc -shared -fPIC -o "$W/dl/d\$x/libxdollar.so" "$W/dl/l.c"; then
	printf 'deny read %s\n' "$W/dl/d\$x" > "$W/dl/dollar.policy"
	out=$("$ST" run --policy "$W/dl/dollar.policy" --report "$W/dl/dollar.jsonl" -- "$W/dl/dl" path "$W/dl/d\$x/libxdollar.so")
	check "dlopen of a denied path with a '\$' in it is refused (got: $out)" test "$out" = missing
	out=$("$ST" run --report "$W/dl/dollar2.jsonl" -- "$W/dl/dl" path "$W/dl/d\$x/libxdollar.so")
	check "dlopen of a path with a '\$' in it: found traced (got: $out)" test "$out" = found
	check "dlopen of a path with a '\$' in it: recorded" has R "$W/dl/d\$x/libxdollar.so" "$W/dl/dollar2.jsonl"
else
	bad "cc: the '\$' dlopen test could not be built"
fi
# a library opened by path brings its own dependencies (DT_NEEDED, found through its
# RUNPATH): they are recorded too, as for a dlopen by name (python's extension modules are
# opened by path: `import ssl` loads libssl and libcrypto so); they were not recorded
printf 'int x_f(void);\nint use_f(void) { return x_f(); }\n' > "$W/dl/use.c"
mkdir -p "$W/dl/dep"
if cc -shared -fPIC -o "$W/dl/dep/libxdep.so" "$W/dl/l.c" &&
   cc -shared -fPIC -o "$W/dl/libxuse.so" "$W/dl/use.c" -Wl,--no-as-needed -L"$W/dl/dep" -lxdep \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/dep'; then
	for opt in --record=first --record=all --no-cache; do
		out=$("$ST" run $opt --report "$W/dl/dep.jsonl" -- "$W/dl/dl" path "$W/dl/libxuse.so")
		check "dlopen by path ($opt): found traced (got: $out)" test "$out" = found
		check "dlopen by path ($opt): the library recorded" has R "$W/dl/libxuse.so" "$W/dl/dep.jsonl"
		check "dlopen by path ($opt): its dependency recorded" has R "$W/dl/dep/libxdep.so" "$W/dl/dep.jsonl"
	done
else
	bad "cc: the dependency test could not be built"
fi
# dlmopen into a new namespace: what it loads there is recorded (the walk of the loaded
# objects, dl_iterate_phdr, sees only the shim's namespace: nothing of it was recorded)
if cc -shared -fPIC -o "$W/dl/lib/libxns.so" "$W/dl/l.c"; then
	out=$(LD_LIBRARY_PATH="$W/dl/lib" "$ST" run --report "$W/dl/ns.jsonl" -- "$W/dl/dl" ns libxns.so)
	check "dlmopen(LM_ID_NEWLM) by name: found traced (got: $out)" test "$out" = found
	check "dlmopen(LM_ID_NEWLM) by name: the library recorded" has R "$W/dl/lib/libxns.so" "$W/dl/ns.jsonl"
	out=$("$ST" run --report "$W/dl/ns2.jsonl" -- "$W/dl/dl" ns "$W/dl/libxuse.so")
	check "dlmopen(LM_ID_NEWLM) by path: found traced (got: $out)" test "$out" = found
	check "dlmopen(LM_ID_NEWLM) by path: its dependency recorded" has R "$W/dl/dep/libxdep.so" "$W/dl/ns2.jsonl"
else
	bad "cc: the dlmopen test could not be built"
fi
# a thread's log chunk is in its static TLS, apart from its buffers (taken at its first
# checked call): threads whose main thread never makes one, chunks filled past the first,
# a thread that ends with pthread_exit, a fork from the main thread whose child and parent
# then record at once: every record there
cat > "$W/lt.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
static const char *dir;
static void *work(void *p)
{
	char b[4096];
	struct stat st;
	for (int i = 0; i < 300; i++) { /* 300 records: past the first, small, chunk */
		snprintf(b, sizeof b, "%s/t%ld-%d", dir, (long)p, i);
		stat(b, &st);
	}
	if ((long)p == 2)
		pthread_exit(p);
	return p;
}
int main(int argc, char **argv)
{
	pthread_t t[6];
	dir = argv[1];
	for (long i = 0; i < 6; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
			return 1;
	for (int i = 0; i < 6; i++)
		pthread_join(t[i], NULL);
	pid_t c = fork();
	if (c == 0) {
		work((void *)7);
		_exit(4);
	}
	work((void *)8); /* beside the child: each in its own chunk */
	int status;
	if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status) || WEXITSTATUS(status) != 4)
		return 1;
	return 3;
}
EOF
if cc -O2 -pthread -o "$W/lt" "$W/lt.c"; then
	mkdir -p "$W/ltd"
	"$ST" run --report "$W/lt.jsonl" -- "$W/lt" "$W/ltd"; rc=$?
	check "threads' chunks: main's exit status 3 (got $rc)" test "$rc" -eq 3
	n=$("$ST" report --list "$W/lt.jsonl" | grep -c "	$W/ltd/t[0-9]-")
	check "threads' chunks: 6 threads x 300, a forked child's 300, its parent's 300 beside it (got $n)" test "$n" -eq 2400
	check "threads' chunks: the last of a thread that called pthread_exit" hasany "$W/ltd/t2-299" "$W/lt.jsonl"
	check "threads' chunks: the forked child's last" hasany "$W/ltd/t7-299" "$W/lt.jsonl"
	check "threads' chunks: the run is complete" test "$(summary_field "$W/lt.jsonl" complete)" = true
	check "threads' chunks: the process records' exit statuses 3 and 4" python3 -c '
import json, sys
ex = sorted(r.get("exit") for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "process")
sys.exit(ex != [3, 4])' "$W/lt.jsonl"
else
	bad "cc: the threads' chunks test could not be built"
fi
# a thread's first call of a wrapper while another thread is inside dlopen, whose library's
# constructor waits for that call: the wrapper resolved its real function with dlsym at its
# first call, which waits for the loader's lock that dlopen holds (the constructor timed out
# after 3 s, and would have hung without its timeout); resolved before the thread exists now
cat > "$W/ctw.c" <<'EOF'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
volatile int st_go, st_done;
static const char *gone;
static void *worker(void *p)
{
	while (!st_go)
		usleep(1000);
	rmdir(gone); /* this process's first rmdir */
	st_done = 1;
	return p;
}
int main(int argc, char **argv)
{
	pthread_t t;
	gone = argv[2];
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	void *h = dlopen(argv[1], RTLD_NOW);
	pthread_join(t, NULL);
	puts(!h ? "no library" : st_done == 2 ? "in time" : "timed out");
	return 0;
}
EOF
cat > "$W/ctl.c" <<'EOF'
#include <unistd.h>
extern volatile int st_go, st_done;
__attribute__((constructor)) static void wait_for_worker(void)
{
	st_go = 1;
	for (int i = 0; i < 3000 && !st_done; i++)
		usleep(1000);
	if (st_done)
		st_done = 2;
}
EOF
if cc -O2 -rdynamic -pthread -o "$W/ctw" "$W/ctw.c" -ldl && cc -shared -fPIC -o "$W/libctl.so" "$W/ctl.c"; then
	out=$("$ST" run --report "$W/ctw.jsonl" -- "$W/ctw" "$W/libctl.so" "$W/no-such-dir")
	check "a thread's first wrapped call during another's dlopen: in time (got: $out)" test "$out" = "in time"
	check "... and recorded" hasany "$W/no-such-dir" "$W/ctw.jsonl"
else
	bad "cc: the dlopen constructor test could not be built"
fi
# the auxiliary vector the shim's constructor finds after the loader's environment
# (st__auxval: the exec hint's AT_EXECFN, AT_UID, AT_BASE): a preload whose
# constructor runs first (it comes after the shim in LD_PRELOAD) and unsets
# variables, which shifts the environment array down in place, leaving NULLs before
# the old terminator; the executable's name (the hint's check against AT_EXECFN)
# must still come out right, and the process must still attach to the arena
cat > "$W/unset.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
/* in /bin/true only: the driver that execs it must pass the variables on */
__attribute__((constructor)) static void drop(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc < 1 || strcmp(argv[0], "/bin/true") != 0)
		return;
	unsetenv("ST_AUXV_A");
	unsetenv("ST_AUXV_B");
	unsetenv("ST_AUXV_C");
}
EOF
if cc -shared -fPIC -o "$W/libunset.so" "$W/unset.c"; then
	# rawexec with a hint made for its exec ("9:/bin/true" + a name of its own): the
	# record names the hint's program only if AT_EXECFN was read right
	ST_AUXV_A=1 ST_AUXV_B=2 ST_AUXV_C=3 "$ST" run --report "$W/auxv.jsonl" -- \
		sh -c 'LD_PRELOAD="$1" /bin/true; LD_PRELOAD="$1" "$2" rawexec /bin/true 9:/bin/true/auxv/exe' \
		sh "$W/libunset.so" "$DRV"
	check "a preload's constructor unset variables before the shim's: each exe right" python3 -c '
import json, os, sys
true = os.path.realpath("/bin/true")
recs = list(map(json.loads, open(sys.argv[1])))
exes = [r.get("exe") for r in recs if r["type"] == "process" and r.get("argv", [""])[0] == "/bin/true"]
sys.exit(0 if exes == [true, "/auxv/exe"] else "exes %r" % (exes,))' "$W/auxv.jsonl"
else
	bad "cc: the unsetenv constructor test could not be built"
fi
# a signal handler's stat of a distinct missing name each time, at a 30 us timer, while the
# thread loops over relative stats, opens and accesses (the shim's own code most of the time)
# and a scandir whose selector stats each entry: a handler's call that came while the thread
# was inside the shim's code, or forwarding its deepest nested call, was not recorded (a few
# percent of them) and the report said the trace was complete.  Each is recorded now (aside,
# in a log chunk of its own), or the report must say the trace is incomplete
mkdir -p "$W/storm" "$W/stormh"; : > "$W/storm/a"; : > "$W/storm/b"
R=$W/storm.jsonl
out=$(cd "$W/storm" && "$ST" run --report "$R" -- "$DRV" sig-storm stat "$W/stormh/s" "$W/storm" 10000)
calls=${out#calls=}; calls=${calls%% *}
got=$("$ST" report --list "$R" | grep -c "^N	$W/stormh/s-[0-9]*\$")
check "a handler's stats, $calls of them: each recorded, or the trace incomplete (recorded: $got)" \
	test "${calls:-0}" -ge 10000 -a \( "$got" = "$calls" -o "$(summary_field "$R" complete)" = false \)
# A file reached from a working directory deeper than 2 x PATH_MAX has no name the shim
# can build: a trace-only run lets the call through unrecorded, and its report says it is
# incomplete (it said complete); from 25 levels (under 2 x PATH_MAX) the shim names it.
mkdir -p "$W/dcwd"
for lv in 25 45; do
	R=$W/dcwd-$lv.jsonl
	out=$("$ST" run --report "$R" -- /usr/bin/python3 -c "
import os
os.chdir('$W/dcwd')
for i in range($lv):
    os.makedirs('x' * 200, exist_ok=True); os.chdir('x' * 200)
open('f$lv.txt', 'w').write('x')
print('ok')" 2>&1)
	check "a cwd $lv levels of 200 bytes deep: the program runs (got: $out)" test "$out" = ok
	c=$(summary_field "$R" complete)
	if [ $lv = 25 ]; then
		check "... the file recorded" sh -c "'$ST' report --list '$R' | grep -q '^W	.*/f25.txt\$'"
		check "... the trace complete (got: $c)" test "$c" = true
	else
		check "... deeper than 2 x PATH_MAX: the trace incomplete (got: $c)" test "$c" = false
		check "... its records counted lost" grep -q 'record(s) or request(s) lost' "$R"
	fi
done
done_
