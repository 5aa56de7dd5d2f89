#!/bin/sh
# tests/integration/pathcalls.sh - every system call that takes a path name (drivers/pathcalls.c's table, itself checked against strace's %file class), by syscall() and by its libc function: fenced with the name hidden, refused before the kernel sees it, as a missing name; traced, recorded with its kind; output as untraced.
. "$(dirname "$0")/lib.sh"
PC=$B/tests/drivers/pathcalls
"$PC" list > "$W/table"
if [ $? -eq 77 ]; then
	echo "skip - the table is x86-64's"; done_; exit
fi

# ---------------------------------------------------------------------------
# (a) the table is complete: every call strace puts in %file is in it (or
# excluded, with a reason), under the number strace gives it; every libc
# function of a call's own name is called by name.  A call newer than this
# strace (it prints syscall_0x...) is taken as the table says.
# ---------------------------------------------------------------------------
if command -v strace > /dev/null 2>&1 && strace -n -qq -e trace=none true 2>/dev/null; then
	strace -n -qq -e trace=%file -e signal=none -o "$W/sfile" "$PC" probe 2>"$W/strace.err"
	strace -n -qq -e trace=all -e signal=none -o "$W/sall" "$PC" probe 2>>"$W/strace.err"
	names() { sed -n 's/^\[ *\([0-9]*\)\] \([a-z_0-9]*\)(.*/\1 \2/p' "$1" | grep -v ' syscall_0x' | sort -u; }
	names "$W/sfile" > "$W/strace-file"
	names "$W/sall" > "$W/strace-all"
	check "strace saw the probe's %file calls ($(wc -l < "$W/strace-file"))" test "$(wc -l < "$W/strace-file")" -gt 40
	cut -d' ' -f1,2 "$W/table" | sort -u > "$W/table-names"
	comm -23 "$W/strace-file" "$W/table-names" > "$W/untabled"
	if [ -s "$W/untabled" ]; then
		bad "strace's %file calls missing from drivers/pathcalls.c's table: $(tr '\n' ' ' < "$W/untabled")"
	else ok "every strace %file call is in the table ($(wc -l < "$W/strace-file"))"; fi
	# a table number this strace knows must be the call's (not another's)
	awk 'NR==FNR { n[$1] = $2; next } ($1 in n) && n[$1] != $2 { print $1, $2, "is", n[$1] }' \
		"$W/strace-all" "$W/table-names" > "$W/misnamed"
	if [ -s "$W/misnamed" ]; then bad "table numbers strace names otherwise: $(tr '\n' ';' < "$W/misnamed")"
	else ok "the table's numbers are strace's"; fi
else
	echo "skip - no strace with -n (6.0 or later): the table is not checked against %file"
fi
"$PC" libc-unlisted > "$W/unlisted"
check "every libc function of a table call's name is called by it ($(tr '\n' ' ' < "$W/unlisted"))" test ! -s "$W/unlisted"

"$PC" cases > "$W/cases"
"$PC" noprobe > "$W/noprobe"
mkdir "$W/d" "$W/d/hid"
: > "$W/d/vis"
D=$W/d
cd "$W"

# ---------------------------------------------------------------------------
# (b) untraced and traced: the same results (the names' parent is missing:
# every call fails at it, or earlier on its flags or privileges)
# ---------------------------------------------------------------------------
"$PC" "$D" plain > "$W/out1"
check "untraced: one line per case" test "$(wc -l < "$W/out1")" -eq "$(wc -l < "$W/cases")"
"$ST" run --report "$W/t1.jsonl" -- "$PC" "$D" plain > "$W/out2" 2>"$W/err2"
check "traced run exits 0" test $? -eq 0
if cmp -s "$W/out1" "$W/out2"; then ok "traced output identical to untraced"; else
	bad "traced output differs from untraced:"; diff "$W/out1" "$W/out2" | sed 's/^/    /'
fi

# ---------------------------------------------------------------------------
# (c) fenced, DIR/hid hidden, the program's name forbidden to reach the kernel
# (seccomp): each call is refused as for a missing name (what the untraced
# call gave), never forwarded; a call whose refusal is not probed (it may
# ignore the name) gives ENOENT.
# ---------------------------------------------------------------------------
cat > "$W/policy" <<P
$(system_rules)
allow read /lib
allow read /lib64
allow exec /lib
allow exec /lib64
allow read $B/tests/drivers
allow exec $B/tests/drivers
allow any $D/vis
default deny
P
"$ST" run --fence --policy "$W/policy" --report "$W/f.jsonl" -- "$PC" "$D" seccomp > "$W/outf" 2>"$W/errf"
check "fenced run exits 0" test $? -eq 0
check "fenced: one line per case" test "$(wc -l < "$W/outf")" -eq "$(wc -l < "$W/cases")"
grep ' FORWARDED$' "$W/outf" | cut -d' ' -f1 > "$W/unjudged"
if [ -s "$W/unjudged" ]; then
	bad "fenced: calls that reached the kernel with a hidden name (the shim does not judge them): $(tr '\n' ' ' < "$W/unjudged")"
else ok "fenced: no call reached the kernel with a hidden name"; fi
awk 'FILENAME == ARGV[1] { np[$1] = 1; next }
     FILENAME == ARGV[2] { u[$1] = $2; next }
     { want = ($1 in np) ? "ENOENT" : u[$1]; if ($2 != want) print $1, $2, "(untraced: " u[$1] ")" }' \
	"$W/noprobe" "$W/out1" "$W/outf" > "$W/fdiff"
if [ -s "$W/fdiff" ]; then
	bad "fenced: calls not refused as for a missing name:"; sed 's/^/    /' "$W/fdiff"
else ok "fenced: every call refused as for a missing name ($(wc -l < "$W/outf"))"; fi

