"""catalog_diff and olm_upgrade_plan on one catalog pair, with operators OLM v0 installed from the old catalog: a
package the new catalog drops and a channel it deprecates. Both modules must say so, and agree where they both speak.

Two packages made from kube-demo's bundles by renaming (CRD groups of their own), rendered by the real `opm render`:

- kube-gone 0.1.0 (channel stable): in the old catalog only.
- kube-chan 0.1.0 (channel alpha, the default, declaring olm.maxOpenShiftVersion 4.20) in both; the new catalog adds
  channel stable, now the default, with 0.2.0 replacing 0.1.0 (declaring 4.22), and deprecates alpha.

Both operators are installed by OLM (olm_operator, pinned) from an `opm serve` of the old catalog. catalog_diff compares
old -> new; olm_upgrade_plan judges the cluster against OpenShift 4.21 with the new catalog as target: kube-gone must
be removed or replaced, kube-chan (blocking on 4.20) must switch to stable, the channel the deprecation and the new
default channel name, and reach 0.2.0 there.
"""

import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.runners import run_module_subprocess
from testbed.fleet_catalog import write_renamed_bundles

pytestmark = pytest.mark.testbed

CATALOG = "catalog-pair"
GONE, CHAN = "kube-gone", "kube-chan"
DEPRECATION = "alpha is no longer maintained, use stable"


def _renames(package, group):
    return {
        "demo.kubeforge.io": f"{group}.kubeforge.io",
        "kubedemos": f"kube{group}s",
        "singular: kubedemo\n": f"singular: kube{group}\n",
        "KubeDemo": f"Kube{group.capitalize()}",
        "kube-demo": package,
    }


# package -> (renames, {version: (kube-demo bundle, version it replaces, olm.maxOpenShiftVersion or None)})
PACKAGES = {
    GONE: (_renames(GONE, "gone"), {"0.1.0": ("0.0.1", None, None)}),
    CHAN: (_renames(CHAN, "chan"), {"0.1.0": ("0.0.1", None, "4.20"), "0.2.0": ("0.0.2", "0.1.0", "4.22")}),
}


def _dump(docs):
    return "---\n" + "---\n".join(d if isinstance(d, str) else yaml.safe_dump(d, sort_keys=False) for d in docs)


def render_bundles(opm, work):
    """``{(package, version): rendered olm.bundle YAML}`` by the real `opm render` of each renamed bundle directory."""
    rendered = {}
    for package, (renames, versions) in PACKAGES.items():
        bundles = write_renamed_bundles(work / "bundles" / package, renames, {v: (s, r) for v, (s, r, _m) in versions.items()})
        for version, (_source, _replaces, maximum) in versions.items():
            if maximum:
                properties = {"properties": [{"type": "olm.maxOpenShiftVersion", "value": maximum}]}
                (bundles / version / "metadata" / "properties.yaml").write_text(yaml.safe_dump(properties, sort_keys=False))
            out = subprocess.run([str(opm), "render", str(bundles / version), "-o", "yaml"], capture_output=True, text=True, check=False)  # noqa: S603
            assert out.returncode == 0, out.stderr
            rendered[(package, version)] = out.stdout.strip().lstrip("-").strip() + "\n"
    return rendered


def write_pair(opm, work):
    """``(old fbc directory, new fbc directory)``."""
    bundle = render_bundles(opm, work)
    old = {
        GONE: [
            {"schema": "olm.package", "name": GONE, "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": GONE, "name": "stable", "entries": [{"name": f"{GONE}.v0.1.0"}]},
            bundle[(GONE, "0.1.0")],
        ],
        CHAN: [
            {"schema": "olm.package", "name": CHAN, "defaultChannel": "alpha"},
            {"schema": "olm.channel", "package": CHAN, "name": "alpha", "entries": [{"name": f"{CHAN}.v0.1.0"}]},
            bundle[(CHAN, "0.1.0")],
        ],
    }
    new = {
        CHAN: [
            {"schema": "olm.package", "name": CHAN, "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": CHAN, "name": "alpha", "entries": [{"name": f"{CHAN}.v0.1.0"}]},
            {
                "schema": "olm.channel",
                "package": CHAN,
                "name": "stable",
                "entries": [{"name": f"{CHAN}.v0.1.0"}, {"name": f"{CHAN}.v0.2.0", "replaces": f"{CHAN}.v0.1.0"}],
            },
            {"schema": "olm.deprecations", "package": CHAN, "entries": [{"reference": {"schema": "olm.channel", "name": "alpha"}, "message": DEPRECATION}]},
            bundle[(CHAN, "0.1.0")],
            bundle[(CHAN, "0.2.0")],
        ],
    }
    dirs = []
    for side, packages in (("old", old), ("new", new)):
        for package, docs in packages.items():
            (work / side / package).mkdir(parents=True)
            (work / side / package / "catalog.yaml").write_text(_dump(docs))
        dirs.append(work / side)
    return tuple(dirs)


