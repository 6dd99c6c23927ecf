#!/usr/bin/python3
"""tools/trace_hf.py — Hugging Face architectures for scripts/conformance --hf: each one built
from a small config with random weights (`from_config`: nothing is downloaded), traced and frozen
by Debian's torch 1.13 (the TorchScript torchtpu's libtorch reads), with its inputs, torch's
float32 output and a float64 reference (the same weights in float64, eager).

Run with /usr/bin/python3 and PYTHONPATH=.venv-hf (transformers 4.40, scripts/requirements-hf.txt).
Usage: trace_hf.py CACHE [ARCH ...]     (default: every architecture of ARCHS)
       trace_hf.py --latency CACHE [ARCH ...]  (inputs and torch's latency at batch 1 and 32)
       trace_hf.py --bf16 CACHE [ARCH ...]     (the same models in bfloat16: ARCH.bf16.* files)
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
# Further architectures (encoders, decoders, seq2seq encoders, vision, audio, video), same sizes.
TEXT130 = dict(TEXT, max_position_embeddings=130)  # RoBERTa-style position ids start after the padding id
S2S = dict(vocab_size=512, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
           decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128)
T5S = dict(vocab_size=512, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4)
VITS = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, image_size=32,
            patch_size=8)
W2V = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128, conv_dim=(16, 16),
           conv_stride=(5, 2), conv_kernel=(10, 3), num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
GPT = dict(vocab_size=512, n_embd=64, n_layer=2, n_head=4, n_positions=128)
ARCHS.update({
    # text encoders
    "xlm-roberta": ("xlm-roberta", "AutoModel", dict(TEXT130), "text"),
    "xlm-roberta-xl": ("xlm-roberta-xl", "AutoModel", dict(TEXT130), "text"),
    "roberta-prelayernorm": ("roberta-prelayernorm", "AutoModel", dict(TEXT130), "text"),
    "camembert": ("camembert", "AutoModel", dict(TEXT130), "text"),
    "data2vec-text": ("data2vec-text", "AutoModel", dict(TEXT130), "text"),
    "ibert": ("ibert", "AutoModel", dict(TEXT130), "text"),
    "xmod": ("xmod", "AutoModel", dict(TEXT130, languages=["en_XX"], default_language="en_XX"), "text"),
    "mobilebert": ("mobilebert", "AutoModel", dict(TEXT, embedding_size=32, true_hidden_size=32,
                                                   intra_bottleneck_size=32, num_feedforward_networks=2), "text"),
    "squeezebert": ("squeezebert", "AutoModel", dict(TEXT, embedding_size=64, q_groups=4, k_groups=4, v_groups=4,
                                                     post_attention_groups=4, intermediate_groups=4,
                                                     output_groups=4), "text"),
    "roformer": ("roformer", "AutoModel", dict(TEXT, embedding_size=64), "text"),
    "nezha": ("nezha", "AutoModel", dict(TEXT, max_relative_position=16), "text"),
    "ernie": ("ernie", "AutoModel", dict(TEXT), "text"),
    "ernie-m": ("ernie_m", "AutoModel", dict(TEXT, max_position_embeddings=130), "text"),
    "megatron-bert": ("megatron-bert", "AutoModel", dict(TEXT), "text"),
    "convbert": ("convbert", "AutoModel", dict(TEXT, embedding_size=64, head_ratio=2, conv_kernel_size=3), "text"),
    "rembert": ("rembert", "AutoModel", dict(TEXT, input_embedding_size=32, output_embedding_size=32), "text"),
    "deberta": ("deberta", "AutoModel", dict(TEXT, relative_attention=True, pos_att_type=["c2p", "p2c"]), "text"),
    "esm": ("esm", "AutoModel", dict(TEXT130, pad_token_id=1, mask_token_id=2,
                                     position_embedding_type="rotary"), "text"),
    "big-bird": ("big_bird", "AutoModel", dict(TEXT, attention_type="original_full"), "text"),
    "canine": ("canine", "AutoModel", dict(TEXT, vocab_size=512, num_hash_buckets=512, downsampling_rate=4,
                                           upsampling_kernel_size=4, local_transformer_stride=16), "text"),
    "funnel": ("funnel", "FunnelModel", dict(vocab_size=512, block_sizes=[1, 1], block_repeats=[1, 1], num_decoder_layers=1, d_model=64,
                                           n_head=4, d_head=16, d_inner=128), "text"),
    "layoutlm": ("layoutlm", "AutoModel", dict(TEXT), "text"),
    "lilt": ("lilt", "AutoModel", dict(TEXT130, hidden_size=48, intermediate_size=96, channel_shrink_ratio=4),
             "text"),  # hidden a multiple of 6 (the six layout embeddings)
    "markuplm": ("markuplm", "AutoModel", dict(TEXT130), "text"),
    "tapas": ("tapas", "AutoModel", dict(TEXT), "text"),
    "bert-generation": ("bert-generation", "AutoModel", dict(TEXT), "text"),
    "splinter": ("splinter", "AutoModel", dict(TEXT), "text"),
    "luke": ("luke", "AutoModel", dict(TEXT130, entity_vocab_size=16, entity_emb_size=32), "text"),
    "longformer": ("longformer", "AutoModel", dict(TEXT130, attention_window=4), "text"),
    "nystromformer": ("nystromformer", "AutoModel", dict(TEXT130, num_landmarks=4, segment_means_seq_len=16,
                                                         conv_kernel_size=3), "text"),
    "yoso": ("yoso", "AutoModel", dict(TEXT130, use_fast_hash=False), "text"),
    "visual-bert": ("visual_bert", "AutoModel", dict(TEXT, visual_embedding_dim=32), "text"),
    "roc-bert": ("roc_bert", "AutoModel", dict(TEXT, pronunciation_vocab_size=16, shape_vocab_size=16,
                                               pronunciation_embed_dim=32, shape_embed_dim=32), "text"),
    "mega": ("mega", "AutoModel", dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, intermediate_size=128,
                                       ema_projection_size=8, shared_representation_size=32,
                                       max_positions=128), "text"),
    "xlm": ("xlm", "AutoModel", dict(vocab_size=512, emb_dim=64, n_layers=2, n_heads=4, max_position_embeddings=128),
            "text"),
    "flaubert": ("flaubert", "AutoModel", dict(vocab_size=512, emb_dim=64, n_layers=2, n_heads=4,
                                               max_position_embeddings=128), "text"),
    "xlnet": ("xlnet", "AutoModel", dict(vocab_size=512, d_model=64, n_layer=2, n_head=4, d_inner=128), "text"),
    "fnet": ("fnet", "AutoModel", dict(TEXT), "ids"),
    "reformer": ("reformer", "AutoModel", dict(vocab_size=512, hidden_size=64, num_attention_heads=4,
                                               attention_head_size=16, attn_layers=["local", "local"],
                                               axial_pos_shape=[4, 4], axial_pos_embds_dim=[32, 32],
                                               feed_forward_size=128, local_attn_chunk_length=4,
                                               max_position_embeddings=16, is_decoder=False), "text"),
    # decoders
    "gptj": ("gptj", "AutoModel", dict(GPT, rotary_dim=8), "text"),
    "codegen": ("codegen", "AutoModel", dict(GPT, n_ctx=128, rotary_dim=8), "text"),
    "gpt-bigcode": ("gpt_bigcode", "AutoModel", dict(GPT), "text"),
    "openai-gpt": ("openai-gpt", "AutoModel", dict(GPT), "text"),
    "imagegpt": ("imagegpt", "AutoModel", dict(GPT), "text"),
    "ctrl": ("ctrl", "AutoModel", dict(vocab_size=512, n_embd=64, dff=128, n_layer=2, n_head=4, n_positions=128),
             "text"),
    "gpt-neox": ("gpt_neox", "AutoModel", dict(TEXT, rotary_pct=0.25), "text"),
    "gpt-neox-japanese": ("gpt_neox_japanese", "AutoModel", dict(TEXT, intermediate_multiple_size=2), "text"),
    "bloom": ("bloom", "AutoModel", dict(vocab_size=512, hidden_size=64, n_layer=2, n_head=4), "text"),
    "falcon": ("falcon", "AutoModel", dict(TEXT), "text"),
    "stablelm": ("stablelm", "AutoModel", dict(TEXT, num_key_value_heads=2), "text"),
    "starcoder2": ("starcoder2", "AutoModel", dict(TEXT, num_key_value_heads=2), "text"),
    "persimmon": ("persimmon", "AutoModel", dict(TEXT), "text"),
    "xglm": ("xglm", "AutoModel", dict(vocab_size=512, d_model=64, num_layers=2, attention_heads=4, ffn_dim=128,
                                       max_position_embeddings=128), "text"),
    "biogpt": ("biogpt", "AutoModel", dict(TEXT), "text"),
    "mixtral": ("mixtral", "AutoModel", dict(TEXT, num_key_value_heads=2, num_local_experts=4,
                                             num_experts_per_tok=2), "text"),
    "qwen2-moe": ("qwen2_moe", "AutoModel", dict(TEXT, num_key_value_heads=2, moe_intermediate_size=64,
                                                 shared_expert_intermediate_size=128, num_experts=4,
                                                 num_experts_per_tok=2), "text"),
    "olmo": ("olmo", "AutoModel", dict(TEXT), "text"),
    "cohere": ("cohere", "AutoModel", dict(TEXT, num_key_value_heads=2), "text"),
    "mpt": ("mpt", "AutoModel", dict(vocab_size=512, d_model=64, n_heads=4, n_layers=2, expansion_ratio=2,
                                     max_seq_len=128), "text"),
    "dbrx": ("dbrx", "AutoModel", dict(vocab_size=512, d_model=64, n_heads=4, n_layers=2, max_seq_len=128,
                                       attn_config=dict(kv_n_heads=2),
                                       ffn_config=dict(ffn_hidden_size=128, moe_num_experts=4, moe_top_k=2)), "text"),
    "recurrent-gemma": ("recurrent_gemma", "AutoModel", dict(TEXT, num_key_value_heads=2, lru_width=64,
                                                             attention_window_size=16, conv1d_width=4,
                                                             block_types=["recurrent", "attention"]), "text"),
    "mamba": ("mamba", "AutoModel", dict(vocab_size=512, hidden_size=64, state_size=8, num_hidden_layers=2), "ids"),
    "rwkv": ("rwkv", "AutoModel", dict(vocab_size=512, hidden_size=64, num_hidden_layers=2, attention_hidden_size=64,
                                       intermediate_size=128, context_length=128), "text"),
    "jamba": ("jamba", "AutoModel", dict(TEXT, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2,
                                         mamba_d_state=8, mamba_expand=2, attn_layer_period=2, attn_layer_offset=1,
                                         expert_layer_period=2, expert_layer_offset=1, use_mamba_kernels=False),
              "text"),
    # encoders of seq2seq models
    "pegasus-encoder": ("pegasus", "PegasusModel.encoder", dict(S2S), "text"),
    "marian-encoder": ("marian", "MarianModel.encoder", dict(S2S, pad_token_id=0, decoder_start_token_id=0,
                                                             eos_token_id=1, decoder_vocab_size=512), "text"),
    "mbart-encoder": ("mbart", "MBartModel.encoder", dict(S2S), "text"),
    "m2m-100-encoder": ("m2m_100", "M2M100Model.encoder", dict(S2S), "text"),
    "blenderbot-encoder": ("blenderbot", "BlenderbotModel.encoder", dict(S2S), "text"),
    "blenderbot-small-encoder": ("blenderbot-small", "BlenderbotSmallModel.encoder", dict(S2S), "text"),
    "plbart-encoder": ("plbart", "PLBartModel.encoder", dict(S2S), "text"),
    "mvp-encoder": ("mvp", "MvpModel.encoder", dict(S2S), "text"),
    "led-encoder": ("led", "LEDModel.encoder", dict(S2S, max_encoder_position_embeddings=128,
                                                   max_decoder_position_embeddings=128, attention_window=[4, 4]),
                    "text"),
    "bigbird-pegasus-encoder": ("bigbird_pegasus", "BigBirdPegasusModel.encoder",
                                dict(S2S, attention_type="original_full"), "text"),
    "pegasus-x-encoder": ("pegasus_x", "PegasusXModel.encoder", dict(S2S, block_size=4, num_global_tokens=4),
                          "text"),
    "nllb-moe-encoder": ("nllb-moe", "NllbMoeModel.encoder", dict(S2S, num_experts=4, expert_capacity=64,
                                                                  encoder_sparse_step=2, decoder_sparse_step=2),
                         "text"),
    "prophetnet-encoder": ("prophetnet", "ProphetNetModel.encoder",
                           dict(vocab_size=512, hidden_size=64, encoder_ffn_dim=128, num_encoder_layers=2,
                                num_encoder_attention_heads=4, decoder_ffn_dim=128, num_decoder_layers=2,
                                num_decoder_attention_heads=4, max_position_embeddings=128, ngram=2,
                                num_buckets=8, relative_max_distance=16), "text"),
    "fsmt-encoder": ("fsmt", "FSMTModel.encoder", dict(src_vocab_size=512, tgt_vocab_size=512, d_model=64,
                                                       encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                                       decoder_attention_heads=4, encoder_ffn_dim=128,
                                                       decoder_ffn_dim=128, max_position_embeddings=128,
                                                       langs=["en", "de"], vocab_size=512), "text"),
    "mt5-encoder": ("mt5", "MT5EncoderModel", dict(T5S), "text"),
    "umt5-encoder": ("umt5", "UMT5EncoderModel", dict(T5S), "text"),
    "longt5-encoder": ("longt5", "LongT5EncoderModel", dict(T5S, local_radius=4), "text"),
    "switch-transformers-encoder": ("switch_transformers", "SwitchTransformersEncoderModel",
                                    dict(T5S, num_sparse_encoder_layers=1, num_sparse_decoder_layers=1,
                                         num_experts=4, expert_capacity=64), "text"),
    # vision
    "beit": ("beit", "AutoModel", dict(VITS), "image"),
    "data2vec-vision": ("data2vec-vision", "AutoModel", dict(VITS), "image"),
    "dinov2": ("dinov2", "AutoModel", dict(VITS), "image"),
    "vit-msn": ("vit_msn", "AutoModel", dict(VITS), "image"),
    "yolos": ("yolos", "AutoModel", dict(VITS, image_size=[32, 32], num_detection_tokens=4), "image"),
    "dpt": ("dpt", "AutoModel", dict(VITS), "image"),
    "siglip-vision": ("siglip_vision_model", "SiglipVisionModel", dict(VITS), "image"),
    "chinese-clip-vision": ("chinese_clip_vision_model", "ChineseCLIPVisionModel", dict(VITS), "image"),
    "swinv2": ("swinv2", "AutoModel", dict(embed_dim=16, depths=[1, 1], num_heads=[2, 4], image_size=32, patch_size=4,
                                           window_size=4), "image"),
    "swin2sr": ("swin2sr", "AutoModel", dict(embed_dim=16, depths=[1, 1], num_heads=[2, 2], image_size=32,
                                             patch_size=1, window_size=4), "image"),
    "focalnet": ("focalnet", "AutoModel", dict(embed_dim=16, depths=[1, 1], focal_levels=[2, 2],
                                               focal_windows=[3, 3], hidden_sizes=[16, 32], image_size=32,
                                               patch_size=4), "image"),
    "convnextv2": ("convnextv2", "AutoModel", dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2,
                                                   image_size=32), "image"),
    "regnet": ("regnet", "AutoModel", dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8,
                                           layer_type="y"), "image"),
    "bit": ("bit", "AutoModel", dict(embedding_size=16, hidden_sizes=[32, 64], depths=[1, 1], num_groups=4,
                                     layer_type="preactivation"), "image"),
    "efficientnet": ("efficientnet", "AutoModel", dict(image_size=32, width_coefficient=0.25, depth_coefficient=0.25,
                                                       hidden_dim=320), "image"),
    "mobilenet-v1": ("mobilenet_v1", "AutoModel", dict(image_size=32, depth_multiplier=0.25), "image"),
    "mobilenet-v2": ("mobilenet_v2", "AutoModel", dict(image_size=32, depth_multiplier=0.25), "image"),
    "mobilevitv2": ("mobilevitv2", "AutoModel", dict(image_size=64, width_multiplier=0.25), "image64"),
    "poolformer": ("poolformer", "AutoModel", dict(hidden_sizes=[16, 32], depths=[1, 1], num_encoder_blocks=2,
                                                   patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1]), "image"),
    "van": ("van", "AutoModel", dict(hidden_sizes=[16, 32], depths=[1, 1], mlp_ratios=[2, 2], patch_sizes=[7, 3],
                                     strides=[4, 2], image_size=32), "image"),
    "levit": ("levit", "AutoModel", dict(image_size=64, hidden_sizes=[32, 48, 64], num_attention_heads=[2, 3, 4],
                                         depths=[1, 1, 1], key_dim=[8, 8, 8], mlp_ratio=[2, 2, 2],
                                         attention_ratio=[2, 2, 2]), "image64"),
    "segformer": ("segformer", "AutoModel", dict(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                                                 hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                                                 num_attention_heads=[1, 2], mlp_ratios=[2, 2],
                                                 decoder_hidden_size=32), "image"),
    "glpn": ("glpn", "AutoModel", dict(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                                       patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
                                       mlp_ratios=[2, 2], decoder_hidden_size=32), "image"),
    "pvt": ("pvt", "AutoModel", dict(image_size=32, num_encoder_blocks=2, depths=[1, 1],
                                     sequence_reduction_ratios=[2, 1], hidden_sizes=[16, 32], patch_sizes=[4, 2],
                                     strides=[4, 2], num_attention_heads=[1, 2], mlp_ratios=[2, 2]), "image"),
    "pvt-v2": ("pvt_v2", "AutoModel", dict(image_size=32, num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                                           hidden_sizes=[16, 32], patch_sizes=[7, 3], strides=[4, 2],
                                           num_attention_heads=[1, 2], mlp_ratios=[2, 2]), "image"),
    "cvt": ("cvt", "AutoModel", dict(embed_dim=[16, 32, 64], num_heads=[1, 2, 4], depth=[1, 2, 3]), "image"),  # depth[i] > i (4.40)
    "efficientformer": ("efficientformer", "AutoModel", dict(image_size=64, depths=[1, 1, 1, 2],
                                                             hidden_sizes=[16, 32, 48, 64], num_meta3d_blocks=1,
                                                             dim=64, key_dim=16, attention_ratio=2,
                                                             num_attention_heads=4, resolution=2), "image64"),
    "swiftformer": ("swiftformer", "AutoModel", dict(depths=[1, 1, 1, 1], embed_dims=[16, 32, 48, 64]), "image"),
    # video
    "videomae": ("videomae", "AutoModel", dict(VITS, num_frames=2, tubelet_size=2), "video"),
    "timesformer": ("timesformer", "AutoModel", dict(VITS, num_frames=2), "video"),
    "vivit": ("vivit", "AutoModel", dict(VITS, num_frames=2, tubelet_size=[2, 8, 8]), "video"),
    # audio
    "hubert": ("hubert", "AutoModel", dict(W2V), "audio"),
    "wavlm": ("wavlm", "AutoModel", dict(W2V, num_buckets=32, max_bucket_distance=64), "audio"),
    "data2vec-audio": ("data2vec-audio", "AutoModel", dict(W2V, num_conv_pos_embeddings=3, conv_pos_kernel_size=5),
                       "audio"),
    "unispeech": ("unispeech", "AutoModel", dict(W2V), "audio"),
    "unispeech-sat": ("unispeech-sat", "AutoModel", dict(W2V), "audio"),
    "wav2vec2-conformer": ("wav2vec2-conformer", "AutoModel", dict(W2V, conv_depthwise_kernel_size=3,
                                                                   position_embeddings_type="relative"), "audio"),
    "wav2vec2-conformer-rope": ("wav2vec2-conformer", "AutoModel", dict(W2V, conv_depthwise_kernel_size=3,
                                                                        position_embeddings_type="rotary"), "audio"),
    "sew": ("sew", "AutoModel", dict(W2V, squeeze_factor=2), "audio"),
    "sew-d": ("sew-d", "AutoModel", dict(W2V, squeeze_factor=2, position_buckets=32, max_position_embeddings=64),
              "audio"),
    "wav2vec2-bert": ("wav2vec2-bert", "AutoModel", dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                                         intermediate_size=128, feature_projection_input_dim=32,
                                                         conv_depthwise_kernel_size=3,
                                                         left_max_position_embeddings=16,
                                                         right_max_position_embeddings=4), "frames"),
    "audio-spectrogram-transformer": ("audio-spectrogram-transformer", "AutoModel",
                                      dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=128, num_mel_bins=32, max_length=32, frequency_stride=8,
                                           time_stride=8), "spectrogram"),
    "speech-to-text-encoder": ("speech_to_text", "Speech2TextModel.encoder",
                               dict(S2S, num_conv_layers=2, conv_kernel_sizes=[5, 5], conv_channels=64,
                                    input_feat_per_channel=16, max_source_positions=128), "s2t-features"),
})
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
    if kind == "image64":
        return (torch.randn(1, 3, 64, 64, generator=g),)
    if kind == "ids":  # input_ids only (models without an attention mask)
        return (torch.randint(1, cfg.vocab_size, (2, 16), generator=g),)
    if kind == "video":
        return (torch.randn(1, cfg.num_frames, 3, 32, 32, generator=g),)
    if kind == "spectrogram":
        return (torch.randn(1, cfg.max_length, cfg.num_mel_bins, generator=g),)
    if kind == "frames":
        return (torch.randn(1, 32, cfg.feature_projection_input_dim, generator=g),)
    if kind == "s2t-features":
        return (torch.randn(1, 64, cfg.input_feat_per_channel * cfg.input_channels, generator=g),)
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
    if model_type in ("deberta", "deberta-v2", "sew-d"):
        # DeBERTa's masked softmax is a torch.autograd.Function (XSoftmax): the tracer records it
        # as a prim::PythonOp, which TorchScript cannot save. Its forward's own ops replace it
        # (eval mode: the backward is never used), so the traced graph holds plain aten ops.
        import importlib
        mt = model_type.replace("-", "_")
        mod = importlib.import_module("transformers.models.%s.modeling_%s" % (mt, mt))

        class PlainXSoftmax:
            @staticmethod
            def apply(scores, mask, dim):
                rmask = ~(mask.to(torch.bool))
                out = torch.softmax(scores.masked_fill(rmask, torch.tensor(torch.finfo(scores.dtype).min)), dim)
                return out.masked_fill(rmask, 0)

        mod.XSoftmax = PlainXSoftmax
        note = "XSoftmax (a Python autograd Function TorchScript cannot save) traced as its forward's ops"
    if model_type == "yoso":
        # YOSO's expected-attention (eval, use_expectation) is a torch.autograd.Function too: its forward's ops
        import math
        mod = transformers.models.yoso.modeling_yoso

        class PlainYosoCumulation:
            @staticmethod
            def apply(query_mask, key_mask, query, key, value, config):
                e = (1 - torch.acos(torch.matmul(query, key.transpose(-1, -2))) / math.pi) ** config["hash_code_len"]
                return torch.matmul(e * query_mask[:, :, None] * key_mask[:, None, :], value)

        mod.YosoCumulation = PlainYosoCumulation
        note = "YosoCumulation (a Python autograd Function TorchScript cannot save) traced as its forward's ops"
    torch.manual_seed(SEED)
    name, _, part = cls.partition(".")
    klass = getattr(transformers, name)
    model = (klass.from_config(cfg) if name.startswith("Auto") else klass(cfg)).eval()
    if part:
        model = getattr(model, part) if hasattr(model, part) else getattr(model.model, part)
    return model, cfg, kind, note


def float64_output(First, model, kind, x):
    """(the model's first output in float64 on the float64 form of inputs `x`, None), or (None,
    why) when the model cannot run in float64 (masks built float32-only). The model is copied
    first: .double() converts parameters in place, which a frozen trace may share."""
    try:
        return First(copy.deepcopy(model).double(), kind)(
            *[t.double() if t.is_floating_point() else t for t in x]).double(), None
    except Exception as e:  # noqa: BLE001 - some models build float32-only masks
        return None, ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]


def first_output_class(torch):
    """The wrapper module traced for every architecture: the model's first output (the last
    hidden state) as a plain tensor, from the inputs in `inputs_for`'s order."""

    class First(torch.nn.Module):
        def __init__(self, m, kind):
            super().__init__()
            self.m, self.kind = m, kind

        def forward(self, *x):
            if self.kind == "text":
                out = self.m(input_ids=x[0], attention_mask=x[1], return_dict=False)
            elif self.kind == "ids":
                out = self.m(input_ids=x[0], return_dict=False)
            else:
                out = self.m(x[0], return_dict=False)
            return out[0]

    return First


