"""olm_upgrade_plan against OLM's own upgrade verdict: a member cluster that OLM v0 takes for OpenShift 4.20
(Testbed.ensure_openshift_member: config.openshift.io served, the olm operator running its ClusterOperator controller
with RELEASE_VERSION=4.20.0), operators installed through OLM whose bundles declare `olm.maxOpenShiftVersion` below,
at and above the current minor, invalid values and two values, and the condition `Upgradeable` OLM writes on
ClusterOperator operator-lifecycle-manager read back and compared with the module's answer for the next minor,
operator for operator.

OLM's text (operator-lifecycle-manager v0.46.0, pkg/controller/operators/openshift): clusteroperator_controller.go
setUpgradeable sets Upgradeable=False, reason IncompatibleOperatorsInstalled, message skews.String() (helpers.go):

    ClusterServiceVersions blocking minor version upgrades to 4.23 or major version upgrades to 5.0:
    - <namespace>/<csv> has invalid olm.maxOpenShiftVersion properties: <error>        (errors first)
    - maximum supported OCP version for <namespace>/<csv> is <major>.<minor>

The header is a constant upstream (it names 4.23/5.0 whatever the release); one line per non-copied CSV whose declared
maximum is below the next minor (4.23 normalised to 5.0) or whose declaration is invalid; CSVs without the property
are never named.

The same member is then started again as OpenShift 4.22.0 (RELEASE_5_0), whose next minor OLM calls 4.23 - the one
upgrade to 5.0 (normalizeOCPVersion: a declared 4.23 is 5.0) - with bundles declaring 4.22, 4.23 and 5.0 (CASES_5_0),
and the module asked for 5.0 and for 4.23 must name what OLM names.
"""

import json
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.polling import poll_until
from lib.runners import run_module_subprocess
from testbed.fleet_catalog import write_renamed_bundles
from testbed.kube import api_client
from testbed.members import OPENSHIFT_MEMBER
from testbed.openshift_config import CLUSTER_OPERATOR, CLUSTER_VERSION, WAITING, blocking_csvs

# It starts and stops a member cluster: with the fleet tests, whose members and fleet directory it would change.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("fleet")]

RELEASE = "4.20.0"
CATALOG = "ocp-upgrade"
CATALOG_NAMESPACE = "olm"
VERSION = "0.1.0"
GLOBAL_NAMESPACE = "operators"  # the global OperatorGroup (AllNamespaces): OLM copies its CSVs to every namespace

# case -> (the olm.maxOpenShiftVersion values its bundle declares, how: metadata/properties.yaml or the CSV's
# olm.properties annotation, what OLM 4.20 says for 4.21: None (not named), "max" or "invalid"). The expectation is
# what helpers.go's incompatibleOperators computes; OLM's condition is checked against it, the module against OLM.
CASES = {
    "none": ((), "file", None),
    "equal": (("4.20",), "file", "max"),  # 4.20 < 4.21: blocks
    "below": (("4.19",), "annotation", "max"),
    "above": (("4.21",), "file", None),  # the next minor itself is allowed
    "major": (("5.0",), "file", None),
    "patch": (("4.21.1",), "file", "invalid"),  # must be <major>.<minor>: blocks although 4.21 would not
    "word": (("latest",), "file", "invalid"),
    "two": (("4.21", "4.22"), "file", "invalid"),  # more than one property: blocks whatever the values
}
# The 4.23 = 5.0 cases, on the member started again as OpenShift RELEASE_5_0 (next minor 4.23), with what OLM says:
# 4.22 blocks; 4.23 is normalised to 5.0 and does not (a plain comparison with 5.0 would block it); 5.0 does not.
RELEASE_5_0 = "4.22.0"
CATALOG_5_0 = "ocp-upgrade-5"
CASES_5_0 = {
    "v422": (("4.22",), "file", "max"),
    "v423": (("4.23",), "file", None),
    "v50": (("5.0",), "annotation", None),
}
ALL_CASES = {**CASES, **CASES_5_0}
# The case installed in the global namespace, so that copies of its CSV exist in every namespace (never named).
GLOBAL_CASE = "equal"


def package(case):
    return f"kube-ocp-{case}"


def namespace(case):
    return GLOBAL_NAMESPACE if case == GLOBAL_CASE else f"ocp-{case}"


