#!/bin/sh
# tests/integration/execfail.sh - an exec the kernel refuses (EACCES, ENOEXEC, E2BIG, ETXTBSY) is not reported as a program that ran.
. "$(dirname "$0")/lib.sh"
cd "$W"
# xf MODE PROG [big]: one call of the exec family on PROG (argv[1] of 200000 bytes
# with "big": E2BIG); prints the error's name when the call returns.  Mode
# "retry": execve with the big argv, then without it (the second runs PROG).
cat > xf.c <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
int main(int argc, char **argv)
{
	const char *m = argv[1], *p = argv[2];
	char *av[3] = {(char *)p, NULL, NULL};
	if (argc > 3 || !strcmp(m, "retry")) {
		size_t n = 200000;
		av[1] = malloc(n + 1);
		memset(av[1], 'a', n);
		av[1][n] = 0;
	}
	int r = 0, spawn = 0;
	pid_t pid;
	fflush(stdout);
	if (!strcmp(m, "execve")) r = execve(p, av, environ);
	else if (!strcmp(m, "execv")) r = execv(p, av);
	else if (!strcmp(m, "execvp")) r = execvp(p, av);
	else if (!strcmp(m, "execvpe")) r = execvpe(p, av, environ);
	else if (!strcmp(m, "execl")) r = execl(p, p, av[1], (char *)NULL);
	else if (!strcmp(m, "execlp")) r = execlp(p, p, av[1], (char *)NULL);
	else if (!strcmp(m, "execle")) r = execle(p, p, av[1], (char *)NULL, environ);
	else if (!strcmp(m, "fexecve")) {
		int fd = open(p, O_RDONLY | O_CLOEXEC);
		r = fexecve(fd, av, environ);
	} else if (!strcmp(m, "execveat")) r = execveat(AT_FDCWD, p, av, environ, 0);
	else if (!strcmp(m, "sys_execve")) r = (int)syscall(SYS_execve, p, av, environ);
	else if (!strcmp(m, "sys_execveat")) r = (int)syscall(SYS_execveat, AT_FDCWD, p, av, environ, 0);
	else if (!strcmp(m, "spawn") || !strcmp(m, "spawnp")) {
		spawn = 1;
		r = (m[5] ? posix_spawnp : posix_spawn)(&pid, p, NULL, NULL, av, environ);
		if (r == 0) {
			int st;
			waitpid(pid, &st, 0);
			printf("spawned %d\n", WEXITSTATUS(st));
			return 0;
		}
	} else if (!strcmp(m, "retry")) {
		execve(p, av, environ);
		printf("%s ", strerrorname_np(errno));
		fflush(stdout);
		av[1] = NULL;
		r = execve(p, av, environ);
	}
	printf("%s\n", strerrorname_np(spawn ? r : errno));
	return 0;
}
C
gcc -o xf xf.c || { bad "xf.c does not build"; done_; exit 1; }
printf '#include <stdio.h>\nint main(void){puts("ran");return 0;}\n' > p.c
gcc -o ok p.c
cp ok noexec && chmod 644 noexec              # EACCES
head -c 300 /dev/urandom | tr -d '#' > garbage && printf 'echo sh-ran\n' >> garbage
printf 'zz\000\001\002' > junk && chmod 755 garbage junk   # ENOEXEC (no #!, not ELF)
cp ok busy                                    # ETXTBSY, open for writing below
static=; gcc -static -o st p.c 2>/dev/null && cp st stnoexec && chmod 644 stnoexec && static=1
# #! scripts whose interpreters fail the exec: missing (ENOENT), itself a script whose
# interpreter is missing, not executable (EACCES), a script whose interpreter is not
# executable, a chain of seven (the kernel opens six interpreters, then fails with ELOOP);
# one whose interpreter is a script that runs (/bin/sh at the end of the chain); one whose
# interpreter is a static program
printf '#!%s/nothere\n' "$W" > smiss
printf '#!%s/smiss\n' "$W" > snest
printf '#!/bin/sh\necho sh-ran\n' > noexsh
printf '#!%s/noexsh\n' "$W" > snoex
printf '#!%s/snoex\n' "$W" > snestnoex
printf '#!/bin/sh\necho ran\n' > d0
for i in 1 2 3 4 5 6; do printf '#!%s/d%d\n' "$W" $((i-1)) > d$i; done
printf '#!%s/d0\n' "$W" > snestok
printf '#!%s/st\n' "$W" > sstatic
chmod 755 smiss snest snoex snestnoex d0 d1 d2 d3 d4 d5 d6 snestok sstatic

