"""The mirror a running cluster needs, and the upgrade from it: an operator installed by OLM v0 at an older version,
read back with olm_operator_info, turned into catalog_mirror's select by the mirror_select filter, mirrored from the
test registry's catalog image into another repository of that registry, and then upgraded by olm_operator to the next
version from the mirrored catalog.

The source catalog (built in the test; bundles made from kube-demo's by renaming, rendered by the real `opm render`,
each bundle directory pushed as a bundle image): kube-mir 0.0.5 -> 0.1.0 -> 0.2.0 on channel stable, and
kube-mirother 0.1.0. kube-mir 0.1.0 is installed (pinned) from an `opm serve` of that catalog. The mirror must hold
exactly kube-mir 0.1.0 and 0.2.0 - not 0.0.5 (below what runs) nor kube-mirother (not installed) - with their bundle
images copied by digest; the operator images the CSVs name (example.invalid) are left out with blocked_images.

The mirrored catalog is pulled back from the mirror and served by the testbed's `opm serve` as a CatalogSource
(the testbed's KWOK node runs no catalog pod from an image), the Subscription is pointed at it and olm_operator upgrades
to 0.2.0: OLM resolves the upgrade from the mirror's catalog.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.runners import ansible_env, run_module_subprocess
from testbed.fleet_catalog import write_renamed_bundles

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import BaseImage, build_catalog_image, build_directory_image, push_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_catalog

pytestmark = pytest.mark.testbed

PACKAGE, OTHER = "kube-mir", "kube-mirother"
SOURCE, MIRRORED = "mir-source", "mir-mirror"


def _renames(package, group):
    return {
        "demo.kubeforge.io": f"{group}.kubeforge.io",
        "kubedemos": f"kube{group}s",
        "singular: kubedemo\n": f"singular: kube{group}\n",
        "KubeDemo": f"Kube{group.capitalize()}",
        "kube-demo": package,
    }


# package -> (renames, {version: (kube-demo bundle, version it replaces)})
PACKAGES = {
    PACKAGE: (_renames(PACKAGE, "mir"), {"0.0.5": ("0.0.1", None), "0.1.0": ("0.0.2", "0.0.5"), "0.2.0": ("0.0.2", "0.1.0")}),
    OTHER: (_renames(OTHER, "mirother"), {"0.1.0": ("0.0.1", None)}),
}

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: What the cluster runs
      kubeforge.operators.olm_operator_info:
        kubeconfig: "{{ kubeconfig }}"
        namespace: "{{ operator_namespace }}"
      register: installed

    - name: Mirror what it runs, from there up to the channel heads
      kubeforge.operators.catalog_mirror:
        source_image: "{{ source_image }}"
        mirror: "{{ mirror }}"
        select: "{{ [installed] | kubeforge.operators.mirror_select(sources=[source_name]) }}"
        blocked_images: ["^example[.]invalid/"]
        registry_username: "{{ username }}"
        registry_password: "{{ password }}"
        ca_file: "{{ ca_file }}"
      register: mirrored

    - name: Save the results
      ansible.builtin.copy:
        dest: "{{ out }}"
        content: "{{ {'select': [installed] | kubeforge.operators.mirror_select(sources=[source_name]), 'mirrored': mirrored} | to_json }}"
        mode: "0600"
"""


def build_source(opm, registry, opm_base, work):
    """Push the bundle images and the catalog image; ``(fbc directory, catalog reference, {bundle: image})``."""
    reg = registry.client()
    docs, images = [], {}
    for package, (renames, versions) in PACKAGES.items():
        bundles = write_renamed_bundles(work / "bundles" / package, renames, versions)
        entries = []
        for version, (_source, replaces) in versions.items():
            directory = bundles / version
            labels = yaml.safe_load((directory / "metadata" / "annotations.yaml").read_text())["annotations"]
            image = build_directory_image(str(directory), "/", labels=labels)
            push_image(reg, f"{registry.host}/kubeforge/{package}-bundle:v{version}", image)
            out = subprocess.run([str(opm), "render", str(directory), "-o", "yaml"], capture_output=True, text=True, check=False)  # noqa: S603
            assert out.returncode == 0, out.stderr
            bundle = yaml.safe_load(out.stdout.strip().lstrip("-"))
            bundle["image"] = images[bundle["name"]] = f"{registry.host}/kubeforge/{package}-bundle@{image.digest}"
            docs.append(bundle)
            entry = {"name": f"{package}.v{version}"}
            if replaces:
                entry["replaces"] = f"{package}.v{replaces}"
            entries.append(entry)
        docs[:0] = [
            {"schema": "olm.package", "name": package, "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": package, "name": "stable", "entries": entries},
        ]
    fbc = work / "fbc"
    for package in PACKAGES:
        (fbc / package).mkdir(parents=True)
        mine = [d for d in docs if d.get("package") == package or d.get("name") == package]
        (fbc / package / "catalog.json").write_text("\n".join(json.dumps(d) for d in mine))
    catalog = build_catalog_image(str(fbc), base=BaseImage.pull(opm_base[0], reg))
    push_image(reg, f"{registry.host}/kubeforge/mir-index:v1", catalog)
    return fbc, f"{registry.host}/kubeforge/mir-index:v1", images


def _csv_phase(api, namespace, name):
    csv = client.CustomObjectsApi(api).get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", name)
    return csv["status"]["phase"]