def main():
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    if sys.argv[1:] == ["--list"]:
        print("\n".join(ARCHS))
        return
    if sys.argv[1:2] == ["--latency"]:
        latency(sys.argv[2], sys.argv[3:] or list(ARCHS))
        return
    if sys.argv[1:2] == ["--bf16"]:
        bf16(sys.argv[2], sys.argv[3:] or list(ARCHS))
        return
    cache, names = sys.argv[1], sys.argv[2:] or list(ARCHS)
    os.makedirs(cache, exist_ok=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from trace_torchvision import set_torch_threads, timed_ms
    set_torch_threads(1)  # torch's threads and OpenBLAS's (which ignores torch.set_num_threads)

    First = first_output_class(torch)

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
                ts = timed_ms(traced, x, 7)
                f64, err = float64_output(First, model, kind, x)
                if err:
                    meta["f64_error"] = err
            save_traced(stem, meta, traced, x, ref, got, f64, ts)
        except StopIteration:
            pass
        except Exception as e:  # noqa: BLE001 - building the model failed in transformers itself
            meta.update(status="export failed", error=("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        print("trace_hf: %-16s %s" % (arch, meta["status"] + (" (" + meta["error"] + ")" if "error" in meta else "")),
              flush=True)


def save_traced(stem, meta, traced, x, ref, got, f64, ts):
    """Writes a traced model's files (STEM.pt, STEM.in<i>.npy, STEM.out.npy, STEM.f64.npy when
    there is a float64 reference) and its meta fields (status, inputs, shape, torch_ms: the
    median of `ts`, trace_vs_eager, torch_err); shared with trace_timm.py."""
    import numpy as np
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


BATCHES = (1, 32)


def latency(cache, names):
    """For every traced architecture in CACHE without them yet: inputs at batch 1 and 32 (the
    traced inputs' rows repeated: ARCH.b1.in0.npy ...), torch's output at each (ARCH.b1.out.npy)
    and the traced module's median ms over 7 runs at batch 1, 5 at batch 32, after 3 warm-up runs
    (TorchScript's profiling executor specializes on a new shape's first runs), one thread
    (meta torch_ms_b1, torch_ms_b32; latency_error when the trace is specific to its batch)."""
    import numpy as np
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from trace_torchvision import set_torch_threads, cached_records, timed_ms
    set_torch_threads(1)  # torch's threads and OpenBLAS's (which ignores torch.set_num_threads)
    for arch, meta_path, meta in cached_records(cache, names):
        if meta.get("status") != "traced" or "torch_ms_b32" in meta or "latency_error" in meta:
            continue
        stem = os.path.join(cache, arch)
        m = torch.jit.load(stem + ".pt")
        x0 = [torch.from_numpy(np.load("%s.in%d.npy" % (stem, i))) for i in range(meta["inputs"])]
        try:
            with torch.no_grad():
                for b in BATCHES:
                    rows = torch.arange(b) % x0[0].shape[0]
                    x = [t[rows].contiguous() for t in x0]
                    for _ in range(3):  # the profiling executor specializes on a new shape's first runs
                        y = m(*x)
                    ts = timed_ms(m, x, 7 if b == 1 else 5)
                    for i, t in enumerate(x):
                        np.save("%s.b%d.in%d.npy" % (stem, b, i), t.numpy())
                    np.save("%s.b%d.out.npy" % (stem, b), y.float().numpy())
                    meta["torch_ms_b%d" % b] = sorted(ts)[len(ts) // 2]
        except Exception as e:  # noqa: BLE001 - a trace specific to its batch size
            meta["latency_error"] = ("%s: %s" % (type(e).__name__, e)).splitlines()[0][:200]
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        print("trace_hf --latency: %-16s %s" % (arch, meta.get("latency_error") or "b1 %.3g ms, b32 %.3g ms" % (
            meta["torch_ms_b1"], meta["torch_ms_b32"])), flush=True)


def bf16(cache, names):
    """For every traced architecture in CACHE without it yet: the same model (same seed, so the
    same weights) converted to bfloat16 (`model.to(torch.bfloat16)`), traced and frozen by torch
    1.13 on the same inputs (floating inputs rounded to bfloat16; .npy has no bfloat16, so
    ARCH.bf16.in<i>.npy holds their float32 values, exact), with torch's bfloat16 output
    (ARCH.bf16.out.npy, widened to float32) and a float64 reference of the bfloat16 model (its
    rounded weights in float64, eager: ARCH.bf16.f64.npy). Meta fields: bf16_status ("traced" |
    "export failed"), bf16_error, torch_bf16_err (torch's bfloat16 output against that float64
    reference, max|bf16 - f64| / max|f64|), torch_bf16_ms."""
    import numpy as np
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from trace_torchvision import set_torch_threads, cached_records, timed_ms
    set_torch_threads(1)
    First = first_output_class(torch)
    for arch, meta_path, meta in cached_records(cache, names):
        if meta.get("status") != "traced" or "bf16_status" in meta:
            continue
        stem = os.path.join(cache, arch)
        try:
            model, cfg, kind, _ = build(arch, torch, transformers)
            x = [torch.from_numpy(np.load("%s.in%d.npy" % (stem, i))) for i in range(meta["inputs"])]
            xb = [t.to(torch.bfloat16) if t.is_floating_point() else t for t in x]
            m = First(model.to(torch.bfloat16), kind).eval()
            with torch.no_grad():
                ref = m(*xb)
                traced = torch.jit.freeze(torch.jit.trace(m, xb, check_trace=False))
                traced(*xb)
                ts = timed_ms(traced, xb, 5)
                f64, err = float64_output(First, model, kind, xb)
                if err:
                    meta["bf16_f64_error"] = err
            traced.save(stem + ".bf16.pt")
            for i, t in enumerate(xb):
                np.save("%s.bf16.in%d.npy" % (stem, i), (t.float() if t.is_floating_point() else t).numpy())
            np.save(stem + ".bf16.out.npy", ref.float().numpy())
            meta.update(bf16_status="traced", torch_bf16_ms=sorted(ts)[len(ts) // 2])
            if f64 is not None:
                np.save(stem + ".bf16.f64.npy", f64.numpy())
                scale = float(f64.abs().max()) or 1.0
                meta["torch_bf16_err"] = float((ref.double() - f64).abs().max()) / scale
        except Exception as e:  # noqa: BLE001 - torch 1.13 itself cannot run or trace it in bfloat16
            meta.update(bf16_status="export failed", bf16_error=("%s: %s" % (type(e).__name__, e)).splitlines()[0][:300])
        with open(meta_path, "w") as f:
            json.dump(meta, f)
        print("trace_hf --bf16: %-16s %s" % (arch, meta["bf16_status"] + (
            " (" + meta["bf16_error"] + ")" if "bf16_error" in meta else "")), flush=True)


if __name__ == "__main__":
    main()
