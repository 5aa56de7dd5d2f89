#!/bin/sh
# tests/integration/badptr.sh - a bad pointer for a name (drivers/badptr.c: every path-taking family, each call in a child) gets what it gets untraced (EFAULT, or libc's own fault), traced and fenced alike: no SIGSEGV inside the shim, nothing recorded of it.
. "$(dirname "$0")/lib.sh"
BP=$B/tests/drivers/badptr
# the pointers the shim tells without reading them (shim.h st__unreadable):
# (char *)1, (char *)-1, the kernel half, just past the user half.  An
# unmapped or PROT_NONE page inside the user range is not told (README,
# Known limits): `badptr DIR protnone` still dies in the shim.
PTRS="one m1 kernel noncanon"
mkdir "$W/d"
"$BP" "$W/d" $PTRS > "$W/u" 2>"$W/u.err"
check "untraced: ran" test $? -eq 0
n=$("$BP" "$W/d" list | wc -l)
check "untraced: one line per case and pointer ($n cases)" \
	test "$(wc -l < "$W/u")" -eq $((n * 4))
check "untraced: most calls fail with EFAULT" test "$(grep -c ' EFAULT$' "$W/u")" -gt $((n * 2))
same() { # same WHAT FILE: FILE's lines are the untraced ones
	if cmp -s "$W/u" "$2"; then ok "$1: same results as untraced"; else
		bad "$1: results differ from untraced:"; diff "$W/u" "$2" | sed 's/^/    /' | head -40
	fi
}

R=$W/trace.jsonl
"$ST" run --report "$R" -- "$BP" "$W/d" $PTRS > "$W/t" 2>"$W/t.err"
check "traced: exits 0" test $? -eq 0
same "traced" "$W/t"
check "traced: the report is complete" test "$(summary_field "$R" complete)" = true
# what a bad name could leave: a record of no absolute path, or of the
# bytes the shim read where it should not have
"$ST" report --list "$R" > "$W/list"
check "traced: every record names an absolute path" test "$(cut -f2- "$W/list" | grep -cv '^/')" -eq 0
check "traced: nothing but the driver, its PATH search and its good names recorded outside the system" \
	test "$(cut -f2- "$W/list" | grep -v '^/usr/\|^/etc/\|^/lib\|^/proc/\|^/dev/\|^/sys/\|^/run/' |
		grep -v "^$W/d/nx/x\$\|^$BP\$\|/true\$" | wc -l)" -eq 0

# fenced: W/d allowed, everything else the system's; a bad name is never
# judged (nothing to hide), the kernel answers
{ system_rules; printf 'allow any %s\n' "$W/d"; } > "$W/pol"
RF=$W/fence.jsonl
"$ST" run --fence --policy "$W/pol" --report "$RF" -- "$BP" "$W/d" $PTRS > "$W/f" 2>"$W/f.err"
check "fenced: exits 0" test $? -eq 0
same "fenced" "$W/f"
check "fenced: no violation" test "$(summary_field "$RF" violations)" = 0

# one call of each kind in a process of its own, no fork between: the hit
# path (a warm stat) and the ordinary one meet the bad name in the same
# thread after good ones
cat > "$W/warm.c" <<'C'
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
int main(void)
{
	struct stat st;
	for (int i = 0; i < 1000; i++) /* past the memo's trial: the hit path */
		stat("/usr", &st);
	const char *bad[] = {(char *)1, (char *)-1, (char *)0xffff800000000000ul};
	for (int i = 0; i < 3; i++) {
		errno = 0;
		int r = stat(bad[i], &st);
		printf("%d %s\n", r, strerrorname_np(errno));
	}
	return 0;
}
C
cc -O2 -o "$W/warm" "$W/warm.c" || bad "cc warm.c"
"$W/warm" > "$W/wu"
"$ST" run -- "$W/warm" > "$W/wt"
check "warm stat loop, then bad names: traced as untraced (-1 EFAULT)" \
	sh -c "cmp -s '$W/wu' '$W/wt' && test \$(grep -c '^-1 EFAULT$' '$W/wt') -eq 3"
done_