def test_mirror_what_runs_and_upgrade_from_the_mirror(api, testbed, kubeconfig, namespace, registry, opm_base, tmp_path):
    fbc, source_image, images = build_source(Path(testbed.state["bin"]) / "opm", registry, opm_base, tmp_path)
    auth = {"kubeconfig": kubeconfig}
    try:
        # kube-mir 0.1.0 installed by OLM from the source catalog
        address = testbed.serve_catalog(fbc, name=SOURCE)
        source = run_module_subprocess(tmp_path, "olm_catalog_source", dict(auth, name=SOURCE, namespace=namespace, address=address, wait_timeout=120))
        assert not source.get("failed"), source
        args = dict(
            auth, package=PACKAGE, namespace=namespace, catalog=SOURCE, catalog_namespace=namespace, channel="stable", version="0.1.0", wait_timeout=300
        )
        first = run_module_subprocess(tmp_path, "olm_operator", args)
        assert not first.get("failed"), first.get("msg")
        assert (first["installed_csv"], first["phase"]) == (f"{PACKAGE}.v0.1.0", "Succeeded")

        # the select from what runs, and the mirror made with it (through ansible-playbook)
        mirror = f"{registry.host}/mirror"
        extra = {
            "kubeconfig": kubeconfig,
            "operator_namespace": namespace,
            "source_image": source_image,
            "source_name": SOURCE,
            "mirror": mirror,
            "username": registry.username,
            "password": registry.password,
            "ca_file": registry.ca_file,
            "out": str(tmp_path / "results.json"),
        }
        (tmp_path / "play.yml").write_text(PLAYBOOK)
        (tmp_path / "vars.yml").write_text(yaml.safe_dump(extra))
        command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@vars.yml", "play.yml"]
        env = dict(ansible_env(tmp_path), ANSIBLE_PYTHON_INTERPRETER=sys.executable)
        proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300, check=False)  # noqa: S603
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
        assert registry.password not in proc.stdout + proc.stderr
        results = json.loads((tmp_path / "results.json").read_text())
        select, mirrored = results["select"], results["mirrored"]
        assert select == {"packages": [{"name": PACKAGE, "installed_version": "0.1.0"}]}

        # the mirror holds exactly what was selected: kube-mir 0.1.0 and 0.2.0, their bundle images by digest
        assert mirrored["catalog"]["packages"] == [PACKAGE]
        kept = {f"{PACKAGE}.v0.1.0", f"{PACKAGE}.v0.2.0"}
        copied = {i["source"]: i for i in mirrored["images"][1:]}
        assert sorted(copied) == sorted(images[b] for b in kept), copied
        assert all(i["state"] == "copied" and i["mirror"] == i["source"].replace(registry.host, mirror) for i in copied.values())
        assert (mirrored["totals"]["images"], mirrored["totals"]["copied"], mirrored["totals"]["failed"]) == (3, 3, 0)
        assert mirrored["blocked"] == sorted(f"example.invalid/kubeforge/{PACKAGE}-{kind}:v{v}" for kind in ("agent", "operator") for v in ("0.1.0", "0.2.0"))
        assert sorted(b for i in copied.values() for b in i["bundles"]) == sorted(kept)
        reg = registry.client()
        pulled, _image = pull_catalog(mirrored["catalog"]["image"], str(tmp_path / "pulled"), client=reg)
        cfg = load(pulled)
        assert sorted(b["name"] for b in cfg.bundles) == sorted(kept)
        # the catalog names the bundles as the source did, by digest (the ImageDigestMirrorSet sends pulls to the mirror)
        assert {b["name"]: b["image"] for b in cfg.bundles} == {b: images[b] for b in kept}
        assert mirrored["resources"]["image_digest_mirror_set"]["spec"]["imageDigestMirrors"] == [
            {"source": f"{registry.host}/kubeforge/{PACKAGE}-bundle", "mirrors": [f"{mirror}/kubeforge/{PACKAGE}-bundle"]}
        ]
        for b in kept:  # the copies are in the mirror, under the digests the catalog names
            repo, digest = copied[images[b]]["mirror"][len(registry.host) + 1 :].split("@")
            assert reg.head_manifest(repo, digest)["digest"] == digest

        # the mirrored catalog served, the Subscription pointed at it, the upgrade from the mirror
        address = testbed.serve_catalog(Path(pulled), name=MIRRORED)
        source = run_module_subprocess(tmp_path, "olm_catalog_source", dict(auth, name=MIRRORED, namespace=namespace, address=address, wait_timeout=120))
        assert not source.get("failed"), source
        upgrade = run_module_subprocess(tmp_path, "olm_operator", dict(args, catalog=MIRRORED, version="0.2.0"))
        assert not upgrade.get("failed"), upgrade.get("msg")
        assert upgrade["changed"] is True
        assert (upgrade["installed_csv"], upgrade["phase"], upgrade["version"]) == (f"{PACKAGE}.v0.2.0", "Succeeded", "0.2.0")
        assert upgrade["subscription"]["spec"]["source"] == MIRRORED
        assert _csv_phase(api, namespace, f"{PACKAGE}.v0.2.0") == "Succeeded"
    finally:
        testbed.stop_catalog(SOURCE)
        testbed.stop_catalog(MIRRORED)
