"""Ways to run one module of this collection in tests, named after where it runs.

``run_module_in_process``: the module's ``main()`` in the test's own process (unit tests; fakes can be patched in).
``run_module_subprocess`` / ``start_module_subprocess``: a Python process of its own reading ANSIBLE_MODULE_ARGS, the
way Ansible runs a module locally, without a playbook (integration tests). ``ansible_env``: the environment for
ansible-playbook runs. ``module_params``: a module's params as AnsibleModule gives them to its core (for calling the
core directly).
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLLECTIONS_DIR = str(ROOT / ".build" / "collections")


def module_params(argspec, **given):
    """Every option of ``argspec`` at its default (None without one), then ``given``: the params AnsibleModule hands
    to a module's core."""
    params = {name: option.get("default") for name, option in argspec.items()}
    params.update(given)
    return params


def run_module_in_process(module, args, capsys, check_mode=False, diff=False):
    """Run ``module.main()`` in this process with ``args`` as its arguments; return the JSON result it printed
    (``exit_json`` and ``fail_json`` alike: a failure has ``failed: true``). ``capsys`` is pytest's fixture."""
    import pytest
    from ansible.module_utils import _internal as ansible_internal
    from ansible.module_utils.common.warnings import _global_deprecations, _global_warnings
    from ansible.module_utils.testing import patch_module_args

    if check_mode:
        args = dict(args, _ansible_check_mode=True)
    if diff:
        args = dict(args, _ansible_diff=True)
    # importing controller code (ansible.parsing, ansible.plugins, ...) sends module warnings to Display instead
    assert not ansible_internal.is_controller, "an earlier test imported Ansible controller code"
    # Ansible keeps warnings and deprecations in module-global lists: one module run must not see another's
    _global_warnings.clear()
    _global_deprecations.clear()
    with patch_module_args(args):
        with pytest.raises(SystemExit):
            module.main()
    return json.loads(capsys.readouterr().out)


def module_process_env(env=None):
    """This process's environment with the collection importable, plus ``env``."""
    run_env = dict(os.environ, PYTHONPATH=COLLECTIONS_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    run_env.update(env or {})
    return run_env


def _module_command(args_file, name, args, check_mode, diff):
    module_args = dict(args, _ansible_check_mode=check_mode, _ansible_diff=diff, _ansible_tmpdir=str(Path(args_file).parent))
    Path(args_file).write_text(json.dumps({"ANSIBLE_MODULE_ARGS": module_args}))
    return [sys.executable, "-m", f"ansible_collections.kubeforge.operators.plugins.modules.{name}", str(args_file)]


def run_module_subprocess(workdir, name, args, check_mode=False, diff=False, env=None, timeout=900):
    """Run module ``name`` of this collection in a process of its own and return its result dict
    (``result["failed"]`` tells failure); ``workdir`` holds the argument files, ``env`` is added to the environment."""
    proc = subprocess.run(  # noqa: S603
        _module_command(Path(workdir) / f"{name}-args.json", name, args, check_mode, diff),
        capture_output=True,
        text=True,
        env=module_process_env(env),
        timeout=timeout,
        check=False,
    )
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"module {name} printed no JSON (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}") from None


def start_module_subprocess(workdir, name, args, stdout=subprocess.PIPE, stderr=subprocess.PIPE):
    """Start module ``name`` in a process of its own and return the running ``subprocess.Popen`` (text mode): for
    tests that act while it runs (kill it, restart the API server)."""
    # an arguments file of its own: the synchronous runs of the same test write theirs meanwhile
    _handle, args_file = tempfile.mkstemp(prefix=f"{name}-", suffix="-background-args.json", dir=str(workdir))
    os.close(_handle)
    return subprocess.Popen(  # noqa: S603
        _module_command(args_file, name, args, False, False),
        stdout=stdout,
        stderr=stderr,
        text=True,
        env=module_process_env(),
    )


def ansible_env(tmp_path):
    """Environment for Ansible runs: this collection and kubernetes.core on the collections path, private temp dirs
    (also ``TMPDIR``: a module killed by a test leaves its unpacked payload there, not in the machine's /tmp)."""
    env = dict(os.environ)
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    site = [p for p in sys.path if p.endswith("site-packages")]
    env.update(
        {
            "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join([COLLECTIONS_DIR] + site),
            "ANSIBLE_LOCAL_TEMP": str(tmp_path / "atmp"),
            "ANSIBLE_REMOTE_TEMP": str(tmp_path / "rtmp"),
            "TMPDIR": str(tmp),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        }
    )
    return env
