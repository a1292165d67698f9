#!/usr/bin/python3
"""RoPE inverse frequencies of config.json settings, by the torch reference of the model fixtures
(gen_model_fixtures.inv_frequencies, written from transformers' modeling_rope_utils), in float64:
test/fixtures/model-rope/inv_freq.json and, for the rope types that depend on the run's length or
turn part of a head, by_length.json; both read by test/unit/model/config.test.ts.

    /usr/bin/python3 scripts/gen_rope_reference.py
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from gen_model_fixtures import inv_frequencies, rope_inv_freq  # noqa: E402

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


# The rope types whose frequencies depend on the run's length, or that turn part of a head (issue 40), each as a
# config.json fragment (max_position_embeddings, partial_rotary_factor and Phi-3's top-level
# original_max_position_embeddings beside the set), its head width and the run lengths asked: Phi-3.5-mini's and
# DeepSeek-style YaRN settings at their real sizes.
PHI35_SHORT = [1.0, 1.0199999809265137, 1.0299999713897705, 1.0299999713897705, 1.0499999523162842, 1.0499999523162842, 1.0499999523162842,
               1.0499999523162842, 1.0499999523162842, 1.0699999332427979, 1.0999999046325684, 1.1099998950958252, 1.1599998474121094,
               1.1599998474121094, 1.1699998378753662, 1.2899998426437378, 1.339999794960022, 1.679999828338623, 1.7899998426437378,
               1.8199998140335083, 1.8499997854232788, 1.8799997568130493, 1.9099997282028198, 1.9399996995925903, 1.9899996519088745,
               2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346, 2.0199997425079346,
               2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0299997329711914,
               2.0299997329711914, 2.0299997329711914, 2.0299997329711914, 2.0799996852874756, 2.0899996757507324, 2.189999580383301,
               2.2199995517730713, 2.5899994373321533, 2.729999542236328, 2.749999523162842, 2.8399994373321533]
BY_LENGTH = {
    'longrope-phi3.5': ({'rope_theta': 10000.0, 'max_position_embeddings': 131072, 'original_max_position_embeddings': 4096,
                         'rope_scaling': {'type': 'longrope', 'short_factor': PHI35_SHORT, 'long_factor': [f * 1.5 + i * 0.25 for i, f in enumerate(PHI35_SHORT)]}},
                        96, [10, 4096, 4097]),
    'longrope-partial': ({'rope_theta': 10000.0, 'max_position_embeddings': 64, 'partial_rotary_factor': 0.75,
                          'rope_scaling': {'rope_type': 'longrope', 'factor': 8.0, 'original_max_position_embeddings': 8,
                                           'short_factor': [1.0, 1.2, 1.5, 2.0, 3.0, 4.0], 'long_factor': [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]}},
                         16, [8, 9]),
    'dynamic': ({'rope_theta': 10000.0, 'max_position_embeddings': 2048, 'rope_scaling': {'type': 'dynamic', 'factor': 2.0}}, 64, [100, 2048, 3000]),
    'yarn-qwen': ({'rope_theta': 1000000.0, 'max_position_embeddings': 32768, 'rope_scaling': {'rope_type': 'yarn', 'factor': 4.0}}, 128, [10]),
    'yarn-deepseek': ({'rope_theta': 10000.0, 'max_position_embeddings': 163840,
                       'rope_scaling': {'type': 'yarn', 'factor': 40.0, 'original_max_position_embeddings': 4096, 'beta_fast': 32, 'beta_slow': 1,
                                        'mscale': 1.0, 'mscale_all_dim': 0.8}}, 64, [10]),
    'yarn-untruncated': ({'rope_theta': 150000.0, 'max_position_embeddings': 131072,
                          'rope_scaling': {'rope_type': 'yarn', 'factor': 32.0, 'original_max_position_embeddings': 4096, 'truncate': False}}, 64, [10]),
    # longrope without a factor: max_position_embeddings / the set's original_max_position_embeddings (here 8) sets cos/sin's factor.
    'longrope-set-original': ({'rope_theta': 10000.0, 'max_position_embeddings': 64,
                               'rope_scaling': {'rope_type': 'longrope', 'original_max_position_embeddings': 8,
                                                'short_factor': [1.0, 1.2, 1.5, 2.0], 'long_factor': [1.0, 2.0, 4.0, 8.0]}},
                              8, [8, 9]),
    # factor 4 where max / original is 32: the factor as given is the one used.
    'yarn-explicit-factor': ({'rope_theta': 1000000.0, 'max_position_embeddings': 131072,
                              'rope_scaling': {'rope_type': 'yarn', 'factor': 4.0, 'original_max_position_embeddings': 4096}}, 128, [10]),
}


def by_length(config, head_dim, n):
    params = dict(config.get('rope_scaling') or {})
    params.setdefault('rope_type', params.get('type', 'default'))
    params['rope_theta'] = config['rope_theta']
    dim = int(head_dim * config.get('partial_rotary_factor', 1.0))
    inv_freq, factor = rope_inv_freq(params, dim, config['max_position_embeddings'], n, config.get('original_max_position_embeddings'))
    return {'inv_freq': inv_freq.tolist(), 'attention_factor': factor}


def main():
    out = {name: {'config': config, 'head_dim': head_dim, 'inv_freq': inv_frequencies(config, head_dim).tolist()}
           for name, (config, head_dim) in CASES.items()}
    path = os.path.join(REPO, 'test', 'fixtures', 'model-rope', 'inv_freq.json')
    with open(path, 'w') as f:
        json.dump(out, f, indent=1)
        f.write('\n')
    lengths = {name: {'config': config, 'head_dim': head_dim, 'runs': {str(n): by_length(config, head_dim, n) for n in ns}}
               for name, (config, head_dim, ns) in BY_LENGTH.items()}
    with open(os.path.join(REPO, 'test', 'fixtures', 'model-rope', 'by_length.json'), 'w') as f:
        json.dump(lengths, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
