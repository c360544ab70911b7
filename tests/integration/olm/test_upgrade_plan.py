"""olm_upgrade_plan against the testbed's real OLM v0: an operator installed by OLM from a catalog whose bundles
declare `olm.maxOpenShiftVersion`, judged with the target catalog given as an FBC directory and as a rendered file.

kube-plan (kube-demo's bundles renamed, a CRD group of its own): 0.1.0 declares 4.20 (in metadata/properties.yaml, as
operator authors write it; `opm render` puts it into the bundle's properties and OLM into the CSV's
operatorframework.io/properties annotation), 0.2.0 replaces it and declares 4.22. 0.1.0 is installed (Manual, pinned)
in a namespace of the test's own, from an `opm serve` of that catalog. The module reads the CSV OLM wrote - the
property comes from OLM's annotation, not from our catalog - and the target catalog from the files.

The comparison with OLM's own ClusterOperator verdict is tests/integration/olm/test_upgrade_readiness_real_olm.py.
"""

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.runners import run_module_subprocess
from testbed.fleet_catalog import write_renamed_bundles

pytestmark = pytest.mark.testbed

PACKAGE = "kube-plan"
CATALOG = "upgrade-plan"
RENAMES = {
    "demo.kubeforge.io": "plan.kubeforge.io",
    "kubedemos": "kubeplans",
    "singular: kubedemo\n": "singular: kubeplan\n",
    "KubeDemo": "KubePlan",
    "kube-demo": PACKAGE,
}
# version -> (the kube-demo bundle it is made from, the version it replaces, its olm.maxOpenShiftVersion)
VERSIONS = {"0.1.0": ("0.0.1", None, "4.20"), "0.2.0": ("0.0.2", "0.1.0", "4.22")}


def render_catalog(opm, work):
    """``(fbc directory, the same catalog as one file)``: package, channel stable, both bundles by the real `opm render`."""
    bundles = write_renamed_bundles(work / "bundles", RENAMES, {v: (source, replaces) for v, (source, replaces, _max) in VERSIONS.items()})
    entries = []
    rendered = []
    for version, (_source, replaces, maximum) in VERSIONS.items():
        properties = {"properties": [{"type": "olm.maxOpenShiftVersion", "value": maximum}]}
        (bundles / version / "metadata" / "properties.yaml").write_text(yaml.safe_dump(properties, sort_keys=False))
        out = subprocess.run([str(opm), "render", str(bundles / version), "-o", "yaml"], capture_output=True, text=True, check=False)  # noqa: S603
        assert out.returncode == 0, out.stderr
        rendered.append(out.stdout.strip().lstrip("-").strip() + "\n")
        entry = {"name": f"{PACKAGE}.v{version}"}
        if replaces:
            entry["replaces"] = f"{PACKAGE}.v{replaces}"
        entries.append(entry)
    docs = [
        yaml.safe_dump({"schema": "olm.package", "name": PACKAGE, "defaultChannel": "stable"}, sort_keys=False),
        yaml.safe_dump({"schema": "olm.channel", "package": PACKAGE, "name": "stable", "entries": entries}, sort_keys=False),
    ]
    text = "---\n" + "---\n".join(docs + rendered)
    fbc = work / "fbc"
    (fbc / PACKAGE).mkdir(parents=True)
    (fbc / PACKAGE / "catalog.yaml").write_text(text)
    single = work / "catalog.yaml"
    single.write_text(text)
    return fbc, single


@pytest.fixture(scope="module")
def installed(api, testbed, tmp_path_factory):
    """``(namespace, fbc directory, catalog file, work directory)`` with kube-plan 0.1.0 installed by OLM."""
    work = tmp_path_factory.mktemp("upgrade-plan")
    fbc, single = render_catalog(Path(testbed.state["bin"]) / "opm", work)
    address = testbed.serve_catalog(fbc, name=CATALOG)
    name = "t-upgrade-plan-" + os.urandom(3).hex()
    core = client.CoreV1Api(api)
    core.create_namespace({"metadata": {"name": name}})
    try:
        auth = {"kubeconfig": testbed.kubeconfig}
        source = run_module_subprocess(work, "olm_catalog_source", dict(auth, name=CATALOG, namespace=name, address=address, wait_timeout=120))
        assert not source.get("failed"), source
        args = dict(auth, package=PACKAGE, namespace=name, catalog=CATALOG, catalog_namespace=name, channel="stable", version="0.1.0", wait_timeout=300)
        operator = run_module_subprocess(work, "olm_operator", args)
        assert not operator.get("failed"), operator.get("msg")
        yield name, fbc, single, work
    finally:
        core.delete_namespace(name)


def plan(installed, testbed, **args):
    _name, _fbc, _single, work = installed
    result = run_module_subprocess(work, "olm_upgrade_plan", dict({"kubeconfig": testbed.kubeconfig, "packages": [PACKAGE]}, **args))
    assert not result.get("failed"), result.get("msg")
    assert result["changed"] is False
    return result


def test_a_blocking_operator_with_a_path_in_the_target_directory(installed, testbed):
    name, fbc, _single, _work = installed
    result = plan(installed, testbed, openshift_version="4.21.2", catalogs=[{"source": CATALOG, "source_namespace": name, "dir": str(fbc)}])
    assert (result["target"], result["verdict"], result["blockers"]) == ("4.21", "needs_action", [f"{name}/{PACKAGE}.v0.1.0"])
    (op,) = [op for op in result["operators"] if op["namespace"] == name]
    assert (op["generation"], op["name"], op["package"], op["channel"], op["installed_version"], op["source"]) == (
        "v0",
        f"{PACKAGE}.v0.1.0",
        PACKAGE,
        "stable",
        "0.1.0",
        CATALOG,
    )
    # read from the annotation OLM wrote on the CSV
    assert (op["max_openshift_version"], op["blocks_upgrade"]) == ("4.20", True)
    assert op["block_reason"] == f"- maximum supported OCP version for {name}/{PACKAGE}.v0.1.0 is 4.20"
    assert op["target_catalog"] == {"package": True, "channel": True}
    assert (op["target_version"], op["path"], op["deprecations"]) == ("0.2.0", ["0.1.0", "0.2.0"], [])
    assert op["action"] == {"kind": "upgrade", "to_version": "0.2.0", "to_channel": None, "reason": "0.2.0 allows OpenShift 4.21"}
    assert result["olm_condition"]["message"].splitlines()[1:] == [op["block_reason"]]


def test_no_version_allows_the_target_in_the_catalog_file(installed, testbed):
    name, _fbc, single, _work = installed
    result = plan(installed, testbed, openshift_version="4.23", catalogs=[{"source": CATALOG, "file": str(single)}])
    assert (result["target"], result["verdict"]) == ("5.0", "blocked")
    (op,) = [op for op in result["operators"] if op["namespace"] == name]
    assert (op["action"]["kind"], op["target_version"], op["path"]) == ("remove_or_replace", None, [])


def test_the_installed_version_allows_an_older_target(installed, testbed):
    name, _fbc, _single, _work = installed
    result = plan(installed, testbed, openshift_version="4.20")
    (op,) = [op for op in result["operators"] if op["namespace"] == name]
    assert (op["blocks_upgrade"], op["block_reason"], op["target_catalog"], op["action"]["kind"]) == (False, None, None, "none")
    assert f"{name}/{PACKAGE}.v0.1.0" not in result["blockers"]
