"""The safetensors format, written by hand (no safetensors package on Debian): an 8-byte
little-endian header length, a JSON header with `__metadata__` padded with spaces to a multiple of
8, then each tensor's raw little-endian C-order bytes. Shared by the fixture scripts."""
import json
import struct

import torch

SAFETENSORS_DTYPES = {
    torch.float16: 'F16', torch.bfloat16: 'BF16', torch.float32: 'F32', torch.float64: 'F64', torch.int8: 'I8',
    torch.int16: 'I16', torch.int32: 'I32', torch.int64: 'I64', torch.uint8: 'U8', torch.bool: 'BOOL',
}


def raw_bytes(tensor):
    """A tensor's little-endian C-order bytes (bfloat16 has no numpy type: go through int16)."""
    tensor = tensor.contiguous()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().astype('<i2').tobytes()
    return tensor.numpy().astype(tensor.numpy().dtype.newbyteorder('<')).tobytes()


def safetensors_bytes(tensors, metadata):
    header, offset, chunks = {'__metadata__': metadata}, 0, []
    for key, tensor in tensors.items():
        data = raw_bytes(tensor)
        header[key] = {'dtype': SAFETENSORS_DTYPES[tensor.dtype], 'shape': list(tensor.shape), 'data_offsets': [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b' ' * (-len(text) % 8)  # the format pads the header to 8-byte alignment
    return struct.pack('<Q', len(text)) + text + b''.join(chunks)
