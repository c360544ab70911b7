"""The mirror_select filter through ansible-playbook (a process of its own: filter plugins import Ansible's controller
code, which the unit suite's in-process module runs refuse): its name, its keyword options, and a refused input
failing the task with the reason. The selection itself: tests/unit/plugins/module_utils/olm/test_mirror_select.py."""

import json
import os
import subprocess
import sys

import yaml
from lib.runners import ansible_env

EAST = {"changed": False, "operators": [{"package": "a", "present": True, "installed_version": "1.2.0", "subscription": {"source": "cat"}}]}
WEST = {
    "changed": False,
    "operators": [{"package": "a", "present": True, "installed_version": "1.0.1", "subscription": {"source": "cat"}}],
    "cluster_extensions": [{"name": "b", "package": "b", "installed_version": "0.3.0"}],
}


def _play(tmp_path, results, *expressions):
    """One task per expression, each writing its value to out<index>.json."""
    (tmp_path / "results.json").write_text(json.dumps({"results_in": results}))
    tasks = [
        {"name": f"Select {index}", "ansible.builtin.copy": {"content": "{{ " + expression + " | to_json }}", "dest": str(tmp_path / f"out{index}.json")}}
        for index, expression in enumerate(expressions)
    ]
    play = [{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play))
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@results.json", "play.yml"]
    env = dict(ansible_env(tmp_path), ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120, check=False)  # noqa: S603


def test_the_filter_through_ansible(tmp_path):
    proc = _play(
        tmp_path,
        [EAST, WEST],
        "results_in | kubeforge.operators.mirror_select",
        "results_in | kubeforge.operators.mirror_select(cluster_extensions=false, sources=['cat'])",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads((tmp_path / "out0.json").read_text()) == {
        "packages": [{"name": "a", "installed_version": "1.0.1"}, {"name": "b", "installed_version": "0.3.0"}]
    }
    assert json.loads((tmp_path / "out1.json").read_text()) == {"packages": [{"name": "a", "installed_version": "1.0.1"}]}


def test_a_refused_input_fails_the_task_with_the_reason(tmp_path):
    proc = _play(tmp_path, [EAST, {"failed": True, "msg": "Unauthorized", "item": "west"}], "results_in | kubeforge.operators.mirror_select")
    assert proc.returncode != 0
    assert "mirror_select: results[1] (west) failed (Unauthorized): the mirror would miss what that cluster runs" in proc.stdout + proc.stderr
    assert not (tmp_path / "out0.json").exists()
