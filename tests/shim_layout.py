#!/usr/bin/env python3
"""tests/shim_layout.py - the shim's start code is where shim/layout.ld puts it, and calls no libc page it need not.

  tests/shim_layout.py LIBSANDTRACE_SO LAYOUT_LD

Checks, with binutils (nm, objdump):
  1. every function that shim/layout.ld names for .text.st_start is emitted (not inlined
     away or renamed: such a name would match nothing, silently) and lies inside that
     section, whose size stays within four pages, with every part GCC split off it or clone
     it made (NAME.part.0, NAME.isra.0, ...: a part left in .text is a page of its own);
  2. no function of .text.st_start calls (or jumps to) libc's string functions, memcpy or
     mmap, through the PLT or the GOT: each is a page of libc's code that a traced /bin/true
     would touch for nothing else (the shim uses st__strlen/st__copy and inline system
     calls there);
  3. the same as 1 for .text.st_hot (what checked calls run), within sixteen pages, right
     behind .text.st_start;
  4. what a forked child writes and reads first is on pages it touches anyway: no call
     through the PLT anywhere (-fno-plt: libc is called through the GOT, on the data page
     the child writes), st__after_fork_child reads nothing from .rodata, and noted_upto
     (which it resets) shares st__g's page: each other page would be a fault in every
     forked child;
  4b. the environment's copy (init.c env_room), __libc_start_main's slot and the first
     variable of .bss share st__g's page (every process writes them at its start or exit);
  5. first_tls (the main thread's buffers) starts in the first half of a page (see shim.h,
     ST_ACC_HEAD_END);
  6. the read-write segment's file part is on one page, and no segment is writable and
     executable;
  7. every function of the shim that a .text.st_start function calls or jumps to directly
     lies in .text.st_start or .text.st_hot, but for the cold callees layout.ld lists (the
     start calls them only when the log or the arena failed): a helper split out of a
     start function and left in .text is a 64 KiB window, a page fault, in every traced
     process (noted_name was, from 9ceca3a until stop 28).
Prints one line per check and exits 1 when any fails.
"""

import re
import subprocess
import sys

FORBIDDEN = {"strlen", "strnlen", "strcmp", "strncmp", "memcpy", "memmove", "mmap", "munmap",
             "strchr", "memcmp"}
MAX_PAGES = 4
MAX_HOT_PAGES = 16


def section_names(text, section):
    """The function names a section of the linker script lists, as emitted symbols."""
    body = re.search(r"\." + section.replace(".", r"\.") + r"\s*:\s*\{(.*?)\n  \}", text, re.S)
    # each entry is *(.text.NAME .text.NAME.*): the function and the parts GCC may split off it
    names = re.findall(r"\*\(\.text\.([A-Za-z_][\w.]*) \.text\.\1\.\*\)", body.group(1) if body else "")
    odd = [e for e in re.findall(r"\*\(\.text\.[^)]*\)", body.group(1) if body else "")
           if not re.fullmatch(r"\*\(\.text\.([A-Za-z_][\w.]*) \.text\.\1\.\*\)", e)]
    if odd:  # an entry this test would not see, nor the parts of its function
        names.append("not of the form *(.text.NAME .text.NAME.*): " + " ".join(odd))
    # GCC names a constructor's section .text.startup.NAME and a destructor's .text.exit.NAME
    return [re.sub(r"^(startup|exit)\.", "", n) for n in names if not n.startswith("hot.")]