# ---------------------------------------------------------------------------
# (d) traced, the name forbidden to reach the kernel: every call is forwarded
# as it came (FORWARDED) and recorded with its kind on its name
# ---------------------------------------------------------------------------
"$ST" run --report "$W/t2.jsonl" -- "$PC" "$D" seccomp > "$W/out3" 2>"$W/err3"
check "traced (seccomp) run exits 0" test $? -eq 0
grep -v ' FORWARDED$' "$W/out3" > "$W/notfwd"
if [ -s "$W/notfwd" ]; then bad "traced: calls not forwarded as they came: $(tr '\n' ';' < "$W/notfwd")"
else ok "traced: every call forwarded with the program's name"; fi
"$ST" report --list "$W/t2.jsonl" > "$W/list"
while read -r label kind; do
	if grep -qxF "$kind	$D/hid/nodir/$label" "$W/list"; then PASS=$((PASS+1)); else
		bad "traced: $label not recorded as $kind (recorded: $(grep "/$label\$" "$W/list" | cut -f1 | tr '\n' ' '))"
	fi
done < "$W/cases"
echo "ok   - traced: records checked for $(wc -l < "$W/cases") cases"

# ---------------------------------------------------------------------------
# (e) root: the calls made for real, by syscall() and by libc.  acct in a pid
# namespace of its own (accounting is the namespace's): a file written,
# recorded W; pivot_root (the driver unshares its mount namespace): the root
# moved to a tmpfs, the new root recorded Q and the old one's place W, the
# run complete.  Untraced and traced print the same; fenced, the names
# hidden, the same as untraced with the names missing (W/nx), and nothing
# written or mounted.  Skipped without root.
# ---------------------------------------------------------------------------
if [ "$(id -u)" = 0 ] && unshare -p -f true 2>/dev/null && unshare -m true 2>/dev/null; then
	cat > "$W/rpolicy" <<P
$(system_rules)
allow read /lib
allow read /lib64
allow exec /lib
allow exec /lib64
allow read $B/tests/drivers
allow exec $B/tests/drivers
default deny
P
	mkdir "$W/a" "$W/p"
	for how in sys libc; do
		: > "$W/a/acct1.$how"; : > "$W/a/acct2.$how"; : > "$W/a/acct3.$how"
		unshare -p -f "$PC" acct "$W/a/acct1.$how" $how > "$W/ra1.$how"
		check "acct ($how) untraced: accounting written" \
			test "$(tr '\n' ' ' < "$W/ra1.$how")" = "acct ok acct-off ok written yes "
		unshare -p -f "$ST" run --report "$W/ra.$how.jsonl" -- \
			"$PC" acct "$W/a/acct2.$how" $how > "$W/ra2.$how" 2>"$W/ra2.$how.err"
		check "acct ($how) traced: output identical to untraced" cmp -s "$W/ra1.$how" "$W/ra2.$how"
		check "acct ($how) traced: the file recorded W" has W "$W/a/acct2.$how" "$W/ra.$how.jsonl"
		unshare -p -f "$PC" acct "$W/nx/acct" $how > "$W/ram.$how"
		unshare -p -f "$ST" run --fence --policy "$W/rpolicy" --report "$W/raf.$how.jsonl" -- \
			"$PC" acct "$W/a/acct3.$how" $how > "$W/raf.$how" 2>"$W/raf.$how.err"
		check "acct ($how) fenced: as untraced on a missing file ($(tr '\n' ' ' < "$W/raf.$how"))" \
			cmp -s "$W/ram.$how" "$W/raf.$how"
		check "acct ($how) fenced: the hidden file not written" test ! -s "$W/a/acct3.$how"

		mkdir "$W/p/new1.$how" "$W/p/new2.$how" "$W/p/new3.$how"
		"$PC" pivot "$W/p/new1.$how" $how > "$W/rp1.$how"
		check "pivot_root ($how) untraced: every step ok but the old root's detached /etc" \
			test "$(grep -cv ' ok$' "$W/rp1.$how")" -eq 1 -a "$(tail -1 "$W/rp1.$how")" = "stat-old-etc ENOENT"
		"$ST" run --report "$W/rp.$how.jsonl" -- "$PC" pivot "$W/p/new2.$how" $how \
			> "$W/rp2.$how" 2>"$W/rp2.$how.err"
		check "pivot_root ($how) traced run exits 0" test $? -eq 0
		check "pivot_root ($how) traced: output identical to untraced" cmp -s "$W/rp1.$how" "$W/rp2.$how"
		check "pivot_root ($how) traced: the new root recorded Q" has Q "$W/p/new2.$how" "$W/rp.$how.jsonl"
		check "pivot_root ($how) traced: the old root's place recorded W" \
			has W "$W/p/new2.$how/old" "$W/rp.$how.jsonl"
		"$ST" report "$W/rp.$how.jsonl" > "$W/rp.$how.sum" 2>&1
		check "pivot_root ($how) traced: the run is complete" grep -q 'trace complete' "$W/rp.$how.sum"
		"$PC" pivot "$W/nx/new" $how > "$W/rpm.$how"
		"$ST" run --fence --policy "$W/rpolicy" --report "$W/rpf.$how.jsonl" -- \
			"$PC" pivot "$W/p/new3.$how" $how > "$W/rpf.$how" 2>"$W/rpf.$how.err"
		check "pivot_root ($how) fenced: as untraced on a missing name" cmp -s "$W/rpm.$how" "$W/rpf.$how"
		check "pivot_root ($how) fenced: nothing mounted on the hidden name" \
			test -z "$(ls -A "$W/p/new3.$how")"
	done
else
	echo "skip - acct and pivot_root made for real: not root, or no pid or mount namespaces"
fi
done_
