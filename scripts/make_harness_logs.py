"""Write the LLM-harness logs the log readers are tested on, with the real harnesses, offline.

Run it with a Python that has the harnesses (kept out of beyondauc's own dependencies), e.g.::

    python3 -m venv /tmp/harness-venv && /tmp/harness-venv/bin/pip install lm-eval inspect-ai
    /tmp/harness-venv/bin/python scripts/make_harness_logs.py tests/fixtures/logs

It writes, under the folder given (replaced only where this script wrote before: ``lm_eval``,
``inspect``, ``helm``):

- ``lm_eval/<model>/``: lm-evaluation-harness 0.4 ``--log_samples`` runs of its ``dummy`` model (random
  log-likelihoods, seeded) as two models, ``dummy-a`` and ``dummy-b``, on two local multiple-choice tasks
  (``dataset_path: json``), ``colours`` and ``numbers``;
- ``inspect/``: Inspect AI logs of its ``mockllm`` model whose outputs carry token log-probs: an ``.eval``
  log (two scorers, two epochs) and a ``.json`` log whose confidence is a metadata field;
- ``helm/mmlu-anatomy-gpt2/``: ``per_instance_stats.json`` and ``run_spec.json`` of a HELM run, written as HELM's
  runner writes them (``json.dumps(list(map(asdict_without_nones, per_instance_stats)), indent=2)``,
  stanford-crfm/helm ``src/helm/benchmark/runner.py``; the dataclasses ``Stat`` and ``MetricName`` of
  ``src/helm/benchmark/metrics/statistic.py`` and ``metric_name.py``), since HELM does not run offline.

Every value comes from a seed: a re-run writes the same samples, scores and log-probs; what the
harnesses stamp on a run (dates in file names, run ids, durations, their environment report) differs.
"""

from __future__ import annotations

import dataclasses
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TASKS = {"colours": ["red", "green", "blue"], "numbers": ["one", "two", "three", "four"]}
MODELS = {"dummy-a": 1, "dummy-b": 2}  # model -> seed of the dummy model's log-likelihoods
N_DOCS = 16


def lm_eval_runs(out: Path) -> None:
    """Two models x two tasks, with ``lm_eval --log_samples`` (the ``dummy`` model needs no weights)."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rng = random.Random(0)
        for task, choices in TASKS.items():
            with open(work / f"{task}.jsonl", "w") as f:
                for i in range(N_DOCS):
                    f.write(
                        json.dumps(
                            {
                                "question": f"{task} question {i}?",
                                "choices": choices,
                                "answer": rng.randrange(len(choices)),
                            }
                        )
                        + "\n"
                    )
            (work / f"{task}.yaml").write_text(
                f"task: {task}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {task}.jsonl\n"
                'test_split: test\noutput_type: multiple_choice\ndoc_to_text: "{{question}}"\n'
                'doc_to_choice: "{{choices}}"\ndoc_to_target: "{{answer}}"\n'
                "metric_list:\n  - metric: acc\n  - metric: acc_norm\n"
            )
        lm_eval = Path(sys.executable).with_name("lm_eval")
        for model, seed in MODELS.items():
            subprocess.run(
                [
                    str(lm_eval),
                    "--model",
                    "dummy",
                    "--model_args",
                    f"pretrained={model}",
                    "--tasks",
                    ",".join(TASKS),
                    "--include_path",
                    ".",
                    "--log_samples",
                    "--output_path",
                    "out",
                    "--seed",
                    str(seed),
                ],
                cwd=work,
                check=True,
                env={"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": tmp},
            )
            for f in (work / "out" / model).iterdir():
                if f.name.startswith("results_"):  # the machine's environment report is no test input
                    info = json.loads(f.read_text())
                    info["pretty_env_info"] = "(removed by make_harness_logs.py)"
                    f.write_text(json.dumps(info, indent=2, ensure_ascii=False))
            shutil.copytree(work / "out" / model, out / model)


def inspect_logs(out: Path) -> None:
    """An ``.eval`` log (log-probs, two scorers, two epochs) and a ``.json`` log (confidence in metadata)."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import (
        ChatCompletionChoice,
        ChatMessageAssistant,
        Logprob,
        Logprobs,
        ModelOutput,
        ModelUsage,
        get_model,
    )
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate, solver

    rng = random.Random(0)
    letters = "ABCD"
    samples = [
        Sample(id=i + 1, input=f"Question {i + 1}: pick a letter.", target=rng.choice(letters)) for i in range(8)
    ]

    def output(text: str, logprob: float) -> ModelOutput:
        choice = ChatCompletionChoice(
            message=ChatMessageAssistant(content=text),
            stop_reason="stop",
            logprobs=Logprobs(content=[Logprob(token=text, logprob=logprob)]),
        )
        return ModelOutput(
            model="mockllm/model", choices=[choice], usage=ModelUsage(input_tokens=8, output_tokens=1, total_tokens=9)
        )  # no tokenizer

    def answers(epochs: int, items: list[Sample]) -> list[ModelOutput]:
        outs = []
        for _ in range(epochs):
            for s in items:
                right = rng.random() < 0.6
                text = s.target if right else rng.choice([c for c in letters if c != s.target])
                outs.append(output(text, -rng.uniform(0.01, 1.5)))
        return outs

    @solver
    def state_confidence():  # what a verbalised-confidence solver leaves: a number in the sample's metadata
        async def solve(state, generate):
            state.metadata["confidence"] = round(rng.uniform(0.3, 1.0), 3)
            return state

        return solve

    with tempfile.TemporaryDirectory() as tmp:
        task = Task(dataset=samples, solver=generate(), scorer=[match(), includes()], name="letters")
        inspect_eval(
            task,
            model=get_model("mockllm/model", custom_outputs=answers(2, samples)),
            epochs=2,
            log_dir=tmp,
            display="none",
            max_samples=1,
            log_format="eval",
        )
        judge = Task(dataset=samples[:5], solver=[generate(), state_confidence()], scorer=match(), name="letters")
        inspect_eval(
            judge,
            model=get_model("mockllm/judge", custom_outputs=answers(1, samples[:5])),
            log_dir=tmp,
            display="none",
            max_samples=1,
            log_format="json",
        )
        for f in sorted(Path(tmp).iterdir()):
            shutil.copy(f, out / f.name)


