"""Writes a tiny random-weight llama model (GGUF) for the real-engine tests.

    python scripts/make_tiny_llama.py ENGINE_CACHE [--out PATH]

ENGINE_CACHE is the directory `scripts/llama-server.sh` prints: the writer is the `gguf-py` it
keeps from the same llama.cpp source as the server (so the file format always matches the
engine reading it, and no second copy of gguf is pinned), and the vocabulary — a real
SentencePiece tokenizer — is copied from its `models/ggml-vocab-llama-spm.gguf`. 2 layers,
embeddings of 256, weights drawn from a seeded generator: the same bytes on every machine.
The checks test the engine's behaviour (its cache, its context limit), not the text's quality.
Prints the model's path; a model already there is kept (written beside it, then renamed).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

VOCAB = "models/ggml-vocab-llama-spm.gguf"
NAME = "avia-tiny-llama"
LAYERS = 2
EMBEDDING = 256
FEED_FORWARD = 512
HEADS = 4
CONTEXT = 4096
SEED = 20261204


def tiny_llama_write(cache: Path, out: Path) -> Path:
    """Write the model to `out` unless it is there already; its path."""
    if out.exists():
        return out
    sys.path.insert(0, str(cache / "src" / "gguf-py"))
    import gguf

    vocab = gguf.GGUFReader(cache / "src" / VOCAB)
    partial = out.with_name(out.name + f".{os.getpid()}.partial")
    writer = gguf.GGUFWriter(partial, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.LLAMA])
    writer.add_name(NAME)
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBEDDING)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBEDDING // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens = 0
    for name, field in vocab.fields.items():
        if not name.startswith("tokenizer."):
            continue
        value: Any = field.contents()
        if field.types[0] == gguf.GGUFValueType.ARRAY:
            writer.add_key_value(name, value, field.types[0], sub_type=field.types[-1])
        else:
            writer.add_key_value(name, value, field.types[0])
        if name == "tokenizer.ggml.tokens":
            tokens = len(value)
    if not tokens:
        raise SystemExit(f"error: {VOCAB} has no tokenizer.ggml.tokens")

    random = np.random.default_rng(SEED)

    def weights(*shape: int) -> np.ndarray:
        # numpy's shape is the reverse of ggml's: (rows, columns) = (out, in).
        return (random.standard_normal(shape) * 0.02).astype(np.float32)

    # No output.weight: llama.cpp ties the output to the token embeddings (half the size).
    writer.add_tensor("token_embd.weight", weights(tokens, EMBEDDING))
    writer.add_tensor("output_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
    for layer in range(LAYERS):
        block = f"blk.{layer}"
        writer.add_tensor(f"{block}.attn_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{block}.{name}.weight", weights(EMBEDDING, EMBEDDING))
        writer.add_tensor(f"{block}.ffn_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
        writer.add_tensor(f"{block}.ffn_gate.weight", weights(FEED_FORWARD, EMBEDDING))
        writer.add_tensor(f"{block}.ffn_up.weight", weights(FEED_FORWARD, EMBEDDING))
        writer.add_tensor(f"{block}.ffn_down.weight", weights(EMBEDDING, FEED_FORWARD))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    partial.rename(out)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cache", type=Path, help="the directory scripts/llama-server.sh prints")
    parser.add_argument("--out", type=Path, help=f"default: CACHE/{NAME}.gguf")
    options = parser.parse_args()
    print(tiny_llama_write(options.cache, options.out or options.cache / f"{NAME}.gguf"))


if __name__ == "__main__":
    main()
