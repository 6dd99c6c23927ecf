#!/usr/bin/python3
"""tools/trace_timm.py — timm (PyTorch Image Models) classifiers for scripts/conformance --timm:
each built by `timm.create_model(NAME, pretrained=False, num_classes=10)` at its smallest variant
(random weights, seeded: nothing is downloaded), traced and frozen by Debian's torch 1.13 (the
TorchScript torchtpu's libtorch reads), with its input, torch's float32 output and a float64
reference (the same weights in float64, eager).

Run with /usr/bin/python3 and PYTHONPATH=.venv-hf (timm 0.9.16, scripts/requirements-hf.txt).
Usage: trace_timm.py CACHE [MODEL ...]     (default: every model of MODELS)
       trace_timm.py --list

The cache is laid out as tools/trace_hf.py's, so tools/conformance_hf.py --timm runs it. Per
MODEL, into CACHE: MODEL.pt, MODEL.in0.npy (the image, 1x3xSxS), MODEL.out.npy (torch float32:
the logits), MODEL.f64.npy (float64 eager), MODEL.json ({"status": "traced" | "export failed",
"error": ..., "torch_ms": median ms of the traced module over 7 runs, one thread, "torch_err":
torch's own float32 error against float64 as max|f32 - f64| / max|f64|, "input_shape": ...}).

Input: 64x64 where the model takes it; a model built for a fixed resolution (position
embeddings, attention windows or biases) gets `img_size=64` (IMG below). A model that still
fails at 64 (eager, before tracing) is retried at the next size of SIZES, and the size used is
noted. Weights: timm's own random initialisation under torch.manual_seed(SEED), then made
non-degenerate: parameters that are all zero (timm zero-initialises some classifier heads,
last BatchNorm gammas of residual blocks and layer scales) get N(0, 0.02), every normalisation
layer's affine gets random values and every BatchNorm running statistics measured on random
images (so conv-BN folding in the frozen graph is really exercised).
"""
import copy
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trace_hf import save_traced  # noqa: E402 - the shared cache layout
from trace_torchvision import set_torch_threads, timed_ms  # noqa: E402

SEED = 0
INPUT_SEED = 1
NUM_CLASSES = 10
SIZES = (64, 96, 128, 160, 192, 224, 256, 299)
IMG = "img"  # the model takes img_size=S (alone, or as a value in its arguments)

