#!/bin/sh
# tests/integration/transparency.sh - a traced program's stdout, stderr and exit status are those of an untraced run.
. "$(dirname "$0")/lib.sh"
cd "$W"
# the shim's own descriptors sit at 10 and above (B24): list the low ones
prog='echo out; echo err >&2; ls /proc/self/fd | awk "\$1 < 10"; exit 7'
sh -c "$prog" > u.out 2> u.err; urc=$?
"$ST" run -- sh -c "$prog" > t.out 2> t.err; trc=$?
check "stdout byte-identical" cmp -s u.out t.out
check "stderr byte-identical" cmp -s u.err t.err
check "exit status kept" test "$urc" = "$trc"
# a vfork parent reads errno as its child's exec left it (the child shares its memory): a
# successful exec leaves the program's errno, not what the exec wrapper's own probes set
# (ENODATA from the look for file capabilities)
PATH="$W/nobin:/usr/bin:/bin" "$DRV" vfork-errno /bin/true > u.ve 2>&1
PATH="$W/nobin:/usr/bin:/bin" "$ST" run -- "$DRV" vfork-errno /bin/true > t.ve 2>&1
check "errno after a vfork child's exec as untraced ($(tr '\n' ' ' < t.ve)vs $(tr '\n' ' ' < u.ve))" cmp -s u.ve t.ve
# the shim's socket (every process of a --no-cache run holds one) under a small
# RLIMIT_NOFILE: it stayed at the lowest free number, 3, where no number >= 10 could
# be had; the program's opens got 4 5 6 and EMFILE one early (with `ulimit -n 5`, at
# its second file).  A soft limit is now left for the socket alone (the numbers and
# the EMFILE as untraced); under a hard one it takes the highest free number (the
# program's numbers as untraced, one fewer of them)
for lim in "-S -n 5" "-S -n 8" "-n 8"; do
	sh -c "ulimit $lim; \"\$0\" open-fds /etc/hostname" "$DRV" > u.fds 2>&1
	check "ulimit $lim: untraced, the opens end in EMFILE ($(cat u.fds))" grep -q ' EMFILE$' u.fds
	for mode in --no-cache ""; do
		"$ST" run $mode -- sh -c "ulimit $lim; \"\$0\" open-fds /etc/hostname" "$DRV" > t.fds 2>&1
		case $lim in
		-n*) check "ulimit $lim ${mode:-(arena)}: the program's first numbers as untraced ($(cat t.fds) vs $(cat u.fds))" \
			test "$(cut -d' ' -f1-3 t.fds)" = "$(cut -d' ' -f1-3 u.fds)" ;;
		*) check "ulimit $lim ${mode:-(arena)}: the program's numbers and EMFILE as untraced ($(cat t.fds) vs $(cat u.fds))" \
			cmp -s u.fds t.fds ;;
		esac
	done
done
"$ST" run -- sh -c 'kill -TERM $$'; rc=$?
check "signal death is 128+N" test $rc -eq 143
# ... and to a parent that is not a shell the run dies of the command's signal, as the
# command did untraced: Python's returncode said 143, not -15, make "Error 143", not
# "Terminated"; no core file of the CLI's own
for sig in TERM INT SEGV USR1; do
	u=$(python3 -c 'import subprocess, sys; print(subprocess.call(sys.argv[1:]))' sh -c "kill -$sig \$\$" 2>&1)
	t=$(cd "$W" && python3 -c 'import subprocess, sys; print(subprocess.call(sys.argv[1:]))' "$ST" run -- sh -c "kill -$sig \$\$" 2>&1)
	check "SIG$sig: the run's wait status is the command's ($t, untraced $u)" test "$t" = "$u"
