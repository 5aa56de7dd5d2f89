#!/bin/sh
# tests/integration/fsfuzz.sh - a differential test of the cache's coherence: random, seeded sequences of namespace changes and accesses (drivers/fsfuzz.c) give the same output and the same records with the cache and with --no-cache, and the output of an untraced run where the policy hides nothing; the sequences it found wrong, minimised, are fixed checks.
. "$(dirname "$0")/lib.sh"
FZ=$FSFUZZ
# the tree's root, the same path in every run so that the records compare; a name the
# driver makes escapes it by at most three "..", which stay inside box
T=$W/box/p/q/t
drivers_rules() {
	system_rules
	printf 'allow read %s/tests/drivers\nallow exec %s/tests/drivers\n' "$B" "$B"
}
# all: hides nothing the driver reaches; fence: t/a allowed, t/h and the rest hidden;
# mix: fenced, t/a/e hidden, t/a/d read-only, t/h/d readable; deny: trace-only, t/h denied;
# none: trace-only, no policy
{ drivers_rules; echo "allow any $W/box"; } > "$W/p.all"
{ drivers_rules; echo "allow any $T/a"; } > "$W/p.fence"
echo "deny any $T/h" > "$W/p.deny"
{ drivers_rules; printf 'deny any %s/a/e\nallow read %s/a/d\nallow any %s/a\nallow read %s/h/d\n' "$T" "$T" "$T" "$T"; } > "$W/p.mix"
fresh() { rm -rf "$W/box"; mkdir -p "$T" && "$FZ" setup "$T"; }
# records: the (kind, path) set and the violations' (kind, path, class) set; an
# O_TMPFILE's name ("d/#INODE") carries the inode number of the run
records() {
	{
		"$ST" report --list "$1"
		python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l)
    if r.get("type")=="violation": print("V\t%s\t%s\t%s"%(r.get("kind"),r.get("path"),r.get("class")))' "$1"
	} | sed 's|/#[0-9]*|/#I|g' | sort -u
}
# traced NAME MODE OPTION ARGS...: one run of the driver, its output in $W/NAME.out and its
# records in $W/NAME.set
traced() {
	n=$1 m=$2 o=$3; shift 3
	fresh
	case $m in deny) f="--policy $W/p.$m" ;; none) f= ;; *) f="--fence --policy $W/p.$m" ;; esac
	"$ST" run $o $f --report "$W/$n.r" -- "$FZ" "$@" > "$W/$n.out" 2> "$W/$n.err"
	records "$W/$n.r" > "$W/$n.set"
}
same() { cmp -s "$W/$1" "$W/$2"; }
# differential MODE ARGS...: with the cache and with --no-cache, the same output and records
differential() {
	m=$1; shift
	traced c "$m" "" "$@"
	traced nc "$m" --no-cache "$@"
	same c.out nc.out && same c.set nc.set
}

# ---------------------------------------------------------------------------
# (a) the driver is deterministic, and its sequences do something: an untraced run
# twice gives the same output, in which calls succeed and fail, children and
# threads take steps
# ---------------------------------------------------------------------------
fresh; "$FZ" run "$T" 7 300 > "$W/u1.out"
fresh; "$FZ" run "$T" 7 300 > "$W/u2.out"
check "fsfuzz: an untraced sequence is the same twice" same u1.out u2.out
check "fsfuzz: it has 300 steps, calls that succeed and calls that fail" \
	sh -c "grep -q '^299 ' '$W/u1.out' && grep -q ' = 0' '$W/u1.out' && grep -q ' = -1 ENOENT' '$W/u1.out'"
check "fsfuzz: steps in forked children and in threads" \
	sh -c "grep -q '^[0-9]*c[0-9]' '$W/u1.out' && grep -q '^[0-9]*t[0-9]' '$W/u1.out'"

# ---------------------------------------------------------------------------
# (b) found by the fuzzer, minimised: a directory's memo of "resolves to
# itself" (shim/check.c, KEY_DIR_SELF) made from "f/d" vouched for f, a file, and
# a later "f/.." was resolved lexically to f's directory instead of failing at f
# (ENOTDIR): recorded as the directory with the cache, as f without, and judged
# as the directory, which a policy that denies the directory and allows f shows
# as ENOENT where the kernel says ENOTDIR
# ---------------------------------------------------------------------------
fresh
for o in "" --no-cache; do
	"$ST" run $o --policy "$W/p.all" --fence --report "$W/r26$o" -- sh -c \
		"'$DRV' unlink '$T/h/f/d'; '$DRV' open-r '$T/h/f/../'" > "$W/o26$o"
	records "$W/r26$o" > "$W/s26$o"
