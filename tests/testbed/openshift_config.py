"""OpenShift's config.openshift.io API on a member cluster, so that OLM v0 computes OpenShift's upgrade verdict itself.

OLM v0.46.0's olm operator runs its ClusterOperator controller (pkg/controller/operators/openshift) when started with
`--writeStatusName <name>`: it keeps ClusterOperator <name> up to date, and its condition `Upgradeable` names every
installed CSV whose `olm.maxOpenShiftVersion` blocks the next minor of the release in its `RELEASE_VERSION`
environment variable (read once, at start). That needs the ClusterOperator API; and once config.openshift.io/v1 is
served, OLM's processes also watch the cluster's Proxy and APIServer (TLS profile) configuration, so those CRDs and
their `cluster` objects are installed too, as on OpenShift. A ClusterVersion `version` says which release the
cluster runs, as OpenShift's cluster-version operator would (OLM itself does not read it).

The CRDs come from the github.com/openshift/api module the SCC admission webhook pins (sccadmission/go.mod), already
in the Go module cache after `make testbed-build`: no other download.
"""

import re
from pathlib import Path

from testbed import config
from testbed.errors import TestbedError

# The ClusterOperator an OpenShift cluster's olm operator writes (its --writeStatusName on OpenShift).
CLUSTER_OPERATOR = "operator-lifecycle-manager"
CLUSTER_VERSION = "version"
# config.openshift.io CRDs (the Default feature set where a CRD comes in several).
CRD_FILES = (
    "0000_00_cluster-version-operator_01_clusteroperators.crd.yaml",
    "0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml",
    "0000_03_config-operator_01_proxies.crd.yaml",
    "0000_10_config-operator_01_apiservers-Default.crd.yaml",
)
OPENSHIFT_API_MODULE = "github.com/openshift/api"
PINNING_GO_MOD = config.HERE / "sccadmission" / "go.mod"
RELEASE = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+$")


# OLM's Upgradeable condition (operator-lifecycle-manager v0.46.0 pkg/controller/operators/openshift): setUpgradeable
# (clusteroperator_controller.go) sets status False, reason IncompatibleOperatorsInstalled and message skews.String()
# (helpers.go), one line per CSV, invalid declarations first:
#
#     ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:
#     - <namespace>/<csv> has invalid olm.maxOpenShiftVersion properties: <error>
#     - maximum supported OCP version for <namespace>/<csv> is <major>.<minor>
#
# The header is a constant upstream: it names 4.23/5.0 whatever the release.
INCOMPATIBLE = "IncompatibleOperatorsInstalled"
BLOCKING_HEADER = "ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:"
MAX_LINE = re.compile(r"^- maximum supported OCP version for (?P<namespace>[^/\s]+)/(?P<name>\S+) is (?P<max>\S+)$")
INVALID_LINE = re.compile(r"^- (?P<namespace>[^/\s]+)/(?P<name>\S+) has invalid olm\.maxOpenShiftVersion properties: (?P<error>.+)$")
# What the condition says while OLM has not synced yet (no verdict at all).
WAITING = "Waiting for updates to take effect"


class OpenShiftConfigError(TestbedError):
    """The config.openshift.io CRDs are not where the pin says, or a release version is malformed."""


def check_release(release: str) -> str:
    """``release`` (an OpenShift release version such as 4.20.0, what RELEASE_VERSION holds on OpenShift) or an error."""
    if not RELEASE.match(release or ""):
        raise OpenShiftConfigError(f"an OpenShift release version is <major>.<minor>.<patch> (for example 4.20.0), not {release!r}")
    return release


def pinned_version(go_mod: Path = PINNING_GO_MOD) -> str:
    """The github.com/openshift/api version sccadmission/go.mod pins (its replace directive, else its require)."""
    text = go_mod.read_text()
    replaced = re.search(rf"^\s*(?:replace\s+)?{re.escape(OPENSHIFT_API_MODULE)} => {re.escape(OPENSHIFT_API_MODULE)} (\S+)\s*$", text, re.M)
    required = re.search(rf"^\s*(?:require\s+)?{re.escape(OPENSHIFT_API_MODULE)} (v\S+)\s*(?://.*)?$", text, re.M)
    found = replaced or required
    if not found:
        raise OpenShiftConfigError(f"{go_mod} pins no {OPENSHIFT_API_MODULE}")
    return found.group(1)


