"""olmv1/installer_rbac.py: operator-controller v1.5.1's generated RBAC names (a port of Go's json.Encoder + SHA-224 +
base 36 + 63-character cut), the bundles it refuses, and the installer ServiceAccount's least-privilege RBAC, on the
testbed's kube-demo bundles and small synthetic CSVs."""

import copy
import hashlib
import json

import pytest
import yaml
from lib.testdata import DATA_DIR

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_json_escape
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1 import installer_rbac as ir
from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.installer_rbac import InstallerRBACError

BUNDLES = DATA_DIR.parent / "testbed" / "fixtures" / "kube-demo" / "bundles"
NS = "kube-demo-system"
EXT = "kube-demo"
SA = "kube-demo-installer"


def load_bundle(version):
    manifests = sorted((BUNDLES / version / "manifests").glob("*.yaml"))
    assert manifests, f"no manifests for kube-demo {version}"
    docs = []
    for path in manifests:
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


B1 = load_bundle("0.0.1")
B2 = load_bundle("0.0.2")


def csv_of(bundle):
    return ir.bundle_csv(bundle)


# ------------------------------------------------------------------------------------------- Go's json.Encoder

GO_STRINGS = [
    ("plain", '"plain"'),
    ("", '""'),
    ("a<b>&c", '"a\\u003cb\\u003e\\u0026c"'),
    ('q"uote\\back', '"q\\"uote\\\\back"'),
    ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
    ("\x00\x01\x1f\x0b", '"\\u0000\\u0001\\u001f\\u000b"'),
    ("del\x7f", '"del\x7f"'),
    ("é ü 日本 😀", '"é ü 日本 😀"'),
    ("\u2028\u2029", '"\\u2028\\u2029"'),
    ("\u2027\u202a", '"\u2027\u202a"'),
    ("/héllo?a=1&b=<2>", '"/héllo?a=1\\u0026b=\\u003c2\\u003e"'),
    # a lone surrogate is invalid UTF-8 (3 bytes): Go writes one U+FFFD per byte
    ("x\ud800y", '"x\\ufffd\\ufffd\\ufffdy"'),
]


@pytest.mark.parametrize("text,expected", GO_STRINGS)
def test_go_json_string(text, expected):
    assert ir.go_json_string(text) == expected


@pytest.mark.parametrize("text", [t for t, _e in GO_STRINGS if "\ud800" not in t])
def test_go_json_string_agrees_with_the_fbc_engines_encoder(text):
    # second, independent implementation: Python's JSON text turned into Go's by the FBC engine's escaper
    assert ir.go_json_string(text) == go_json_escape(json.dumps(text, ensure_ascii=False))


def rule(**fields):
    return ir.normalize_rule(fields)


ENCODED_PERMISSIONS = [
    ("nil rules", "", None, '{"serviceAccountName":"","rules":null}\n'),
    ("empty rules", "sa", [], '{"serviceAccountName":"sa","rules":[]}\n'),
    (
        "nil verbs",
        "sa",
        [rule(apiGroups=[""], resources=["pods"])],
        '{"serviceAccountName":"sa","rules":[{"verbs":null,"apiGroups":[""],"resources":["pods"]}]}\n',
    ),
    (
        "empty lists: verbs kept, omitempty dropped",
        "sa",
        [rule(verbs=[], apiGroups=[], resources=[], resourceNames=[], nonResourceURLs=[])],
        '{"serviceAccountName":"sa","rules":[{"verbs":[]}]}\n',
    ),
    ("null rule", "sa", [rule()], '{"serviceAccountName":"sa","rules":[{"verbs":null}]}\n'),
    (
        "field order is the struct's, not the input's",
        "sa",
        [ir.normalize_rule({"nonResourceURLs": ["/m"], "resourceNames": ["n"], "resources": ["r"], "apiGroups": ["g"], "verbs": ["get"], "extra": 1})],
        '{"serviceAccountName":"sa","rules":[{"verbs":["get"],"apiGroups":["g"],"resources":["r"],"resourceNames":["n"],"nonResourceURLs":["/m"]}]}\n',
    ),
    (
        "html and unicode escaping",
        "sa-<&>",
        [rule(verbs=["get"], resourceNames=["é<\u2028"])],
        '{"serviceAccountName":"sa-\\u003c\\u0026\\u003e","rules":[{"verbs":["get"],"resourceNames":["é\\u003c\\u2028"]}]}\n',
    ),
]


@pytest.mark.parametrize("label,service_account,rules,expected", ENCODED_PERMISSIONS, ids=[e[0] for e in ENCODED_PERMISSIONS])
def test_encode_permission(label, service_account, rules, expected):
    encoded = ir.encode_permission(service_account, rules)
    assert encoded == expected.encode("utf-8"), label
    if "\\u" not in expected:  # plain JSON as well: Python reads back what Go wrote
        assert json.loads(encoded)["serviceAccountName"] == service_account


@pytest.mark.parametrize("bad", [{"verbs": "get"}, {"verbs": [1]}, {"apiGroups": [True]}, ["verbs"], {"resources": {"a": 1}}])
def test_normalize_rule_refuses_what_go_cannot_decode(bad):
    with pytest.raises(InstallerRBACError, match="must be"):
        ir.normalize_rule(bad)