done
check "unlink h/f/d; open h/f/../ (minimised): the same output with the cache and without" \
	same o26 o26--no-cache
check "... the same records" same s26 s26--no-cache
check "... the record is the file's, where the lookup fails" has R "$T/h/f" "$W/r26"
mkdir -p "$W/dd/d"; echo f > "$W/dd/d/f"
{ drivers_rules; echo "allow any $W/dd/d/f"; echo "deny any $W/dd/d"; } > "$W/p.dd"
for o in "" --no-cache; do
	out=$("$ST" run $o --fence --policy "$W/p.dd" -- sh -c \
		"'$DRV' stat '$W/dd/d/f/x'; '$DRV' stat '$W/dd/d/f/..'; '$DRV' stat '$W/dd/d/f/../'")
	check "f/x then f/.. and f/../, d denied and f allowed, ${o:-with the cache}: ENOTDIR as untraced ($(echo $out))" \
		test "$(echo $out)" = "$(for c in x .. ../; do "$DRV" stat "$W/dd/d/f/$c"; done | tr '\n' ' ' | sed 's/ $//')"
done

# found by the fuzzer (seed 5 of drivers/fsfuzz.c, minimised: chdir a/d; exchange
# a/d and a/m, a link; a name relative to the cwd): without the arena (--no-cache)
# the shim kept its copy of the cwd, which no generation told to be stale once an
# ancestor moved, and resolved relative names through what took its place, here a
# link to a hidden directory: ENOENT where untraced the name is there
mkdir -p "$W/cw"
cat > "$W/cw.py" <<'PY'
import ctypes, os, sys
t = sys.argv[1]
libc = ctypes.CDLL(None, use_errno=True)
def st(n):
    try:
        os.stat(n); return "ok"
    except OSError as e:
        return e.strerror
os.chdir(t + "/a/d")
r = [st("x")]
if libc.renameat2(-100, (t + "/a/d").encode(), -100, (t + "/a/m").encode(), 2) != 0:
    r.append("exchange:" + os.strerror(ctypes.get_errno()))
print(" ".join(r + [st("x"), st("./x")]))
PY
cw_tree() { rm -rf "$W/cw/a" "$W/cw/h"; mkdir -p "$W/cw/a/d" "$W/cw/h"; echo x > "$W/cw/a/d/x"; ln -s "$W/cw/h" "$W/cw/a/m"; }
{ system_rules; echo "allow read $W/cw.py"; echo "allow any $W/cw/a"; } > "$W/p.cw"
cw_tree; want=$(/usr/bin/python3 "$W/cw.py" "$W/cw")
check "chdir d, d exchanged with a link to a hidden directory, untraced: the name is there ($want)" \
	test "$want" = "ok ok ok"
for o in "" --no-cache; do
	cw_tree
	out=$("$ST" run $o --fence --policy "$W/p.cw" -- /usr/bin/python3 "$W/cw.py" "$W/cw")
	check "... fenced, ${o:-with the cache}: the same ($out)" test "$out" = "$want"
done
cw_tree
"$ST" run --no-cache --report "$W/rcw" -- /usr/bin/python3 "$W/cw.py" "$W/cw" > /dev/null
check "... trace-only, --no-cache: recorded in the moved directory" has Q "$W/cw/a/m/x" "$W/rcw"
check "... not through the link" not_has "$W/cw/h/x" "$W/rcw"

# found by the fuzzer (seed 13, minimised): rename("f", "f/n") with f a link to a
# directory moves the link into that directory, where "f/n" led before the call.  With
# the arena a rename's names were resolved after the call when the verdict was cached
# (or there was no sandbox), and "f/n" then resolved to no link: recorded as written
# at f/n, a place the call never wrote; without it, before (at h/n)
for m in all none; do
	for o in "" --no-cache; do
		fresh
		case $m in all) p="--fence --policy $W/p.all" ;; *) p= ;; esac
		"$ST" run $o $p --report "$W/rn$o" -- sh -c "cd '$T/a' && '$DRV' rename n f && \
			'$DRV' rename f/n . ; '$DRV' rename f f/n" > "$W/orn$o"
		records "$W/rn$o" > "$W/srn$o"
	done
	check "$m: rename n f (n a link to ../h); rename f/n .; rename f f/n: the same output and records with the cache and without" \
		sh -c "cmp -s '$W/orn' '$W/orn--no-cache' && cmp -s '$W/srn' '$W/srn--no-cache'"
	check "... the link recorded written where it went, h/n" has W "$T/h/n" "$W/rn"
	check "... and not at a/f/n" not_has "$T/a/f/n" "$W/rn"
