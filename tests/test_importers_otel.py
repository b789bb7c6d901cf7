"""OpenTelemetry GenAI spans: OTLP/JSON written by the SDK's own encoder (make_fixture.py).

- trace 1, agent `fixer`: chat spans of input 1000 (600 read, 200 written) + output 100 and
  input 2500 (2000 read) + output 200, under an invoke_agent span repeating their total
  (3500 + 300): counted once; evaluation `tests` labelled pass; cost 0.01 + 0.02.
- trace 2, two invoke_agent spans `solver`: A (deprecated prompt/completion_tokens 400 + 50,
  evaluation fail), B (OpenInference llm.token_count.* 800 + 80; error.type timeout).
- trace 3: one chat span of service `batch-eval` (100 + 10) with `eval.passed = true`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_importers import rows_by
from tui_ledger.accounting.ledger import compare
from tui_ledger.importers import (
    ImporterError,
    ImportOptions,
    OtelImporter,
    find_importer,
    get_importer,
)
from tui_ledger.load import load

OTEL = Path(__file__).parent / "fixtures" / "importers" / "otel"
DOCUMENT = OTEL / "traces.json"  # one document, base64 ids
LINES = OTEL / "traces.jsonl"  # the collector's file exporter: hex ids, a batch per line
FIXER = "fixer__claude-sonnet-4-5"
SOLVER = "solver__gpt-4o"
BATCH = "batch-eval__gpt-4o-mini"


def test_otel_is_found_by_name_alias_and_content() -> None:
    for path in (DOCUMENT, LINES):
        importer = find_importer(path)
        assert importer is not None and importer.name == "otel", path
    assert isinstance(get_importer("OpenTelemetry"), OtelImporter)
    assert isinstance(get_importer("otlp"), OtelImporter)


@pytest.mark.parametrize("path", [DOCUMENT, LINES])
def test_one_attempt_per_trace_or_agent_span_usage_counted_once(path: Path) -> None:
    imported = OtelImporter().read_imported(path)
    frame = imported.frame
    assert frame.height == 4
    rows = rows_by(frame, "span_id")
    fixer = rows["b000000000000001"]
    assert fixer["trace_id"] == "a0000000000000000000000000000001"  # hex, whatever the file had
    assert (fixer["workflow"], fixer["agent_name"], fixer["service"]) == (
        FIXER,
        "fixer",
        "agents-service",
    )
    # The agent span's own 3500 + 300 repeats its chat spans: not counted again.
    assert (
        fixer["input_tokens"],
        fixer["cached_input_tokens"],
        fixer["cache_write_tokens"],
        fixer["output_tokens"],
        fixer["tokens"],
    ) == (700, 2600, 200, 300, 3800)
    assert fixer["cost"] == pytest.approx(0.03)
    assert (fixer["passed"], fixer["status"], fixer["evaluation"]) == (True, "passed", "tests")
    assert (fixer["model_calls"], fixer["duration_s"]) == (2, 15.0)
    assert fixer["conversation_id"] == "conv-1"
    assert fixer["timestamp"].isoformat() == "2025-10-01T10:00:00+00:00"
    solver_a, solver_b = rows["b000000000000006"], rows["b000000000000008"]
    assert solver_a["trace_id"] == solver_b["trace_id"]  # one trace, two attempts
    assert (solver_a["workflow"], solver_a["tokens"], solver_a["passed"]) == (SOLVER, 450, False)
    assert (solver_b["tokens"], solver_b["passed"], solver_b["status"]) == (880, None, "timeout")
    assert solver_b["stop_reason"] == "timeout"
    batch = rows["b00000000000000a"]
    assert (batch["workflow"], batch["tokens"], batch["status"]) == (BATCH, 110, "unset")
    assert imported.warnings == (
        "1 attempt with no evaluation result or outcome attribute: ungraded; join outcomes by "
        "trace_id",
    )
    assert imported.conventions[1].startswith("usage is summed over the spans that report it")


def test_an_outcome_attribute_the_user_names() -> None:
    options = ImportOptions(outcome_attribute="eval.passed")
    rows = rows_by(OtelImporter().read(DOCUMENT, options), "workflow", "span_id")
    assert rows[(BATCH, "b00000000000000a")]["passed"] is True
    # Named, it is the only verdict read: the fixer's evaluation event is not that attribute.
    assert rows[(FIXER, "b000000000000001")]["passed"] is None
    by_evaluation = OtelImporter().read(DOCUMENT, ImportOptions(outcome_attribute="tests"))
    assert rows_by(by_evaluation, "span_id")["b000000000000001"]["passed"] is True


def test_otel_through_the_loader_gives_the_figures() -> None:
    keep = rows_by(compare(load([LINES]).attempts).keep, "workflow")
    assert (keep[FIXER]["total_tokens"], keep[FIXER]["tokens_per_accepted_result"]) == (
        3800,
        3800.0,
    )
    assert (keep[SOLVER]["attempts"], keep[SOLVER]["accepted"]) == (2, 0)
    assert keep[SOLVER]["total_tokens"] == 1330
    assert keep[SOLVER]["tokens_per_accepted_result"] is None
    assert keep[BATCH]["ungraded"] == 1


def span_file(tmp_path: Path, attributes: list[dict[str, Any]], **span: Any) -> Path:
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": []},
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "a0000000000000000000000000000009",
                                "spanId": "b000000000000009",
                                "name": "chat m",
                                "attributes": attributes,
                                **span,
                            }
                        ]
                    }
                ],
            }
        ]
    }
    file = tmp_path / "spans.jsonl"
    file.write_text(json.dumps(document) + "\n")
    return file


def test_int_values_as_numbers_and_strings_and_a_total_alone(tmp_path: Path) -> None:
    file = span_file(
        tmp_path,
        [
            {"key": "gen_ai.request.model", "value": {"stringValue": "m"}},
            {"key": "llm.usage.total_tokens", "value": {"intValue": 77}},
        ],
    )
    row = OtelImporter().read(file).row(0, named=True)
    assert (row["tokens"], row["input_tokens"], row["output_tokens"]) == (77, None, None)


@pytest.mark.parametrize(
    ("attributes", "problem"),
    [
        (
            [{"key": "gen_ai.usage.input_tokens", "value": {"stringValue": "many"}}],
            "attribute gen_ai.usage.input_tokens is 'many', not a whole number",
        ),
        (
            [{"key": "gen_ai.usage.cost", "value": {"boolValue": True}}],
            "attribute gen_ai.usage.cost is not a number",
        ),
    ],
)
def test_a_value_of_the_wrong_type_names_file_span_and_key(
    tmp_path: Path, attributes: list[dict[str, Any]], problem: str
) -> None:
    file = span_file(tmp_path, attributes)
    with pytest.raises(ImporterError) as caught:
        OtelImporter().read(file)
    message = str(caught.value)
    assert message.startswith(f"{file}: line 1: span 'chat m'") and problem in message


def test_evaluations_that_disagree_are_an_error(tmp_path: Path) -> None:
    events = [
        {
            "name": "gen_ai.evaluation.result",
            "attributes": [
                {"key": "gen_ai.evaluation.name", "value": {"stringValue": name}},
                {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": label}},
            ],
        }
        for name, label in (("tests", "pass"), ("review", "fail"))
    ]
    file = span_file(tmp_path, [], events=events)
    with pytest.raises(ImporterError, match=r"evaluations that disagree \(review, tests\)"):
        OtelImporter().read(file)
    chosen = OtelImporter().read(file, ImportOptions(outcome_attribute="review"))
    assert chosen["passed"].to_list() == [False]


def test_broken_files(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text(LINES.read_text()[:-50])
    with pytest.raises(ImporterError, match=r"cut\.jsonl: line 2: is not valid JSON"):
        OtelImporter().read(cut)
    whole = tmp_path / "cut.json"
    whole.write_text(DOCUMENT.read_text()[:-50])
    with pytest.raises(ImporterError, match=r"cut\.json: is not valid JSON"):
        OtelImporter().read(whole)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"resourceSpans": {"oops": 1}}))
    with pytest.raises(ImporterError, match="resourceSpans is not a list"):
        OtelImporter().read(bad)
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"resourceSpans": []}))
    with pytest.raises(ImporterError, match=r"empty\.json: holds no spans"):
        OtelImporter().read(empty)
    with pytest.raises(ImporterError, match="is a folder"):
        OtelImporter().read(tmp_path)
