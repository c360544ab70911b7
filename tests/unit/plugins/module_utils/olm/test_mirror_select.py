"""olm.mirror_select: olm_operator_info results -> the catalog_mirror select of what the clusters run (pure,
table-driven), and that the select it returns keeps the installed versions' paths in a real catalog."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import InvalidInputError
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.filter import filter_catalog
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.mirror_select import mirror_select


def v0(package, version, source="redhat-operators", present=True):
    """One Subscription record as olm_operator_info returns it."""
    return {"package": package, "present": present, "installed_version": version, "subscription": {"source": source} if present else None}


def v1(package, version):
    return {"name": package, "package": package, "installed_version": version}


def info(operators=(), extensions=None, **extra):
    result = dict({"changed": False, "operators": list(operators)}, **extra)
    if extensions is not None:
        result["cluster_extensions"] = list(extensions)
    return result


def pkgs(*pairs):
    return {"packages": [({"name": n, "installed_version": v} if v else {"name": n}) for n, v in pairs]}


@pytest.mark.parametrize(
    "results, kwargs, expected",
    [
        # one cluster: every installed package, by name
        (info([v0("b", "2.0.0"), v0("a", "1.0.0")]), {}, pkgs(("a", "1.0.0"), ("b", "2.0.0"))),
        # several clusters: the lowest version per package, by semantic version order (1.10.0 > 1.9.0)
        ([info([v0("a", "1.10.0")]), info([v0("a", "1.9.0")]), info([v0("a", "1.9.1")])], {}, pkgs(("a", "1.9.0"))),
        # a prerelease is lower than its release
        ([info([v0("a", "1.0.0")]), info([v0("a", "1.0.0-rc.1")])], {}, pkgs(("a", "1.0.0-rc.1"))),
        # subscribed, not installed yet on one cluster: the other cluster's version counts; nowhere: heads only
        ([info([v0("a", None)]), info([v0("a", "0.2.0")])], {}, pkgs(("a", "0.2.0"))),
        (info([v0("a", None), v0("b", "")]), {}, pkgs(("a", None), ("b", None))),
        # a package with no Subscription (olm_operator_info with package=) is not installed
        (info([v0("a", "1.0.0"), v0("gone", None, present=False)]), {}, pkgs(("a", "1.0.0"))),
        # the single-operator form
        ({"changed": False, "operator": v0("a", "3.0.0")}, {}, pkgs(("a", "3.0.0"))),
        # OLM v1 ClusterExtensions count, with the v0 operators of the same package
        ([info([v0("a", "1.2.0")]), info([], [v1("a", "1.1.0"), v1("c", "0.1.0")])], {}, pkgs(("a", "1.1.0"), ("c", "0.1.0"))),
        ([info([v0("a", "1.2.0")], [v1("c", "0.1.0")])], {"cluster_extensions": False}, pkgs(("a", "1.2.0"))),
        # only the operators of some CatalogSources
        (info([v0("a", "1.0.0"), v0("b", "1.0.0", source="community-operators")]), {"sources": ["community-operators"]}, pkgs(("b", "1.0.0"))),
        # a registered loop's result, and a list of them
        ({"results": [info([v0("a", "2.0.0")], item="east"), info([v0("a", "1.5.0")], item="west")], "changed": False}, {}, pkgs(("a", "1.5.0"))),
        ([{"results": [info([v0("a", "2.0.0")])]}, info([v0("b", "1.0.0")])], {}, pkgs(("a", "2.0.0"), ("b", "1.0.0"))),
    ],
)
def test_mirror_select(results, kwargs, expected):
    assert mirror_select(results, **kwargs) == expected


@pytest.mark.parametrize(
    "results, kwargs, message",
    [
        ([], {}, "no olm_operator_info result given"),
        (info([]), {}, "no installed operator in the 1 olm_operator_info result(s): an empty select would keep every package"),
        (info([v0("a", "1.0.0")]), {"sources": ["other"]}, "no installed operator subscribed from other"),
        ([info([v0("a", "1.0.0")]), {"failed": True, "msg": "Unauthorized", "item": "west"}], {}, "results[1] (west) failed (Unauthorized)"),
        ({"results": [{"skipped": True, "item": "east"}]}, {}, "result.results[0] (east) was skipped"),
        ([{"changed": False}], {}, "results[0] is not an olm_operator_info result"),
        (["east"], {}, "results[0]: expected an olm_operator_info result (a dict) or a list of them, not str"),
        ([info([v0("a", "1.0")], cluster="east")], {}, "results[0] (east): package a has installed version 1.0, not a semantic version"),
        (info([v0("a", "1.0.0")]), {"sources": "redhat-operators"}, "sources must be a list of CatalogSource names"),
    ],
)
def test_refused(results, kwargs, message):
    with pytest.raises(InvalidInputError) as exc:
        mirror_select(results, **kwargs)
    assert message in str(exc.value)


def _catalog():
    """Package a: channel stable 1.0.0 -> 1.1.0 -> 1.2.0 -> 1.3.0 (head), channel fast 1.3.0 only; package b: one
    bundle; package c, which no cluster runs."""
    cfg = DeclarativeConfig()
    chain = ["1.0.0", "1.1.0", "1.2.0", "1.3.0"]
    for name in ("a", "b", "c"):
        cfg.packages.append({"schema": "olm.package", "name": name, "defaultChannel": "stable"})
    entries = [{"name": f"a.v{v}", **({"replaces": f"a.v{chain[i - 1]}"} if i else {})} for i, v in enumerate(chain)]
    cfg.channels.append({"schema": "olm.channel", "package": "a", "name": "stable", "entries": entries})
    cfg.channels.append({"schema": "olm.channel", "package": "a", "name": "fast", "entries": [{"name": "a.v1.3.0"}]})
    for name in ("b", "c"):
        cfg.channels.append({"schema": "olm.channel", "package": name, "name": "stable", "entries": [{"name": f"{name}.v0.1.0"}]})
    for package, version in [("a", v) for v in chain] + [("b", "0.1.0"), ("c", "0.1.0")]:
        cfg.bundles.append(
            {
                "schema": "olm.bundle",
                "name": f"{package}.v{version}",
                "package": package,
                "image": f"registry.example.com/{package}:v{version}",
                "properties": [{"type": "olm.package", "value": {"packageName": package, "version": version}}],
            }
        )
    return cfg


def test_the_select_keeps_each_installed_version_up_to_the_heads():
    select = mirror_select([info([v0("a", "1.2.0"), v0("b", "0.1.0")]), info([v0("a", "1.1.0")])])
    out, warnings = filter_catalog(_catalog(), select)
    assert warnings == []
    assert sorted(p["name"] for p in out.packages) == ["a", "b"]  # c: no cluster runs it
    kept = {c["name"]: [e["name"] for e in c["entries"]] for c in out.channels if c["package"] == "a"}
    assert kept == {"stable": ["a.v1.1.0", "a.v1.2.0", "a.v1.3.0"], "fast": ["a.v1.3.0"]}  # from the lowest, 1.1.0
    assert sorted(b["name"] for b in out.bundles) == ["a.v1.1.0", "a.v1.2.0", "a.v1.3.0", "b.v0.1.0"]
