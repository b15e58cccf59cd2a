"""The LLM harness log readers, on logs the real harnesses wrote (tests/fixtures/logs, made by
scripts/make_harness_logs.py): lm-evaluation-harness 0.4 (``dummy`` model, ``--log_samples``) and
Inspect AI (``mockllm`` with token log-probs) ran here offline; HELM cannot, so its run folder is
written as HELM's runner writes it: ``json.dumps(list(map(asdict_without_nones, per_instance_stats)),
indent=2)`` in stanford-crfm/helm ``src/helm/benchmark/runner.py`` (``Runner.run_one``), with the
``Stat``/``MetricName`` dataclasses of ``src/helm/benchmark/metrics/statistic.py`` and ``metric_name.py``.

Every number is checked against the raw file parsed here again with the standard library (and the
``zstandard`` package for the zstd members of an ``.eval`` zip) and scikit-learn.
"""

from __future__ import annotations

import io
import json
import math
import os
import shutil
import struct
import zipfile
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import beyondauc as ba
from beyondauc.data.logs import READERS, find_logs, read_logs, safezip
from helpers.cli import check_single_error

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "logs"
LM_EVAL, INSPECT, HELM = LOGS / "lm_eval", LOGS / "inspect", LOGS / "helm"


# -- independent parsing of the raw files ---------------------------------------------------------------------


def _lm_eval_raw(path, metric="acc"):
    """(doc_ids, confidences, correct) of a samples file: json per line, the soft-max by hand."""
    ids, conf, correct = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        lls = [float(pair[0]) for pair in s["filtered_resps"]]
        exps = [math.exp(v) for v in lls]
        conf.append(max(exps) / sum(exps))
        correct.append(float(s[metric]))
        ids.append(s["doc_id"])
    return ids, np.array(conf), np.array(correct)


def _zip_members(path):
    """name -> bytes of every member of a zip, zstd (method 93) inflated with zstandard, others with zipfile."""
    import zstandard

    data = path.read_bytes()
    out = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            if info.compress_type != 93:
                out[info.filename] = z.read(info)
                continue
            name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26 : info.header_offset + 30])
            start = info.header_offset + 30 + name_len + extra_len
            raw = data[start : start + info.compress_size]
            out[info.filename] = zstandard.ZstdDecompressor().decompress(raw, max_output_size=info.file_size)
    return out


_VALUE = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def _inspect_raw(samples, scorer, field=None):
    """(ids, epochs, confidences, correct) of Inspect samples (dicts)."""
    ids, epochs, conf, correct = [], [], [], []
    for s in samples:
        ids.append(s["id"])
        epochs.append(s["epoch"])
        v = s["scores"][scorer]["value"]
        correct.append(_VALUE[v] if isinstance(v, str) else float(v))
        if field is None:
            conf.append(math.exp(sum(t["logprob"] for t in s["output"]["choices"][0]["logprobs"]["content"])))
        else:
            conf.append(float(s["metadata"][field]))
    return ids, epochs, np.array(conf), np.array(correct)


def _eval_file():
    return next(INSPECT.glob("*.eval"))


def _json_log():
    return next(INSPECT.glob("*.json"))


