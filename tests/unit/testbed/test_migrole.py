"""kube-migrole's bundle directory (tests/testbed/migrole.py), which the testbed writes for molecule/olm_migrate: kube-demo
renamed through and through, the operator image the real node's pause image, written once per key; and the
real node's variables for playbooks (realnode.ansible_vars)."""

import yaml
from testbed import migrole, realnode

PAUSE = "127.0.0.1:5000/kubeforge-testbed/pause:v1"


def test_the_bundle_is_kube_demo_renamed_with_the_pause_image(tmp_path):
    target = migrole.write(tmp_path, PAUSE)
    assert target.parent == tmp_path / migrole.BUNDLES_DIR and target.name == migrole.key(PAUSE)
    bundle = target / "0.1.0"
    files = {p.relative_to(bundle).as_posix(): p.read_text() for p in bundle.rglob("*") if p.is_file()}
    assert "manifests/migrole.kubeforge.io_kubemigroles.yaml" in files, sorted(files)
    assert not [name for name, text in files.items() if "kube-demo" in name or "kube-demo" in text or "demo.kubeforge.io" in text]
    (csv_name,) = [name for name in files if name.endswith(".clusterserviceversion.yaml")]
    csv = yaml.safe_load(files[csv_name])
    assert csv["metadata"]["name"] == "kube-migrole.v0.1.0" and csv["spec"]["version"] == "0.1.0"
    assert {m["type"]: m["supported"] for m in csv["spec"]["installModes"]}["AllNamespaces"] is True
    (deployment,) = csv["spec"]["install"]["spec"]["deployments"]
    assert [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]] == [PAUSE]
    crd = yaml.safe_load(files["manifests/migrole.kubeforge.io_kubemigroles.yaml"])
    assert crd["metadata"]["name"] == migrole.CRD and crd["spec"]["names"]["kind"] == "KubeMigrole"
    annotations = yaml.safe_load(files["metadata/annotations.yaml"])["annotations"]
    assert annotations["operators.operatorframework.io.bundle.package.v1"] == migrole.PACKAGE


def test_a_written_directory_is_kept_and_another_image_gets_its_own(tmp_path):
    first = migrole.write(tmp_path, PAUSE)
    marker = first / "0.1.0" / "written-before"
    marker.write_text("")
    assert migrole.write(tmp_path, PAUSE) == first and marker.exists()
    other = migrole.write(tmp_path, PAUSE.replace(":v1", ":v2"))
    assert other != first and other.parent == first.parent
    assert sorted(p.name for p in first.parent.iterdir()) == sorted([first.name, other.name]), "no temporary directory left"


def test_playbook_variables_only_with_a_real_node():
    assert realnode.ansible_vars({}) == {}
    images = {"pause": PAUSE, "opm": "127.0.0.1:5000/kubeforge-testbed/opm:v1.73.0"}
    node = realnode.ansible_vars({"real_node": {"name": realnode.NODE_NAME, "images": images, "base": "/x"}})["testbed_real_node"]
    assert node["name"] == realnode.NODE_NAME and node["images"] == images
    assert node["node_selector"] == realnode.NODE_SELECTOR and node["tolerations"] == [realnode.TOLERATION]
    assert node["namespace_annotations"] == realnode.NAMESPACE_ANNOTATIONS
