"""The testbed's File-Based Catalog served by `opm serve`: bundles rendered by the real `opm render`.

One package per fixture directory (fixtures/<package>/): its catalog-template.yaml (an olm.template.basic)
gives the olm.package and olm.channel blobs, and every bundles/<version> directory is rendered with
`opm render`. The catalog is written to <dest>/<package>/catalog.yaml, one file per package.

Bundles are rendered from their directories, so their `image` is empty and their manifests travel as
olm.bundle.object properties: OLM then installs from the embedded content, with no unpack Job (an unpack
Job needs a real container runtime, which KWOK does not have).
"""

import json
import shutil
import subprocess
from pathlib import Path

import yaml

from testbed import config

TEMPLATE = "catalog-template.yaml"
# Packages in the served catalog, in the order they are rendered (each one is fixtures/<name>/).
PACKAGES = ("kube-demo", "kube-demo-addon", "kube-crashloop", "kube-privileged", "kube-allns", "kube-needsapi", "kube-toobig")


def package_dir(package: str) -> Path:
    return config.FIXTURES_DIR / package


def catalog_header(package: str) -> list:
    """The olm.package and olm.channel blobs of a package, taken from its basic catalog template."""
    template = yaml.safe_load((package_dir(package) / TEMPLATE).read_text())
    blobs = [entry for entry in template["entries"] if entry.get("schema") in ("olm.package", "olm.channel")]
    names = {(blob["schema"], blob.get("package", blob["name"])) for blob in blobs}
    if ("olm.package", package) not in names:
        raise RuntimeError(f"{package}/{TEMPLATE} has no olm.package entry named {package}")
    return blobs


def bundle_versions(package: str) -> list:
    """The bundle directories of a package (fixtures/<package>/bundles/<version>), oldest first."""
    dirs = [d for d in (package_dir(package) / "bundles").iterdir() if d.is_dir()]
    return sorted(dirs, key=lambda d: tuple(int(p) for p in d.name.split(".")))


def render_package(opm: Path, package: str) -> str:
    """The catalog.yaml text of one package: header blobs, then `opm render` of each bundle directory."""
    docs = [yaml.safe_dump(blob, sort_keys=False) for blob in catalog_header(package)]
    for bundle in bundle_versions(package):
        rendered = subprocess.run(  # noqa: S603
            [str(opm), "render", str(bundle), "-o", "yaml"], capture_output=True, text=True, check=False
        )
        if rendered.returncode != 0:
            raise RuntimeError(f"opm render {bundle} failed: {rendered.stderr.strip()}")
        docs.append(rendered.stdout.strip().lstrip("-").strip() + "\n")
    return "---\n" + "---\n".join(docs)


def render_catalog(opm: Path, dest: Path, packages: tuple = PACKAGES) -> Path:
    """Render every package into dest/<package>/catalog.yaml with opm, validate the whole FBC, return dest."""
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for package in packages:
        (tmp / package).mkdir(parents=True)
        (tmp / package / "catalog.yaml").write_text(render_package(opm, package))
    validated = subprocess.run([str(opm), "validate", str(tmp)], capture_output=True, text=True, check=False)  # noqa: S603
    if validated.returncode != 0:
        raise RuntimeError(f"opm validate of the testbed catalog failed: {validated.stderr.strip()}")
    shutil.rmtree(dest, ignore_errors=True)
    tmp.replace(dest)
    return dest


def copy_without_bundle_images(source: Path, dest: Path) -> None:
    """Copy an FBC directory (YAML and JSON catalog files) to dest with every olm.bundle's image emptied (see
    Testbed.serve_catalog); other files are copied as they are."""
    for path in sorted(p for p in source.rglob("*") if p.is_file()):
        target = dest / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix in (".yaml", ".yml"):
            blobs = [_without_image(b) for b in yaml.safe_load_all(path.read_text()) if b is not None]
            target.write_text(yaml.safe_dump_all(blobs, sort_keys=False))
        elif path.suffix == ".json":
            text, decoder, blobs, index = path.read_text(), json.JSONDecoder(), [], 0
            while index < len(text):
                if text[index].isspace():
                    index += 1
                    continue
                blob, index = decoder.raw_decode(text, index)
                blobs.append(_without_image(blob))
            target.write_text("".join(json.dumps(b, indent=2) + "\n" for b in blobs))
        else:
            shutil.copyfile(path, target)


def _without_image(blob):
    if isinstance(blob, dict) and blob.get("schema") == "olm.bundle" and blob.get("image"):
        return dict(blob, image="")
    return blob