def _check_numbers(frame, conf, correct, n_items):
    """The reader's confidences and correctness equal the raw ones, and so do the AUROC (beyondauc's DeLong
    estimate against scikit-learn's), the accuracy and the item count, to 1e-12."""
    np.testing.assert_allclose(frame["confidence"].to_numpy(), conf, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(frame["correct"].to_numpy(), correct)
    binary = (correct >= 0.5).astype(int)
    assert abs(ba.auc_ci(binary, frame["confidence"].to_numpy()).estimate - roc_auc_score(binary, conf)) < 1e-12
    assert abs(frame["correct"].mean() - correct.mean()) < 1e-12
    assert frame["id"].nunique() == n_items


# -- lm-evaluation-harness --------------------------------------------------------------------------------------


def test_the_lm_eval_folder_gives_two_models_on_two_tasks_equal_to_the_raw_files():
    bench = ba.load_benchmark(LM_EVAL)
    assert bench.kind == "answers"
    assert sorted(bench.models) == ["dummy-a", "dummy-b"] and sorted(bench.datasets) == ["colours", "numbers"]
    for model in bench.models:
        for dataset in bench.datasets:
            path = next((LM_EVAL / model).glob(f"samples_{dataset}_*.jsonl"))
            ids, conf, correct = _lm_eval_raw(path)
            order = np.argsort(ids)
            got_conf, got_correct = bench.scores(model, dataset), bench.labels(dataset, model=model)
            got_ids = bench.frame["id"].to_numpy()[bench.dataset_codes() == bench.datasets.index(dataset)]
            got = np.argsort(got_ids)
            np.testing.assert_allclose(got_conf[got], conf[order], rtol=0, atol=1e-12)
            np.testing.assert_array_equal(got_correct[got], correct[order])
            assert abs(ba.auc_ci(got_correct, got_conf).estimate - roc_auc_score(correct, conf)) < 1e-12
            assert abs(got_correct.mean() - correct.mean()) < 1e-12 and len(got_ids) == len(set(ids)) == 16


def test_the_model_name_comes_from_the_results_file():
    for folder in LM_EVAL.iterdir():
        results = json.loads(next(folder.glob("results_*.json")).read_text())
        frame = read_logs(folder)
        assert set(frame["model"]) == {results["model_name"]} == {folder.name}


def test_correct_metric_reads_acc_norm():
    path = next((LM_EVAL / "dummy-a").glob("samples_numbers_*.jsonl"))
    _, conf, correct = _lm_eval_raw(path, "acc_norm")
    frame = read_logs(path, options={"correct_metric": "acc_norm"})
    _check_numbers(frame, conf, correct, 16)
    with pytest.raises(ValueError, match=r"no metric 'f1' \(this task logs \['acc', 'acc_norm'\]\)"):
        read_logs(path, options={"correct_metric": "f1"})


def test_several_filters_give_one_dataset_per_filter(tmp_path):
    src = next((LM_EVAL / "dummy-a").glob("samples_colours_*.jsonl"))
    shutil.copy(next((LM_EVAL / "dummy-a").glob("results_*.json")), tmp_path)
    lines = src.read_text().splitlines()
    other = [json.dumps({**json.loads(line), "filter": "take_first"}) for line in lines]
    (tmp_path / src.name).write_text("\n".join(lines + other) + "\n")
    frame = read_logs(tmp_path)
    assert frame.groupby("dataset").size().to_dict() == {"colours:none": 16, "colours:take_first": 16}


def test_a_generation_task_is_refused_saying_what_to_log(tmp_path):
    src = next((LM_EVAL / "dummy-a").glob("samples_colours_*.jsonl"))
    shutil.copy(next((LM_EVAL / "dummy-a").glob("results_*.json")), tmp_path)
    sample = json.loads(src.read_text().splitlines()[0])
    sample.update(resps=[["lol"]], filtered_resps=["lol"], exact_match=0.0)  # what generate_until logs
    (tmp_path / src.name).write_text(json.dumps(sample) + "\n")
    with pytest.raises(ValueError) as err:
        read_logs(tmp_path, options={"correct_metric": "exact_match"})
    assert "\n" not in str(err.value) and "--log_samples" in str(err.value) and "line 1" in str(err.value)


def test_a_json_line_that_is_no_object_is_refused_in_one_line(tmp_path):
    src = next((LM_EVAL / "dummy-a").glob("samples_colours_*.jsonl"))
    shutil.copy(next((LM_EVAL / "dummy-a").glob("results_*.json")), tmp_path)
    lines = src.read_text().splitlines()
    (tmp_path / src.name).write_text("\n".join([lines[0], "[1, 2]", *lines[2:]]) + "\n")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ValueError, match=r"line 2 holds a JSON list, not an object$"):
        ba.load_benchmark(tmp_path)
    assert sorted(os.listdir(tmp_path)) == before


def test_a_samples_file_without_its_results_file_is_refused(tmp_path):
    src = next((LM_EVAL / "dummy-a").glob("samples_colours_*.jsonl"))
    shutil.copy(src, tmp_path)
    with pytest.raises(ValueError, match="no results_.*json beside it, which names the model"):
        read_logs(tmp_path)


# -- Inspect AI ------------------------------------------------------------------------------------------------


def test_the_eval_log_is_zstd_compressed_as_inspect_writes_it():
    with zipfile.ZipFile(_eval_file()) as z:
        assert {i.compress_type for i in z.infolist()} == {93}


@pytest.mark.parametrize("scorer", [None, "match", "includes"])
def test_an_eval_log_equals_its_raw_samples(scorer):
    members = _zip_members(_eval_file())
    header = json.loads(members["header.json"])
    samples = [json.loads(v) for k, v in members.items() if k.startswith("samples/")]
    ids, epochs, conf, correct = _inspect_raw(samples, scorer or "match")  # the first scorer is match()
    frame = read_logs(_eval_file(), options={"scorer": scorer})
    assert list(frame["id"]) == ids and list(frame["epoch"]) == epochs and sorted(set(epochs)) == [1, 2]
    assert set(frame["dataset"]) == {header["eval"]["task"]} and set(frame["model"]) == {header["eval"]["model"]}
    _check_numbers(frame, conf, correct, 8)
    assert len(frame) == 16  # 8 items x 2 epochs: repeated samples stay rows, with one id


