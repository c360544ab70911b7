"""Bring the testbed up, report on it, and tear it down.

Processes: etcd (data on tmpfs), kube-apiserver (RBAC, Pod Security admission, generated PKI, front-proxy
config for aggregated APIs, an audit log of the bench user), kube-controller-manager, kube-scheduler, kwok
(default stages + marked-image stages), OLM's olm and catalog operators, OLM's packageserver (the
PackageManifest API, through the aggregator), and `opm serve` for the test catalog; on demand, OLM v1's catalogd
and operator-controller (olmv1.py). All bind or are reached on 127.0.0.1.
State (pids, ports, paths) is kept in <run>/state.json so another process can reuse or stop it.
"""

import base64
import contextlib
import fcntl
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional

from lib.polling import PollTimeout, poll_until

from testbed import catalog, config, olmv1, operator_runtime, procs, realnode, scc_admission
from testbed.errors import TestbedError
from testbed.pki import BENCH_USER, FRONT_PROXY_CLIENT_CN, PACKAGESERVER_SERVICE, Pki
from testbed.registry import LocalRegistry, RegistryError

# Component start order; teardown runs it backwards. OLM v1's processes (last) only run after ensure_olmv1().
# The `opm serve` of serve_catalog().
EXTRA_CATALOG = "opm-extra"
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "olm", "catalog", scc_admission.NAME)
COMPONENTS += ("packageserver", "opm", "registry") + realnode.PROCESSES
COMPONENTS += olmv1.PROCESSES
# Started on demand (serve_catalog, start_operator), stopped with the testbed.
COMPONENTS += (EXTRA_CATALOG, operator_runtime.NAME)
# Binaries the testbed runs (scripts/build.sh builds them all).
BINARIES = (
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
    "kwok",
    "olm",
    "catalog",
    "package-server",
    "opm",
    scc_admission.binary_name(),
    "kubelet",
    "kube-proxy",
    realnode.programs_binary_name(),
    realnode.coredns_binary_name(),
    "grpc_health_probe",
    "copy-content",
    "cpb",
) + olmv1.PROCESSES
# Starts of a component whose free port another process took before it bound it.
PORT_ATTEMPTS = 3
# How restart() sees a component serving again: its port in state["ports"], or the port upstream hard-codes.
SERVING_PORTS = {
    "etcd": "etcd",
    "kube-apiserver": "apiserver",
    "kube-controller-manager": "kcm",
    "kube-scheduler": "scheduler",
    "kwok": "kwok",
    "olm": 8080,
    "catalog": 8443,
    "packageserver": "packageserver",
    "opm": "opm",
    "registry": "registry",
    "catalogd": "olmv1_catalogd",
    scc_admission.NAME: scc_admission.NAME,
    "operator-controller": "olmv1_operator_controller_health",
}
PACKAGES_API = "v1.packages.operators.coreos.com"
# Clients whose informers a kube-apiserver restart can leave backed off for minutes: they reach the new API server
# before it has loaded its RBAC caches (no load balancer holds them back until /readyz), get 403 Forbidden and back
# off; OLM's catalog operator then saw a new CatalogSource 48 s late. restart_api_clients() restarts them.
CONTROL_PLANE_CLIENTS = ("kube-controller-manager", "kube-scheduler")
ADDON_CLIENTS = ("olm", "catalog", scc_admission.NAME, "packageserver", "catalogd", "operator-controller")
API_CLIENTS = CONTROL_PLANE_CLIENTS + ADDON_CLIENTS
# Where client-go's rest.InClusterConfig reads a service account token and CA (a constant upstream).
IN_CLUSTER_SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# Runs in packageserver's private mount namespace: makes IN_CLUSTER_SA_DIR show the testbed's token and CA
# (on a tmpfs when the path does not exist on the host), then becomes packageserver. The host's mounts and
# files stay untouched: every mount here lives and dies with that namespace.
_SA_MOUNT_SCRIPT = """set -eu
sa=$1 target=$2 base=$3
shift 3
if [ "$base" != "$target" ]; then
  mount -t tmpfs -o mode=0755,size=1m kubeforge-testbed-sa "$base"
  mkdir -p "$target"
fi
mount --bind "$sa" "$target"
if [ -n "${KUBEFORGE_TESTBED_RESOLV_CONF:-}" ]; then mount --bind "$KUBEFORGE_TESTBED_RESOLV_CONF" /etc/resolv.conf; fi
exec "$@"
"""
# Runs in the private mount namespace of a process that resolves cluster names (OLM's): /etc/resolv.conf shows the
# testbed's (CoreDNS on the real node's bridge), then it becomes the process.
_RESOLV_SCRIPT = """set -eu
mount --bind "$1" /etc/resolv.conf
shift
exec "$@"
"""


def _unshare() -> list:
    """A private mount namespace: as root that is enough; otherwise an unprivileged user namespace maps us to root."""
    if os.geteuid() != 0:
        return ["unshare", "--user", "--map-root-user", "--mount", "--propagation", "private"]
    return ["unshare", "--mount", "--propagation", "private"]


# Audit policy: Metadata for the bench user's requests (one event per request: RequestReceived is omitted,
# watches add ResponseStarted), nothing for anybody else.
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived"],
    "rules": [{"level": "Metadata", "users": [BENCH_USER]}, {"level": "None"}],
}
BENCH_BINDING = "kubeforge-testbed-bench-cluster-admin"
SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local"
# The KWOK stage (data/stages/) that keeps pods of the crash-loop images in CrashLoopBackOff.
CRASHLOOP_STAGE_FILE = "pod-crashloop.yaml"