@pytest.mark.parametrize("data", [b"", b"{}\n", "é".encode(), bytes(range(256))])
def test_deep_hash_is_base36_of_big_endian_sha224(data):
    text = ir.deep_hash(data)
    assert set(text) <= set("0123456789abcdefghijklmnopqrstuvwxyz") and len(text) <= 44
    assert int(text, 36) == int.from_bytes(hashlib.sha224(data).digest(), "big")
    assert not text.startswith("0") or text == "0"


SUFFIX = "s" * 44
NAMES = [
    ("short: no cut", "abc", "xyz", "abc-xyz"),
    ("base + suffix = 62: no cut, 63 long", "b" * 18, SUFFIX, "b" * 18 + "-" + SUFFIX),
    ("base + suffix = 63: no cut, 64 long (Go's off-by-one)", "b" * 19, SUFFIX, "b" * 19 + "-" + SUFFIX),
    ("base + suffix = 64: base cut to 18 bytes", "b" * 20, SUFFIX, "b" * 18 + "-" + SUFFIX),
    ("long base", "x" * 200, "abc", "x" * 59 + "-abc"),
    ("cut inside a 2-byte character: U+FFFD", "m" * 17 + "é" + "tail", SUFFIX, "m" * 17 + "\ufffd-" + SUFFIX),
    ("cut inside a 3-byte character: one U+FFFD per byte", "m" * 16 + "日" + "tail", SUFFIX, "m" * 16 + "\ufffd\ufffd-" + SUFFIX),
]


@pytest.mark.parametrize("label,base,suffix,expected", NAMES, ids=[n[0] for n in NAMES])
def test_object_name_for_base_and_suffix(label, base, suffix, expected):
    assert ir.object_name_for_base_and_suffix(base, suffix) == expected, label


# ------------------------------------------------------------------------------------------- generated names

TRICKY_CSV = """
apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: tricky-operator.v1.2.3-rc.1
spec:
  installModes:
  - {type: AllNamespaces, supported: true}
  install:
    strategy: deployment
    spec:
      deployments: []
      permissions:
      - rules:
        - verbs: [get]
          apiGroups: [""]
          resources: [configmaps]
          resourceNames: ["a<b>&c", "é ü 日本", "tab\\there", "q\\"uote\\\\back", "\\u2028\\u2029", "ctl\\x01\\x1f\\b\\f\\x7f\\r\\n", "emoji 😀"]
      - serviceAccountName: sa-no-rules
      - serviceAccountName: sa-empty-rules
        rules: []
      clusterPermissions:
      - serviceAccountName: sa-nulls
        rules:
        - apiGroups: [""]
          resources: [pods]
        - verbs: []
          apiGroups: []
          resources: []
          resourceNames: []
          nonResourceURLs: []
        - verbs: [get]
          nonResourceURLs: ["/metrics", "/héllo?a=1&b=<2>"]
        - {verbs: [list], apiGroups: [x], resources: [yy], unknownField: dropped}
        - verbs: null
          apiGroups: null
          resources: [z]
      - serviceAccountName: "sa-<&>"
        rules: [{verbs: ["*"], apiGroups: ["*"], resources: ["*"]}]
      - serviceAccountName: ""
        rules: [{verbs: [watch], apiGroups: [""], resources: [secrets]}]
"""


def boundary_csv(name):
    rules = [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
    return {
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name},
        "spec": {"install": {"spec": {"clusterPermissions": [{"serviceAccountName": "b", "rules": rules}]}}},
    }


