#!/usr/bin/python3
"""tools/conformance_hf.py — the Hugging Face part of scripts/conformance (--hf): runs every
architecture tools/trace_hf.py traced into CACHE through torchtpu-run on the cpu and writes the
table into REPORT (docs/conformance.md), between the markers HF_BEGIN and HF_END (appended when
missing). With --timm, the timm part (--timm) instead: the models tools/trace_timm.py traced
(the same cache layout), its table between the markers TIMM_BEGIN and TIMM_END.

Usage: conformance_hf.py [--timm] TORCHTPU_RUN CACHE REPORT BENCH ARCH...

Status per architecture:
* pass: torchtpu's float32 output is within 1e-4 of torch's (max|torchtpu - torch| / max|torch|),
  or its error against the float64 reference (the same weights run in float64, eager) is at most
  twice torch's own float32 error against it (round-off of a deep network, not a bug);
* mismatch: neither;
* unsupported ops: torchtpu-run lists node kinds the registry lacks (each with its count);
* export failed: torch itself could not build or trace the model (transformers 4.40 or timm 0.9 on
  torch 1.13);
* error: anything else (the message).
Latency: p50 of BENCH torchtpu runs on one thread (TORCHTPU_NUM_THREADS=1) and torch's median
of the traced module on one thread (trace_hf.py), batch of the traced inputs.
"""
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

HF_BEGIN = "<!-- HF_BEGIN: written by scripts/conformance --hf -->"
HF_END = "<!-- HF_END -->"
TIMM_BEGIN = "<!-- TIMM_BEGIN: written by scripts/conformance --timm -->"
TIMM_END = "<!-- TIMM_END -->"


def rel(a, b):
    scale = float(np.abs(b).max()) or 1.0
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) / scale


def run_one(run, cache, arch, bench, timm=False):
    stem = os.path.join(cache, arch)
    with open(stem + ".json") as f:
        meta = json.load(f)
    row = {"arch": arch, "model": "%s (%s)" % (meta["class"], meta["model_type"]), "torch_ms": meta.get("torch_ms"),
           "torch_err": meta.get("torch_err")}
    if timm:
        row["input"] = "x".join(map(str, meta.get("input_shape", []))) or "-"
    if meta["status"] != "traced":
        row.update(status="export failed", notes=meta.get("error", ""))
        return row
    out = stem + ".torchtpu.npy"
    cmd = [run, stem + ".pt"]
    for i in range(meta["inputs"]):
        cmd += ["--input", "%s.in%d.npy" % (stem, i)]
    cmd += ["--device", "cpu", "--output", out, "--bench", str(bench)]
    env = dict(os.environ, TORCHTPU_NUM_THREADS="1")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    text = p.stdout + p.stderr
    if p.returncode == 3:
        kinds = re.findall(r"^\s+(\S+) x(\d+)", text, re.M)
        row.update(status="unsupported ops", notes=", ".join("`%s` ×%s" % k for k in kinds) or text.strip()[-300:])
        return row
    if p.returncode != 0:
        msg = text.strip().splitlines()[-1] if text.strip() else "exit %d" % p.returncode
        row.update(status="error", notes=msg.replace("|", "\\|")[:300])
        return row
    got = np.load(out)
    ref = np.load(stem + ".out.npy")
    if got.shape != ref.shape:
        row.update(status="error", notes="output shape %s, torch's %s" % (got.shape, ref.shape))
        return row
    row["err"] = rel(got, ref)
    if os.path.exists(stem + ".f64.npy"):
        row["err64"] = rel(got, np.load(stem + ".f64.npy"))
    m = re.search(r"latency torchtpu .*p50 ([0-9.]+) ms", text)
    row["ms"] = float(m.group(1)) if m else None
    ok = row["err"] <= 1e-4 or ("err64" in row and row["torch_err"] is not None and
                                 row["err64"] <= 2 * max(row["torch_err"], 1e-12))
    notes = [meta["note"]] if meta.get("note") else []
    if "err64" not in row and timm:
        notes.append("no float64 reference (%s)" % meta.get("f64_error", "not saved"))
    elif "err64" not in row:
        notes.append("no float64 reference (the model's masks are float32-only in transformers 4.40)")
    row.update(status="pass" if ok else "mismatch", notes="; ".join(notes))
    batch_latency(run, stem, meta, row, bench, env)
    if not timm:
        bf16_run(run, stem, meta, row, bench, env)
    return row


BF16_TOL = 2.0 ** -5  # bfloat16 pass bound against torch's bfloat16 output (bf16_run)