# -- HELM: its dataclasses (src/helm/benchmark/metrics/metric_name.py, statistic.py, metric.py) -------------


@dataclasses.dataclass(frozen=True)
class MetricName:
    name: str
    split: str | None = None
    sub_split: str | None = None
    perturbation: Any = None


@dataclasses.dataclass
class Stat:
    name: MetricName
    count: int = 0
    sum: float = 0
    sum_squared: float = 0
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    variance: float | None = None
    stddev: float | None = None

    def add(self, x: float) -> Stat:  # as HELM's Stat.add for one value
        self.sum += x
        self.sum_squared += x * x
        self.min = x if self.min is None else min(self.min, x)
        self.max = x if self.max is None else max(self.max, x)
        self.count += 1
        self.mean = self.sum / self.count
        self.variance = max(self.sum_squared / self.count - self.mean**2, 0)
        self.stddev = self.variance**0.5
        return self


@dataclasses.dataclass(frozen=True)
class PerInstanceStats:
    instance_id: str
    perturbation: Any
    train_trial_index: int
    stats: list


def asdict_without_nones(obj: Any) -> dict:  # helm.common.general.asdict_without_nones
    return dataclasses.asdict(obj, dict_factory=lambda x: {k: v for (k, v) in x if v is not None})


def helm_run(out: Path) -> None:
    """A multiple_choice_joint run of 12 instances (``max_prob``, ``exact_match``), one train trial."""
    rng = random.Random(0)
    name = "mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2"
    run = out / "mmlu-anatomy-gpt2"  # HELM names the folder after the run; a name without ':' checks out anywhere
    run.mkdir(parents=True)
    per_instance = []
    for i in range(12):
        max_prob = rng.uniform(0.25, 0.99)
        right = float(rng.random() < max_prob)
        stats = [
            Stat(MetricName("exact_match", split="test")).add(right),
            Stat(MetricName("max_prob", split="test")).add(max_prob),
            Stat(MetricName("num_prompt_tokens", split="test")).add(float(rng.randrange(60, 200))),
        ]
        per_instance.append(PerInstanceStats(f"id{2000 + i}", None, 0, stats))
    (run / "per_instance_stats.json").write_text(json.dumps(list(map(asdict_without_nones, per_instance)), indent=2))
    spec = {
        "name": name,
        "scenario_spec": {
            "class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
            "args": {"subject": "anatomy"},
        },
        "adapter_spec": {
            "method": "multiple_choice_joint",
            "model": "openai/gpt2",
            "max_train_instances": 5,
            "num_train_trials": 1,
        },
        "metric_specs": [
            {"class_name": "helm.benchmark.metrics.basic_metrics.BasicMetric", "args": {"names": ["exact_match"]}}
        ],
        "groups": ["mmlu"],
    }
    (run / "run_spec.json").write_text(json.dumps(spec, indent=2))


def main(folder: str) -> None:
    out = Path(folder)
    for part, make in (("lm_eval", lm_eval_runs), ("inspect", inspect_logs), ("helm", helm_run)):
        target = out / part
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        make(target)
        print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/logs")
