#!/usr/bin/python3
"""tools/trace_hf.py — Hugging Face architectures for scripts/conformance --hf: each one built
from a small config with random weights (`from_config`: nothing is downloaded), traced and frozen
by Debian's torch 1.13 (the TorchScript torchtpu's libtorch reads), with its inputs, torch's
float32 output and a float64 reference (the same weights in float64, eager).

Run with /usr/bin/python3 and PYTHONPATH=.venv-hf (transformers 4.40, scripts/requirements-hf.txt).
Usage: trace_hf.py CACHE [ARCH ...]     (default: every architecture of ARCHS)
       trace_hf.py --list

Per architecture ARCH, into CACHE: ARCH.pt, ARCH.in0.npy, ARCH.in1.npy ... (the inputs in the
order the traced module takes them), ARCH.out.npy (torch float32, the first output: the last
hidden state), ARCH.f64.npy (float64 eager), ARCH.json ({"status": "traced" | "export failed",
"error": ..., "torch_ms": median ms of the traced module, one thread, "torch_err": torch's own
float32 error against float64 as max|f32 - f64| / max|f64|}).
"""
import copy
import json
import os
import sys
import time

# architecture -> (model_type or config class, model class (".part": its submodule), config
# overrides, input kind)
# Small sizes: hidden 64, 2 layers, 4 heads, intermediate 128, vocabulary 512.
TEXT = dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
            max_position_embeddings=128)
ARCHS = {
    "bert": ("bert", "AutoModel", dict(TEXT), "text"),
    "roberta": ("roberta", "AutoModel", dict(TEXT, max_position_embeddings=130), "text"),
    "distilbert": ("distilbert", "AutoModel", dict(vocab_size=512, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                                                   max_position_embeddings=128), "text"),
    "albert": ("albert", "AutoModel", dict(TEXT, embedding_size=32), "text"),
    "electra": ("electra", "AutoModel", dict(TEXT, embedding_size=32), "text"),
    "deberta-v2": ("deberta-v2", "AutoModel", dict(TEXT), "text"),
    "mpnet": ("mpnet", "AutoModel", dict(TEXT, max_position_embeddings=130), "text"),
    "gpt2": ("gpt2", "AutoModel", dict(vocab_size=512, n_embd=64, n_layer=2, n_head=4, n_positions=128), "text"),
    "gpt-neo": ("gpt_neo", "AutoModel", dict(vocab_size=512, hidden_size=64, num_layers=2, num_heads=4,
                                             attention_types=[[["global", "local"], 1]], max_position_embeddings=128,
                                             window_size=8), "text"),
    "opt": ("opt", "AutoModel", dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                     ffn_dim=128, max_position_embeddings=128, word_embed_proj_dim=64), "text"),
    "llama": ("llama", "AutoModel", dict(TEXT, num_key_value_heads=2), "text"),
    "mistral": ("mistral", "AutoModel", dict(TEXT, num_key_value_heads=2, sliding_window=64), "text"),
    "qwen2": ("qwen2", "AutoModel", dict(TEXT, num_key_value_heads=2), "text"),
    "phi": ("phi", "AutoModel", dict(TEXT), "text"),
    "gemma": ("gemma", "AutoModel", dict(TEXT, num_key_value_heads=2, head_dim=16), "text"),
    "t5-encoder": ("t5", "T5EncoderModel", dict(vocab_size=512, d_model=64, d_kv=16, d_ff=128, num_layers=2,
                                                 num_heads=4), "text"),
    "bart-encoder": ("bart", "BartModel.encoder", dict(vocab_size=512, d_model=64, encoder_layers=2, decoder_layers=2,
                                                       encoder_attention_heads=4, decoder_attention_heads=4,
                                                       encoder_ffn_dim=128, decoder_ffn_dim=128,
                                                       max_position_embeddings=128), "text"),
    "clip-text": ("CLIPTextConfig", "CLIPTextModel", dict(vocab_size=512, hidden_size=64, intermediate_size=128,
                                                           num_hidden_layers=2, num_attention_heads=4,
                                                           max_position_embeddings=64), "text"),
    "vit": ("vit", "AutoModel", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
                                     image_size=32, patch_size=8), "image"),
    "deit": ("deit", "AutoModel", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                       intermediate_size=128, image_size=32, patch_size=8), "image"),
    "swin": ("swin", "AutoModel", dict(embed_dim=16, depths=[1, 1], num_heads=[2, 4], image_size=32, patch_size=4,
                                       window_size=4), "image"),
    "convnext": ("convnext", "AutoModel", dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2,
                                               image_size=32), "image"),
    "resnet": ("resnet", "AutoModel", dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                                           layer_type="basic"), "image"),
    "mobilevit": ("mobilevit", "AutoModel", dict(image_size=32, hidden_sizes=[32, 48, 64],
                                                 neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64], num_attention_heads=2),
                  "image"),
    "clip-vision": ("clip_vision_model", "CLIPVisionModel", dict(hidden_size=64, intermediate_size=128,
                                                                 num_hidden_layers=2, num_attention_heads=4,
                                                                 image_size=32, patch_size=8), "image"),
    "whisper-encoder": ("whisper", "WhisperModel.encoder", dict(vocab_size=512, d_model=64, encoder_layers=2,
                                                                 decoder_layers=2, encoder_attention_heads=4,
                                                                 decoder_attention_heads=4, encoder_ffn_dim=128,
                                                                 decoder_ffn_dim=128, num_mel_bins=16,
                                                                 max_source_positions=32, pad_token_id=0,
                                                                 bos_token_id=1, eos_token_id=2,
                                                                 decoder_start_token_id=1), "audio-features"),
    "wav2vec2": ("wav2vec2", "AutoModel", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                               intermediate_size=128, conv_dim=(16, 16), conv_stride=(5, 2),
                                               conv_kernel=(10, 3), num_conv_pos_embeddings=16,
                                               num_conv_pos_embedding_groups=4), "audio"),
}
SEED = 0


