#!/usr/bin/python3
"""Greedy continuations of the causal model fixtures, in float64, recomputing the whole forward at every step.

    /usr/bin/python3 scripts/gen_generation_references.py OUTDIR [MODELS]

MODELS is the fixture set scripts/gen_model_fixtures.py wrote (default: test-output/models). For each causal folder it
reads the weights back from the files, checks that the fixture script's float64 forward still gives reference.json's
logits, then from a seeded prompt appends the most probable token, one forward over the whole sequence per new token
(no cache: the cache under test is not the reference's). A prompt is kept only when every step's two most probable
logits are at least MARGIN apart (and a mixture of experts' router at least MOE_MARGIN from a tie), so float32
rounding cannot flip a choice (the float32 forward's logits are within ~1e-5 of these; Gemma 2's final softcap of 3
squeezes its gaps below 1e-3); otherwise the next seed is tried, and one whose continuation has DISTINCT different
tokens is preferred. OUTDIR/generation.json holds, per folder: prompt,
generated, the smallest margin, and the float64 attentions [layer][head][query][key] of one forward over the final
sequence (prompt + generated).

Lengths stay where a cache and a whole forward agree: a longrope model within original_max_position_embeddings, a
dynamic-NTK one within max_position_embeddings (past them the frequencies depend on the whole length, so the keys a
cache holds were rotated differently; transformers' cache does the same).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_model_fixtures as fixtures  # noqa: E402  (its forwards and weight reader)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
MARGIN = 5e-4
PROMPT = 4
NEW_TOKENS = 8
# A continuation repeating one token would not show a cache that drifts: at least this many distinct new tokens.
DISTINCT = 3
SEEDS = 30

FORWARDS = {
    'gpt2': fixtures.gpt2_forward, 'gpt2-bin': fixtures.gpt2_forward,
    **{name: fixtures.decoder_forward for name, *_ in fixtures.DECODERS},
    'pythia-f16': fixtures.gpt_neox_forward, 'gpt_neox-sequential-sharded-bf16': fixtures.gpt_neox_forward,
    **{name: fixtures.llama_relative_forward for name, *_ in fixtures.LLAMA_RELATIVES},
    'gptj-bf16': fixtures.gptj_forward, 'gpt_neo-local': fixtures.gpt_neo_forward,
    'opt-f16': fixtures.opt_forward, 'opt-350m-post-ln-bin': fixtures.opt_forward, 'phi': fixtures.phi_forward,
    **{name: fixtures.moe_forward for name, *_ in fixtures.MOE_FIXTURES},
}


def forward_of(name, config, w, ids):
    """attentions, the last hidden state, logits at every position, and the router's margin (inf for a dense model)."""
    out = FORWARDS[name](config, w, ids)
    return out[0], out[2], out[4] if len(out) == 5 else float('inf')


def weights_for(name, folder, config, reference):
    """The folder's tensors under the names its forward reads: read_weights drops `transformer.`, which some keep."""
    stripped = fixtures.read_weights(folder)
    prefixed = {(k if k.startswith('lm_head') else 'transformer.' + k): v for k, v in stripped.items()}
    for w in (stripped, prefixed):
        try:
            _, logits, _ = forward_of(name, config, w, reference['token_ids'])
        except KeyError:
            continue
        if (logits[-1] - torch.tensor(reference['logits_last'])).abs().max().item() < 1e-9:
            return w
    sys.exit(f'{name}: the fixture forward no longer gives reference.json\'s logits')


def total_length(config):
    rope = config.get('rope_scaling') or {}
    kind = rope.get('rope_type', rope.get('type'))
    if kind == 'longrope':
        return config['original_max_position_embeddings']
    if kind == 'dynamic':
        return config['max_position_embeddings']
    return PROMPT + NEW_TOKENS


def greedy(name, config, w, prompt, new_tokens):
    """The prompt and its greedy continuation, stopped after config.json's eos_token_id (kept) as transformers' generate
    stops (the fixtures have no generation_config.json), and the smallest gap between a step's two largest logits."""
    eos = config.get('eos_token_id')
    eos = set(eos if isinstance(eos, list) else [] if eos is None else [eos])
    ids, margin = list(prompt), float('inf')
    for _ in range(new_tokens):
        _, logits, router = forward_of(name, config, w, ids)
        top = logits[-1].topk(2)
        margin = min(margin, (top.values[0] - top.values[1]).item())
        if router < fixtures.MOE_MARGIN:
            return ids, 0.0
        ids.append(top.indices[0].item())
        if ids[-1] in eos:
            break
    _, _, router = forward_of(name, config, w, ids)  # the final sequence's routing too
    return ids, margin if router >= fixtures.MOE_MARGIN else 0.0


def main():
    out = sys.argv[1]
    models = sys.argv[2] if len(sys.argv) > 2 else os.path.join(REPO, 'test-output', 'models')
    os.makedirs(out, exist_ok=True)
    result = {}
    with torch.no_grad():
        for name in FORWARDS:
            folder = os.path.join(models, name)
            with open(os.path.join(folder, 'config.json'), encoding='utf-8') as f:
                config = json.load(f)
            with open(os.path.join(folder, 'reference.json'), encoding='utf-8') as f:
                reference = json.load(f)
            w = weights_for(name, folder, config, reference)
            total = total_length(config)
            prompt_length = min(PROMPT, total // 2)
            # The first seed within the margin with DISTINCT tokens; a model that says one token whatever the prompt
            # (random weights often do) keeps the first within the margin.
            chosen = None
            for seed in range(100, 100 + SEEDS):
                prompt = fixtures.random_ids(seed, prompt_length, config['vocab_size'])
                ids, margin = greedy(name, config, w, prompt, total - prompt_length)
                if margin >= MARGIN and (chosen is None or len(set(ids[prompt_length:])) >= DISTINCT):
                    chosen = prompt, ids, margin, seed
                    if len(set(ids[prompt_length:])) >= DISTINCT:
                        break
            if chosen is None:
                sys.exit(f'{name}: no prompt of {SEEDS} seeds keeps every step {MARGIN} from a tie')
            prompt, ids, margin, seed = chosen
            attentions, _, _ = forward_of(name, config, w, ids)
            result[name] = {'prompt': prompt, 'generated': ids[prompt_length:], 'margin': margin, 'seed': seed,
                            'attentions': [a.tolist() for a in attentions]}
    with open(os.path.join(out, 'generation.json'), 'w', encoding='utf-8') as f:
        json.dump(result, f)


if __name__ == '__main__':
    main()
