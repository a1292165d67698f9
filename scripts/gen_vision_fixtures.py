#!/usr/bin/python3
"""Random-weight vision transformer folders, test pictures, and float64 PyTorch references of their forward pass.

    /usr/bin/python3 scripts/gen_vision_fixtures.py OUTDIR          # the fixture set (a few seconds)
    /usr/bin/python3 scripts/gen_vision_fixtures.py OUTDIR --check  # and every reference against a second route (below)
    /usr/bin/python3 scripts/gen_vision_fixtures.py OUTDIR --bench  # ViT-B/16 and DINOv2-S/14 shapes in OUTDIR/bench
    /usr/bin/python3 scripts/gen_vision_fixtures.py FOLDER --time N  # PyTorch's float32 forward of FOLDER on its picture.png, N times (bench/vision.ts)

Each folder holds what a Hub checkpoint holds — config.json, preprocessor_config.json, model.safetensors
under the published tensor names of transformers' classes (ViTForImageClassification, DeiT with its
teacher, Dinov2Model, Dinov2WithRegistersForImageClassification, CLIPModel, SiglipVisionModel) — and
pictures with a reference-<picture>.json each: the pixel_values PIL's preprocessing gives (convert to
RGB, resize with PIL's filter, center crop, rescale, normalise, as transformers' image processors do),
the tokens, the patch grid, and what a float64 forward of the stored weights gives (attentions
[layer][head][query][key], hidden_last after the final norm, logits_last when the folder classifies).
The forwards are written from transformers' modeling_{vit,deit,dinov2,dinov2_with_registers,clip,siglip}.py
(no transformers here). Needs Debian's python3-torch and python3-pil. Seeded: the same command writes
the same files.

--check recomputes every reference from the files as written (config, model.safetensors, the reference's own
pixel_values) by a second route that shares no function with forward(): the patch embedding as an unfold of the
pixels into patch rows times the flattened kernel (not conv2d), the sequence assembled by slot assignment (class,
distillation, register tokens), DINOv2's position interpolation as explicit separable bicubic matrices (PyTorch's
cubic convolution, A = -0.75, and its antialiased PIL-style filter, A = -0.5, written out), the blocks from
nn.LayerNorm and nn.MultiheadAttention, layer scale as a diagonal matrix, torch's F.gelu (erf / tanh) or quick_gelu
as x / (1 + exp(-1.702 x)), and the heads (DeiT's two averaged, DINOv2's class token beside the patch mean) as
matrix products. It prints `NAME: reference vs torch modules, largest difference X` per folder.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from safetensors_file import write_safetensors  # noqa: E402

torch.set_default_dtype(torch.float64)

IMAGENET_DEFAULT = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
STANDARD = ([0.5, 0.5, 0.5], [0.5, 0.5, 0.5])
CLIP_NORM = ([0.48145466, 0.4578275, 0.40821073], [0.26862954, 0.26130258, 0.27577711])


# ---------------------------------------------------------------- pictures

def picture(width, height, seed):
    """A smooth colour field with edges and noise: resizing it exercises every tap of the filters."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width]
    r = 128 + 100 * np.sin(xx / 3.0 + seed)
    g = 255 * (yy / max(1, height - 1))
    b = np.where((xx // 5 + yy // 7) % 2 == 0, 40, 220)
    img = np.stack([r, g, b], -1) + rng.integers(-30, 31, (height, width, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def save_picture(folder, name, width, height, seed, mode):
    rgb = picture(width, height, seed)
    im = Image.fromarray(rgb, 'RGB')
    path = os.path.join(folder, name)
    if mode == 'RGB':
        im.save(path)
    elif mode == 'RGBA':
        alpha = np.random.default_rng(seed + 1).integers(0, 256, (height, width), dtype=np.uint8)
        Image.fromarray(np.dstack([rgb, alpha]), 'RGBA').save(path)
    elif mode == 'L':
        im.convert('L').save(path)
    elif mode == 'P':
        im.convert('P', palette=Image.ADAPTIVE, colors=24).save(path)
    elif mode == 'JPEG':
        im.save(path, quality=92, subsampling=0)  # 4:4:4: see JPEG_TOLERANCE in test/unit/vision/forward.test.ts
    elif mode == 'JPEG420':
        im.save(path, quality=92, subsampling=2)  # 4:2:0, most cameras' default: libjpeg's fancy chroma upsampling
    elif mode == 'CMYK':
        im.convert('CMYK').save(path, quality=92, subsampling=0)  # PIL writes Adobe's inverted CMYK; convert('RGB') reads it back
    return path


# ---------------------------------------------------------------- preprocessing, as transformers' slow image processors do with PIL

def preprocess(path, proc):
    im = Image.open(path).convert('RGB')
    if proc.get('do_resize', True):
        size = proc['size']
        if 'shortest_edge' in size:
            w, h = im.size
            short, long = (w, h) if w <= h else (h, w)
            new_long = int(size['shortest_edge'] * long / short)
            target = (size['shortest_edge'], new_long) if w <= h else (new_long, size['shortest_edge'])
        else:
            target = (size['width'], size['height'])
        if target != im.size:
            im = im.resize(target, resample=proc['resample'])
    arr = np.asarray(im)
    if proc.get('do_center_crop', False):
        # transformers.image_transforms.center_crop: an axis shorter than the crop is padded with
        # zeros, the picture placed at ceil((crop - size) / 2); then the crop at floor((size - crop) / 2).
        ch, cw = proc['crop_size']['height'], proc['crop_size']['width']
        h, w = arr.shape[:2]
        new_h, new_w = max(ch, h), max(cw, w)
        pad_top, pad_left = math.ceil((new_h - h) / 2), math.ceil((new_w - w) / 2)
        padded = np.zeros((new_h, new_w, 3), dtype=arr.dtype)
        padded[pad_top:pad_top + h, pad_left:pad_left + w] = arr
        top, left = (h - ch) // 2 + pad_top, (w - cw) // 2 + pad_left
        arr = padded[max(0, top):min(new_h, top + ch), max(0, left):min(new_w, left + cw)]
    x = arr.astype(np.float64) * proc.get('rescale_factor', 1 / 255)
    x = (x - np.array(proc['image_mean'])) / np.array(proc['image_std'])
    return torch.tensor(x).permute(2, 0, 1).unsqueeze(0).contiguous()


# ---------------------------------------------------------------- weights

class Init:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)
        self.tensors = {}

    def normal(self, name, shape, std, mean=0.0):
        self.tensors[name] = torch.randn(*shape, generator=self.g) * std + mean
        return self.tensors[name]

    def linear(self, name, out_f, in_f, bias=True):
        self.normal(name + '.weight', (out_f, in_f), 1 / math.sqrt(in_f))
        if bias:
            self.normal(name + '.bias', (out_f,), 0.1)

    def norm(self, name, dim):
        self.normal(name + '.weight', (dim,), 0.1, 1.0)
        self.normal(name + '.bias', (dim,), 0.1)


def vision_weights(kind, cfg, prefix, seed, labels, registers=0):
    C, L, I, p, ch = cfg['hidden_size'], cfg['num_hidden_layers'], cfg['intermediate_size'], cfg['patch_size'], 3
    side = cfg['image_size'] // p
    w = Init(seed)
    tower = kind in ('clip', 'siglip')
    e = prefix + 'embeddings.'
    if tower:
        w.normal(e + 'patch_embedding.weight', (C, ch, p, p), 1 / math.sqrt(ch * p * p))
        if kind == 'siglip':
            w.normal(e + 'patch_embedding.bias', (C,), 0.1)
        else:
            w.normal(e + 'class_embedding', (C,), 1.0)
        w.normal(e + 'position_embedding.weight', (side * side + (1 if kind == 'clip' else 0), C), 0.5)
        if kind == 'clip':
            w.norm(prefix + 'pre_layrnorm', C)
    else:
        w.normal(e + 'cls_token', (1, 1, C), 1.0)
        extra = 1
        if kind == 'deit':
            w.normal(e + 'distillation_token', (1, 1, C), 1.0)
            extra = 2
        if kind.startswith('dinov2'):
            w.tensors[e + 'mask_token'] = torch.zeros(1, C)
        if registers:
            w.normal(e + 'register_tokens', (1, registers, C), 1.0)
        w.normal(e + 'position_embeddings', (1, side * side + extra, C), 0.5)
        w.normal(e + 'patch_embeddings.projection.weight', (C, ch, p, p), 1 / math.sqrt(ch * p * p))
        w.normal(e + 'patch_embeddings.projection.bias', (C,), 0.1)
    for i in range(L):
        if tower:
            at = f'{prefix}encoder.layers.{i}.'
            w.norm(at + 'layer_norm1', C)
            for name in ('q_proj', 'k_proj', 'v_proj', 'out_proj'):
                w.linear(at + 'self_attn.' + name, C, C)
            w.norm(at + 'layer_norm2', C)
            w.linear(at + 'mlp.fc1', I, C)
            w.linear(at + 'mlp.fc2', C, I)
        else:
            at = f'{prefix}encoder.layer.{i}.'
            dinov2 = kind.startswith('dinov2')
            w.norm(at + ('norm1' if dinov2 else 'layernorm_before'), C)
            for name in ('query', 'key', 'value'):
                w.linear(at + 'attention.attention.' + name, C, C)
            w.linear(at + 'attention.output.dense', C, C)
            w.norm(at + ('norm2' if dinov2 else 'layernorm_after'), C)
            if dinov2:
                w.normal(at + 'layer_scale1.lambda1', (C,), 0.3, 1.0)
                w.normal(at + 'layer_scale2.lambda1', (C,), 0.3, 1.0)
                w.linear(at + 'mlp.fc1', I, C)
                w.linear(at + 'mlp.fc2', C, I)
            else:
                w.linear(at + 'intermediate.dense', I, C)
                w.linear(at + 'output.dense', C, I)
    w.norm(prefix + ('post_layernorm' if tower else 'layernorm'), C)
    if labels:
        if kind == 'deit':
            w.linear('cls_classifier', labels, C)
            w.linear('distillation_classifier', labels, C)
        elif kind.startswith('dinov2'):
            w.linear('classifier', labels, 2 * C)
        else:
            w.linear('classifier', labels, C)
    return w.tensors


# ---------------------------------------------------------------- the float64 forward, from the modeling files

def layer_norm(x, w, name, eps):
    return F.layer_norm(x, (x.shape[-1],), w[name + '.weight'], w[name + '.bias'], eps)


def lin(x, w, name):
    return F.linear(x, w[name + '.weight'], w.get(name + '.bias'))


ACTS = {
    'gelu': lambda x: 0.5 * x * (1 + torch.erf(x / math.sqrt(2))),
    'gelu_pytorch_tanh': lambda x: 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
    'quick_gelu': lambda x: x * torch.sigmoid(1.702 * x),
}


def embed(kind, cfg, w, prefix, pixels, registers):
    C, p = cfg['hidden_size'], cfg['patch_size']
    side = cfg['image_size'] // p
    e = prefix + 'embeddings.'
    tower = kind in ('clip', 'siglip')
    conv = e + ('patch_embedding' if tower else 'patch_embeddings.projection')
    patches = F.conv2d(pixels, w[conv + '.weight'], w.get(conv + '.bias'), stride=p)
    rows, cols = patches.shape[-2:]
    x = patches.flatten(2).transpose(1, 2)
    if kind == 'siglip':
        return x + w[e + 'position_embedding.weight'].unsqueeze(0), (rows, cols)
    if kind == 'clip':
        x = torch.cat([w[e + 'class_embedding'].expand(1, 1, C), x], 1) + w[e + 'position_embedding.weight'].unsqueeze(0)
        return layer_norm(x, w, prefix + 'pre_layrnorm', cfg['layer_norm_eps']), (rows, cols)
    pos = w[e + 'position_embeddings']
    if kind == 'deit':
        return torch.cat([w[e + 'cls_token'], w[e + 'distillation_token'], x], 1) + pos, (rows, cols)
    x = torch.cat([w[e + 'cls_token'], x], 1)
    if kind.startswith('dinov2'):
        height, width = pixels.shape[-2:]
        if not (x.shape[1] - 1 == pos.shape[1] - 1 and height == width):
            grid = pos[:, 1:].reshape(1, side, side, C).permute(0, 3, 1, 2)
            grid = F.interpolate(grid, size=(int(rows), int(cols)), mode='bicubic', align_corners=False, antialias=(kind == 'dinov2_with_registers'))
            pos = torch.cat([pos[:, :1], grid.permute(0, 2, 3, 1).reshape(1, -1, C)], 1)
    x = x + pos
    if registers:
        x = torch.cat([x[:, :1], w[e + 'register_tokens'], x[:, 1:]], 1)
    return x, (rows, cols)


def forward(kind, cfg, w, prefix, pixels, registers=0):
    C, H = cfg['hidden_size'], cfg['num_attention_heads']
    d = C // H
    eps = cfg['layer_norm_eps']
    act = ACTS[cfg['hidden_act']]
    x, grid = embed(kind, cfg, w, prefix, pixels, registers)
    n = x.shape[1]
    tower = kind in ('clip', 'siglip')
    dinov2 = kind.startswith('dinov2')
    attentions = []
    for i in range(cfg['num_hidden_layers']):
        at = f'{prefix}encoder.layers.{i}.' if tower else f'{prefix}encoder.layer.{i}.'
        h = layer_norm(x, w, at + ('layer_norm1' if tower else 'norm1' if dinov2 else 'layernorm_before'), eps)
        names = ['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj'] if tower else ['attention.attention.query', 'attention.attention.key', 'attention.attention.value']
        q, k, v = (lin(h, w, at + name).view(1, n, H, d).transpose(1, 2) for name in names)
        probs = torch.softmax(q @ k.transpose(-1, -2) * d ** -0.5, dim=-1)
        attentions.append(probs[0])
        o = lin((probs @ v).transpose(1, 2).reshape(1, n, C), w, at + ('self_attn.out_proj' if tower else 'attention.output.dense'))
        if dinov2:
            o = o * w[at + 'layer_scale1.lambda1']
        x = x + o
        h = layer_norm(x, w, at + ('layer_norm2' if tower else 'norm2' if dinov2 else 'layernorm_after'), eps)
        if tower or dinov2:
            m = lin(act(lin(h, w, at + 'mlp.fc1')), w, at + 'mlp.fc2')
        else:
            m = lin(act(lin(h, w, at + 'intermediate.dense')), w, at + 'output.dense')
        if dinov2:
            m = m * w[at + 'layer_scale2.lambda1']
        x = x + m
    final = layer_norm(x, w, prefix + ('post_layernorm' if tower else 'layernorm'), eps)[0]
    logits = None
    if 'classifier.weight' in w:
        if dinov2:
            logits = lin(torch.cat([final[0], final[1 + registers:].mean(0)]), w, 'classifier')
        else:
            logits = lin(final[0], w, 'classifier')
    elif 'cls_classifier.weight' in w:
        logits = (lin(final[0], w, 'cls_classifier') + lin(final[1], w, 'distillation_classifier')) / 2
    return torch.stack(attentions), final, logits, grid


# ---------------------------------------------------------------- folders

def write_json(folder, name, value):
    with open(os.path.join(folder, name), 'w', encoding='utf-8') as f:
        json.dump(value, f, indent=1)


def tokens_of(kind, grid, registers):
    prefix = [] if kind == 'siglip' else ['[CLS]'] + (['[DIST]'] if kind == 'deit' else []) + [f'[REG{i}]' for i in range(registers)]
    return prefix + [f'({r},{c})' for r in range(grid[0]) for c in range(grid[1])]


def make_folder(out, name, kind, model_type, architecture, cfg, prefix, proc, pictures, seed, labels=0, registers=0, nest=None, extra_tensors=None, references=True):
    folder = os.path.join(out, name)
    os.makedirs(folder, exist_ok=True)
    config = {'model_type': model_type, 'architectures': [architecture], **cfg}
    if registers:
        config['num_register_tokens'] = registers
    if labels:
        config['id2label'] = {str(i): f'class {chr(65 + i)}' for i in range(labels)}
        config['label2id'] = {f'class {chr(65 + i)}': i for i in range(labels)}
    if nest:  # CLIPModel: the vision tower's settings under vision_config
        config = {'model_type': model_type, 'architectures': [architecture], 'vision_config': cfg, 'text_config': {'hidden_size': 8}, 'projection_dim': 8}
    write_json(folder, 'config.json', config)
    write_json(folder, 'preprocessor_config.json', proc)
    tensors = vision_weights(kind, cfg, prefix, seed, labels, registers)
    with open(os.path.join(folder, 'model.safetensors'), 'wb') as f:
        stored = {k: v.to(torch.float32) for k, v in {**tensors, **(extra_tensors or {})}.items()}
        write_safetensors(f, stored, {'format': 'pt'})
    w = {k: v.to(torch.float32).to(torch.float64) for k, v in tensors.items()}
    if not references:
        return folder
    for picture_name, width, height, mode in pictures:
        path = save_picture(folder, picture_name, width, height, seed + width, mode)
        pixels = preprocess(path, proc)
        attentions, final, logits, grid = forward(kind, cfg, w, prefix, pixels, registers)
        write_json(folder, f'reference-{os.path.splitext(picture_name)[0]}.json', {
            'picture': picture_name,
            'mode': mode,
            'tokens': tokens_of(kind, grid, registers),
            'patch_grid': [int(grid[0]), int(grid[1])],
            'pixel_values': pixels.flatten().tolist(),
            # A JPEG as PIL (libjpeg) decodes it and convert('RGB') makes it RGB, 8-bit, row-major: what our decoder is compared with.
            **({'decoded_rgb': np.asarray(Image.open(path).convert('RGB')).flatten().tolist()} if mode in ('JPEG', 'JPEG420', 'CMYK') else {}),
            'pixel_shape': list(pixels.shape[1:]),
            'attentions': attentions.tolist(),
            'hidden_last': final[-1].tolist(),
            'logits_last': None if logits is None else logits.tolist(),
            'top5': None if logits is None else torch.topk(torch.softmax(logits, -1), min(5, logits.numel())).indices.tolist(),
        })
    return folder


def tiny(**fields):
    base = {'hidden_size': 16, 'num_hidden_layers': 2, 'num_attention_heads': 2, 'intermediate_size': 32, 'image_size': 32, 'patch_size': 8, 'num_channels': 3}
    base.update(fields)
    return base


def processor(kind, size, resample, mean_std, crop=None):
    proc = {'image_processor_type': kind, 'do_resize': True, 'size': size, 'resample': resample, 'do_rescale': True, 'rescale_factor': 1 / 255,
            'do_normalize': True, 'image_mean': mean_std[0], 'image_std': mean_std[1]}
    if crop:
        proc.update({'do_center_crop': True, 'crop_size': crop})
    if kind != 'ViTImageProcessor':
        proc['do_convert_rgb'] = True
    return proc


def fixtures(out):
    # ViT classifier: a picture at the model's size (no resize) and an RGBA one resized bilinear.
    make_folder(out, 'vit-classifier', 'vit', 'vit', 'ViTForImageClassification', tiny(hidden_act='gelu', layer_norm_eps=1e-12, qkv_bias=True), 'vit.',
                processor('ViTImageProcessor', {'height': 32, 'width': 32}, 2, STANDARD),
                [('exact.png', 32, 32, 'RGB'), ('rgba.png', 45, 37, 'RGBA')], seed=11, labels=7)
    # DeiT with its teacher: greyscale picture, bicubic resize to 40×40, center crop 32.
    make_folder(out, 'deit-teacher', 'deit', 'deit', 'DeiTForImageClassificationWithTeacher', tiny(hidden_act='gelu', layer_norm_eps=1e-12, qkv_bias=True), 'deit.',
                processor('DeiTImageProcessor', {'height': 40, 'width': 40}, 3, IMAGENET_DEFAULT, {'height': 32, 'width': 32}),
                [('grey.png', 50, 44, 'L')], seed=12, labels=6)
    # DINOv2 (Dinov2Model, no prefix): palette picture, shortest edge 48, crop 40 → a 5×5 grid from the trained 4×4 (bicubic).
    make_folder(out, 'dinov2', 'dinov2', 'dinov2', 'Dinov2Model', tiny(hidden_act='gelu', layer_norm_eps=1e-6, mlp_ratio=2, qkv_bias=True, layerscale_value=1.0), '',
                processor('BitImageProcessor', {'shortest_edge': 48}, 3, IMAGENET_DEFAULT, {'height': 40, 'width': 40}),
                [('palette.png', 60, 50, 'P'), ('exact.png', 32, 32, 'RGB')], seed=13)
    # DINOv2 with registers, classifier: trained on 5×5 patches, run on 3×4 (antialiased bicubic, downscaling).
    make_folder(out, 'dinov2-registers', 'dinov2_with_registers', 'dinov2_with_registers', 'Dinov2WithRegistersForImageClassification',
                tiny(hidden_act='gelu', layer_norm_eps=1e-6, mlp_ratio=2, qkv_bias=True, layerscale_value=1.0, image_size=40), 'dinov2_with_registers.',
                processor('BitImageProcessor', {'shortest_edge': 26}, 3, IMAGENET_DEFAULT, {'height': 24, 'width': 32}),
                [('rgb.png', 70, 52, 'RGB'), ('tall.png', 20, 60, 'RGB')], seed=14, labels=5, registers=4)  # tall: 26 wide after resize, padded to the 32-wide crop
    # CLIPModel: the vision tower under vision_model. (a text tower tensor beside it), quick_gelu, pre_layrnorm; a PNG and a JPEG.
    make_folder(out, 'clip', 'clip', 'clip', 'CLIPModel', tiny(hidden_act='quick_gelu', layer_norm_eps=1e-5), 'vision_model.',
                processor('CLIPImageProcessor', {'shortest_edge': 32}, 3, CLIP_NORM, {'height': 32, 'width': 32}),
                [('rgb.png', 48, 40, 'RGB'), ('photo.jpg', 48, 40, 'JPEG'), ('photo420.jpg', 48, 40, 'JPEG420'), ('cmyk.jpg', 48, 40, 'CMYK')], seed=15, nest=True,
                extra_tensors={'text_model.embeddings.token_embedding.weight': torch.zeros(4, 8), 'logit_scale': torch.tensor(2.6592)})
    # SigLIP's vision tower: no class token; RGBA picture resized bicubic.
    make_folder(out, 'siglip', 'siglip', 'siglip_vision_model', 'SiglipVisionModel', tiny(hidden_act='gelu_pytorch_tanh', layer_norm_eps=1e-6), 'vision_model.',
                processor('SiglipImageProcessor', {'height': 32, 'width': 32}, 3, STANDARD),
                [('rgba.png', 41, 29, 'RGBA')], seed=16)


def bench(out):
    """ViT-B/16 (86M, 224², 197 tokens) and DINOv2-S/14 (22M, run at 518²: 1370 tokens), random weights, no references."""
    root = os.path.join(out, 'bench')
    vit = {'hidden_size': 768, 'num_hidden_layers': 12, 'num_attention_heads': 12, 'intermediate_size': 3072, 'image_size': 224, 'patch_size': 16,
           'num_channels': 3, 'hidden_act': 'gelu', 'layer_norm_eps': 1e-12, 'qkv_bias': True}
    make_folder(root, 'vit-b16', 'vit', 'vit', 'ViTModel', vit, '', processor('ViTImageProcessor', {'height': 224, 'width': 224}, 2, STANDARD), [], seed=21, references=False)
    dino = {'hidden_size': 384, 'num_hidden_layers': 12, 'num_attention_heads': 6, 'intermediate_size': 1536, 'mlp_ratio': 4, 'image_size': 518, 'patch_size': 14,
            'num_channels': 3, 'hidden_act': 'gelu', 'layer_norm_eps': 1e-6, 'qkv_bias': True, 'layerscale_value': 1.0}
    make_folder(root, 'dinov2-s14', 'dinov2', 'dinov2', 'Dinov2Model', dino, '', processor('BitImageProcessor', {'shortest_edge': 518}, 3, IMAGENET_DEFAULT, {'height': 518, 'width': 518}), [], seed=22, references=False)
    for name, size in (('vit-b16', 224), ('dinov2-s14', 518)):
        save_picture(os.path.join(root, name), 'picture.png', size + 76, size + 20, 3, 'RGB')


def read_safetensors(path):
    """{name: float32 tensor} of a float32 safetensors file (the bench folders' only dtype)."""
    with open(path, 'rb') as f:
        data = f.read()
    length = int.from_bytes(data[:8], 'little')
    header = json.loads(data[8:8 + length])
    header.pop('__metadata__', None)
    base = 8 + length
    return {name: torch.from_numpy(np.frombuffer(data, dtype='<f4', count=math.prod(e['shape']) if e['shape'] else 1, offset=base + e['data_offsets'][0]).reshape(e['shape']).copy())
            for name, e in header.items() if e['dtype'] == 'F32'}


def time_forward(folder, rounds):
    """PyTorch's forward in float32 (what transformers runs by default), each round timed; prints JSON."""
    import time
    torch.set_default_dtype(torch.float32)
    torch.set_num_threads(os.cpu_count() or 1)  # its OpenMP saw one core here by itself
    cfg = json.load(open(os.path.join(folder, 'config.json')))
    proc = json.load(open(os.path.join(folder, 'preprocessor_config.json')))
    started = time.perf_counter()
    w = read_safetensors(os.path.join(folder, 'model.safetensors'))
    load_ms = (time.perf_counter() - started) * 1000
    pixels = preprocess(os.path.join(folder, 'picture.png'), proc).to(torch.float32)
    times = []
    with torch.no_grad():
        for _ in range(rounds):
            started = time.perf_counter()
            _, final, _, grid = forward(cfg['model_type'], cfg, w, '', pixels)
            times.append((time.perf_counter() - started) * 1000)
    print(json.dumps({'load_ms': load_ms, 'forward_ms': times, 'tokens': int(final.shape[0]), 'hidden_last': final[-1][:4].tolist(), 'threads': torch.get_num_threads()}))


# ---------------------------------------------------------------- --check: a second route of every reference

def patch_rows(pixels, p):
    """[rows·cols, channels·p·p]: each patch's pixels in the kernel's (channel, y, x) order, patches row-major."""
    _, ch, height, width = pixels.shape
    rows, cols = height // p, width // p
    x = pixels[0, :, :rows * p, :cols * p].reshape(ch, rows, p, cols, p)
    return x.permute(1, 3, 0, 2, 4).reshape(rows * cols, ch * p * p), (rows, cols)


def cubic_matrix(size_in, size_out, antialias):
    """[size_out, size_in]: F.interpolate's bicubic (align_corners=False) along one axis, as a matrix. Without
    antialias, PyTorch's cubic convolution (A = -0.75) on the 4 taps around (i + 0.5)·in/out - 0.5, borders clamped;
    with it, the PIL-style filter (A = -0.5) stretched by the scale when downscaling, its taps normalised."""
    def kernel(t, a):
        t = abs(t)
        if t <= 1:
            return ((a + 2) * t - (a + 3)) * t * t + 1
        if t < 2:
            return (((t - 5) * t + 8) * t - 4) * a
        return 0.0
    scale = size_in / size_out
    m = torch.zeros(size_out, size_in)
    for i in range(size_out):
        if not antialias:
            source = (i + 0.5) * scale - 0.5
            base = math.floor(source)
            for tap in range(-1, 3):
                m[i, min(max(base + tap, 0), size_in - 1)] += kernel(source - (base + tap), -0.75)
            continue
        center, stretch = scale * (i + 0.5), max(scale, 1.0)
        low, high = max(int(center - 2 * stretch + 0.5), 0), min(int(center + 2 * stretch + 0.5), size_in)
        taps = [kernel((j - center + 0.5) / stretch, -0.5) for j in range(low, high)]
        for j, weight in zip(range(low, high), taps):
            m[i, j] = weight / sum(taps)
    return m


def block_modules(w, at, names, C, H, eps):
    """nn.LayerNorm ×2 and an nn.MultiheadAttention holding one pre-LN block's weights."""
    norm1, q, k, v, out, norm2 = names
    ln1, ln2 = torch.nn.LayerNorm(C, eps=eps), torch.nn.LayerNorm(C, eps=eps)
    for module, name in ((ln1, norm1), (ln2, norm2)):
        module.weight.data, module.bias.data = w[at + name + '.weight'], w[at + name + '.bias']
    mha = torch.nn.MultiheadAttention(C, H, batch_first=True)
    mha.in_proj_weight.data = torch.cat([w[at + t + '.weight'] for t in (q, k, v)])
    mha.in_proj_bias.data = torch.cat([w[at + t + '.bias'] for t in (q, k, v)])
    mha.out_proj.weight.data, mha.out_proj.bias.data = w[at + out + '.weight'], w[at + out + '.bias']
    return ln1, mha, ln2


SECOND_ACTS = {
    'gelu': lambda x: F.gelu(x),
    'gelu_pytorch_tanh': lambda x: F.gelu(x, approximate='tanh'),
    'quick_gelu': lambda x: x / (1 + torch.exp(-1.702 * x)),
}


def forward_by_modules(config, w, pixel_values, pixel_shape):
    """The second route: attentions [layer][head][q][k], the last token's final hidden state, the logits (or None)."""
    kind = config['model_type']
    cfg = config.get('vision_config', config)
    C, H, p, eps = cfg['hidden_size'], cfg['num_attention_heads'], cfg['patch_size'], cfg['layer_norm_eps']
    prefix = next(k for k in w if '.0.' in k and 'encoder.layer' in k).split('encoder.layer')[0]
    e = prefix + 'embeddings.'
    pixels = torch.tensor(pixel_values).reshape(1, *pixel_shape)
    tower = kind in ('clip', 'siglip_vision_model')
    kernel = w[e + ('patch_embedding' if tower else 'patch_embeddings.projection') + '.weight']
    bias = w.get(e + ('patch_embedding' if tower else 'patch_embeddings.projection') + '.bias')
    flat, (rows, cols) = patch_rows(pixels, p)
    patches = flat @ kernel.reshape(C, -1).T + (0 if bias is None else bias)
    registers = cfg.get('num_register_tokens', 0)
    special = {'clip': ['class_embedding'], 'siglip_vision_model': [], 'vit': ['cls_token'], 'deit': ['cls_token', 'distillation_token'],
               'dinov2': ['cls_token'], 'dinov2_with_registers': ['cls_token']}[kind]
    lead = len(special)
    n = lead + registers + rows * cols
    x = torch.zeros(n, C)
    for slot, name in enumerate(special):
        x[slot] = w[e + name].reshape(C)
    x[lead + registers:] = patches
    pos = (w[e + 'position_embedding.weight'] if tower else w[e + 'position_embeddings'][0])
    side = cfg['image_size'] // p
    if kind.startswith('dinov2') and (rows * cols != side * side or rows != cols):
        grid = pos[lead:].reshape(side, side, C)
        antialias = kind == 'dinov2_with_registers'
        down, across = cubic_matrix(side, rows, antialias), cubic_matrix(side, cols, antialias)
        grid = torch.einsum('rs,stc,ut->ruc', down, grid, across)
        pos = torch.cat([pos[:lead], grid.reshape(rows * cols, C)])
    # positions go to the class/distillation slots and the patches, never to the registers (inserted after)
    x[:lead] += pos[:lead]
    x[lead + registers:] += pos[lead:]
    if registers:
        x[lead:lead + registers] = w[e + 'register_tokens'][0]
    if kind == 'clip':
        pre = torch.nn.LayerNorm(C, eps=eps)
        pre.weight.data, pre.bias.data = w[prefix + 'pre_layrnorm.weight'], w[prefix + 'pre_layrnorm.bias']
        x = pre(x)
    x = x[None]
    dinov2 = kind.startswith('dinov2')
    act = SECOND_ACTS[cfg['hidden_act']]
    attentions = []
    for i in range(cfg['num_hidden_layers']):
        if tower:
            at = f'{prefix}encoder.layers.{i}.'
            names = ('layer_norm1', 'self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.out_proj', 'layer_norm2')
            fc = ('mlp.fc1', 'mlp.fc2')
        else:
            at = f'{prefix}encoder.layer.{i}.'
            names = ('norm1' if dinov2 else 'layernorm_before', 'attention.attention.query', 'attention.attention.key',
                     'attention.attention.value', 'attention.output.dense', 'norm2' if dinov2 else 'layernorm_after')
            fc = ('mlp.fc1', 'mlp.fc2') if dinov2 else ('intermediate.dense', 'output.dense')
        ln1, mha, ln2 = block_modules(w, at, names, C, H, eps)
        h = ln1(x)
        out, weights = mha(h, h, h, need_weights=True, average_attn_weights=False)
        attentions.append(weights[0])
        if dinov2:
            out = out @ torch.diag(w[at + 'layer_scale1.lambda1'])
        x = x + out
        hidden = act(ln2(x) @ w[at + fc[0] + '.weight'].T + w[at + fc[0] + '.bias'])
        m = hidden @ w[at + fc[1] + '.weight'].T + w[at + fc[1] + '.bias']
        if dinov2:
            m = m @ torch.diag(w[at + 'layer_scale2.lambda1'])
        x = x + m
    post = torch.nn.LayerNorm(C, eps=eps)
    final_name = prefix + ('post_layernorm' if tower else 'layernorm')
    post.weight.data, post.bias.data = w[final_name + '.weight'], w[final_name + '.bias']
    final = post(x)[0]
    logits = None
    if 'cls_classifier.weight' in w:
        both = torch.stack([final[0], final[1]])
        heads = torch.stack([both[0] @ w['cls_classifier.weight'].T + w['cls_classifier.bias'],
                             both[1] @ w['distillation_classifier.weight'].T + w['distillation_classifier.bias']])
        logits = torch.tensor([0.5, 0.5]) @ heads
    elif 'classifier.weight' in w:
        features = final[0]
        if dinov2:
            average = torch.full((rows * cols,), 1 / (rows * cols)) @ final[lead + registers:]
            features = torch.cat([final[0], average])
        logits = w['classifier.weight'] @ features + w['classifier.bias']
    return torch.stack(attentions), final[-1], logits


def check(out):
    """Every reference-*.json against forward_by_modules; returns {folder: largest difference}."""
    worst = {}
    with torch.no_grad():
        for name in sorted(os.listdir(out)):
            folder = os.path.join(out, name)
            pictures = sorted(f for f in os.listdir(folder) if f.startswith('reference-')) if os.path.isdir(folder) else []
            if not pictures:
                continue
            config = json.load(open(os.path.join(folder, 'config.json'), encoding='utf-8'))
            w = {k: v.to(torch.float64) for k, v in read_safetensors(os.path.join(folder, 'model.safetensors')).items()}
            for file in pictures:
                reference = json.load(open(os.path.join(folder, file), encoding='utf-8'))
                attentions, hidden, logits = forward_by_modules(config, w, reference['pixel_values'], reference['pixel_shape'])
                differences = [(attentions - torch.tensor(reference['attentions'])).abs().max().item(),
                               (hidden - torch.tensor(reference['hidden_last'])).abs().max().item()]
                if (logits is None) != (reference['logits_last'] is None):
                    differences.append(math.inf)
                elif logits is not None:
                    differences.append((logits - torch.tensor(reference['logits_last'])).abs().max().item())
                worst[name] = max(worst.get(name, 0.0), *differences)
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('out')
    parser.add_argument('--bench', action='store_true')
    parser.add_argument('--check', action='store_true', help='also check every reference against a second route')
    parser.add_argument('--time', type=int)
    args = parser.parse_args()
    if args.time:
        time_forward(args.out, args.time)
    elif args.bench:
        bench(args.out)
    else:
        fixtures(args.out)
        if args.check:
            worst = check(args.out)
            for name, difference in worst.items():
                print(f'{name}: reference vs torch modules, largest difference {difference:.2e}')
            if not worst or max(worst.values()) > 1e-9:
                sys.exit('the references disagree with the second route')


if __name__ == '__main__':
    main()