done

# found by the fuzzer (seed 75, minimised): a verdict on n/f/l made while n was missing
# (the rest taken as spelled) was keyed with the slot of n/f; a link made at n to a
# file (h/f, denied) moves only the slots of n's directory and of n's own children:
# the next n/f/l was allowed from the Ctrie and the kernel said ENOTDIR, where without
# the cache it is judged as h/f/f/l, denied (ENOENT and a violation)
mkdir -p "$W/sh/h"; echo f > "$W/sh/h/f"
echo "deny any $W/sh/h" > "$W/p.sh"
for o in "" --no-cache; do
	rm -f "$W/sh/n"
	out=$("$ST" run $o --policy "$W/p.sh" -- sh -c "'$DRV' mkdir '$W/sh/n/f/l'; \
		'$DRV' symlink '$W/sh/n' '$W/sh/h/f'; '$DRV' mkdir '$W/sh/n/f/l'; '$DRV' mkdir '$W/sh/n/f'")
	check "n/f/l asked with n missing, then n made a link to a denied file, ${o:-with the cache}: n/f/l and n/f denied ($(echo $out))" \
		test "$(echo $out)" = "ENOENT ok ENOENT ENOENT"
done

# found by the fuzzer (seed 90, minimised, a record; then made a read by hand): a
# spelling whose walk stopped before its ".." (x/../../h/f, x missing or a file) was
# judged as x and keyed with the arena epoch, which a mkdir does not move: once x was
# a directory, the hidden h/f was read with the cache's allow.  Such a spelling gets
# no key now
mkdir -p "$W/dd/a" "$W/dd/h"; echo secret > "$W/dd/h/f"
{ drivers_rules; echo "allow any $W/dd/a"; } > "$W/p.dd2"
for o in "" --no-cache; do
	rm -rf "$W/dd/a/x" "$W/dd/a/g"; echo g > "$W/dd/a/g"
	out=$("$ST" run $o --fence --policy "$W/p.dd2" -- sh -c "'$DRV' open-r '$W/dd/a/x/../../h/f'; \
		'$DRV' mkdir '$W/dd/a/x'; '$DRV' open-r '$W/dd/a/x/../../h/f'; '$DRV' stat '$W/dd/a/g/../../h/f'; \
		'$DRV' unlink '$W/dd/a/g'; '$DRV' mkdir '$W/dd/a/g'; '$DRV' stat '$W/dd/a/g/../../h/f'")
	check "x/../../h/f, x missing (a file), then x made a directory, ${o:-with the cache}: h/f stays hidden ($(echo $out))" \
		test "$(echo $out)" = "ENOENT ok ENOENT errno=20 ok ok ENOENT"
done

# ---------------------------------------------------------------------------
# (c) the fuzzer: fixed seeds, each a sequence of 250 steps, run untraced and under
# each policy with the cache and with --no-cache: the same output and records; under
# the one that hides nothing, the output of the untraced run.  FSFUZZ_SEEDS adds seeds
# (scripts of a longer search: hundreds ran clean after the fixes above)
# ---------------------------------------------------------------------------
for seed in 5 13 75 90 4027 ${FSFUZZ_SEEDS:-}; do
	fresh; "$FZ" run "$T" $seed 250 > "$W/u.out"
	for m in all fence mix deny none; do
		if differential $m run "$T" $seed 250; then ok "seed $seed, $m: cache and --no-cache agree"
		else
			bad "seed $seed, $m: cache and --no-cache agree"
			diff "$W/c.out" "$W/nc.out" | head -5; diff "$W/c.set" "$W/nc.set" | head -5
		fi
		case $m in all | none) check "seed $seed, $m: the output of the untraced run" same u.out c.out ;; esac
	done
done
done_
