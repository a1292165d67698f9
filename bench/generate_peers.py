"""The anchor of `npm run bench:generate`: PyTorch decoding with a key/value cache (past_key_values), in a fresh process.

    generate_peers.py FOLDER IDS NEW     greedy, NEW tokens after IDS, float32, written plainly from the models' definitions

The GPT-2 and Qwen2-shaped folders of scripts/gen-bench-models.mjs (Debian's torch 1.13 has no transformers beside it):
the prompt's forward fills each layer's K and V, then each new token runs its one row through every layer, its K and V
concatenated to the layer's cache (as transformers' DynamicCache does), and the LM head's argmax is the next token.
Prints one JSON line: the prompt's forward and the mean per new token in ms and in CPU ms (every thread), the process's
RSS before and after the new tokens (MB), and the tokens.
"""
import json
import math
import os
import resource
import sys
import time

import torch

from peer_weights import read_safetensors

torch.set_grad_enabled(False)
FOLDER, IDS, NEW = sys.argv[1], [int(i) for i in sys.argv[2].split(',')], int(sys.argv[3])
with open(os.path.join(FOLDER, 'config.json')) as f:
    config = json.load(f)
dtypes = {'F32': torch.float32, 'F16': torch.float16, 'BF16': torch.bfloat16}
w = read_safetensors(FOLDER, lambda b, d, s: torch.frombuffer(bytearray(b), dtype=dtypes[d]).reshape(s).to(torch.float32))


def rss_mb():
    with open('/proc/self/statm') as f:
        return int(f.read().split()[1]) * os.sysconf('SC_PAGE_SIZE') / 2 ** 20


def attend(q, k, v, scale, causal):  # q [H, m, d], k/v [KV, n, d]
    group = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(group, 0), v.repeat_interleave(group, 0)
    scores = q @ k.transpose(1, 2) * scale
    if causal:
        scores = scores.masked_fill(torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).tril(k.shape[1] - q.shape[1]).logical_not(), -math.inf)
    return (torch.softmax(scores, -1) @ v).transpose(0, 1).reshape(q.shape[1], -1)


def heads_of(x, h):
    return x.reshape(x.shape[0], h, -1).transpose(0, 1)


if config['model_type'] == 'gpt2':
    c, h, eps = config['n_embd'], config['n_head'], config['layer_norm_epsilon']
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (c,), w[f'{p}.weight'], w[f'{p}.bias'], eps)
    conv = lambda x, p: torch.addmm(w[f'{p}.bias'], x, w[f'{p}.weight'])
    head = w['wte.weight']

    def forward(ids, first, cache):
        x = w['wte.weight'][ids] + w['wpe.weight'][first:first + len(ids)]
        for i in range(config['n_layer']):
            q, k, v = (heads_of(t, h) for t in conv(ln(x, f'h.{i}.ln_1'), f'h.{i}.attn.c_attn').split(c, -1))
            if i in cache:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = k, v
            x = x + conv(attend(q, k, v, 1 / math.sqrt(c // h), True), f'h.{i}.attn.c_proj')
            x = x + conv(torch.nn.functional.gelu(conv(ln(x, f'h.{i}.ln_2'), f'h.{i}.mlp.c_fc'), approximate='tanh'), f'h.{i}.mlp.c_proj')
        return ln(x, 'ln_f')[-1] @ head.T
else:  # Qwen2-shaped: RMSNorm, q/k/v biases, RoPE rotate-half, GQA, SwiGLU
    h, kv, eps = config['num_attention_heads'], config['num_key_value_heads'], config['rms_norm_eps']
    d = config['hidden_size'] // h
    inv = 1 / config.get('rope_theta', 10000.0) ** (torch.arange(0, d, 2).float() / d)
    rms = lambda x, p: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w[f'{p}.weight']
    lin = lambda x, p: torch.nn.functional.linear(x, w[f'{p}.weight'], w.get(f'{p}.bias'))
    head = w.get('lm_head.weight', w['embed_tokens.weight'])

    def forward(ids, first, cache):
        angles = torch.arange(first, first + len(ids)).float()[:, None] * inv[None, :]
        cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
        rope = lambda x: x * cos + torch.cat([-x[..., d // 2:], x[..., :d // 2]], -1) * sin
        x = w['embed_tokens.weight'][ids]
        for i in range(config['num_hidden_layers']):
            p = f'layers.{i}'
            y = rms(x, f'{p}.input_layernorm')
            q, k, v = (heads_of(lin(y, f'{p}.self_attn.{m}_proj'), n) for m, n in (('q', h), ('k', kv), ('v', kv)))
            q, k = rope(q), rope(k)
            if i in cache:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = k, v
            x = x + lin(attend(q, k, v, 1 / math.sqrt(d), True), f'{p}.self_attn.o_proj')
            y = rms(x, f'{p}.post_attention_layernorm')
            x = x + lin(torch.nn.functional.silu(lin(y, f'{p}.mlp.gate_proj')) * lin(y, f'{p}.mlp.up_proj'), f'{p}.mlp.down_proj')
        return rms(x, 'norm')[-1] @ head.T

cache = {}
t, cpu = time.perf_counter(), time.process_time()
logits = forward(torch.tensor(IDS), 0, cache)
prompt_ms = (time.perf_counter() - t) * 1000
tokens = [int(logits.argmax())]
rss_before = rss_mb()
t, cpu = time.perf_counter(), time.process_time()
for step in range(1, NEW):
    logits = forward(torch.tensor(tokens[-1:]), len(IDS) + step - 1, cache)
    tokens.append(int(logits.argmax()))
steps = NEW - 1
print(json.dumps({'prompt_ms': prompt_ms, 'per_token_ms': (time.perf_counter() - t) * 1000 / steps,
                  'per_token_cpu_ms': (time.process_time() - cpu) * 1000 / steps, 'rss_before_mb': rss_before, 'rss_after_mb': rss_mb(),
                  'max_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 'threads': torch.get_num_threads(),
                  'tokens': tokens}))