# model -> (family, input size to try first, extra create_model arguments (IMG: the size) or IMG
# alone for dict(img_size=IMG)). The smallest
# variant timm 0.9.16 has of each family; families in the order of the brief, then further ones.
MODELS = {
    "resnet18": ("resnet", 64, {}),
    "resnet10t": ("resnet", 64, {}),
    "resnext50_32x4d": ("resnext", 64, {}),
    "regnetx_002": ("regnet", 64, {}),
    "regnety_002": ("regnet", 64, {}),
    "efficientnet_b0": ("efficientnet", 64, {}),
    "mobilenetv3_small_050": ("mobilenetv3", 64, {}),
    "mixnet_s": ("mixnet", 64, {}),
    "ghostnet_050": ("ghostnet", 64, {}),
    "densenet121": ("densenet", 64, {}),
    "dpn48b": ("dpn", 64, {}),
    "inception_v3": ("inception_v3", 64, {}),
    "inception_v4": ("inception_v4", 64, {}),
    "xception41": ("xception", 64, {}),
    "vgg11": ("vgg", 64, {}),
    "rexnet_100": ("rexnet", 64, {}),
    "hrnet_w18_small": ("hrnet", 64, {}),
    "convnext_atto": ("convnext", 64, {}),
    "convnextv2_atto": ("convnextv2", 64, {}),
    "vit_tiny_patch16_224": ("vit", 64, IMG),
    "deit_tiny_distilled_patch16_224": ("deit", 64, IMG),
    "beit_base_patch16_224": ("beit", 64, IMG),
    "swin_tiny_patch4_window7_224": ("swin", 64, dict(img_size=IMG, window_size=4)),
    "swinv2_tiny_window8_256": ("swinv2", 64, dict(img_size=IMG, window_size=4)),
    "cait_xxs24_224": ("cait", 64, IMG),
    "xcit_nano_12_p16_224": ("xcit", 64, IMG),
    "coat_lite_tiny": ("coat", 64, IMG),
    "crossvit_tiny_240": ("crossvit", 120, IMG),  # both branches' patches (12, 16) must tile it
    "levit_128s": ("levit", 64, IMG),
    "pit_ti_224": ("pit", 64, IMG),
    "tnt_s_patch16_224": ("tnt", 64, IMG),
    "mixer_s16_224": ("mlp_mixer", 64, IMG),
    "resmlp_12_224": ("resmlp", 64, IMG),
    "gmlp_ti16_224": ("gmlp", 64, IMG),
    "poolformer_s12": ("poolformer", 64, {}),
    "efficientformer_l1": ("efficientformer", 64, {}),
    "edgenext_xx_small": ("edgenext", 64, {}),
    "mobilevit_xxs": ("mobilevit", 64, {}),
    "maxvit_pico_rw_256": ("maxvit", 64, IMG),
    "coatnet_pico_rw_224": ("coatnet", 64, IMG),
    "nfnet_l0": ("nfnet", 64, {}),
    "dla46_c": ("dla", 64, {}),
    "cspresnet50": ("cspnet", 64, {}),
    "darknet17": ("darknet", 64, {}),
    "res2net50_26w_4s": ("res2net", 64, {}),
    "resnest14d": ("resnest", 64, {}),
    "skresnet18": ("sknet", 64, {}),
    "selecsls42b": ("selecsls", 64, {}),
    "tresnet_m": ("tresnet", 64, {}),
    "hardcorenas_a": ("hardcorenas", 64, {}),
    "fbnetc_100": ("fbnet", 64, {}),
    "lcnet_050": ("lcnet", 64, {}),
    # further families
    "ese_vovnet19b_dw": ("vovnet", 64, {}),
    "repvgg_a0": ("repvgg", 64, {}),
    "mobileone_s0": ("mobileone", 64, {}),
    "fastvit_t8": ("fastvit", 64, {}),
    "efficientvit_b0": ("efficientvit", 64, {}),
    "repghostnet_050": ("repghost", 64, {}),
    "mnasnet_small": ("mnasnet", 64, {}),
    "resnetv2_50": ("resnetv2", 64, {}),
    "seresnext26d_32x4d": ("seresnext", 64, {}),
    "davit_tiny": ("davit", 64, {}),
    "focalnet_tiny_srf": ("focalnet", 64, {}),
    "pvt_v2_b0": ("pvt_v2", 64, {}),
    "visformer_tiny": ("visformer", 64, IMG),
    "convit_tiny": ("convit", 64, IMG),
    "volo_d1_224": ("volo", 64, IMG),
    "eva02_tiny_patch14_224": ("eva", 70, IMG),  # a multiple of the 14-pixel patch
    "inception_next_tiny": ("inception_next", 64, {}),
    "tiny_vit_5m_224": ("tiny_vit", 64, {}),
    "repvit_m1": ("repvit", 64, {}),
    "hgnetv2_b0": ("hgnet", 64, {}),
    "gernet_s": ("gernet", 64, {}),
    "sequencer2d_s": ("sequencer", 64, {}),
}



