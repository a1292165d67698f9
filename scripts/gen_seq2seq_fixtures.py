#!/usr/bin/python3
"""Random-weight encoder–decoder Hugging Face folders (T5 v1.0 and v1.1, BART, Marian, mBART) and float64 PyTorch references.

    /usr/bin/python3 scripts/gen_seq2seq_fixtures.py OUTDIR           # the fixture set (a few seconds)
    /usr/bin/python3 scripts/gen_seq2seq_fixtures.py OUTDIR --check   # also checks every reference by a second route
    /usr/bin/python3 scripts/gen_seq2seq_fixtures.py FOLDER --time N  # PyTorch's float32 forward and cached greedy generation (bench/seq2seq.ts)

Each folder holds what a Hub checkpoint holds — config.json and the weights under the published names of
transformers' T5ForConditionalGeneration, BartForConditionalGeneration, MarianMTModel and
MBartForConditionalGeneration (safetensors or pytorch_model.bin; one bf16, one f16), a tokenizer.json where the
fixture has one (a word-level vocabulary of our own, its ids computed here by splitting on spaces), Marian's
SentencePiece file names without a tokenizer.json — and reference.json: the source and target ids, and what a float64
forward of the stored weights gives (encoder_attentions [layer][head][s][s], decoder_attentions [layer][head][t][t],
cross_attentions [layer][head][t][s], hidden_last after the decoder's final norm, logits_last with final_logits_bias),
and `generated`: greedy decoding from decoder_start_token_id (full re-runs, no cache; argmax's first maximum; Marian's
bad_words_ids never chosen) for `generate` tokens or until EOS.

The forwards follow transformers' modeling_t5.py (T5LayerNorm, _relative_position_bucket, compute_bias, no score
scaling, the tied head's d_model^-0.5), modeling_bart.py (learned positions offset by 2, layernorm_embedding,
post-LN), modeling_marian.py (sinusoidal positions, sin half then cos half; embeddings x sqrt(d_model)) and
modeling_mbart.py (pre-LN, a final layer_norm per stack); transformers itself is not installed here.

--check recomputes the references by a second route sharing no attention code with the first: every head and every
query row one at a time with explicit loops over the keys, T5's buckets per (query, key) pair by plain float64 math
(the first route uses transformers' vectorised torch ops in float32, as the model runs them), Marian's positions per
entry from the formula; it prints `NAME: largest difference X` and exits 1 above 1e-9.
Seeded: the same command writes the same files.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_model_fixtures import Weights, gelu_erf, gelu_tanh, layer_norm, silu, write_folder  # noqa: E402

torch.set_default_dtype(torch.float64)

WORDS = ['<pad>', '</s>', '<unk>', '<s>', 'the', 'house', 'is', 'small', 'das', 'haus', 'ist', 'klein', 'a', 'cat', 'sat', 'on', 'mat',
         'die', 'katze', 'sass', 'auf', 'der', 'matte', '.', 'big', 'gross', 'and', 'und', 'dog', 'hund']


def word_tokenizer(vocab_size, specials, before, after, languages=()):
    """A tokenizer.json over WORDS (lower-cased, split on whitespace and punctuation) adding `before` and `after` around each
    text; `languages`: language codes, special tokens at LANGUAGES' ids."""
    vocab = {w: i for i, w in enumerate(WORDS)}
    vocab.update({f'w{i}': i for i in range(len(WORDS), vocab_size)})
    for code in languages:
        del vocab[f'w{LANGUAGES[code]}']
        vocab[code] = LANGUAGES[code]
    specials = specials + list(languages)
    special = lambda t: {'id': vocab[t], 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True}
    piece = lambda t: {'SpecialToken': {'id': t, 'type_id': 0}}
    return {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': [special(t) for t in specials],
        'normalizer': {'type': 'Lowercase'},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [piece(t) for t in before] + [{'Sequence': {'id': 'A', 'type_id': 0}}] + [piece(t) for t in after],
            'pair': [piece(t) for t in before] + [{'Sequence': {'id': 'A', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 0}}] + [piece(t) for t in after],
            'special_tokens': {t: {'id': t, 'ids': [vocab[t]], 'tokens': [t]} for t in set(before + after)},
        },
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordLevel', 'vocab': vocab, 'unk_token': '<unk>'},
    }


