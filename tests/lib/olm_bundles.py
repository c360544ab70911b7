"""The OLM v1 tests' ``kube-v1demo`` bundles, made from the testbed's ``kube-demo`` bundles by renaming.

OLM v0 and OLM v1 share the testbed, and a CRD or ClusterRole that OLM v0 created cannot be managed by
operator-controller: the OLM v1 tests need kube-demo under other names (package, CSVs, CRD group and names, images,
object names) and at other versions (0.1.0 -> 0.2.0 -> 0.3.0, each replacing the one before).
"""

from pathlib import Path

from testbed.fleet_catalog import KUBE_DEMO_BUNDLES, package_renames, write_renamed_bundles

V1DEMO_PACKAGE = "kube-v1demo"
V1DEMO_CRD = "kubev1demos.v1demo.kubeforge.io"
V1DEMO_CRD_FILE = "manifests/v1demo.kubeforge.io_kubev1demos.yaml"

# kube-v1demo version -> (the kube-demo bundle it is made from, the kube-v1demo version it replaces). kube-demo 0.0.2
# replaces 0.0.1, so a bundle with a replaces is made from 0.0.2 and the one without from 0.0.1.
V1DEMO_VERSIONS = {
    "0.1.0": ("0.0.1", None),
    "0.2.0": ("0.0.2", "0.1.0"),
    "0.3.0": ("0.0.2", "0.2.0"),
}

# Applied to file contents and file paths alike. The ClusterRole keeps "kubedemo" in "kube-v1demo-kubedemo-viewer",
# so the CRD's singular name is renamed in its context only.
V1DEMO_RENAMES = {
    "demo.kubeforge.io": "v1demo.kubeforge.io",
    "kubedemos": "kubev1demos",
    "singular: kubedemo\n": "singular: kubev1demo\n",
    "KubeDemo": "KubeV1Demo",
    "kube-demo": "kube-v1demo",
}


def v1demo_renames(version):
    """Every rename that turns the kube-demo bundle behind ``version`` into kube-v1demo ``version``."""
    return package_renames(V1DEMO_RENAMES, V1DEMO_VERSIONS, version)


def write_v1demo_bundles(dest):
    """Write ``<dest>/<version>/{manifests,metadata}/...`` for every kube-v1demo version; return ``dest`` as a Path."""
    return write_renamed_bundles(dest, V1DEMO_RENAMES, V1DEMO_VERSIONS)


# The testbed's bundles whose operators can run on its real node: (package, version) -> the operator image their CSV
# names, and the testbed image that replaces it (kube-demo's operators sleep, kube-crashloop's exits 1 at once).
RUNNABLE_BUNDLES = {
    ("kube-demo", "0.0.1"): ("example.invalid/kubeforge/kube-demo-operator:v0.0.1", "pause"),
    ("kube-demo", "0.0.2"): ("example.invalid/kubeforge/kube-demo-operator:v0.0.2", "pause"),
    ("kube-crashloop", "0.1.0"): ("example.invalid/kubeforge/crashloop:v1", "crash"),
    ("kube-demo-addon", "0.1.0"): ("example.invalid/kubeforge/kube-demo-addon-operator:v0.1.0", "pause"),
}


def write_runnable_bundle(dest, package, version, images):
    """Copy the testbed's bundle directory of (package, version) to ``dest`` with its operator image replaced by the
    real node's (``images``: the ``real_node`` fixture's); returns ``dest``."""
    import shutil

    operator_image, testbed_image = RUNNABLE_BUNDLES[(package, version)]
    shutil.copytree(KUBE_DEMO_BUNDLES.parents[1] / package / "bundles" / version, dest)
    for csv in (Path(dest) / "manifests").glob("*.clusterserviceversion.yaml"):
        csv.write_text(csv.read_text().replace(operator_image, images[testbed_image]))
    return Path(dest)
