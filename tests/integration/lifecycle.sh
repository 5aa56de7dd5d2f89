#!/bin/sh
# tests/integration/lifecycle.sh - daemon death, CLI SIGKILL cleanup, privilege drop, standalone daemon + env.
. "$(dirname "$0")/lib.sh"
cd "$W"
echo x > present
# 1. the daemon dies mid-run: the build goes on and the report says incomplete
R=$W/dead.jsonl
"$ST" run --report "$R" --pidfile "$W/pid" -- sh -c 'sleep 1; i=0; while [ $i -lt 50 ]; do cat present >/dev/null; i=$((i+1)); done; echo done' > out.txt &
runpid=$!
sleep 0.5; kill -9 "$(cat "$W/pid")"
t0=$(date +%s); wait $runpid; rc=$?; t1=$(date +%s)
check "build finished after daemon death" test "$(cat out.txt)" = done
check "and promptly" test $((t1 - t0)) -lt 15
check "report marked incomplete" test "$(summary_field "$R" complete)" = false
# 1b. an exec's record waits for the exec's outcome (a failed exec is amended), but one
#     whose program said HELLO is written then: a daemon killed later keeps it
R=$W/deadx.jsonl
"$ST" run --report "$R" --pidfile "$W/pidx" -- sh -c '/bin/true; : > ranx; while [ ! -e gox ]; do sleep 0.05; done' &
runpid=$!
i=0; while { [ ! -e ranx ] || ! grep -q '"kind":"X","path":"/usr/bin/true"' "$R" 2>/dev/null; } && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
kill -9 "$(cat "$W/pidx")"; : > gox; wait $runpid
check "an exec that ran is in the report before the run ends (daemon killed after it)" has X /usr/bin/true "$R"
check "... and the shell's" has X /usr/bin/dash "$R"
# 1c. the daemon is stopped (kill -STOP) mid-run: the CLI, its parent, continues it.
#     Stopped, it answered nothing: with --no-cache every request of every process
#     waited its reply timeout (10 s; the four cats below took minutes), and with the
#     arena the command ran but the CLI waited 120 s for a report; then the report
#     said the daemon was killed.  Now the run ends at once and its report is complete.
for mode in cache no-cache; do
	opt=; [ $mode = no-cache ] && opt=--no-cache
	R=$W/stopped-$mode.jsonl; rm -f "$W/pids" "$W/gos" "$W/outs"
	timeout -k 1 60 "$ST" run $opt --report "$R" --pidfile "$W/pids" -- sh -c \
		'while [ ! -e gos ]; do sleep 0.05; done; for i in 1 2 3 4; do cat present >/dev/null; done; echo done' > "$W/outs" &
	runpid=$!
	i=0; while [ ! -s "$W/pids" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
	kill -STOP "$(cat "$W/pids")"; t0=$(date +%s); : > gos; wait $runpid; rc=$?; t1=$(date +%s)
	kill -CONT "$(cat "$W/pids")" 2>/dev/null
	check "daemon stopped ($mode): the run ends promptly (rc $rc, $((t1 - t0)) s)" \
		sh -c "test $rc -eq 0 && test $((t1 - t0)) -lt 10 && test \"\$(cat '$W/outs')\" = done"
	check "daemon stopped ($mode): the report is complete" test "$(summary_field "$R" complete)" = true
	check "daemon stopped ($mode): the report has the reads" has R "$W/present" "$R"
done
# 1d. many processes at once, each with its connection (--no-cache), past the daemon's soft
#     RLIMIT_NOFILE: accept() failed with EMFILE, the processes past it waited their reply
#     timeout (1 s here) and went on without the daemon: the report was incomplete (1100
#     processes under the usual soft 1024 alike).  The daemon raises its soft limit to the
#     hard one; the command keeps the limit it was given.
R=$W/many.jsonl
SANDTRACE_TEST_REPLY_TIMEOUT_MS=1000 sh -c 'ulimit -S -n 64; exec "$@"' sh \
	"$ST" run --no-cache --report "$R" -- sh -c 'ulimit -S -n > many.lim; i=0
	while [ $i -lt 100 ]; do (cat present > /dev/null; sleep 1; cat present > /dev/null) & i=$((i+1)); done; wait'
check "100 processes at once over a soft limit of 64: the command keeps its limit ($(cat many.lim))" test "$(cat many.lim)" = 64
check "100 processes at once over a soft limit of 64: the report is complete ($(summary_field "$R" reasons))" \
	test "$(summary_field "$R" complete)" = true
#     Over a hard limit of 64 the daemon's accept() failed with EMFILE and the listening
#     socket, still readable, woke its loop at once: it spun and logged the failure some
#     400 000 times a second.  It now stops listening until a client closes; the others wait
#     in the backlog (those that wait longer than their reply timeout go on without it, and
#     the report says so: a process holds its connection while it waits for a child).
R=$W/many-hard.jsonl
SANDTRACE_TEST_REPLY_TIMEOUT_MS=1000 sh -c 'ulimit -n 64; exec "$@"' sh "$ST" run --no-cache --log "$W/many-hard.log" --report "$R" -- sh -c 'i=0
	while [ $i -lt 100 ]; do (cat present > /dev/null; sleep 1; cat present > /dev/null) & i=$((i+1)); done; wait'
n=$(grep -c 'accept: ' "$W/many-hard.log")
check "100 processes at once over a hard limit of 64: the daemon's accept failure logged once a pause ($n lines), not in a loop" \
	test "$n" -gt 0 -a "$n" -lt 1000
c=$(summary_field "$R" complete)
check "100 processes at once over a hard limit of 64: complete, or the report says what was missed" \
	sh -c "test '$c' = true || grep -q 'stopped waiting for the daemon' '$R'"
# 2. fenced run, daemon killed: fail closed for what was not decided (ask), allow rules still hold
# 2. fenced run, daemon killed: denials keep working (decided in the process from
#    the arena), allowed opens still work, and an `ask` fails closed
mkdir -p "$W/fz/in" "$W/fz/out"; echo a > "$W/fz/in/ok"; echo s > "$W/fz/out/secret"; echo q > "$W/fz/in/asked"
cat > "$W/fz/policy" <<P
ask read $W/fz/in/asked
allow any $W/fz/in
$(system_rules)
allow read $B/tests/drivers
allow exec $B/tests/drivers
P
cd "$W/fz/in"
# the command says when it runs and waits for a marker made once its daemon is
# killed (not fixed sleeps: on a loaded machine the start alone can take longer)
# Meanwhile another run starts: its daemon sweeps the arenas of dead daemons,
# and must leave this one (its run still goes on) to the processes still to come.
kill_then() { # kill_then PIDFILE N: when the command runs, kill -9 its daemon, then let it go on
	i=0; while [ ! -e "$W/fz/in/run$2" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done
	kill -9 "$(cat "$1")"; sleep 0.2
	"$ST" run --report "$W/fz/other$2.jsonl" -- true
	: > "$W/fz/in/go$2"
}
out=$("$ST" run --fence --policy "$W/fz/policy" --pidfile "$W/fz/pid" --report "$W/fz/r1.jsonl" -- sh -c ": > run1; while [ ! -e go1 ]; do sleep 0.05; done; $DRV open-r $W/fz/out/secret; $DRV open-r $W/fz/in/ok; $DRV open-r $W/fz/in/asked" 2>/dev/null &
      kill_then "$W/fz/pid" 1; wait)
out2=$("$ST" run --fence --fail-open --policy "$W/fz/policy" --pidfile "$W/fz/pid2" -- sh -c ": > run2; while [ ! -e go2 ]; do sleep 0.05; done; $DRV open-r $W/fz/out/secret; $DRV open-r $W/fz/in/asked" 2>/dev/null &
      kill_then "$W/fz/pid2" 2; wait)
cd "$W"
check "daemon lost, --fail-open: denial still ENOENT" test "$(echo "$out2" | sed -n 1p)" = ENOENT
check "daemon lost, --fail-open: ask allowed"         test "$(echo "$out2" | sed -n 2p)" = ok
check "daemon lost, fenced: denial still ENOENT"      test "$(echo "$out" | sed -n 1p)" = ENOENT
check "daemon lost, fenced: allowed read still works (got: $(echo $out))" test "$(echo "$out" | sed -n 2p)" = ok
check "daemon lost, fenced: ask fails closed"         test "$(echo "$out" | sed -n 3p)" = ENOENT
# the ask the dead daemon could not answer: counted in the arena's header by the
# shim, read by the CLI after the daemon's death, a reason of the summary
check "daemon lost: the CLI's summary counts the request no daemon answered" \
	grep -q '"daemon lost: sandtraced killed by signal 9.*","1 record(s) or request(s) lost: a traced process could not reach the daemon' "$W/fz/r1.jsonl"
# 2b. the daemon alive, a process that cannot reach it (its connection closed by an
#     inline system call, no descriptor left for a new one): what it could not
#     deliver makes the trace incomplete, with a reason, with and without the arena
mkdir -p "$W/em/ask"
printf 'ask read %s\n' "$W/em/ask" > "$W/em/policy"
for mode in arena no-cache; do
	opt=; tgt=$W/em/f; [ $mode = no-cache ] && opt=--no-cache
	[ $mode = arena ] && { opt="--policy $W/em/policy"; tgt=$W/em/ask/f; }
	: > "$tgt"
	out=$("$ST" run $opt --report "$W/em/$mode.jsonl" -- "$DRV" emfile-conn "$tgt" 2>&1)
	sum=$("$ST" report "$W/em/$mode.jsonl" 2>&1)
	check "$mode: a process that lost the daemon: the trace is incomplete ($(echo $out))" \
		test "$(summary_field "$W/em/$mode.jsonl" complete)" = false
	check "$mode: ... the reason counts what was lost (got: $sum)" \
		sh -c "echo '$sum' | grep -q 'INCOMPLETE: [0-9]* record(s) or request(s) lost: a traced process could not reach the daemon'"
	check "$mode: ... and its connection came back (the later stat recorded)" has N "$tgt-after" "$W/em/$mode.jsonl"
done
# 2c. --no-cache, the daemon held still past a process's reply timeout (1 s here,
#     SANDTRACE_TEST_REPLY_TIMEOUT_MS): the process takes the daemon for lost and goes on
#     without it (no EXIT will come); the daemon, let go on, cannot deliver the answer to a
#     process that still runs: the trace is incomplete. One killed while it waited is not.
#     (A daemon that hangs: held in a ptrace stop, which the CLI does not see; one stopped by
#     SIGSTOP the CLI continues, 1c.)
mkdir -p "$W/gu"; : > "$W/gu/f"; printf 'allow any /\n' > "$W/gu/policy"
for how in gave-up killed; do
	rm -f "$W/gu/pid"
	SANDTRACE_TEST_REPLY_TIMEOUT_MS=1000 "$ST" run --no-cache --fence --policy "$W/gu/policy" \
		--pidfile "$W/gu/pid" --report "$W/gu/$how.jsonl" -- "$DRV" stat-late "$W/gu/f" 2 3 >/dev/null 2>&1 &
	cli=$!
	i=0; while [ ! -s "$W/gu/pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	sleep 1; dpid=$(cat "$W/gu/pid"); rm -f "$W/gu/thaw"
	"$DRV" freeze "$dpid" "$W/gu/thaw" > "$W/gu/frz" & frz=$!
	if [ $how = killed ]; then
		sleep 1.5
		kid=$(ps -o pid= -o comm= --ppid $cli | awk '$2=="stdriver"{print $1}')
		[ -n "$kid" ] && kill -9 $kid
		sleep 0.5
	else
		sleep 2.5
	fi
	: > "$W/gu/thaw"; wait $frz; wait $cli
	c=$(summary_field "$W/gu/$how.jsonl" complete)
	if [ $how = gave-up ]; then
		check "no-cache, a process that stopped waiting for the stopped daemon: incomplete (got: $c)" test "$c" = false
		check "... with the reason" grep -q 'stopped waiting for the daemon' "$W/gu/$how.jsonl"
	else
		check "no-cache, a process killed while it waited: not a loss (got: $c)" test "$c" = true
	fi
done
# 3. the CLI killed with SIGKILL: socket dir and arena removed (the arena's
#    name carries the daemon's pid: other runs on the machine do not count)
"$ST" run --pidfile "$W/pid2" --report "$W/killed.jsonl" -- sleep 30 &
cli=$!
sleep 1
dpid=$(cat "$W/pid2")
pdir=$(tr '\0' '\n' < /proc/$dpid/cmdline | sed -n '/^--private-dir$/{n;p;}')
check "arena exists while running" sh -c "ls /dev/shm | grep -q '^sandtrace-$dpid-'"
kill -9 $cli
sleep 2
check "arena removed after CLI SIGKILL" sh -c "! ls /dev/shm | grep -q '^sandtrace-$dpid-'"
check "daemon gone after CLI SIGKILL" sh -c "! kill -0 $dpid 2>/dev/null"
check "private directory removed after CLI SIGKILL ($pdir)" sh -c "[ -n '$pdir' ] && [ ! -e '$pdir' ]"
check "CLI SIGKILL: the report says the run was killed (incomplete)" \
	grep -q 'sandtrace run was killed before the command ended' "$W/killed.jsonl"
pkill -f "sleep 30" 2>/dev/null
# 4. a child that drops privileges is still traced
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$W"; chmod 644 present
	R3=$W/priv.jsonl
	"$ST" run --report "$R3" -- setpriv --reuid=65534 --regid=65534 --clear-groups cat present >/dev/null
	check "unprivileged child traced" has R "$W/present" "$R3"
	check "unprivileged child's image carries its uid" python3 -c '
import json, sys
p = [r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "process" and r.get("exe") == "/usr/bin/cat"]
sys.exit(0 if p and all(r.get("uid") == 65534 for r in p) else "cat images: %r" % p)' "$R3"
fi
# 5. standalone daemon for multi-phase builds, and `sandtrace env`
SOCK=$W/d.sock
"$B/daemon/sandtraced" --socket "$SOCK" --report "$W/standalone.jsonl" &
dpid=$!
i=0; while [ ! -S "$SOCK" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
eval "$("$ST" env --socket "$SOCK")"
cat present > /dev/null
sh -c 'cat present >/dev/null; test -e phase2-missing'
unset LD_PRELOAD LD_AUDIT
# a second daemon on the same socket (and, by mistake, the same report) is
# refused without touching the first one's report (it once truncated it)
"$B/daemon/sandtraced" --socket "$SOCK" --report "$W/standalone.jsonl" 2>/dev/null; rc=$?
check "standalone: a second daemon on a served socket is refused (2)" test $rc -eq 2
# a daemon started by hand with a report in /proc (or /sys) ran and lost the report at
# its end; refused at its start now, as sandtrace run refuses it, its socket not left
out=$(timeout 10 "$B/daemon/sandtraced" --socket "$W/d2.sock" --report /proc/version 2>&1); rc=$?
check "standalone: --report /proc/version refused at the start (got: $rc, $out)" \
	sh -c "test $rc -eq 2 && echo '$out' | grep -q 'report /proc/version'"
check "standalone: ... its socket removed" test ! -e "$W/d2.sock"
kill -TERM $dpid; wait $dpid
check "standalone: phase reads recorded" has R "$W/present" "$W/standalone.jsonl"
check "standalone: the first daemon's report is whole (no NUL bytes, one run record)" \
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
sys.exit(0 if b"\0" not in d and d.count(b"\"type\":\"run\"") == 1 else 1)' "$W/standalone.jsonl"
check "standalone: missing recorded" has N "$W/phase2-missing" "$W/standalone.jsonl"
check "standalone: socket removed" test ! -e "$SOCK"
# 6. SIGHUP reloads the policy: the next phase may read what the last one could not; a
# process already running sees the new policy on its next call; a malformed file is
# reported with its line and the current policy stays
SOCK=$W/r.sock
PR=$W/reload.policy
echo "phase" > "$W/secret"
{ echo "deny read $W/secret"; system_rules; echo "allow any $W"; echo "allow any /tmp"; } > "$PR"
# fenced_daemon POLICY NAME: a fenced daemon on $SOCK with $W/NAME.jsonl and
# $W/NAME.log; sets dpid and preloads the shell's children
fenced_daemon() {
	"$B/daemon/sandtraced" --socket "$SOCK" --fence --policy "$1" --report "$W/$2.jsonl" \
		--log "$W/$2.log" &
	dpid=$!
	i=0; while [ ! -S "$SOCK" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	eval "$("$ST" env --socket "$SOCK")"
}
fenced_daemon "$PR" reload
out=$(/usr/bin/python3 -c '
import os, signal, sys, time
secret, pol, dpid = sys.argv[1], sys.argv[2], int(sys.argv[3])
before = os.path.exists(secret)
with open(pol) as f: rules = f.read().splitlines()[1:]          # the deny rule goes
with open(pol, "w") as f: f.write("\n".join(rules) + "\n")
os.kill(dpid, signal.SIGHUP)
for _ in range(50):                                              # the daemon logs it
    time.sleep(0.1)
    if "policy reloaded" in open(sys.argv[4]).read(): break
print(before, os.path.exists(secret))' "$W/secret" "$PR" "$dpid" "$W/reload.log")
check "reload: a running process is refused before and allowed after (got: $out)" \
	test "$out" = "False True"
check "reload: a new process reads it" test "$(cat "$W/secret" 2>/dev/null)" = phase
printf 'allow read %s # a trailing comment is an error\n' "$W" >> "$PR"
kill -HUP $dpid
i=0; while ! grep -q "error: policy reload" "$W/reload.log" && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
check "reload: a malformed file is reported with its line" \
	grep -q "error: policy reload: $PR:[0-9]" "$W/reload.log"
check "reload: ... and the current policy stays" test "$(cat "$W/secret" 2>/dev/null)" = phase
unset LD_PRELOAD LD_AUDIT
kill -TERM $dpid; wait $dpid
check "reload: one policy record in the report (the new rules, a new generation)" \
	python3 -c 'import json,sys
r=[json.loads(l) for l in open(sys.argv[1])]
p=[x for x in r if x.get("type")=="policy"]
sys.exit(0 if len(p)==1 and p[0]["rules"]==8 and p[0]["generation"]>=1 else 1)' "$W/reload.jsonl"
check "reload: sandtrace report says so" \
	sh -c "\"$ST\" report \"$W/reload.jsonl\" | grep -q 'policy reloaded 1 time'"
check "reload: the refusal before it is a violation" \
	sh -c "grep '\"type\":\"violation\"' '$W/reload.jsonl' | grep -q '$W/secret'"
# the summary sandtrace run prints at its end names the reload too, as sandtrace report
# does (it comes from the policy records, not from the summary line alone)
printf 'allow any /\n' > "$W/rl.policy"
"$ST" run --policy "$W/rl.policy" --pidfile "$W/rl.pid" --report "$W/rl.jsonl" \
	--summary="$W/rl.summary" -- sh -c 'kill -HUP $(cat "$1"); sleep 1' sh "$W/rl.pid"
check "reload: the run's own summary says so" grep -q 'policy reloaded 1 time' "$W/rl.summary"
# `--summary FILE -- CMD` (a space, not `=`): FILE was run as the command (127, "FILE:
# command not found"); now a usage error before anything runs, naming the right spelling
out=$(cd "$W" && "$ST" run --summary sm.txt -- touch "$W/sm-ran" 2>&1)
check "--summary FILE -- CMD: a usage error (125) naming --summary=FILE (got: $?: $out)" \
	sh -c "test $? -eq 125 && echo '$out' | grep -q -- '--summary=sm.txt'"
check "--summary FILE -- CMD: nothing ran" test ! -e "$W/sm-ran" -a ! -e "$W/sm.txt"
# made under the old policy, and still in the record log when the SIGHUP came (the same
# process sent it): judged by the old rules, before the policy record (it named the new
# policy's "allow any" line, after the policy record)
check "reload: the refusal names the old deny rule, before the policy record" python3 -c '
import json, sys
rs = list(map(json.loads, open(sys.argv[1])))
p = [r["seq"] for r in rs if r["type"] == "policy"]
v = [(r["seq"], r["rule"]) for r in rs if r["type"] == "violation" and r["path"] == sys.argv[2]]
sys.exit(0 if p and v == [(v[0][0], sys.argv[3] + ":1")] and v[0][0] < p[0] else "violations %r, policy record %r" % (v, p))' \
	"$W/reload.jsonl" "$W/secret" "$PR"
# the other way, for a path a running process holds warm (its thread's memo of
# warm accesses answers): refused on its next call after a reload brings a deny
# rule (a daemon of its own: the reloads above are counted)
SOCK=$W/r2.sock
PR2=$W/reload2.policy
echo open > "$W/open"
{ system_rules; echo "allow any $W"; echo "allow any /tmp"; } > "$PR2"
fenced_daemon "$PR2" reload2
out=$(/usr/bin/python3 -c '
import os, signal, sys, time
path, pol, dpid, log = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
before = all(os.path.exists(path) for _ in range(200))
with open(pol) as f: rules = f.read()
with open(pol, "w") as f: f.write("deny read %s\n" % path + rules)
os.kill(dpid, signal.SIGHUP)
for _ in range(50):
    time.sleep(0.1)
    if "policy reloaded" in open(log).read(): break
print(before, os.path.exists(path))' "$W/open" "$PR2" "$dpid" "$W/reload2.log")
unset LD_PRELOAD LD_AUDIT
kill -TERM $dpid; wait $dpid
check "reload: a path held warm is refused after a deny rule comes (got: $out)" \
	test "$out" = "True False"
# a program that re-execs itself with the same arguments is a new image each time (a HELLO
# with the same program and arguments was taken for a reconnection: one image of four)
for opt in "" --no-cache "--arena-size 64K"; do
	"$ST" run $opt --report "$W/reexec.jsonl" -- "$DRV" reexec "$W/present"
	check "re-exec with the same arguments ($opt): four images, the last exits 9" python3 -c '
import json, sys
v = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "process" and r["argv"][1:2] == ["reexec"]]
ok = len(v) == 4 and all(i.get("execed") for i in v[:3]) and v[3].get("exit") == 9
sys.exit(0 if ok else "images %r" % [(i.get("exit"), i.get("execed")) for i in v])' "$W/reexec.jsonl"
done

# main's return: its status is the process's (libc calls exit past any interposition), and
# what the program's own exit handlers open after main is recorded too
printf '#include <fcntl.h>\n#include <stdlib.h>\n#include <unistd.h>\nstatic void late(void) { close(open(getenv("LATE"), O_RDONLY)); }\nint main(void) { atexit(late); return 5; }\n' > "$W/ret5.c"
if cc -o "$W/ret5" "$W/ret5.c"; then
	: > "$W/late-file"
	for opt in "" --no-cache; do
		LATE=$W/late-file "$ST" run $opt --report "$W/ret5$opt.jsonl" -- "$W/ret5"
		check "main returns 5 ($opt): the process record says 5, the atexit handler's open is recorded" python3 -c '
import json, sys
rs = list(map(json.loads, open(sys.argv[1])))
p = [r for r in rs if r["type"] == "process" and r.get("exe", "").endswith("/ret5")]
a = [r for r in rs if r["type"] == "access" and r.get("path") == sys.argv[2]]
sys.exit(0 if len(p) == 1 and p[0].get("exit") == 5 and a else "images %r, accesses %r" % (p, a))' "$W/ret5$opt.jsonl" "$W/late-file"
	done
else
	bad "cc: the main-return test could not be built"
fi

# the wait family's other ways in: a child killed by a signal sends no EXIT of its own, so
# only its parent's reap tells how it ended (waitid was not wrapped: a review found its
# children's status null)
for how in waitid syscall-waitid syscall-wait4; do
	out=$("$ST" run --report "$W/reap-$how.jsonl" -- "$DRV" reap-killed $how)
	check "reaped by $how: each killed child's status is 137 ($(echo $out | tr '\n' ' '))" python3 -c '
import json, sys
pids = [int(x) for x in sys.argv[2].split()[:-1]]
st = {r["pid"]: r.get("exit") for r in map(json.loads, open(sys.argv[1])) if r["type"] == "process"}
sys.exit(0 if sys.argv[2].split()[-1] == "ok" and len(pids) == 3 and all(st.get(p) == 137 for p in pids)
         else "statuses %r" % [(p, st.get(p)) for p in pids])' "$W/reap-$how.jsonl" "$out"
done

# SIGHUPs while the daemon drains a busy log: the drain reads the daemon's sockets and its
# signal fd (records sent before the entries it delivers come first), so a SIGHUP can be read
# there; each must still reload (one read by the drain waited for a socket event that an
# idle-but-logging run never made)
SOCK=$W/h.sock
PH=$W/hup.policy
{ system_rules; echo "allow any $W"; echo "allow any /tmp"; } > "$PH"
fenced_daemon "$PH" hup
mkdir -p busy
sh -c 'i=0; while [ ! -e stop-busy ]; do i=$((i+1)); : > busy/f$((i % 500)); cat busy/f$((i % 500)); done' &
busy=$!
unset LD_PRELOAD LD_AUDIT
for k in 1 2 3 4 5 6 7 8; do
	kill -HUP $dpid
	i=0; while [ "$(grep -c "policy reloaded" "$W/hup.log")" -lt $k ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
done
n=$(grep -c "policy reloaded" "$W/hup.log")
touch stop-busy; wait $busy
kill -TERM $dpid; wait $dpid
check "reload under a busy log: 8 SIGHUPs, 8 reloads (got $n)" test "$n" = 8

# one process's records by two ways: the image before an exec wrote to the
# record log, the next (its log full) sends HELLO and EXIT by the socket; the
# daemon must not let the socket overtake the log (an exec'd image's records,
# exit status included, were pinned on its predecessor)
R30=$W/logorder.jsonl
"$ST" run --report "$R30" -- "$LOGORDER"
check "log then socket: the images of one pid in order, the exit on the last" python3 -c '
import json, sys
imgs = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "process":
        imgs.setdefault(r["pid"], []).append(r)
v = [x for x in imgs.values() if any(i["exe"] == "/logorder/after" for i in x)]
ok = len(v) == 1 and [i["exe"] for i in v[0]][-2:] == ["/logorder/before", "/logorder/after"] \
    and v[0][-2].get("execed") and v[0][-1].get("exit") == 7
if not ok:
    sys.exit("images: %r" % [[(i["exe"], i.get("exit"), i.get("execed")) for i in x] for x in v])' "$R30"

# ... and a reap: two drivers each run 150 exec chains (4 images, the last exits pid % 100)
# in a 64K arena; the images' records come by their own connections, a driver's reap by its
# own or the log, and a reap dispatched before the exec'd image's HELLO pinned the status on
# the image before it as well (a newcomer's review: 8 of 600 chains).  Every pid: its four
# images in order, the first three exec'd, the status on the last only.
mkdir -p chains
R31=$W/chains.jsonl
CHAIN_DIR=$W/chains "$ST" run --arena-size 64K --report "$R31" -- \
	sh -c "\"$CHAIN\" drive 150 & \"$CHAIN\" drive 150; wait" 2>/dev/null
check "reaped exec chains in a full arena: images in order, the status on the last" python3 -c '
import json, sys
imgs = {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "process" and r["argv"][1:2] and r["argv"][1] in "0123":
        imgs.setdefault(r["pid"], []).append(r)
bad, chains = [], 0
for pid, v in imgs.items():
    # a pid reused (pid_max wraps) runs several chains, one after another
    starts = [k for k, i in enumerate(v) if i["argv"][1] == "0"] + [len(v)]
    if starts[0] != 0:
        bad.append((pid, "starts mid-chain"))
    for a, b in zip(starts, starts[1:]):
        w = v[a:b]
        chains += 1
        ok = [i["argv"][1] for i in w] == ["0", "1", "2", "3"] and \
            all(i.get("execed") and i.get("exit") is None for i in w[:3]) and \
            w[3].get("exit") == pid % 100 and not w[3].get("execed")
        if not ok:
            bad.append((pid, [(i["argv"][1], i.get("exit"), i.get("execed")) for i in w]))
sys.exit(0 if chains == 300 and not bad else "%d chains, bad: %r" % (chains, bad[:5]))' "$R31"
# --arena-dir: the arena is the file DIR/sandtrace-<pid>-<hex> on a tmpfs the user chose,
# named to every process by its path, removed at the end; a directory on a disk is refused
# with the reason.  Where a tmpfs serving 2 MiB pages can be mounted (root), the shim maps
# the arena at a 2 MiB boundary and the kernel maps the header's 2 MiB with one entry.
AD=$(mktemp -d /dev/shm/st-integ-ad.XXXXXX)
arena_maps() { # arena_maps REPORT: the traced awk's view of the arena: "ADDR PATH PMD_KB"
	"$ST" run --arena-dir "$1" --report "$2" -- awk '
		/^[0-9a-f]+-[0-9a-f]+ / { cur = ($NF ~ /\/sandtrace-[0-9]+-[0-9a-f]+$/) ? $1 " " $NF : "" }
		cur != "" && /^ShmemPmdMapped:/ { print cur, $2; cur = "" }' /proc/self/smaps
}
arena_field() { # arena_field REPORT FIELD
	python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")=="arena": print(r.get(sys.argv[2]))' "$1" "$2"
}
R32=$W/arenadir.jsonl
M32=$(arena_maps "$AD" "$R32")
check "--arena-dir: the arena is a file in the directory, named by its path" \
	sh -c 'case "$1" in *" $2/sandtrace-"*) exit 0;; esac; exit 1' - "$M32" "$AD"
check "--arena-dir: the report names its page size" \
	test "$(arena_field "$R32" page_bytes)" = "$(stat -c %o "$AD")"
check "--arena-dir: the arena is removed at the end" test -z "$(ls -A "$AD")"
(cd "$(dirname "$AD")" && "$ST" run --arena-dir "$(basename "$AD")" --report "$R32" -- true)
check "--arena-dir: a relative directory is made absolute" \
	sh -c 'grep -q "\"arena\":\"$1/sandtrace-" "$2"' - "$AD" "$R32"
"$ST" run --arena-dir "$S" --report "$W/ad-disk.jsonl" -- true 2>"$W/ad-disk.err"
rc=$?
check "--arena-dir on a disk: refused (exit $rc), with the reason" \
	sh -c '[ "$1" -ne 0 ] && grep -q "not a tmpfs" "$2"' - "$rc" "$W/ad-disk.err"
"$ST" run --arena-dir "$AD/missing" --report "$W/ad-missing.jsonl" -- true 2>"$W/ad-missing.err"
rc=$?
check "--arena-dir missing: refused (exit $rc), naming it" \
	sh -c '[ "$1" -ne 0 ] && grep -q "missing" "$2"' - "$rc" "$W/ad-missing.err"
# the sweep of dead daemons' arenas reads an arena's owner from the header's
# frozen prefix, whatever its layout version: another sandtrace build's run
# (another version) whose daemon was killed keeps its arena while its CLI runs
# (a sweep that read only its own version removed it, and that run's next
# processes found no cache: a fenced run refused the files it allows)
fake_arena() { # fake_arena FILE VERSION OWNER_PID
	python3 -c 'import struct, sys
h = struct.pack("<QII", 0x616e657261545453, int(sys.argv[2]), 1024) + bytes(44) + struct.pack("<I", int(sys.argv[3]))
open(sys.argv[1], "wb").write(h + bytes(4096 - len(h)))' "$@"
}
sh -c 'exit 0' & dead=$!; wait $dead
sh -c 'exit 0' & dead2=$!; wait $dead2
fake_arena "$AD/sandtrace-$dead-00aa" 999 $$
fake_arena "$AD/sandtrace-$dead2-00bb" 999 $dead
"$ST" run --arena-dir "$AD" --report "$W/ad-sweep.jsonl" -- true
check "sweep: another version's arena, its daemon dead, its owner alive: kept" test -e "$AD/sandtrace-$dead-00aa"
check "sweep: another version's arena, daemon and owner dead: removed" test ! -e "$AD/sandtrace-$dead2-00bb"
rm -f "$AD/sandtrace-$dead-00aa"
HD=$W/huge
mkdir -p "$HD"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o huge=within_size,size=512m,mode=1777 st-integ "$HD" 2>/dev/null; then
	R33=$W/arenadir-huge.jsonl
	M33=$(arena_maps "$HD" "$R33")
	check "--arena-dir, 2 MiB pages: mapped at a 2 MiB boundary, the header's 2 MiB in one entry ($M33)" \
		python3 -c 'import sys
a, path, pmd = sys.argv[1].split()
sys.exit(0 if int(a.split("-")[0], 16) % (2 << 20) == 0 and int(pmd) >= 2048 else 1)' "$M33"
	check "--arena-dir, 2 MiB pages: the report says so" test "$(arena_field "$R33" page_bytes)" = 2097152
	# the same records as with POSIX shared memory
	"$ST" run --arena-dir "$HD" --report "$W/h1.jsonl" -- sh -c 'cat /etc/hostname >/dev/null; ls /usr/bin >/dev/null; [ -e /nonexistent ]'
	"$ST" run --report "$W/h2.jsonl" -- sh -c 'cat /etc/hostname >/dev/null; ls /usr/bin >/dev/null; [ -e /nonexistent ]'
	check "--arena-dir, 2 MiB pages: the same records as POSIX shared memory" \
		sh -c '[ -n "$("$0" report --list "$1")" ] && [ "$("$0" report --list "$1")" = "$("$0" report --list "$2")" ]' \
		"$ST" "$W/h1.jsonl" "$W/h2.jsonl"
	check "--arena-dir, 2 MiB pages: the arena is removed at the end" test -z "$(ls -A "$HD")"
	umount "$HD"
else
	echo "skip - --arena-dir with 2 MiB pages: needs root to mount a tmpfs (huge=within_size)"
fi
rmdir "$AD"
# an arena on a file system with less room than --arena-size: what it cannot
# back is an allocation refused (arena full), never SIGBUS in a traced
# process (the sparse file's first write to a page the tmpfs cannot give);
# one that cannot even hold the header's segment is refused at the start
SD=$W/small
mkdir -p "$SD"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=512k,mode=1777 st-integ "$SD" 2>/dev/null; then
	"$ST" run --arena-dir "$SD" --arena-size 64M --report "$W/small.jsonl" -- \
		sh -c 'i=0; while [ $i -lt 3000 ]; do [ -e "$0/nothere-$i" ]; i=$((i+1)); done; echo done' "$W" > "$W/small.out"; rc=$?
	check "a tmpfs smaller than --arena-size: the command ends normally (got $rc)" \
		sh -c "[ $rc -eq 0 ] && [ \"\$(cat '$W/small.out')\" = done ]"
	full=$(arena_field "$W/small.jsonl" full)
	check "... the arena is reported full ($full allocations refused)" test "${full:-0}" -gt 0
	check "... and every lookup is still recorded" \
		test "$("$ST" report --list "$W/small.jsonl" | grep -c "^N	$W/nothere-")" -eq 3000
	umount "$SD"
	mount -t tmpfs -o size=64k,mode=1777 st-integ "$SD"
	"$ST" run --arena-dir "$SD" --arena-size 64M -- touch "$W/small-ran" 2>/dev/null; rc=$?
	check "a tmpfs that cannot hold the arena's header: refused at the start (125)" \
		sh -c "[ $rc -eq 125 ] && [ ! -e '$W/small-ran' ]"
	umount "$SD"
else
	echo "skip - an arena on a small tmpfs: needs root to mount one"
fi
# ---- reading a report: a file that is not one is an error (exit 1, named),
# not the summary of a run of nothing; a torn line is skipped, named ----
printf '\377\376 binary\n' > "$W/notrep"; : > "$W/emptyrep"; echo '{"a":1}' > "$W/otherjson"
for f in "$W/notrep" "$W/emptyrep" "$W/otherjson"; do
	for sub in report "report --list" audit; do
		out=$("$ST" $sub "$f" 2>&1 >/dev/null); rc=$?
		check "$sub $(basename "$f"): exit 1, 'not a sandtrace report'" \
			sh -c "[ $rc -eq 1 ] && echo '$out' | grep -qF '$f: not a sandtrace report'"
	done
done
out=$("$ST" audit "$W" 2>&1 >/dev/null); rc=$?
check "audit of a directory: exit 1, named with its error" \
	sh -c "[ $rc -eq 1 ] && echo '$out' | grep -qF '$W: Is a directory'"
"$ST" run --report "$W/torn.jsonl" -- true
head -c -30 "$W/torn.jsonl" > "$W/torn2.jsonl" # the summary torn
out=$("$ST" report "$W/torn2.jsonl" 2>&1); rc=$?
check "a torn report: the torn line named, the trace incomplete, exit 0 (got: $out)" \
	sh -c "[ $rc -eq 0 ] && echo '$out' | grep -qF '$W/torn2.jsonl:' && echo '$out' | grep -q 'INCOMPLETE'"
printf '{"type":"violation"}\n' > "$W/bare.jsonl"
check "a record without its fields prints ? (not (null))" \
	sh -c "\"$ST\" report '$W/bare.jsonl' | grep -qF 'violation: ? ? (pid 0, ?, rule ?)'"
# ---- a traced process that outlives the command: the trace is not complete ----
# (the survivor waits on a FIFO the test opens afterwards: no timing)
mkfifo "$W/hold"
"$ST" run --report "$W/surv.jsonl" -- sh -c '(cat "$1" >/dev/null; touch "$1.after") & exit 0' sh "$W/hold"
check "a process still running at the end: the trace is incomplete" \
	test "$(summary_field "$W/surv.jsonl" complete)" = false
check "... and the summary says why" grep -q 'still running when the trace ended' "$W/surv.jsonl"
echo > "$W/hold"
"$ST" run --strict --report "$W/surv2.jsonl" -- sh -c 'setsid cat "$1" >/dev/null & exit 0' sh "$W/hold"; rc=$?
check "a daemonized (setsid) survivor: --strict exits 121" test $rc -eq 121
echo > "$W/hold"
# a child no wrapper saw (a raw clone): no record of it ever came, and only the
# arena in its memory map shows it (the scan of /proc, which passes over every
# process that started before the daemon)
orphan=$("$ST" run --report "$W/surv4.jsonl" -- "$DRV" rawfork-orphan 30)
check "a survivor with no record, found by its map: the trace is incomplete (pid $orphan)" \
	grep -qF "still running when the trace ended (pid $orphan)" "$W/surv4.jsonl"
[ -n "$orphan" ] && kill "$orphan" 2>/dev/null
"$ST" run --strict --report "$W/surv3.jsonl" -- sh -c 'sleep 0 & wait'; rc=$?
check "a background job the command waited for: complete, --strict exits 0" test $rc -eq 0
# a policy read from a pipe (--policy <(...), a FIFO) cannot be read again: a
# reload keeps it (the re-read found nothing, and dropped every rule; a FIFO
# with no writer left the daemon blocked in open)
mkfifo "$W/pfifo"
printf 'deny read %s\n' "$W/secret" > "$W/pfifo" &
"$ST" run --policy "$W/pfifo" --pidfile "$W/pf-pid" --log "$W/pf.log" -- sh -c '
	cat "$1" >/dev/null 2>&1 && echo before-readable || echo before-denied
	kill -HUP $(cat "$2")
	i=0; while ! grep -q "policy reload" "$3" && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	cat "$1" >/dev/null 2>&1 && echo after-readable || echo after-denied' sh "$W/secret" "$W/pf-pid" "$W/pf.log" > "$W/pf.out"
check "a pipe's policy: denied before the reload" grep -qx before-denied "$W/pf.out"
check "... and after it (the rules stay)" grep -qx after-denied "$W/pf.out"
check "... the log says why" grep -q "not a regular file: it cannot be read again" "$W/pf.log"
# scripts/bench-start's attach variant makes an arena of its own (tests/bench/attach_arena.c):
# on a /dev/shm with room for the arena's header and not for its record log (a private
# mount: root only) the maker's error is shown and no arena is left behind (it stayed in
# /dev/shm, and the error was a bare "exit status 1")
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v "${CC:-gcc}" >/dev/null &&
	unshare -m true 2>/dev/null; then
	BUILD_DIR=$B unshare -m sh -c 'mount -t tmpfs -o size=128k tmpfs /dev/shm || exit 99
		"$1/scripts/bench-start" --reps 1 --children 1 > "$2.out" 2>&1; echo "exit $?" >> "$2.out"
		ls /dev/shm > "$2.shm"' sh "$S" "$W/bench-attach"
	check "bench-start, no room for the attach arena's log: exit 1 with its error ($(tail -3 "$W/bench-attach.out" | tr '\n' ' '))" \
		sh -c "grep -q 'attach_arena: No space left on device' '$W/bench-attach.out' && grep -qx 'exit 1' '$W/bench-attach.out'"
	check "bench-start, no room for the attach arena's log: nothing left in /dev/shm ($(cat "$W/bench-attach.shm" 2>/dev/null))" \
		test -e "$W/bench-attach.shm" -a ! -s "$W/bench-attach.shm"
fi
# a fork made by a signal handler that interrupted the shim's own code (a timer
# over a loop of stats of missing names, most of whose time is the shim's): the
# child is a process of its own all the same.  Each child returns from the
# handler and, outside it, writes a file named after its pid: its process record
# is there and the write is under its pid (the fork passed through: the child
# went on with its parent's pid, connection and log chunk, no process record)
cat > "$W/sigfork.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
static volatile sig_atomic_t forks, bad, child;
static void h(int s)
{
	(void)s;
	if (forks >= 40) /* a tick between the loop's last test and ualarm(0, 0) */
		return;
	pid_t p = fork();
	if (p == 0) { child = 1; return; }
	int st;
	if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
		bad++;
	forks++;
}
int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = h};
	sigaction(SIGALRM, &sa, 0);
	ualarm(20000, 20000);
	char b[4096];
	struct stat sb;
	for (long n = 0; forks < 40; n++) {
		snprintf(b, sizeof b, "%s/missing/%ld", argv[1], n);
		stat(b, &sb);
		if (child) {
			ualarm(0, 0);
			snprintf(b, sizeof b, "%s/child-%d", argv[1], (int)getpid());
			int fd = open(b, O_WRONLY | O_CREAT, 0644);
			_exit(fd >= 0 && close(fd) == 0 ? 7 : 8);
		}
	}
	ualarm(0, 0);
	printf("forks %d bad %d\n", (int)forks, (int)bad);
	return bad != 0;
}
C
if cc -o "$W/sigfork" "$W/sigfork.c"; then
	mkdir "$W/sf"
	timeout 120 "$ST" run --report "$W/sigfork.jsonl" -- "$W/sigfork" "$W/sf" > "$W/sigfork.out"; rc=$?
	check "forks in a signal handler: exit 0 and 40 children ($(cat "$W/sigfork.out"))" \
		sh -c "test $rc -eq 0 && grep -qx 'forks 40 bad 0' '$W/sigfork.out'"
	python3 - "$W/sigfork.jsonl" "$W/sf" > "$W/sigfork.chk" <<'P'
import json, sys
procs, writes = set(), {}
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "process": procs.add(r["pid"])
    elif r["type"] == "access" and r["path"].startswith(sys.argv[2] + "/child-"): writes[r["path"]] = r["pid"]
wrong = [p for p, pid in writes.items() if p != "%s/child-%d" % (sys.argv[2], pid)]
norec = [p for p, pid in writes.items() if pid not in procs]
print("%d writes, %d under another pid, %d without a process record" % (len(writes), len(wrong), len(norec)))
P
	check "forks in a signal handler: each child's write under its own pid, with its process record ($(cat "$W/sigfork.chk"))" \
		grep -qx '40 writes, 0 under another pid, 0 without a process record' "$W/sigfork.chk"
fi
# _Fork (glibc 2.34: a fork without the atfork handlers): the child is a process
# of its own, its access under its pid, with its process record
cat > "$W/ufork.c" <<'C'
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
extern pid_t _Fork(void);
int main(int argc, char **argv)
{
	char b[4096];
	struct stat sb;
	pid_t p = _Fork();
	if (p == 0) {
		snprintf(b, sizeof b, "%s/ufork-%d", argv[1], (int)getpid());
		_exit(stat(b, &sb) == 0 ? 1 : 0);
	}
	int st;
	return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
C
if cc -o "$W/ufork" "$W/ufork.c"; then
	"$ST" run --report "$W/ufork.jsonl" -- "$W/ufork" "$W"; rc=$?
	python3 - "$W/ufork.jsonl" "$W" > "$W/ufork.chk" <<'P'
import json, sys
procs, hits = set(), []
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "process": procs.add(r["pid"])
    elif r["type"] == "access" and r["path"].startswith(sys.argv[2] + "/ufork-"): hits.append((r["path"], r["pid"]))
ok = [p for p, pid in hits if p == "%s/ufork-%d" % (sys.argv[2], pid) and pid in procs]
print("%d lookups, %d under the child's own pid with its process record" % (len(hits), len(ok)))
P
	check "_Fork: the child's lookup under its own pid, with its process record ($(cat "$W/ufork.chk"), exit $rc)" \
		sh -c "test $rc -eq 0 && grep -qx '1 lookups, 1 under the child.s own pid with its process record' '$W/ufork.chk'"
fi
# A ^C at the terminal while the daemon starts (here: its policy read from a FIFO nobody
# has written yet): the terminal's SIGINT reached sandtrace's process group before CMD was
# in it, the CLI held it blocked, then took it for one CMD already had and passed nothing
# on: CMD started afterwards and ran to its end. Now CMD is not started: 130, a message.
mkdir -p "$W/early" && mkfifo "$W/early/pol"
python3 - "$ST" "$W/early" > "$W/early/out" 2>&1 <<'P'
import os, pty, sys, time
st, d = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.execv(st, [st, "run", "--policy", d + "/pol", "--", "sh", "-c", ": > " + d + "/started"])
time.sleep(0.5)
os.write(fd, b"\x03")                 # the terminal's ^C, to the foreground group
time.sleep(0.3)
try:                                  # the daemon can start now, if it still waits
    f = os.open(d + "/pol", os.O_WRONLY | os.O_NONBLOCK)
    os.write(f, b"allow read /\n"); os.close(f)
except OSError:
    pass
out = b""
while True:
    try: b = os.read(fd, 4096)
    except OSError: break
    if not b: break
    out += b
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("exit", os.waitstatus_to_exitcode(st))
P
check "^C while the daemon starts: CMD not started" test ! -e "$W/early/started"
check "^C while the daemon starts: exit 130, and said ($(tr '\r\n' '||' < "$W/early/out"))" \
	sh -c "grep -q 'exit 130' '$W/early/out' && grep -q 'Interrupt while the daemon started: sh not run' '$W/early/out'"
# The same daemon start that never ends (a FIFO policy nobody writes), stopped by a SIGTERM:
# the CLI held it for the 30 s of its ready timeout, then sent the daemon a SIGTERM the
# daemon holds blocked while it starts, and waited for it for good. Now it is taken within
# 100 ms, and a daemon that does not end at SIGTERM is killed after 2 s.
mkfifo "$W/early/pol2"
"$ST" run --policy "$W/early/pol2" -- sh -c ": > $W/early/started2" 2> "$W/early/err2" &
p=$!
sleep 0.5; kill -TERM $p
i=0; while kill -0 $p 2>/dev/null && [ $i -lt 400 ]; do sleep 0.1; i=$((i+1)); done
if kill -0 $p 2>/dev/null; then
	bad "SIGTERM while the daemon hangs at its start: sandtrace run still waits after 40 s"
	kill -KILL $p $(pgrep -f "[s]andtraced .*policy $W/early/pol2"); rc=hung
else
	wait $p; rc=$?
	check "SIGTERM while the daemon hangs at its start: 143 within $((i / 10)) s, CMD not run, said ($(cat "$W/early/err2"))" \
		sh -c "test $rc -eq 143 && test $i -lt 60 && test ! -e '$W/early/started2' && grep -q 'Terminated while the daemon started' '$W/early/err2'"
fi
check "SIGTERM while the daemon hangs at its start: no daemon left" sh -c "! pgrep -f '[s]andtraced .*policy $W/early/pol2' >/dev/null"

# CMD has ended and the daemon does not (held in a ptrace stop here, which the CLI does not
# see, as it sees a SIGSTOP; a long --manifest hashing alike):
# sandtrace run took every SIGINT or SIGTERM and dropped it, so it could be stopped only by
# SIGKILL or after its 120 s shutdown timeout. Now the first says what it waits for, the
# second kills the daemon, and the report says why it is incomplete.
mkdir -p "$W/sd"
"$ST" run --pidfile "$W/sd/pid" --report "$W/sd/r.jsonl" -- sh -c "
	while [ ! -s $W/sd/frozen ]; do sleep 0.05; done" 2> "$W/sd/err" &
p=$!
i=0; while [ ! -s "$W/sd/pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
"$DRV" freeze "$(cat "$W/sd/pid")" "$W/sd/thaw" > "$W/sd/frozen" & frz=$!
i=0; while [ ! -s "$W/sd/frozen" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
sleep 0.3; kill -TERM $p; sleep 0.5
check "daemon stopped after CMD: the first SIGTERM says what sandtrace waits for ($(cat "$W/sd/err"))" \
	sh -c "kill -0 $p && grep -q 'Terminated: waiting for the daemon to finish the report' '$W/sd/err'"
kill -TERM $p
i=0; while kill -0 $p 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
if kill -0 $p 2>/dev/null; then
	bad "daemon stopped after CMD: sandtrace run still waits 10 s after a second SIGTERM"
	kill -KILL $p "$(cat "$W/sd/pid")"
else
	wait $p
	check "daemon stopped after CMD: the second SIGTERM ends the run, the report says why" \
		grep -q '"complete":false,"reasons":\["daemon lost: sandtraced killed while writing the report: sandtrace run was told to stop twice' "$W/sd/r.jsonl"
fi
: > "$W/sd/thaw"; wait $frz
check "daemon stopped after CMD: no daemon left" sh -c "! kill -0 $(cat "$W/sd/pid") 2>/dev/null"

# A report that cannot be written in full (its file system fills up during the run): the
# daemon logged the same error once for every record after it (hundreds of lines), ended
# with status 0, and `sandtrace run` said nothing: the run looked like any other, with a
# report cut in the middle of a line. Now the error is logged once, the daemon ends with
# its own status, and the CLI names the report and the reason on stderr (--strict: 121).
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	mkdir -p "$W/full/fs"
	unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=16k tmpfs "$1/full/fs" || exit 99
		"$2" run --strict --report "$1/full/fs/r.jsonl" --log "$1/full/log" -- sh -c "
			i=0; while [ \$i -lt 400 ]; do cat $1/full/nofile-\$i 2>/dev/null; i=\$((i+1)); done"
	' sh "$W" "$ST" 2> "$W/full/err"; rc=$?
	check "report on a full file system: --strict exits 121 (got $rc)" test "$rc" -eq 121
	check "report on a full file system: stderr names the report and the reason ($(tr '\n' '|' < "$W/full/err" | cut -c1-300))" \
		grep -q "full/fs/r.jsonl: the report is cut short: a write failed: No space left on device" "$W/full/err"
	n=$(grep -c 'error: writing the report' "$W/full/log")
	check "report on a full file system: the write error logged once ($n times)" test "$n" -eq 1
fi

# A SIGTERM that comes just after the CLI made its private directory (mkdtemp in TMPDIR)
# and before it blocked the signals it forwards killed it at once and left the directory
# (with the command's argv file) behind in TMPDIR for good: 3 of 200 runs killed 0.5-4.5 ms
# after their start did. A preload made here sends the signal right after mkdtemp, every
# time. Now the signals are blocked before the directory is made: the run ends as one
# stopped while the daemon starts (143, CMD not run) and removes it.
mkdir -p "$W/mkdt/tmp"
cat > "$W/mkdt/kill.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
char *mkdtemp(char *t)
{
	char *(*real)(char *) = (char *(*)(char *))dlsym(RTLD_NEXT, "mkdtemp");
	char *r = real(t);
	unsetenv("LD_PRELOAD");
	kill(getpid(), SIGTERM);
	return r;
}
C
if gcc -shared -fPIC -o "$W/mkdt/kill.so" "$W/mkdt/kill.c" -ldl; then
	TMPDIR="$W/mkdt/tmp" LD_PRELOAD="$W/mkdt/kill.so" "$ST" run -- sh -c ": > $W/mkdt/started" 2> "$W/mkdt/err"
	rc=$?
	check "SIGTERM right after the private directory is made: 143, CMD not run (got $rc: $(cat "$W/mkdt/err"))" \
		sh -c "test $rc -eq 143 && test ! -e '$W/mkdt/started'"
	check "SIGTERM right after the private directory is made: no directory left in TMPDIR ($(ls "$W/mkdt/tmp" | tr '\n' ' '))" \
		test -z "$(ls -A "$W/mkdt/tmp")"
else
	bad "SIGTERM right after mkdtemp: cannot build the preload"
fi
# The same just after the CLI made the --report, --summary and --pidfile files to check
# they can be written (before it blocked the signals): killed at once, the empty files left
# (3 of 80 runs sent SIGTERM 0-9 ms after their start). A preload here sends it right after
# the open that makes each; now the run ends as one stopped while the daemon starts (143,
# CMD not run) and removes the files it made.
mkdir -p "$W/mkout"
cat > "$W/mkout/kill.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static int made(const char *name, const char *p, int flags, va_list ap)
{
	mode_t m = (flags & O_CREAT) ? va_arg(ap, mode_t) : 0;
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
	int r = real(p, flags, m);
	const char *which = getenv("KILL_AFTER");
	size_t n = strlen(p), w = which ? strlen(which) : 0;
	if ((flags & O_CREAT) && w && n >= w && !strcmp(p + n - w, which)) {
		unsetenv("LD_PRELOAD");
		kill(getpid(), SIGTERM);
	}
	return r;
}
int open(const char *p, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = made("open", p, flags, ap);
	va_end(ap);
	return r;
}
int open64(const char *p, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	int r = made("open64", p, flags, ap);
	va_end(ap);
	return r;
}
C
if gcc -shared -fPIC -o "$W/mkout/kill.so" "$W/mkout/kill.c" -ldl; then
	for f in r.jsonl s.txt p.pid; do
		rm -f "$W/mkout/r.jsonl" "$W/mkout/s.txt" "$W/mkout/p.pid" "$W/mkout/started"
		KILL_AFTER=/$f LD_PRELOAD="$W/mkout/kill.so" "$ST" run --report "$W/mkout/r.jsonl" \
			--summary="$W/mkout/s.txt" --pidfile "$W/mkout/p.pid" -- sh -c ": > $W/mkout/started" \
			2> "$W/mkout/err"
		rc=$?
		check "SIGTERM right after $f is made to check it: 143, CMD not run, no file left (got $rc: $(ls "$W/mkout" | tr '\n' ' '))" \
			sh -c "test $rc -eq 143 && test ! -e '$W/mkout/started' && test ! -e '$W/mkout/r.jsonl' && test ! -e '$W/mkout/s.txt' && test ! -e '$W/mkout/p.pid'"
	done
else
	bad "SIGTERM right after the outputs are made: cannot build the preload"
fi
# sandtrace run's stderr a pipe whose reader is gone (`... 2>&1 | head`): the CLI's
# summary (or the daemon's log it shows when the start fails) killed it by SIGPIPE: exit 141
# in place of CMD's status, and the private directory (report, log) left in TMPDIR. The CLI
# ignores SIGPIPE now; CMD still gets the disposition sandtrace was started with.
mkdir -p "$W/pipe/tmp"; printf 'bogus\n' > "$W/pipe/bad.pol"
{ TMPDIR="$W/pipe/tmp" "$ST" run --summary -- sh -c 'sleep 0.3; exit 3' 2>&1; echo $? > "$W/pipe/rc1"; } | true
{ TMPDIR="$W/pipe/tmp" "$ST" run --policy "$W/pipe/bad.pol" -- true 2>&1; echo $? > "$W/pipe/rc2"; } | true
sleep 0.3
check "stderr a broken pipe: the summary's run ends with CMD's status 3 (got $(cat "$W/pipe/rc1"))" test "$(cat "$W/pipe/rc1")" = 3
check "stderr a broken pipe: a daemon that fails to start gives 125 (got $(cat "$W/pipe/rc2"))" test "$(cat "$W/pipe/rc2")" = 125
check "stderr a broken pipe: no private directory left in TMPDIR ($(ls "$W/pipe/tmp" | tr '\n' ' '))" test -z "$(ls -A "$W/pipe/tmp")"
for how in default ignored; do
	if [ $how = ignored ]; then trap '' PIPE; fi
	want=$(grep SigIgn /proc/self/status)
	got=$("$ST" run -- grep SigIgn /proc/self/status)
	check "CMD's SIGPIPE as sandtrace's ($how: $got, want $want)" test "$got" = "$want"
	trap - PIPE
done
# The CLI makes --report, --summary and --pidfile to check that they can be written; a
# run that then failed before CMD started (a bad policy, two options naming one file) left
# them there empty, and `sandtrace report` of that "report" said it is not one. They are
# removed again when still empty; a file that was there before is kept.
mkdir -p "$W/mk"; cd "$W/mk"; touch kept
"$ST" run --report r1 --summary=s1 --pidfile p1 --policy "$W/mk/none.pol" -- true 2> err1; rc1=$?
"$ST" run --report r2 --summary=r2 -- true 2> err2; rc2=$?
"$ST" run --report kept --policy "$W/mk/none.pol" -- true 2> err3
check "a run that fails before CMD: 125, the files it made for the check removed (left: $(ls | grep -v '^err\|^kept$' | tr '\n' ' '))" \
	sh -c "test $rc1 -eq 125 && test $rc2 -eq 125 && test ! -e r1 && test ! -e s1 && test ! -e p1 && test ! -e r2"
check "... a report that was there before kept" test -e kept
"$ST" run --report r4 -- sh -c 'exit 4'
check "... and a run that ran keeps its report" sh -c "'$ST' report r4 > /dev/null"
cd "$W"
# Two runs at once given the same --report: the second truncated the first's report and
# both wrote into it, a file of torn and mixed lines that still said "trace complete". The
# daemon locks its report before truncating it: the second run stops before its CMD (125)
# and the first's report is whole. (The first run waits on a FIFO the test opens after.)
mkdir -p "$W/two"; mkfifo "$W/two/hold"
"$ST" run --report "$W/two/r.jsonl" --pidfile "$W/two/pid" -- sh -c "cat $W/two/hold > /dev/null; echo first" > "$W/two/out1" &
p1=$!
i=0; while [ ! -s "$W/two/pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
"$ST" run --report "$W/two/r.jsonl" -- sh -c ": > $W/two/started2" 2> "$W/two/err2"; rc2=$?
echo > "$W/two/hold"; wait $p1; rc1=$?
check "two runs, one --report: the second refused before its CMD (got $rc2: $(head -1 "$W/two/err2"))" \
	sh -c "test $rc2 -eq 125 && test ! -e '$W/two/started2' && grep -q 'another sandtrace run is writing it' '$W/two/err2'"
check "two runs, one --report: the first ran, and its report is whole (one run, one summary, every line a record, complete)" \
	sh -c "test $rc1 -eq 0 && test \"\$(cat '$W/two/out1')\" = first && python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
t = [r[\"type\"] for r in rs]
assert t.count(\"run\") == 1 and t.count(\"summary\") == 1, t
assert rs[-1][\"complete\"] is True, rs[-1]
' '$W/two/r.jsonl'"
done_