done
check "no core file of the CLI's" test ! -e "$W/core"
# signals sent to sandtrace reach the command as if sent to it (SIGUSR1 used
# to kill the CLI and leave the command running untraced)
# (and every other signal that can be caught, job control aside: SIGPWR, SIGXCPU,
# SIGVTALRM, SIGIO, SIGTRAP, SIGPIPE, SIGURG, the real-time ones killed the CLI at once,
# 128+N, and left the command running without its daemon)
for sig in USR1 USR2 ALRM PWR XCPU VTALRM PROF IO SYS TRAP PIPE URG RTMIN RTMIN+1 RTMAX; do
	rm -f "$W/rdy"
	# (until $W/stop or 10 s: a command the signal missed does not outlive the test, nor
	# hold it: a CLI that ignored the signal, SIGPIPE, SIGURG, waited for it)
	"$ST" run -- sh -c "trap 'exit 7' $sig; touch '$W/rdy'; i=0; while [ ! -e '$W/stop' ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done" &
	cli=$!
	i=0; while [ ! -e "$W/rdy" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
	kill -$sig $cli; wait $cli; rc=$?
	check "SIG$sig sent to sandtrace reaches the command (its trap's exit 7, got $rc)" test $rc -eq 7
done
# job control: a command that stops stops the run (its parent sees the stop it sees
# untraced) and a SIGCONT to sandtrace continues it; a SIGTSTP sent to sandtrace is the
# command's. sandtrace ran on while its command was stopped, and a SIGTSTP stopped
# sandtrace alone: the command ran on (its trap never ran)
"$ST" run -- sh -c 'kill -STOP $$; echo resumed' > "$W/jc1" &
cli=$!
i=0; while [ "$(awk '{print $3}' /proc/$cli/stat 2>/dev/null)" != T ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
st=$(awk '{print $3}' /proc/$cli/stat 2>/dev/null)
kill -CONT $cli
for k in $(ps -o pid= --ppid $cli); do kill -CONT $k; done # (a command left stopped: go on)
wait $cli; rc=$?
check "a command that stops itself stops sandtrace (state $st), a SIGCONT to sandtrace continues it (rc $rc, $(cat "$W/jc1"))" \
	sh -c "test '$st' = T && test $rc -eq 0 && test \"\$(cat '$W/jc1')\" = resumed"
rm -f "$W/rdy"
"$ST" run -- sh -c "trap 'exit 7' TSTP; touch '$W/rdy'; i=0; while [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done" &
cli=$!
i=0; while [ ! -e "$W/rdy" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
kill -TSTP $cli; sleep 0.5; kill -CONT $cli; wait $cli; rc=$?
check "SIGTSTP sent to sandtrace reaches the command (its trap's exit 7, got $rc)" test $rc -eq 7
# a command that does not catch it dies of it, as untraced: 128+N
for sig in PWR RTMIN+1; do
	rm -f "$W/rdy"
	"$ST" run -- sh -c "touch '$W/rdy'; i=0; while [ ! -e '$W/stop' ] && [ \$i -lt 200 ]; do sleep 0.05; i=\$((i+1)); done" &
	cli=$!
	i=0; while [ ! -e "$W/rdy" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
	sh -c "sleep 5 & kill -$sig \$!; wait \$!" 2>/dev/null; want=$?
	kill -$sig $cli; wait $cli; rc=$?
	check "SIG$sig sent to sandtrace kills the command, which is what the run says ($rc, untraced $want)" test $rc -eq $want
done
touch "$W/stop"
"$ST" run -- /nonexistent/prog 2>/dev/null; rc=$?
check "missing command is 127" test $rc -eq 127
# output files that cannot be written are refused before the command runs
"$ST" run --report /proc/version -- touch "$W/ran1" 2>/dev/null; rc=$?
check "--report into /proc refused (125), command not run" sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran1 ]"
"$ST" run --summary="$W/no/such/dir/s" -- touch "$W/ran2" 2>/dev/null; rc=$?
check "--summary into a missing directory refused (125)" sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran2 ]"
# a FIFO (no reader): refused at once, not waited on (the run hung before the command)
mkfifo "$W/out.fifo"
for o in --report --pidfile; do
	rm -f "$W/ran5"
	timeout 10 "$ST" run $o "$W/out.fifo" -- touch "$W/ran5" 2>/dev/null; rc=$?
	check "$o FIFO refused (125, got $rc), command not run" \
		sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran5 ]"
done
timeout 10 "$ST" run --summary="$W/out.fifo" -- touch "$W/ran5" 2>/dev/null; rc=$?
check "--summary=FIFO refused (125, got $rc)" test $rc -eq 125
# an output the daemon writes by name is this CLI's file: /dev/stdout into a
# file is refused (the command's output would be mixed in; the daemon's own
# /dev/stdout is /dev/null, where the report once vanished), /dev/fd/N is
# the file behind the CLI's descriptor N
"$ST" run --report /dev/stdout -- touch "$W/ran3" > "$W/o3" 2>/dev/null; rc=$?
check "--report /dev/stdout into a file refused (125), command not run" \
	sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran3 ]"
