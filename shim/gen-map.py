#!/usr/bin/env python3
"""shim/gen-map.py SYMBOLS.DEF OUT.map - the linker version script: every SYM() name global, the rest local."""
import re, sys
names = re.findall(r'^SYM\([^,]+,\s*(\w+)\s*,', open(sys.argv[1]).read(), re.M)
if len(names) != len(set(names)):
    sys.exit('gen-map.py: duplicate symbol in ' + sys.argv[1])
with open(sys.argv[2], 'w') as f:
    f.write('/* generated from %s by gen-map.py: do not edit */\n{\n  global:\n' % sys.argv[1])
    for n in names:
        f.write('    %s;\n' % n)
    f.write('    la_version; la_objsearch; la_objopen;\n' if False else '')
    f.write('  local: *;\n};\n')
