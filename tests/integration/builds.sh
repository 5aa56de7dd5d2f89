#!/bin/sh
# tests/integration/builds.sh - real builds: gcc -c and make -j2 with several files, checked through the report.
. "$(dirname "$0")/lib.sh"
cd "$W"
mkdir inc
echo '#define ANSWER 42' > inc/answer.h
for i in 1 2 3 4; do printf '#include "answer.h"\nint f%d(void) { return ANSWER + %d; }\n' $i $i > f$i.c; done
printf 'int main(void) { return 0; }\n' > main.c
cat > Makefile <<'M'
OBJS = f1.o f2.o f3.o f4.o main.o
prog: $(OBJS)
	gcc -o $@ $(OBJS)
%.o: %.c
	gcc -Iinc -c $< -o $@
M
R=$W/gcc.jsonl
"$ST" run --report "$R" -- gcc -Iinc -c f1.c -o f1.o
check "gcc -c reads the source"  has R "$W/f1.c" "$R"
check "gcc -c reads the header"  has R "$W/inc/answer.h" "$R"
check "gcc -c reads stdc-predef" has R /usr/include/stdc-predef.h "$R"
check "gcc -c writes the object" has W "$W/f1.o" "$R"
check "cc1 executed" sh -c "$ST report --list $R | grep -q '^X	.*/cc1\$'"
rm -f f1.o
R2=$W/make.jsonl
"$ST" run --report "$R2" -- make -s -j2 >/dev/null
check "make built prog" test -x prog
for i in 1 2 3 4; do
	check "make: f$i.o written" has W "$W/f$i.o" "$R2"
done
check "make: linker wrote prog" has W "$W/prog" "$R2"
check "make: header read" has R "$W/inc/answer.h" "$R2"
check "make: complete" test "$(summary_field "$R2" complete)" = true
n=$(summary_field "$R2" processes)
check "make: many processes ($n)" test "$n" -ge 10
# the cache changes nothing in what is recorded: the same build with and without it
make -s clean >/dev/null 2>&1 || rm -f *.o prog
rm -f *.o prog
"$ST" run --report "$W/c1.jsonl" -- make -s -j2 >/dev/null
rm -f *.o prog
"$ST" run --no-cache --report "$W/c2.jsonl" -- make -s -j2 >/dev/null
"$ST" report --list "$W/c1.jsonl" | grep -v "/proc/" | sort -u > c1.list
"$ST" report --list "$W/c2.jsonl" | grep -v "/proc/" | sort -u > c2.list
# compiler temporaries (/tmp/cc*.s, .o) have random names: compare without them
grep -v '	/tmp/cc' c1.list > c1.f; grep -v '	/tmp/cc' c2.list > c2.f
check "cache and --no-cache record the same (kind, path) set" cmp -s c1.f c2.f
[ -s c1.f ] || bad "empty list"
done_