"$ST" run --manifest /dev/stdout -- touch "$W/ran4" > "$W/o4" 2>/dev/null; rc=$?
check "--manifest /dev/stdout into a file refused (125), command not run" \
	sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran4 ]"
"$ST" run --report /dev/fd/5 -- cat "$W/o3" 5> "$W/fd5.jsonl"
check "--report /dev/fd/5: the report is in the CLI's descriptor 5's file" has R "$W/o3" "$W/fd5.jsonl"
# a bad option value is said once, by the program that refuses it, without the usage:
# --hash-threads's came without "sandtrace:" and was followed by the whole usage text;
# a daemon's start refused before its log was open (--log a directory) said it twice
"$ST" run --hash-threads -5 -- touch "$W/ran6" 2> "$W/ht.err"; rc=$?
check "--hash-threads -5: 125, one line naming sandtrace ($(head -c 200 "$W/ht.err" | tr '\n' '|'))" \
	sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran6 ] && [ \$(wc -l < '$W/ht.err') -eq 1 ] && grep -q '^sandtrace: --hash-threads -5: expected 0' '$W/ht.err'"
"$ST" run --log "$W" -- touch "$W/ran6" 2> "$W/lg.err"; rc=$?
check "--log DIR: 125, the daemon's refusal said once ($(tr '\n' '|' < "$W/lg.err"))" \
	sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran6 ] && [ \$(grep -c 'log $W: Is a directory' '$W/lg.err') -eq 1 ]"
# the command's arguments reach the daemon by a file, not its command line
# (there, a command near the system's argument limit made the daemon's exec
# fail with E2BIG: exit 125 for a command that runs untraced); the run
# record still holds them byte for byte
"$ST" run --pidfile "$W/pa" --report "$W/argv.jsonl" -- \
	sh -c 'tr "\0" "\n" < /proc/$(cat "$1")/cmdline' sh "$W/pa" "$(printf 'uniq-arg\n\377')" > "$W/dcmd"
check "the daemon's command line does not carry the command's arguments" \
	sh -c "! grep -q uniq-arg '$W/dcmd'"
check "the run record holds the arguments byte for byte" python3 -c '
import json, sys
r = json.loads(open(sys.argv[1]).readline())
sys.exit(0 if r["type"] == "run" and r["argv"][-1] == "uniq-arg\\x0a\\xff" and r["argv"][0] == "sh" else "argv: %r" % r["argv"])' "$W/argv.jsonl"
# two outputs (or an output and an input) that are one file are refused before
# the command runs: --summary or --pidfile truncated the report, --log wrote
# its lines into it, --summary overwrote the policy
echo 'allow any /' > "$W/pp"
for pair in "--summary=$W/same --report $W/same" "--report $W/same --pidfile $W/same" \
	"--report $W/same --log $W/same" "--policy $W/pp --summary=$W/pp"; do
	rm -f "$W/ran5"
	"$ST" run $pair -- touch "$W/ran5" 2>/dev/null; rc=$?
	check "one file for two of the run's files refused (125), not run: $pair" \
		sh -c "[ $rc -eq 125 ] && [ ! -e $W/ran5 ]"