def csv_key(case):
    return f"{namespace(case)}/{package(case)}.v{VERSION}"


def write_bundle(root, case):
    """kube-demo 0.0.1 renamed to package kube-ocp-<case> 0.1.0 (its own CRD group), declaring the case's values."""
    renames = {
        "demo.kubeforge.io": f"{case}.ocp.kubeforge.io",
        "kubedemos": f"kubeocp{case}s",
        "singular: kubedemo\n": f"singular: kubeocp{case}\n",
        "KubeDemo": f"KubeOcp{case.capitalize()}",
        "kube-demo": package(case),
        "0.0.1": VERSION,
    }
    bundle = write_renamed_bundles(root / case, renames, {VERSION: ("0.0.1", None)}) / VERSION
    values, how, _verdict = ALL_CASES[case]
    properties = [{"type": "olm.maxOpenShiftVersion", "value": value} for value in values]
    if properties and how == "file":
        (bundle / "metadata" / "properties.yaml").write_text(yaml.safe_dump({"properties": properties}, sort_keys=False))
    elif properties:
        (csv,) = (bundle / "manifests").glob("*.clusterserviceversion.yaml")
        text = csv.read_text()
        # JSON in a single-quoted YAML scalar, as operator authors write it (opm reads it into the bundle's properties).
        annotation = f"    olm.properties: '{json.dumps(properties)}'\n"
        csv.write_text(text.replace("  annotations:\n", "  annotations:\n" + annotation, 1))
    return bundle


def render_catalog(opm, bundles, dest):
    """An FBC directory: per case its package, channel `stable` and the bundle rendered by the real `opm render`."""
    for case, bundle in bundles.items():
        rendered = subprocess.run([str(opm), "render", str(bundle), "-o", "yaml"], capture_output=True, text=True, check=False)  # noqa: S603
        assert rendered.returncode == 0, rendered.stderr
        docs = [
            {"schema": "olm.package", "name": package(case), "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": package(case), "name": "stable", "entries": [{"name": f"{package(case)}.v{VERSION}"}]},
        ]
        target = Path(dest) / package(case) / "catalog.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        parts = [yaml.safe_dump(doc, sort_keys=False) for doc in docs] + [rendered.stdout.strip().lstrip("-").strip() + "\n"]
        target.write_text("---\n" + "---\n".join(parts))
    return Path(dest)