# Expected names computed by the real Go code, not by this module: a throwaway program outside the repository
# (module kf/gohash: github.com/operator-framework/api v0.34.0, k8s.io/api v0.33.2, sigs.k8s.io/yaml; Go 1.26,
# GOFLAGS=-mod=mod GOTOOLCHAIN=local) that decodes each CSV with sigs.k8s.io/yaml + runtime.DefaultUnstructuredConverter
# into v1alpha1.ClusterServiceVersion and names the roles exactly as operator-controller v1.5.1 does
# (generators.BundleCSV{Permissions,ClusterPermissions}Generator, render.DefaultUniqueNameGenerator,
# util.DeepHashObject, util.ObjectNameForBaseAndSuffix): `gohash [-targets ns1,ns2] <csv.yaml>...`. The kube-demo
# names were confirmed once more by operator-controller v1.5.1's own renderer (convert.BundleToHelmChartConverter with
# registryv1.Renderer, built from `git archive v1.5.1`) on tests/testbed/fixtures/kube-demo/bundles/0.0.{1,2}.
GO_NAMES = [
    (
        "kube-demo 0.0.1",
        csv_of(B1),
        None,
        [
            ("ClusterRole", None, "kube-demo.v0.0.1-k-316918l5jg52mykv1uipeoc0hjne4y80cpmhfxas6hfi"),
            ("ClusterRole", None, "kube-demo.v0.0.1-k-18hublhzohi8zbt1v0dvbh0w4p86zk9e6y12qjwuybnu"),
        ],
    ),
    (
        "kube-demo 0.0.2",
        csv_of(B2),
        None,
        [
            ("ClusterRole", None, "kube-demo.v0.0.2-k-316918l5jg52mykv1uipeoc0hjne4y80cpmhfxas6hfi"),
            ("ClusterRole", None, "kube-demo.v0.0.2-k-18hublhzohi8zbt1v0dvbh0w4p86zk9e6y12qjwuybnu"),
        ],
    ),
    (
        "tricky CSV",
        yaml.safe_load(TRICKY_CSV),
        None,
        [
            ("ClusterRole", None, "tricky-operator.v1-1574qh21ny5jmfr87riwuwhebgygx6am39p10fx7ouca"),
            ("ClusterRole", None, "tricky-operator.v1-1ub8sfz3pvucgxwrerwc4gsjizeef2s1hefhqjxff7wo"),
            ("ClusterRole", None, "tricky-operator.v1-2owft1ynm6sowyvkd1ebjwfwtft4pz207jg2ou1axahc"),
            ("ClusterRole", None, "tricky-operator.v1-2dmwqzkuhz9h5t7z0all9inbc45506uvnt9w1ccsvoqo"),
            ("ClusterRole", None, "tricky-operator.v1-29zfw0ob2wds2al6fa45pnkavbbjjw41uz1weq275r76"),
            ("ClusterRole", None, "tricky-operator.v1-1w7vgxrfrvnzj2nhq70ecn65lgewpvot4df9ltkzdjc5"),
        ],
    ),
    (
        "kube-demo 0.0.1 with target namespaces: Roles from the unpromoted permissions",
        csv_of(B1),
        ["ns1", "ns2"],
        [
            ("Role", "ns1", "kube-demo.v0.0.1-k-1tg10utyiecbqp3gl6zqu1spui6j2oc3kmjqubgml2vi"),
            ("Role", "ns2", "kube-demo.v0.0.1-k-1tg10utyiecbqp3gl6zqu1spui6j2oc3kmjqubgml2vi"),
            ("ClusterRole", None, "kube-demo.v0.0.1-k-316918l5jg52mykv1uipeoc0hjne4y80cpmhfxas6hfi"),
        ],
    ),
    (
        "null rule",
        {
            "kind": "ClusterServiceVersion",
            "metadata": {"name": "nullrule.v1"},
            "spec": {"install": {"spec": {"clusterPermissions": [{"serviceAccountName": "a", "rules": [None]}]}}},
        },
        None,
        [("ClusterRole", None, "nullrule.v1-a-58gvvk69pjrdbhq2kwgxqbvlvsc3apq753sehpmdspg")],
    ),
    ("base + hash = 62", boundary_csv("boundaryxxxxxxv1"), None, [("ClusterRole", None, "boundaryxxxxxxv1-b-2zwu8l2az9axyl8j10lzq1j37f4w1fah1helxg0abjye")]),
    (
        "base + hash = 63 (64 long)",
        boundary_csv("boundaryxxxxxxxv1"),
        None,
        [("ClusterRole", None, "boundaryxxxxxxxv1-b-2zwu8l2az9axyl8j10lzq1j37f4w1fah1helxg0abjye")],
    ),
    (
        "base + hash = 64 (cut)",
        boundary_csv("boundaryxxxxxxxxv1"),
        None,
        [("ClusterRole", None, "boundaryxxxxxxxxv1-2zwu8l2az9axyl8j10lzq1j37f4w1fah1helxg0abjye")],
    ),
    (
        "cut inside é (Go's JSON of the name: U+FFFD)",
        boundary_csv("m" * 17 + "étail-long-enough"),
        None,
        [("ClusterRole", None, "m" * 17 + "\ufffd-2zwu8l2az9axyl8j10lzq1j37f4w1fah1helxg0abjye")],
    ),
]


@pytest.mark.parametrize("label,csv,targets,expected", GO_NAMES, ids=[g[0] for g in GO_NAMES])
def test_generated_names_match_go(label, csv, targets, expected):
    found = ir.generated_rbac_names(csv, targets)
    roles = [(g.kind, g.namespace, g.name) for g in found if g.kind in ("Role", "ClusterRole")]
    assert roles == expected, label
    bindings = [(g.kind, g.namespace, g.name) for g in found if g.kind.endswith("Binding")]
    assert bindings == [(k + "Binding", n, name) for k, n, name in expected]


def test_generated_rbac_promotes_permissions_with_the_namespaces_rule():
    csv = csv_of(B1)
    before = copy.deepcopy(csv)
    found = ir.generated_rbac_names(csv)
    assert csv == before  # Go appends to a copy; so do we
    assert [g.kind for g in found] == ["ClusterRole", "ClusterRoleBinding"] * 2
    assert {g.service_account for g in found} == {"kube-demo-controller-manager"}
    clusterwide, promoted = found[0], found[2]
    spec = csv["spec"]["install"]["spec"]
    assert clusterwide.rules == [ir.normalize_rule(r) for r in spec["clusterPermissions"][0]["rules"]]
    assert promoted.rules == [ir.normalize_rule(r) for r in spec["permissions"][0]["rules"]] + [ir.normalize_rule(ir.NAMESPACES_RULE)]
    assert all(len(g.name) <= 63 and g.name.startswith("kube-demo.v0.0.1-k") for g in found)


