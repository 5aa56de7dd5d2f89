#!/bin/sh
# tests/integration/uring.sh - an io_uring reaches files unseen: trace-only marks the report incomplete, a policy that can refuse refuses the setup (ENOSYS) and the program falls back.
. "$(dirname "$0")/lib.sh"
URING=$B/tests/drivers/uring
URING_LIB=$B/tests/drivers/uring_lib
URING_DL=$B/tests/drivers/uring_dl.so
mkdir -p "$W/hidden" "$W/pub"
echo secret > "$W/hidden/f"
echo public > "$W/pub/f"
cat > "$W/policy" <<P
allow read ${B}/tests/drivers
allow exec ${B}/tests/drivers
allow read ${W}/pub
$(system_rules)
P
# a policy without a fence whose only refusal is one deny rule
printf 'deny read %s\n' "$W/hidden" > "$W/deny"
# a policy that can refuse nothing: allow rules, no fence
printf 'allow read %s\n' "$W" > "$W/allow"

out=$("$URING" sys "$W/hidden/f")
if [ "$out" != "io_uring: secret" ]; then
	# a kernel without io_uring, or one that refuses it here (seccomp, the sysctl)
	echo "skip - io_uring is not available on this machine ($out)"
	done_; exit
fi

# ways of making a ring: "DRIVER:HOW:CALL", CALL the function the shim refuses
ways="$URING:sys:io_uring_setup"
if [ -x "$URING_LIB" ]; then
	ways="$ways $URING_LIB:lib-init:io_uring_queue_init"
	ways="$ways $URING_LIB:lib-params:io_uring_queue_init_params $URING_LIB:lib-setup:io_uring_setup"
else
	bad "uring_lib not built: liburing-dev is missing (scripts/setup installs it)"
fi

# io_uring: the report's process records of pids that set up a ring it let through
uring_procs() {
	python3 -c 'import json,sys
print(sum(1 for l in open(sys.argv[1]) for r in [json.loads(l)] if r.get("type")=="process" and r.get("io_uring") is True))' "$1"
}
# uring_violation REPORT CALL: a violation record of the io_uring CALL refused with ENOSYS
uring_violation() {
	python3 -c 'import json,sys,errno
sys.exit(0 if any(r.get("type")=="violation" and r.get("call")==sys.argv[2] and r.get("class")=="io_uring" and r.get("err")==errno.ENOSYS for l in open(sys.argv[1]) for r in [json.loads(l)]) else 1)' "$1" "$2"
}
reason_io_uring() { summary_field "$1" reasons | grep -q 'set up an io_uring'; }

for w in $ways; do
	drv=${w%%:*}; how=${w#*:}; call=${how#*:}; how=${how%%:*}
	untraced=$("$drv" "$how" "$W/hidden/f")
	check "$how untraced: read through the ring (got: $untraced)" test "$untraced" = "io_uring: secret"

	# trace-only: let through, the output unchanged, the report incomplete and saying why
	R=$W/$how-trace.jsonl
	out=$("$ST" run --report "$R" -- "$drv" "$how" "$W/hidden/f")
	check "$how traced: output as untraced (got: $out)" test "$out" = "$untraced"
	check "$how traced: summary incomplete" test "$(summary_field "$R" complete)" = false
	check "$how traced: the reason names the io_uring" reason_io_uring "$R"
	check "$how traced: summary io_uring 1" test "$(summary_field "$R" io_uring)" = 1
	check "$how traced: the process record is marked" test "$(uring_procs "$R")" = 1
	check "$how traced: no violation" test "$(summary_field "$R" violations)" = 0
	"$ST" run --strict -- "$drv" "$how" "$W/hidden/f" >/dev/null; rc=$?
	check "$how traced: --strict exits 121 (got $rc)" test $rc = 121

	# fenced: the setup refused as by a kernel without io_uring, the fallback
	# taken, the hidden file not read
	R=$W/$how-fence.jsonl
	out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- "$drv" "$how" "$W/hidden/f")
	check "$how fenced: setup refused (ENOSYS), the fallback hidden (got: $out)" \
		test "$out" = "no io_uring (ENOSYS)
fallback: open ENOENT"
	check "$how fenced: a violation of $call" uring_violation "$R" "$call"
	check "$how fenced: summary complete" test "$(summary_field "$R" complete)" = true
	check "$how fenced: no process marked" test "$(uring_procs "$R")" = 0
	check "$how fenced: sandtrace report names it" \
		sh -c "'$ST' report '$R' | grep -q '  violation: $call refused (pid'"
	out=$("$ST" run --fence --policy "$W/policy" -- "$drv" "$how" "$W/pub/f")
	check "$how fenced: an allowed file read by the fallback (got: $out)" \
		test "$out" = "no io_uring (ENOSYS)
fallback: public"
done

# the policy decides, not --fence: one deny rule can refuse, allow rules alone cannot
out=$("$ST" run --policy "$W/deny" -- "$URING" sys "$W/hidden/f")
check "deny rule, no fence: setup refused (got: $out)" test "$out" = "no io_uring (ENOSYS)
fallback: open ENOENT"
R=$W/allow.jsonl
out=$("$ST" run --policy "$W/allow" --report "$R" -- "$URING" sys "$W/hidden/f")
check "allow rules alone: let through (got: $out)" test "$out" = "io_uring: secret"
check "allow rules alone: summary incomplete" reason_io_uring "$R"
# without the arena the policy is the daemon's: the run's flags say it can refuse
R=$W/nocache.jsonl
out=$("$ST" run --no-cache --fence --policy "$W/policy" --report "$R" -- "$URING" sys "$W/hidden/f")
check "--no-cache fenced: setup refused (got: $out)" test "$out" = "no io_uring (ENOSYS)
fallback: open ENOENT"
check "--no-cache fenced: a violation" uring_violation "$R" io_uring_setup
R=$W/nocache-trace.jsonl
"$ST" run --no-cache --report "$R" -- "$URING" sys "$W/hidden/f" >/dev/null
check "--no-cache traced: summary incomplete" reason_io_uring "$R"

# a ring set up by an inline system call is not seen; entering it by syscall() is
R=$W/inline-trace.jsonl
out=$("$ST" run --report "$R" -- "$URING" inline-setup "$W/hidden/f")
check "inline setup traced: output as untraced (got: $out)" test "$out" = "io_uring: secret"
check "inline setup traced: summary incomplete" reason_io_uring "$R"
R=$W/inline-fence.jsonl
out=$("$ST" run --fence --policy "$W/policy" --report "$R" -- "$URING" inline-setup "$W/hidden/f")
check "inline setup fenced: io_uring_enter refused, nothing read (got: $out)" \
	test "$out" = "openat: ENOSYS"
check "inline setup fenced: a violation of io_uring_enter" uring_violation "$R" io_uring_enter

# liburing reached from a library dlopen'ed RTLD_LOCAL: the call comes to the
# shim, which finds liburing outside the global scope
if [ -x "$URING_LIB" ]; then
	R=$W/dl-trace.jsonl
	out=$("$ST" run --report "$R" -- "$URING" dl-init "$W/hidden/f" "$URING_DL")
	check "RTLD_LOCAL liburing traced: the ring made (got: $out)" test "$out" = "io_uring: ring made"
	check "RTLD_LOCAL liburing traced: summary incomplete" reason_io_uring "$R"
	out=$("$ST" run --fence --policy "$W/policy" -- "$URING" dl-init "$W/hidden/f" "$URING_DL")
	check "RTLD_LOCAL liburing fenced: refused (got: $out)" test "$out" = "no io_uring (ENOSYS)
fallback: open ENOENT"
fi
done_
