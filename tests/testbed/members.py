"""Member clusters: more real clusters beside the testbed's main one, for the fleet tests.

Each member is a cluster of its own, made of host processes on 127.0.0.1 like the main one:

- kube-apiserver on the main cluster's etcd, its objects under an etcd prefix of its own (a new one at every start,
  so a member started again is empty), ServiceAccount tokens signed as an issuer of its own (a token of one cluster
  is refused by the others), the testbed PKI (one CA, so one admin certificate reaches every cluster);
- kube-controller-manager and kube-scheduler; kwok with its own fake nodes (the same stages as the main cluster's,
  crash-loop images included);
- OLM v0: its CRDs, the olm and catalog operators and packageserver (the PackageManifest API); optionally OLM v1
  (catalogd and operator-controller).

No SCC admission, no real node, registry or catalog of its own: the main cluster's `opm serve` (CatalogSources by
address) and registry serve every member.

A member started with an OpenShift release (ensure_openshift(), default name `ocp-1`) also serves OpenShift's
config.openshift.io API (openshift_config.py), and its olm operator runs OLM's ClusterOperator controller
(`--writeStatusName operator-lifecycle-manager`, RELEASE_VERSION=<release>): ClusterOperator
operator-lifecycle-manager's `Upgradeable` is OLM's own verdict on the CSVs that block the next minor.

Upstream hard-codes OLM v0's health ports (:8080, :8443), which the main cluster's operators hold: a member's log the
bind error and run on without them.

A member's run directory is <run>/members/<name> (its own state.json, kubeconfig and logs); the main cluster's
`down` stops every member first. `<run>/fleet/` holds one kubeconfig per cluster (the main one as context
`testbed`, each member as its name): an inventory of the whole fleet.
"""

import os
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

from testbed import cluster, fleet_catalog, openshift_config, procs

# A member's ports, chosen when it starts (state.json "ports").
PORTS = ("apiserver", "kcm", "scheduler", "kwok", "packageserver")
FLEET_DIR = "fleet"
# The member ensure_openshift() starts unless told another name (not member-N: the fleet tests' members stay as they are).
OPENSHIFT_MEMBER = "ocp-1"


def member_names(count: int) -> list:
    return [f"member-{index}" for index in range(1, count + 1)]


class Member(cluster.Testbed):
    """One member cluster; the Testbed methods (kubectl, scale_nodes, restart, stopped, status, ...) act on it."""

    health_ports = False

    def __init__(self, main: cluster.Testbed, name: str):
        super().__init__(main.run_dir / "members" / name)
        self.main = main
        self.name = self.context_name = name
        self.pki = main.pki

    @property
    def catalog_address(self) -> str:
        """The main cluster's `opm serve`, which serves every member (CatalogSources by address)."""
        return self.main.catalog_address

    def start(self, nodes: int, with_olmv1: bool, openshift_release: Optional[str] = None) -> dict:
        """Start the member (stopping what a crashed start left); returns facts(). Raises TestbedError.

        `openshift_release` (for example 4.20.0): serve OpenShift's config.openshift.io API and run OLM's
        ClusterOperator controller for that release (openshift_config.py)."""
        if openshift_release:
            openshift_config.check_release(openshift_release)
        with self._exclusive():
            if self.state:
                self._down()
            started = time.monotonic()
            bins = Path(self.main.state["bin"])
            self.state = {
                "bin": str(bins),
                "versions": dict(self.main.state["versions"]),
                "member": self.name,
                "ports": {key: procs.free_port() for key in PORTS},
                "registry": dict(self.main.state["registry"]),
                "audit_log": str(self.audit_log),
                "bench_kubeconfig": str(self.bench_kubeconfig),
                "processes": {},
                "nodes": 0,
            }
            if openshift_release:
                self.state["openshift_release"] = openshift_release
            self._save_state()
            self.audit_log.unlink(missing_ok=True)
            etcd = f"http://127.0.0.1:{self.main.state['ports']['etcd']}"
            try:
                self._start_apiserver(
                    bins, etcd, etcd_prefix=f"/kubeforge-{self.name}-{os.urandom(4).hex()}", issuer=f"https://{self.name}.kubeforge-testbed.invalid"
                )
                self._start_controllers(bins)
                self._write_kubeconfigs()
                self._start_kwok(bins)
                self.scale_nodes(nodes)
                if openshift_release:
                    # Before OLM starts: its processes look for config.openshift.io once, at start, as on OpenShift.
                    openshift_config.install(self, cluster.gomodcache(), openshift_release)
                self._install_olm(bins, with_scc=False)
                self._start_packageserver(bins)
                self._register_packageserver()
                if with_olmv1:
                    self._ensure_olmv1()
            except Exception:
                cluster._log(f"{self.name} did not come up; stopping it (logs kept in {self.log_dir})")
                try:
                    self._down(keep_logs=True)
                except cluster.TestbedError as exc:
                    cluster._log(str(exc))
                raise
            self.state["up_seconds"] = round(time.monotonic() - started, 1)
            self._save_state()
            cluster._log(f"{self.name} up in {self.state['up_seconds']}s: KUBECONFIG={self.kubeconfig}")
            return self.facts()

    def _write_ansible_vars(self) -> None:
        """A member has no variables file of its own: the main cluster's names every member (ansible_vars())."""

    def _olm_operator_options(self) -> tuple:
        """With an OpenShift release: OLM's ClusterOperator controller on, for that release (read once, at start)."""
        release = self.state.get("openshift_release")
        if not release:
            return super()._olm_operator_options()
        return [f"--writeStatusName={openshift_config.CLUSTER_OPERATOR}"], {"RELEASE_VERSION": release}

    def facts(self) -> dict:
        return {
            "name": self.name,
            "kubeconfig": self.kubeconfig,
            "server": f"https://127.0.0.1:{self.state['ports']['apiserver']}",
            "nodes": self.state.get("nodes"),
            "olmv1": bool(self.state.get("olmv1")),
            "audit_log": str(self.audit_log),
            "bench_kubeconfig": str(self.bench_kubeconfig),
            "up_seconds": self.state.get("up_seconds"),
            "openshift_release": self.state.get("openshift_release"),
            "cluster_operator": openshift_config.CLUSTER_OPERATOR if self.state.get("openshift_release") else None,
        }

    def stop(self) -> None:
        """Stop every process of the member and remove its state (its objects stay in etcd, under a prefix no later
        start uses, until the main cluster's etcd goes)."""
        with self._exclusive():
            self._down()