def test_generated_names_change_with_rules_and_service_account_only_through_the_hash():
    base = boundary_csv("op.v1")
    other = copy.deepcopy(base)
    other["spec"]["install"]["spec"]["clusterPermissions"][0]["rules"][0]["verbs"] = ["list"]
    default_sa = copy.deepcopy(base)
    default_sa["spec"]["install"]["spec"]["clusterPermissions"][0]["serviceAccountName"] = ""
    first, second, third = (ir.generated_rbac_names(c)[0].name for c in (base, other, default_sa))
    assert first.startswith("op.v1-b-") and second.startswith("op.v1-b-") and first != second
    assert third.startswith("op.v1-default-")  # saNameOrDefault in the base, the raw "" in the hash
    assert third.split("-")[-1] != first.split("-")[-1]


# ------------------------------------------------------------------------------------------- check_installable


def synthetic_bundle(csv_spec=None, others=(), name="synthetic.v1.0.0"):
    spec = {
        "installModes": [{"type": "AllNamespaces", "supported": True}],
        "install": {
            "strategy": "deployment",
            "spec": {
                "deployments": [{"name": "synthetic-manager", "spec": {}}],
                "clusterPermissions": [{"serviceAccountName": "synthetic-sa", "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}],
            },
        },
    }
    spec.update(csv_spec or {})
    csv = {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": name}, "spec": spec}
    return [csv] + [copy.deepcopy(o) for o in others]


def crd(name):
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name}}


def install_strategy(**fields):
    return {"install": {"strategy": "deployment", "spec": fields}}


OWN_ONLY = {
    "installModes": [{"type": "OwnNamespace", "supported": True}, {"type": "SingleNamespace", "supported": True}, {"type": "AllNamespaces", "supported": False}]
}
REFUSED = [
    ("kube-demo 0.0.1", B1, None, []),
    ("kube-demo 0.0.2", B2, None, []),
    ("synthetic", synthetic_bundle(), None, []),
    (
        "no AllNamespaces",
        synthetic_bundle(OWN_ONLY),
        None,
        [
            "invalid target namespaces []: supported install modes [OwnNamespace SingleNamespace] do not support targeting all namespaces (",
            "SingleOwnNamespaceInstallSupport",
        ],
    ),
    ("no install modes", synthetic_bundle({"installModes": None}), None, ["supported install modes [] do not support targeting all namespaces"]),
    (
        "owned APIService",
        synthetic_bundle({"apiservicedefinitions": {"owned": [{"name": "v1.x.io"}]}}),
        None,
        ["unsupported bundle: apiServiceDefintions are not supported"],
    ),
    (
        "webhooks",
        synthetic_bundle({"webhookdefinitions": [{"type": "ValidatingAdmissionWebhook"}]}),
        None,
        ["unsupported bundle: webhookDefinitions are not supported (", "WebhookProviderCertManager"],
    ),
    (
        "gvk dependency",
        synthetic_bundle(),
        [{"type": "olm.package", "value": {}}, {"type": "olm.gvk.required", "value": {}}, {"type": "olm.package.required", "value": {}}],
        ['bundle "synthetic.v1.0.0" has a dependency declared via property "olm.gvk.required" which is currently not supported'],
    ),
    ("package dependency", synthetic_bundle(), [{"type": "olm.package.required"}], ['via property "olm.package.required"']),
    ("constraint", synthetic_bundle(), [{"type": "olm.constraint"}], ['via property "olm.constraint"']),
    ("no CSV", [crd("a.x.io")], None, ['no ClusterServiceVersion found in "manifests"']),
    ("not an object", synthetic_bundle(others=[{"metadata": {"name": "x"}}]), None, ["manifest 1 of the bundle is not a Kubernetes object (no kind)"]),
    ("no name", synthetic_bundle(others=[{"kind": "ConfigMap", "metadata": {}}]), None, ["manifest 1 of the bundle (ConfigMap) has no metadata.name"]),
    (
        "unsupported kind",
        synthetic_bundle(others=[{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "extra"}}]),
        None,
        ["bundle contains unsupported resource: Name: extra, Kind: Deployment"],
    ),
    (
        "duplicate deployments",
        synthetic_bundle(install_strategy(deployments=[{"name": "d"}, {"name": "d"}])),
        None,
        ["cluster service version contains duplicate strategy deployment spec 'd'"],
    ),
    (
        "invalid deployment name",
        synthetic_bundle(install_strategy(deployments=[{"name": "Bad_Name"}])),
        None,
        ["invalid cluster service version strategy deployment name 'Bad_Name': a lowercase RFC 1123 subdomain must consist of"],
    ),
    ("duplicate CRDs", synthetic_bundle(others=[crd("a.x.io"), crd("a.x.io")]), None, ["bundle contains duplicate custom resource definition 'a.x.io'"]),
    (
        "owned CRD missing",
        synthetic_bundle({"customresourcedefinitions": {"owned": [{"name": "a.x.io"}, {"name": "b.x.io"}]}}, others=[crd("a.x.io")]),
        None,
        ["cluster service definition references owned custom resource definition 'b.x.io' not found in bundle"],
    ),
    (
        "permissions Go cannot decode",
        synthetic_bundle(install_strategy(permissions=[{"serviceAccountName": "s", "rules": [{"verbs": "get"}]}])),
        None,
        ["invalid ClusterServiceVersion synthetic.v1.0.0: spec.install.spec.permissions.0.rules.0.verbs must be a list of strings"],
    ),
]