def bf16_run(run, stem, meta, row, bench, env):
    """The bfloat16 trace (trace_hf.py --bf16) through torchtpu-run --dtype bfloat16 into
    row["bf16"]: status, err (against torch's bfloat16 output), err64 (against the bfloat16
    model's float64 reference), torch_err (torch's own against it), ms, torch_ms, notes. Pass:
    err <= BF16_TOL (2^-5 of the output's largest magnitude: a few bfloat16 roundings, whose unit
    is 2^-8 relative, accumulated over two layers) or err64 <= 2 x torch_err (the float32
    criterion's fair form)."""
    b = {"torch_err": meta.get("torch_bf16_err"), "torch_ms": meta.get("torch_bf16_ms")}
    row["bf16"] = b
    if meta.get("bf16_status") != "traced":
        b.update(status="export failed" if meta.get("bf16_status") else "-",
                 notes=meta.get("bf16_error", "").replace("|", "\\|"))
        return
    out = stem + ".bf16.torchtpu.npy"
    cmd = [run, stem + ".bf16.pt"]
    for i in range(meta["inputs"]):
        cmd += ["--input", "%s.bf16.in%d.npy" % (stem, i)]
    cmd += ["--dtype", "bfloat16", "--device", "cpu", "--output", out, "--bench", str(bench)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
    text = p.stdout + p.stderr
    if p.returncode == 3:
        kinds = re.findall(r"^\s+(\S+) x(\d+)", text, re.M)
        b.update(status="unsupported ops", notes=", ".join("`%s` ×%s" % k for k in kinds) or text.strip()[-300:])
        return
    if p.returncode != 0:
        msg = text.strip().splitlines()[-1] if text.strip() else "exit %d" % p.returncode
        b.update(status="error", notes=msg.replace("|", "\\|")[:300])
        return
    got, ref = np.load(out), np.load(stem + ".bf16.out.npy")
    if got.shape != ref.shape:
        b.update(status="error", notes="output shape %s, torch's %s" % (got.shape, ref.shape))
        return
    b["err"] = rel(got, ref)
    if os.path.exists(stem + ".bf16.f64.npy"):
        b["err64"] = rel(got, np.load(stem + ".bf16.f64.npy"))
    m = re.search(r"latency torchtpu .*p50 ([0-9.]+) ms", text)
    b["ms"] = float(m.group(1)) if m else None
    ok = b["err"] <= BF16_TOL or ("err64" in b and b["torch_err"] is not None and
                                  b["err64"] <= 2 * max(b["torch_err"], 1e-12))
    b.update(status="pass" if ok else "mismatch",
             notes="" if "err64" in b else "no float64 reference (%s)" % meta.get("bf16_f64_error", "not saved"))


def batch_latency(run, stem, meta, row, bench, env):
    """torchtpu's p50 ms at batch 1 and 32 (trace_hf.py --latency's inputs; the outputs checked
    against torch's at that batch) into row["ms_b1"], row["ms_b32"]; torch's from the meta."""
    for b in (1, 32):
        row["torch_ms_b%d" % b] = meta.get("torch_ms_b%d" % b)
        if row["torch_ms_b%d" % b] is None:
            continue
        out = "%s.b%d.torchtpu.npy" % (stem, b)
        cmd = [run, stem + ".pt"]
        for i in range(meta["inputs"]):
            cmd += ["--input", "%s.b%d.in%d.npy" % (stem, b, i)]
        cmd += ["--device", "cpu", "--output", out, "--bench", str(bench)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        m = re.search(r"latency torchtpu .*p50 ([0-9.]+) ms", p.stdout + p.stderr)
        if p.returncode != 0 or not m:
            row["notes"] = "; ".join(x for x in (row["notes"], "batch %d: exit %d" % (b, p.returncode)) if x)
            continue
        err = rel(np.load(out), np.load("%s.b%d.out.npy" % (stem, b)))
        if err > 1e-4:
            row["notes"] = "; ".join(x for x in (row["notes"], "batch %d: rel error %.1e vs torch" % (b, err)) if x)
        row["ms_b%d" % b] = float(m.group(1))


def fmt(v, spec):
    return "-" if v is None else spec % v


def timm_header(bench, counts, rows):
    """The timm section's lines up to its table's header (BEGIN marker first)."""
    import timm
    import torch
    return [TIMM_BEGIN, "", "## timm models (timm %s, torch %s)" % (timm.__version__, torch.__version__), "",
            "Generated by `scripts/conformance --timm` on %s. Each model is built by `tools/trace_timm.py` with "
            "`timm.create_model(name, pretrained=False, num_classes=10)`, the smallest variant of its family, with "
            "random weights (seeded; zero parameters, norm affines and BatchNorm running statistics made "
            "non-degenerate; nothing downloaded), traced and frozen by torch 1.13 in eval mode, and run by "
            "`torchtpu-run --input ...` on the cpu on a 1x3x64x64 image (`img_size=64` for models built for a fixed "
            "resolution; a larger image only where the model needs it, the input column). The output compared is "
            "the logits [1, 10]." % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "",
            "* **pass**: max|torchtpu − torch| / max|torch| ≤ 1e-4, or torchtpu's error against the float64 "
            "reference (the same weights in float64, eager) ≤ 2× torch's own float32 error against it; "
            "**mismatch**: neither; **unsupported ops**: the kinds torchtpu lacks (count in the graph); "
            "**export failed**: torch or timm itself could not build or trace the model; **error**: anything else.",
            "* Latency: p50 ms, one thread (torchtpu `TORCHTPU_NUM_THREADS=1` over %d runs; torch "
            "`torch.set_num_threads(1)` and `openblas_set_num_threads(1)`, the traced module's median of 7, 5 at "
            "batch 32, after 3 warm-up runs), at batch 1 and batch 32 (the image repeated: `trace_hf.py --latency`), "
            "torchtpu's output checked against torch's at that batch too." % bench, "",
            "Summary: " + ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items())) +
            " (of %d models tried)" % len(rows), ""] + speed_lines(rows, "models") + [
            "| model | class (family) | input | status | rel error vs torch | vs float64 | torch's own vs float64 | "
            "torchtpu ms b1 | torch ms b1 | torchtpu ms b32 | torch ms b32 | notes |",
            "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]


def speed_lines(rows, what):
    """The geometric mean of torch's time over torchtpu's at batch 1 and 32, as report lines."""
    lines = []
    for b in (1, 32):
        ratios = [r["torch_ms_b%d" % b] / r["ms_b%d" % b] for r in rows
                  if r.get("ms_b%d" % b) and r.get("torch_ms_b%d" % b)]
        if ratios:
            gm = float(np.exp(np.mean(np.log(ratios))))
            lines += ["Batch %d: torchtpu's speed over torch's, geometric mean %.2f× over %d %s (%d faster than torch, "
                      "%d slower)." % (b, gm, len(ratios), what, sum(x > 1 for x in ratios), sum(x <= 1 for x in ratios)),
                      ""]
    return lines


def main():
    args = sys.argv[1:]
    timm = args[:1] == ["--timm"]
    if timm:
        args = args[1:]
    run, cache, report, bench, archs = args[0], args[1], args[2], int(args[3]), args[4:]
    tag, width = ("--timm", 32) if timm else ("--hf", 16)
    rows = []
    for arch in archs:
        r = run_one(run, cache, arch, bench, timm)
        print("conformance %s: %-*s %s %s" % (tag, width, arch, r["status"], r.get("notes", "")), flush=True)
        rows.append(r)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    if timm:
        write_section(report, TIMM_BEGIN, TIMM_END, timm_header(bench, counts, rows) + [
            "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["arch"], r["model"], r["input"], r["status"], fmt(r.get("err"), "%.1e"),
                fmt(r.get("err64"), "%.1e"), fmt(r.get("torch_err"), "%.1e"), fmt(r.get("ms_b1"), "%.3g"),
                fmt(r.get("torch_ms_b1"), "%.3g"), fmt(r.get("ms_b32"), "%.3g"), fmt(r.get("torch_ms_b32"), "%.3g"),
                r.get("notes", "")) for r in rows] + ["", TIMM_END])
        print("conformance --timm: wrote %s: %s" % (report, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))
        return
    import transformers  # noqa: E402 - version for the report
    import torch
    lines = [HF_BEGIN, "", "## Hugging Face architectures (transformers %s, torch %s)" % (transformers.__version__,
                                                                                          torch.__version__), ""]
    lines.append("Generated by `scripts/conformance --hf` on %s. Each architecture is built by "
                 "`tools/trace_hf.py` from a small config with random weights (`from_config`: hidden 64, 2 layers, "
                 "4 heads; nothing downloaded), traced and frozen by torch 1.13, and run by `torchtpu-run --input ...` "
                 "on the cpu: text models take int64 `input_ids` [2, 16] and `attention_mask` [2, 16] (the second "
                 "sentence padded after 12 tokens), vision models a [1, 3, 32, 32] image, Whisper's encoder [1, 16, 64] "
                 "features, Wav2Vec2 [1, 1600] samples. The output compared is the first one (the last hidden state)."
                 % time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    lines.append("")
    lines.append("* **pass**: max|torchtpu − torch| / max|torch| ≤ 1e-4, or torchtpu's error against the float64 "
                 "reference (the same weights in float64, eager) ≤ 2× torch's own float32 error against it; "
                 "**mismatch**: neither; **unsupported ops**: the kinds torchtpu lacks (count in the graph); "
                 "**export failed**: torch itself could not build or trace the model; **error**: anything else.")
    lines.append("* Latency: p50 ms, one thread (torchtpu `TORCHTPU_NUM_THREADS=1` over %d runs; torch "
                 "`torch.set_num_threads(1)` and `openblas_set_num_threads(1)`, the traced module's median of 7, 5 at "
                 "batch 32, after 3 warm-up runs), at batch 1 and batch 32: the traced inputs' rows repeated "
                 "(`trace_hf.py --latency`), torchtpu's output checked against torch's at that batch too. "
                 "Measured one model after another on a 2-core VM with nothing else running (earlier runs beside a "
                 "build gave ratios off by up to 9×: compare only numbers from a quiet machine)." % bench)
    lines.append("")
    lines.append("Summary: " + ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items())) +
                 " (of %d architectures tried)" % len(rows))
    lines.append("")
    lines += speed_lines(rows, "architectures")
    lines.append("| architecture | model | status | rel error vs torch | vs float64 | torch's own vs float64 | "
                 "torchtpu ms b1 | torch ms b1 | torchtpu ms b32 | torch ms b32 | notes |")
    lines.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["arch"], r["model"], r["status"], fmt(r.get("err"), "%.1e"), fmt(r.get("err64"), "%.1e"),
            fmt(r.get("torch_err"), "%.1e"), fmt(r.get("ms_b1"), "%.3g"), fmt(r.get("torch_ms_b1"), "%.3g"),
            fmt(r.get("ms_b32"), "%.3g"), fmt(r.get("torch_ms_b32"), "%.3g"), r.get("notes", "")))
    lines += bf16_table(rows) + ["", HF_END]
    write_section(report, HF_BEGIN, HF_END, lines)
    print("conformance --hf: wrote %s: %s" % (report, ", ".join("%s %d" % kv for kv in sorted(counts.items()))))


