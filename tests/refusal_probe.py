#!/usr/bin/env python3
"""tests/refusal_probe.py - every refused call's probe reads the name it replaces.

  python3 tests/refusal_probe.py SHIM_DIR

A refused call is made once more on ST_ABSENT (shim/wrap.h, ST_REFUSAL), by setting the
wrapper's judged name, the lvalue given to ONE_PATH, ONE_PATH_ROOTED, ONE_PATH_ERR,
TWO_PATHS or TWO_PATHS_E, and evaluating the wrapper's call again.  That is only safe
when the call reads that very variable: a call that reads another one (a name the
wrapper derived from its arguments, a copy) would be made on the hidden file itself.
This check reads every use of those macros in SHIM_DIR/*.c and fails unless each judged
name is a string literal (or P_tmpdir), is wrapped in ST_NOPROBE(...), or is an identifier that the
call expression names (after expanding the object-like macros of the same file, and,
for a use inside a function-like macro whose call is one of its parameters, at every
use of that macro).  Prints one line per fault and "refusal_probe: N uses, N faults".
"""

import glob
import os
import re
import sys

MACROS = {"ONE_PATH": [4], "ONE_PATH_ROOTED": [4], "ONE_PATH_ERR": [4],
          "TWO_PATHS": [4, 9], "TWO_PATHS_E": [4, 9]}
LITERALS = {"P_tmpdir"}  # macros of libc's headers that are string literals (not probed)
USE = re.compile(r"\b(%s)\(" % "|".join(sorted(MACROS, key=len, reverse=True)))


def args_at(s, i):
    """The top-level comma-separated arguments of the call whose '(' is just before s[i]."""
    depth, cur, out, quote = 0, "", [], None
    while i < len(s):
        ch = s[i]
        if quote:
            cur += ch
            if ch == "\\":
                cur += s[i + 1]
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
            cur += ch
        elif ch in "([{":
            depth += 1
            cur += ch
        elif ch in ")]}":
            if depth == 0:
                out.append(cur.strip())
                return out, i
            depth -= 1
            cur += ch
        elif ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    raise ValueError("unbalanced call")


def defines(s):
    """#define NAME[(params)] body, continuations joined: (name, params or None, start, end, body)."""
    out = []
    for m in re.finditer(r"^#define\s+(\w+)(\(([^)]*)\))?((?:[^\n]*\\\n)*[^\n]*)", s, re.M):
        params = [p.strip() for p in m.group(3).split(",")] if m.group(2) else None
        out.append((m.group(1), params, m.start(), m.end(), m.group(4).replace("\\\n", " ")))
    return out


def expand(expr, objs):
    for _ in range(4):
        new = re.sub(r"\b(\w+)\b", lambda m: objs.get(m.group(1), m.group(1)), expr)
        if new == expr:
            break
        expr = new
    return expr


def judged_ok(name, call, objs):
    if name.startswith('"') or name.startswith("ST_NOPROBE(") or name in LITERALS:
        return True
    if not re.fullmatch(r"[A-Za-z_]\w*", name):
        return False  # an expression: ST_REFUSAL cannot set it (the build fails first)
    return re.search(r"\b%s\b" % re.escape(name), expand(call, objs)) is not None


def main():
    shim = sys.argv[1]
    uses = faults = 0
    for path in sorted(glob.glob(os.path.join(shim, "*.c"))):
        s = open(path).read()
        defs = defines(s)
        objs = {n: b for n, p, _, _, b in defs if p is None}
        for m in USE.finditer(s):
            line = s.count("\n", 0, m.start()) + 1
            outer = [d for d in defs if d[2] <= m.start() < d[3]]
            if outer and outer[0][0] == m.group(1):
                continue  # the macro's own definition
            args, _ = args_at(s, m.end())
            call = args[-1]
            calls = [call]
            if outer and outer[0][1]:
                # inside a function-like macro: its uses give the call
                oname, params = outer[0][0], outer[0][1]
                used = [p for p in params if re.search(r"\b%s\b" % re.escape(p), call)]
                if used:
                    calls = []
                    for u in re.finditer(r"\b%s\(" % re.escape(oname), s):
                        if any(d[2] <= u.start() < d[3] for d in defs):
                            continue
                        uargs, _ = args_at(s, u.end())
                        sub = call
                        for p in used:
                            sub = re.sub(r"\b%s\b" % re.escape(p), uargs[params.index(p)], sub)
                        calls.append(sub)
            for k in MACROS[m.group(1)]:
                uses += 1
                for c in calls:
                    if not judged_ok(args[k], c, objs):
                        faults += 1
                        print("%s:%d: %s judges %s, which its call does not read: %s" %
                              (os.path.basename(path), line, m.group(1), args[k], " ".join(c.split())[:100]))
    print("refusal_probe: %d uses, %d faults" % (uses, faults))
    sys.exit(1 if faults or uses == 0 else 0)


if __name__ == "__main__":
    main()