class OpenShiftMember:
    """The member cluster OLM takes for OpenShift RELEASE, with every case installed, and OLM's settled verdict."""

    def __init__(self, testbed, work, release=RELEASE, cases=None, catalog=CATALOG):
        started = time.monotonic()
        self.release, self.cases, self.catalog = release, CASES if cases is None else cases, catalog
        self.facts = testbed.ensure_openshift_member(release=release)
        self.up_seconds = round(time.monotonic() - started, 1)
        self.kubeconfig = self.facts["kubeconfig"]
        self.api = api_client(self.kubeconfig, pool=8)
        self.custom = client.CustomObjectsApi(self.api)
        self.work = work
        bundles = {case: write_bundle(work / "bundles", case) for case in cases}
        fbc = render_catalog(Path(testbed.state["bin"]) / "opm", bundles, work / "fbc")
        self.address = testbed.serve_catalog(fbc, name=catalog)

    def install_all(self):
        auth = {"kubeconfig": self.kubeconfig}
        source = run_module_subprocess(
            self.work, "olm_catalog_source", dict(auth, name=self.catalog, namespace=CATALOG_NAMESPACE, address=self.address, wait_timeout=120)
        )
        assert not source.get("failed"), source

        def one(case):
            work = self.work / f"install-{case}"
            work.mkdir()
            args = dict(auth, package=package(case), namespace=namespace(case), catalog=self.catalog, catalog_namespace=CATALOG_NAMESPACE, channel="stable")
            installed = run_module_subprocess(work, "olm_operator", dict(args, wait_timeout=300))
            assert not installed.get("failed"), (case, installed.get("msg"))
            return case

        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(one, self.cases))

    def cluster_operator(self):
        return self.custom.get_cluster_custom_object("config.openshift.io", "v1", "clusteroperators", CLUSTER_OPERATOR)

    def upgradeable(self):
        conditions = (self.cluster_operator().get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "Upgradeable"), None)

    def settled_upgradeable(self, quiet=6.0, timeout=180):
        """Upgradeable once it has stayed the same (status, reason, message) for ``quiet`` seconds, OLM past its own
        start ("Waiting for updates to take effect") and naming no CSV that is not installed."""
        seen = {"value": None, "since": 0.0}

        def probe():
            condition = self.upgradeable()
            value = condition and (condition["status"], condition.get("reason"), condition.get("message"))
            if value != seen["value"]:
                seen.update(value=value, since=time.monotonic())
            return condition

        def settled(condition):
            if not condition or condition.get("message") == WAITING:
                return False
            return time.monotonic() - seen["since"] >= quiet

        return poll_until(probe, timeout, interval=1.0, describe=f"ClusterOperator {CLUSTER_OPERATOR} Upgradeable to settle", until=settled)

    def next_minor(self):
        """The minor after the one ClusterVersion `version` says the cluster runs (as OLM computes it from
        RELEASE_VERSION: 4.20.x -> 4.21)."""
        version = self.custom.get_cluster_custom_object("config.openshift.io", "v1", "clusterversions", CLUSTER_VERSION)
        major, minor = version["status"]["desired"]["version"].split(".")[:2]
        return f"{major}.{int(minor) + 1}"

    def original_csvs(self):
        """namespace/name of every CSV that is not a copy (OLM labels copies olm.copiedFrom)."""
        listing = self.custom.list_cluster_custom_object("operators.coreos.com", "v1alpha1", "clusterserviceversions", label_selector="!olm.copiedFrom")
        return {f"{c['metadata']['namespace']}/{c['metadata']['name']}" for c in listing["items"]}

    def copies_of(self, name):
        listing = self.custom.list_cluster_custom_object("operators.coreos.com", "v1alpha1", "clusterserviceversions", label_selector="olm.copiedFrom")
        return [c["metadata"]["namespace"] for c in listing["items"] if c["metadata"]["name"] == name]


def installed_member(testbed, work, release, cases, catalog):
    """The OpenShift member at ``release`` with ``cases`` installed and OLM's settled verdict: (member, condition,
    {csv: line}); the member is stopped at the end (it loads the machine)."""
    member = None
    try:
        member = OpenShiftMember(testbed, work, release=release, cases=cases, catalog=catalog)
        started = time.monotonic()
        member.install_all()
        installed = time.monotonic()
        condition = member.settled_upgradeable()
        print(
            f"member {member.facts['name']} (OpenShift {release}) up in {member.up_seconds} s; {len(cases)} operators installed in "
            f"{installed - started:.1f} s; Upgradeable settled {time.monotonic() - installed:.1f} s later"
        )
        yield member, condition, blocking_csvs(condition)
    finally:
        if member:
            member.api.close()
        testbed.stop_member(OPENSHIFT_MEMBER)
        testbed.stop_catalog(catalog)


@pytest.fixture(scope="module")
def openshift_member(testbed, tmp_path_factory):
    """The OpenShift 4.20 member with every case of CASES installed and OLM's settled verdict."""
    yield from installed_member(testbed, tmp_path_factory.mktemp("ocp-upgrade"), RELEASE, CASES, CATALOG)


@pytest.fixture(scope="module")
def openshift_member_5_0(testbed, tmp_path_factory):
    """The member started again as OpenShift RELEASE_5_0 with the cases of CASES_5_0 and OLM's settled verdict."""
    yield from installed_member(testbed, tmp_path_factory.mktemp("ocp-upgrade-5"), RELEASE_5_0, CASES_5_0, CATALOG_5_0)


def test_olm_names_the_csvs_the_rule_says(openshift_member):
    """OLM's own verdict on the cases, as helpers.go reads: below or at the current minor and invalid declarations
    block the next minor, the next minor and above do not, no declaration never does, copies are never named."""
    member, condition, named = openshift_member
    for case, (values, _how, _verdict) in CASES.items():
        print(f"{package(case)} | {','.join(values) or '-'} | {named.get(csv_key(case), (None, 'not named'))[1]}")
    assert member.next_minor() == "4.21"
    assert condition["status"] == "False", condition
    assert {key: kind for key, (kind, _line) in named.items()} == {csv_key(case): verdict for case, (_v, _h, verdict) in CASES.items() if verdict}
    for case, (values, _how, verdict) in CASES.items():
        if verdict == "max":
            assert named[csv_key(case)][1] == f"maximum supported OCP version for {csv_key(case)} is {values[0]}"
    assert member.copies_of(f"{package(GLOBAL_CASE)}.v{VERSION}"), "OLM made no copies of the global operator's CSV"
    assert set(named) <= member.original_csvs()


