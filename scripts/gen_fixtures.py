#!/usr/bin/python3
"""Reference fixtures for the attention engine (test/fixtures/engine/*.json).

Every case is computed twice from the same inputs: numpy float64 (forward values) and PyTorch
float64 with autograd (gradients); the two forwards must agree to 1e-12 before anything is
written. float32 cases are computed with torch.float32 throughout. One case is also checked
against torch.nn.MultiheadAttention, so the conventions (row vectors, boolean masks true = may
attend, key padding true = ignored) are PyTorch's own, not only this script's.

Conventions (the engine's, see src/core/engine): tokens are rows, Q = (X + PE) W_Q; a whole W
is split column-wise across heads; query head i uses KV head floor(i / (h / g)); masks fold into
one additive Lq x Lk matrix added to the *scaled* scores; a fully masked row gives zero weights;
loss = sum(dO * output), dO = ones unless given.

Variants (src/core/engine/variants.ts), written here from the papers: per head, scores =
scale * RoPE(Q) RoPE(K)^T -> / temperature -> softcap C tanh(s / C) -> + ALiBi -m_h |i - j| ->
masks (window, segments, prefix, sinks: -inf) -> softmax -> V. Positions: key j at j, query row i
at i + Lk - Lq. RoPE is computed independently by the two backends: numpy with the "rotate half"
cos/sin formula of Llama-style code (RoFormer eq. 34), torch as complex numbers
(x_k + i x_{k+d/2}) * e^{i m theta_k} (RoFormer eq. 12 / Meta's llama `apply_rotary_emb`), for
both pair layouts; torch's autograd gives the gradients through it. `decode` computes the last
query row alone, and the script asserts it equals the last row of the full run.

Run: npm run fixtures  (or /usr/bin/python3 scripts/gen_fixtures.py)
"""
import json
import math
import os
import sys

import numpy as np
import torch

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'fixtures', 'engine')
NEG_INF = -math.inf


# ---------------------------------------------------------------- one reference, two backends

