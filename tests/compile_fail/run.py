#!/usr/bin/env python3
# tests/compile_fail/run.py — one compile-fail check: the snippet must compile without
# TORCHTPU_COMPILE_FAIL (so includes and flags are right: the harness itself can fail), and
# must fail to compile with it, with a diagnostic matching `pattern`.
# Usage: run.py SNIPPET PATTERN -- COMPILER [ARGS...]
import re, subprocess, sys

snippet, pattern = sys.argv[1], sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1:] + ["-fsyntax-only", snippet]
ok = subprocess.run(cmd, capture_output=True, text=True)
if ok.returncode != 0:
    sys.exit(f"control build of {snippet} failed (the harness or the snippet is broken):\n{ok.stderr[-4000:]}")
bad = subprocess.run(cmd + ["-DTORCHTPU_COMPILE_FAIL"], capture_output=True, text=True)
if bad.returncode == 0:
    sys.exit(f"{snippet} compiled with TORCHTPU_COMPILE_FAIL; it must not")
if not re.search(pattern, bad.stderr):
    sys.exit(f"{snippet} failed, but no diagnostic matches {pattern!r}:\n{bad.stderr[-4000:]}")
print(f"{snippet}: fails as expected ({pattern!r} found)")