def inputs_for(kind, cfg, torch):
    """Example inputs (a tuple, the traced module's order) for an input kind."""
    g = torch.Generator().manual_seed(1)
    if kind == "text":
        ids = torch.randint(1, cfg.vocab_size, (2, 16), generator=g)
        mask = torch.ones(2, 16, dtype=torch.long)
        mask[1, 12:] = 0  # the second sentence is 12 tokens, padded
        return (ids, mask)
    if kind == "image":
        return (torch.randn(1, 3, 32, 32, generator=g),)
    if kind == "audio-features":
        return (torch.randn(1, cfg.num_mel_bins, 2 * cfg.max_source_positions, generator=g),)
    if kind == "audio":
        return (torch.randn(1, 1600, generator=g),)
    raise ValueError(kind)


def build(arch, torch, transformers):
    model_type, cls, kw, kind = ARCHS[arch]
    if model_type.endswith("Config"):  # a config class AutoConfig does not map (CLIP's text tower)
        cfg = getattr(transformers, model_type)(**kw)
    else:
        cfg = transformers.AutoConfig.for_model(model_type, **kw)
    for k in ("hidden_dropout_prob", "attention_probs_dropout_prob", "dropout", "attention_dropout"):
        if hasattr(cfg, k):
            setattr(cfg, k, 0.0)
    if hasattr(cfg, "_attn_implementation"):
        cfg._attn_implementation = "eager"
    note = None
    if model_type == "deberta-v2":
        # DeBERTa's masked softmax is a torch.autograd.Function (XSoftmax): the tracer records it
        # as a prim::PythonOp, which TorchScript cannot save. Its forward's own ops replace it
        # (eval mode: the backward is never used), so the traced graph holds plain aten ops.
        mod = transformers.models.deberta_v2.modeling_deberta_v2

        class PlainXSoftmax:
            @staticmethod
            def apply(scores, mask, dim):
                rmask = ~(mask.to(torch.bool))
                out = torch.softmax(scores.masked_fill(rmask, torch.tensor(torch.finfo(scores.dtype).min)), dim)
                return out.masked_fill(rmask, 0)

        mod.XSoftmax = PlainXSoftmax
        note = "XSoftmax (a Python autograd Function TorchScript cannot save) traced as its forward's ops"
    torch.manual_seed(SEED)
    name, _, part = cls.partition(".")
    klass = getattr(transformers, name)
    model = (klass.from_config(cfg) if name.startswith("Auto") else klass(cfg)).eval()
    if part:
        model = getattr(model, part) if hasattr(model, part) else getattr(model.model, part)
    return model, cfg, kind, note


