"""The bench peers' weight reader: a folder's safetensors files as arrays of the caller's library."""
import json
import os


def read_safetensors(folder, to_array):
    """Every tensor of the folder's safetensors files as float32 arrays, names without the class prefix."""
    out = {}
    for file in sorted(f for f in os.listdir(folder) if f.endswith('.safetensors')):
        with open(os.path.join(folder, file), 'rb') as f:
            data = f.read()
        size = int.from_bytes(data[:8], 'little')
        header = json.loads(data[8:8 + size])
        header.pop('__metadata__', None)
        for key, entry in header.items():
            start, end = (8 + size + o for o in entry['data_offsets'])
            name = key.split('.', 1)[1] if key.startswith(('transformer.', 'model.')) else key
            out[name] = to_array(data[start:end], entry['dtype'], entry['shape'])
    return out
