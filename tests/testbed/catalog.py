"""The kube-demo File-Based Catalog served by `opm serve`: bundles rendered by the real `opm render`.

Bundles are rendered from their directories, so their `image` is empty and their manifests travel as
olm.bundle.object properties: OLM then installs from the embedded content, with no unpack Job (an unpack
Job needs a real container runtime, which KWOK does not have).
"""

import shutil
import subprocess
from pathlib import Path

import yaml

from testbed import config

PACKAGE = "kube-demo"
BUNDLES_DIR = config.FIXTURES_DIR / PACKAGE / "bundles"
VERSIONS = ("0.0.1", "0.0.2")
CHANNELS = ("alpha", "stable")
DEFAULT_CHANNEL = "stable"


def catalog_header() -> list:
    """The olm.package and olm.channel blobs: each channel holds 0.0.1 and 0.0.2, which replaces 0.0.1."""
    blobs = [{"schema": "olm.package", "name": PACKAGE, "defaultChannel": DEFAULT_CHANNEL}]
    for channel in CHANNELS:
        entries = []
        previous = None
        for version in VERSIONS:
            entry = {"name": f"{PACKAGE}.v{version}"}
            if previous:
                entry["replaces"] = previous
            entries.append(entry)
            previous = entry["name"]
        blobs.append({"schema": "olm.channel", "package": PACKAGE, "name": channel, "entries": entries})
    return blobs


def render_kube_demo(opm: Path, dest: Path) -> Path:
    """Render the kube-demo FBC into dest/<package>/catalog.yaml with opm, validate it, return dest."""
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / PACKAGE).mkdir(parents=True)
    docs = [yaml.safe_dump(blob, sort_keys=False) for blob in catalog_header()]
    for version in VERSIONS:
        rendered = subprocess.run(  # noqa: S603
            [str(opm), "render", str(BUNDLES_DIR / version), "-o", "yaml"], capture_output=True, text=True, check=False
        )
        if rendered.returncode != 0:
            raise RuntimeError(f"opm render {BUNDLES_DIR / version} failed: {rendered.stderr.strip()}")
        docs.append(rendered.stdout.strip().lstrip("-").strip() + "\n")
    (tmp / PACKAGE / "catalog.yaml").write_text("---\n" + "---\n".join(docs))
    validated = subprocess.run([str(opm), "validate", str(tmp)], capture_output=True, text=True, check=False)  # noqa: S603
    if validated.returncode != 0:
        raise RuntimeError(f"opm validate of the kube-demo catalog failed: {validated.stderr.strip()}")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.replace(dest)
    return dest
