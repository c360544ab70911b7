"""kube-migrole: the operator molecule/olm_migrate moves from OLM v0 to OLM v1 with the olm_migrate role, made from
kube-demo's bundles by renaming (as fleet_catalog.py makes kube-fleet and tests/lib/migration.py kube-mig34), so that
nothing collides with what the integration tests install beside the scenario on the same testbed: a package, a CRD
group and a shipped ClusterRole of its own. One version, 0.1.0 (from kube-demo 0.0.1), its operator image the real
node's pause image (the pod really runs there).

``write(bed)`` writes the bundle directory under the testbed's run directory, in a directory named after a hash of
what it is made from (the renames, the fixture's bytes, the pause image): written once, never rewritten in place, so a
reused testbed (``up`` rewrites ansible-vars.json when it reuses one) and a scenario reading the directory never see it
half-written, and a testbed whose pause image changed gets a directory of its own. ``ansible_vars(bed)`` gives its
path to playbooks as ``testbed_migrole_bundles_dir`` (``<dir>/<version>/{manifests,metadata}``).
"""

import hashlib
import re
import shutil
import tempfile
from pathlib import Path

from testbed import fleet_catalog

PACKAGE = "kube-migrole"
GROUP = "migrole.kubeforge.io"
CRD = f"kubemigroles.{GROUP}"
RENAMES = {
    "demo.kubeforge.io": GROUP,
    "kubedemos": "kubemigroles",
    "singular: kubedemo\n": "singular: kubemigrole\n",
    "KubeDemo": "KubeMigrole",
    "kube-demo": PACKAGE,
}
# version -> (the kube-demo bundle it is made from, the version it replaces)
VERSIONS = {"0.1.0": ("0.0.1", None)}
OPERATOR_IMAGE = re.compile(r"example\.invalid/kubeforge/kube-migrole-operator:v[0-9.]+")
# Under the testbed's run directory: <BUNDLES_DIR>/<key>/<version>/...
BUNDLES_DIR = "migrole-bundles"


def key(pause_image: str) -> str:
    """The hash naming a bundle directory: the renames, the versions, every fixture file used, the operator image."""
    digest = hashlib.sha256(repr((sorted(RENAMES.items()), sorted(VERSIONS.items()), pause_image)).encode())
    for source in sorted({source for source, _replaces in VERSIONS.values()}):
        for path in sorted((fleet_catalog.KUBE_DEMO_BUNDLES / source).rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(fleet_catalog.KUBE_DEMO_BUNDLES).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def write_bundles(dest, pause_image: str) -> Path:
    """kube-migrole's bundle directories under ``dest`` (``<version>/{manifests,metadata}``), the operator image
    ``pause_image``; returns ``dest`` as a Path."""
    root = fleet_catalog.write_renamed_bundles(dest, RENAMES, VERSIONS)
    for version in VERSIONS:
        for csv in (root / version / "manifests").glob("*.clusterserviceversion.yaml"):
            text = csv.read_text()
            if not OPERATOR_IMAGE.search(text):
                raise RuntimeError(f"{csv}: no operator image matches {OPERATOR_IMAGE.pattern}")
            csv.write_text(OPERATOR_IMAGE.sub(pause_image, text))
    return root


def write(run_dir, pause_image: str) -> Path:
    """The bundle directory for ``pause_image`` under ``run_dir``, written unless it exists; its path."""
    parent = Path(run_dir) / BUNDLES_DIR
    target = parent / key(pause_image)
    if target.is_dir():
        return target
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=parent))
    try:
        write_bundles(tmp, pause_image)
        tmp.replace(target)
    except Exception as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if not (isinstance(exc, OSError) and target.is_dir()):  # else another process won the rename: the same bytes
            raise
    return target


def ansible_vars(bed) -> dict:
    """``testbed_migrole_bundles_dir`` for ansible-vars.json; nothing on a testbed without its real node."""
    images = (bed.state.get("real_node") or {}).get("images") or {}
    if not images.get("pause"):
        return {}
    return {"testbed_migrole_bundles_dir": str(write(bed.run_dir, images["pause"]))}
