"""lib.olm_bundles: the kube-v1demo bundles of the OLM v1 tests, generated from the testbed's kube-demo bundles.

The generator's output was checked byte for byte against the copy that used to be committed under
tests/integration/olmv1/data/bundles/kube-v1demo before that copy was deleted.
"""

import re

import yaml
from lib.bundle_run import catalog_for_bundle_dirs
from lib.olm_bundles import KUBE_DEMO_BUNDLES, V1DEMO_CRD, V1DEMO_CRD_FILE, V1DEMO_PACKAGE, write_v1demo_bundles

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_config

VERSIONS = ["0.1.0", "0.2.0", "0.3.0"]


def files_below(root):
    return sorted(path.relative_to(root).as_posix() for path in root.rglob("*") if path.is_file())


def test_every_version_has_kube_demos_files_under_the_new_names(tmp_path):
    root = write_v1demo_bundles(tmp_path / V1DEMO_PACKAGE)
    assert sorted(p.name for p in root.iterdir()) == VERSIONS
    for version in VERSIONS:
        assert files_below(root / version) == [
            "manifests/kube-v1demo-kubedemo-viewer_rbac.authorization.k8s.io_v1_clusterrole.yaml",
            "manifests/kube-v1demo-operand-manifests_v1_configmap.yaml",
            "manifests/kube-v1demo.clusterserviceversion.yaml",
            V1DEMO_CRD_FILE,
            "metadata/annotations.yaml",
        ]
        assert len(files_below(root / version)) == len(files_below(KUBE_DEMO_BUNDLES / "0.0.1"))
        text = "".join((root / version / name).read_text() for name in files_below(root / version))
        assert "kube-demo" not in text and re.search(r"(?<!v1)demo\.kubeforge\.io", text) is None  # nothing left of kube-demo


def test_names_versions_and_replaces(tmp_path):
    root = write_v1demo_bundles(tmp_path / V1DEMO_PACKAGE)
    replaces = {}
    for version in VERSIONS:
        annotations = yaml.safe_load((root / version / "metadata" / "annotations.yaml").read_text())["annotations"]
        assert annotations["operators.operatorframework.io.bundle.package.v1"] == V1DEMO_PACKAGE
        csv = yaml.safe_load((root / version / "manifests" / "kube-v1demo.clusterserviceversion.yaml").read_text())
        assert csv["metadata"]["name"] == f"kube-v1demo.v{version}" and csv["spec"]["version"] == version
        assert csv["metadata"]["annotations"]["containerImage"] == f"example.invalid/kubeforge/kube-v1demo-operator:v{version}"
        assert [crd["name"] for crd in csv["spec"]["customresourcedefinitions"]["owned"]] == [V1DEMO_CRD]
        replaces[version] = csv["spec"].get("replaces")
        crd = yaml.safe_load((root / version / V1DEMO_CRD_FILE).read_text())
        assert crd["metadata"]["name"] == V1DEMO_CRD and crd["spec"]["group"] == "v1demo.kubeforge.io"
        assert crd["spec"]["names"] == {"kind": "KubeV1Demo", "listKind": "KubeV1DemoList", "plural": "kubev1demos", "singular": "kubev1demo"}
    assert replaces == {"0.1.0": None, "0.2.0": "kube-v1demo.v0.1.0", "0.3.0": "kube-v1demo.v0.2.0"}


def test_the_upgrade_chain_is_a_valid_catalog(tmp_path):
    root = write_v1demo_bundles(tmp_path / V1DEMO_PACKAGE)
    cfg = catalog_for_bundle_dirs([str(root / version) for version in VERSIONS])
    result = validate_config(cfg)
    assert result.valid, result.errors
    assert (result.packages, result.bundles) == (1, 3)