def _log(msg: str) -> None:
    print("[testbed {}] {}".format(time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def build(quiet: bool = False) -> Path:
    """Build (or reuse from the cache) every binary; returns the bin directory."""
    result = subprocess.run(  # noqa: S603
        ["bash", str(config.BUILD_SCRIPT)], stdout=subprocess.PIPE, stderr=None if not quiet else subprocess.DEVNULL, text=True, check=False
    )
    if result.returncode != 0:
        raise TestbedError(f"testbed build failed (exit {result.returncode}); see the output above")
    return Path(result.stdout.strip().splitlines()[-1])


def bin_dir() -> Path:
    out = subprocess.run(["bash", str(config.BUILD_SCRIPT), "--print-bin"], stdout=subprocess.PIPE, text=True, check=True)  # noqa: S603
    return Path(out.stdout.strip())


def gomodcache() -> Path:
    return Path(subprocess.run(["go", "env", "GOMODCACHE"], stdout=subprocess.PIPE, text=True, check=True).stdout.strip())  # noqa: S603


def _versions(bin_path: Path) -> dict[str, str]:
    names = ("kubernetes", "etcd", "kwok", "olm", "opm", "go", "olmv1", "ansible_operator")
    values = (bin_path / "VERSIONS").read_text().split()
    return dict(zip(names, values))


def parse_audit_events(data: bytes) -> list[tuple[str, str, int]]:
    """(verb, requestURI, code) per request from JSON-lines audit events; see Testbed.audit_requests()."""
    requests: dict[str, tuple[str, str, int]] = {}
    for line in data.splitlines():
        if not line.strip():
            continue
        event = json.loads(line)
        stage, verb = event.get("stage"), event.get("verb", "")
        if stage == "ResponseComplete" and verb == "watch":
            continue  # counted at its ResponseStarted (possibly in an earlier window)
        if stage not in ("ResponseStarted", "ResponseComplete") or event["auditID"] in requests:
            continue
        requests[event["auditID"]] = (verb, event.get("requestURI", ""), int(event.get("responseStatus", {}).get("code", 0)))
    return list(requests.values())


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=3) as resp:  # noqa: S310 - a testbed address
            return resp.status == 200
    except (OSError, ValueError):
        return False


def pki_user(cert: str) -> str:
    """The user name (CN) of a testbed client certificate."""
    from testbed.pki import CERTS

    return CERTS[cert][1]


class Testbed:
    """One testbed instance, described by its run directory."""

    # The cluster and context name of its kubeconfigs.
    context_name = "testbed"
    # The process name of serve_catalog()'s `opm serve` (then `-<name>` for a named catalog).
    EXTRA_CATALOG = EXTRA_CATALOG
    # Whether its OLM operators own the health ports upstream hard-codes (:8080, :8443): the main cluster's do.
    health_ports = True

    def __init__(self, run_dir: Optional[Path] = None):
        self.run_dir = Path(run_dir or config.RUN_DIR)
        self.state_file = self.run_dir / "state.json"
        self.log_dir = self.run_dir / "logs"
        self.pki = Pki(self.run_dir / "pki")
        self.state: dict = self._load_state()

    # ----------------------------------------------------------------- state
    def _load_state(self) -> dict:
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return {}

    def _save_state(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=2, sort_keys=True))
        tmp.replace(self.state_file)

    @property
    def kubeconfig(self) -> str:
        return str(self.run_dir / "kubeconfig")

    @property
    def catalog_address(self) -> str:
        return f"127.0.0.1:{self.state['ports']['opm']}"

    def processes(self) -> list[dict]:
        """Every process record, in start order (COMPONENTS, then the catalogs serve_catalog() named)."""
        running = self.state.get("processes", {})
        return [running[n] for n in COMPONENTS if n in running] + [running[n] for n in sorted(running) if n not in COMPONENTS]

    # ---------------------------------------------------------------- status
    def status(self) -> dict:
        procs_status = {r["name"]: procs.alive(r["pid"], r["binary"]) for r in self.processes()}
        ready = bool(procs_status) and all(procs_status.values()) and self._apiserver_ready()
        return {
            "running": ready,
            "processes": procs_status,
            "kubeconfig": self.kubeconfig if self.state else None,
            "catalog_address": self.catalog_address if self.state.get("ports") else None,
            "packageserver": f"https://127.0.0.1:{self.state['ports']['packageserver']}" if self.state.get("ports", {}).get("packageserver") else None,
            "olmv1": olmv1.facts(self) if self.state.get("olmv1") else None,
            "bench_kubeconfig": self.state.get("bench_kubeconfig"),
            "audit_log": self.state.get("audit_log"),
            "nodes": self.state.get("nodes"),
            "real_node": self.state.get("real_node", {}).get("name"),
            "real_node_images": self.state.get("real_node", {}).get("images"),
            "versions": self.state.get("versions"),
            "rss_mib": self.rss_mib(),
            "members": self._members_status(),
        }

    def _members_status(self) -> dict:
        from testbed import members

        return members.status(self)

    def is_running(self) -> bool:
        return bool(self.state) and self.status()["running"]

    def rss_mib(self) -> dict[str, float]:
        """Resident memory of each testbed process (MiB), read from /proc."""
        result = {}
        for record in self.processes():
            try:
                with open(f"/proc/{record['pid']}/status") as status:
                    for line in status:
                        if line.startswith("VmRSS:"):
                            result[record["name"]] = round(int(line.split()[1]) / 1024.0, 1)
            except OSError:
                continue
        return result

    def _ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.pki.path("ca.crt")))
        ctx.load_cert_chain(str(self.pki.path("admin.crt")), str(self.pki.path("admin.key")))
        return ctx

    def _apiserver_ready(self) -> bool:
        port = self.state.get("ports", {}).get("apiserver")
        return bool(port) and self._https_ok(port, "/readyz")

    # -------------------------------------------------------------------- up
    @contextlib.contextmanager
    def _exclusive(self):
        """Serialise every change of the state between processes (pytest-xdist workers, molecule and the CLI share one
        testbed), then reload the state. Re-entrant: a locked step may call another (up() scales the nodes)."""
        if getattr(self, "_lock_depth", 0):
            self._lock_depth += 1
            try:
                yield
            finally:
                self._lock_depth -= 1
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self.run_dir / ".lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            self._lock_depth = 1
            try:
                self.state = self._load_state()
                yield
            finally:
                self._lock_depth = 0
                fcntl.flock(handle, fcntl.LOCK_UN)

    def up(
        self, nodes: int = 3, with_scc: bool = True, build_first: bool = True, olmv1: bool = False, scc_admission: bool = True, real_node: bool = True
    ) -> dict:
        """Start everything (reusing a running testbed) and return status(); raises TestbedError.

        `olmv1`: also start OLM v1 (catalogd, operator-controller), as ensure_olmv1() does.
        `scc_admission`: enforce SCCs with OpenShift's admission (scc_admission.py); needs `with_scc`.
        `real_node`: join a real kubelet node (realnode.py); needs root, containerd, runc and the CNI plugins."""
        with self._exclusive():
            status = self._up(nodes, with_scc, build_first, scc_admission and with_scc, real_node)
            if not olmv1:
                return status
            self._ensure_olmv1()
            return self.status()

    def ensure_members(self, count: int, nodes: int = 3, olmv1: bool = False) -> list:
        """Member clusters member-1..member-<count> beside this one (members.py), started side by side where they do
        not run, with OLM v1 too when `olmv1`; returns their facts (name, kubeconfig, server, ...). Holds the testbed's
        lock; writes <run>/fleet/ (a kubeconfig per cluster) and the fleet's ansible-vars. Raises TestbedError."""
        from testbed import members

        with self._exclusive():
            if not self._apiserver_ready():
                raise TestbedError("the testbed is not running: run `make testbed-up` (or Testbed().up()) first")
            facts = members.ensure(self, count, nodes, olmv1)
            self.fleet_catalog_address()
            self._write_ansible_vars()
            return facts

    def ensure_openshift_member(self, name: str = "", release: str = "4.20.0", nodes: int = 1) -> dict:
        """Member cluster `name` (default members.OPENSHIFT_MEMBER, `ocp-1`) running as an OpenShift `release` as far
        as OLM v0 can tell: config.openshift.io's ClusterOperator, ClusterVersion, Proxy and APIServer served, and its
        olm operator writing ClusterOperator operator-lifecycle-manager (`Upgradeable`: OLM's verdict on the next
        minor) for RELEASE_VERSION=`release`. Started again when it runs with another release; returns its facts
        (those of ensure_members() plus openshift_release and cluster_operator). Raises TestbedError."""
        from testbed import members

        with self._exclusive():
            if not self._apiserver_ready():
                raise TestbedError("the testbed is not running: run `make testbed-up` (or Testbed().up()) first")
            facts = members.ensure_openshift(self, name or members.OPENSHIFT_MEMBER, release, nodes)
            self._write_ansible_vars()
            return facts

    def stop_member(self, name: str) -> None:
        """Stop member cluster `name` (holds the testbed's lock; nothing when it has no state)."""
        from testbed import members

        with self._exclusive():
            members.stop_one(self, name)
            self._write_ansible_vars()

    def fleet_catalog_address(self) -> str:
        """The address of kube-fleet's catalog (fleet_catalog.py), served to every cluster of the testbed; started on
        first use (ensure_members() starts it too)."""
        from testbed import fleet_catalog

        with self._exclusive():
            return fleet_catalog.serve(self)

    def member(self, name: str):
        """The running member cluster `name` (a Testbed of its own: kubectl, restart, stopped, ...)."""
        from testbed import members

        for member in members.running(self):
            if member.name == name:
                return member
        raise TestbedError(f"no running member cluster {name!r}: start it with ensure_members()")

    def stop_members(self) -> None:
        """Stop every member cluster (holds the testbed's lock)."""
        from testbed import members

        with self._exclusive():
            members.stop_all(self)
            self._write_ansible_vars()

    def ensure_olmv1(self) -> dict:
        """Start OLM v1 (catalogd + operator-controller, see olmv1.py) on the running testbed unless it is up already.

        Idempotent; holds the testbed's lock. Returns olmv1.facts(). Raises TestbedError when the testbed is not
        running or OLM v1 does not come up (what was started of it is stopped again)."""
        with self._exclusive():
            return self._ensure_olmv1()

    def olmv1_mirrors(self, registries_conf: str = "") -> dict:
        """Start OLM v1 again with ``registries_conf`` (containers-registries.conf(5); "" for none) as what catalogd
        and operator-controller pull with - the file an OpenShift node gets from an ImageDigestMirrorSet. Holds the
        testbed's lock; returns olmv1.facts()."""
        with self._exclusive():
            olmv1.set_mirrors(self, registries_conf)
            olmv1.stop(self)
            return self._ensure_olmv1()

    def start_operator(self, watches_file: Path, service_account: tuple, collections_path: str, watch_namespace: str = "") -> dict:
        """Run ansible-operator on `watches_file` as ServiceAccount (namespace, name), see operator_runtime.py.

        Holds the testbed's lock. Raises TestbedError when the testbed is not running or the operator does not start.
        """
        with self._exclusive():
            if not self._apiserver_ready():
                raise TestbedError("the testbed is not running: run `make testbed-up` (or Testbed().up()) first")
            bins = Path(self.state["bin"])
            version = _versions(bins).get("ansible_operator")
            if not version or not operator_runtime.binary(bins, version).is_file():
                bins = build()  # a testbed started from a cache that predates ansible-operator
                version = _versions(bins)["ansible_operator"]
            try:
                return operator_runtime.start(self, bins, version, Path(watches_file), service_account, collections_path, watch_namespace)
            except operator_runtime.OperatorRuntimeError as exc:
                raise TestbedError(str(exc)) from exc

    def serve_catalog(self, fbc_dir: Path, name: str = "") -> str:
        """Serve a File-Based Catalog directory with a second `opm serve` on a free loopback port (replacing an
        earlier one of the same `name`: each name is a catalog of its own, stopped with the testbed); return its
        address for a CatalogSource's spec.address (of any cluster of the testbed, members too).

        Bundles that name an image are served with the image emptied: OLM v0 unpacks such a bundle with a Job, which
        needs a container runtime KWOK lacks; without one it installs from the olm.bundle.object properties, as for
        the testbed's own catalog (rendered from bundle directories).
        """
        process = f"{EXTRA_CATALOG}-{name}" if name else EXTRA_CATALOG
        with self._exclusive():
            old = self.state.get("processes", {}).pop(process, None)
            if old:
                procs.stop(old)
            served = self.run_dir / process / "catalog"
            if served.exists():
                shutil.rmtree(served)
            catalog.copy_without_bundle_images(Path(fbc_dir), served)
            port, pprof = procs.free_port(), procs.free_port()
            bins = Path(self.state["bin"])
            argv = [str(bins / "opm"), "serve", str(served), "-p", str(port), "-t", str(served.parent / "termination-log"), f"--pprof-addr=127.0.0.1:{pprof}"]
            self._start(process, argv)
            self._wait(f"opm serve of {fbc_dir}", lambda: procs.port_open(port), 60, process)
            self.state["processes"][process]["address"] = f"127.0.0.1:{port}"
            self._save_state()
            return f"127.0.0.1:{port}"

    def stop_catalog(self, name: str = "") -> None:
        """Stop the `opm serve` of serve_catalog(name), if any."""
        with self._exclusive():
            record = self.state.get("processes", {}).pop(f"{EXTRA_CATALOG}-{name}" if name else EXTRA_CATALOG, None)
            if record:
                procs.stop(record)
                self._save_state()

    def stop_operator(self) -> None:
        """Stop ansible-operator if it runs (its proxy port is free afterwards)."""
        with self._exclusive():
            try:
                operator_runtime.stop(self)
            except operator_runtime.OperatorRuntimeError as exc:
                raise TestbedError(str(exc)) from exc

    def _ensure_olmv1(self) -> dict:
        # OLM v1's own processes may have died (then it is started again); every other one must run.
        others = [r for r in self.processes() if r["name"] not in olmv1.PROCESSES]
        if not others or not all(procs.alive(r["pid"], r["binary"]) for r in others) or not self._apiserver_ready():
            raise TestbedError("the testbed is not running: run `make testbed-up` (or Testbed().up()) first")
        if olmv1.running(self):
            return olmv1.facts(self)
        bins = Path(self.state["bin"])
        if not all((bins / name).is_file() for name in olmv1.PROCESSES):
            bins = build()  # a testbed started from a cache that predates OLM v1
        version = _versions(bins).get("olmv1")
        if not version:
            raise TestbedError(f"{bins / 'VERSIONS'} names no OLM v1 version: run `make testbed-build`")
        try:
            facts = olmv1.start(self, bins, version, gomodcache(), error=TestbedError)
        except Exception:
            _log(f"OLM v1 did not come up; stopping it (logs in {self.log_dir})")
            olmv1.stop(self)
            raise
        self._write_ansible_vars()
        _log(f"OLM v1 {version} up in {facts['up_seconds']}s: catalogd on https://{facts['catalogd_address']}")
        return facts

    def _up(self, nodes: int, with_scc: bool, build_first: bool, enforce_scc: bool = True, real_node: bool = True) -> dict:
        if self.state and self.is_running():
            _log(f"testbed already running: reusing it ({self.kubeconfig})")
            # the variables of this checkout's code (a testbed started by an older one lacks the newer ones)
            self._write_ansible_vars()
            return self.status()
        if self.state:
            self._down()  # a stale state file: processes died (e.g. the machine restarted)
        started = time.monotonic()
        bins = build() if build_first else bin_dir()
        missing = [name for name in BINARIES if not (bins / name).exists()]
        if not (bins / ".done").exists() or missing:
            raise TestbedError("testbed binaries are not built{}: run `make testbed-build`".format(f" (missing: {', '.join(missing)})" if missing else ""))
        if real_node and realnode.unavailable_reason():
            raise TestbedError(f"{realnode.unavailable_reason()} (or bring the testbed up without it: --without-real-node)")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.pki.ensure()
        etcd_dir = config.ETCD_DATA_ROOT / (f"kubeforge-testbed-{os.getpid()}")
        self.state = {
            "bin": str(bins),
            "versions": _versions(bins),
            "etcd_data": str(etcd_dir),
            "ports": {
                k: procs.free_port() for k in ("etcd", "etcd_peer", "apiserver", "kcm", "scheduler", "kwok", "opm", "opm_pprof", "registry", "packageserver")
            },
            "audit_log": str(self.audit_log),
            "bench_kubeconfig": str(self.bench_kubeconfig),
            "processes": {},
            "nodes": 0,
        }
        self._save_state()
        # A fresh audit log per testbed: offsets into it start at 0.
        self.audit_log.unlink(missing_ok=True)
        if real_node:
            # OLM's processes resolve <service>.<namespace>.svc through CoreDNS (started later, with the real node).
            resolv = self.run_dir / "cluster-resolv.conf"
            resolv.write_text(realnode.RESOLV_CONF)
            self.state["cluster_resolv_conf"] = str(resolv)
        try:
            self._start_control_plane(bins, etcd_dir)
            self._write_kubeconfigs()
            self._start_kwok(bins)
            self.scale_nodes(nodes)
            self._install_olm(bins, with_scc)
            self.state["scc_crd"] = with_scc
            if enforce_scc:
                self._start_scc_admission(bins)
            self.state["scc_admission"] = enforce_scc
            self._start_packageserver(bins)
            self._start_opm(bins)
            self._start_registry()
            if real_node:
                self._start_real_node(bins)
            self._register_packageserver()
            if real_node:
                self._wait(f"node {realnode.NODE_NAME} Ready, kube-proxy and CoreDNS serving", self._real_node_serving, realnode.READY_TIMEOUT, "kubelet")
        except Exception:
            _log(f"bring-up failed; stopping what was started (logs kept in {self.log_dir})")
            try:
                self._down(keep_logs=True)
            except TestbedError as exc:  # report, but keep the bring-up error as the one raised
                _log(str(exc))
            raise
        self.state["up_seconds"] = round(time.monotonic() - started, 1)
        self._save_state()
        self._write_ansible_vars()
        _log("testbed up in {:.1f}s: KUBECONFIG={}".format(self.state["up_seconds"], self.kubeconfig))
        return self.status()

    def _start(self, name: str, argv: list[str], env: Optional[dict[str, str]] = None, unset: tuple = ()) -> None:
        record = procs.start(name, argv, self.log_dir, env=env, unset=unset)
        self.state["processes"][name] = record
        self._save_state()

    def _start_with_cluster_dns(self, name: str, argv: list[str], env: dict[str, str], unset: tuple) -> None:
        """Start a process that dials Services by name (OLM's): with the real node, in a private mount namespace whose
        /etc/resolv.conf names CoreDNS (the host's files stay untouched); without it, as is."""
        resolv = self.state.get("cluster_resolv_conf")
        if not resolv:
            self._start(name, argv, env=env, unset=unset)
            return
        self._start(name, _unshare() + ["--", "/bin/sh", "-c", _RESOLV_SCRIPT, name, resolv] + argv, env=env, unset=unset)
        self._await_exec(name, argv[0])

    def _await_exec(self, name: str, binary: str) -> None:
        """Guard the record of a process started through a wrapper by the binary the wrapper execs."""
        record = self.state["processes"][name]
        if not procs.wait_exec(record["pid"], binary, 10):
            raise TestbedError(f"{name} did not start (unshare needs root or unprivileged user namespaces); last log lines:\n{procs.tail(record['log'])}")
        record["binary"] = binary
        self._save_state()

    def _wait(self, what: str, check: Callable[[], bool], timeout: float, component: Optional[str] = None) -> None:
        def checked() -> bool:
            if check():
                return True
            if component:
                record = self.state["processes"][component]
                if not procs.alive(record["pid"], record["binary"]):
                    raise TestbedError("{} exited while waiting for {}; last log lines:\n{}".format(component, what, procs.tail(record["log"])))
            return False

        try:
            poll_until(checked, timeout, interval=0.2, describe=what)
        except PollTimeout:
            detail = procs.tail(self.state["processes"][component]["log"]) if component else ""
            raise TestbedError(f"timed out after {timeout}s waiting for {what}\n{detail}") from None

    def _start_control_plane(self, bins: Path, etcd_dir: Path) -> None:
        self._start_etcd(bins, etcd_dir)
        self._start_apiserver(bins, f"http://127.0.0.1:{self.state['ports']['etcd']}")
        self._start_controllers(bins)

    def _start_etcd(self, bins: Path, etcd_dir: Path) -> None:
        ports = self.state["ports"]
        etcd_dir.mkdir(parents=True, exist_ok=True)
        etcd_url = f"http://127.0.0.1:{ports['etcd']}"
        peer_url = f"http://127.0.0.1:{ports['etcd_peer']}"
        self._start(
            "etcd",
            [
                str(bins / "etcd"),
                "--name=testbed",
                f"--data-dir={etcd_dir}",
                "--listen-client-urls=" + etcd_url,
                "--advertise-client-urls=" + etcd_url,
                "--listen-peer-urls=" + peer_url,
                "--initial-advertise-peer-urls=" + peer_url,
                "--initial-cluster=testbed=" + peer_url,
                "--unsafe-no-fsync",
                "--quota-backend-bytes=8589934592",
                "--log-level=warn",
            ],
        )
        self._wait("etcd", lambda: procs.port_open(ports["etcd"]), 30, "etcd")
        _log(f"etcd ready on 127.0.0.1:{ports['etcd']} (data on {etcd_dir})")

    def _start_apiserver(self, bins: Path, etcd_url: str, etcd_prefix: Optional[str] = None, issuer: str = SERVICE_ACCOUNT_ISSUER) -> None:
        """kube-apiserver on etcd_url; a member cluster keeps its objects under its own `etcd_prefix` of the one etcd
        and signs its ServiceAccount tokens as its own `issuer` (a token of one cluster is refused by another)."""
        ports, pki = self.state["ports"], self.pki
        self._start(
            "kube-apiserver",
            [
                str(bins / "kube-apiserver"),
                "--etcd-servers=" + etcd_url,
                *([f"--etcd-prefix={etcd_prefix}"] if etcd_prefix else []),
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={ports['apiserver']}",
                f"--tls-cert-file={pki.path('apiserver.crt')}",
                f"--tls-private-key-file={pki.path('apiserver.key')}",
                f"--client-ca-file={pki.path('ca.crt')}",
                f"--service-account-key-file={pki.path('sa.pub')}",
                f"--service-account-signing-key-file={pki.path('sa.key')}",
                f"--service-account-issuer={issuer}",
                "--service-cluster-ip-range=" + config.SERVICE_CIDR,
                "--authorization-mode=Node,RBAC",
                # PodSecurity is on by default; NodeRestriction as on a kubeadm cluster. PodNodeSelector and
                # PodTolerationRestriction let a namespace put every pod made in it on the real node (its annotations,
                # see realnode.NAMESPACE_ANNOTATIONS), also the pods OLM makes (registry pods, bundle unpack Jobs).
                "--enable-admission-plugins=NodeRestriction,PodNodeSelector,PodTolerationRestriction",
                "--allow-privileged=true",
                # The endpoint reconciler would publish 127.0.0.1 as the `kubernetes` Service endpoint, which
                # Endpoints validation rejects; nothing in the testbed uses that Service.
                "--endpoint-reconciler-type=none",
                # Front proxy: the aggregator authenticates to aggregated API servers (OLM's packageserver) with
                # this client certificate and passes the user in X-Remote-* headers.
                f"--requestheader-client-ca-file={pki.path('front-proxy-ca.crt')}",
                f"--requestheader-allowed-names={FRONT_PROXY_CLIENT_CN}",
                "--requestheader-username-headers=X-Remote-User",
                "--requestheader-group-headers=X-Remote-Group",
                "--requestheader-extra-headers-prefix=X-Remote-Extra-",
                f"--proxy-client-cert-file={pki.path('front-proxy-client.crt')}",
                f"--proxy-client-key-file={pki.path('front-proxy-client.key')}",
                # The real node's kubelet authenticates and authorizes the API server's own calls (logs, exec), made
                # to its InternalIP (on the bridge; the KWOK nodes' is 127.0.0.1).
                "--kubelet-preferred-address-types=InternalIP,Hostname",
                f"--kubelet-client-certificate={pki.path('apiserver-kubelet-client.crt')}",
                f"--kubelet-client-key={pki.path('apiserver-kubelet-client.key')}",
                f"--kubelet-certificate-authority={pki.path('ca.crt')}",
                # Audit log of the bench user's requests only (see AUDIT_POLICY); no rotation within a testbed's life.
                f"--audit-policy-file={self._write_audit_policy()}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                "--audit-log-maxsize=100000",
                "--audit-log-maxbackup=1",
                "--profiling=false",
                "--v=1",
            ],
        )
        self._wait("kube-apiserver /readyz", self._apiserver_ready, 120, "kube-apiserver")
        _log(f"{self.context_name}: kube-apiserver ready on https://127.0.0.1:{ports['apiserver']}")

    def _start_controllers(self, bins: Path) -> None:
        ports, pki = self.state["ports"], self.pki
        self._write_component_kubeconfig("controller-manager")
        self._write_component_kubeconfig("scheduler")
        kcm_kc = str(self.run_dir / "controller-manager.kubeconfig")
        self._start(
            "kube-controller-manager",
            [
                str(bins / "kube-controller-manager"),
                "--kubeconfig=" + kcm_kc,
                "--authentication-kubeconfig=" + kcm_kc,
                "--authorization-kubeconfig=" + kcm_kc,
                "--bind-address=127.0.0.1",
                f"--secure-port={ports['kcm']}",
                f"--service-account-private-key-file={pki.path('sa.key')}",
                f"--root-ca-file={pki.path('ca.crt')}",
                f"--cluster-signing-cert-file={pki.path('ca.crt')}",
                f"--cluster-signing-key-file={pki.path('ca.key')}",
                "--use-service-account-credentials=true",
                "--leader-elect=false",
                # Client rate limits well above the defaults (20/30): a DaemonSet on 1000 nodes creates 1000 pods.
                "--kube-api-qps=300",
                "--kube-api-burst=600",
                "--service-cluster-ip-range=" + config.SERVICE_CIDR,
                "--allocate-node-cidrs=false",
                "--v=1",
            ],
        )
        sched_kc = str(self.run_dir / "scheduler.kubeconfig")
        self._start(
            "kube-scheduler",
            [
                str(bins / "kube-scheduler"),
                "--kubeconfig=" + sched_kc,
                "--authentication-kubeconfig=" + sched_kc,
                "--authorization-kubeconfig=" + sched_kc,
                "--bind-address=127.0.0.1",
                f"--secure-port={ports['scheduler']}",
                "--leader-elect=false",
                "--kube-api-qps=300",
                "--kube-api-burst=600",
                "--v=1",
            ],
        )

    def _kubeconfig_doc(self, user: str) -> dict:
        def b64(name: str) -> str:
            return base64.b64encode(self.pki.path(name).read_bytes()).decode()

        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": self.context_name,
                    "cluster": {"server": f"https://127.0.0.1:{self.state['ports']['apiserver']}", "certificate-authority-data": b64("ca.crt")},
                }
            ],
            "users": [{"name": user, "user": {"client-certificate-data": b64(user + ".crt"), "client-key-data": b64(user + ".key")}}],
            "contexts": [{"name": self.context_name, "context": {"cluster": self.context_name, "user": user}}],
            "current-context": self.context_name,
        }

    def _write_component_kubeconfig(self, user: str, file_name: Optional[str] = None) -> str:
        path = self.run_dir / (file_name or user + ".kubeconfig")
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self._kubeconfig_doc(user), indent=2))
        tmp.chmod(0o600)
        tmp.replace(path)
        return str(path)

    def _write_kubeconfigs(self) -> None:
        self._write_component_kubeconfig("admin", "kubeconfig")
        self._write_component_kubeconfig("kwok")
        self._write_component_kubeconfig("olm")
        self._write_component_kubeconfig("bench", self.bench_kubeconfig.name)
        # The bench user (no groups) is a cluster-admin through this one binding, made for benchmarks only.
        self._apply(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": BENCH_BINDING, "labels": {"app.kubernetes.io/managed-by": "kubeforge-testbed"}},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": BENCH_USER}],
            }
        )

    def _apply(self, *objects: dict) -> None:
        self.kubectl("apply", "-f", "-", input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": list(objects)}))

    def _write_audit_policy(self) -> Path:
        path = self.run_dir / "audit-policy.yaml"
        path.write_text(json.dumps(AUDIT_POLICY, indent=2))
        return path

    # ------------------------------------------------------------------ audit
    @property
    def audit_log(self) -> Path:
        return self.log_dir / "audit.log"

    @property
    def bench_kubeconfig(self) -> Path:
        return self.run_dir / "bench.kubeconfig"

    def audit_offset(self) -> int:
        """The audit log's current size: pass it to audit_requests() to see only the requests made after now."""
        try:
            return self.audit_log.stat().st_size
        except FileNotFoundError:
            return 0

    def audit_requests(self, since_offset: int = 0) -> list[tuple[str, str, int]]:
        """(verb, requestURI, HTTP code) of each API request the bench user made after byte `since_offset`.

        One entry per request (unique auditID), in log order: a finished request at stage ResponseComplete, a
        watch at ResponseStarted (so a watch counts when it starts, and its ResponseComplete, in this window or a
        later one, is not counted again). The log is written after the response: wait for a request to show up
        rather than expecting it the moment the client returns. Raises TestbedError when the log is shorter than
        `since_offset` (a new testbed started since).
        """
        return parse_audit_events(self._read_audit_log(since_offset))

    def _read_audit_log(self, since_offset: int) -> bytes:
        try:
            with open(self.audit_log, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                if handle.tell() < since_offset:
                    raise TestbedError(f"the audit log is shorter than offset {since_offset}: the testbed was restarted")
                handle.seek(since_offset)
                data = handle.read()
        except FileNotFoundError:
            if since_offset:
                raise TestbedError(f"no audit log at {self.audit_log}") from None
            return b""
        # A line still being written is left for the next read.
        return data[: data.rfind(b"\n") + 1]

    def kubectl(self, *args: str, input_text: Optional[str] = None, check: bool = True) -> subprocess.CompletedProcess:
        argv = [str(Path(self.state["bin"]) / "kubectl"), "--kubeconfig", self.kubeconfig] + list(args)
        result = subprocess.run(argv, input=input_text, capture_output=True, text=True, check=False)  # noqa: S603
        if check and result.returncode != 0:
            raise TestbedError("kubectl {} failed: {}".format(" ".join(args), result.stderr.strip()))
        return result

    def _start_kwok(self, bins: Path) -> None:
        kwok_src = gomodcache() / (f"sigs.k8s.io/kwok@{self.state['versions']['kwok']}")
        stage_files = [
            kwok_src / "kustomize/stage/node/fast/node-initialize.yaml",
            kwok_src / "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
            kwok_src / "kustomize/stage/pod/fast/pod-ready.yaml",
            kwok_src / "kustomize/stage/pod/fast/pod-complete.yaml",
            kwok_src / "kustomize/stage/pod/fast/pod-delete.yaml",
        ] + sorted(config.STAGES_DIR.glob("*.yaml"))
        missing = [str(p) for p in stage_files if not p.exists()]
        if missing:
            raise TestbedError(f"KWOK stage files missing (module cache incomplete?): {', '.join(missing)}")
        stages = self.run_dir / "kwok-stages.yaml"
        stages.write_text("\n---\n".join(self._stage_text(p) for p in stage_files))
        self._start(
            "kwok",
            [
                str(bins / "kwok"),
                "--kubeconfig=%s" % (self.run_dir / "kwok.kubeconfig"),
                f"--config={stages}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={config.KWOK_NODE_ANNOTATION}=fake",
                "--node-lease-duration-seconds=40",
                "--cidr=" + config.POD_CIDR,
                "--node-ip=127.0.0.1",
                f"--server-address=127.0.0.1:{self.state['ports']['kwok']}",
            ],
        )
        self._wait("kwok", lambda: procs.port_open(self.state["ports"]["kwok"]), 30, "kwok")

    def _stage_text(self, path: Path) -> str:
        """A KWOK stage file as kwok reads it; the crash-loop stage also matches the real node's crash image (which
        exits 1 at once there), so that an operator built on that image crash-loops on every node of every cluster."""
        if path.name != CRASHLOOP_STAGE_FILE:
            return path.read_text()
        import yaml

        stage = yaml.safe_load(path.read_text())
        registry_host = self.state.get("registry", {}).get("host") or f"127.0.0.1:{self.state['ports']['registry']}"
        crash = realnode.image_ref(registry_host, "crash", self.state["versions"])
        for expression in stage["spec"]["selector"]["matchExpressions"]:
            if expression["key"] == ".spec.containers.[].image":
                expression["values"] = sorted(set(expression["values"]) | {crash})
        return yaml.safe_dump(stage, sort_keys=False)

    # ------------------------------------------------------------------ nodes
    def scale_nodes(self, count: int, prefix: str = "kwok-node", labels: Optional[dict] = None, taints: Optional[list] = None) -> None:
        """Create fake KWOK nodes <prefix>-0..count-1 (existing ones are kept) and wait until all are Ready.

        By default they are untainted and labelled `type=kwok` (the label every test DaemonSet selects), and
        state.json records their number. With `labels` (replacing `type=kwok`) and `taints`, a caller makes nodes of
        its own that other workloads leave alone (a benchmark); those are not recorded in the state.
        """
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        from testbed.kube import api_client  # local import: the CLI's `build` must not need the client

        started = time.monotonic()
        core = client.CoreV1Api(api_client(self.kubeconfig, pool=32))

        role_labels = {"type": "kwok"} if labels is None else dict(labels)

        def create(i: int) -> None:
            name = f"{prefix}-{i}"
            body = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {"node.alpha.kubernetes.io/ttl": "0", config.KWOK_NODE_ANNOTATION: "fake"},
                    "labels": dict({"kubernetes.io/arch": "amd64", "kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}, **role_labels),
                },
                "status": {
                    "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                    "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                },
            }
            if taints:
                body["spec"] = {"taints": list(taints)}
            try:
                core.create_node(body)
            except ApiException as exc:
                if exc.status != 409:
                    raise

        with ThreadPoolExecutor(max_workers=16) as pool:
            list(pool.map(create, range(count)))

        seen = {"ready": 0}

        def all_ready() -> bool:
            ready = 0
            selector = ",".join(f"{key}={value}" for key, value in sorted(role_labels.items()))
            for node in core.list_node(label_selector=selector).items:
                if node.metadata.name.startswith(f"{prefix}-") and any(c.type == "Ready" and c.status == "True" for c in (node.status.conditions or [])):
                    ready += 1
            seen["ready"] = ready
            return ready >= count

        self._wait(f"{count} KWOK nodes Ready", all_ready, 120 + count * 0.3, "kwok")
        if labels is None and prefix == "kwok-node":
            # Under the lock, on a state read afresh: another process may have recorded its own processes meanwhile.
            with self._exclusive():
                # Nodes beyond `count` a bigger earlier scale made are kept: every DaemonSet still gets a pod on them.
                self.state["nodes"] = max(count, seen["ready"], self.state.get("nodes", 0))
                self.state["nodes_ready_seconds"] = round(time.monotonic() - started, 1)
                self._save_state()
        _log(f"{count} KWOK nodes Ready in {time.monotonic() - started:.1f}s")

    # -------------------------------------------------------------------- OLM
    def _install_olm(self, bins: Path, with_scc: bool) -> None:
        """OLM's CRDs, namespaces and global OperatorGroup, then its olm and catalog operators.

        Both operators bind hard-coded health ports (:8080, :8443); only the first cluster's get them. A member
        cluster's (`health_ports` False) log the bind error and run on: its olm operator is seen working by the status
        it writes on the global OperatorGroup instead."""
        health_ports = self.health_ports
        olm_src = gomodcache() / (f"github.com/operator-framework/operator-lifecycle-manager@{self.state['versions']['olm']}")
        # The chart's per-CRD files, not quickstart/crds.yaml: in v0.46.0 the quickstart file lacks the
        # OLMConfig CRD, and the olm operator then never syncs its caches.
        crds = sorted((olm_src / "deploy/chart/crds").glob("*.crd.yaml"))
        if not crds:
            raise TestbedError(f"no OLM CRDs under {olm_src / 'deploy/chart/crds'}")
        self.kubectl("create", *[arg for crd in crds for arg in ("-f", str(crd))])
        if with_scc:
            self.kubectl("create", "-f", str(self._scc_crd()))
        # Not `kubectl wait --for=condition=Established crd --all`: it fails on a CRD whose status has no conditions yet
        # (".status.conditions accessor error: <nil>"), which a new CRD has for a moment.
        self._wait("OLM's CRDs Established", self._crds_established, 120)
        for ns in ("olm", "operators"):
            self.kubectl("create", "namespace", ns)
        # The upstream install's global OperatorGroup: `operators` namespace watches all namespaces.
        self.kubectl(
            "apply",
            "-f",
            "-",
            input_text=json.dumps(
                {
                    "apiVersion": "operators.coreos.com/v1",
                    "kind": "OperatorGroup",
                    "metadata": {"name": "global-operators", "namespace": "operators"},
                    "spec": {},
                }
            ),
        )
        busy = [p for p in (8080, 8443) if procs.port_open(p)]
        if busy and health_ports:
            # Both operators bind these hard-coded ports; a stray process would fake their health checks.
            raise TestbedError(f"ports {busy} are already in use on this machine; OLM's operators need them")
        olm_kc = str(self.run_dir / "olm.kubeconfig")
        env = {"KUBECONFIG": olm_kc, "OPERATOR_NAMESPACE": "olm", "OPERATOR_NAME": "olm-operator"}
        # Unset CI: OLM's validating round tripper panics on unlabelled objects when CI is set.
        unset = ("CI", "GRPC_PROXY", "grpc_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
        status_args, status_env = self._olm_operator_options()
        olm_argv = [str(bins / "olm"), "--namespace=olm", *status_args, "--writePackageServerStatusName="]
        self._start_with_cluster_dns("olm", olm_argv, dict(env, **status_env), unset)
        catalog_argv = [
            str(bins / "catalog"),
            "--kubeconfig=" + olm_kc,
            "--namespace=olm",
            "--writeStatusName=",
            f"--tls-cert={self.pki.path('catalog-serving.crt')}",
            f"--tls-key={self.pki.path('catalog-serving.key')}",
        ]
        if self.state.get("cluster_resolv_conf"):
            # Registry pods and bundle unpack Jobs on the real node use the testbed's own opm and util images.
            registry_host, versions = f"127.0.0.1:{self.state['ports']['registry']}", self.state["versions"]
            catalog_argv += [
                f"--opmImage={realnode.image_ref(registry_host, 'opm', versions)}",
                f"--util-image={realnode.image_ref(registry_host, 'olm-util', versions)}",
            ]
        self._start_with_cluster_dns("catalog", catalog_argv, env, unset)
        if health_ports:
            self._wait("olm operator health on :8080", lambda: procs.port_open(8080), 60, "olm")
            self._wait("catalog operator health on :8443", lambda: procs.port_open(8443), 60, "catalog")
        else:
            self._wait("the olm operator's status of OperatorGroup operators/global-operators", self._global_group_synced, 60, "olm")
        _log(f"{self.context_name}: OLM {self.state['versions']['olm']} olm and catalog operators running")

    def _olm_operator_options(self) -> tuple:
        """The olm operator's ClusterOperator flag and the environment it needs: none here (an OpenShift member's, see
        members.py, writes ClusterOperator operator-lifecycle-manager)."""
        return ["--writeStatusName="], {}

    def _crds_established(self) -> bool:
        listing = json.loads(self.kubectl("get", "crd", "-o", "json").stdout)
        return all(
            any(c.get("type") == "Established" and c.get("status") == "True" for c in (crd.get("status") or {}).get("conditions") or [])
            for crd in listing["items"]
        )

    def _global_group_synced(self) -> bool:
        out = self.kubectl("get", "operatorgroup", "global-operators", "-n", "operators", "-o", "jsonpath={.status.lastUpdated}", check=False)
        return bool(out.stdout.strip())

    def _scc_crd(self) -> Path:
        openshift_api = sorted(gomodcache().glob("github.com/openshift/api@*"))
        for root in reversed(openshift_api):
            found = sorted(root.glob("security/v1/zz_generated.crd-manifests/*securitycontextconstraints*.crd.yaml"))
            if found:
                return found[0]
        raise TestbedError("SecurityContextConstraints CRD not found in the github.com/openshift/api module cache")

    # ---------------------------------------------------------- SCC admission
    def _start_scc_admission(self, bins: Path) -> None:
        """OpenShift's SCC admission as webhooks served by a local process (see scc_admission.py)."""
        # `create`: client-side apply would drop the fields the default SCCs leave null, which the CRD requires.
        self.kubectl("create", "-f", "-", input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": scc_admission.cluster_objects()}))
        kubeconfig = self._write_component_kubeconfig(scc_admission.NAME)
        # The port is chosen just before the start, and again when an outgoing connection took it meanwhile (a port
        # chosen at the start of `up` was taken once by the time this late component bound it).
        for attempt in range(1, PORT_ATTEMPTS + 1):
            port = self.state["ports"][scc_admission.NAME] = procs.free_port()
            self._start(
                scc_admission.NAME,
                [
                    str(bins / scc_admission.binary_name()),
                    f"--kubeconfig={kubeconfig}",
                    f"--listen=127.0.0.1:{port}",
                    f"--tls-cert-file={self.pki.path('sccadmission-serving.crt')}",
                    f"--tls-private-key-file={self.pki.path('sccadmission-serving.key')}",
                ],
            )
            try:
                self._wait("the SCC admission webhook's informers", lambda port=port: self._https_ok(port, "/healthz"), 60, scc_admission.NAME)
                break
            except TestbedError as exc:
                if attempt == PORT_ATTEMPTS or "address already in use" not in str(exc):
                    raise
                _log(f"127.0.0.1:{port} was taken before the SCC webhook bound it; trying another port")
        # Namespaces made before the webhook get their UID range and MCS label from its allocator.
        self._wait("openshift.io/sa.scc.* annotations on every namespace", self._namespaces_allocated, 30, scc_admission.NAME)
        self._apply(*scc_admission.webhook_configurations(port, self.pki.path("ca.crt").read_bytes()))
        _log(f"SCC admission (OpenShift's plugin) on https://127.0.0.1:{port}: {len(scc_admission.cluster_objects())} objects, webhooks registered")

    def _https_ok(self, port: int, path: str) -> bool:
        try:
            with urllib.request.urlopen(f"https://127.0.0.1:{port}{path}", context=self._ssl_context(), timeout=3) as resp:  # noqa: S310
                return resp.status == 200
        except (OSError, ValueError):
            return False

    def _namespaces_allocated(self) -> bool:
        listing = json.loads(self.kubectl("get", "namespaces", "-o", "json").stdout)
        return all(scc_admission.UID_RANGE_ANNOTATION in (ns["metadata"].get("annotations") or {}) for ns in listing["items"])

    # ---------------------------------------------------------- the real node
    def _start_real_node(self, bins: Path) -> None:
        """containerd, kubelet, kube-proxy, CoreDNS and the API server relay of the real node (realnode.py); the node
        is Ready a few seconds later."""
        base = self.run_dir / "realnode"
        registry = self.state["registry"]
        try:
            images = realnode.push_images(bins, registry, self.state["versions"])
        except Exception as exc:
            raise TestbedError(f"could not push the real node's images to {registry['host']}: {exc}") from exc
        self.state["real_node"] = dict(realnode.record_host(base), images=images, name=realnode.NODE_NAME)
        self._save_state()
        ports = self.state["ports"]
        for port in ("kubelet", "kubelet_healthz", "kube_proxy_metrics", "kube_proxy_healthz", "coredns_health", "coredns_ready", "apiserver_relay"):
            ports[port] = procs.free_port()
        try:
            realnode.install_network(config.POD_CIDR, config.SERVICE_CIDR)
            serving = (str(self.pki.path("kubelet-serving.crt")), str(self.pki.path("kubelet-serving.key")))
            containerd_file, kubelet_file = realnode.write_configs(
                base, registry, images["pause"], str(self.pki.path("ca.crt")), serving, (ports["kubelet"], ports["kubelet_healthz"]), config.SERVICE_CIDR
            )
        except realnode.RealNodeError as exc:
            raise TestbedError(str(exc)) from exc
        self._start("containerd", ["containerd", f"--config={containerd_file}"])
        socket_file = base / "containerd" / "containerd.sock"
        self._wait("containerd's socket", socket_file.exists, 30, "containerd")
        kubeconfig = self._write_component_kubeconfig("kubelet-client", "kubelet.kubeconfig")
        self._start("kubelet", realnode.kubelet_argv(bins / "kubelet", kubelet_file, kubeconfig, base))
        # Services: kube-proxy translates Service addresses on the host (the guard drops what is not local or on
        # the bridge); CoreDNS answers cluster names on the bridge address; the relay carries pods' API calls.
        proxy_kubeconfig = self._write_component_kubeconfig("kube-proxy")
        self._start("kube-proxy", realnode.kube_proxy_argv(bins / "kube-proxy", proxy_kubeconfig, ports["kube_proxy_metrics"], ports["kube_proxy_healthz"]))
        coredns_kubeconfig = self._write_component_kubeconfig("coredns")
        self._apply(*realnode.coredns_rbac(pki_user("coredns")))
        corefile = base / "Corefile"
        corefile.write_text(realnode.corefile(coredns_kubeconfig, ports["coredns_health"], ports["coredns_ready"]))
        self._start("coredns", [str(bins / realnode.coredns_binary_name()), "-conf", str(corefile)])
        relay = f"{realnode.BRIDGE_ADDRESS}:{ports['apiserver_relay']}"
        self._start("apiserver-relay", [str(bins / realnode.programs_binary_name()), "relay", relay, f"127.0.0.1:{ports['apiserver']}"])
        self._apply(*realnode.service_objects(ports["apiserver_relay"]))
        self._save_state()
        _log(f"real node {realnode.NODE_NAME}: containerd, kubelet, kube-proxy, CoreDNS, API relay on {relay} (bridge {realnode.BRIDGE})")

    def _real_node_serving(self) -> bool:
        ports = self.state["ports"]
        ready = self._real_node_ready()
        dns = procs.port_open(ports["coredns_ready"]) and _http_ok(f"http://127.0.0.1:{ports['coredns_ready']}/ready")
        proxy = _http_ok(f"http://127.0.0.1:{ports['kube_proxy_healthz']}/healthz")
        return ready and dns and proxy

    def _real_node_ready(self) -> bool:
        out = self.kubectl("get", "node", realnode.NODE_NAME, "-o", "jsonpath={.status.conditions[?(@.type=='Ready')].status}", check=False)
        return out.stdout.strip() == "True"

    # ---------------------------------------------------------- packageserver
    def _packageserver_objects(self) -> list[dict]:
        """ServiceAccount and least-privilege RBAC of packageserver (no wildcards)."""
        name = "kubeforge-testbed-packageserver"
        labels = {"app.kubernetes.io/managed-by": "kubeforge-testbed"}
        subject = [{"kind": "ServiceAccount", "name": "packageserver", "namespace": "olm"}]

        def role_ref(kind: str, role: str) -> dict:
            return {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role}

        return [
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "packageserver", "namespace": "olm", "labels": labels}},
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": name, "labels": labels},
                # The PackageManifests come from the CatalogSources' registries; OLMConfig sets the sync interval.
                "rules": [{"apiGroups": ["operators.coreos.com"], "resources": ["catalogsources", "olmconfigs"], "verbs": ["get", "list", "watch"]}],
            },
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name, "labels": labels},
                "roleRef": role_ref("ClusterRole", name),
                "subjects": subject,
            },
            # Delegated authentication and authorization (TokenReviews, SubjectAccessReviews) of an aggregated API server.
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name + "-auth-delegator", "labels": labels},
                "roleRef": role_ref("ClusterRole", "system:auth-delegator"),
                "subjects": subject,
            },
            # The front-proxy CA and header names, from kube-system/extension-apiserver-authentication.
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": {"name": name + "-auth-reader", "namespace": "kube-system", "labels": labels},
                "roleRef": role_ref("Role", "extension-apiserver-authentication-reader"),
                "subjects": subject,
            },
        ]

    def _start_packageserver(self, bins: Path) -> None:
        """OLM's packageserver as a local process on 127.0.0.1, as ServiceAccount olm/packageserver.

        OLM v0.46.0's packageserver builds its delegated authorizer from the in-cluster config whatever its
        flags say (server.go sets RemoteKubeConfigFile on the authentication options where it means the
        authorization ones), so it runs with that config: in a private mount namespace (`unshare`) where
        /var/run/secrets/kubernetes.io/serviceaccount holds a token of the ServiceAccount and the testbed CA,
        and KUBERNETES_SERVICE_HOST/PORT name the API server on 127.0.0.1.
        """
        self._apply(*self._packageserver_objects())
        binary = str(bins / "package-server")
        args = [
            "--bind-address=127.0.0.1",
            f"--secure-port={self.state['ports']['packageserver']}",
            f"--tls-cert-file={self.pki.path('packageserver-serving.crt')}",
            f"--tls-private-key-file={self.pki.path('packageserver-serving.key')}",
            "--global-namespace=olm",
            "--v=1",
        ]
        self._start_as_serviceaccount("packageserver", binary, args, ("olm", "packageserver"), namespace_file=True)

    def _start_as_serviceaccount(
        self, name: str, binary: str, args: list[str], service_account: tuple[str, str], namespace_file: bool, env: Optional[dict[str, str]] = None
    ) -> None:
        """Start `binary args` as component `name` with the in-cluster identity of ServiceAccount (namespace, name).

        It runs in a private mount namespace (`unshare`) where /var/run/secrets/kubernetes.io/serviceaccount shows
        <run>/<name>/serviceaccount: a `token` of the ServiceAccount, the testbed CA as `ca.crt`, and (when
        `namespace_file`) a `namespace` file; KUBERNETES_SERVICE_HOST/PORT name the API server on 127.0.0.1 and
        KUBECONFIG is unset, so client-go's in-cluster config authenticates as that ServiceAccount. The host's mounts
        and files stay untouched. The process record names `binary` (what the wrapper execs) to guard against pid reuse.
        """
        sa_namespace, sa_name = service_account
        sa_dir = self.run_dir / name / "serviceaccount"
        sa_dir.mkdir(parents=True, exist_ok=True)
        sa_dir.chmod(0o700)
        token = self.kubectl("create", "token", sa_name, "-n", sa_namespace, "--duration=8760h").stdout.strip()
        files = [("token", token), ("ca.crt", self.pki.path("ca.crt").read_text())]
        if namespace_file:
            files.append(("namespace", sa_namespace))
        else:
            (sa_dir / "namespace").unlink(missing_ok=True)
        for file_name, data in files:
            target = sa_dir / file_name
            tmp = target.with_suffix(".tmp")
            tmp.write_text(data)
            tmp.chmod(0o600)
            tmp.replace(target)
        target = Path(os.path.realpath(IN_CLUSTER_SA_DIR))
        base = target
        while not base.exists():
            base = base.parent
        if base == Path("/"):
            raise TestbedError(f"cannot place the {name} token: no parent directory of {target} exists")
        argv = _unshare() + ["--", "/bin/sh", "-c", _SA_MOUNT_SCRIPT, name, str(sa_dir), str(target), str(base), binary] + list(args)
        full_env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(self.state["ports"]["apiserver"])}
        if self.state.get("cluster_resolv_conf"):
            full_env["KUBEFORGE_TESTBED_RESOLV_CONF"] = self.state["cluster_resolv_conf"]
        full_env.update(env or {})
        unset = ("CI", "KUBECONFIG", "GRPC_PROXY", "grpc_proxy", "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
        self._start(name, argv, env=full_env, unset=unset)
        self._await_exec(name, binary)

    def _register_packageserver(self) -> None:
        """Serve packages.operators.coreos.com through the aggregator once packageserver listens.

        The APIService names an ExternalName Service `localhost`: the aggregator's resolver (ResolveCluster in
        k8s.io/apiserver pkg/util/proxy) turns it into https://localhost:<port> and checks the serving
        certificate for <service>.<namespace>.svc.
        """
        port = self.state["ports"]["packageserver"]
        self._wait("packageserver on 127.0.0.1:%d" % port, lambda: procs.port_open(port), 60, "packageserver")
        service, namespace = PACKAGESERVER_SERVICE
        labels = {"app.kubernetes.io/managed-by": "kubeforge-testbed"}
        self._apply(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": service, "namespace": namespace, "labels": labels},
                "spec": {"type": "ExternalName", "externalName": "localhost", "ports": [{"name": "https", "port": port, "protocol": "TCP"}]},
            },
            {
                "apiVersion": "apiregistration.k8s.io/v1",
                "kind": "APIService",
                "metadata": {"name": PACKAGES_API, "labels": labels},
                "spec": {
                    "group": "packages.operators.coreos.com",
                    "version": "v1",
                    "groupPriorityMinimum": 2000,
                    "versionPriority": 15,
                    "service": {"name": service, "namespace": namespace, "port": port},
                    "caBundle": base64.b64encode(self.pki.path("ca.crt").read_bytes()).decode(),
                },
            },
        )

        def available() -> bool:
            out = self.kubectl("get", "apiservice", PACKAGES_API, "-o", "jsonpath={.status.conditions[?(@.type=='Available')].status}", check=False)
            return out.stdout.strip() == "True"

        self._wait(f"APIService {PACKAGES_API} Available", available, 60, "packageserver")
        _log(f"packageserver on https://127.0.0.1:{port}: APIService {PACKAGES_API} Available")

    def _start_opm(self, bins: Path) -> None:
        fbc = catalog.render_catalog(bins / "opm", self.run_dir / "catalog")
        ports = self.state["ports"]
        self._start(
            "opm",
            [
                str(bins / "opm"),
                "serve",
                str(fbc),
                "-p",
                str(ports["opm"]),
                "-t",
                str(self.run_dir / "opm.termination-log"),
                f"--pprof-addr=127.0.0.1:{ports['opm_pprof']}",
            ],
        )
        self._wait("opm serve", lambda: procs.port_open(ports["opm"]), 60, "opm")
        _log(f"opm serve: catalog of {', '.join(catalog.PACKAGES)} on {self.catalog_address}")

    def olm_manifests_dir(self) -> Optional[Path]:
        """OLM's deploy/upstream/quickstart directory in the Go module cache for the pinned OLM version, if there."""
        olm = self.state.get("versions", {}).get("olm")
        path = gomodcache() / f"github.com/operator-framework/operator-lifecycle-manager@{olm}" / "deploy" / "upstream" / "quickstart"
        return path if olm and path.is_dir() else None

    def _write_ansible_vars(self) -> None:
        """Extra vars for playbooks run against the testbed (`ansible-playbook -e @<run>/ansible-vars.json`)."""
        path = self.run_dir / "ansible-vars.json"
        registry = self.state["registry"]
        variables = {
            "testbed_kubeconfig": self.kubeconfig,
            "testbed_catalog_address": self.catalog_address,
            "testbed_registry": registry["host"],
            "testbed_registry_ca_file": registry["ca_file"],
            "testbed_registry_username": registry["username"],
            # The path only: playbooks read the password with a file lookup under no_log.
            "testbed_registry_password_file": registry["password_file"],
            "testbed_fixtures_dir": str(config.FIXTURES_DIR),
            # A client-certificate kubeconfig of user kubeforge-bench (cluster-admin): the only user in the audit log.
            "testbed_bench_kubeconfig": str(self.bench_kubeconfig),
            "testbed_audit_log": str(self.audit_log),
        }
        manifests = self.olm_manifests_dir()
        if manifests:
            variables["testbed_olm_manifests_dir"] = str(manifests)
        variables.update(olmv1.ansible_vars(self))
        variables.update(realnode.ansible_vars(self.state))
        from testbed import members, migrole

        variables.update(members.ansible_vars(self))
        variables.update(migrole.ansible_vars(self))
        # Whole or not at all: playbooks of other processes read it while OLM v1 starts.
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(variables, indent=2))
        tmp.replace(path)

    def _start_registry(self) -> None:
        """An OCI registry (TLS + htpasswd) for catalog images; its password stays in a 0600 file."""
        registry = LocalRegistry(self.run_dir / "registry")
        try:
            self.state["processes"]["registry"] = registry.start(port=self.state["ports"]["registry"])
        except RegistryError as exc:
            raise TestbedError(str(exc)) from exc
        self.state["registry"] = {
            "host": registry.host,
            "ca_file": registry.ca_file,
            "username": registry.username,
            "password_file": registry.password_file,
        }
        self._save_state()
        _log(f"OCI registry on https://{registry.host} (CA {registry.ca_file})")

    # --------------------------------------------------------------- restart
    def restart(self, component: str, grace: float = 15.0, downtime: float = 0.0, timeout: float = 120.0) -> dict:
        """Stop one component's process and start it again with the same argv and environment (cluster state in
        etcd stays). SIGTERM, then SIGKILL after `grace` seconds (0: a crash); it stays down until its port is
        closed and `downtime` seconds have passed, then must serve again within `timeout` (kube-apiserver:
        /readyz; the others: their port accepts connections). Returns the new process record."""
        with self._exclusive():
            stopped_at = time.monotonic()
            old, launch = self._stop_component(component, grace)
            time.sleep(max(0.0, stopped_at + downtime - time.monotonic()))
            return self._start_again(component, old, launch, timeout)

    @contextlib.contextmanager
    def stopped(self, component: str, grace: float = 15.0, timeout: float = 120.0):
        """Stop one component for the ``with`` block (its port refuses connections meanwhile, as a cluster whose API
        server is down does), then start it again as restart() does. Holds the testbed's lock throughout."""
        with self._exclusive():
            old, launch = self._stop_component(component, grace)
            try:
                yield old
            finally:
                self._start_again(component, old, launch, timeout)

    def _stop_component(self, component: str, grace: float) -> tuple:
        old = self.state.get("processes", {}).get(component)
        if old is None:
            raise TestbedError(f"no testbed process {component!r} to restart (running: {', '.join(self.state.get('processes', {})) or 'none'})")
        try:
            launch = procs.launch_spec(old)
        except (OSError, RuntimeError) as exc:
            raise TestbedError(f"cannot restart {component}: {exc}") from exc
        port = self._serving_port(component)
        procs.stop(old, timeout=grace)
        if procs.alive(old["pid"], old["binary"]):
            raise TestbedError(f"{component} (pid {old['pid']}) survived SIGKILL")
        if port:
            self._wait(f"{component} to release 127.0.0.1:{port}", lambda: not procs.port_open(port), 30)
        return old, launch

    def _serving_port(self, component: str) -> Optional[int]:
        port = SERVING_PORTS.get(component)
        if isinstance(port, str):
            return self.state["ports"].get(port)
        return port if self.health_ports else None

    def _start_again(self, component: str, old: dict, launch: tuple, timeout: float) -> dict:
        argv, env, unset = launch
        port = self._serving_port(component)
        record = procs.start(component, argv, Path(old["log"]).parent, env=env, unset=unset)
        if old["binary"] != argv[0]:  # a wrapper (packageserver's unshare) execs the binary: guard the pid by that
            if not procs.wait_exec(record["pid"], old["binary"], 10):
                raise TestbedError(f"{component} did not start again; last log lines:\n{procs.tail(record['log'])}")
            record["binary"] = old["binary"]
        self.state["processes"][component] = record
        self._save_state()
        if component == "kube-apiserver":
            serving = self._apiserver_ready
        else:
            serving = (lambda: procs.port_open(port)) if port else (lambda: True)
        self._wait(f"{component} serving again", serving, timeout, component)
        _log(f"{self.context_name}: {component} restarted (pid {old['pid']} -> {record['pid']})")
        return record

    @contextlib.contextmanager
    def hung(self, component: str):
        """Freeze one component's process (SIGSTOP to its process group: it holds its connections and answers
        nothing, as a hung server does) for the ``with`` block, then let it go on (SIGCONT)."""
        record = self.state.get("processes", {}).get(component)
        if record is None or not procs.alive(record["pid"], record["binary"]):
            raise TestbedError(f"no running testbed process {component!r} to freeze")
        os.killpg(record["pid"], signal.SIGSTOP)
        try:
            yield record
        finally:
            os.killpg(record["pid"], signal.SIGCONT)

    def restart_api_clients(self, components: tuple = API_CLIENTS) -> list:
        """Restart those of ``components`` that run, as a control-plane restart does after kube-apiserver's."""
        running = self.state.get("processes", {})
        return [self.restart(component) for component in components if component in running]

    # ------------------------------------------------------------------ down
    def down(self, keep_logs: bool = True) -> None:
        """Stop every process (reverse start order), free the ports and remove etcd's tmpfs data.

        Raises TestbedError when a process survives or a port still accepts connections afterwards.
        """
        with self._exclusive():
            self._down(keep_logs)

    def _down(self, keep_logs: bool = True) -> None:
        from testbed import members  # members.Member is a Testbed

        leftovers = []
        for member in members.found(self):  # they use the main cluster's etcd
            try:
                member.stop()
            except TestbedError as exc:
                leftovers.append(str(exc))
        records = self.processes()
        for record in reversed(records):
            procs.stop(record)
        ports = dict(self.state.get("ports", {}))
        if "olm" in self.state.get("processes", {}) and self.health_ports:
            ports.update({"olm-health": 8080, "catalog-health": 8443})
        # The real node's containers, mounts, cgroups, firewall rules and sysctls outlive its processes.
        host_leftovers = realnode.undo_host(self.state["real_node"], _log) if self.state.get("real_node") else []
        etcd_data = self.state.get("etcd_data")
        if etcd_data and Path(etcd_data).is_dir():
            shutil.rmtree(etcd_data, ignore_errors=True)
        if self.state_file.exists():
            self.state_file.unlink()
        if not keep_logs and self.log_dir.exists():
            shutil.rmtree(self.log_dir, ignore_errors=True)
        self.state = {}
        survivors = [r["name"] for r in records if procs.alive(r["pid"], r["binary"])]
        listening = [f"{name}:{port}" for name, port in sorted(ports.items()) if port and procs.port_open(port)]
        if survivors or listening or host_leftovers or leftovers:
            raise TestbedError(
                f"teardown incomplete: processes still running {survivors}, ports still listening {listening}, host changes left {host_leftovers}"
                + "".join(f"; {text}" for text in leftovers)
            )