@pytest.mark.parametrize("label,bundle,properties,expected", REFUSED, ids=[r[0] for r in REFUSED])
def test_check_installable(label, bundle, properties, expected):
    problems = ir.check_installable(bundle, properties=properties, name=csv_of(bundle)["metadata"]["name"] if csv_of(bundle) else None)
    if not expected:
        assert problems == [], label
        return
    assert len(problems) == 1, problems
    for part in expected:
        assert part in problems[0], (label, problems)


def test_check_installable_matches_the_message_the_cluster_extension_core_treats_as_permanent():
    from ansible_collections.kubeforge.operators.plugins.module_utils.olmv1.cluster_extension import permanent_problem

    (problem,) = ir.check_installable(synthetic_bundle(OWN_ONLY))
    assert permanent_problem(problem) == ("install mode", False)


# ------------------------------------------------------------------------------------------- installer RBAC


def rbac_for(bundles, **kwargs):
    objects = ir.installer_rbac(EXT, NS, SA, bundles, **kwargs)
    return {o["kind"]: o for o in objects}, objects


def _matches(values, wanted):
    return "*" in values or wanted in values


def allowed(objs, verb, group, resource, name=None, namespace=None):
    """A small RBAC authorizer over the installer's ClusterRole (everywhere) and Role (its namespace only)."""
    roles = [objs["ClusterRole"]] + ([objs["Role"]] if namespace == NS else [])
    for role in roles:
        for rule in role["rules"]:
            if "nonResourceURLs" in rule:
                continue
            if not (_matches(rule["verbs"], verb) and _matches(rule["apiGroups"], group) and _matches(rule["resources"], resource)):
                continue
            if rule.get("resourceNames") and (name is None or name not in rule["resourceNames"]):
                continue
            return True
    return False


def atoms(rules):
    for r in rules:
        r = ir.normalize_rule(r)
        for g in r["apiGroups"] or ():
            for res in r["resources"] or ():
                for n in r["resourceNames"] or (None,):
                    for v in r["verbs"] or ():
                        yield v, g, res, n


def expected_objects(bundle):
    """(group, resource, namespace or None, name) of everything v1.5.1 installs for ``bundle``, read independently."""
    csv = csv_of(bundle)
    spec = csv["spec"]["install"]["spec"]
    out = set()
    for entry in spec.get("permissions", []) + spec.get("clusterPermissions", []):
        if entry.get("serviceAccountName", "") not in ("", "default"):
            out.add(("", "serviceaccounts", NS, entry["serviceAccountName"]))
    for d in spec.get("deployments", []):
        out.add(("apps", "deployments", NS, d["name"]))
    for g in ir.generated_rbac_names(csv):
        out.add(("rbac.authorization.k8s.io", g.kind.lower() + "s", None, g.name))
    plural = {"ConfigMap": ("", "configmaps", NS), "ClusterRole": ("rbac.authorization.k8s.io", "clusterroles", None)}
    plural["CustomResourceDefinition"] = ("apiextensions.k8s.io", "customresourcedefinitions", None)
    for obj in bundle:
        if obj["kind"] in plural:
            group, resource, namespace = plural[obj["kind"]]
            out.add((group, resource, namespace, obj["metadata"]["name"]))
    return out


@pytest.mark.parametrize("bundles", [[B1], [B2], [B1, B2]], ids=["0.0.1", "0.0.2", "0.0.1+0.0.2"])
def test_installer_can_do_what_helm_and_the_content_manager_do(bundles):
    objs, _objects = rbac_for(bundles)
    for bundle in bundles:
        for group, resource, namespace, name in expected_objects(bundle):
            for verb in ("get", "update", "patch", "delete"):
                assert allowed(objs, verb, group, resource, name, namespace), (verb, resource, name)
            assert allowed(objs, "create", group, resource, None, namespace), ("create", resource)
            for verb in ("list", "watch"):  # NamespaceAll informers
                assert allowed(objs, verb, group, resource, None, None), (verb, resource)
            if namespace:
                assert not allowed(objs, "delete", group, resource, name, "elsewhere"), resource
    assert allowed(objs, "update", "olm.operatorframework.io", "clusterextensions/finalizers", EXT)
    assert not allowed(objs, "update", "olm.operatorframework.io", "clusterextensions/finalizers", "other-extension")


