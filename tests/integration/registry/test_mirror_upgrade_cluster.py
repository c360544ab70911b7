"""The mirror a running cluster needs, and the upgrade from it: an operator installed by OLM v0 at an older version,
read back with olm_operator_info, turned into catalog_mirror's select by the mirror_select filter, mirrored from a
source registry's catalog image into the testbed registry, and then upgraded by olm_operator to the next version from
the mirrored catalog image, served and unpacked on the testbed's real node.

The source catalog (built in the test; bundles made from kube-demo's by renaming, rendered by the real `opm render`,
each bundle directory pushed as a bundle image, named by digest): kube-mir 0.0.5 -> 0.1.0 -> 0.2.0 on channel stable,
and kube-mirother 0.1.0, in a repository of this run on the test session's registry (the source: the real node cannot
pull from it - containerd has neither its CA nor its credentials). The catalog image is the catalog with the bundles
named by image only (no olm.bundle.object properties: OLM must unpack them), on the testbed's real opm image, so the
catalog rebuilt by catalog_mirror (the source catalog's layers, the kept operators on top) runs `opm serve`. The CSVs'
operator image is the real node's pause image in the testbed registry (blocked from the mirror: the cluster's
registry holds it already), their agent image a placeholder (example.invalid, blocked).

The namespace's pods all run on the real node (the `real_node_namespace` fixture). kube-mir 0.1.0 is installed
(pinned) from an `opm serve` of the catalog as it was before 0.2.0 was released, bundles inline: the connected
cluster. (Served with 0.2.0 already in it, OLM would resolve the upgrade from that catalog at once, and that pending
InstallPlan would have to be deleted first: olm_operator does not approve a plan from another catalog than the
Subscription's, tests/integration/olm/test_operator.py.) The
mirror must hold exactly kube-mir 0.1.0 and 0.2.0 - not 0.0.5 (below what runs) nor kube-mirother (not installed) -
with their bundle images copied by digest, under the same repository paths in the testbed registry.

Then the cluster is cut off from the source: its CatalogSource is deleted and its `opm serve` stopped, and the
ImageDigestMirrorSet catalog_mirror returned is translated into the real node's containerd mirror configuration (a
certs.d hosts.toml for the source registry, what OpenShift writes on a node for an ImageDigestMirrorSet). A
CatalogSource `sourceType: grpc` whose `image` is exactly the returned `catalog.image` (the mirror's digest
reference) is served, and olm_operator upgrades to 0.2.0 from it. Every pull is real (containerd and runc on the real
node, from the testbed registry):

- the catalog's registry pod pulls the rebuilt catalog by the mirror's digest (its imageID is that digest); OLM's
  catalog operator reads it through its Service (CoreDNS, kube-proxy) and resolves the upgrade from it: the
  InstallPlan's steps and its bundle lookup name the mirrored CatalogSource;
- OLM's bundle unpack Job runs in the CatalogSource's namespace, so on the real node (it has no node selector of its
  own: in a namespace without the real node's selector it lands on a KWOK node and never completes); its `pull`
  init container pulls the 0.2.0 bundle image by its source digest reference, which only the mirror can answer
  (containerd's fallback to the source registry itself has neither its CA nor its credentials);
- the operator's Deployment pulls the pause image (not mirrored), before and after the upgrade.

0.1.0 was installed from inline bundle objects: no bundle image was pulled for it.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from kubernetes import client
from lib.polling import poll_until
from lib.runners import ansible_env, run_module_subprocess
from testbed import realnode
from testbed.fleet_catalog import write_renamed_bundles

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.load import load
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import BaseImage, build_catalog_image, build_directory_image, push_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_catalog

# The real node's OLM group: its registry pods and unpack Jobs run one file at a time there.
pytestmark = [pytest.mark.testbed, pytest.mark.xdist_group("real-node-olm")]

PACKAGE, OTHER = "kube-mir", "kube-mirother"
SOURCE, MIRRORED = "mir-source", "mir-mirror"
UNPACK_LABEL = "operatorframework.io/bundle-unpack-ref"


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
# Released after the install: not in the catalog the cluster installed from, so OLM has no upgrade to resolve before
# the mirror (a pending InstallPlan resolved from the source catalog would be approved instead of the mirror's).
LATER = {f"{PACKAGE}.v0.2.0"}
OPERATOR_IMAGE = re.compile(r"example\.invalid/kubeforge/kube-mir[a-z]*-operator:v[0-9.]+")

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
        blocked_images: "{{ blocked }}"
        resource_name: "{{ mirrored_name }}"
        catalog_source_namespace: "{{ operator_namespace }}"
        source_registry_username: "{{ source_username }}"
        source_registry_password: "{{ source_password }}"
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


def _testbed_registry_client(real_node):
    registry = real_node["registry"]
    password = Path(registry["password_file"]).read_text().strip()
    return RegistryClient(registry["host"], credentials=Credentials(registry["username"], password), ca_file=registry["ca_file"]), password


def build_source(opm, registry, real_node, repository, work):
    """Push the bundle images and the catalog image to the source registry; ``(fbc directory, catalog reference,
    {bundle: image})``. The catalog image names the bundles by image only; the directory is the catalog the cluster
    installed from (bundles inline, before LATER was released)."""
    reg = registry.client()
    docs, images = [], {}
    for package, (renames, versions) in PACKAGES.items():
        bundles = write_renamed_bundles(work / "bundles" / package, renames, versions)
        entries = []
        for version, (_source, replaces) in versions.items():
            directory = bundles / version
            for csv in (directory / "manifests").glob("*.clusterserviceversion.yaml"):
                csv.write_text(OPERATOR_IMAGE.sub(real_node["images"]["pause@digest"], csv.read_text()))
            labels = yaml.safe_load((directory / "metadata" / "annotations.yaml").read_text())["annotations"]
            image = build_directory_image(str(directory), "/", labels=labels)
            push_image(reg, f"{registry.host}/{repository}/{package}-bundle:v{version}", image)
            out = subprocess.run([str(opm), "render", str(directory), "-o", "yaml"], capture_output=True, text=True, check=False)  # noqa: S603
            assert out.returncode == 0, out.stderr
            bundle = yaml.safe_load(out.stdout.strip().lstrip("-"))
            bundle["image"] = images[bundle["name"]] = f"{registry.host}/{repository}/{package}-bundle@{image.digest}"
            docs.append(bundle)
            entry = {"name": f"{package}.v{version}"}
            if replaces:
                entry["replaces"] = f"{package}.v{replaces}"
            entries.append(entry)
        docs[:0] = [
            {"schema": "olm.package", "name": package, "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": package, "name": "stable", "entries": entries},
        ]
    fbc, by_image = work / "fbc", work / "fbc-by-image"
    for package in PACKAGES:
        mine = [d for d in docs if d.get("package") == package or d.get("name") == package]
        only_images = [dict(d, properties=[p for p in d["properties"] if p["type"] != "olm.bundle.object"]) if d["schema"] == "olm.bundle" else d for d in mine]
        before = [_without(d, LATER) for d in mine if d.get("name") not in LATER]
        for root, blobs in ((fbc, before), (by_image, only_images)):
            (root / package).mkdir(parents=True)
            (root / package / "catalog.json").write_text("\n".join(json.dumps(d) for d in blobs))
    tb_client, _password = _testbed_registry_client(real_node)
    catalog = build_catalog_image(str(by_image), base=BaseImage.pull(real_node["images"]["opm@digest"], tb_client))
    push_image(reg, f"{registry.host}/{repository}/mir-index:v1", catalog)
    return fbc, f"{registry.host}/{repository}/mir-index:v1", images


def _without(doc, names):
    """``doc`` with the channel entries of ``names`` left out."""
    if doc["schema"] != "olm.channel":
        return doc
    return dict(doc, entries=[e for e in doc["entries"] if e["name"] not in names])


def _csv_phase(api, namespace, name):
    csv = client.CustomObjectsApi(api).get_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "clusterserviceversions", name)
    return csv["status"]["phase"]


def _container_status(pod, name):
    statuses = (pod.status.init_container_statuses or []) + (pod.status.container_statuses or [])
    return next(s for s in statuses if s.name == name)


def test_mirror_what_runs_and_upgrade_from_the_mirror_on_the_real_node(api, testbed, kubeconfig, real_node_namespace, real_node, registry, tmp_path):
    namespace = real_node_namespace
    repository = "mir-" + os.urandom(4).hex()  # this run's: the testbed registry keeps what earlier runs mirrored
    fbc, source_image, images = build_source(Path(testbed.state["bin"]) / "opm", registry, real_node, repository, tmp_path)
    mirror_host = real_node["registry"]["host"]
    _tb_client, mirror_password = _testbed_registry_client(real_node)
    pause = real_node["images"]["pause@digest"]
    auth = {"kubeconfig": kubeconfig}
    node_mirror = Path(testbed.state["real_node"]["base"]) / "certs.d" / registry.host / "hosts.toml"
    core = client.CoreV1Api(api)
    try:
        # kube-mir 0.1.0 installed by OLM from the source catalog (bundles inline), its operator on the real node
        address = testbed.serve_catalog(fbc, name=SOURCE)
        source = run_module_subprocess(
            tmp_path, "olm_catalog_source", dict(auth, name=SOURCE, namespace=namespace, address=address, wait=True, wait_timeout=120)
        )
        assert not source.get("failed"), source
        args = dict(
            auth, package=PACKAGE, namespace=namespace, catalog=SOURCE, catalog_namespace=namespace, channel="stable", version="0.1.0", wait_timeout=300
        )
        first = run_module_subprocess(tmp_path, "olm_operator", args)
        assert not first.get("failed"), first.get("msg")
        assert (first["installed_csv"], first["phase"]) == (f"{PACKAGE}.v0.1.0", "Succeeded")

        # the select from what runs, and the mirror made with it (through ansible-playbook)
        cas = tmp_path / "cas.pem"  # the source's CA and the mirror's
        cas.write_text(Path(registry.ca_file).read_text() + Path(real_node["registry"]["ca_file"]).read_text())
        blocked_images = ["^example[.]invalid/", "^" + re.escape(pause.split("@")[0]) + "@"]
        extra = {
            "kubeconfig": kubeconfig,
            "operator_namespace": namespace,
            "source_image": source_image,
            "source_name": SOURCE,
            "mirror": mirror_host,
            "blocked": blocked_images,
            "mirrored_name": MIRRORED,
            "source_username": registry.username,
            "source_password": registry.password,
            "username": real_node["registry"]["username"],
            "password": mirror_password,
            "ca_file": str(cas),
            "out": str(tmp_path / "results.json"),
        }
        (tmp_path / "play.yml").write_text(PLAYBOOK)
        (tmp_path / "vars.yml").write_text(yaml.safe_dump(extra))
        command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local", "-e", "@vars.yml", "play.yml"]
        env = dict(ansible_env(tmp_path), ANSIBLE_PYTHON_INTERPRETER=sys.executable)
        proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300, check=False)  # noqa: S603
        assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
        assert registry.password not in proc.stdout + proc.stderr and mirror_password not in proc.stdout + proc.stderr
        results = json.loads((tmp_path / "results.json").read_text())
        select, mirrored = results["select"], results["mirrored"]
        assert select == {"packages": [{"name": PACKAGE, "installed_version": "0.1.0"}]}

        # the mirror holds exactly what was selected: kube-mir 0.1.0 and 0.2.0, their bundle images by digest
        assert mirrored["catalog"]["packages"] == [PACKAGE]
        kept = {f"{PACKAGE}.v0.1.0", f"{PACKAGE}.v0.2.0"}
        copied = {i["source"]: i for i in mirrored["images"][1:]}
        assert sorted(copied) == sorted(images[b] for b in kept), copied
        assert all(i["state"] == "copied" and i["mirror"] == i["source"].replace(registry.host, mirror_host) for i in copied.values())
        assert (mirrored["totals"]["images"], mirrored["totals"]["copied"], mirrored["totals"]["failed"]) == (3, 3, 0)
        agents = [f"example.invalid/kubeforge/{PACKAGE}-agent:v{v}" for v in ("0.1.0", "0.2.0")]
        assert mirrored["blocked"] == sorted([*agents, pause]), mirrored["blocked"]
        assert sorted(b for i in copied.values() for b in i["bundles"]) == sorted(kept)
        mirror_client, _auth = _testbed_registry_client(real_node)
        pulled, _image = pull_catalog(mirrored["catalog"]["image"], str(tmp_path / "pulled"), client=mirror_client)
        cfg = load(pulled)
        assert sorted(b["name"] for b in cfg.bundles) == sorted(kept)
        # the catalog names the bundles as the source did, by digest and by image only (OLM unpacks them)
        assert {b["name"]: b["image"] for b in cfg.bundles} == {b: images[b] for b in kept}
        assert not [p for b in cfg.bundles for p in b["properties"] if p["type"] == "olm.bundle.object"]
        idms = mirrored["resources"]["image_digest_mirror_set"]["spec"]["imageDigestMirrors"]
        assert idms == [{"source": f"{registry.host}/{repository}/{PACKAGE}-bundle", "mirrors": [f"{mirror_host}/{repository}/{PACKAGE}-bundle"]}]
        for b in kept:  # the copies are in the mirror, under the digests the catalog names
            repo, digest = copied[images[b]]["mirror"][len(mirror_host) + 1 :].split("@")
            assert mirror_client.head_manifest(repo, digest)["digest"] == digest
        catalog_image = mirrored["catalog"]["image"]
        assert catalog_image == f"{mirror_host}/{repository}/mir-index@{mirrored['catalog']['digest']}"
        written = mirrored["resources"]["catalog_source"]
        assert (written["metadata"]["name"], written["metadata"]["namespace"]) == (MIRRORED, namespace)
        assert (written["spec"]["sourceType"], written["spec"]["image"]) == ("grpc", catalog_image)

        # the air gap: the source catalog gone, the node's containerd sent to the mirror for the source registry as
        # the ImageDigestMirrorSet says (same repository paths on the mirror registry, so one hosts.toml says it all)
        removed = run_module_subprocess(tmp_path, "olm_catalog_source", dict(auth, name=SOURCE, namespace=namespace, state="absent"))
        assert not removed.get("failed") and removed["changed"] is True, removed
        testbed.stop_catalog(SOURCE)
        assert all(m == s.replace(registry.host, mirror_host, 1) for entry in idms for s, m in [(entry["source"], entry["mirrors"][0])])
        node_mirror.parent.mkdir(parents=True, exist_ok=True)
        node_mirror.write_text(realnode.registry_hosts_toml(testbed.state["registry"], registry.host))

        # the mirrored catalog image served on the real node, the Subscription pointed at it, the upgrade from it
        served = run_module_subprocess(
            tmp_path, "olm_catalog_source", dict(auth, name=MIRRORED, namespace=namespace, image=catalog_image, wait=True, wait_timeout=180)
        )
        assert not served.get("failed"), served
        assert (served["catalog_source"]["spec"]["sourceType"], served["catalog_source"]["spec"]["image"]) == ("grpc", catalog_image)
        pods = core.list_namespaced_pod(namespace, label_selector=f"olm.catalogSource={MIRRORED}").items
        assert [(p.spec.node_name, p.spec.containers[0].image, p.status.phase) for p in pods] == [(real_node["name"], catalog_image, "Running")]
        assert _container_status(pods[0], pods[0].spec.containers[0].name).image_id.endswith("@" + mirrored["catalog"]["digest"])

        upgrade = run_module_subprocess(tmp_path, "olm_operator", dict(args, catalog=MIRRORED, version="0.2.0"))
        assert not upgrade.get("failed"), upgrade.get("msg")
        assert upgrade["changed"] is True
        assert (upgrade["installed_csv"], upgrade["phase"], upgrade["version"]) == (f"{PACKAGE}.v0.2.0", "Succeeded", "0.2.0")
        assert upgrade["subscription"]["spec"]["source"] == MIRRORED
        assert _csv_phase(api, namespace, f"{PACKAGE}.v0.2.0") == "Succeeded"

        # resolved from the mirror's registry pod: the InstallPlan's steps came from it, its bundle was looked up there
        plans = client.CustomObjectsApi(api).list_namespaced_custom_object("operators.coreos.com", "v1alpha1", namespace, "installplans")["items"]
        plan = next(p for p in plans if f"{PACKAGE}.v0.2.0" in p["spec"]["clusterServiceVersionNames"])
        assert {s["resource"]["sourceName"] for s in plan["status"]["plan"]} == {MIRRORED}, plan["status"]["plan"]
        lookups = [(lookup["identifier"], lookup["path"], lookup["catalogSourceRef"]["name"]) for lookup in plan["status"]["bundleLookups"]]
        assert lookups == [(f"{PACKAGE}.v0.2.0", images[f"{PACKAGE}.v0.2.0"], MIRRORED)], lookups
        # OLM's unpack Job pulled the 0.2.0 bundle on the real node by its source reference (only the mirror answers)
        unpack = [p for p in core.list_namespaced_pod(namespace, label_selector=UNPACK_LABEL).items if p.spec.init_containers]
        pulls = [(p.spec.node_name, c.image) for p in unpack for c in p.spec.init_containers if c.name == "pull"]
        assert pulls == [(real_node["name"], images[f"{PACKAGE}.v0.2.0"])], pulls
        pulled_bundle = _container_status(unpack[0], "pull")
        assert pulled_bundle.image_id.endswith("@" + images[f"{PACKAGE}.v0.2.0"].split("@")[1]), pulled_bundle
        assert pulled_bundle.state.terminated and pulled_bundle.state.terminated.exit_code == 0, pulled_bundle.state

        # the operator's new Deployment runs on the real node (its pause image from the testbed registry)
        def operator_pods():
            found = core.list_namespaced_pod(namespace, label_selector=f"app.kubernetes.io/name={PACKAGE}-operator").items
            return [(p.spec.node_name, p.spec.containers[0].image, p.status.phase) for p in found if p.metadata.deletion_timestamp is None]

        expected = [(real_node["name"], pause, "Running")]
        poll_until(operator_pods, 60, 1, "one running kube-mir operator pod on the real node", until=lambda pods: pods == expected)
    finally:
        node_mirror.unlink(missing_ok=True)
        if node_mirror.parent.is_dir():
            node_mirror.parent.rmdir()
        testbed.stop_catalog(SOURCE)