def test_a_json_log_reads_a_named_metadata_confidence():
    log = json.loads(_json_log().read_text())
    _, _, conf, correct = _inspect_raw(log["samples"], "match", field="confidence")
    frame = read_logs(_json_log(), options={"confidence_field": "confidence"})
    assert "epoch" not in frame.columns  # one epoch: nothing repeated
    _check_numbers(frame, conf, correct, 5)
    _, _, from_logprobs, _ = _inspect_raw(log["samples"], "match")
    np.testing.assert_allclose(read_logs(_json_log())["confidence"].to_numpy(), from_logprobs, rtol=0, atol=1e-12)


def test_scores_map_c_i_p_n_and_numbers(tmp_path):
    log = json.loads(_json_log().read_text())
    for s, v in zip(log["samples"], ["C", "I", "P", "N", 0.25]):
        s["scores"]["match"]["value"] = v
    path = tmp_path / "graded.json"
    path.write_text(json.dumps(log))
    assert read_logs(path)["correct"].tolist() == [1.0, 0.0, 0.5, 0.0, 0.25]


def test_an_unknown_scorer_is_refused_naming_the_scorers():
    with pytest.raises(ValueError, match=r"no scorer 'judge'; the sample has \['match', 'includes'\]"):
        read_logs(_eval_file(), options={"scorer": "judge"})


def test_a_log_without_log_probs_is_refused_saying_what_to_log(tmp_path):
    log = json.loads(_json_log().read_text())
    for s in log["samples"]:
        s["output"]["choices"][0]["logprobs"] = None
    path = tmp_path / "nolp.json"
    path.write_text(json.dumps(log))
    with pytest.raises(ValueError) as err:
        read_logs(path)
    assert "\n" not in str(err.value) and "logprobs=True" in str(err.value) and "--confidence-field" in str(err.value)


# -- hostile .eval archives: refused in one line, before any member is read, nothing written -----------------


def _zip(tmp_path, members, name="bad.eval"):
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for member, data in members.items():
            z.writestr(member, data)
    return path


def _refused(path, *needles):
    folder = path.parent
    before = sorted(os.listdir(folder)), sorted(os.listdir(Path.cwd()))
    with pytest.raises(ValueError) as err:
        ba.load_benchmark(path)
    text = str(err.value)
    assert "\n" not in text and str(path) in text, text
    for n in needles:
        assert n in text, text
    assert (sorted(os.listdir(folder)), sorted(os.listdir(Path.cwd()))) == before
    return text


@pytest.mark.parametrize("member", ["../x.json", "/etc/x.json", "samples/../../x.json", "C:/x.json", "a\\..\\x"])
def test_a_member_with_a_path_out_of_the_archive_is_refused(tmp_path, member):
    _refused(_zip(tmp_path, {"header.json": "{}", member: "{}"}), repr(member), "path out of the archive")


def test_a_member_inflating_past_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(safezip, "MAX_MEMBER_BYTES", 10_000)
    path = _zip(tmp_path, {"header.json": "{}", "samples/1_epoch_1.json": b" " * 50_000})
    _refused(path, "'samples/1_epoch_1.json' inflates to 50000 bytes, past the limit of 10000")


def test_a_member_lying_about_its_size_is_stopped_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(safezip, "MAX_MEMBER_BYTES", 10_000)
    path = _zip(tmp_path, {"header.json": b" " * 50_000})
    data = bytearray(path.read_bytes())
    central = data.rindex(b"PK\x01\x02")  # the member's central directory entry says 100 bytes
    data[central + 24 : central + 28] = struct.pack("<L", 100)
    path.write_bytes(bytes(data))
    _refused(path, "'header.json' inflates past the limit of 10000 bytes")