@pytest.mark.parametrize("bundles", [[B1], [B1, B2]], ids=["0.0.1", "0.0.1+0.0.2"])
def test_installer_holds_every_rule_it_grants(bundles):
    """RBAC escalation prevention: each rule of a generated or shipped ClusterRole must be held cluster-wide."""
    objs, _objects = rbac_for(bundles)
    for bundle in bundles:
        granted = [g.rules for g in ir.generated_rbac_names(csv_of(bundle)) if g.kind == "ClusterRole"]
        granted += [o["rules"] for o in bundle if o["kind"] == "ClusterRole"]
        for rules in granted:
            for verb, group, resource, name in atoms(rules):
                assert allowed(objs, verb, group, resource, name, None), (verb, group, resource, name)


def test_installer_is_least_privilege_for_kube_demo():
    objs, objects = rbac_for([B1])
    assert not ir.broad_grants(objects)
    for role in (objs["ClusterRole"], objs["Role"]):
        for r in role["rules"]:
            assert all("*" not in (r.get(f) or ()) for f in ("verbs", "apiGroups", "resources", "resourceNames")), r
    refused = [
        ("delete", "apiextensions.k8s.io", "customresourcedefinitions", "other.example.com", None),
        ("update", "apps", "deployments", "other", NS),
        ("get", "apps", "deployments", "kube-demo-controller-manager", "other-namespace"),
        ("delete", "", "configmaps", "other", NS),
        ("get", "", "secrets", "anything", NS),
        ("list", "", "secrets", None, None),
        ("delete", "rbac.authorization.k8s.io", "clusterroles", "cluster-admin", None),
        ("escalate", "rbac.authorization.k8s.io", "clusterroles", "kube-demo-kubedemo-viewer", None),
        ("bind", "rbac.authorization.k8s.io", "clusterroles", "cluster-admin", None),
        ("delete", "demo.kubeforge.io", "kubedemos", "x", NS),
        ("update", "olm.operatorframework.io", "clusterextensions", EXT, None),
    ]
    for verb, group, resource, name, namespace in refused:
        assert not allowed(objs, verb, group, resource, name, namespace), (verb, resource, name, namespace)