def main():
    import numpy as np
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    if sys.argv[1:] == ["--list"]:
        print("\n".join(ARCHS))
        return
    cache, names = sys.argv[1], sys.argv[2:] or list(ARCHS)
    os.makedirs(cache, exist_ok=True)
    torch.set_num_threads(1)

    class First(torch.nn.Module):
        """The model's first output (the last hidden state) as a plain tensor."""

        def __init__(self, m, kind):
            super().__init__()
            self.m, self.kind = m, kind

        def forward(self, *x):
            if self.kind == "text":
                out = self.m(input_ids=x[0], attention_mask=x[1], return_dict=False)
            else:
                out = self.m(x[0], return_dict=False)
            return out[0]

    for arch in names:
        meta_path = os.path.join(cache, arch + ".json")
        if os.path.exists(meta_path):
            continue
        stem = os.path.join(cache, arch)
        meta = {"arch": arch, "model_type": ARCHS[arch][0], "class": ARCHS[arch][1]}
        try:
            model, cfg, kind, note = build(arch, torch, transformers)
            if note:
                meta["note"] = note
            x = inputs_for(kind, cfg, torch)
            wrapped = First(model, kind).eval()
            with torch.no_grad():
                ref = wrapped(*x)
                try:
                    traced = torch.jit.freeze(torch.jit.trace(wrapped, x, check_trace=False))
                except Exception as e:  # noqa: BLE001 - torch's own failure is the status
                    meta.update(status="export failed",
                                error=("torch.jit.trace: %s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
                    raise StopIteration
                got = traced(*x)
                ts = []
                for _ in range(7):
                    t0 = time.perf_counter()
                    traced(*x)
                    ts.append((time.perf_counter() - t0) * 1e3)
                try:
                    # a copy: .double() converts parameters in place, which a frozen trace may share
                    f64 = First(copy.deepcopy(model).double(), kind)(
                        *[t.double() if t.is_floating_point() else t for t in x]).double()
                except Exception as e:  # noqa: BLE001 - some models build float32-only masks
                    f64 = None
                    meta["f64_error"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]
            traced.save(stem + ".pt")
            for i, t in enumerate(x):
                np.save("%s.in%d.npy" % (stem, i), t.numpy())
            np.save(stem + ".out.npy", ref.float().numpy())
            scale = float((f64 if f64 is not None else ref).abs().max()) or 1.0
            meta.update(status="traced", inputs=len(x), shape=list(ref.shape), torch_ms=sorted(ts)[len(ts) // 2],
                        trace_vs_eager=float((got - ref).abs().max()) / scale)
            if f64 is not None:
                np.save(stem + ".f64.npy", f64.numpy())
                meta["torch_err"] = float((ref.double() - f64).abs().max()) / scale
        except StopIteration:
            pass
        except Exception as e:  # noqa: BLE001 - building the model failed in transformers itself
            meta.update(status="export failed", error=("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        print("trace_hf: %-16s %s" % (arch, meta["status"] + (" (" + meta["error"] + ")" if "error" in meta else "")),
              flush=True)


if __name__ == "__main__":
    main()