def test_a_truncated_archive_is_refused(tmp_path):
    data = _eval_file().read_bytes()
    path = tmp_path / "cut.eval"
    path.write_bytes(data[: len(data) // 2])
    _refused(path, "not a complete zip archive", "truncated")


def test_an_archive_of_a_real_log_cut_in_its_last_member_is_refused(tmp_path):
    data = _eval_file().read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        last = max(z.infolist(), key=lambda i: i.header_offset)
    # keep the central directory but lose the last member's bytes: the offsets point past the data
    path = tmp_path / "holed.eval"
    path.write_bytes(data[: last.header_offset + 10] + data[last.header_offset + 10 + last.compress_size :])
    with pytest.raises(ValueError) as err:
        ba.load_benchmark(path)
    assert "\n" not in str(err.value)


def test_the_cli_refuses_a_hostile_log_in_one_line(tmp_path, capsys):
    path = _zip(tmp_path, {"header.json": "{}", "../evil.json": "{}"})
    out = tmp_path / "report"
    check_single_error(capsys, ["report", str(path), "--out", str(out)], "path out of the archive")
    assert not out.exists()


# -- HELM --------------------------------------------------------------------------------------------------------


def test_a_helm_run_equals_its_raw_file():
    run = HELM / "mmlu-anatomy-gpt2"
    entries = json.loads((run / "per_instance_stats.json").read_text())
    stat = [{s["name"]["name"]: s["mean"] for s in e["stats"]} for e in entries]
    conf = np.array([s["max_prob"] for s in stat])
    correct = np.array([s["exact_match"] for s in stat])
    frame = read_logs(HELM)
    assert list(frame["id"]) == [e["instance_id"] for e in entries]
    assert set(frame["model"]) == {"openai/gpt2"}
    assert set(frame["dataset"]) == {"mmlu:subject=anatomy,method=multiple_choice_joint"}
    _check_numbers(frame, conf, correct, 12)
    bench = ba.load_benchmark(HELM)
    assert bench.kind == "answers" and len(bench) == 12


def test_a_helm_run_without_max_prob_is_refused(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(HELM / "mmlu-anatomy-gpt2", run)
    entries = json.loads((run / "per_instance_stats.json").read_text())
    for e in entries:
        e["stats"] = [s for s in e["stats"] if s["name"]["name"] != "max_prob"]
    (run / "per_instance_stats.json").write_text(json.dumps(entries, indent=2))
    with pytest.raises(ValueError, match=r"instance 1: no stat 'max_prob'.*multiple_choice_joint"):
        read_logs(run)


# -- the registry --------------------------------------------------------------------------------------------


def test_the_registry_recognises_every_log_from_the_files_themselves():
    found = [(reader.name, file.relative_to(LOGS).parts[0]) for reader, file in find_logs(LOGS)]
    assert sorted(found) == sorted(
        [("HELM", "helm")] + [("Inspect AI", "inspect")] * 2 + [("lm-evaluation-harness", "lm_eval")] * 4
    )
    assert [r.name for r in READERS] == ["lm-evaluation-harness", "Inspect AI", "HELM"]


def test_a_folder_of_tables_is_no_log(tmp_path):
    (tmp_path / "a.csv").write_text("dataset,label,m\nx,0,0.1\nx,1,0.9\n")
    (tmp_path / "results.json").write_text("{}")
    assert read_logs(tmp_path) is None
    assert ba.load_benchmark(tmp_path).models == ("m",)


def test_unknown_log_options_are_refused():
    with pytest.raises(ValueError, match=r"unknown log option\(s\) \['scorers'\]"):
        read_logs(LM_EVAL, options={"scorers": "match"})


def test_log_options_reach_the_reader_through_the_cli_flags():
    from beyondauc.cli.commands import build_parser, parameter_items

    for command in ("report", "evaluate"):
        args = build_parser().parse_args(
            [
                command,
                str(LM_EVAL),
                "--out",
                "x",
                "--correct-metric",
                "acc_norm",
                "--scorer",
                "s",
                "--confidence-field",
                "c",
            ]
        )
        assert parameter_items([], args) == {"correct_metric": "acc_norm", "scorer": "s", "confidence_field": "c"}


def test_open_benchmark_passes_log_options():
    from beyondauc.report import open_benchmark

    path = next((LM_EVAL / "dummy-b").glob("samples_colours_*.jsonl"))
    _, _, acc_norm = _lm_eval_raw(path, "acc_norm")
    bench = open_benchmark(LM_EVAL, log_options={"correct_metric": "acc_norm"}, datasets=["colours"])
    got = bench.labels("colours", model="dummy-b")
    assert sorted(got.tolist()) == sorted(acc_norm.tolist())


def test_a_deflate_eval_log_reads_as_its_zstd_twin(tmp_path):
    """Inspect versions before zstd wrote deflate members: the same log repacked so reads the same."""
    members = _zip_members(_eval_file())
    path = tmp_path / "deflate.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    a, b = read_logs(_eval_file()), read_logs(path)
    assert a.drop(columns="_file").equals(b.drop(columns="_file"))


def test_a_folder_of_logs_and_tables_is_refused(tmp_path):
    shutil.copytree(HELM / "mmlu-anatomy-gpt2", tmp_path / "run")
    (tmp_path / "scores.csv").write_text("dataset,label,m\nx,0,0.1\nx,1,0.9\n")
    with pytest.raises(
        ValueError,
        match=r"holds HELM logs \('run/per_instance_stats.json'\) and table files "
        r"\('scores.csv'\); a directory is read as logs or as tables",
    ):
        ba.load_benchmark(tmp_path)
