#!/bin/sh
# tests/integration/untraced.sh - what a preload cannot follow is reported (static, set-id, other ELF class, Go), never silently skipped.
. "$(dirname "$0")/lib.sh"
cd "$W"
printf '#include <stdio.h>\nint main(void){puts("hi");return 0;}\n' > p.c
untraced_why() { # untraced_why REPORT NAME -> the reason recorded for the exec of NAME
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")=="access" and r.get("untraced") and r["path"].endswith("/"+sys.argv[2]): print(r["untraced"])' "$1" "$2" | head -1
}
# static
gcc -static -o st p.c 2>/dev/null && {
	out=$("$ST" run --report r1.jsonl -- sh -c './st' 2>err1)
	check "static: output unchanged" test "$out" = hi
	check "static: reported as untraced static" test "$(untraced_why r1.jsonl st)" = static
	check "static: run marked incomplete" test "$(summary_field r1.jsonl complete)" = false
	# the summary lists each untraced process once: its exec's access record (the
	# first exec of the path) is not listed beside its process record (run twice:
	# 3 lines for "2 untraced" before, the first process's twice)
	"$ST" run --report r1d.jsonl -- sh -c './st; ./st' >/dev/null 2>&1
	lines=$("$ST" report r1d.jsonl | grep -c '^  untraced: .*/st (static, pid ')
	check "static run twice: the summary lists two untraced processes, each once (got: $lines, count $(summary_field r1d.jsonl untraced))" \
		test "$lines" = 2 -a "$(summary_field r1d.jsonl untraced)" = 2
	# the same probe on the other ways in: posix_spawn, and fexecve (by descriptor)
	out=$("$ST" run --report r1s.jsonl -- python3 -c 'import os,sys
pid = os.posix_spawn("./st", ["st"], os.environ); sys.exit(os.waitpid(pid, 0)[1])')
	check "static via posix_spawn: output unchanged" test "$out" = hi
	check "static via posix_spawn: reported as untraced static" test "$(untraced_why r1s.jsonl st)" = static
	# ... and its process record is the child's (its pid, the spawner its parent,
	# its exit status), not a next image of the spawner, which goes on and exits
	printf '#include <stdio.h>\nint main(void){puts("hi");return 3;}\n' > p3.c
	gcc -static -o st3 p3.c 2>/dev/null
	# spawned PROG REPORT: posix_spawn PROG traced; prints how many untraced process
	# records, whether the first is the child's, its parent the spawner, its program st3,
	# its exit, the spawner's exit and whether the spawner's record says it exec'ed
	spawned() {
		"$ST" run --report "$2" -- python3 -c 'import os,sys
pid = os.posix_spawn(sys.argv[1], [sys.argv[1]], os.environ); print(pid, os.getpid())
sys.stdout.flush(); os.waitpid(pid, 0)' "$1" | python3 -c 'import json,sys
child, me = map(int, [l for l in sys.stdin.read().split("\n") if l[:1].isdigit()][0].split())
p = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "process"]
u = [r for r in p if r.get("traced") is False]
mine = [r for r in p if r["pid"] == me][-1]
print(len(u), u[0]["pid"] == child, u[0]["ppid"] == me, u[0]["exe"].endswith("/st3"),
      u[0]["exit"], mine["exit"], bool(mine.get("execed")))' "$2"
	}
	got=$(spawned ./st3 r1p.jsonl)
	check "static via posix_spawn: the child's untraced record, its parent, its exit; the spawner went on (got: $got)" \
		test "$got" = "1 True True True 3 0 False"
	# ... reaped by another thread of the spawner before the spawn's record of it was sent
	# (waitpid(-1) in a thread of its own): the exit came first, for a pid with no image,
	# and was dropped (exit null; 1-2 of 30 children)
	for mode in "" --no-cache; do
		"$ST" run $mode --report r1r.jsonl -- "$DRV" spawn-reap ./st3 60 > r1r.out
		got=$(python3 -c 'import json,sys
p = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "process" and r.get("traced") is False]
u = dict((r["pid"], r) for r in p)
kids = [int(l.split()[1]) for l in open(sys.argv[2]) if l.startswith("child ")]
print(len(kids), sum(1 for k in kids if k in u), sum(1 for k in kids if k in u and u[k].get("exit") == 3))' r1r.jsonl r1r.out)
		check "static via posix_spawn, reaped by another thread at once ($mode): each child's record has its exit (got: $got)" \
			test "$got" = "60 60 60"
	done
	# the same for a script whose #! interpreter is the static program
	printf '#!%s/st3\n' "$W" > sc3 && chmod +x sc3
	got=$(spawned ./sc3 r1q.jsonl)
	check "a script run by a static interpreter via posix_spawn: the child's untraced record (got: $got)" \
		test "$got" = "1 True True True 3 0 False"
	out=$("$ST" run --report r1f.jsonl -- python3 -c 'import os
os.execve(os.open("./st", os.O_RDONLY), ["st"], os.environ)')
	check "static via fexecve: output unchanged" test "$out" = hi
	check "static via fexecve: reported as untraced" test -n "$(python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("untraced") == "static"))' r1f.jsonl | grep -v '^0$')"
	# posix_spawnp's PATH search as glibc's: a directory of the same name earlier
	# in PATH is passed over (not taken for the program), the static one found
	mkdir -p pa/st pb && cp st pb/
	out=$(PATH="$W/pa:$W/pb:/usr/bin:/bin" "$ST" run --report r1p.jsonl -- python3 -c 'import os,sys
pid = os.posix_spawnp("st", ["st"], os.environ); sys.exit(os.waitpid(pid, 0)[1])')
	check "posix_spawnp past a directory in PATH: output unchanged" test "$out" = hi
	check "posix_spawnp past a directory in PATH: the program found is reported untraced" \
		test "$(untraced_why r1p.jsonl st)" = static
	check "posix_spawnp past a directory in PATH: the directory is not an exec" \
		sh -c "! \"$ST\" report --list r1p.jsonl | grep -qxF 'X	$W/pa/st'"
	# run by a symlink, twice (the second exec's verdict is a cache hit, which does not
	# resolve), by exec and by posix_spawn: recorded as a traced program is, X of what the
	# link leads to (untraced) and Q of the link, never an X record of the link's name;
	# the untraced image named as the kernel names it
	ln -sf st stlink
	printf 'allow any %s\n' "$W" > lk.policy
	printf 'allow read /usr\nallow exec /usr\nallow read /etc\nallow read /proc\nallow read /dev\nallow any /dev/null\n' >> lk.policy
	for mode in "" --no-cache "--fence --policy lk.policy"; do
		out=$("$ST" run $mode --report rl.jsonl -- sh -c './stlink; ./stlink; python3 -c "import os,sys
pid = os.posix_spawn(\"./stlink\", [\"stlink\"], os.environ); sys.exit(os.waitpid(pid, 0)[1])"' 2>/dev/null | tr '\n' ' ')
		check "static by a symlink ($mode): output unchanged (got: $out)" test "$out" = "hi hi hi "
		check "static by a symlink ($mode): X of the target, untraced" \
			test "$(untraced_why rl.jsonl st)" = static
		check "static by a symlink ($mode): Q of the link" has Q "$W/stlink" rl.jsonl
		check "static by a symlink ($mode): no X record of the link" \
			sh -c "! \"$ST\" report --list rl.jsonl | grep -qxF 'X	$W/stlink'"
		check "static by a symlink ($mode): each image's executable is the target" python3 -c '
import json, sys
exes = [r.get("exe") for r in map(json.loads, open(sys.argv[1]))
        if r.get("type") == "process" and r.get("traced") is False]
sys.exit(0 if len(exes) == 3 and set(exes) == {sys.argv[2]} else print(exes) or 1)' rl.jsonl "$W/st"
	done
}
# the dynamic loader run as a program (`ld.so PROG`, as ldd runs it) has no PT_INTERP,
# like a static program, but it reads LD_PRELOAD and PROG runs traced: it was reported
# untraced (static), the run incomplete, and PROG was recorded nowhere
ldso=$(readelf -l /bin/cat 2>/dev/null | sed -n 's/.*interpreter: \([^]]*\)]/\1/p')
if [ -n "$ldso" ]; then
	echo ld > ld-in
	out=$("$ST" run --report rl.jsonl -- sh -c "$ldso /bin/cat ld-in")
	check "loader run as a program: output unchanged (got: $out)" test "$out" = ld
	check "loader run as a program: not reported untraced" test -z "$(untraced_why rl.jsonl "${ldso##*/}")"
	check "loader run as a program: run complete" test "$(summary_field rl.jsonl complete)" = true
	check "loader run as a program: the program it loads is an exec" has X /usr/bin/cat rl.jsonl
	check "loader run as a program: the program is traced (its read recorded)" has R "$W/ld-in" rl.jsonl
	out=$("$ST" run --report rl2.jsonl -- sh -c "$ldso --library-path /nonexistent --list /bin/cat >/dev/null && echo listed")
	check "loader --list: the program it maps is a read (got: $out)" \
		test "$out" = listed -a "$(summary_field rl2.jsonl complete)" = true
	check "loader --list: the program recorded" has R /usr/bin/cat rl2.jsonl
	check "loader --list: ... not as an exec" sh -c "! '$ST' report --list rl2.jsonl | grep -qxF 'X	/usr/bin/cat'"
	out=$("$ST" run --report rl3.jsonl -- sh -c "LD_TRACE_LOADED_OBJECTS=1 $ldso /bin/cat >/dev/null && echo listed")
	check "loader with LD_TRACE_LOADED_OBJECTS (ldd): the program is a read (got: $out)" \
		sh -c "test '$out' = listed && '$ST' report --list rl3.jsonl | grep -qxF 'R	/usr/bin/cat' &&
			! '$ST' report --list rl3.jsonl | grep -qxF 'X	/usr/bin/cat'"
fi
# set-id bits and capabilities as the kernel decides AT_SECURE (root only): capabilities
# do not make an exec by root secure, and under no_new_privs the set-id bits are ignored;
# there the loader keeps LD_PRELOAD and the program runs traced, but it was reported
# untraced (setid) and the run incomplete.  Still secure: a set-uid program of another
# owner, capabilities run by another user.
if [ "$(id -u)" = 0 ]; then
	mkdir sec && chmod 755 "$W" sec && cd sec
	printf '#include <stdio.h>\n#include <sys/auxv.h>\nint main(void){FILE *f = fopen("sec-in", "r");\nprintf("secure=%%lu %%s\\n", getauxval(AT_SECURE), f ? "read" : "none"); return 0;}\n' > sec.c
	echo x > sec-in && chmod 644 sec-in
	gcc -o sec-nobody sec.c && chown 65534 sec-nobody && chmod 4755 sec-nobody
	out=$("$ST" run --report rs1.jsonl -- setpriv --no-new-privs ./sec-nobody)
	check "set-uid under no_new_privs: not secure (got: $out)" test "$out" = "secure=0 read"
	check "set-uid under no_new_privs: not reported untraced" test -z "$(untraced_why rs1.jsonl sec-nobody)"
	check "set-uid under no_new_privs: traced (its read recorded)" has R "$W/sec/sec-in" rs1.jsonl
	out=$("$ST" run --report rs2.jsonl -- sh -c ./sec-nobody)
	check "set-uid of another owner: secure, reported untraced (got: $out)" \
		test "$out" = "secure=1 read" -a "$(untraced_why rs2.jsonl sec-nobody)" = setid
	# a spawn with POSIX_SPAWN_RESETIDS from a process whose effective uid is not its real
	# one: the child resets it before its exec, which is then not secure
	cat > rid.c <<'C'
#include <spawn.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>
extern char **environ;
int main(void)
{
	posix_spawnattr_t at;
	char *av[] = {"./sec-plain", NULL};
	pid_t p;
	int st = 0;
	if (setresuid(0, 65534, 0) || posix_spawnattr_init(&at) ||
	    posix_spawnattr_setflags(&at, POSIX_SPAWN_RESETIDS) ||
	    posix_spawn(&p, av[0], NULL, &at, av, environ) || waitpid(p, &st, 0) != p)
		return 1;
	return st;
}
C
	gcc -o rid rid.c && gcc -o sec-plain sec.c
	out=$("$ST" run --report rs5.jsonl -- ./rid)
	check "spawn with POSIX_SPAWN_RESETIDS: not secure (got: $out)" test "$out" = "secure=0 read"
	check "spawn with POSIX_SPAWN_RESETIDS: not reported untraced" test -z "$(untraced_why rs5.jsonl sec-plain)"
	# a spawn of a relative name from a directory whose ancestors the process may not
	# search: the kernel looks the name up from the cwd, but the probe opened the
	# absolute path (EACCES) and took the program as one the preload follows: a static
	# one ran unreported (execve's probe takes the spelling already)
	mkdir -p "$W/priv/pub" && chmod 700 "$W/priv" && chmod 755 "$W/priv/pub"
	cat > spn.c <<'C'
#define _GNU_SOURCE
#include <spawn.h>
#include <unistd.h>
#include <sys/wait.h>
extern char **environ;
int main(void)
{
	char *av[] = {"./st", NULL};
	pid_t p;
	int st = 0;
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534) ||
	    posix_spawn(&p, av[0], NULL, NULL, av, environ) || waitpid(p, &st, 0) != p)
		return 1;
	return st;
}
C
	if gcc -o spn spn.c && gcc -static -o "$W/priv/pub/st" ../p.c 2>/dev/null; then
		out=$(cd "$W/priv/pub" && "$ST" run --report "$W/rs6.jsonl" -- "$W/sec/spn")
		check "spawn of a static program below an unsearchable directory: output unchanged (got: $out)" test "$out" = hi
		check "... reported as untraced static" test "$(untraced_why "$W/rs6.jsonl" st)" = static
	fi
	if command -v setcap >/dev/null && gcc -o sec-cap sec.c && setcap cap_net_raw+ep sec-cap 2>/dev/null; then
		out=$("$ST" run --report rs3.jsonl -- sh -c ./sec-cap)
		check "capabilities run by root: not secure (got: $out)" test "$out" = "secure=0 read"
		check "capabilities run by root: not reported untraced" test -z "$(untraced_why rs3.jsonl sec-cap)"
		check "capabilities run by root: run complete" test "$(summary_field rs3.jsonl complete)" = true
		"$ST" run --report rs4.jsonl -- setpriv --reuid=65534 --regid=65534 --clear-groups ./sec-cap >/dev/null
		check "capabilities run by another user: reported untraced" test "$(untraced_why rs4.jsonl sec-cap)" = setid
	fi
	cd "$W"
fi
# a program the kernel refuses (a truncated ELF: ENOEXEC) is not a static
# program that ran: no untraced record, the run stays complete
head -c 100 /bin/true > trunc && chmod +x trunc
"$ST" run --report rtr.jsonl -- sh -c './trunc 2>/dev/null; exit 0'
check "truncated ELF: not reported untraced" test -z "$(untraced_why rtr.jsonl trunc)"
check "truncated ELF: run complete" test "$(summary_field rtr.jsonl complete)" = true
# posix_spawn of a path that is not there: a failed lookup, as for execve
"$ST" run --report rsm.jsonl -- python3 -c 'import os
try: os.posix_spawn(os.getcwd() + "/not-here", ["x"], os.environ)
except FileNotFoundError: pass'
check "posix_spawn of a missing program: a failed lookup" has N "$W/not-here" rsm.jsonl
# exec attempts of paths that are not there fail as the kernel fails them, with
# or without the shim (which answers a plain exec of a missing path from its
# own look at the file): the same errno for each way of failing, and each PATH
# candidate recorded as a failed lookup
cat > ex.c <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void try(const char *what, int r) { printf("%s %d %s\n", what, r, r < 0 ? strerrorname_np(errno) : "-"); }
int main(int argc, char **argv)
{
	char *av[] = {"x", NULL};
	if (argc > 1) { puts("ran"); return 0; }
	try("missing", execv("./no-such-prog", av));
	try("notdir", execv("./afile/prog", av));
	try("trailing-slash", execv("./afile/", av));
	try("empty", execv("", av));
	try("dangling", execv("./dangling", av));
	try("dangling-nofollow", execveat(AT_FDCWD, "./dangling", av, NULL, AT_SYMLINK_NOFOLLOW));
	try("missing-at-dirfd", execveat(open(".", O_PATH), "no-such-prog", av, NULL, 0));
	try("execvp-missing", execvp("no-such-prog-sandtrace", av));
	fflush(stdout);
	char *run[] = {"exprog", "run", NULL};
	execvp("exprog", run); /* found in the last PATH entry */
	try("execvp-found", -1);
	return 1;
}
C
gcc -o ex ex.c && mkdir -p pbin && cp ex pbin/exprog && : > afile && ln -sf "$W/nowhere" dangling
PATH="$W/pnone:$W/afile:$W/pbin:$PATH" ./ex > ex-u.out
PATH="$W/pnone:$W/afile:$W/pbin:$PATH" "$ST" run --report rex.jsonl -- ./ex > ex-t.out
check "failed execs: the same errno as untraced (ENOENT, ENOTDIR, ELOOP), the search goes on" \
	cmp -s ex-u.out ex-t.out
check "failed execs: the untraced run's errnos are the ones this test means" \
	grep -qxF 'dangling-nofollow -1 ELOOP' ex-u.out
check "failed execs: the program found last in PATH ran" test "$(tail -1 ex-t.out)" = ran
check "execvp: a PATH candidate that is not there is a failed lookup" has N "$W/pnone/exprog" rex.jsonl
check "execvp: a PATH candidate under a file is a failed lookup" has N "$W/afile/exprog" rex.jsonl
check "execvp: the candidate found is the exec" has X "$W/pbin/exprog" rex.jsonl
check "execv of a missing program: a failed lookup" has N "$W/no-such-prog" rex.jsonl
# a set*uid that leaves the process a user over RLIMIT_NPROC fails its next
# exec with EAGAIN before the kernel looks the path up: a missing program
# then says EAGAIN, not ENOENT (root: the switch of user)
if [ "$(id -u)" = 0 ]; then
	cat > np.c <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
int main(void)
{
	char *av[] = {"x", NULL}, c;
	int p[2];
	struct rlimit none = {0, 0};
	if (pipe(p))
		return 2;
	pid_t other = fork(); /* a process of the user's: its count is then over 0 */
	if (other == 0) {
		if (setresuid(65534, 65534, 65534) == 0)
			(void)!write(p[1], "u", 1);
		pause();
		_exit(0);
	}
	if (read(p[0], &c, 1) != 1 || setrlimit(RLIMIT_NPROC, &none) ||
	    setresuid(65534, 65534, 65534))
		return 2;
	int r = execv("/nonexistent-sandtrace/prog", av); /* under /: the new user can search it (not the work directory) */
	printf("%d %s\n", r, strerrorname_np(errno));
	setenv("PATH", "/nonexistent-sandtrace:/nonexistent-sandtrace/b", 1);
	r = execvp("prog", av); /* a PATH search: its candidates share one look at the uid */
	printf("search %d %s\n", r, strerrorname_np(errno));
	kill(other, SIGKILL);
	return 0;
}
C
	gcc -o np np.c && ./np > np-u.out && "$ST" run --report rnp.jsonl -- ./np > np-t.out
	check "exec over RLIMIT_NPROC after a setuid: the untraced run's errno is EAGAIN" \
		grep -qxF -- '-1 EAGAIN' np-u.out
	check "exec over RLIMIT_NPROC after a setuid: a PATH search's errno is EAGAIN untraced" \
		grep -qxF -- 'search -1 EAGAIN' np-u.out
	check "exec over RLIMIT_NPROC after a setuid: the same errno traced" cmp -s np-u.out np-t.out
else
	echo "skip - exec over RLIMIT_NPROC after a setuid: needs root"
fi
# a #! script whose interpreter is missing: the interpreter is the failed
# lookup, the script (which is there) is not
printf '#!/nonexistent-sandtrace/interp\n' > mi && chmod +x mi
"$ST" run --report rmi.jsonl -- sh -c './mi 2>/dev/null; exit 0'
check "missing #! interpreter: a failed lookup" has N /nonexistent-sandtrace/interp rmi.jsonl
check "missing #! interpreter: not an exec" sh -c "! \"$ST\" report --list rmi.jsonl | grep -qxF 'X	/nonexistent-sandtrace/interp'"
check "missing #! interpreter: the script is not missing" sh -c "! \"$ST\" report --list rmi.jsonl | grep -qxF 'N	$W/mi'"
# an exec of a FIFO fails (EACCES) as without the shim, and the shim's look
# at the file before the exec never waits for a writer
mkfifo ff && chmod +x ff
timeout 20 "$ST" run -- sh -c './ff' 2>/dev/null; rc=$?
check "exec of a FIFO: refused by the kernel (126), not hung (124), got $rc" test "$rc" -eq 126
# another ELF class: the loader would refuse the 64-bit preload (and say so on stderr)
if gcc -m32 -o p32 p.c 2>/dev/null && ./p32 >/dev/null 2>&1; then
	out=$("$ST" run --report r2.jsonl -- sh -c './p32' 2>err2)
	check "32-bit: output unchanged" test "$out" = hi
	check "32-bit: no loader message on stderr" test ! -s err2
	check "32-bit: reported as untraced elfclass" test "$(untraced_why r2.jsonl p32)" = elfclass
else
	echo "skip - 32-bit programs do not run here (no gcc-multilib, or no IA32 support in the kernel)"
fi
# a Go program (its build-id note), dynamically linked: the runtime bypasses libc
cat > go.c <<'C'
#include <stdio.h>
__asm__(".section .note.go.buildid,\"a\",@note\n.balign 4\n.long 3\n.long 8\n.long 4\n"
        ".asciz \"Go\"\n.balign 4\n.ascii \"buildid!\"\n.previous\n");
int main(void){puts("hi");return 0;}
C
gcc -o gop go.c
out=$("$ST" run --report r3.jsonl -- sh -c './gop')
check "go: output unchanged" test "$out" = hi
check "go: reported as untraced go" test "$(untraced_why r3.jsonl gop)" = go
# a plain dynamic program is traced
gcc -o dyn p.c
"$ST" run --report r4.jsonl -- sh -c './dyn' >/dev/null
check "dynamic: not untraced" test -z "$(untraced_why r4.jsonl dyn)"
check "dynamic: complete" test "$(summary_field r4.jsonl complete)" = true
done_