done
check "... the policy is left as it was" test "$(cat "$W/pp")" = 'allow any /'
# env -i and a replaced LD_PRELOAD do not escape the trace
R=$W/env.jsonl
echo e > e1
"$ST" run --report "$R" -- sh -c 'env -i /bin/cat e1 >/dev/null; LD_PRELOAD= cat e1 > /dev/null; env -u LD_PRELOAD cat e1 >/dev/null'
check "env -i child traced" has R "$W/e1" "$R"
n=$("$ST" report --list "$R" | grep -c "	$W/e1\$")
check "one record per (kind, path)" test "$n" -eq 1
# the shim's variables are not in a traced program's environment (coreutils' env-S.pl
# failed traced: `env -i A=1 env` printed LD_PRELOAD=.../libsandtrace.so and SANDTRACE_*
# before A=1): `env`, `env -i`, a user's own LD_PRELOAD (shown as the user set it), a
# shell's view and main's third argument are as untraced, traced only, fenced and with
# --no-cache; and the children of each are still traced, also one exec'd by an inline
# system call with the initial stack's environment (as a Go program's runtime does)
printf 'allow any %s\nallow any %s\n%s\n' "$W" "$B" "$(system_rules)" > "$W/envh.policy"
for i in 1 2 3 4 5 6; do echo h$i > "$W/eh$i"; done
for mode in trace fence nocache; do
	case $mode in
	trace) set -- ;;
	fence) set -- --fence --policy "$W/envh.policy" ;;
	nocache) set -- --no-cache ;;
	esac
	for how in env env-i preload shell main big; do
		case $how in
		env) cmd="env" ;;
		env-i) cmd="env -i A=1 env" ;;
		preload) cmd="env -i A=1 LD_PRELOAD=libc.so.6 env" ;;
		shell) cmd="env -i A=1 LD_PRELOAD=libc.so.6 sh -c export" ;;
		main) cmd="env -i A=1 $DRV env-main x" ;;
		# more entries than the start's own room for the copy: a map of its own
		big) cmd="env -i A=1 $(seq -f 'V%g=1' 200) LD_PRELOAD=libc.so.6 env" ;;
		esac
		env -i PATH=/usr/bin:/bin HOME="$W" Q=1 LD_PRELOAD=libc.so.6 $cmd > "$W/u.env" 2>&1
		env -i PATH=/usr/bin:/bin HOME="$W" Q=1 LD_PRELOAD=libc.so.6 "$ST" run "$@" -- \
			$cmd > "$W/t.env" 2>&1
		check "$mode: $how ($(echo "$cmd" | tr "\n" " " | head -c 60)) prints as untraced ($(diff "$W/u.env" "$W/t.env" | grep '^[<>]' |
			head -c 300 | tr '\n' '|'))" cmp -s "$W/u.env" "$W/t.env"
	done
	rm -f "$W/envh.jsonl"
	"$ST" run "$@" --report "$W/envh.jsonl" -- sh -c "env -i A=1 sh -c 'cat $W/eh1';
		env sh -c 'cat $W/eh2'; LD_PRELOAD=libc.so.6 sh -c 'cat $W/eh3';
		env -i A=1 $DRV stack-exec /bin/cat $W/eh4; env | sh -c 'cat $W/eh5';
		env -i A=1 sh -c 'sh -c \"cat $W/eh6\"'" > /dev/null
	for i in 1 2 3 4 5 6; do
		check "$mode: child $i of an environment without the shim's variables traced" \
			has R "$W/eh$i" "$W/envh.jsonl"
	done
