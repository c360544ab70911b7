"""upgrade_readiness_report module: both files written through the file-output service, idempotent, check and diff
mode, a refused input failing with the reason."""

import functools
import json

import pytest

from ansible_collections.kubeforge.operators.plugins.modules import upgrade_readiness_report

PLAN = {
    "changed": False,
    "target": "4.21",
    "verdict": "needs_action",
    "blockers": ["ops/a.v1.0.0"],
    "operators": [
        {
            "generation": "v0",
            "namespace": "ops",
            "name": "a.v1.0.0",
            "package": "a",
            "channel": "stable",
            "installed_version": "1.0.0",
            "source": "cat",
            "max_openshift_version": "4.20",
            "blocks_upgrade": True,
            "block_reason": "- maximum supported OCP version for ops/a.v1.0.0 is 4.20",
            "target_catalog": {"package": True, "channel": True},
            "target_version": "1.1.0",
            "path": ["1.1.0"],
            "deprecations": [],
            "action": {"kind": "upgrade", "to_version": "1.1.0", "to_channel": None, "reason": None},
        }
    ],
}


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, upgrade_readiness_report)


def test_writes_both_files_and_is_idempotent(run, tmp_path):
    dest = tmp_path / "report"
    args = {"plans": [{"cluster": "east", "plan": PLAN}, {"cluster": "west", "plan": {"failed": True, "msg": "boom"}}], "dest": str(dest)}
    checked = run(args, check_mode=True, diff=True)
    assert checked["changed"] is True and not dest.exists() and len(checked["diff"]) == 2
    first = run(args)
    assert first["changed"] is True and first["verdict"] == "unknown"
    assert first["paths"] == {"markdown": str(dest / "report.md"), "json": str(dest / "report.json")}
    assert (dest / "report.md").read_text() == first["report_markdown"]
    assert json.loads((dest / "report.json").read_text()) == first["report"]
    assert first["report"]["operators"][0]["action"]["to_version"] == "1.1.0"
    assert (
        "| east | ops/a.v1.0.0 | a | 1.0.0 | stable | 4.20 | yes | upgrade to 1.1.0 | 1.1.0 | maximum supported OCP version for ops/a.v1.0.0 is 4.20 |"
        in (first["report_markdown"])
    )
    assert first["report"]["operators"][0]["block_reason"] == "- maximum supported OCP version for ops/a.v1.0.0 is 4.20"  # OLM's line, as is
    again = run(args)
    assert again["changed"] is False
    assert run(args, check_mode=True)["changed"] is False


def test_refused_input_fails_with_the_reason(run, tmp_path):
    result = run({"plans": [{"cluster": "east", "plan": dict(PLAN, verdict="maybe")}], "dest": str(tmp_path)})
    assert result["failed"] is True and "plans[0] (east): unknown verdict maybe (expected blocked" in result["msg"]
    assert list(tmp_path.iterdir()) == []
