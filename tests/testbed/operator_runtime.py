"""ansible-operator (operator-framework/ansible-operator-plugins) as a local process of the testbed.

It runs a watches file with the Python runtime of this repository's virtualenv (ansible-runner and the
ansible-runner-http event plugin, pinned in requirements-dev.txt) and is authenticated with a token of a
ServiceAccount - the operator's own, as its CSV declares it - through a kubeconfig, so whatever a reconcile does is
done with that ServiceAccount's RBAC. Everything binds to loopback: the health probe on a free 127.0.0.1 port,
metrics off, and ansible-operator's own proxy on localhost:8888, a fixed port (the kubeconfig it hands each
ansible-runner run names http://localhost:8888), so one ansible-operator runs at a time.
"""

import base64
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Optional

from lib.polling import PollTimeout, poll_until

from testbed import procs
from testbed.errors import TestbedError

NAME = "ansible-operator"
PROXY_PORT = 8888
TOKEN_DURATION = "24h"


class OperatorRuntimeError(TestbedError):
    """ansible-operator did not start or stop as asked."""


def binary(bins: Path, version: str) -> Path:
    return bins / f"ansible-operator-{version}"


def running(bed) -> bool:
    record = bed.state.get("processes", {}).get(NAME)
    return bool(record) and procs.alive(record["pid"], record["binary"])


def _kubeconfig(bed, token: str) -> dict:
    ca = base64.b64encode(bed.pki.path("ca.crt").read_bytes()).decode()
    server = f"https://127.0.0.1:{bed.state['ports']['apiserver']}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "testbed", "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": "operator", "user": {"token": token}}],
        "contexts": [{"name": "testbed", "context": {"cluster": "testbed", "user": "operator"}}],
        "current-context": "testbed",
    }


def _ready(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as response:  # noqa: S310 - loopback
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def start(
    bed,
    bins: Path,
    version: str,
    watches_file: Path,
    service_account: tuple,
    collections_path: str,
    watch_namespace: str = "",
    env: Optional[dict] = None,
    timeout: float = 60.0,
) -> dict:
    """Start ansible-operator on `watches_file` as ServiceAccount (namespace, name); return its process record.

    Called with the testbed's lock held, on a running testbed. Fails with the log tail when it does not become ready.
    """
    if running(bed):
        raise OperatorRuntimeError(f"{NAME} already runs (pid {bed.state['processes'][NAME]['pid']}): stop it first")
    if procs.port_open(PROXY_PORT):
        raise OperatorRuntimeError(f"port {PROXY_PORT} is in use: ansible-operator's proxy needs it")
    program = binary(bins, version)
    if not program.is_file():
        raise OperatorRuntimeError(f"{program} is missing: run `make testbed-build`")
    work = bed.run_dir / NAME
    for sub in ("home", "tmp"):
        (work / sub).mkdir(parents=True, exist_ok=True)
    work.chmod(0o700)
    namespace, name = service_account
    token = bed.kubectl("create", "token", name, "-n", namespace, f"--duration={TOKEN_DURATION}").stdout.strip()
    kubeconfig = work / "kubeconfig"
    tmp = kubeconfig.with_suffix(".tmp")
    tmp.write_text(json.dumps(_kubeconfig(bed, token)))
    tmp.chmod(0o600)
    tmp.replace(kubeconfig)
    health = procs.free_port()
    venv_bin = str(Path(sys.executable).parent)
    full_env = {
        "KUBECONFIG": str(kubeconfig),
        "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
        "HOME": str(work / "home"),
        "TMPDIR": str(work / "tmp"),
        "ANSIBLE_COLLECTIONS_PATH": collections_path,
        # Modules run with this interpreter (kubernetes, kubernetes.core's Python side), not a discovered one.
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_LOCAL_TEMP": str(work / "tmp"),
        "ANSIBLE_NOCOLOR": "1",
        # As the operator's Deployment sets it (operator/config/manager): no fact gathering in each reconcile.
        "ANSIBLE_GATHERING": "explicit",
        "WATCH_NAMESPACE": watch_namespace,
    }
    full_env.update(env or {})
    argv = [
        str(program),
        "run",
        f"--watches-file={watches_file}",
        "--metrics-bind-address=0",
        f"--health-probe-bind-address=127.0.0.1:{health}",
        "--ansible-log-events=Tasks",
    ]
    unset = ("CI", "K8S_AUTH_KUBECONFIG", "K8S_AUTH_HOST", "K8S_AUTH_API_KEY", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
    log = bed.log_dir / f"{NAME}.log"
    offset = log.stat().st_size if log.exists() else 0
    record = procs.start(NAME, argv, bed.log_dir, env=full_env, unset=unset)
    record.update({"log_offset": offset, "health_port": health, "watches_file": str(watches_file), "service_account": f"{namespace}/{name}"})
    bed.state.setdefault("processes", {})[NAME] = record
    bed._save_state()

    def state() -> Optional[str]:
        if _ready(health) and procs.port_open(PROXY_PORT):
            return "ready"
        return None if procs.alive(record["pid"], record["binary"]) else "exited"

    try:
        outcome = poll_until(state, timeout, interval=0.2, describe=f"{NAME} to become ready", until=lambda s: s is not None)
    except PollTimeout:
        outcome = "timed out"
    if outcome != "ready":
        detail = procs.tail(record["log"])
        stop(bed)
        raise OperatorRuntimeError(f"{NAME} did not become ready ({outcome}); last log lines:\n{detail}")
    return record


def stop(bed) -> None:
    """Stop ansible-operator (and the ansible-runner processes of its session) and wait until its port is free."""
    record = bed.state.get("processes", {}).pop(NAME, None)
    if record is None:
        return
    procs.stop(record)
    bed._save_state()
    try:
        poll_until(lambda: not procs.port_open(PROXY_PORT), 30, interval=0.2, describe=f"port {PROXY_PORT} to close")
    except PollTimeout:
        raise OperatorRuntimeError(f"port {PROXY_PORT} still open after {NAME} stopped") from None
