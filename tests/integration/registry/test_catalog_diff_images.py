"""catalog_diff with catalog images as input, against the test registry (TLS from a throwaway CA, htpasswd): both
sides pulled with the registry options, an image against a directory, a wrong password. The images are built and
pushed by catalog_image from the committed catalog pair (tests/data/catalog-diff)."""

import json
import shutil

from lib.testdata import data_path

PAIR = data_path("catalog-diff")
EXPECTED = json.loads((PAIR / "expected.json").read_text())


def _push(run_module, registry, path, tag):
    res = run_module(
        "catalog_image",
        {
            "path": str(path),
            "image": "%s/kubeforge/catalog-diff:%s" % (registry.host, tag),
            "push": True,
            "registry_username": registry.username,
            "registry_password": registry.password,
            "ca_file": registry.ca_file,
        },
    )
    assert res.get("failed") is not True and res["pushed"] is True, res
    return res["digest"]


def _assert_diff(res):
    assert res.get("failed") is not True, res
    assert res["changed"] is False
    for key, value in EXPECTED.items():
        if key != "warnings":
            assert res[key] == value, key


def test_images_on_both_sides_and_mixed(registry, run_module, tmp_path):
    new_dir = tmp_path / "new"
    new_dir.mkdir()
    shutil.copy(PAIR / "new.yaml", new_dir / "catalog.yaml")
    old_digest = _push(run_module, registry, PAIR / "old", "old")
    new_digest = _push(run_module, registry, new_dir, "new")
    access = {"registry_username": registry.username, "registry_password": registry.password, "ca_file": registry.ca_file}
    old_ref = "%s/kubeforge/catalog-diff:old" % registry.host
    new_ref = "%s/kubeforge/catalog-diff:new" % registry.host

    both = run_module("catalog_diff", dict(access, old_image=old_ref, new_image=new_ref))
    _assert_diff(both)
    assert both["old_image"] == {"ref": old_ref, "digest": old_digest}
    assert both["new_image"] == {"ref": new_ref, "digest": new_digest}
    assert registry.password not in json.dumps(both)

    # an image against a rendered file gives the same diff; check mode too
    mixed = run_module("catalog_diff", dict(access, old_image=old_ref, new=str(PAIR / "new.yaml")), check_mode=True)
    _assert_diff(mixed)
    assert mixed["old_image"]["digest"] == old_digest and "new_image" not in mixed

    # the same image on both sides: no differences
    same = run_module("catalog_diff", dict(access, old_image=old_ref, new_image="%s/kubeforge/catalog-diff@%s" % (registry.host, old_digest)))
    assert same["differs"] is False and same["packages"] == {"added": [], "removed": []}

    bad = "Wrong-Pa55word-x"
    wrong = run_module("catalog_diff", dict(access, registry_password=bad, old_image=old_ref, new=str(PAIR / "new.yaml")))
    assert wrong["failed"] is True and "401" in wrong["msg"] and registry.host in wrong["msg"], wrong
    assert bad not in json.dumps(wrong) and registry.password not in json.dumps(wrong)
