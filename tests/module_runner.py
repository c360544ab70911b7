"""Run one module of this collection the way Ansible runs it locally, without a playbook (integration tests)."""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLLECTIONS_DIR = os.path.join(ROOT, ".build", "collections")


def module_runner(tmp_path):
    """``run(name, args, check_mode=False, diff=False, env=None) -> result dict``: one module of this collection run
    the way Ansible runs it locally (a Python process reading ANSIBLE_MODULE_ARGS, JSON result on stdout), without a
    playbook around it; ``tmp_path`` holds the argument files. ``result["failed"]`` tells failure."""

    def run(name, args, check_mode=False, diff=False, env=None, timeout=900):
        module_args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff, _ansible_tmpdir=str(tmp_path))
        args_file = tmp_path / f"{name}-args.json"
        args_file.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": module_args}))
        run_env = dict(os.environ, PYTHONPATH=COLLECTIONS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
        if env is not None:
            run_env.update(env)
        proc = subprocess.run(  # noqa: S603
            [sys.executable, "-m", f"ansible_collections.kubeforge.operators.plugins.modules.{name}", str(args_file)],
            capture_output=True,
            text=True,
            env=run_env,
            timeout=timeout,
            check=False,
        )
        try:
            return json.loads(proc.stdout)
        except ValueError:
            raise AssertionError(f"module {name} printed no JSON (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}") from None

    return run