# What each report says is checked at the end, by one python3 for all of them (its start
# alone takes a second on a busy VM).  expect REPORT NAME ERR [UNTRACED]: the X record of
# $W/NAME has err ERR ("none": no X record); with UNTRACED "none", no untraced program is
# claimed (an access record, a process record, the summary's count) and the run is
# complete; with "some", one is, and the X record says so.  ERR "N": an N record of NAME.
: > expect.txt
expect() {
	case $2 in /*) p=$2 ;; *) p=$W/$2 ;; esac
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$p" "$3" "${4:-}" "$5" >> expect.txt
}
shx=$(readlink -f /bin/sh)
printf 'allow any %s\n' "$W" > fence.policy
system_rules >> fence.policy
export PATH="$W:$PATH"
n=0
for mode in "" --no-cache "--fence --policy fence.policy"; do
	tag=${mode:-cache}
	for f in execve execv execvp execvpe execl execlp execle fexecve execveat sys_execve sys_execveat spawn; do
		n=$((n+1))
		# the p-variants search PATH for the bare name
		case $f in execvp|execvpe|execlp) prog=noexec ;; *) prog=./noexec ;; esac
		out=$("$ST" run $mode --report r$n.jsonl -- ./xf $f $prog 2>/dev/null)
		check "$tag $f EACCES: the call fails (got: $out)" test "$out" = EACCES
		expect r$n.jsonl noexec 13 "" "$tag $f EACCES: the X record carries the error"
		n=$((n+1))
		case $f in fexecve) ;; *)
			out=$("$ST" run $mode --report r$n.jsonl -- ./xf $f ./junk 2>/dev/null)
			case $f in
			execvp|execvpe|execlp)
				# the p-family runs a file the kernel refused with ENOEXEC with /bin/sh: the
				# shell ran, the file did not
				expect r$n.jsonl junk 8 "" "$tag $f ENOEXEC: the X record carries the error"
				check "$tag $f ENOEXEC: the shell ran it (got: $out)" test "$out" = ""
				expect r$n.jsonl "$shx" 0 "" "$tag $f ENOEXEC: the shell's exec is one that ran" ;;
			*)
				check "$tag $f ENOEXEC: the call fails (got: $out)" test "$out" = ENOEXEC
				expect r$n.jsonl junk 8 "" "$tag $f ENOEXEC: the X record carries the error" ;;
			esac ;;
		esac
		n=$((n+1))
		out=$("$ST" run $mode --report r$n.jsonl -- ./xf $f ./ok big 2>/dev/null)
		check "$tag $f E2BIG: the call fails (got: $out)" test "$out" = E2BIG
		expect r$n.jsonl ok 7 "" "$tag $f E2BIG: the X record carries the error"
		[ -n "$static" ] && {
			n=$((n+1))
			out=$("$ST" run $mode --report r$n.jsonl -- ./xf $f ./stnoexec 2>/dev/null)
			check "$tag $f static EACCES: the call fails (got: $out)" test "$out" = EACCES
			expect r$n.jsonl stnoexec 13 none "$tag $f static EACCES: the X record carries the error, no untraced program claimed, the run complete"
		}
	done
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- sh -c 'exec 3>>busy; ./xf execve ./busy' 2>/dev/null)
	check "$tag ETXTBSY: the call fails (got: $out)" test "$out" = ETXTBSY
	expect r$n.jsonl busy 26 "" "$tag ETXTBSY: the X record carries the error"
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./garbage 2>/dev/null)
	check "$tag garbage ENOEXEC: the call fails (got: $out)" test "$out" = ENOEXEC
	expect r$n.jsonl garbage 8 "" "$tag garbage ENOEXEC: the X record carries the error"
	# a failed exec retried in the same process that runs: the program ran
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf retry ./ok 2>/dev/null)
	check "$tag E2BIG then run: the program ran (got: $out)" test "$out" = "E2BIG ran"
	expect r$n.jsonl ok 0 "" "$tag E2BIG then run: the X record has no error"
	# one process's exec of a program fails (not executable), another's runs it after a
	# chmod: the second is not recorded again (the cache's first record stands), but its
	# program's HELLO says it ran
	n=$((n+1))
	rm -f later; cp /bin/true later; chmod 644 later
	out=$("$ST" run $mode --report r$n.jsonl -- sh -c './xf execve ./later; chmod 755 later; ./xf execve ./later; echo ran' 2>/dev/null | tr '\n' ' ')
	check "$tag another process runs what one failed to: the calls (got: $out)" test "$out" = "EACCES ran "
	expect r$n.jsonl later 0 "" "$tag another process runs what one failed to: the X record has no error"
	# the same with a static program, run by its name or by a symlink: its untraced record is
	# the X record of what the link leads to (as a traced program's), so the second exec is
	# counted as a run of the record the first one amended, and the link is a query, never
	# an exec; and a static program put where an exec failed (ENOEXEC) by a program the
	# preload follows: the record says the program that ran was untraced
	[ -n "$static" ] && for via in slater slink replaced; do
		n=$((n+1))
		rm -f slater slink; cp st slater; chmod 644 slater; ln -s slater slink
		fix="chmod 755 slater" want=EACCES
		[ $via = replaced ] && { cp junk slater; chmod 755 slater; via=slater fix="cp st slater" want=ENOEXEC; }
		out=$("$ST" run $mode --report r$n.jsonl -- sh -c "./xf execve ./$via; $fix; ./xf execve ./$via" 2>/dev/null | tr '\n' ' ')
		check "$tag another process runs the static program one failed to ($via, $want): the calls (got: $out)" test "$out" = "$want ran "
		expect r$n.jsonl slater 0 some "$tag another process runs the static program one failed to ($via, $want): the X record has no error, untraced"
		expect r$n.jsonl slink none "" "$tag another process runs the static program one failed to ($via, $want): no X record of the link"
	done
	# #! interpreters: each one the kernel opened is an X record amended with the exec's
	# error, a missing one an N record (also when an interpreter's interpreter is missing)
	for f in execve execvp spawn; do
		n=$((n+1))
		out=$("$ST" run $mode --report r$n.jsonl -- ./xf $f snest 2>/dev/null)
		check "$tag $f nested #! interpreter missing: the call fails (got: $out)" test "$out" = ENOENT
		expect r$n.jsonl snest 2 "" "$tag $f nested #! interpreter missing: the script's X record carries the error"
		expect r$n.jsonl smiss 2 "" "$tag $f nested #! interpreter missing: the interpreter's X record carries the error"
		expect r$n.jsonl nothere N "" "$tag $f nested #! interpreter missing: the missing one is an N record"
	done
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./smiss 2>/dev/null)
	check "$tag #! interpreter missing: the call fails (got: $out)" test "$out" = ENOENT
	expect r$n.jsonl smiss 2 "" "$tag #! interpreter missing: the script's X record carries the error"
	expect r$n.jsonl nothere N "" "$tag #! interpreter missing: the missing one is an N record"
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./snoex 2>/dev/null)
	check "$tag #! interpreter not executable: the call fails (got: $out)" test "$out" = EACCES
	expect r$n.jsonl snoex 13 "" "$tag #! interpreter not executable: the script's X record carries the error"
	expect r$n.jsonl noexsh 13 "" "$tag #! interpreter not executable: the interpreter's X record carries the error"
	expect r$n.jsonl "$shx" none "" "$tag #! interpreter not executable: its own interpreter was not run"
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./snestnoex 2>/dev/null)
	check "$tag nested #! interpreter not executable: the call fails (got: $out)" test "$out" = EACCES
	expect r$n.jsonl snestnoex 13 "" "$tag nested #! interpreter not executable: the script's X record carries the error"
	expect r$n.jsonl snoex 13 "" "$tag nested #! interpreter not executable: the first interpreter's X record carries the error"
	expect r$n.jsonl noexsh 13 "" "$tag nested #! interpreter not executable: the second's too"
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./d6 2>/dev/null)
	check "$tag seven #! scripts: the call fails (got: $out)" test "$out" = ELOOP
	expect r$n.jsonl d6 40 "" "$tag seven #! scripts: the script's X record carries the error"
	expect r$n.jsonl d0 40 "" "$tag seven #! scripts: the sixth interpreter's too"
	expect r$n.jsonl "$shx" none "" "$tag seven #! scripts: the seventh was not run"
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./snestok 2>/dev/null)
	check "$tag nested #! interpreters that run (got: $out)" test "$out" = ran
	expect r$n.jsonl d0 0 "" "$tag nested #! interpreters that run: the script interpreter ran"
	expect r$n.jsonl "$shx" 0 "" "$tag nested #! interpreters that run: so did its interpreter"
	[ -n "$static" ] && {
		n=$((n+1))
		out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./sstatic 2>/dev/null)
		check "$tag #! interpreter static (got: $out)" test "$out" = ran
		expect r$n.jsonl st 0 some "$tag #! interpreter static: its X record has no error, untraced"
		n=$((n+1))
		out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./sstatic big 2>/dev/null)
		check "$tag #! interpreter static, E2BIG: the call fails (got: $out)" test "$out" = E2BIG
		expect r$n.jsonl st 7 none "$tag #! interpreter static, E2BIG: its X record carries the error, no untraced program claimed, the run complete"
	}
	# an exec that runs is still one (and a static one still untraced)
	n=$((n+1))
	out=$("$ST" run $mode --report r$n.jsonl -- ./xf execve ./ok 2>/dev/null)
	check "$tag a program that runs (got: $out)" test "$out" = ran
	expect r$n.jsonl ok 0 "" "$tag a program that runs: an X record without error"
	[ -n "$static" ] && {
		n=$((n+1))
		out=$("$ST" run $mode --report r$n.jsonl -- ./xf spawn ./st 2>/dev/null)
		check "$tag a static program spawned (got: $out)" test "$out" = "ran
spawned 0"
		expect r$n.jsonl st 0 some "$tag a static program that runs: an X record without error, still untraced"
	}
done
python3 - expect.txt > results.txt <<'PY'
import json, sys
for line in open(sys.argv[1]):
    rep, path, err, untr, desc = line.rstrip("\n").split("\t")
    e, n, complete, xu, nrec = "none", 0, None, False, False
    for l in open(rep):
        r = json.loads(l)
        t = r.get("type")
        if t == "access" and r["kind"] == "X" and r["path"] == path:
            e = str(r["err"])
            xu = bool(r.get("untraced"))
        if t == "access" and r["kind"] == "N" and r["path"] == path:
            nrec = True
        if t == "access" and r.get("untraced"):
            n += 1
        if t == "process" and r.get("traced") is False:
            n += 1
        if t == "summary":
            n += r.get("untraced", 0)
            complete = r.get("complete")
    good = nrec if err == "N" else e == err
    if untr == "none":
        good = good and n == 0 and complete is True
    elif untr == "some":
        good = good and n > 0 and xu
    print("%s\t%s (got: err %s, %d untraced, complete %s)" % ("ok" if good else "FAIL", desc, e, n, complete))
PY
while IFS='	' read -r res desc; do
	if [ "$res" = ok ]; then ok "$desc"; else bad "$desc"; fi
done < results.txt
[ -s results.txt ] || bad "the reports were not checked"
done_