# What installer_rbac derives for kube-demo 0.0.1 (the generated ClusterRole names are the Go-verified ones above).
GENERATED_1 = ["kube-demo.v0.0.1-k-18hublhzohi8zbt1v0dvbh0w4p86zk9e6y12qjwuybnu", "kube-demo.v0.0.1-k-316918l5jg52mykv1uipeoc0hjne4y80cpmhfxas6hfi"]
KUBE_DEMO_1_CLUSTER_RULES = [
    {"apiGroups": [""], "resources": ["configmaps", "events"], "verbs": ["get", "list", "watch", "create", "update", "patch"]},
    {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["list", "watch"]},
    {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "watch", "create"]},
    {
        "apiGroups": ["apiextensions.k8s.io"],
        "resources": ["customresourcedefinitions"],
        "resourceNames": ["kubedemos.demo.kubeforge.io"],
        "verbs": ["get", "update", "patch", "delete"],
    },
    {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list", "watch"]},
    {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list", "watch", "create", "update", "patch"]},
    {"apiGroups": ["demo.kubeforge.io"], "resources": ["kubedemos", "kubedemos/status"], "verbs": ["get", "list", "watch", "update", "patch"]},
    {"apiGroups": ["olm.operatorframework.io"], "resources": ["clusterextensions/finalizers"], "resourceNames": ["kube-demo"], "verbs": ["update"]},
    {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterrolebindings"],
        "resourceNames": GENERATED_1,
        "verbs": ["get", "update", "patch", "delete"],
    },
    {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterrolebindings", "clusterroles"], "verbs": ["list", "watch", "create"]},
    {
        "apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"],
        "resourceNames": ["kube-demo-kubedemo-viewer"] + GENERATED_1,
        "verbs": ["get", "update", "patch", "delete"],
    },
]
KUBE_DEMO_1_ROLE_RULES = [
    # the CSV grants get/create/update/patch on every ConfigMap already: only delete is left to scope by name
    {"apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["kube-demo-operand-manifests"], "verbs": ["delete"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["create"]},
    {"apiGroups": [""], "resources": ["serviceaccounts"], "resourceNames": ["kube-demo-controller-manager"], "verbs": ["get", "update", "patch", "delete"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["create"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["kube-demo-controller-manager"], "verbs": ["get", "update", "patch", "delete"]},
]


def test_installer_objects_for_kube_demo_0_0_1():
    objs, objects = rbac_for([B1])
    assert [o["kind"] for o in objects] == ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]
    assert objs["ServiceAccount"] == {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": SA, "namespace": NS}}
    assert objs["ClusterRole"]["metadata"] == {"name": "kube-demo-installer"}
    assert objs["ClusterRole"]["rules"] == KUBE_DEMO_1_CLUSTER_RULES
    assert objs["Role"]["metadata"] == {"name": "kube-demo-installer", "namespace": NS}
    assert objs["Role"]["rules"] == KUBE_DEMO_1_ROLE_RULES
    subjects = [{"kind": "ServiceAccount", "name": SA, "namespace": NS}]
    assert objs["ClusterRoleBinding"]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kube-demo-installer"}
    assert objs["RoleBinding"]["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kube-demo-installer"}
    assert objs["ClusterRoleBinding"]["subjects"] == subjects and objs["RoleBinding"]["subjects"] == subjects
    assert objs["RoleBinding"]["metadata"]["namespace"] == NS and "namespace" not in objs["ClusterRoleBinding"]["metadata"]


def test_union_over_bundles_is_deterministic_and_order_independent():
    _objs, both = rbac_for([B1, B2])
    assert ir.installer_rbac(EXT, NS, SA, [B2, B1]) == both
    assert ir.installer_rbac(EXT, NS, SA, [B1, B2, copy.deepcopy(B1)]) == both
    assert json.dumps(ir.installer_rbac(EXT, NS, SA, [B1, B2])) == json.dumps(both)
    names = next(r["resourceNames"] for r in both[1]["rules"] if r["resources"] == ["clusterroles"] and "resourceNames" in r)
    expected = {g.name for b in (B1, B2) for g in ir.generated_rbac_names(csv_of(b)) if g.kind == "ClusterRole"} | {"kube-demo-kubedemo-viewer"}
    assert names == sorted(expected) and len(names) == 5


def test_inputs_are_not_modified():
    before = copy.deepcopy([B1, B2])
    ir.installer_rbac(EXT, NS, SA, [B1, B2])
    ir.check_installable(B1)
    assert [B1, B2] == before


WILDCARD_RULE = {"verbs": ["*"], "apiGroups": ["example.io"], "resources": ["*"]}


def test_wildcards_only_where_the_csv_grants_them():
    bundle = synthetic_bundle(install_strategy(deployments=[{"name": "m"}], clusterPermissions=[{"serviceAccountName": "sa", "rules": [WILDCARD_RULE]}]))
    objs, objects = rbac_for([bundle])
    assert WILDCARD_RULE in [{k: r[k] for k in ("verbs", "apiGroups", "resources")} for r in objs["ClusterRole"]["rules"] if "resourceNames" not in r]
    wildcard_rules = [r for o in objects if o["kind"] in ("ClusterRole", "Role") for r in o["rules"] if "*" in r["verbs"] + r.get("resources", [])]
    assert wildcard_rules == [{"apiGroups": ["example.io"], "resources": ["*"], "verbs": ["*"]}]
    (warning,) = ir.broad_grants(objects)
    assert "wildcard" in warning and "example.io" in warning


def test_default_service_account_and_deployment_accounts_are_not_created():
    bundle = synthetic_bundle(
        install_strategy(
            deployments=[{"name": "m", "spec": {"template": {"spec": {"serviceAccountName": "deployment-only"}}}}],
            permissions=[{"rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]}, {"serviceAccountName": "default"}],
        )
    )
    objs, _objects = rbac_for([bundle])
    names = [r.get("resourceNames") for r in objs["Role"]["rules"] if r["resources"] == ["serviceaccounts"]]
    assert names == [] and not allowed(objs, "create", "", "serviceaccounts", None, NS)


SHIPPED = [
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "shipped-role"},
        "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["endpoints"]}],
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "to-external"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "extension-apiserver-authentication-reader"},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "to-shipped"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "shipped-role"},
    },
    {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "auth-delegator"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:auth-delegator"},
    },
    {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "shipped-secret"}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "metrics"}},
    {"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "vpa"}},
    {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "synthetic-high"}},
]


def test_shipped_rbac_and_other_kinds():
    objs, objects = rbac_for([synthetic_bundle(others=SHIPPED)])
    rbac = "rbac.authorization.k8s.io"
    # a shipped Role's rules are held in the namespace (to create it), not cluster-wide
    assert allowed(objs, "get", "", "endpoints", "any", NS) and not allowed(objs, "get", "", "endpoints", "any", None)
    # binding a role the bundle does not ship: bind on exactly that role, in the binding's scope
    assert allowed(objs, "bind", rbac, "clusterroles", "extension-apiserver-authentication-reader", NS)
    assert not allowed(objs, "bind", rbac, "clusterroles", "extension-apiserver-authentication-reader", None)
    assert allowed(objs, "bind", rbac, "clusterroles", "system:auth-delegator", None)
    assert not allowed(objs, "bind", rbac, "roles", "shipped-role", NS)  # held through its rules instead
    assert not allowed(objs, "bind", rbac, "clusterroles", "cluster-admin", NS)
    for group, resource, name, namespace in (
        ("", "secrets", "shipped-secret", NS),
        ("", "services", "metrics", NS),
        ("autoscaling.k8s.io", "verticalpodautoscalers", "vpa", NS),  # namespaced although OLM calls it cluster-scoped
        ("scheduling.k8s.io", "priorityclasses", "synthetic-high", None),
        (rbac, "rolebindings", "to-external", NS),
        (rbac, "clusterrolebindings", "auth-delegator", None),
    ):
        assert allowed(objs, "patch", group, resource, name, namespace), resource
        assert allowed(objs, "watch", group, resource, None, None), resource
    assert not allowed(objs, "get", "", "secrets", "other", NS)
    warnings = ir.broad_grants(objects)
    assert len(warnings) == 1 and "read Secrets in every namespace" in warnings[0]


