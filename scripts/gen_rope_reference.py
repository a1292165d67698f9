#!/usr/bin/python3
"""RoPE inverse frequencies of config.json settings, by the torch reference of the model fixtures
(gen_model_fixtures.inv_frequencies, written from transformers' modeling_rope_utils), in float64:
test/fixtures/model-rope/inv_freq.json, read by test/unit/model/config.test.ts.

    /usr/bin/python3 scripts/gen_rope_reference.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gen_model_fixtures import inv_frequencies  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))

# The settings of released models (Llama 3.1 8B, Llama 3.2 1B's head width with its factor 32)
# and the other rope types read; each as a config.json fragment with its head width.
CASES = {
    'default': ({'rope_theta': 10000.0}, 64),
    'linear': ({'rope_theta': 10000.0, 'rope_scaling': {'type': 'linear', 'factor': 4.0}}, 128),
    'llama3-8b': ({'rope_theta': 500000.0, 'rope_scaling': {'rope_type': 'llama3', 'factor': 8.0, 'low_freq_factor': 1.0,
                                                             'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192}}, 128),
    'llama3-1b': ({'rope_theta': 500000.0, 'rope_scaling': {'rope_type': 'llama3', 'factor': 32.0, 'low_freq_factor': 1.0,
                                                             'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192}}, 64),
}


def main():
    out = {name: {'config': config, 'head_dim': head_dim, 'inv_freq': inv_frequencies(config, head_dim).tolist()}
           for name, (config, head_dim) in CASES.items()}
    path = os.path.join(REPO, 'test', 'fixtures', 'model-rope', 'inv_freq.json')
    with open(path, 'w') as f:
        json.dump(out, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
