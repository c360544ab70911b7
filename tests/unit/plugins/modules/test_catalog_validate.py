"""catalog_validate module: committed catalogs are valid; every problem of a broken catalog is reported."""

import functools

import pytest
from lib.samples import shared_conformance_data

from ansible_collections.kubeforge.operators.plugins.modules import catalog_validate

CATALOGS = shared_conformance_data() / "community-operators-prod" / "catalogs"


@pytest.fixture
def run(run_module):
    return functools.partial(run_module, catalog_validate)


@pytest.mark.parametrize("cat", ["v4.12", "v4.16", "v4.20"])
def test_committed_catalog_dirs_are_valid(run, cat):
    res = run({"path": str(CATALOGS / cat)}, check_mode=True)
    assert res["valid"] is True and res["errors"] == [] and res["changed"] is False and res["opm_error"] is None
    assert res["packages"] == len(list((CATALOGS / cat).iterdir()))


def test_single_file(run):
    res = run({"path": str(CATALOGS / "v4.20" / "kube-green" / "catalog.yaml")})
    assert res["valid"] is True and res["packages"] == 1 and res["bundles"] == 10


BROKEN = """---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
  - name: foo.v1
  - name: foo.v2
---
schema: olm.bundle
package: foo
name: foo.v1
image: quay.io/x/foo:1
properties:
  - type: olm.package
    value: {packageName: foo, version: 1.0.0}
---
schema: olm.bundle
package: foo
name: foo.v2
image: quay.io/x/foo:2
properties:
  - type: olm.package
    value: {packageName: foo, version: 2.0.0}
"""


def test_invalid_reports_all_problems(tmp_path, run):
    (tmp_path / "foo").mkdir()
    (tmp_path / "foo" / "catalog.yaml").write_text(BROKEN)
    res = run({"path": str(tmp_path)})
    assert res["failed"] is True and res["valid"] is False
    assert any("multiple channel heads found in graph" in e for e in res["errors"])
    assert "invalid" in res["msg"] and res["opm_error"]
    res = run({"path": str(tmp_path), "fail_on_invalid": False})
    assert "failed" not in res and res["valid"] is False and res["errors"]


def test_load_error(tmp_path, run):
    (tmp_path / "x.yaml").write_text("schema: olm.package\nname: [\n")
    res = run({"path": str(tmp_path), "fail_on_invalid": False})
    assert res["valid"] is False and len(res["errors"]) == 1


def test_missing_path(tmp_path, run):
    res = run({"path": str(tmp_path / "nope")})
    assert res["failed"] is True and "does not exist" in res["msg"]


def test_community_checks_pass_on_committed_catalogs(run):
    for cat in ("v4.12", "v4.16", "v4.20"):
        res = run({"path": str(CATALOGS / cat), "community_checks": True})
        assert res["valid"] is True and res["community_errors"] == [], res.get("msg")


def test_community_checks_find_problems(tmp_path, run):
    import shutil
    root = tmp_path / "catalogs" / "v4.20" / "kube-green"
    shutil.copytree(CATALOGS / "v4.16" / "kube-green", root)  # olm.bundle.object content in a v4.20 catalog
    cat = root / "catalog.yaml"
    cat.write_text(cat.read_text().replace("quay.io/openshift-community-operators/", "docker.io/someone/", 1))
    res = run({"path": str(root), "community_checks": True, "fail_on_invalid": False})
    assert res["valid"] is False and len(res["community_errors"]) == 11
    assert sum("is not from an allowed registry" in e for e in res["community_errors"]) == 1
    assert sum("must not contain olm.bundle.object" in e for e in res["community_errors"]) == 10
    assert res["errors"] == res["community_errors"]
    res = run({"path": str(root), "community_checks": True, "ocp_version": "v4.16"})
    assert res["failed"] is True and len(res["community_errors"]) == 1 and "1 problem)" in res["msg"]
    res = run({"path": str(root), "community_checks": True, "ocp_version": "v4.16",
               "allowed_registries": ["docker.io/", "quay.io/"]})
    assert res["valid"] is True