def main():
    lib, script = sys.argv[1], sys.argv[2]
    text = open(script).read()
    names = section_names(text, "text.st_start")
    failed = 0

    def check(ok, what):
        nonlocal failed
        print(("ok: " if ok else "FAIL: ") + what)
        failed += not ok

    hdr = subprocess.run(["objdump", "-h", lib], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in subprocess.run(["nm", lib], capture_output=True, text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "tT":
            syms.setdefault(p[2], []).append(int(p[0], 16))

    def placed(section, names, max_pages):
        """Check that section is in the library, within max_pages, and holds every one of
        names; its (start, size), or None when it is missing."""
        m = re.search(r"\s\." + section.replace(".", r"\.") + r"\s+([0-9a-f]+)\s+([0-9a-f]+)", hdr)
        check(m is not None, ".%s is in the library" % section)
        if not m:
            return None
        size, start = int(m.group(1), 16), int(m.group(2), 16)
        check(size <= max_pages * 4096, ".%s is %d bytes (at most %d pages)" % (section, size, max_pages))
        for n in names:
            # the function, or what is left of it: GCC may inline its head into every
            # caller and keep NAME.part.0, or clone it (NAME.isra.0, NAME.constprop.0)
            forms = [s for s in syms if s == n or s.startswith(n + ".")]
            at = [a for s in forms for a in syms[s]]
            out = [s for s in forms if not all(start <= a < start + size for a in syms[s])]
            check(at and not out, "%s emitted and placed in .%s%s" %
                  (", ".join(sorted(forms)) or n, section, " (not: %s)" % ", ".join(out) if out else ""))
        return start, size

    check(len(names) >= 10, "layout.ld names the start's functions (%d)" % len(names))
    st = placed("text.st_start", names + ["frame_dummy", "__do_global_dtors_aux"], MAX_PAGES)
    if st is None:
        return 1
    hot = section_names(text, "text.st_hot")
    check(len(hot) >= 40, "layout.ld names the checked calls' functions (%d)" % len(hot))
    sh = placed("text.st_hot", hot, MAX_HOT_PAGES)
    if sh is not None:
        check(sh[0] - (st[0] + st[1]) < 64, ".text.st_hot follows .text.st_start")
    dis = subprocess.run(["objdump", "-d", "-j", ".text.st_start", lib], capture_output=True,
                         text=True, check=True).stdout
    fn, bad = None, []
    for line in dis.splitlines():
        h = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if h:
            fn = h.group(1)
            continue
        c = re.search(r"\b(?:call|jmp)\s+(?:[0-9a-f]+ <([\w.]+)@plt>|"
                      r"\*0x[0-9a-f]+\(%rip\)\s+# [0-9a-f]+ <([\w.]+)@)", line)
        name = c and (c.group(1) or c.group(2))
        if name in FORBIDDEN:
            bad.append("%s calls %s" % (fn, name))
    check(not bad, "no libc string function, memcpy or mmap called from the start's code" +
          (": " + "; ".join(sorted(set(bad))) if bad else ""))
    check(fn is not None, "the start's code disassembled")
    # 4. a forked child's first steps
    alld = subprocess.run(["objdump", "-d", lib], capture_output=True, text=True, check=True).stdout
    # (crtbeginS.o's unload hook is not ours to compile, and a NODELETE library never runs it)
    plt = [n for n in re.findall(r"\b(?:call|jmp)\s+[0-9a-f]+ <([\w.]+)@plt>", alld)
           if n != "__cxa_finalize"]
    check(not plt, "no call through the PLT (-fno-plt)" + (": " + ", ".join(sorted(set(plt))) if plt else ""))
    ro = re.search(r"\s\.rodata\s+([0-9a-f]+)\s+([0-9a-f]+)", hdr)
    body = re.search(r"^[0-9a-f]+ <st__after_fork_child>:\n(.*?)\n\n", alld, re.M | re.S)
    check(ro is not None and body is not None, "st__after_fork_child and .rodata found")
    if ro and body:
        rsize, rstart = int(ro.group(1), 16), int(ro.group(2), 16)
        reads = [int(a, 16) for a in re.findall(r"\(%rip\)[^#\n]*#\s*([0-9a-f]+)", body.group(1))]
        inro = [hex(a) for a in reads if rstart <= a < rstart + rsize]
        check(reads and not inro, "st__after_fork_child reads nothing from .rodata (%d rip-relative "
              "operands%s)" % (len(reads), ": " + ", ".join(inro) if inro else ""))
    data = {}
    for line in subprocess.run(["nm", lib], capture_output=True, text=True, check=True).stdout.splitlines():
        p = line.split()
        if len(p) == 3 and p[2] in ("st__g", "noted_upto"):
            data[p[2]] = int(p[0], 16)
    check(len(data) == 2 and data["st__g"] >> 12 == data["noted_upto"] >> 12,
          "noted_upto on st__g's page (%s)" % ", ".join("%s %#x" % kv for kv in sorted(data.items())))
    # 4b. what every process's start writes of the shim's data shares the page the
    # relocations write (st__g's): the environment's copy (init.c env_room),
    # __libc_start_main's slot, and the first variable of .bss (crtstuff's completed.0,
    # written at exit), which env_room pushes toward the page's end
    syms = {}
    bss = re.search(r"\s\.bss\s+NOBITS\s+([0-9a-f]+)", subprocess.run(
        ["readelf", "-SW", lib], capture_output=True, text=True, check=True).stdout)
    bss = int(bss.group(1), 16) if bss else None
    for line in subprocess.run(["nm", "-n", lib], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        p = line.split()
        if (len(p) == 3 and p[1] in "bB" and bss is not None and int(p[0], 16) >= bss and
                "first_bss" not in syms):
            syms["first_bss"] = int(p[0], 16)
        if len(p) == 3 and p[2] in ("st__g", "env_room", "st__real___libc_start_main"):
            syms[p[2]] = int(p[0], 16)
    sizes = {p[3]: int(p[1], 16) for p in (l.split() for l in subprocess.run(
        ["nm", "-S", lib], capture_output=True, text=True, check=True).stdout.splitlines())
        if len(p) == 4 and p[3] == "env_room"}
    ends = dict(syms)
    if "env_room" in syms and "env_room" in sizes:
        ends["env_room"] = syms["env_room"] + sizes["env_room"] - 1
    check(len(syms) == 4 and "env_room" in sizes and
          all(a >> 12 == syms["st__g"] >> 12 for a in list(syms.values()) + list(ends.values())),
          "env_room, __libc_start_main's slot and .bss's first variable on st__g's page (%s)" %
          ", ".join("%s %#x" % kv for kv in sorted(ends.items())))
    # 5. the main thread's buffers start in the first half of a page: its first access's
    # fields, short resolved path and the head of its absolute one then share a page
    # (shim.h ST_ACC_HEAD_END, checked there against 2 KiB), one page written, not two
    ft = [int(p[0], 16) for p in (l.split() for l in subprocess.run(
        ["nm", lib], capture_output=True, text=True, check=True).stdout.splitlines())
        if len(p) == 3 and p[2] == "first_tls"]
    check(len(ft) == 1 and ft[0] % 4096 <= 2048,
          "first_tls starts in the first half of a page (%s)" % ", ".join("%#x" % a for a in ft))
    # 6. the read-write segment's file part (the data relocations write at every start) is
    # on one page: the read-only segment ends on a page boundary (layout.ld .st_rw_pad),
    # else the code's size decides whether it straddles two (a copy-on-write fault more)
    rw = [l.split() for l in subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True,
                                             check=True).stdout.splitlines()
          if l.split()[:1] == ["LOAD"] and l.split()[-2] == "RW"]
    spans = [(int(p[2], 16), int(p[4], 16)) for p in rw]
    check(len(spans) == 1 and spans[0][1] > 0 and
          spans[0][0] >> 12 == (spans[0][0] + spans[0][1] - 1) >> 12,
          "the read-write segment's file part is on one page (%s)" %
          ", ".join("%#x + %#x" % sp for sp in spans))
    rx = [l.split() for l in subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True,
                                             check=True).stdout.splitlines()
          if l.split()[:1] == ["LOAD"] and "W" in l.split()[-2] and "E" in l.split()[-2]]
    check(not rx, "no writable and executable segment")
    # 7. what the start's code calls is placed with it
    cold = re.search(r"/\* cold callees: ([\w. ]+)", text)
    cold = set(cold.group(1).split()) if cold else set()
    check(cold, "layout.ld lists the start's cold callees (%s)" % ", ".join(sorted(cold)))
    hs = re.search(r"\s\.text\.st_hot\s+([0-9a-f]+)\s+([0-9a-f]+)", hdr)
    spans = [(st[0], st[0] + st[1])] + ([(int(hs.group(2), 16), int(hs.group(2), 16) +
                                          int(hs.group(1), 16))] if hs else [])
    fn, out, seen = None, set(), set()
    for line in dis.splitlines():
        h = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if h:
            fn = h.group(1)
            continue
        c = re.search(r"\b(?:call|jmp)\s+([0-9a-f]+) <([\w.]+)>", line)
        if not c or c.group(2) == fn:
            continue
        seen.add(c.group(2))
        a = int(c.group(1), 16)
        if not any(lo <= a < hi for lo, hi in spans) and c.group(2) not in cold:
            out.add("%s <- %s" % (c.group(2), fn))
    check(len(seen) >= 10 and not out,
          "the start's %d direct callees lie in .text.st_start or .text.st_hot, or are cold%s" %
          (len(seen), ": " + "; ".join(sorted(out)) if out else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
