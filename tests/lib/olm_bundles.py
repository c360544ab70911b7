"""The OLM v1 tests' ``kube-v1demo`` bundles, made from the testbed's ``kube-demo`` bundles by renaming.

OLM v0 and OLM v1 share the testbed, and a CRD or ClusterRole that OLM v0 created cannot be managed by
operator-controller: the OLM v1 tests need kube-demo under other names (package, CSVs, CRD group and names, images,
object names) and at other versions (0.1.0 -> 0.2.0 -> 0.3.0, each replacing the one before).
"""

import re
from pathlib import Path

KUBE_DEMO_BUNDLES = Path(__file__).resolve().parents[1] / "testbed" / "fixtures" / "kube-demo" / "bundles"

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


def rename(text, renames):
    """``text`` with every key of ``renames`` replaced by its value in one pass (a replacement is never renamed
    again; at one position the longest key wins)."""
    pattern = re.compile("|".join(re.escape(old) for old in sorted(renames, key=len, reverse=True)))
    return pattern.sub(lambda match: renames[match.group(0)], text)


def v1demo_renames(version):
    """Every rename that turns the kube-demo bundle behind ``version`` into kube-v1demo ``version``."""
    source, replaces = V1DEMO_VERSIONS[version]
    versions = {source: version}
    if replaces is not None:
        versions["0.0.1"] = replaces  # kube-demo 0.0.2's replaces
    return dict(V1DEMO_RENAMES, **versions)


def write_v1demo_bundles(dest):
    """Write ``<dest>/<version>/{manifests,metadata}/...`` for every kube-v1demo version; return ``dest`` as a Path."""
    dest = Path(dest)
    for version, (source, _replaces) in V1DEMO_VERSIONS.items():
        renames = v1demo_renames(version)
        source_dir = KUBE_DEMO_BUNDLES / source
        for path in sorted(source_dir.rglob("*")):
            if path.is_file():
                target = dest / version / rename(path.relative_to(source_dir).as_posix(), renames)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(rename(path.read_text(encoding="utf-8"), renames).encode("utf-8"))
    return dest


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
