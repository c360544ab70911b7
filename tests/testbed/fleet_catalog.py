"""kube-fleet: the operator a fleet of the testbed's clusters rolls, made from kube-demo's bundles by renaming, and its
catalog, served by an `opm serve` of its own to every cluster (Testbed.ensure_members() starts it).

kube-fleet 0.1.0 -> 0.2.0 -> 0.3.0 (each replacing the one before; a CRD of its own group) run the real node's images:
0.1.0 and 0.2.0 its pause image (they run for good), 0.3.0 its crash image - exit 1 at once on the real node, and the
KWOK crash-loop stage of every cluster keeps its pods in CrashLoopBackOff on the simulated nodes: a bad release
everywhere. 0.2.0 allows OpenShift up to 4.21 (MAX_OPENSHIFT). The bundles are rendered by the real `opm render` (embedded objects, no bundle image to unpack).
"""

import re
import subprocess
from pathlib import Path

import yaml

from testbed import config, realnode

KUBE_DEMO_BUNDLES = config.FIXTURES_DIR / "kube-demo" / "bundles"
PACKAGE = "kube-fleet"
CRD = "kubefleets.fleet.kubeforge.io"
RENAMES = {
    "demo.kubeforge.io": "fleet.kubeforge.io",
    "kubedemos": "kubefleets",
    "singular: kubedemo\n": "singular: kubefleet\n",
    "KubeDemo": "KubeFleet",
    "kube-demo": "kube-fleet",
}
# version -> (the kube-demo bundle it is made from, the version it replaces)
VERSIONS = {"0.1.0": ("0.0.1", None), "0.2.0": ("0.0.2", "0.1.0"), "0.3.0": ("0.0.2", "0.2.0")}
# The version whose operator crash-loops.
BAD = "0.3.0"
# The highest OpenShift minor a version allows (`olm.maxOpenShiftVersion` in its bundle's metadata/properties.yaml):
# an upgrade-readiness check for a later minor names the clusters that run it (the demo's fleet act).
MAX_OPENSHIFT = {"0.2.0": "4.21"}
OPERATOR_IMAGE = re.compile(r"example\.invalid/kubeforge/kube-fleet[a-z0-9]*-operator:v[0-9.]+")
SERVED_AS = "fleet"
# Where serve() renders the catalog it serves, under the testbed's run directory.
CATALOG_DIR = "fleet-catalog/fbc"


def rename(text, renames):
    """``text`` with every key of ``renames`` replaced by its value in one pass (a replacement is never renamed
    again; at one position the longest key wins)."""
    pattern = re.compile("|".join(re.escape(old) for old in sorted(renames, key=len, reverse=True)))
    return pattern.sub(lambda match: renames[match.group(0)], text)


def package_renames(base, versions, version):
    """Every rename that turns the kube-demo bundle behind ``version`` into that version of a renamed package:
    ``base`` renames the names, ``versions`` maps each version to (its kube-demo bundle, the version it replaces)."""
    source, replaces = versions[version]
    found = {source: version}
    if replaces is not None:
        found["0.0.1"] = replaces  # kube-demo 0.0.2's replaces
    return dict(base, **found)


def write_renamed_bundles(dest, base, versions):
    """Write ``<dest>/<version>/{manifests,metadata}/...`` for every version of a package made from kube-demo's
    bundles by renaming (see package_renames); return ``dest`` as a Path."""
    dest = Path(dest)
    for version, (source, _replaces) in versions.items():
        renames = package_renames(base, versions, version)
        source_dir = KUBE_DEMO_BUNDLES / source
        for path in sorted(source_dir.rglob("*")):
            if path.is_file():
                target = dest / version / rename(path.relative_to(source_dir).as_posix(), renames)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(rename(path.read_text(encoding="utf-8"), renames).encode("utf-8"))
    return dest


def write_bundles(dest, images, renames=None):
    """kube-fleet's bundle directories under ``dest`` (another package's with other ``renames``), their operator
    image the real node's pause image (its crash image for BAD); ``images`` maps the real node's image names to
    references."""
    root = write_renamed_bundles(dest, renames or RENAMES, VERSIONS)
    for version in VERSIONS:
        for csv in (root / version / "manifests").glob("*.clusterserviceversion.yaml"):
            csv.write_text(OPERATOR_IMAGE.sub(images["crash" if version == BAD else "pause"], csv.read_text()))
        if version in MAX_OPENSHIFT:
            properties = {"properties": [{"type": "olm.maxOpenShiftVersion", "value": MAX_OPENSHIFT[version]}]}
            (root / version / "metadata" / "properties.yaml").write_text(yaml.safe_dump(properties, sort_keys=False))
    return root


def render_catalog(opm, bundles, dest, package=PACKAGE):
    """An FBC directory (``dest/<package>/catalog.yaml``): the package, its stable channel (each version replacing the
    one before) and every bundle rendered by ``opm render``."""
    entries = []
    for version, (_source, replaces) in VERSIONS.items():
        entry = {"name": f"{package}.v{version}"}
        if replaces:
            entry["replaces"] = f"{package}.v{replaces}"
        entries.append(entry)
    docs = [
        yaml.safe_dump({"schema": "olm.package", "name": package, "defaultChannel": "stable"}, sort_keys=False),
        yaml.safe_dump({"schema": "olm.channel", "package": package, "name": "stable", "entries": entries}, sort_keys=False),
    ]
    for version in VERSIONS:
        rendered = subprocess.run([str(opm), "render", str(Path(bundles) / version), "-o", "yaml"], capture_output=True, text=True, check=False)  # noqa: S603
        if rendered.returncode != 0:
            raise RuntimeError(f"opm render {Path(bundles) / version} failed: {rendered.stderr.strip()}")
        docs.append(rendered.stdout.strip().lstrip("-").strip() + "\n")
    target = Path(dest) / package / "catalog.yaml"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("---\n" + "---\n".join(docs))
    return Path(dest)


def serve(bed) -> str:
    """kube-fleet's catalog served by the testbed (`opm serve` named SERVED_AS, unless it runs already); its address."""
    running = bed.state.get("processes", {}).get(f"{bed.EXTRA_CATALOG}-{SERVED_AS}")
    if running and running.get("address"):
        return running["address"]
    fbc_dir = bed.run_dir / CATALOG_DIR
    registry_host = bed.state["registry"]["host"]
    images = {name: realnode.image_ref(registry_host, name, bed.state["versions"]) for name in ("pause", "crash")}
    bundles = write_bundles(fbc_dir.parent / "bundles", images)
    fbc = render_catalog(Path(bed.state["bin"]) / "opm", bundles, fbc_dir)
    return bed.serve_catalog(fbc, name=SERVED_AS)