def word_ids(text, before, after):
    """The ids word_tokenizer gives, by splitting here (words and '.' apart)."""
    vocab = {w: i for i, w in enumerate(WORDS)}
    words = text.lower().replace('.', ' . ').split()
    return [vocab[t] for t in before] + [vocab.get(w, vocab['<unk>']) for w in words] + [vocab[t] for t in after]


# ---------------------------------------------------------------- mBART's language codes, as transformers places them

# fairseq's codes (tokenization_mbart50_fast.py's FAIRSEQ_LANGUAGE_CODES), four of them, at ids past WORDS.
LANGUAGES = {'en_XX': 34, 'de_DE': 35, 'fr_XX': 36, 'ro_RO': 37}


def with_language(text, code, fifty, eos):
    """A text's ids in language `code`, as the tokenizers build them (build_inputs_with_special_tokens after
    set_src_lang_special_tokens / set_tgt_lang_special_tokens): MBart50Tokenizer prefix [code], suffix [eos];
    MBartTokenizer no prefix, suffix [eos, code]. The same for a source (input_ids) and a target (labels)."""
    words = word_ids(text, [], [])
    return [LANGUAGES[code]] + words + [eos] if fifty else words + [eos, LANGUAGES[code]]


def shift_tokens_right(labels):
    """modeling_mbart.py's shift_tokens_right on one unpadded row: the last token (the language code, or mBART-50's
    </s>) wrapped round to the front, the rest moved one place right."""
    return [labels[-1]] + labels[:-1]


def target_with_language(text, code, fifty, start, eos):
    """The decoder's input for a target text in `code`, every token of the labels read: mBART-50 starts at
    decoder_start_token_id (its labels' shift, [</s>, code, X]) and reads the labels' final </s> too; mBART's decoder
    starts at the code itself (its labels X </s> code shifted: [code, X, </s>]), which already holds every label."""
    labels = with_language(text, code, fifty, eos)
    return [start] + labels if fifty else shift_tokens_right(labels)


def generation_start(c, code, fifty):
    """Where generation in language `code` starts: mBART-50 at decoder_start_token_id with the code forced as the first
    token (forced_bos_token_id, as the MBart50 tokenizer's _build_translation_inputs asks); mBART at the code
    (decoder_start_token_id = lang_code_to_id[tgt_lang], as its documentation's generate example)."""
    return (c['decoder_start_token_id'], LANGUAGES[code]) if fifty else (LANGUAGES[code], None)


# ---------------------------------------------------------------- the families' configs and weights

def t5_config(version, **fields):
    gated = version == '1.1'
    c = {'architectures': ['T5ForConditionalGeneration'], 'model_type': 't5', 'd_model': 32, 'd_kv': 8, 'd_ff': 48, 'num_layers': 2,
         'num_decoder_layers': 3, 'num_heads': 4, 'relative_attention_num_buckets': 8, 'relative_attention_max_distance': 20,
         'layer_norm_epsilon': 1e-6, 'feed_forward_proj': 'gated-gelu' if gated else 'relu', 'tie_word_embeddings': not gated,
         'vocab_size': 40, 'pad_token_id': 0, 'eos_token_id': 1, 'decoder_start_token_id': 0}
    c.update(fields)
    return c


def t5_weights(c, seed, dtype):
    r = Weights(seed, dtype)
    D, inner, F = c['d_model'], c['num_heads'] * c['d_kv'], c['d_ff']
    r.normal('shared.weight', (c['vocab_size'], D), 1.0)
    for side, layers in (('encoder', c['num_layers']), ('decoder', c['num_decoder_layers'])):
        for i in range(layers):
            at = f'{side}.block.{i}.layer'
            attentions = ['0.SelfAttention'] + (['1.EncDecAttention'] if side == 'decoder' else [])
            for j, name in enumerate(attentions):
                r.norm(f'{at}.{j}.layer_norm', D)
                for p in 'qkv':
                    r.linear(f'{at}.{name}.{p}', inner, D)
                r.linear(f'{at}.{name}.o', D, inner)
                if i == 0 and name.endswith('SelfAttention'):
                    r.normal(f'{at}.{name}.relative_attention_bias.weight', (c['relative_attention_num_buckets'], c['num_heads']), 1.0)
            ff = f'{at}.{len(attentions)}'
            r.norm(f'{ff}.layer_norm', D)
            if c['feed_forward_proj'].startswith('gated'):
                r.linear(f'{ff}.DenseReluDense.wi_0', F, D)
                r.linear(f'{ff}.DenseReluDense.wi_1', F, D)
            else:
                r.linear(f'{ff}.DenseReluDense.wi', F, D)
            r.linear(f'{ff}.DenseReluDense.wo', D, F)
        r.norm(f'{side}.final_layer_norm', D)
    if not c['tie_word_embeddings']:
        r.linear('lm_head', c['vocab_size'], D)
    return r.stored