UNDERIVABLE = [
    (
        "aggregated ClusterRole",
        [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{}]}}],
        "aggregationRule",
    ),
    (
        "VPA in another namespace",
        [{"apiVersion": "autoscaling.k8s.io/v1", "kind": "VerticalPodAutoscaler", "metadata": {"name": "v", "namespace": "other"}}],
        "not the install",
    ),
    ("Service of another API group", [{"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": "s"}}], "pass a resource mapping"),
    ("binding without roleRef", [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "b"}}], "no valid roleRef"),
    (
        "unsupported kind",
        [{"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "d"}}],
        "cannot be installed by OLM v1: bundle contains unsupported resource",
    ),
    ("no AllNamespaces", None, "do not support targeting all namespaces"),
]


@pytest.mark.parametrize("label,others,message", UNDERIVABLE, ids=[u[0] for u in UNDERIVABLE])
def test_installer_rbac_refuses(label, others, message):
    bundle = synthetic_bundle(OWN_ONLY) if others is None else synthetic_bundle(others=others)
    with pytest.raises(InstallerRBACError, match=message):
        ir.installer_rbac(EXT, NS, SA, [B1, bundle])


def test_resource_mapping_from_the_caller():
    calls = []

    def resource_for(api_version, kind):
        calls.append((api_version, kind))
        return ("services", True) if (api_version, kind) == ("serving.knative.dev/v1", "Service") else None

    objs, _objects = rbac_for(
        [synthetic_bundle(others=[{"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": "s"}}])], resource_for=resource_for
    )
    assert calls == [("serving.knative.dev/v1", "Service")]  # the table answers everything else
    assert allowed(objs, "delete", "serving.knative.dev", "services", "s", NS)
    assert not allowed(objs, "delete", "", "services", "s", NS)


@pytest.mark.parametrize(
    "args,message",
    [
        (("Bad", NS, SA, [B1]), "extension name"),
        ((EXT, "Bad_NS", SA, [B1]), "namespace"),
        ((EXT, NS, "", [B1]), "service account"),
        ((EXT, NS, SA, []), "no bundle"),
    ],
)
def test_installer_rbac_arguments(args, message):
    with pytest.raises(InstallerRBACError, match=message):
        ir.installer_rbac(*args)


def test_installer_name_and_labels():
    assert ir.installer_name("kube-demo") == "kube-demo-installer"
    long_a, long_b = "a" * 250 + "x", "a" * 250 + "y"
    name_a, name_b = ir.installer_name(long_a), ir.installer_name(long_b)
    assert len(name_a) <= 253 and len(name_b) <= 253 and name_a != name_b and name_a.endswith("-installer")
    objs, objects = rbac_for([B1], labels={"app.kubernetes.io/managed-by": "kubeforge.operators"})
    assert all(o["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "kubeforge.operators"} for o in objects)
    long_objects = ir.installer_rbac(long_a, NS, SA, [B1])
    assert {o["metadata"]["name"] for o in long_objects[1:]} == {name_a}
    finalizers = next(r for r in long_objects[1]["rules"] if r["resources"] == ["clusterextensions/finalizers"])
    assert finalizers["resourceNames"] == [long_a]


def test_tricky_csv_rules_are_copied_atom_for_atom():
    csv = yaml.safe_load(TRICKY_CSV)
    objs, objects = rbac_for([[csv]])
    cluster_rules = objs["ClusterRole"]["rules"]
    assert {"nonResourceURLs": ["/héllo?a=1&b=<2>", "/metrics"], "verbs": ["get"]} in cluster_rules
    # rules without verbs grant nothing, so nothing is copied for them (pods, z)
    assert not any("pods" in r.get("resources", ()) or "z" in r.get("resources", ()) for r in cluster_rules)
    assert allowed(objs, "get", "", "configmaps", "a<b>&c") and allowed(objs, "get", "", "configmaps", "emoji 😀")
    named = next(r for r in cluster_rules if r.get("resources") == ["configmaps"] and r.get("resourceNames"))
    expected = ["a<b>&c", "é ü 日本", "tab\there", 'q"uote\\back', "\u2028\u2029", "ctl\x01\x1f\b\f\x7f\r\n", "emoji 😀"]
    assert named["resourceNames"] == sorted(expected) and named["verbs"] == ["get"]
    assert allowed(objs, "list", "x", "yy") and allowed(objs, "watch", "", "secrets")
    assert allowed(objs, "delete", "anything.io", "anything", "any")  # the CSV's own */*/* rule, copied
    assert any("wildcard" in w for w in ir.broad_grants(objects))
    # the ServiceAccounts of the permissions, except "default" (the empty name)
    sa_rule = next(r for r in objs["Role"]["rules"] if r.get("resourceNames") and r["resources"] == ["serviceaccounts"])
    assert sa_rule["resourceNames"] == ["sa-<&>", "sa-empty-rules", "sa-no-rules", "sa-nulls"]
