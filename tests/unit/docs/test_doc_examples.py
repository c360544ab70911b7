"""Documentation examples that are files: docs/examples/minimal-bundle is shown verbatim in
docs/catalog_publishing.md, and is a bundle bundle_image builds (the package, CSV name and version it reports)."""

import re
from pathlib import Path

import yaml
from lib import doc_examples
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


def test_every_yaml_example_of_the_documentation_says_how_it_is_checked():
    """Each YAML block of README.md, docs/ and the role READMEs is run on the testbed (tests/integration/docs), shown
    from docs/examples, or says why the testbed cannot run it (lib.doc_examples)."""
    found = doc_examples.blocks()
    unmarked = [f"{b.path}:{b.line}" for b in found if b.kind is None]
    assert not unmarked, f"YAML examples without an <!-- example: ... --> marker: {unmarked}"
    assert all(b.detail for b in found if b.kind == "not run"), "a 'not run' marker needs its reason"
    ids = [b.detail for b in found if b.kind == "run"]
    assert len(ids) == len(set(ids)) and all(ids), ids
    for block in found:
        if block.kind == "run":
            content = yaml.safe_load(block.body)
            if block.detail in doc_examples.FILE_EXAMPLES:
                assert block.detail in doc_examples.RUN_ELSEWHERE and isinstance(content, dict), f"{block.path}:{block.line}"
            else:
                assert isinstance(content, list) and all(isinstance(item, dict) for item in content), f"{block.path}:{block.line}"