done
# the arena's map (above the loader when there is room) leaves the main
# stack all the room its limit gives
out=$(ulimit -s 262144 && "$ST" run -- "$DRV" deep-stack 200)
check "a 200 MiB stack under a 256 MiB limit, traced" test "$out" = ok
# a signal handler that opens a file never deadlocks, never sees EINTR
out=$("$ST" run -- "$DRV" sighandler-open /etc/hostname "$W")
check "open in a signal handler" test "$out" = ok
# fork: the child is traced with its own pid
R2=$W/fork.jsonl
"$ST" run --report "$R2" -- "$DRV" fork-open "$W/e1" >/dev/null
check "forked child's read recorded" has R "$W/e1" "$R2"
# vfork: a real vfork child runs the exec wrapper in its parent's memory; the
# parent's state (nesting counters, cwd cache, process record) must come back intact
R4=$W/vfork.jsonl
out=$(cd "$W" && "$ST" run --report "$R4" -- "$DRV" vfork-exec /bin/true /tmp)
check "vfork children exec and exit as without the shim" test "$out" = ok
check "vfork children's execs recorded" has X /usr/bin/true "$R4"
check "a vfork child's failed exec recorded as a lookup" has N /nonexistent-sandtrace/prog "$R4"
check "the parent is traced after its vfork children (relative path in its own cwd)" \
	has N "$W/after-vfork" "$R4"