def bart_config(model_type, **fields):
    marian = model_type == 'marian'
    c = {'architectures': [{'bart': 'BartForConditionalGeneration', 'marian': 'MarianMTModel', 'mbart': 'MBartForConditionalGeneration'}[model_type]],
         'model_type': model_type, 'd_model': 32, 'encoder_layers': 2, 'decoder_layers': 2, 'encoder_attention_heads': 4,
         'decoder_attention_heads': 2, 'encoder_ffn_dim': 48, 'decoder_ffn_dim': 40, 'vocab_size': 40, 'max_position_embeddings': 24,
         'activation_function': 'swish' if marian else 'gelu', 'scale_embedding': model_type != 'bart',
         'pad_token_id': 0 if marian else 1, 'eos_token_id': 1 if marian else 2, 'decoder_start_token_id': 0 if marian else 2,
         'tie_word_embeddings': True}
    if marian:
        c['bad_words_ids'] = [[0]]
    c.update(fields)
    return c


def bart_weights(c, seed, dtype):
    r = Weights(seed, dtype)
    D = c['d_model']
    marian = c['model_type'] == 'marian'
    pre = c['model_type'] == 'mbart'
    r.normal('model.shared.weight', (c['vocab_size'], D), 1.0 if not c['scale_embedding'] else 1 / math.sqrt(D))
    for side in ('encoder', 'decoder'):
        if not marian:
            r.normal(f'model.{side}.embed_positions.weight', (c['max_position_embeddings'] + 2, D), 0.5)
            r.norm(f'model.{side}.layernorm_embedding', D, bias=True)
        for i in range(c[f'{side}_layers']):
            at = f'model.{side}.layers.{i}'
            for name in ['self_attn'] + (['encoder_attn'] if side == 'decoder' else []):
                for p in ('q_proj', 'k_proj', 'v_proj', 'out_proj'):
                    r.linear(f'{at}.{name}.{p}', D, D, bias=True)
                r.norm(f'{at}.{name}_layer_norm', D, bias=True)
            r.linear(f'{at}.fc1', c[f'{side}_ffn_dim'], D, bias=True)
            r.linear(f'{at}.fc2', D, c[f'{side}_ffn_dim'], bias=True)
            r.norm(f'{at}.final_layer_norm', D, bias=True)
        if pre:
            r.norm(f'model.{side}.layer_norm', D, bias=True)
    r.normal('final_logits_bias', (1, c['vocab_size']), 0.5)
    return r.stored


# ---------------------------------------------------------------- the first route: as transformers computes

def t5_buckets(relative, bidirectional, num_buckets, max_distance):
    """modeling_t5.py's _relative_position_bucket, its torch ops in order (float32 logs, as the model runs them)."""
    buckets = torch.zeros_like(relative)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0).to(torch.long) * num_buckets
        relative = torch.abs(relative)
    else:
        relative = -torch.min(relative, torch.zeros_like(relative))
    max_exact = num_buckets // 2
    is_small = relative < max_exact
    large = max_exact + (torch.log(relative.float() / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact)).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return buckets + torch.where(is_small, relative, large)


