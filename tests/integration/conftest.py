"""Session fixtures for tests against the real testbed processes, and ways to run the collection's modules."""

import functools
import json
import os
import subprocess
import sys

import pytest
from lib.runners import COLLECTIONS_DIR, ansible_env, run_module_subprocess
from lib.scheduling import COSTS_FILE, DEFAULT_UNIT_COST, Timeline, unit_costs, unit_of


def pytest_addoption(parser):
    parser.addoption(
        "--timeline",
        metavar="FILE",
        help="write each test's worker, start and stop (seconds since the epoch) and outcome to FILE as JSON "
        "(`python -m lib.scheduling summary FILE` summarises it; `make smoke-costs` makes the unit costs of it)",
    )


def pytest_configure(config):
    if config.getoption("timeline") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(Timeline(config.getoption("timeline")), "kubeforge-timeline")
    config.addinivalue_line("markers", "testbed: needs the running testbed (real control plane, KWOK, OLM, opm)")
    config.addinivalue_line(
        "markers",
        "exclusive: must run with nothing else on the testbed (it restarts a testbed process, or counts what every "
        "client does); `make smoke` runs these after the parallel part, with `-m exclusive`",
    )


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadgroup`` by file: each test file is one work unit (its module fixtures are set up once, its tests run
    in order on one worker), and files that name the same ``xdist_group`` in their ``pytestmark`` (cluster-wide state
    they share: a CRD, a ClusterCatalog name, the operator's fixed port) are one unit together.

    Our own scheduler, because pytest-xdist 3.8 marks a group by appending it to the test's node id, which pytest 9
    no longer lets a plugin change: its ``loadgroup`` silently schedules test by test there."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    root = config.rootpath
    costs = unit_costs(root / COSTS_FILE)

    class FileGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return unit_of(root, nodeid)

        def _assign_work_unit(self, node):
            # Longest unit first (costs measured by `make smoke-costs`): xdist's own order (most tests first) left one
            # worker running a long unit long after the others had finished.
            self.workqueue.move_to_end(max(self.workqueue, key=lambda unit: costs.get(unit, DEFAULT_UNIT_COST)), last=False)
            super()._assign_work_unit(node)

        def _reschedule(self, node):
            # A worker holds back its last test until it knows the next one (for fixture teardown), so "one pending"
            # means idle; xdist asks for more at two, committing a unit to a worker that is still busy.
            if node not in self.registered_collections:
                return  # a worker that replaces a crashed one gets work once its collection is in
            if not node.shutting_down and self.workqueue and self._pending_of(self.assigned_work.get(node, {})) > 1:
                return
            super()._reschedule(node)

    return FileGroupScheduling(config, log)


@pytest.fixture(scope="session")
def testbed():
    """The running testbed: reused when one is up, else brought up (and then torn down at the end)."""
    from testbed import Testbed

    bed = Testbed()
    reused = bed.is_running()
    if not reused:
        if os.environ.get("PYTEST_XDIST_WORKER"):
            # Each worker would bring up (and the first to finish tear down) the testbed the others use.
            pytest.fail("pytest-xdist workers share one testbed, started before them: run `make smoke` (it starts one) or `make testbed-up`")
        bed.up(nodes=int(os.environ.get("KUBEFORGE_TESTBED_NODES", "3")))
    yield bed
    if not reused and os.environ.get("KUBEFORGE_TESTBED_KEEP") != "1":
        bed.down()


@pytest.fixture(scope="session")
def olmv1(testbed):
    """OLM v1 (catalogd + operator-controller) on the testbed, started on first use (it stops with the testbed).

    A dict: version, system_namespace, pull_secret (+ pull_secret_namespace), catalogd_address, catalogd_ca_file (the
    testbed CA: ClusterCatalog status.urls.base is https://<catalogd_address>/catalogs/<name>), catalogd_webhook,
    service_accounts, up_seconds, registry (host), registry_ca_file, registry_username, registry_password."""
    facts = dict(testbed.ensure_olmv1())
    registry = testbed.state["registry"]
    with open(registry["password_file"]) as handle:
        password = handle.read().strip()
    facts.update(registry=registry["host"], registry_ca_file=registry["ca_file"], registry_username=registry["username"], registry_password=password)
    return facts


class OperatorProcess:
    """A running ansible-operator of the testbed (see testbed/operator_runtime.py)."""

    def __init__(self, bed, watches_file, service_account, watch_namespace):
        # This collection, then kubernetes.core from the `ansible` package in site-packages.
        collections = os.pathsep.join([COLLECTIONS_DIR] + [p for p in sys.path if p.endswith("site-packages")])
        self.bed, self.args = bed, (watches_file, service_account, collections, watch_namespace)
        self.record = bed.start_operator(*self.args)

    def restart(self):
        self.bed.stop_operator()
        self.record = self.bed.start_operator(*self.args)

    def stop(self):
        self.bed.stop_operator()

    def log_text(self):
        """What this process logged (the log file is shared with earlier runs)."""
        with open(self.record["log"], encoding="utf-8", errors="replace") as handle:
            handle.seek(self.record.get("log_offset", 0))
            return handle.read()


@pytest.fixture(scope="session")
def ansible_operator(testbed):
    """``start(watches_file, service_account=(namespace, name), watch_namespace="") -> OperatorProcess``: the real
    ansible-operator running a watches file as that ServiceAccount, with this collection on its collections path;
    stopped at the end of the session (one runs at a time: its proxy port is fixed)."""

    def start(watches_file, service_account, watch_namespace=""):
        return OperatorProcess(testbed, str(watches_file), tuple(service_account), watch_namespace)

    yield start
    testbed.stop_operator()


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


@pytest.fixture
def run_playbook(tmp_path):
    """``run_playbook(text, extra_vars, env=None) -> (returncode, output)``: ansible-playbook of the venv on
    localhost, with this collection and kubernetes.core on the collections path, the variables passed as a JSON
    file and ``env`` added to the environment."""

    def run(text, extra_vars, timeout=300, env=None):
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
            env=dict(ansible_env(tmp_path), **(env or {})),
            timeout=timeout,
            check=False,
        )
        return proc.returncode, proc.stdout + proc.stderr

    return run


@pytest.fixture
def run_module(tmp_path):
    """``run_module(name, args, check_mode=False, diff=False, env=None, timeout=900) -> result dict``: the module in a
    process of its own (lib.runners.run_module_subprocess), its argument files in ``tmp_path``."""
    return functools.partial(run_module_subprocess, tmp_path)