check "no relative path resolved in the child's cwd" not_has "/tmp/after-vfork" "$R4"
nproc_=$(python3 -c 'import json,sys
print(len({r["pid"] for r in map(json.loads, open(sys.argv[1])) if r.get("type")=="process"}))' "$R4")
check "a process record per vfork child and the parent (6 pids, got $nproc_)" test "$nproc_" = 6
# every vfork child, the one that _exits without an exec too, names its parent and the
# program it runs (the driver's, until an exec)
orphans=$(python3 -c 'import json,sys
print(sum(1 for r in map(json.loads, open(sys.argv[1])) if r.get("type")=="process" and not r.get("ppid")))' "$R4")
check "vfork children's records name their parent (records without: $orphans)" test "$orphans" = 0
noexe=$(python3 -c 'import json,sys
print(sum(1 for r in map(json.loads, open(sys.argv[1])) if r.get("type")=="process" and not r.get("exe")))' "$R4")
check "every vfork child's record names its program (without: $noexe)" test "$noexe" = 0
check "vfork run complete" test "$(summary_field "$R4" complete)" = true
# fenced: a refused exec fails in the vfork child, the parent goes on
P4=$W/vfork.policy
{ echo "deny exec /usr/bin/true"; system_rules; echo "allow any $W"; } > "$P4"
out=$(cd "$W" && "$ST" run --fence --policy "$P4" --report "$R4.f" -- "$DRV" vfork-exec /bin/true /tmp)
check "fenced: the vfork children's exec refused (ECHILD from the driver)" test "$out" = ECHILD
check "fenced: the refusal is a violation" test "$(summary_field "$R4.f" violations)" -ge 1
check "fenced: the parent is still traced after the vfork children" has N "$W/after-vfork" "$R4.f"
# without the arena (every record a message) vfork stays fork: same records
out=$(cd "$W" && "$ST" run --no-cache --report "$R4.n" -- "$DRV" vfork-exec /bin/true /tmp)
check "--no-cache: vfork children as fork children" test "$out" = ok
check "--no-cache: execs and the parent's lookup recorded" \
	sh -c "\"$ST\" report --list \"$R4.n\" | grep -qxF 'X	/usr/bin/true' && \"$ST\" report --list \"$R4.n\" | grep -qxF 'N	$W/after-vfork'"
# the shim's counters under threads: four threads stat one path 100,000 times each; no
# count is lost (the summary's calls) and no hit counted beyond the calls
R5=$W/threads.jsonl
"$ST" run --report "$R5" -- "$DRV" threads-stat "$W/e1" >/dev/null
calls_=$(summary_field "$R5" calls); hits_=$(summary_field "$R5" hits)
check "threads: every call counted ($calls_ >= 400000)" test "$calls_" -ge 400000
check "threads: no more hits than calls ($hits_ <= $calls_)" test "$hits_" -le "$calls_"
# a thread-specific-data destructor that stats a file as its thread exits, after
# the shim freed the thread's buffers (it crashed: SIGSEGV, exit 139)
out=$("$ST" run --report "$W/tsd.jsonl" -- "$DRV" tsd-stat "$W/e1")
check "a file call in a thread-exit destructor works (got: $out)" test "$out" = ok
# another preload and its daemon (fakeroot, as dpkg-buildpackage -rfakeroot uses it)
if command -v fakeroot >/dev/null; then
	R3=$W/fr.jsonl
	out=$("$ST" run --report "$R3" -- fakeroot sh -c 'touch fr; chown 123 fr; stat -c %u fr; cat e1')
	check "fakeroot under sandtrace works (faked owner, file read)" test "$(echo $out)" = "123 e"
	check "fakeroot's children traced" has R "$W/e1" "$R3"
	check "fakeroot's children's writes traced" has W "$W/fr" "$R3"
fi
# a nested sandtrace run: the inner run's processes report to the inner daemon
"$ST" run --report "$W/outer.jsonl" -- "$ST" run --report "$W/inner.jsonl" -- cat e1 >/dev/null
check "nested: the inner report has the read" has R "$W/e1" "$W/inner.jsonl"
check "nested: the outer report saw the exec" has X /usr/bin/cat "$W/outer.jsonl"
check "nested: the inner report is complete" test "$(summary_field "$W/inner.jsonl" complete)" = true
check "nested: the outer report lists the handed-over program untraced, nested, and is incomplete" \
	test "$(python3 -c 'import json,sys
r = [json.loads(l) for l in open(sys.argv[1])]
print(sum(1 for x in r if x.get("type") == "access" and x.get("untraced") == "nested" and x["path"] == "/usr/bin/cat"))' "$W/outer.jsonl") $(summary_field "$W/outer.jsonl" complete)" = "1 false"
# under a sandbox that can refuse nothing is handed over: the inner run's command stays in
# the outer sandbox (a nested run, or a program naming a socket and a libsandtrace.so of its
# own, ran the hidden file's reader untraced by the fence, the outer report complete)
printf 'deny read %s/e1\nallow any /\n' "$W" > "$W/deny-e1"
out=$("$ST" run --fence --policy "$W/deny-e1" --report "$W/outer-f.jsonl" -- "$ST" run --report "$W/inner-f.jsonl" -- cat e1 2>&1)
check "nested under a fence: the inner command cannot read what the outer hides (got: $out)" \
	sh -c "echo '$out' | grep -q 'No such file'"
check "nested under a fence: the outer report has the refused read" has R "$W/e1" "$W/outer-f.jsonl"
# ... and the inner run, whose daemon heard of none of its command's processes, said
# "complete": true of an empty trace
check "nested under a fence: the inner report is incomplete, and says why" \
	test "$(summary_field "$W/inner-f.jsonl" complete) $(grep -c 'no process of the command reported' "$W/inner-f.jsonl")" = "false 1"
: > "$W/libsandtrace.so"
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/fake-sock"
out=$("$ST" run --fence --policy "$W/deny-e1" -- env SANDTRACE_SOCKET="$W/fake-sock" \
	LD_PRELOAD="$W/libsandtrace.so" cat e1 2>&1)
check "a made-up trace under a fence: the hidden file stays hidden (got: $out)" sh -c "echo '$out' | grep -q 'No such file'"
# an environment that names another daemon but carries no trace the child can join is
# not a nested run: a saved environment put back after its run ended (its socket gone),
# a socket variable without the preload; the child was traced by nobody, its read
# missing from a complete report
for how in gone nopreload; do
	if [ $how = gone ]; then
		set -- LD_PRELOAD="$B/shim/libsandtrace.so" SANDTRACE_SOCKET=/nonexistent-sandtrace/sock \
			SANDTRACE_ARENA=/sandtrace-1-0 SANDTRACE_FLAGS=0 SANDTRACE_LIB="$B/shim/libsandtrace.so"
	else
		set -- SANDTRACE_SOCKET="$W/a-socket"
		python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$W/a-socket"
	fi
	rm -f "$W/stale.jsonl"
	out=$("$ST" run --report "$W/stale.jsonl" -- env -i "$@" PATH=/usr/bin:/bin cat e1)
	check "$how: the child's output unchanged (got: $out)" test "$out" = e
	check "$how: the child is traced by this run (its read recorded)" has R "$W/e1" "$W/stale.jsonl"
done
done_
