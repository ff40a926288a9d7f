"""A minimal safetensors reader shared by the scripts, so they need no `safetensors` package:
the file is an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
shape and byte range, then the raw little-endian data."""
import json
import struct


def read_raw(path):
    """name -> (dtype, shape, bytes) for each tensor of `path` (`__metadata__` left out).

    Raises OSError when the file cannot be read and ValueError when it is not safetensors."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 8:
        raise ValueError("not a safetensors file (too short)")
    (n,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8 : 8 + n])
    except ValueError as e:
        raise ValueError(f"not a safetensors file ({e})")
    body = data[8 + n :]
    return {name: (info["dtype"], info["shape"], body[slice(*info["data_offsets"])]) for name, info in header.items() if name != "__metadata__"}