def marian_positions(n, dim):
    """MarianSinusoidalPositionalEmbedding._init_weight: sin of the even columns of position_enc, then cos of the odd ones."""
    enc = torch.tensor([[pos / math.pow(10000, 2 * (j // 2) / dim) for j in range(dim)] for pos in range(n)])
    sentinel = dim // 2 if dim % 2 == 0 else dim // 2 + 1
    out = torch.zeros(n, dim)
    out[:, :sentinel] = torch.sin(enc[:, 0::2])
    out[:, sentinel:] = torch.cos(enc[:, 1::2])
    return out


def attend(q, k, v, scale, bias, causal):
    """q [h, n, d], k/v [h, m, d] → output [h, n, d], weights [h, n, m]."""
    scores = q @ k.transpose(-1, -2) * scale
    if bias is not None:
        scores = scores + bias
    if causal:
        scores = scores.masked_fill(torch.ones(q.shape[1], k.shape[1], dtype=torch.bool).triu(1), -math.inf)
    p = torch.softmax(scores, -1)
    return p @ v, p


class Seq2Seq:
    """The model's two stacks over weights w (float64 for the references, float32 for --time). decode() runs target rows
    at positions first… and, given a cache, attends over the cached keys and values too and appends its own (transformers'
    past_key_values: per decoder layer the self-attention's K and V, and the cross-attention's made once)."""

    def __init__(self, c, w, attend=attend, buckets=t5_buckets, positions=marian_positions):
        self.c, self.w, self.attend, self.buckets, self.positions = c, w, attend, buckets, positions
        self.t5 = c['model_type'] == 't5'
        self.pre = self.t5 or c['model_type'] == 'mbart'

    def lin(self, x, name):
        w = self.w
        return x @ w[f'{name}.weight'].T + (w[f'{name}.bias'] if f'{name}.bias' in w else 0)

    def norm(self, x, name):
        w = self.w
        if self.t5:  # T5LayerNorm: no mean, no bias
            return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + self.c['layer_norm_epsilon']) * w[f'{name}.weight']
        return layer_norm(x, (w[f'{name}.weight'], w[f'{name}.bias']), 1e-5)

    def act(self, x):
        c = self.c
        name = c['feed_forward_proj'].replace('gated-', '') if self.t5 else c['activation_function']
        if self.t5 and c['feed_forward_proj'] == 'gated-gelu':
            name = 'gelu_new'
        return {'relu': torch.relu, 'gelu': gelu_erf, 'gelu_new': gelu_tanh, 'swish': silu, 'silu': silu}[name](x)

    def heads(self, side):
        return self.c['num_heads'] if self.t5 else self.c[f'{side}_attention_heads']

    def split(self, y, heads):
        d = self.c['d_kv'] if self.t5 else self.c['d_model'] // heads
        return y.view(y.shape[0], heads, d).transpose(0, 1)

    def names(self):
        return ('q', 'k', 'v', 'o') if self.t5 else ('q_proj', 'k_proj', 'v_proj', 'out_proj')

    def attention(self, x, name, heads, bias, causal, kv):
        """kv: (K, V) [heads, m, d] already made (cached or cross), or the rows to project."""
        n = self.names()
        q = self.split(self.lin(x, f'{name}.{n[0]}'), heads)
        k, v = kv
        d = q.shape[-1]
        out, p = self.attend(q, k, v, 1.0 if self.t5 else d ** -0.5, bias, causal)
        return self.lin(out.transpose(0, 1).reshape(x.shape[0], heads * d), f'{name}.{n[3]}'), p

    def keys_values(self, rows, name, heads):
        n = self.names()
        return self.split(self.lin(rows, f'{name}.{n[1]}'), heads), self.split(self.lin(rows, f'{name}.{n[2]}'), heads)

    def mlp(self, x, at):
        if self.t5:
            ff = f'{at}.DenseReluDense'
            h = self.act(self.lin(x, f'{ff}.wi_0')) * self.lin(x, f'{ff}.wi_1') if self.c['feed_forward_proj'].startswith('gated') else self.act(self.lin(x, f'{ff}.wi'))
            return self.lin(h, f'{ff}.wo')
        return self.lin(self.act(self.lin(x, f'{at}.fc1')), f'{at}.fc2')

    def relative(self, side, first, n, m, bidirectional):
        c = self.c
        b = self.buckets(torch.arange(m)[None, :] - torch.arange(first, first + n)[:, None], bidirectional, c['relative_attention_num_buckets'], c['relative_attention_max_distance'])
        return self.w[f'{side}.block.0.layer.0.SelfAttention.relative_attention_bias.weight'][b].permute(2, 0, 1)  # [heads, n, m]

    def embed(self, side, ids, first):
        c, w, D = self.c, self.w, self.c['d_model']
        if self.t5:
            return w['shared.weight'][ids]
        x = w['model.shared.weight'][ids] * (math.sqrt(D) if c['scale_embedding'] else 1.0)
        if c['model_type'] == 'marian':
            return x + self.positions(first + len(ids), D)[first:]
        x = x + w[f'model.{side}.embed_positions.weight'][2 + first:2 + first + len(ids)]
        return self.norm(x, f'model.{side}.layernorm_embedding')

    def stack(self, side, ids, memory=None, cache=None, first=0):
        c, t5, pre = self.c, self.t5, self.pre
        heads = self.heads(side)
        layers = (c['num_layers'] if side == 'encoder' else c['num_decoder_layers']) if t5 else c[f'{side}_layers']
        x = self.embed(side, ids, first)
        n = len(ids)
        bias = self.relative(side, first, n, first + n, side == 'encoder') if t5 else None
        selfs, crosses = [], []
        for i in range(layers):
            at = f'{side}.block.{i}.layer' if t5 else f'model.{side}.layers.{i}'
            parts = [('0.SelfAttention', '0.layer_norm') if t5 else ('self_attn', 'self_attn_layer_norm')]
            if side == 'decoder':
                parts.append(('1.EncDecAttention', '1.layer_norm') if t5 else ('encoder_attn', 'encoder_attn_layer_norm'))
            for j, (name, norm_name) in enumerate(parts):
                h = self.norm(x, f'{at}.{norm_name}') if pre else x
                if j == 0:
                    kv = self.keys_values(h, f'{at}.{name}', heads)
                    if cache is not None:
                        if i in cache['self']:
                            kv = tuple(torch.cat([old, new], 1) for old, new in zip(cache['self'][i], kv))
                        cache['self'][i] = kv
                elif cache is not None and i in cache['cross']:
                    kv = cache['cross'][i]
                else:
                    kv = self.keys_values(memory, f'{at}.{name}', heads)
                    if cache is not None:
                        cache['cross'][i] = kv
                # Causal over the whole run; a cached step's one row sees every cached key.
                a, p = self.attention(h, f'{at}.{name}', heads, bias if j == 0 else None, j == 0 and side == 'decoder' and first == 0, kv)
                x = x + a if pre else self.norm(x + a, f'{at}.{norm_name}')
                (selfs if j == 0 else crosses).append(p)
            ff_at = f'{at}.{len(parts)}' if t5 else at
            if pre:
                x = x + self.mlp(self.norm(x, f'{ff_at}.layer_norm' if t5 else f'{at}.final_layer_norm'), ff_at)
            else:
                x = self.norm(x + self.mlp(x, at), f'{at}.final_layer_norm')
        if t5:
            x = self.norm(x, f'{side}.final_layer_norm')
        elif pre:
            x = self.norm(x, f'model.{side}.layer_norm')
        return x, selfs, crosses

    def logits(self, hidden):
        c, w = self.c, self.w
        if self.t5:
            return (hidden * c['d_model'] ** -0.5) @ w['shared.weight'].T if c['tie_word_embeddings'] else hidden @ w['lm_head.weight'].T
        return hidden @ w['model.shared.weight'].T + w['final_logits_bias'][0]


def forward(c, w, source, target, **routes):
    """The whole encoder–decoder on source and target ids: the three kinds of weights, the decoder's final states, the logits."""
    model = Seq2Seq(c, w, **routes)
    memory, encoder_attentions, _ = model.stack('encoder', source)
    hidden, decoder_attentions, cross_attentions = model.stack('decoder', target, memory)
    return encoder_attentions, decoder_attentions, cross_attentions, hidden, model.logits(hidden)


def greedy(c, w, source, count, run=forward, start=None, forced=None):
    """Greedy decoding by full re-runs (no cache): argmax's first maximum, bad_words_ids never chosen, until EOS or count
    tokens; from `start` (else decoder_start_token_id), the first token `forced` when given (ForcedBOSTokenLogitsProcessor)."""
    ids = [c['decoder_start_token_id'] if start is None else start]
    forbidden = [b[0] for b in c.get('bad_words_ids', []) if len(b) == 1]
    while len(ids) <= count:
        logits = run(c, w, source, ids)[4][-1].clone()
        logits[forbidden] = -math.inf
        if forced is not None and len(ids) == 1:
            logits[:] = -math.inf
            logits[forced] = 0
        ids.append(int(torch.argmax(logits)))
        if ids[-1] == c['eos_token_id']:
            break
    return ids


# ---------------------------------------------------------------- the second route (--check)

def attend_by_loops(q, k, v, scale, bias, causal):
    """One head, one query row at a time, the softmax over the visible keys written out."""
    heads, n, d = q.shape
    m = k.shape[1]
    out, weights = torch.zeros(heads, n, d), torch.zeros(heads, n, m)
    for h in range(heads):
        for i in range(n):
            visible = [j for j in range(m) if not (causal and j > i)]
            scores = [float((q[h, i] * k[h, j]).sum()) * scale + (float(bias[h, i, j]) if bias is not None else 0.0) for j in visible]
            top = max(scores)
            e = [math.exp(s - top) for s in scores]
            total = sum(e)
            for j, ej in zip(visible, e):
                weights[h, i, j] = ej / total
                out[h, i] += ej / total * v[h, j]
    return out, weights


def buckets_by_pairs(relative, bidirectional, num_buckets, max_distance):
    """_relative_position_bucket for each (query, key) pair by float64 math."""
    def one(r):
        n, bucket = num_buckets, 0
        if bidirectional:
            n //= 2
            bucket += n if r > 0 else 0
            r = abs(r)
        else:
            r = -min(r, 0)
        exact = n // 2
        if r < exact:
            return bucket + r
        return bucket + min(exact + int(math.log(r / exact) / math.log(max_distance / exact) * (n - exact)), n - 1)
    return torch.tensor([[one(int(r)) for r in row] for row in relative])


def positions_by_formula(n, dim):
    half = (dim + 1) // 2
    return torch.tensor([[math.sin(p / 10000 ** (2 * j / dim)) if j < half else math.cos(p / 10000 ** (2 * (j - half) / dim)) for j in range(dim)] for p in range(n)])


# ---------------------------------------------------------------- the fixture set

SOURCE = 'The cat sat on the mat.'
TARGET = 'Die Katze sass auf der Matte.'


def fixtures():
    """(name, config, weights, layout, tokenizer (before, after) or None, Marian's spm files)."""
    t5_words = ([], ['</s>'])
    bart_words = (['<s>'], ['</s>'])
    return [
        ('t5-v1_0', t5_config('1.0'), t5_weights(t5_config('1.0'), 11, torch.float32), 'safetensors', t5_words, []),
        ('t5-v1_1-bf16', t5_config('1.1'), t5_weights(t5_config('1.1'), 12, torch.bfloat16), 'safetensors', None, []),
        ('bart-bin', bart_config('bart'), bart_weights(bart_config('bart'), 13, torch.float32), 'bin', bart_words, []),
        ('marian-f16', bart_config('marian'), bart_weights(bart_config('marian'), 14, torch.float16), 'safetensors', None, ['source.spm', 'target.spm']),
        ('mbart', bart_config('mbart'), bart_weights(bart_config('mbart'), 15, torch.float32), 'safetensors', bart_words, []),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('out')
    parser.add_argument('--check', action='store_true')
    parser.add_argument('--time', type=int, default=0)
    args = parser.parse_args()
    if args.time:
        return time_folder(args.out, args.time)
    worst = 0.0
    for name, c, tensors, layout, words, spm in fixtures():
        w = {k: v.to(torch.float64) for k, v in tensors.items()}
        vocab = c['vocab_size']
        if words:
            source = word_ids(SOURCE, *words)
            target = [c['decoder_start_token_id']] + word_ids(TARGET, *words)
        else:
            g = torch.Generator().manual_seed(len(name))
            source = torch.randint(3, vocab, (7,), generator=g).tolist()
            target = [c['decoder_start_token_id']] + torch.randint(3, vocab, (5,), generator=g).tolist()
        enc, dec, cross, hidden, logits = forward(c, w, source, target)
        generated = greedy(c, w, source, 6)
        reference = {'source_ids': source, 'target_ids': target, 'source_text': SOURCE if words else None, 'target_text': TARGET if words else None,
                     'encoder_attentions': [a.tolist() for a in enc], 'decoder_attentions': [a.tolist() for a in dec],
                     'cross_attentions': [a.tolist() for a in cross], 'hidden_last': hidden[-1].tolist(), 'logits_last': logits[-1].tolist(),
                     'generate': 6, 'generated': generated}
        tokenizer = word_tokenizer(vocab, ['<pad>', '</s>', '<unk>', '<s>'], *words) if words else None
        write_folder(args.out, name, c, tensors, layout, reference, tokenizer, {'model_max_length': 512} if words else None)
        for file in spm:  # a Marian folder as the Hub often has it: SentencePiece models, no tokenizer.json
            with open(os.path.join(args.out, name, file), 'wb') as f:
                f.write(b'\x0a\x00')
        if name == 't5-v1_0':  # the same checkpoint without the encoder's relative attention bias table: refused by name
            table = 'encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight'
            write_folder(args.out, 't5-missing-bias', c, {k: v for k, v in tensors.items() if k != table}, layout, None, None, None)
        if args.check:
            second = forward(c, w, source, target, attend=attend_by_loops, buckets=buckets_by_pairs, positions=positions_by_formula)
            diff = max((a - b).abs().max().item() for first, other in zip((enc, dec, cross), second[:3]) for a, b in zip(first, other))
            diff = max(diff, (hidden - second[3]).abs().max().item(), (logits - second[4]).abs().max().item())
            regenerated = greedy(c, w, source, 6, run=lambda *a: forward(*a, attend=attend_by_loops, buckets=buckets_by_pairs, positions=positions_by_formula))
            # transformers' way, with its cache: the same tokens.
            cached = cached_generate(c, w, source, len(generated) - 1)
            same = regenerated == generated and cached == generated
            print(f'{name}: largest difference {diff:.3g}; generated {generated} {"==" if same else "!="} {regenerated} (loops), {cached} (cached)')
            worst = max(worst, diff, 0 if same else math.inf)
    worst = max(worst, language_fixtures(args.out, args.check))
    if args.check:
        # The buckets at every distance a 4096-token run meets, both directions, the published settings and the fixtures'.
        rel = torch.arange(-4096, 4097)[None, :]
        for nb, md in ((32, 128), (8, 20), (32, 256)):
            for bidirectional in (True, False):
                if not torch.equal(t5_buckets(rel.clone(), bidirectional, nb, md), buckets_by_pairs(rel, bidirectional, nb, md)):
                    print(f'buckets differ: {nb} buckets, max distance {md}, bidirectional {bidirectional}')
                    worst = math.inf
        print(f'buckets: vectorised and per pair agree' if worst < math.inf else 'buckets: MISMATCH')
        if worst > 1e-9:
            sys.exit(1)


def language_fixtures(out, check):
    """mBART-50 and mBART folders whose tokenizers have language codes (LANGUAGES), saved for src_lang en_XX (mBART-50 also
    tgt_lang de_DE, and a generation_config.json forcing de_DE), each run on SOURCE in fr_XX and TARGET in ro_RO; their
    references add `languages`, and `defaults`: the ids and generation when no language is named (the source as the saved
    template gives it; mBART-50's target in its tgt_lang; generation from decoder_start_token_id with forced_bos_token_id).
    Returns the largest difference --check finds (0 without it)."""
    worst = 0.0
    for name, fifty, seed in (('mbart-50', True, 16), ('mbart-cc25', False, 17)):
        # mBART's special ids as WORDS has them (its </s> is 1, not the Hub's 2): the tokenizer and config.json agree.
        c = bart_config('mbart', pad_token_id=0, eos_token_id=1, decoder_start_token_id=1)
        tensors = bart_weights(c, seed, torch.float32)
        w = {k: v.to(torch.float64) for k, v in tensors.items()}
        eos = c['eos_token_id']
        source = with_language(SOURCE, 'fr_XX', fifty, eos)
        target = target_with_language(TARGET, 'ro_RO', fifty, c['decoder_start_token_id'], eos)
        enc, dec, cross, hidden, logits = forward(c, w, source, target)
        start, forced = generation_start(c, 'ro_RO', fifty)
        generated = greedy(c, w, source, 6, start=start, forced=forced)
        default_source = with_language(SOURCE, 'en_XX', fifty, eos)
        forced_default = LANGUAGES['de_DE'] if fifty else None
        defaults = {'source_ids': default_source, 'generated': greedy(c, w, default_source, 6, forced=forced_default)}
        if fifty:
            defaults['target_ids'] = target_with_language(TARGET, 'de_DE', fifty, c['decoder_start_token_id'], eos)
        reference = {'source_ids': source, 'target_ids': target, 'source_text': SOURCE, 'target_text': TARGET, 'languages': {'source': 'fr_XX', 'target': 'ro_RO'},
                     'language_codes': list(LANGUAGES), 'encoder_attentions': [a.tolist() for a in enc], 'decoder_attentions': [a.tolist() for a in dec],
                     'cross_attentions': [a.tolist() for a in cross], 'hidden_last': hidden[-1].tolist(), 'logits_last': logits[-1].tolist(),
                     'generate': 6, 'generated': generated, 'defaults': defaults}
        saved = (['en_XX'], ['</s>']) if fifty else ([], ['</s>', 'en_XX'])
        tokenizer = word_tokenizer(c['vocab_size'], ['<pad>', '</s>', '<unk>', '<s>'], *saved, languages=list(LANGUAGES))
        tokenizer_config = {'model_max_length': 512, 'tokenizer_class': 'MBart50TokenizerFast' if fifty else 'MBartTokenizerFast', 'src_lang': 'en_XX'}
        if fifty:
            tokenizer_config['tgt_lang'] = 'de_DE'
        write_folder(out, name, c, tensors, 'safetensors', reference, tokenizer, tokenizer_config)
        if fifty:
            with open(os.path.join(out, name, 'generation_config.json'), 'w', encoding='utf-8') as f:
                json.dump({'decoder_start_token_id': c['decoder_start_token_id'], 'eos_token_id': c['eos_token_id'], 'forced_bos_token_id': forced_default}, f)
        if check:
            second = forward(c, w, source, target, attend=attend_by_loops)
            diff = max((a - b).abs().max().item() for first, other in zip((enc, dec, cross), second[:3]) for a, b in zip(first, other))
            cached = cached_generate(c, w, source, len(generated) - 1, start=start, forced=forced)
            cached_default = cached_generate(c, w, default_source, len(defaults['generated']) - 1, forced=forced_default)
            same = cached == generated and cached_default == defaults['generated']
            print(f'{name}: largest difference {diff:.3g}; generated {generated} {"==" if same else "!="} {cached} (cached), defaults {defaults["generated"]}')
            worst = max(worst, diff, 0 if same else math.inf)
    return worst


def time_folder(folder, runs):
    """PyTorch float32, one thread per core: the forward on bench.json's source and target, and greedy generation with a cache."""
    with open(os.path.join(folder, 'config.json')) as f:
        c = json.load(f)
    with open(os.path.join(folder, 'bench.json')) as f:
        bench = json.load(f)
    from gen_vision_fixtures import read_safetensors
    torch.set_default_dtype(torch.float32)
    torch.set_num_threads(os.cpu_count() or 1)
    w = read_safetensors(os.path.join(folder, 'model.safetensors'))
    source, target = bench['source_ids'], bench['target_ids']
    with torch.no_grad():
        forward(c, w, source, target)
        started = time.perf_counter()
        for _ in range(runs):
            forward(c, w, source, target)
        forward_ms = (time.perf_counter() - started) * 1000 / runs
        steps = bench['generate']
        started = time.perf_counter()
        cached_generate(c, w, source, steps)
        step_ms = (time.perf_counter() - started) * 1000 / steps
    print(json.dumps({'forward_ms': forward_ms, 'generate_ms_per_token': step_ms, 'threads': torch.get_num_threads()}))


def cached_generate(c, w, source, steps, start=None, forced=None):
    """Greedy steps as transformers' generate runs them: the encoder once, then per step one new row through the decoder
    over its cache (the self-attention's keys and values grow a row per step, the cross-attention's are made once)."""
    model = Seq2Seq(c, w)
    memory, _, _ = model.stack('encoder', source)
    cache = {'self': {}, 'cross': {}}
    ids = [c['decoder_start_token_id'] if start is None else start]
    forbidden = [b[0] for b in c.get('bad_words_ids', []) if len(b) == 1]
    for step in range(steps):
        hidden, _, _ = model.stack('decoder', ids[-1:], memory, cache, step)
        logits = model.logits(hidden)[-1]
        logits[forbidden] = -math.inf
        ids.append(forced if forced is not None and step == 0 else int(torch.argmax(logits)))
    return ids


if __name__ == '__main__':
    main()
