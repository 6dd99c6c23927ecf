#!/usr/bin/env python3
# tests/consume/run.py — builds tests/consume/project as a separate Meson project that gets
# torchtpu through dependency('torchtpu') with the subproject fallback (the source tree is
# linked as subprojects/torchtpu), runs it and checks its output.
# Usage: run.py SOURCE_ROOT WORK_DIR
import os, shutil, subprocess, sys

root, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
shutil.copytree(os.path.join(root, "tests", "consume", "project"), work)
os.makedirs(os.path.join(work, "subprojects"))
os.symlink(root, os.path.join(work, "subprojects", "torchtpu"))
def run(*cmd):
    r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return r.stdout
run("meson", "setup", "build", "--wrap-mode=nodownload")
run("meson", "compile", "-C", "build", "consumer")
out = run(os.path.join(work, "build", "consumer"))
want = "tensor([[ 0.,  1.],\n        [ 1., 15.]])\n"
if out != want:
    sys.exit(f"unexpected output:\n{out!r}\nwant:\n{want!r}")
print("consumer built through dependency('torchtpu') and printed the expected tensor")