def test_module_verdict_equals_olm(openshift_member):
    """olm_upgrade_plan for OLM's next minor names exactly the CSVs OLM's condition names, with OLM's text for each,
    and every other installed operator as not blocking."""
    member, _condition, named = openshift_member
    target = member.next_minor()
    work = member.work / f"plan-{os.urandom(3).hex()}"
    work.mkdir()
    result = run_module_subprocess(work, "olm_upgrade_plan", {"kubeconfig": member.kubeconfig, "openshift_version": target})
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False
    assert result["target"] == target
    assert sorted(result["blockers"]) == sorted(named)

    operators = {f"{op['namespace']}/{op['name']}": op for op in result["operators"] if op["generation"] == "v0"}
    assert len(operators) == len([op for op in result["operators"] if op["generation"] == "v0"]), "an operator reported twice"
    # Every original CSV once, no copy: the global operator's copies are not operators of their namespaces.
    assert set(operators) == member.original_csvs()
    table = []
    for case, (values, _how, _verdict) in CASES.items():
        op = operators[csv_key(case)]
        line = named.get(csv_key(case), (None, "not named"))[1]
        table.append((package(case), ",".join(values) or "-", line, op["blocks_upgrade"], op["block_reason"]))
        assert op["package"] == package(case)
        assert op["installed_version"] == VERSION
        if len(values) == 1:
            assert op["max_openshift_version"] == values[0]
        elif not values:
            assert op["max_openshift_version"] is None
    print("\n".join(" | ".join(str(cell) for cell in row) for row in table))
    for key, op in operators.items():
        if key in named:
            assert op["blocks_upgrade"] is True, op
            assert (op["block_reason"] or "").removeprefix("- ") == named[key][1], (op["block_reason"], named[key][1])
        else:
            assert op["blocks_upgrade"] is False, op
            assert op["block_reason"] is None, op
    assert result["verdict"] == ("ready" if not named else "blocked")  # no target catalog given: no path for a blocker


@pytest.mark.parametrize("target", ["5.0", "4.23"])
def test_module_verdict_equals_olm_for_5_0(openshift_member_5_0, target):
    """On OpenShift 4.22 OLM's next minor is 4.23, the one upgrade to 5.0, and a declared 4.23 is 5.0: OLM names the
    CSV declaring 4.22 only, and olm_upgrade_plan for 5.0 and for 4.23 names exactly that CSV with OLM's line (not the
    one declaring 4.23, which a plain comparison with 5.0 would block)."""
    member, condition, named = openshift_member_5_0
    assert member.next_minor() == "4.23"
    assert condition["status"] == "False", condition
    assert {key: kind for key, (kind, _line) in named.items()} == {csv_key(case): verdict for case, (_v, _h, verdict) in CASES_5_0.items() if verdict}
    work = member.work / f"plan-{target}-{os.urandom(3).hex()}"
    work.mkdir()
    result = run_module_subprocess(work, "olm_upgrade_plan", {"kubeconfig": member.kubeconfig, "openshift_version": target})
    assert not result.get("failed"), result.get("msg")
    assert result["target"] == "5.0"
    assert sorted(result["blockers"]) == sorted(named)
    operators = {f"{op['namespace']}/{op['name']}": op for op in result["operators"] if op["generation"] == "v0"}
    assert set(operators) == member.original_csvs()
    for case, (values, _how, _verdict) in CASES_5_0.items():
        op = operators[csv_key(case)]
        assert op["max_openshift_version"] == values[0]
        assert op["blocks_upgrade"] is (csv_key(case) in named), op
        assert (op["block_reason"] or "").removeprefix("- ") == (named[csv_key(case)][1] if csv_key(case) in named else ""), op
    assert result["olm_condition"]["status"] == condition["status"]
    assert result["olm_condition"]["reason"] == condition.get("reason")
    assert result["olm_condition"]["message"] == condition.get("message")