def randomize(model, size, torch):
    """Non-degenerate random weights (see the module docstring); eval mode."""
    nn = torch.nn
    norms = (nn.modules.batchnorm._BatchNorm, nn.GroupNorm, nn.LayerNorm)
    with torch.no_grad():
        for p in model.parameters():
            if p.numel() > 0 and bool((p == 0).all()):
                p.normal_(0.0, 0.02)
        for m in model.modules():
            if isinstance(m, norms) and getattr(m, "weight", None) is not None:
                m.weight.uniform_(0.5, 1.5)
                if m.bias is not None:
                    m.bias.normal_(0.0, 0.1)
        bns = [m for m in model.modules()
               if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_mean is not None]
        if bns:
            # each BatchNorm's statistics from what it sees in eval mode (the ones above already
            # set): the per-channel mean and the layer's mean variance times U(0.5, 1.5)
            def measure(bn, args):
                x = args[0]
                dims = [d for d in range(x.dim()) if d != 1]
                bn.running_mean.copy_(x.mean(dim=dims))
                bn.running_var.copy_(x.var(dim=dims).mean() * torch.empty_like(bn.running_var).uniform_(0.5, 1.5))

            model.eval()
            hooks = [bn.register_forward_pre_hook(measure) for bn in bns]
            model(torch.randn(4, 3, size, size))
            for h in hooks:
                h.remove()
    return model.eval()


def build(name, torch, timm):
    """The model at the first size of SIZES (from its own) at which eager float32 runs: (model,
    input, eager output, size, kwargs, note)."""
    family, first, extra = MODELS[name]
    last = None
    for size in [first] + [s for s in SIZES if s > first]:
        kw = {k: size if v == IMG else v for k, v in (dict(img_size=IMG) if extra == IMG else extra).items()}
        torch.manual_seed(SEED)
        try:
            model = timm.create_model(name, pretrained=False, num_classes=NUM_CLASSES, **kw)
            model = randomize(model.eval(), size, torch)
            x = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(INPUT_SEED))
            with torch.no_grad():
                y = model(x)
        except Exception as e:  # noqa: BLE001 - too small for this model: the next size
            last = e
            continue
        note = "" if size == first else "needs at least %dx%d here (%s at %d)" % (
            size, size, type(last).__name__, first)
        return model, x, y, size, kw, note
    raise last


def main():
    import torch
    import timm
    if sys.argv[1:] == ["--list"]:
        print("\n".join(MODELS))
        return
    cache, names = sys.argv[1], sys.argv[2:] or list(MODELS)
    os.makedirs(cache, exist_ok=True)
    set_torch_threads(1)  # torch's threads and OpenBLAS's (trace_torchvision.py)
    for name in names:
        meta_path = os.path.join(cache, name + ".json")
        if os.path.exists(meta_path):
            continue
        stem = os.path.join(cache, name)
        meta = {"arch": name, "model_type": MODELS[name][0], "class": "?", "timm": timm.__version__}
        t_start = time.time()
        try:
            model, x, ref, size, kw, note = build(name, torch, timm)
            meta.update({"class": type(model).__name__, "kwargs": kw, "input_shape": list(x.shape),
                         "params": sum(p.numel() for p in model.parameters())})
            if note:
                meta["note"] = note
            with torch.no_grad():
                try:
                    traced = torch.jit.freeze(torch.jit.trace(model, (x,), check_trace=False))
                except Exception as e:  # noqa: BLE001 - torch's own failure is the status
                    meta.update(status="export failed",
                                error=("torch.jit.trace: %s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
                    raise StopIteration
                got = traced(x)
                ts = timed_ms(traced, (x,), 7)
                try:
                    # a copy: .double() converts parameters in place, which the frozen trace may share
                    f64 = copy.deepcopy(model).double()(x.double()).double()
                except Exception as e:  # noqa: BLE001 - float32-only code paths
                    f64 = None
                    meta["f64_error"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]
            save_traced(stem, meta, traced, (x,), ref, got, f64, ts)
        except StopIteration:
            pass
        except Exception as e:  # noqa: BLE001 - timm could not build or run the model on torch 1.13
            meta.update(status="export failed", error=("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        print("trace_timm: %-32s %s (%.1f s)" % (name, meta["status"] + (
            " (" + meta["error"] + ")" if "error" in meta else "") + (
            " [" + meta["note"] + "]" if "note" in meta else ""), time.time() - t_start), flush=True)


if __name__ == "__main__":
    main()