@pytest.fixture(scope="module")
def installed(api, testbed, tmp_path_factory):
    """``({package: namespace}, old fbc, new fbc, work directory)`` with kube-gone 0.1.0 and kube-chan 0.1.0 installed
    by OLM, each in a namespace of its own (installed at once) with a CatalogSource at the old catalog."""
    work = tmp_path_factory.mktemp("catalog-pair")
    old, new = write_pair(Path(testbed.state["bin"]) / "opm", work)
    address = testbed.serve_catalog(old, name=CATALOG)
    suffix = os.urandom(3).hex()
    namespaces = {GONE: f"t-catalog-pair-gone-{suffix}", CHAN: f"t-catalog-pair-chan-{suffix}"}
    core = client.CoreV1Api(api)
    auth = {"kubeconfig": testbed.kubeconfig}

    def install(package, channel):
        name, own = namespaces[package], work / package
        own.mkdir()
        source = run_module_subprocess(own, "olm_catalog_source", dict(auth, name=CATALOG, namespace=name, address=address, wait_timeout=120))
        assert not source.get("failed"), source
        args = dict(auth, package=package, namespace=name, catalog=CATALOG, catalog_namespace=name, channel=channel, version="0.1.0", wait_timeout=300)
        operator = run_module_subprocess(own, "olm_operator", args)
        assert not operator.get("failed"), operator.get("msg")

    try:
        for name in namespaces.values():
            core.create_namespace({"metadata": {"name": name}})
        with ThreadPoolExecutor(2) as pool:
            for future in [pool.submit(install, GONE, "stable"), pool.submit(install, CHAN, "alpha")]:
                future.result()
        yield namespaces, old, new, work
    finally:
        for name in namespaces.values():
            try:
                core.delete_namespace(name)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
        testbed.stop_catalog(CATALOG)


def test_diff_and_plan_agree_on_the_gone_package_and_the_deprecated_channel(installed, testbed):
    namespaces, old, new, work = installed
    diff = run_module_subprocess(work, "catalog_diff", {"old": str(old), "new": str(new)})
    assert not diff.get("failed"), diff.get("msg")
    plan = run_module_subprocess(
        work,
        "olm_upgrade_plan",
        {
            "kubeconfig": testbed.kubeconfig,
            "openshift_version": "4.21",
            "packages": [GONE, CHAN],
            "catalogs": [{"source": CATALOG, "dir": str(new)}],
        },
    )
    assert not plan.get("failed"), plan.get("msg")
    ops = {op["package"]: op for op in plan["operators"] if op["namespace"] == namespaces.get(op["package"])}
    assert sorted(ops) == [CHAN, GONE], plan["operators"]
    gone, chan = ops[GONE], ops[CHAN]

    # what catalog_diff says
    assert diff["differs"] is True
    assert diff["packages"] == {"added": [], "removed": [GONE]}
    assert diff["olm_deprecations"] == {
        "added": [{"package": CHAN, "schema": "olm.channel", "name": "alpha", "message": DEPRECATION}],
        "removed": [],
        "changed": [],
    }
    assert diff["default_channels"] == [{"package": CHAN, "old": "alpha", "new": "stable"}]
    assert diff["channels"]["added"] == [{"package": CHAN, "channel": "stable"}]
    assert [(b["package"], b["bundle"]) for b in diff["bundles"]["added"]] == [(CHAN, f"{CHAN}.v0.2.0")]

    # what olm_upgrade_plan says: read from the cluster (the CSVs and Subscriptions OLM wrote), judged on the new catalog
    assert (gone["name"], gone["channel"], gone["installed_version"], gone["source"]) == (f"{GONE}.v0.1.0", "stable", "0.1.0", CATALOG)
    assert (gone["blocks_upgrade"], gone["target_catalog"], gone["deprecations"]) == (False, {"package": False, "channel": False}, [])
    assert gone["action"] == {"kind": "remove_or_replace", "to_version": None, "to_channel": None, "reason": f"the target catalog has no package {GONE}"}
    assert (chan["name"], chan["channel"], chan["installed_version"], chan["max_openshift_version"]) == (f"{CHAN}.v0.1.0", "alpha", "0.1.0", "4.20")
    assert (chan["blocks_upgrade"], chan["target_catalog"]) == (True, {"package": True, "channel": True})
    assert chan["deprecations"] == [{"scope": "channel", "name": "alpha", "message": DEPRECATION}]
    assert (chan["action"]["kind"], chan["action"]["to_channel"], chan["action"]["to_version"]) == ("switch_channel", "stable", "0.2.0")
    assert (chan["path"], chan["target_version"]) == (["0.1.0", "0.2.0"], "0.2.0")
    assert (plan["verdict"], plan["blockers"]) == ("needs_action", [f"{namespaces[CHAN]}/{CHAN}.v0.1.0"])

    # field for field where both speak
    removed_by_plan = sorted(op["package"] for op in ops.values() if op["action"]["kind"] == "remove_or_replace" and not op["target_catalog"]["package"])
    assert removed_by_plan == diff["packages"]["removed"]
    from_diff = sorted((d["package"], d["schema"], d["name"] or d["package"], d["message"]) for d in diff["olm_deprecations"]["added"] if d["package"] in ops)
    from_plan = sorted((op["package"], "olm." + d["scope"], d["name"], d["message"]) for op in ops.values() for d in op["deprecations"])
    assert from_plan == from_diff
    for change in diff["default_channels"]:
        op = ops[change["package"]]
        assert (op["channel"], op["action"]["to_channel"]) == (change["old"], change["new"])
    for entry in diff["bundles"]["added"]:
        op = ops[entry["package"]]
        assert op["action"]["to_channel"] in entry["channels"]
        assert entry["bundle"] == f"{op['package']}.v{op['target_version']}"
    # the summary lines a person reads name the same things
    text = "\n".join(diff["summary"])
    assert f"- {GONE}" in text and CHAN in text
