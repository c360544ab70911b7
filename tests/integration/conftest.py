"""Session fixtures for tests against the real testbed processes, and ways to run the collection's modules."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS_DIR = os.path.join(ROOT, ".build", "collections")


def pytest_configure(config):
    config.addinivalue_line("markers", "testbed: needs the running testbed (real control plane, KWOK, OLM, opm)")


@pytest.fixture(scope="session")
def testbed():
    """The running testbed: reused when one is up, else brought up (and then torn down at the end)."""
    from testbed import Testbed

    bed = Testbed()
    reused = bed.is_running()
    if not reused:
        bed.up(nodes=int(os.environ.get("KUBEFORGE_TESTBED_NODES", "3")))
    yield bed
    if not reused and os.environ.get("KUBEFORGE_TESTBED_KEEP") != "1":
        bed.down()


@pytest.fixture(scope="session")
def kubeconfig(testbed):
    return testbed.kubeconfig


@pytest.fixture(scope="session")
def api(kubeconfig):
    from testbed.kube import api_client

    client = api_client(kubeconfig, pool=8)
    yield client
    client.close()


@pytest.fixture
def namespace(api, request):
    """A fresh namespace per test, deleted afterwards (no waiting for finalization)."""
    from kubernetes import client

    core = client.CoreV1Api(api)
    name = "t-" + request.node.name.lower().replace("_", "-").replace("[", "-").replace("]", "")[:40].strip("-") + "-" + os.urandom(3).hex()
    core.create_namespace({"metadata": {"name": name}})
    yield name
    core.delete_namespace(name)


def ansible_env(tmp_path):
    """Environment for Ansible runs: this collection and kubernetes.core on the collections path, private temp dirs."""
    env = dict(os.environ)
    site = [p for p in sys.path if p.endswith("site-packages")]
    env.update(
        {
            "ANSIBLE_COLLECTIONS_PATH": os.pathsep.join([COLLECTIONS_DIR] + site),
            "ANSIBLE_LOCAL_TEMP": str(tmp_path / "atmp"),
            "ANSIBLE_REMOTE_TEMP": str(tmp_path / "rtmp"),
            "ANSIBLE_NOCOLOR": "1",
            "ANSIBLE_RETRY_FILES_ENABLED": "0",
            "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
        }
    )
    return env


@pytest.fixture
def run_playbook(tmp_path):
    """``run_playbook(text, extra_vars) -> (returncode, output)``: ansible-playbook of the venv on localhost, with
    this collection and kubernetes.core on the collections path and the variables passed as a JSON file."""

    def run(text, extra_vars, timeout=300):
        playbook = tmp_path / "play.yml"
        playbook.write_text(text)
        (tmp_path / "vars.json").write_text(json.dumps(dict(extra_vars, ansible_python_interpreter=sys.executable)))
        proc = subprocess.run(
            [
                os.path.join(os.path.dirname(sys.executable), "ansible-playbook"),
                "-i",
                "localhost,",
                "-c",
                "local",
                "-e",
                "@" + str(tmp_path / "vars.json"),
                str(playbook),
            ],
            capture_output=True,
            text=True,
            env=ansible_env(tmp_path),
            timeout=timeout,
            check=False,
        )
        return proc.returncode, proc.stdout + proc.stderr

    return run


@pytest.fixture
def run_module(tmp_path):
    """``run_module(name, args, check_mode=False, diff=False, env=None) -> result dict``: one module of this
    collection run the way Ansible runs it locally (a Python process reading ANSIBLE_MODULE_ARGS, JSON result on
    stdout), without a playbook around it. ``result["failed"]`` tells failure."""

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