def crd_files(gomodcache: Path) -> list:
    """The CRD files of CRD_FILES in the pinned openshift/api module of the Go module cache."""
    root = Path(gomodcache) / f"{OPENSHIFT_API_MODULE}@{pinned_version()}" / "config" / "v1" / "zz_generated.crd-manifests"
    files = [root / name for name in CRD_FILES]
    missing = [str(path) for path in files if not path.is_file()]
    if missing:
        raise OpenShiftConfigError(f"config.openshift.io CRDs missing from the Go module cache (run `make testbed-build`): {', '.join(missing)}")
    return files


def cluster_objects(release: str) -> list:
    """The cluster-wide config objects OpenShift has from its installation: Proxy and APIServer `cluster` (empty
    specs: no proxy, the default TLS profile) and ClusterVersion `version` (its status is set by status_patch())."""
    labels = {"app.kubernetes.io/managed-by": "kubeforge-testbed"}
    minor = ".".join(check_release(release).split(".")[:2])
    return [
        {"apiVersion": "config.openshift.io/v1", "kind": "Proxy", "metadata": {"name": "cluster", "labels": labels}, "spec": {}},
        {"apiVersion": "config.openshift.io/v1", "kind": "APIServer", "metadata": {"name": "cluster", "labels": labels}, "spec": {}},
        {
            "apiVersion": "config.openshift.io/v1",
            "kind": "ClusterVersion",
            "metadata": {"name": CLUSTER_VERSION, "labels": labels},
            "spec": {"clusterID": "00000000-0000-4000-8000-00000000cafe", "channel": f"stable-{minor}"},
        },
    ]


def release_image(release: str) -> str:
    # A reserved name: never pulled, never resolvable.
    return f"example.invalid/openshift-release-dev/ocp-release:{release}-x86_64"


def status_patch(release: str, now: str) -> dict:
    """ClusterVersion `version`'s status: release ``release`` desired and installed (one Completed history entry)."""
    image = release_image(check_release(release))
    return {
        "status": {
            "desired": {"version": release, "image": image},
            "history": [{"state": "Completed", "version": release, "image": image, "verified": False, "startedTime": now, "completionTime": now}],
            "observedGeneration": 1,
            "versionHash": "kubeforge-testbed",
            "availableUpdates": [],
        }
    }


def install(bed, gomodcache: Path, release: str) -> None:
    """The CRDs, Established, then the cluster objects, on the cluster of testbed ``bed`` (kubectl; raises what it
    raises)."""
    import json
    import time

    files = crd_files(gomodcache)
    bed.kubectl("create", *[arg for path in files for arg in ("-f", str(path))])
    # Not `kubectl wait --for=condition=Established`: it fails on a CRD whose status has no conditions yet.
    bed._wait("the config.openshift.io CRDs Established", bed._crds_established, 60)
    bed.kubectl("create", "-f", "-", input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects(release)}))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    bed.kubectl("patch", "clusterversion", CLUSTER_VERSION, "--subresource=status", "--type=merge", "-p", json.dumps(status_patch(release, now)))


def blocking_csvs(condition: dict) -> dict:
    """{"<namespace>/<csv>": (kind, line)} of the CSVs an Upgradeable condition of OLM names: kind `max` (a declared
    maximum below the next minor) or `invalid`, line OLM's text for it without the leading "- ". Empty for
    Upgradeable=True; ValueError for a condition that is no verdict on CSVs (OLM still starting, an error) or a message
    in no known format."""
    if condition.get("status") == "True":
        return {}
    if condition.get("reason") != INCOMPATIBLE:
        raise ValueError(f"Upgradeable is no verdict on CSVs: reason {condition.get('reason')!r}, message {condition.get('message')!r}")
    header, *lines = (condition.get("message") or "").split("\n")
    if header != BLOCKING_HEADER:
        raise ValueError(f"Upgradeable's message does not start with OLM's header: {header!r}")
    named = {}
    for line in lines:
        found = MAX_LINE.match(line)
        kind = "max"
        if not found:
            found, kind = INVALID_LINE.match(line), "invalid"
        if not found:
            raise ValueError(f"a line of Upgradeable's message in no known format: {line!r}")
        key = f"{found['namespace']}/{found['name']}"
        if key in named:
            raise ValueError(f"Upgradeable's message names {key} twice")
        named[key] = (kind, line[2:])
    return named
