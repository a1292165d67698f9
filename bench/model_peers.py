"""The anchors of `npm run bench:model`: the same model forward, attentions returned, in a fresh process.

    model_peers.py torch FOLDER IDS      PyTorch (Debian's 1.13), float32, written plainly from the models' definitions
    model_peers.py numpy FOLDER IDS      numpy in the picoGPT style (GPT-2 only), float32

IDS is a comma-separated list of token ids. Prints one JSON line: import, load and forward times (ms) and the
process's peak RSS (MB). Times start when this script starts, before `import torch` / `import numpy`.
"""
import json
import math
import os
import resource
import sys
import time

from peer_weights import read_safetensors

started = time.perf_counter()
MODE = sys.argv[1]


def ms(since):
    return (time.perf_counter() - since) * 1000


def report(**fields):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    fields['max_rss_mb'] = usage.ru_maxrss / 1024
    fields['cpu_ms'] = (usage.ru_utime + usage.ru_stime) * 1000  # every thread of the process
    print(json.dumps(fields))


FOLDER, IDS = sys.argv[2], [int(i) for i in sys.argv[3].split(',')]
with open(os.path.join(FOLDER, 'config.json')) as f:
    config = json.load(f)

if MODE == 'torch':
    import torch
    import_ms = ms(started)
    cpu_after_import = time.process_time()
    torch.set_grad_enabled(False)
    dtypes = {'F32': torch.float32, 'F16': torch.float16, 'BF16': torch.bfloat16}
    t = time.perf_counter()
    # PEER_DTYPE=bfloat16 (bench:model, where float32 weights would not fit): the weights and the forward in bf16.
    dtype = {'float32': torch.float32, 'bfloat16': torch.bfloat16}[os.environ.get('PEER_DTYPE', 'float32')]
    w = read_safetensors(FOLDER, lambda b, d, s: torch.frombuffer(bytearray(b), dtype=dtypes[d]).reshape(s).to(dtype))
    load_ms = ms(t)
    t = time.perf_counter()
    n = len(IDS)
    ids = torch.tensor(IDS)
    mask = torch.ones(n, n, dtype=torch.bool).tril()

    def attend(q, k, v, scale):  # q [H, n, d], k/v [KV, n, d]
        group = q.shape[0] // k.shape[0]
        k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
        weights = torch.softmax((q @ k.transpose(1, 2) * scale).masked_fill(~mask, -math.inf), -1)
        return weights, (weights @ v).transpose(0, 1).reshape(n, -1)

    heads_of = lambda x, h: x.reshape(n, h, -1).transpose(0, 1)

    def llama_pieces():
        """The Llama-shaped models' heads, head width, RMSNorm, linear layers (biases where stored) and rotate-half RoPE."""
        h, eps = config['num_attention_heads'], config['rms_norm_eps']
        d = config['hidden_size'] // h
        inv = 1 / config.get('rope_theta', 10000.0) ** (torch.arange(0, d, 2).float() / d)
        angles = torch.arange(n).float()[:, None] * inv[None, :]
        cos, sin = torch.cat([angles.cos()] * 2, -1).to(dtype), torch.cat([angles.sin()] * 2, -1).to(dtype)
        return (h, d, lambda x, p: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w[f'{p}.weight'],
                lambda x, p: torch.nn.functional.linear(x, w[f'{p}.weight'], w.get(f'{p}.bias')),
                lambda x: x * cos + torch.cat([-x[..., d // 2:], x[..., :d // 2]], -1) * sin)
    attentions = []
    if config['model_type'] == 'gpt2':
        c, h, eps = config['n_embd'], config['n_head'], config['layer_norm_epsilon']
        ln = lambda x, p: torch.nn.functional.layer_norm(x, (c,), w[f'{p}.weight'], w[f'{p}.bias'], eps)
        conv = lambda x, p: torch.addmm(w[f'{p}.bias'], x, w[f'{p}.weight'])
        x = w['wte.weight'][ids] + w['wpe.weight'][:n]
        for i in range(config['n_layer']):
            q, k, v = (heads_of(t, h) for t in conv(ln(x, f'h.{i}.ln_1'), f'h.{i}.attn.c_attn').split(c, -1))
            a, out = attend(q, k, v, 1 / math.sqrt(c // h))
            attentions.append(a)
            x = x + conv(out, f'h.{i}.attn.c_proj')
            x = x + conv(torch.nn.functional.gelu(conv(ln(x, f'h.{i}.ln_2'), f'h.{i}.mlp.c_fc'), approximate='tanh'), f'h.{i}.mlp.c_proj')
        logits = ln(x, 'ln_f')[-1] @ w['wte.weight'].T
    elif config['model_type'] == 'olmoe':  # OLMoE: q/k norms over the whole projections; experts as the modeling file gathers them
        h, d, rms, lin, rope = llama_pieces()
        kv, experts, top = config['num_key_value_heads'], config['num_experts'], config['num_experts_per_tok']
        x = w['embed_tokens.weight'][ids]
        for i in range(config['num_hidden_layers']):
            p = f'layers.{i}'
            y = rms(x, f'{p}.input_layernorm')
            q = heads_of(rms(lin(y, f'{p}.self_attn.q_proj'), f'{p}.self_attn.q_norm'), h)
            k = heads_of(rms(lin(y, f'{p}.self_attn.k_proj'), f'{p}.self_attn.k_norm'), kv)
            a, out = attend(rope(q), rope(k), heads_of(lin(y, f'{p}.self_attn.v_proj'), kv), 1 / math.sqrt(d))
            attentions.append(a)
            x = x + lin(out, f'{p}.self_attn.o_proj')
            y = rms(x, f'{p}.post_attention_layernorm')
            weights, chosen = torch.softmax(lin(y, f'{p}.mlp.gate'), -1).topk(top, -1)
            if config.get('norm_topk_prob'):
                weights = weights / weights.sum(-1, keepdim=True)
            moe = torch.zeros_like(y)
            for e in range(experts):
                tokens, slots = torch.where(chosen == e)
                if len(tokens):
                    e_in, at = y[tokens], f'{p}.mlp.experts.{e}'
                    moe.index_add_(0, tokens, lin(torch.nn.functional.silu(lin(e_in, f'{at}.gate_proj')) * lin(e_in, f'{at}.up_proj'), f'{at}.down_proj') * weights[tokens, slots, None])
            x = x + moe
        logits = rms(x, 'norm')[-1] @ w['lm_head.weight'].T
    else:  # Qwen2-shaped: RMSNorm, q/k/v biases, RoPE rotate-half, GQA, SwiGLU
        h, d, rms, lin, rope = llama_pieces()
        kv = config['num_key_value_heads']
        x = w['embed_tokens.weight'][ids]
        for i in range(config['num_hidden_layers']):
            p = f'layers.{i}'
            y = rms(x, f'{p}.input_layernorm')
            q, k, v = (heads_of(lin(y, f'{p}.self_attn.{m}_proj'), c) for m, c in (('q', h), ('k', kv), ('v', kv)))
            a, out = attend(rope(q), rope(k), v, 1 / math.sqrt(d))
            attentions.append(a)
            x = x + lin(out, f'{p}.self_attn.o_proj')
            y = rms(x, f'{p}.post_attention_layernorm')
            x = x + lin(torch.nn.functional.silu(lin(y, f'{p}.mlp.gate_proj')) * lin(y, f'{p}.mlp.up_proj'), f'{p}.mlp.down_proj')
        logits = rms(x, 'norm')[-1] @ w.get('lm_head.weight', w['embed_tokens.weight']).T
    forward_ms = ms(t)
    report(import_ms=import_ms, load_ms=load_ms, forward_ms=forward_ms, total_ms=ms(started), run_cpu_ms=(time.process_time() - cpu_after_import) * 1000,
           threads=torch.get_num_threads(), dtype=str(dtype), logit=float(logits[0]))

elif MODE == 'numpy':  # picoGPT's GPT-2, in float32, every layer's attention kept
    import numpy as np
    import_ms = ms(started)
    cpu_after_import = time.process_time()
    assert config['model_type'] == 'gpt2', 'the numpy peer is GPT-2 only'
    t = time.perf_counter()
    dtypes = {'F32': np.float32, 'F16': np.float16}
    w = read_safetensors(FOLDER, lambda b, d, s: np.frombuffer(b, dtype=dtypes[d]).reshape(s).astype(np.float32))
    load_ms = ms(t)
    t = time.perf_counter()

    def gelu(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    def softmax(x):
        e = np.exp(x - np.max(x, axis=-1, keepdims=True))
        return e / np.sum(e, axis=-1, keepdims=True)

    def layer_norm(x, p, eps=1e-5):
        mean, var = np.mean(x, axis=-1, keepdims=True), np.var(x, axis=-1, keepdims=True)
        return w[f'{p}.weight'] * (x - mean) / np.sqrt(var + eps) + w[f'{p}.bias']

    def linear(x, p):
        return x @ w[f'{p}.weight'] + w[f'{p}.bias']

    n, h = len(IDS), config['n_head']
    causal = (1 - np.tri(n, dtype=np.float32)) * -1e10
    x = w['wte.weight'][IDS] + w['wpe.weight'][:n]
    attentions = []
    for i in range(config['n_layer']):
        q, k, v = np.split(linear(layer_norm(x, f'h.{i}.ln_1'), f'h.{i}.attn.c_attn'), 3, axis=-1)
        q, k, v = (m.reshape(n, h, -1).transpose(1, 0, 2) for m in (q, k, v))
        a = softmax(q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1]) + causal)
        attentions.append(a)
        x = x + linear((a @ v).transpose(1, 0, 2).reshape(n, -1), f'h.{i}.attn.c_proj')
        x = x + linear(gelu(linear(layer_norm(x, f'h.{i}.ln_2'), f'h.{i}.mlp.c_fc')), f'h.{i}.mlp.c_proj')
    logits = layer_norm(x, 'ln_f')[-1] @ w['wte.weight'].T
    forward_ms = ms(t)
    report(import_ms=import_ms, load_ms=load_ms, forward_ms=forward_ms, total_ms=ms(started), run_cpu_ms=(time.process_time() - cpu_after_import) * 1000,
           logit=float(logits[0]))
