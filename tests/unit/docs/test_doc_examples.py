"""Documentation examples that are files: docs/examples/minimal-bundle is shown verbatim in
docs/catalog_publishing.md, and is a bundle bundle_image builds (the package, CSV name and version it reports)."""

import re
from pathlib import Path

from lib.runners import run_module_in_process

from ansible_collections.kubeforge.operators.plugins.modules import bundle_image

ROOT = Path(__file__).resolve().parents[3]
BUNDLE = ROOT / "docs" / "examples" / "minimal-bundle"
PAGE = ROOT / "docs" / "catalog_publishing.md"


def shown_files(page):
    """{path: text} of the code blocks the page marks with ``<!-- minimal-bundle: <path> -->``."""
    pattern = re.compile(r"<!-- minimal-bundle: (\S+) -->\n```yaml\n(.*?)```", re.S)
    return dict(pattern.findall(page.read_text()))


def test_the_page_shows_every_file_of_the_example_as_it_is():
    shown = shown_files(PAGE)
    files = {str(p.relative_to(BUNDLE)): p.read_text() for p in BUNDLE.rglob("*") if p.is_file()}
    assert shown == files


def test_bundle_image_builds_the_minimal_bundle(capsys, tmp_path):
    result = run_module_in_process(
        bundle_image, {"path": str(BUNDLE), "image": "quay.io/example/my-operator-bundle:v0.1.0", "oci_layout": str(tmp_path / "layout")}, capsys
    )
    assert not result.get("failed"), result
    assert result["package"] == "my-operator"
    assert result["csv"]["name"] == "my-operator.v0.1.0" and result["csv"]["version"] == "0.1.0", result["csv"]
    assert (tmp_path / "layout" / "index.json").is_file()