class NumpyOps:
    dtype = 'float64'

    def tensor(self, a):
        return np.array(a, dtype=np.float64)

    def cat_columns(self, parts):
        return np.concatenate(parts, axis=1)

    tanh = staticmethod(np.tanh)

    def softmax_rows(self, x):
        """Stable softmax; a row with nothing but -inf becomes zeros."""
        row_max = x.max(axis=1, keepdims=True)
        full = np.isneginf(row_max)
        e = np.exp(x - np.where(full, 0.0, row_max))
        with np.errstate(invalid='ignore'):
            return np.where(full, 0.0, e / e.sum(axis=1, keepdims=True))

    def keep(self, t):
        return t

    def rope(self, x, first_position, base, layout):
        """RoFormer's rotation as Llama-style code writes it: x cos + rotate_half(x) sin."""
        n, d = x.shape
        inv_freq = 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)
        angles = np.outer(np.arange(n, dtype=np.float64) + first_position, inv_freq)
        if layout == 'half':
            cos = np.concatenate([np.cos(angles)] * 2, axis=1)
            sin = np.concatenate([np.sin(angles)] * 2, axis=1)
            rotate_half = np.concatenate([-x[:, d // 2:], x[:, :d // 2]], axis=1)
            return x * cos + rotate_half * sin
        cos = np.repeat(np.cos(angles), 2, axis=1)
        sin = np.repeat(np.sin(angles), 2, axis=1)
        rotate_pairs = np.stack([-x[:, 1::2], x[:, 0::2]], axis=2).reshape(n, d)
        return x * cos + rotate_pairs * sin


class TorchOps:
    def __init__(self, dtype):
        self.dtype = dtype
        self.torch_dtype = torch.float64 if dtype == 'float64' else torch.float32
        self.kept = []

    def tensor(self, a):
        return torch.tensor(np.asarray(a, dtype=np.float64), dtype=self.torch_dtype)

    def cat_columns(self, parts):
        return torch.cat(parts, dim=1)

    tanh = staticmethod(torch.tanh)

    def softmax_rows(self, x):
        # torch.softmax gives NaN on an all -inf row (and NaN gradients through it): softmax a
        # row of zeros there instead and multiply by 0, as PyTorch >= 2.5's SDPA does.
        full = torch.isneginf(x).all(dim=1, keepdim=True)
        safe = torch.where(full, torch.zeros_like(x), x)
        return torch.softmax(safe, dim=1) * (~full).to(x.dtype)

    def keep(self, t):
        """An intermediate whose gradient the fixture reports."""
        if t.requires_grad:
            t.retain_grad()
        return t

    def rope(self, x, first_position, base, layout):
        """RoFormer's rotation as complex multiplication: pair k times e^{i m theta_k}."""
        n, d = x.shape
        theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        m = torch.arange(n, dtype=torch.float64) + first_position
        turn = torch.polar(torch.ones(n, d // 2, dtype=torch.float64), torch.outer(m, theta))
        if self.torch_dtype == torch.float32:
            turn = turn.to(torch.complex64)
        if layout == 'half':
            z = torch.complex(x[:, :d // 2], x[:, d // 2:]) * turn
            return torch.cat([z.real, z.imag], dim=1)
        z = torch.view_as_complex(x.reshape(n, d // 2, 2).contiguous()) * turn
        return torch.view_as_real(z).reshape(n, d)


def split_columns(m, count):
    width = m.shape[1] // count
    return [m[:, i * width:(i + 1) * width] for i in range(count)]


def alibi_slopes(n):
    """The ALiBi authors' get_slopes (ofirpress/attention_with_linear_biases)."""
    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + alibi_slopes(2 * closest)[0::2][:n - closest]


def variant_allowed(spec, lq, lk):
    """window / segments / prefix / sinks as a boolean Lq x Lk (True = may attend), or None."""
    opts = spec['options']
    if 'window' not in opts and 'prefix' not in opts and 'segments' not in spec:
        return None
    pos = np.arange(lq)[:, None] + (lk - lq)
    key = np.arange(lk)[None, :]
    allowed = np.ones((lq, lk), dtype=bool)
    if 'window' in opts:
        w = opts['window']
        near = (pos - key < w) if ('causal' in opts or 'prefix' in opts) else (np.abs(pos - key) < w)
        allowed &= near | (key < opts.get('sinks', 0))  # StreamingLLM: sinks stay in view
    if 'segments' in spec:
        ids = np.array(spec['segments'][0])
        allowed &= ids[pos] == ids[key]
    if 'prefix' in opts:
        allowed &= (key < opts['prefix']) | (key <= pos)  # bidirectional prefix, causal rest
    return allowed


def combined_mask(spec, lq, lk):
    """The additive mask (numpy float64), or None. Mirrors nothing: written from the rules."""
    opts = spec['options']
    allowed = variant_allowed(spec, lq, lk)
    causal = 'causal' in opts and 'prefix' not in opts  # a prefix-LM is causal past the prefix
    if 'mask' not in spec and 'padding' not in spec and not causal and allowed is None:
        return None
    m = np.zeros((lq, lk))
    if 'mask' in spec:
        value = np.array(spec['mask']['value'], dtype=np.float64)
        m = np.where(value != 0, 0.0, NEG_INF) if spec['mask']['kind'] == 'boolean' else value.copy()
    if causal:
        offset = lk - lq if opts['causal'] == 'bottom-right' else 0
        m = np.where(np.tril(np.ones((lq, lk), dtype=bool), k=offset), m, NEG_INF)
    if allowed is not None:
        m = np.where(allowed, m, NEG_INF)
    if 'padding' in spec:
        padded = np.array(spec['padding'], dtype=np.float64)[0] != 0
        m = np.where(padded[None, :], NEG_INF, m)
    return m


def sinusoidal(rows, cols):
    pe = np.zeros((rows, cols))
    pos = np.arange(rows)[:, None]
    for c in range(0, cols, 2):
        angle = pos[:, 0] / np.power(10000.0, c / cols)
        pe[:, c] = np.sin(angle)
        if c + 1 < cols:
            pe[:, c + 1] = np.cos(angle)
    return pe


def attention(spec, ops, leaves):
    """Forward pass; `leaves` maps an input name to its tensor (torch leaves get gradients)."""
    opts = spec['options']
    h = opts.get('heads', 1)
    g = opts.get('kvHeads', h)
    result = {'heads': [], 'fullyMasked': []}

    inp = None
    if 'X' in leaves:
        inp = leaves['X']
        if 'PE' in spec:
            inp = inp + ops.tensor(spec['PE'])
        elif opts.get('sinusoidalPE'):
            inp = inp + ops.tensor(sinusoidal(*np.array(spec['X']).shape))
    kv_source = leaves.get('context', inp)
    decode = opts.get('decode', False)
    if inp is not None:
        if decode:
            inp = inp[-1:]  # a KV-cache step: the last query alone; keys/values from every token
        result['input'] = inp

    def heads_of(name, count, source):
        if name in leaves:
            return split_columns(leaves[name], count)
        ws = leaves.get('W' + name)
        if ws is None:
            return split_columns(source, count)
        weights = split_columns(ws[0], count) if len(ws) == 1 else ws
        return [source @ w for w in weights]

    q_heads = heads_of('Q', h, inp)
    if decode and 'Q' in leaves:
        q_heads = [q[-1:] for q in q_heads]
    q_heads = [ops.keep(q) for q in q_heads]
    k_heads = heads_of('K', g, kv_source)
    v_heads = heads_of('V', g, kv_source)
    lk = k_heads[0].shape[0]
    full_lq = len(spec['Q']) if 'Q' in spec else len(spec['X'])
    lq = 1 if decode else full_lq
    first_query = lk - full_lq + (full_lq - 1 if decode else 0)
    mask = combined_mask(spec, full_lq, lk)
    if mask is not None and decode:
        mask = mask[-1:]
    slopes = None
    if opts.get('alibi'):
        slopes = spec['alibiSlopes'][0] if 'alibiSlopes' in spec else alibi_slopes(h)
    distance = np.abs(np.arange(lq)[:, None] + first_query - np.arange(lk)[None, :])
    rope = opts.get('rope')
    layout = opts.get('ropeLayout', 'half')
    score = opts.get('score', 'scaled_dot')
    sigma = opts.get('sigma', 1.0)

    outputs = []
    for i in range(h):
        kv = i // (h // g)
        # Per-head copies, so each head's own share of dK and dV can be read.
        q = q_heads[i]
        k = ops.keep(k_heads[kv] * 1)
        v = ops.keep(v_heads[kv] * 1)
        d_k = q.shape[1]
        q_scored, k_scored = q, k
        if rope is not None:
            q_scored = ops.rope(q, first_query, rope, layout)
            k_scored = ops.rope(k, 0, rope, layout)
        if score in ('scaled_dot', 'dot'):
            scores = q_scored @ k_scored.T
        elif score == 'general':
            scores = q_scored @ leaves['Wa'] @ k_scored.T
        elif score == 'additive':
            p = q_scored @ leaves['W1']
            r = k_scored @ leaves['W2']
            va = leaves['va'].reshape(-1)
            scores = ops.tanh(p[:, None, :] + r[None, :, :]) @ va
        elif score == 'gaussian':
            diff = q_scored[:, None, :] - k_scored[None, :, :]
            scores = -(diff * diff).sum(-1) / (2 * sigma * sigma)
        else:
            raise ValueError(score)
        scale = opts.get('scale', 1 / math.sqrt(d_k) if score == 'scaled_dot' else 1.0)
        scaled = scores * scale
        if 'temperature' in opts:
            scaled = scaled / opts['temperature']
        if 'softcap' in opts:
            cap = opts['softcap']
            scaled = cap * ops.tanh(scaled / cap)  # Gemma 2's logit softcapping
        additive = mask
        if slopes is not None:
            bias = -slopes[i] * distance
            additive = bias if mask is None else bias + mask
        mask_t = None if additive is None else ops.tensor(additive)
        masked = ops.keep(scaled + mask_t if mask_t is not None else scaled * 1)
        weights = ops.keep(ops.softmax_rows(masked))
        out = weights @ v
        outputs.append(out)
        result['heads'].append({
            'Q': q, 'K': k, 'V': v, 'scores': scores, 'scaled': scaled, 'mask': mask_t,
            'masked': masked, 'weights': weights, 'output': out, 'kvHead': kv,
        })
        full = np.isneginf(np.asarray(to_numpy(masked))).all(axis=1)
        result['fullyMasked'] += [[i, int(row)] for row in np.nonzero(full)[0]]
    concat = ops.cat_columns(outputs)
    output = concat @ leaves['WO'] if 'WO' in leaves else concat
    result['concat'] = concat
    result['output'] = output
    if opts.get('residual'):
        result['residual'] = inp + output
    return result


def to_numpy(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t


def leaves_for(spec, ops, grad):
    names = ['X', 'context', 'Q', 'K', 'V', 'WO', 'Wa', 'W1', 'W2', 'va']  # (segments, slopes: no gradient)
    leaves = {}
    for name in names:
        if name in spec:
            leaves[name] = ops.tensor(spec[name])
            if grad:
                leaves[name].requires_grad_(True)
    for name in ('WQ', 'WK', 'WV'):
        if name in spec:
            leaves[name] = [ops.tensor(w) for w in spec[name]]
            if grad:
                for w in leaves[name]:
                    w.requires_grad_(True)
    return leaves


def torch_run(spec, dtype):
    ops = TorchOps(dtype)
    grad = bool(spec['options'].get('gradients'))
    leaves = leaves_for(spec, ops, grad)
    result = attention(spec, ops, leaves)
    if grad:
        out = result['output']
        d_o = ops.tensor(spec['dO']) if 'dO' in spec else torch.ones_like(out)
        (out * d_o).sum().backward()
        for head in result['heads']:
            head['gradients'] = {
                'dQ': head['Q'].grad, 'dK': head['K'].grad, 'dV': head['V'].grad,
                'dA': head['weights'].grad, 'dS': head['masked'].grad,
            }
        grads = {}
        # Q, K, V given directly carry no further gradient (as in the engine).
        if 'X' in leaves and not ('Q' in leaves and 'K' in leaves and 'V' in leaves):
            grads['dX'] = leaves['X'].grad
        if 'context' in leaves:
            grads['dContext'] = leaves['context'].grad
        for name in ('WQ', 'WK', 'WV'):
            if name in leaves:
                grads['d' + name] = torch.cat([w.grad for w in leaves[name]], dim=1)
        if 'WO' in leaves:
            grads['dWO'] = leaves['WO'].grad
        result['gradients'] = grads
    return result


# ---------------------------------------------------------------- JSON

def encode(value):
    """Matrices as lists of rows; non-finite numbers as the strings JSON cannot hold."""
    if isinstance(value, torch.Tensor):
        value = to_numpy(value)
    if isinstance(value, np.ndarray):
        if value.ndim == 1:
            value = value[None, :]
        return [[encode_number(float(x)) for x in row] for row in value.astype(np.float64)]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, float):
        return encode_number(value)
    return value


def encode_number(x):
    if math.isnan(x):
        return 'NaN'
    if math.isinf(x):
        return 'Infinity' if x > 0 else '-Infinity'
    return x


MATRIX_KEYS = ('input', 'concat', 'output', 'residual')
HEAD_KEYS = ('Q', 'K', 'V', 'scores', 'scaled', 'mask', 'masked', 'weights', 'output')


def expected_of(result):
    expected = {k: result[k] for k in MATRIX_KEYS if k in result}
    expected['heads'] = []
    for head in result['heads']:
        item = {k: head[k] for k in HEAD_KEYS}
        item['kvHead'] = head['kvHead']
        if 'gradients' in head:
            item['gradients'] = head['gradients']
        expected['heads'].append(item)
    if 'gradients' in result:
        expected['gradients'] = result['gradients']
    expected['fullyMasked'] = result['fullyMasked']
    return expected


def max_rel_diff(a, b):
    a, b = np.asarray(to_numpy(a), dtype=np.float64), np.asarray(to_numpy(b), dtype=np.float64)
    finite = np.isfinite(b)
    assert np.array_equal(np.isfinite(a), finite) and np.array_equal(a[~finite], b[~finite])
    if not finite.any():
        return 0.0
    scale = np.abs(b[finite]).max() + np.abs(b[finite])
    return float((np.abs(a[finite] - b[finite]) / np.maximum(scale, 1e-300)).max())


def build(case):
    spec = case['spec']
    dtype = spec['options'].get('dtype', 'float64')
    result = torch_run(spec, dtype)
    if dtype == 'float64':
        # The forward once more in numpy: both must agree before either is trusted.
        reference = attention(spec, NumpyOps(), leaves_for(spec, NumpyOps(), False))
        for key in ('output', 'concat'):
            assert max_rel_diff(result[key], reference[key]) < 1e-12, (case['name'], key)
        for ours, theirs in zip(result['heads'], reference['heads']):
            for key in HEAD_KEYS:
                if ours[key] is not None:
                    assert max_rel_diff(ours[key], theirs[key]) < 1e-12, (case['name'], key)
                    ours[key] = theirs[key]
        for key in MATRIX_KEYS:
            if key in reference:
                result[key] = reference[key]
    if case.get('crossCheck') == 'nn.MultiheadAttention':
        cross_check_multihead(spec, result)
    if spec['options'].get('decode'):
        # One KV-cache step must equal the last row of the full run.
        full_spec = dict(spec, options={k: v for k, v in spec['options'].items() if k != 'decode'})
        full = attention(full_spec, NumpyOps(), leaves_for(full_spec, NumpyOps(), False))
        assert max_rel_diff(result['output'], full['output'][-1:]) < 1e-12, (case['name'], 'decode')
    return {
        'name': case['name'],
        'description': case['description'],
        'dtype': dtype,
        'tolerance': 1e-12 if dtype == 'float64' else 1e-5,
        'spec': encode(spec),
        'expected': encode(expected_of(result)),
    }


def cross_check_multihead(spec, result):
    """The same numbers from PyTorch's own nn.MultiheadAttention (weights stored transposed)."""
    x = torch.tensor(spec['X'], dtype=torch.float64)
    d_model = x.shape[1]
    mha = torch.nn.MultiheadAttention(d_model, spec['options']['heads'], bias=False, batch_first=True).double()
    with torch.no_grad():
        w_in = [torch.tensor(spec[n][0], dtype=torch.float64).T for n in ('WQ', 'WK', 'WV')]
        mha.in_proj_weight.copy_(torch.cat(w_in, dim=0))
        mha.out_proj.weight.copy_(torch.tensor(spec['WO'], dtype=torch.float64).T)
    blocked = ~torch.tensor(spec['mask']['value'], dtype=torch.bool)  # MHA: True = blocked
    padding = torch.tensor(spec['padding'], dtype=torch.bool)  # MHA: True = ignored
    out, _ = mha(x[None], x[None], x[None], attn_mask=blocked, key_padding_mask=padding, need_weights=False)
    assert max_rel_diff(out[0], result['output']) < 1e-12, 'nn.MultiheadAttention disagrees'


# ---------------------------------------------------------------- cases

def cases():
    rng = np.random.default_rng(20261122)

    def r(rows, cols, scale=1.0):
        return (rng.standard_normal((rows, cols)) * scale).round(6).tolist()

    def opts(**kw):
        base = {'heads': 1, 'score': 'scaled_dot', 'dtype': 'float64'}
        base.update(kw)
        return base

    def case(name, description, cross_check=None, **spec):
        c = {'name': name, 'description': description, 'spec': spec}
        if cross_check:
            c['crossCheck'] = cross_check
        return c

    worked = dict(
        X=[[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0]],
        WQ=[[[1, 0], [0, 1], [1, 0], [0, 0]]],
        WK=[[[0, 1], [1, 0], [0, 0], [1, 1]]],
        WV=[[[1, 0], [0, 1], [1, 1], [0, 2]]],
        tokens=['I', 'love', 'cats'],
    )
    mha_mask = (rng.random((5, 5)) > 0.3)
    mha_mask[:, 0] = True  # nn.MultiheadAttention 1.13 gives NaN on fully masked rows
    return [
        case('worked-example', 'examples/01-worked-example.md: 3 tokens, d_model 4, d_k = d_v = 2',
             options=opts(name='Worked example'), **worked),
        case('worked-example-gradients', 'the worked example with the backward pass (dO = ones)',
             options=opts(gradients=True), **worked),
        case('single-head', 'one head, d_model 6, d_k 4, d_v 3, gradients',
             options=opts(gradients=True), X=r(5, 6), WQ=[r(6, 4)], WK=[r(6, 4)], WV=[r(6, 3)]),
        case('scale-custom', 'scale = 0.3 instead of 1/sqrt(d_k)',
             options=opts(scale=0.3, gradients=True), X=r(4, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)]),
        case('score-dot', 'score = dot: no scaling',
             options=opts(score='dot', gradients=True), X=r(4, 4), WQ=[r(4, 3)], WK=[r(4, 3)], WV=[r(4, 2)]),
        case('mask-boolean', 'boolean mask (true = may attend) with one fully masked query row',
             options=opts(gradients=True), X=r(4, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)],
             mask={'kind': 'boolean', 'value': [[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1], [0, 1, 1, 1]]}),
        case('mask-additive', 'additive mask (finite values and -inf) added to the scaled scores',
             options=opts(gradients=True), X=r(4, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)],
             mask={'kind': 'additive', 'value': [[0, -1.5, NEG_INF, 0.25], [0, 0, 0, NEG_INF],
                                                 [2, NEG_INF, 0, 0], [0, 0, -0.5, 0]]}),
        case('causal-top-left', 'causal mask aligned top-left on self-attention',
             options=opts(causal='top-left', gradients=True), X=r(5, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 3)]),
        case('causal-bottom-right-cross', 'causal bottom-right, Lq = 3 < Lk = 5 (offset Lk - Lq), context',
             options=opts(causal='bottom-right', gradients=True), X=r(3, 4), context=r(5, 4),
             WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)]),
        case('causal-bottom-right-long-queries', 'causal bottom-right with Lq = 4 > Lk = 2: first rows fully masked',
             options=opts(causal='bottom-right', gradients=True), Q=r(4, 2), K=r(2, 2), V=r(2, 3)),
        case('causal-top-left-cross', 'causal top-left with Lq = 2 < Lk = 4 (precomputed Q, K, V)',
             options=opts(causal='top-left'), Q=r(2, 3), K=r(4, 3), V=r(4, 2)),
        case('key-padding', 'key padding (true = ignored) on the last two keys, gradients',
             options=opts(gradients=True), X=r(5, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)],
             padding=[[0, 0, 0, 1, 1]]),
        case('multi-head-split', 'two heads split from whole W_Q/W_K/W_V, W_O, residual, gradients',
             options=opts(heads=2, residual=True, gradients=True), X=r(4, 6),
             WQ=[r(6, 6)], WK=[r(6, 6)], WV=[r(6, 6)], WO=r(6, 6)),
        case('multi-head-per-head', 'three heads with per-head W_Q1..3 etc., W_O, gradients',
             options=opts(heads=3, gradients=True), X=r(4, 5),
             WQ=[r(5, 2) for _ in range(3)], WK=[r(5, 2) for _ in range(3)], WV=[r(5, 2) for _ in range(3)],
             WO=r(6, 5)),
        case('multi-head-no-wo', 'two heads, no W_O: the output is the concatenation',
             options=opts(heads=2), X=r(3, 4), WQ=[r(4, 4)], WK=[r(4, 4)], WV=[r(4, 4)]),
        case('pytorch-multihead', 'two heads, W_O, boolean mask and key padding; also checked against nn.MultiheadAttention',
             cross_check='nn.MultiheadAttention',
             options=opts(heads=2, gradients=True), X=r(5, 6), WQ=[r(6, 6)], WK=[r(6, 6)], WV=[r(6, 6)], WO=r(6, 6),
             mask={'kind': 'boolean', 'value': mha_mask.astype(int).tolist()}, padding=[[0, 0, 0, 0, 1]]),
        case('gqa', 'grouped-query attention: 4 query heads share 2 KV heads, W_O, gradients',
             options=opts(heads=4, kvHeads=2, gradients=True), X=r(5, 8),
             WQ=[r(8, 8)], WK=[r(8, 4)], WV=[r(8, 4)], WO=r(8, 8)),
        case('gqa-mqa-causal', 'multi-query attention (kv_heads = 1) with a causal mask, gradients',
             options=opts(heads=3, kvHeads=1, causal='top-left', gradients=True), X=r(4, 6),
             WQ=[r(6, 6)], WK=[r(6, 2)], WV=[r(6, 2)]),
        case('cross-attention-context', 'cross-attention: Q from X (3 rows), K/V from a context (6 rows), gradients',
             options=opts(heads=2, gradients=True), X=r(3, 4), context=r(6, 5),
             WQ=[r(4, 4)], WK=[r(5, 4)], WV=[r(5, 4)], WO=r(4, 4)),
        case('precomputed-qkv', 'Q, K, V given directly with Lq = 2 != Lk = 4, gradients',
             options=opts(gradients=True), Q=r(2, 3), K=r(4, 3), V=r(4, 2)),
        case('positional-encoding', 'X + PE, residual',
             options=opts(residual=True, gradients=True), X=r(4, 4), PE=r(4, 4, 0.5),
             WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)], WO=r(2, 4)),
        case('sinusoidal-pe', 'X + sinusoidal PE (d_model 5: odd last column), gradients',
             options=opts(sinusoidalPE=True, gradients=True), X=r(6, 5), WQ=[r(5, 3)], WK=[r(5, 3)], WV=[r(5, 3)]),
        case('identity-projections', 'X alone: Q = K = V = X (two heads split X column-wise), gradients',
             options=opts(heads=2, gradients=True), X=r(4, 4)),
        case('score-general', 'Luong general score q W_a k^T, gradients',
             options=opts(score='general', gradients=True), X=r(4, 5), WQ=[r(5, 3)], WK=[r(5, 2)], WV=[r(5, 2)],
             Wa=r(3, 2)),
        case('score-additive', 'Bahdanau additive score v_a^T tanh(q W_1 + k W_2), gradients',
             options=opts(score='additive', gradients=True), X=r(4, 4), context=r(5, 3),
             WQ=[r(4, 3)], WK=[r(3, 2)], WV=[r(3, 2)], W1=r(3, 4), W2=r(2, 4), va=r(4, 1)),
        case('score-gaussian', 'Gaussian score -|q - k|^2 / 2 sigma^2 with sigma = 1.5, gradients',
             options=opts(score='gaussian', sigma=1.5, gradients=True), X=r(5, 4),
             WQ=[r(4, 3)], WK=[r(4, 3)], WV=[r(4, 2)]),
        case('upstream-gradient', 'a given upstream gradient dO instead of ones',
             options=opts(heads=2, gradients=True), X=r(3, 4), WQ=[r(4, 4)], WK=[r(4, 4)], WV=[r(4, 4)],
             WO=r(4, 3), dO=r(3, 3)),
        case('many-rows', '70 queries (two row blocks of 64), causal, gradients',
             options=opts(causal='top-left', gradients=True), X=r(70, 8),
             WQ=[r(8, 4, 0.5)], WK=[r(8, 4, 0.5)], WV=[r(8, 4)]),
        case('float32-multi-head', 'float32: two heads, W_O, additive mask, residual, gradients (torch.float32)',
             options=opts(heads=2, dtype='float32', residual=True, gradients=True), X=r(4, 4),
             WQ=[r(4, 4)], WK=[r(4, 4)], WV=[r(4, 4)], WO=r(4, 4),
             mask={'kind': 'additive', 'value': [[0, 0, NEG_INF, 0], [0, 0, 0, 0], [NEG_INF, 0, 0, -1], [0, 0, 0, 0]]}),
        case('float32-gqa-causal-additive-score', 'float32: GQA, causal, Bahdanau score (torch.float32)',
             options=opts(heads=2, kvHeads=1, causal='top-left', score='additive', dtype='float32', gradients=True),
             X=r(4, 4), WQ=[r(4, 4)], WK=[r(4, 2)], WV=[r(4, 2)], W1=r(2, 3), W2=r(2, 3), va=r(1, 3)),
        # ---- variants (appended: the cases above keep their random numbers)
        case('rope-half-gqa', 'Llama-style: RoPE (rotate half, base 10000), 4 query heads on 2 KV heads, causal, W_O, gradients',
             options=opts(heads=4, kvHeads=2, rope=10000, causal='top-left', gradients=True), X=r(6, 8),
             WQ=[r(8, 16)], WK=[r(8, 8)], WV=[r(8, 8)], WO=r(16, 8)),
        case('rope-interleaved-cross', 'RoPE interleaved pairs, base 500, cross-attention Lq = 3 < Lk = 5 (queries at 2..4), gradients',
             options=opts(rope=500, ropeLayout='interleaved', gradients=True), X=r(3, 4), context=r(5, 4),
             WQ=[r(4, 4, 2)], WK=[r(4, 4, 2)], WV=[r(4, 2)]),
        case('rope-long-positions', 'RoPE on precomputed Q, K, V with 40 positions (angles past 2 pi), bottom-right causal',
             options=opts(rope=10000, causal='bottom-right', gradients=True), Q=r(40, 6), K=r(40, 6), V=r(40, 2)),
        case('temperature-softcap', 'Gemma-style: softcap 1.5 after temperature 0.7 (large scores, so tanh bites), two heads, gradients',
             options=opts(heads=2, temperature=0.7, softcap=1.5, gradients=True), X=r(5, 4, 2),
             WQ=[r(4, 4, 2)], WK=[r(4, 4, 2)], WV=[r(4, 4)], WO=r(4, 4)),
        case('alibi-four-heads', 'ALiBi with the paper\'s slopes 2^(-8h/4), four heads, causal, gradients',
             options=opts(heads=4, alibi=True, causal='top-left', gradients=True), X=r(6, 8),
             WQ=[r(8, 8)], WK=[r(8, 8)], WV=[r(8, 8)]),
        case('alibi-three-heads', 'ALiBi with three heads: the paper\'s rule for a head count that is not a power of two',
             options=opts(heads=3, alibi=True, gradients=True), X=r(5, 6), WQ=[r(6, 6)], WK=[r(6, 6)], WV=[r(6, 6)]),
        case('alibi-given-slopes', 'ALiBi with slopes given by an alibi_slopes row, cross-attention (query positions offset by Lk - Lq)',
             options=opts(heads=2, alibi=True, gradients=True), X=r(2, 4), context=r(5, 4),
             WQ=[r(4, 4)], WK=[r(4, 4)], WV=[r(4, 4)], alibiSlopes=[[0.75, 0.1]]),
        case('window-symmetric', 'sliding window W = 2 without causal: |i - j| < 2',
             options=opts(window=2, gradients=True), X=r(6, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)]),
        case('window-causal-sinks', 'Mistral-style causal window W = 3 with one attention sink (StreamingLLM), gradients',
             options=opts(window=3, sinks=1, causal='top-left', gradients=True), X=r(8, 4),
             WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)]),
        case('segments-causal', 'document mask from segment ids [0 0 0 1 1 2] (packed sequences), causal, gradients',
             options=opts(causal='top-left', gradients=True), X=r(6, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)],
             segments=[[0, 0, 0, 1, 1, 2]]),
        case('prefix-lm', 'prefix-LM: the first 3 positions visible to every query, causal after, with key padding',
             options=opts(prefix=3, gradients=True), X=r(6, 4), WQ=[r(4, 2)], WK=[r(4, 2)], WV=[r(4, 2)],
             padding=[[0, 0, 0, 0, 0, 1]]),
        case('decode-rope-alibi', 'one KV-cache decode step: the last query with RoPE and ALiBi, GQA, causal (equals the full run\'s last row)',
             options=opts(heads=2, kvHeads=1, rope=10000, alibi=True, causal='top-left', decode=True, residual=True), X=r(5, 4),
             WQ=[r(4, 4)], WK=[r(4, 2)], WV=[r(4, 2)], WO=r(4, 4)),
        case('decode-window-mask', 'decode with a causal window, a boolean mask and precomputed Q, K, V',
             options=opts(window=2, causal='bottom-right', decode=True), Q=r(4, 2), K=r(4, 2), V=r(4, 3),
             mask={'kind': 'boolean', 'value': [[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 0, 1, 1]]}),
        case('variants-together', 'everything at once: RoPE, temperature, softcap, ALiBi, causal window with sinks, padding, GQA, gradients',
             options=opts(heads=2, kvHeads=1, rope=10000, temperature=1.3, softcap=2.0, alibi=True, window=3, sinks=1,
                          causal='top-left', gradients=True), X=r(7, 6, 1.5),
             WQ=[r(6, 4)], WK=[r(6, 2)], WV=[r(6, 2)], WO=r(4, 6), padding=[[0, 0, 0, 0, 0, 0, 1]]),
        case('float32-variants', 'float32: RoPE interleaved, softcap, ALiBi, segments, causal (torch.float32)',
             options=opts(heads=2, rope=10000, ropeLayout='interleaved', softcap=3.0, alibi=True, causal='top-left',
                          dtype='float32', gradients=True), X=r(5, 4),
             WQ=[r(4, 4)], WK=[r(4, 4)], WV=[r(4, 4)], segments=[[1, 1, 2, 2, 2]]),
    ]


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    for old in os.listdir(OUT_DIR):
        if old.endswith('.json'):
            os.remove(os.path.join(OUT_DIR, old))
    for case in cases():
        fixture = build(case)
        with open(os.path.join(OUT_DIR, case['name'] + '.json'), 'w') as f:
            json.dump(fixture, f, separators=(',', ':'), allow_nan=False)
            f.write('\n')
    print(f'{len(cases())} fixtures written to {os.path.relpath(OUT_DIR)}', file=sys.stderr)


if __name__ == '__main__':
    torch.set_num_threads(1)
    main()
