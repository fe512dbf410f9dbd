"""Lets PyPI's geni-lib 0.9.9.4 (its last release) build request RSpecs on Python 3.

CloudLab's portal runs profiles with its own Python 3 geni-lib, so profile.py needs nothing of
this; it is for running the profile here, as the portal does, to test it. The PyPI release still
has Python 2 statements in geni/portal.py (print, raw_input: only on its interactive and error
paths) and writes the bytes of the RSpec to a text stream in Request.writeXML. This edits those
lines of the installed copy and fails, naming the file, when they are not as expected.

    python geni_py3.py        (with the environment's python; safe to run again)
"""

import pathlib
import py_compile
import re
import sys

import geni

ROOT = pathlib.Path(geni.__file__).parent

# (file, old text, new text): the old text must occur, or the new one (edited before).
EDITS = [
    ("rspec/pg.py", "f = sys.stdout\n", "f = sys.stdout.buffer\n"),
    ("rspec/pg.py", 'f = open(path, "w+")', 'f = open(path, "wb")'),
    ("portal.py", "raw_input(", "input("),
]
PY2_PRINT = re.compile(r"^(\s*)print (.+)$", re.MULTILINE)


def main():
    for rel, old, new in EDITS:
        path = ROOT / rel
        text = path.read_text()
        if old in text:
            path.write_text(text.replace(old, new))
        elif new not in text:
            sys.exit(f"geni_py3: {path} has no '{old.strip()}': not geni-lib 0.9.9.4?")
    portal = ROOT / "portal.py"
    portal.write_text(PY2_PRINT.sub(r"\1print(\2)", portal.read_text()))
    for rel in ("portal.py", "rspec/pg.py"):
        py_compile.compile(str(ROOT / rel), doraise=True)


if __name__ == "__main__":
    main()