def bf16_table(rows):
    """The HF section's bfloat16 table (rows that have a bf16_run result)."""
    rows = [r for r in rows if "bf16" in r]
    counts = {}
    for r in rows:
        counts[r["bf16"]["status"]] = counts.get(r["bf16"]["status"], 0) + 1
    lines = ["", "### The same architectures in bfloat16", "",
             "Each architecture that passed tracing above, converted to bfloat16 (`model.to(torch.bfloat16)`: the same "
             "random weights rounded), traced and frozen by torch 1.13 on the same inputs (`trace_hf.py --bf16`), and "
             "run by `torchtpu-run --dtype bfloat16`: weights and activations bfloat16; torchtpu computes each "
             "matrix product, softmax and normalization in float32 and rounds its result to bfloat16, as torch's CPU "
             "kernels do. Compared with torch's own bfloat16 output and with the float64 reference of the bfloat16 "
             "model (its rounded weights in float64, eager).", "",
             "* **pass**: max|torchtpu − torch bf16| / max|torch bf16| ≤ 2⁻⁵ (bfloat16 keeps 8 significant bits, so "
             "one rounding is up to 2⁻⁹ relative, and two layers of them differ by several ulps between two correct "
             "summation orders), or torchtpu's error against float64 ≤ 2× torch's own bfloat16 error against it; "
             "**mismatch**: neither; **export failed**: torch 1.13 could not run or trace the model in bfloat16.",
             "* Latency: p50 ms at batch 1, one thread, as above.", "",
             "Summary: " + ", ".join("%s %d" % (k, v) for k, v in sorted(counts.items())) +
             " (of %d architectures)" % len(rows), "",
             "| architecture | status | rel error vs torch bf16 | vs float64 | torch bf16's own vs float64 | "
             "torchtpu ms | torch ms | notes |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = r["bf16"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["arch"], b["status"], fmt(b.get("err"), "%.1e"), fmt(b.get("err64"), "%.1e"),
            fmt(b.get("torch_err"), "%.1e"), fmt(b.get("ms"), "%.3g"), fmt(b.get("torch_ms"), "%.3g"),
            b.get("notes", "")))
    return lines


def write_section(report, begin, end, lines):
    """Replaces REPORT's text from BEGIN to END by LINES (which start and end with them), or
    appends them when the markers are missing; nothing else in REPORT changes."""
    text = open(report).read() if os.path.exists(report) else ""
    block = "\n".join(lines) + "\n"
    if begin in text and end in text:
        a, b = text.index(begin), text.index(end) + len(end)
        text = text[:a] + block.rstrip("\n") + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + block
    with open(report, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