def found(main: cluster.Testbed) -> list:
    """Every member with a state file under the main cluster's run directory, running or not, by name."""
    root = main.run_dir / "members"
    if not root.is_dir():
        return []
    return [Member(main, path.parent.name) for path in sorted(root.glob("*/state.json"))]


def running(main: cluster.Testbed) -> list:
    return [member for member in found(main) if member.is_running()]


def ensure(main: cluster.Testbed, count: int, nodes: int = 3, with_olmv1: bool = False) -> list:
    """Members member-1..member-<count> running (started side by side where they are not; members beyond count are
    left as they are), each with OLM v1 too when asked; returns their facts. The caller holds the main lock."""
    wanted = [Member(main, name) for name in member_names(count)]

    def ensure_one(member: Member) -> dict:
        if member.is_running():
            if with_olmv1:
                member.ensure_olmv1()
            return member.facts()
        return member.start(nodes, with_olmv1)

    with ThreadPoolExecutor(max_workers=max(1, count)) as pool:
        facts = list(pool.map(ensure_one, wanted))
    write_fleet_kubeconfigs(main)
    return facts


def ensure_openshift(main: cluster.Testbed, name: str, release: str, nodes: int = 1) -> dict:
    """Member `name` running with OpenShift release `release` (started, or started again when it runs without it or
    with another release: OLM reads the release once, at start); returns its facts. The caller holds the main lock."""
    openshift_config.check_release(release)
    member = Member(main, name)
    if member.is_running() and member.state.get("openshift_release") == release:
        return member.facts()
    facts = member.start(nodes, False, openshift_release=release)
    write_fleet_kubeconfigs(main)
    return facts


def stop_one(main: cluster.Testbed, name: str) -> None:
    """Stop member `name` if it has a state file (running or not)."""
    for member in found(main):
        if member.name == name:
            member.stop()
    write_fleet_kubeconfigs(main)


def stop_all(main: cluster.Testbed) -> None:
    errors = []
    for member in found(main):
        try:
            member.stop()
        except cluster.TestbedError as exc:
            errors.append(str(exc))
    write_fleet_kubeconfigs(main)
    if errors:
        raise cluster.TestbedError("; ".join(errors))


def write_fleet_kubeconfigs(main: cluster.Testbed) -> Path:
    """<run>/fleet/<context>.kubeconfig for the main cluster and every running member (nothing else is left there)."""
    fleet = main.run_dir / FLEET_DIR
    tmp = main.run_dir / (FLEET_DIR + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(mode=0o700)
    for bed in [main] + running(main):
        target = tmp / f"{bed.context_name}.kubeconfig"
        target.write_text(Path(bed.kubeconfig).read_text())
        target.chmod(0o600)
    shutil.rmtree(fleet, ignore_errors=True)
    tmp.replace(fleet)
    return fleet


def ansible_vars(main: cluster.Testbed) -> dict:
    """The fleet's variables for playbooks: its kubeconfig directory and the members (empty without members)."""
    members = running(main)
    if not members:
        return {}
    catalog = main.state.get("processes", {}).get(f"{cluster.EXTRA_CATALOG}-{fleet_catalog.SERVED_AS}", {}).get("address")
    return {
        "testbed_fleet_catalog_address": catalog,
        "testbed_fleet_catalog_dir": str(main.run_dir / fleet_catalog.CATALOG_DIR),
        "testbed_fleet_kubeconfigs": str(main.run_dir / FLEET_DIR),
        "testbed_members": [{"name": m.name, "kubeconfig": m.kubeconfig, "olmv1": bool(m.state.get("olmv1"))} for m in members],
    }


def status(main: cluster.Testbed) -> dict:
    result = {}
    for member in found(main):
        result[member.name] = {"running": member.is_running(), "kubeconfig": member.kubeconfig, "rss_mib": member.rss_mib()}
    return result
