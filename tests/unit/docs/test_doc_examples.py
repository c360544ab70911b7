"""Documentation examples that are files: docs/examples/minimal-bundle is shown verbatim in
docs/catalog_publishing.md, and is a bundle bundle_image builds (the package, CSV name and version it reports); the
olm_migrate example of docs/olm_v1.md is the play molecule/olm_migrate runs."""

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


def test_the_olm_migrate_example_is_the_play_molecule_runs():
    """docs/olm_v1.md's olm_migrate example is converge.yml's play as written, and verify.yml runs the role again with
    its variables (and the testbed's kubeconfig, which the example takes from the host's kubeconfig variable)."""
    example = yaml.safe_load(doc_examples.runnable()["olm-migrate-role"].body)
    scenario = ROOT / "molecule" / "olm_migrate"
    converge = yaml.safe_load((scenario / "converge.yml").read_text())
    assert [play for play in converge if "ansible.builtin.import_playbook" in play] == example
    assert example[0]["ansible.builtin.import_playbook"] == "kubeforge.operators.olm_migrate"
    (play,) = yaml.safe_load((scenario / "verify.yml").read_text())
    (rerun,) = [task for task in play["tasks"] if task.get("ansible.builtin.include_role", {}).get("name") == "kubeforge.operators.olm_migrate"]
    expected = {k: v for k, v in example[0]["vars"].items() if k != "olm_migrate_hosts"}
    assert {k: v for k, v in rerun["vars"].items() if k != "olm_migrate_kubeconfig"} == expected
    # every variable the example sets is one of the role's
    options = yaml.safe_load((ROOT / "roles" / "olm_migrate" / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]["options"]
    assert set(expected) <= set(options), set(expected) - set(options)
