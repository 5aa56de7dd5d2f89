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
out=$("$ST" run --fence --policy "$W/fz/policy" --pidfile "$W/fz/pid" -- sh -c "sleep 1.5; $DRV open-r $W/fz/out/secret; $DRV open-r $W/fz/in/ok; $DRV open-r $W/fz/in/asked" 2>/dev/null &
      sleep 0.8; kill -9 "$(cat "$W/fz/pid")"; wait) 
out2=$("$ST" run --fence --fail-open --policy "$W/fz/policy" --pidfile "$W/fz/pid2" -- sh -c "sleep 1.5; $DRV open-r $W/fz/out/secret; $DRV open-r $W/fz/in/asked" 2>/dev/null &
      sleep 0.8; kill -9 "$(cat "$W/fz/pid2")"; wait)
cd "$W"
check "daemon lost, --fail-open: denial still ENOENT" test "$(echo "$out2" | sed -n 1p)" = ENOENT
check "daemon lost, --fail-open: ask allowed"         test "$(echo "$out2" | sed -n 2p)" = ok
check "daemon lost, fenced: denial still ENOENT"      test "$(echo "$out" | sed -n 1p)" = ENOENT
check "daemon lost, fenced: allowed read still works" test "$(echo "$out" | sed -n 2p)" = ok
check "daemon lost, fenced: ask fails closed"         test "$(echo "$out" | sed -n 3p)" = ENOENT
# 3. the CLI killed with SIGKILL: socket dir and arena removed (the arena's
#    name carries the daemon's pid: other runs on the machine do not count)
"$ST" run --pidfile "$W/pid2" -- sleep 30 &
cli=$!
sleep 1
dpid=$(cat "$W/pid2")
check "arena exists while running" sh -c "ls /dev/shm | grep -q '^sandtrace-$dpid-'"
kill -9 $cli
sleep 2
check "arena removed after CLI SIGKILL" sh -c "! ls /dev/shm | grep -q '^sandtrace-$dpid-'"
check "daemon gone after CLI SIGKILL" sh -c "! kill -0 $dpid 2>/dev/null"
pkill -f "sleep 30" 2>/dev/null
# 4. a child that drops privileges is still traced
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$W"; chmod 644 present
	R3=$W/priv.jsonl
	"$ST" run --report "$R3" -- setpriv --reuid=65534 --regid=65534 --clear-groups cat present >/dev/null
	check "unprivileged child traced" has R "$W/present" "$R3"
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
kill -TERM $dpid; wait $dpid
check "standalone: phase reads recorded" has R "$W/present" "$W/standalone.jsonl"
check "standalone: missing recorded" has N "$W/phase2-missing" "$W/standalone.jsonl"
check "standalone: socket removed" test ! -e "$SOCK"
done_
