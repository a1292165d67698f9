#!/usr/bin/python3
"""Saved attentions of an encoder–decoder model as PyTorch users write them, and what the heads
views must read from them (test/fixtures/heads/encoder-decoder/).

`model(input_ids=…, decoder_input_ids=…, output_attentions=True)` returns three tuples, one tensor
[batch, heads, q, k] per layer: `encoder_attentions` (source × source), `decoder_attentions`
(target × target, causal) and `cross_attentions` (target × source). The weights here are real
softmax rows over random scores (float64, then stored as float32), shaped like a model whose
encoder has more layers and heads than its decoder (BART's encoder_layers / decoder_layers and
*_attention_heads may differ; cross-attention has the decoder's heads). Written as users write them:
torch.save of the dict with input_ids and decoder_input_ids (a tokenizer.json beside names them),
numpy.savez of stacked [layers, heads, q, k] arrays with a tokens.json {"tokens", "target_tokens"}
beside, safetensors of one tensor per layer with the tokens in its metadata, and a file with the
cross-attentions alone. Bad inputs: a cross-attention whose source length is not the encoder's.
expected.json holds every weight as float64 for the unit tests. Run again only to change them:
    /usr/bin/python3 scripts/gen_saved_encoder_decoder.py
"""
import json
import os

import numpy as np
import torch

from gen_saved_attentions import attentions, weights_of
from safetensors_file import write_safetensors

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
OUT = os.path.join(ROOT, 'test', 'fixtures', 'heads', 'encoder-decoder')
ENCODER_LAYERS, ENCODER_HEADS, DECODER_LAYERS, DECODER_HEADS = 3, 4, 2, 2
SOURCE = ['▁The', '▁house', '▁is', '▁very', '▁small', '.', '</s>']
TARGET = ['<pad>', '▁Das', '▁Haus', '▁ist', '▁sehr', '▁klein', '.', '</s>']
VOCAB = {'<pad>': 0, '</s>': 1, '<unk>': 2, '▁The': 3, '▁house': 4, '▁is': 5, '▁very': 6, '▁small': 7, '.': 8,
         '▁Das': 9, '▁Haus': 10, '▁ist': 11, '▁sehr': 12, '▁klein': 13}


def path(*parts):
    full = os.path.join(OUT, *parts)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def main():
    generator = torch.Generator().manual_seed(43)
    s, t = len(SOURCE), len(TARGET)
    encoder = attentions(generator, ENCODER_LAYERS, 1, ENCODER_HEADS, s, s, causal=False)
    decoder = attentions(generator, DECODER_LAYERS, 1, DECODER_HEADS, t, t, causal=True)
    cross = attentions(generator, DECODER_LAYERS, 1, DECODER_HEADS, t, s, causal=False)
    source_ids = torch.tensor([[VOCAB[token] for token in SOURCE]])
    target_ids = torch.tensor([[VOCAB[token] for token in TARGET]])
    kinds = {'encoder': encoder, 'decoder': decoder, 'cross': cross}
    expected = {
        'tokens': SOURCE, 'target_tokens': TARGET, 'token_ids': source_ids[0].tolist(), 'target_ids': target_ids[0].tolist(),
        'kinds': {kind: {'layers': len(layers), 'heads': layers[0].shape[1], 'queries': layers[0].shape[2], 'keys': layers[0].shape[3],
                         'weights': weights_of(layers)} for kind, layers in kinds.items()},
    }

    # torch.save of what the model returned, with the ids it ran on; a WordLevel tokenizer.json names them.
    torch.save({'encoder_attentions': encoder, 'decoder_attentions': decoder, 'cross_attentions': cross,
                'input_ids': source_ids, 'decoder_input_ids': target_ids}, path('ids', 'outputs.pt'))
    tokenizer = {
        'version': '1.0', 'truncation': None, 'padding': None, 'added_tokens': [], 'normalizer': None,
        'pre_tokenizer': {'type': 'Whitespace'}, 'post_processor': None, 'decoder': None,
        'model': {'type': 'WordLevel', 'vocab': VOCAB, 'unk_token': '<unk>'},
    }
    with open(path('ids', 'tokenizer.json'), 'w') as f:
        json.dump(tokenizer, f, ensure_ascii=False)
    # numpy.savez of each kind stacked [layers, heads, q, k], the tokens in a tokens.json beside.
    np.savez(path('npz', 'stacked.npz'), **{f'{kind}_attentions': torch.stack([x[0] for x in layers]).numpy() for kind, layers in kinds.items()})
    with open(path('npz', 'tokens.json'), 'w') as f:
        json.dump({'tokens': SOURCE, 'target_tokens': TARGET}, f, ensure_ascii=False)
    # safetensors: one tensor per layer and kind, [batch, heads, q, k]; the tokens in its metadata.
    per_layer = {f'{kind}_attentions.{i}': x.contiguous() for kind, layers in kinds.items() for i, x in enumerate(layers)}
    with open(path('safetensors', 'layers.safetensors'), 'wb') as f:
        write_safetensors(f, per_layer, {'tokens': json.dumps(SOURCE), 'target_tokens': json.dumps(TARGET)})
    # The cross-attentions alone (what an alignment study keeps).
    torch.save({'cross_attentions': cross}, path('cross', 'cross.pt'))
    with open(path('cross', 'tokens.json'), 'w') as f:
        json.dump({'tokens': SOURCE, 'target_tokens': TARGET}, f, ensure_ascii=False)
    # Bad input: cross-attention over one source token fewer than the encoder's.
    short = attentions(generator, DECODER_LAYERS, 1, DECODER_HEADS, t, s - 1, causal=False)
    torch.save({'encoder_attentions': encoder, 'cross_attentions': short}, path('bad', 'source-mismatch.pt'))

    with open(path('expected.json'), 'w') as f:
        json.dump(expected, f, separators=(',', ':'), ensure_ascii=False)
        f.write('\n')


if __name__ == '__main__':
    main()
