"""Suite-wide ordering: the longest test files start first.

The suite runs with ``-n auto --dist loadfile`` (pytest-xdist, the README's test command): each file
stays on one worker and files are handed out in collection order (with
xdist's own re-sorting by test count turned off, below). A
several-minute file collected last would leave one core idle while it runs
alone at the end, so the files measured to take longest (``pytest
--durations``) are moved to the front; the order within a file is kept.
"""

from __future__ import annotations

import pytest

#: longest first (measured on two cores, `bash .ci/run` on an idle machine, 2026-11-25: the
#: files over 25 s); files not listed keep their order after these
LONGEST_FILES = (
    "test_truth_coverage.py",
    "test_docs_commands.py",
    "test_resume_kill.py",
    "test_evaluation_math.py",
    "test_example_langgraph.py",
    "test_ray_executor.py",
    "test_atp_coq.py",
    "test_example_openai_agents.py",
    "test_api_limits_run.py",
    "test_plan.py",
    "test_honest_numbers.py",
    "test_secrets.py",
    "test_truth.py",
    "test_evaluation_envs.py",
    "test_gateway_truth.py",
    "test_os_atp_runs.py",
    "test_gateway_run.py",
    "test_disk_files.py",
    "test_llm_routing.py",
    "test_stop_cli.py",
    "test_dashboard_chromium.py",
    "test_budget_pareto.py",
    "test_llm_totals_resume.py",
    "test_bill_resume_servers.py",
    "test_llm_router.py",
    "test_plan_gateway.py",
    "test_cli_inputs.py",
    "test_cli_errors.py",
    "test_benchmarks_llm_smoke.py",
    "test_real_model_faults.py",
    "test_pareto_coverage.py",
    "test_atp_redteam.py",
    "test_benchmarks_smoke.py",
    "test_live_coverage.py",
    "test_docs_events.py",
    "test_variants.py",
    "test_soak_smoke.py",
    "test_counting_rule.py",
)


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist's loadfile scheduler re-sorts the files by how many tests
    # each has (--loadscope-reorder, on by default), which put the few-test,
    # several-minute files last and undid the order below: the suite ended
    # with one worker running test_resume_kill.py alone for minutes.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FILES)}
    last = len(LONGEST_FILES)
    # sorted() is stable: within a file, and among unlisted files, the order is unchanged
    items[:] = sorted(items, key=lambda item: rank.get(item.path.name, last))
