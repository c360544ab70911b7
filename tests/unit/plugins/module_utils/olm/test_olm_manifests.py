"""olm/manifests.py on OLM v0.46.0's real quickstart manifests (tests/data/olm/v0.46.0) and on literal objects."""

import pytest
import yaml
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import manifests as mf
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.manifests import ManifestError, Ref

V0460 = data_path("olm", "v0.46.0")
CRDS = (V0460 / "crds.yaml").read_text()
OLM = (V0460 / "olm.yaml").read_text()


@pytest.fixture(scope="module")
def plan():
    return mf.plan_install(CRDS, OLM)


def refs(docs):
    return [mf.ref_text(mf.object_ref(d)) for d in docs]


def test_real_manifests_crds(plan):
    assert [mf.object_ref(c).name for c in plan.crds] == [
        "catalogsources.operators.coreos.com",
        "clusterserviceversions.operators.coreos.com",
        "installplans.operators.coreos.com",
        "operatorconditions.operators.coreos.com",
        "operatorgroups.operators.coreos.com",
        "operators.operators.coreos.com",
        "subscriptions.operators.coreos.com",
    ]
    assert all(c["apiVersion"] == "apiextensions.k8s.io/v1" for c in plan.crds)


def test_real_manifests_apply_order_namespaces_first_then_file_order(plan):
    assert refs(plan.objects) == [
        "Namespace olm",
        "Namespace operators",
        "ServiceAccount olm/olm-operator-serviceaccount",
        "ClusterRole system:controller:operator-lifecycle-manager",
        "ClusterRoleBinding olm-operator-binding-olm",
        "Deployment olm/olm-operator",
        "Deployment olm/catalog-operator",
        "ClusterRole aggregate-olm-edit",
        "ClusterRole aggregate-olm-view",
        "OperatorGroup operators/global-operators",
        "OperatorGroup olm/olm-operators",
        "ClusterServiceVersion olm/packageserver",
        "CatalogSource olm/operatorhubio-catalog",
    ]
    # every document of both files is either a CRD or an object to apply, none lost or duplicated
    total = [d for d in yaml.safe_load_all(CRDS) if d] + [d for d in yaml.safe_load_all(OLM) if d]
    assert len(plan.crds) + len(plan.objects) == len(total)


def test_real_manifests_waits_namespaces_image_and_version(plan):
    assert plan.namespaces == ["olm", "operators"]
    assert plan.deployments == [Ref("apps/v1", "Deployment", "olm", "olm-operator"), Ref("apps/v1", "Deployment", "olm", "catalog-operator")]
    assert plan.csvs == [Ref("operators.coreos.com/v1alpha1", "ClusterServiceVersion", "olm", "packageserver")]
    assert plan.image == "quay.io/operator-framework/olm@sha256:e74b2ac57963c7f3ba19122a8c31c9f2a0deb3c0c5cac9e5323ccffd0ca198ed"
    # pinned by digest: no version can be read from the image (the packageserver CSV's 0.18.3 is stale upstream)
    assert plan.version is None
    assert plan.skipped == []


def test_real_manifests_lack_olmconfig_crd_and_say_so(plan):
    assert len(plan.warnings) == 1 and mf.OLMCONFIG_CRD in plan.warnings[0]


def test_catalog_source_false_skips_the_default_catalog():
    plan = mf.plan_install(CRDS, OLM, catalog_source=False)
    assert refs(plan.skipped) == ["CatalogSource olm/operatorhubio-catalog"]
    assert "CatalogSource" not in [o["kind"] for o in plan.objects]
    assert len(plan.objects) == 12


def test_bytes_input_and_list_documents():
    crds = b"---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: as.example.com}\n"
    olm = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "olm-operator", "namespace": "x"}},
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},
            ],
        }
    )
    plan = mf.plan_install(crds, olm)
    assert refs(plan.objects) == ["Namespace x", "Deployment x/olm-operator"]
    assert plan.namespaces == ["x"] and plan.warnings == []


def deployment(name="olm-operator", namespace="olm", image="quay.io/operator-framework/olm:v0.46.0", container="olm-operator"):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"template": {"spec": {"containers": [{"name": "sidecar", "image": "x:1"}, {"name": container, "image": image}]}}},
    }


@pytest.mark.parametrize(
    "image, tag",
    [
        ("quay.io/operator-framework/olm:v0.46.0", "v0.46.0"),
        ("localhost:5000/olm:v1", "v1"),
        ("localhost:5000/olm", None),
        ("quay.io/operator-framework/olm@sha256:" + "0" * 64, None),
        ("quay.io/operator-framework/olm:v0.46.0@sha256:" + "0" * 64, None),
        (None, None),
    ],
)
def test_image_tag(image, tag):
    assert mf.image_tag(image) == tag


def test_olm_image_prefers_the_named_container():
    assert mf.olm_image([deployment()]) == "quay.io/operator-framework/olm:v0.46.0"
    assert mf.olm_image([deployment(container="other")]) == "x:1"
    assert mf.olm_image([deployment(name="catalog-operator")]) is None


CRD_DOC = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: as.example.com}\n"
DEPLOY_DOC = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: olm-operator, namespace: olm}\n"

BAD_STREAMS = [
    ("not yaml", CRD_DOC, "a: [", "olm.yaml: invalid YAML"),
    ("scalar document", CRD_DOC, DEPLOY_DOC + "---\n42\n", "olm.yaml, document 2: not a mapping"),
    ("no kind", CRD_DOC, "apiVersion: v1\nmetadata: {name: x}\n", "kind is missing"),
    ("no name", CRD_DOC, "apiVersion: v1\nkind: Namespace\nmetadata: {}\n", "metadata.name is missing"),
    ("generateName", CRD_DOC, "apiVersion: v1\nkind: Pod\nmetadata: {name: x, generateName: x-}\n", "generateName"),
    ("no CRDs", "", DEPLOY_DOC, "crds.yaml defines no CustomResourceDefinition"),
    ("no Deployment", CRD_DOC, "apiVersion: v1\nkind: Namespace\nmetadata: {name: olm}\n", "defines no Deployment"),
    ("duplicate", CRD_DOC, DEPLOY_DOC + "---\n" + DEPLOY_DOC, "Deployment olm/olm-operator is defined twice"),
    ("duplicate across files", CRD_DOC, DEPLOY_DOC + "---\n" + CRD_DOC, "defined twice (crds.yaml and olm.yaml)"),
    ("old CRD API", CRD_DOC.replace("/v1", "/v1beta1"), DEPLOY_DOC, "uses apiextensions.k8s.io/v1beta1"),
    ("not UTF-8", CRD_DOC, b"\xff\xfe", "not UTF-8"),
]


@pytest.mark.parametrize("case, crds, olm, fragment", BAD_STREAMS, ids=[row[0] for row in BAD_STREAMS])
def test_bad_manifests(case, crds, olm, fragment):
    with pytest.raises(ManifestError) as err:
        mf.plan_install(crds, olm)
    assert fragment in str(err.value)


@pytest.mark.parametrize("version", ["v0.46.0", "0.28.0", "v1.2.3-rc.1", "v1.2.3+build.5"])
def test_good_versions(version):
    assert mf.check_version(version) == version


@pytest.mark.parametrize("version", ["latest", "v0.46", "v0.46.0/../../x", "v0.46.0?x=1", "", None])
def test_bad_versions(version):
    with pytest.raises(ManifestError):
        mf.check_version(version)


def test_manifest_urls_follow_install_sh():
    assert mf.manifest_urls(mf.DEFAULT_MANIFESTS_URL, "v0.46.0") == {
        "crds.yaml": "https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.46.0/crds.yaml",
        "olm.yaml": "https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.46.0/olm.yaml",
    }
    assert mf.manifest_urls("https://mirror.example.com/olm/", "v0.40.0")["olm.yaml"] == "https://mirror.example.com/olm/v0.40.0/olm.yaml"


@pytest.mark.parametrize(
    "url, ok",
    [
        ("https://github.com/x", True),
        ("HTTPS://mirror.example.com", True),
        ("http://127.0.0.1:8080/olm", True),
        ("http://localhost/olm", True),
        ("http://[::1]:8080/olm", True),
        ("http://mirror.example.com/olm", False),
        ("http://127.0.0.1.evil.example.com/olm", False),
        ("http://user@mirror.example.com/olm", False),
        ("ftp://mirror.example.com/olm", False),
        ("file:///etc/passwd", False),
        ("mirror.example.com/olm", False),
        ("https://[::1/x", False),
    ],
)
def test_check_url(url, ok):
    if ok:
        assert mf.check_url(url) == url
    else:
        with pytest.raises(ManifestError):
            mf.check_url(url)


@pytest.mark.parametrize(
    "url", ["https://bob:s3cret-Pa55@mirror.example.com/olm", "http://bob:s3cret-Pa55@mirror.example.com/olm", "https://token@mirror.example.com/olm"]
)
def test_check_url_refuses_credentials_without_showing_them(url):
    with pytest.raises(ManifestError) as caught:
        mf.check_url(url)
    assert "s3cret" not in str(caught.value) and "carries credentials" in str(caught.value)


def crd(name, manager=None):
    out = {"metadata": {"name": name}}
    if manager:
        out["metadata"]["managedFields"] = [{"manager": manager, "operation": "Apply"}]
    return out


def test_assess_existing(plan):
    names = [mf.object_ref(c).name for c in plan.crds]
    none_crds = dict.fromkeys(names)
    all_crds = {n: crd(n, "kubectl-create") for n in names}
    ours = {n: crd(n, "kubeforge") for n in names}
    no_deps = dict.fromkeys(plan.deployments)
    all_deps = {r: {"metadata": {"name": r.name}} for r in plan.deployments}
    one_dep = {**no_deps, plan.deployments[0]: {"metadata": {}}}

    assert mf.assess_existing(plan, none_crds, no_deps, "kubeforge")[0] == "none"
    assert mf.assess_existing(plan, all_crds, all_deps, "kubeforge")[0] == "installed"
    assert mf.assess_existing(plan, none_crds, all_deps, "kubeforge")[0] == "installed"
    state, message = mf.assess_existing(plan, all_crds, one_dep, "kubeforge")
    assert state == "partial" and "Deployment olm/catalog-operator" in message
    assert mf.assess_existing(plan, ours, no_deps, "kubeforge")[0] == "partial"  # an interrupted run of ours
    state, message = mf.assess_existing(plan, all_crds, no_deps, "kubeforge")
    assert state == "foreign"
    assert "catalogsources.operators.coreos.com" in message and "Deployment olm/olm-operator" in message
    elsewhere = [Ref("apps/v1", "Deployment", "operator-lifecycle-manager", "olm-operator")]
    assert "Deployment operator-lifecycle-manager/olm-operator" in mf.assess_existing(plan, all_crds, no_deps, "kubeforge", elsewhere)[1]


def cond(cond_type, status, reason=None, message=None):
    return {"type": cond_type, "status": status, "reason": reason, "message": message}


def dep(generation=2, observed=2, replicas=1, updated=1, available=1, total=1, conditions=()):
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": observed,
            "updatedReplicas": updated,
            "availableReplicas": available,
            "replicas": total,
            "conditions": list(conditions),
        },
    }


VERDICTS = [
    ("crd absent", mf.crd_verdict, None, "waiting"),
    ("crd new", mf.crd_verdict, {"status": {}}, "waiting"),
    ("crd established", mf.crd_verdict, {"status": {"conditions": [cond("NamesAccepted", "True"), cond("Established", "True")]}}, "ready"),
    ("crd name clash", mf.crd_verdict, {"status": {"conditions": [cond("NamesAccepted", "False", "MultipleNames", "x")]}}, "failed"),
    ("deployment absent", mf.deployment_verdict, None, "waiting"),
    ("deployment rolled out", mf.deployment_verdict, dep(), "ready"),
    ("deployment not observed", mf.deployment_verdict, dep(observed=1), "waiting"),
    ("deployment old replicas left", mf.deployment_verdict, dep(total=2), "waiting"),
    ("deployment not available", mf.deployment_verdict, dep(available=0), "waiting"),
    ("deployment not updated", mf.deployment_verdict, dep(updated=0), "waiting"),
    ("deployment scaled to zero", mf.deployment_verdict, dep(replicas=0, updated=0, available=0, total=0), "ready"),
    ("deployment no status", mf.deployment_verdict, {"metadata": {"generation": 1}, "spec": {}}, "waiting"),
    (
        "deployment deadline",
        mf.deployment_verdict,
        dep(available=0, conditions=[cond("Progressing", "False", "ProgressDeadlineExceeded", "ReplicaSet x has timed out")]),
        "failed",
    ),
    ("csv absent", mf.csv_verdict, None, "waiting"),
    ("csv succeeded", mf.csv_verdict, {"status": {"phase": "Succeeded"}}, "ready"),
    ("csv installing", mf.csv_verdict, {"status": {"phase": "Installing", "reason": "InstallWaiting"}}, "waiting"),
    ("csv failed for good", mf.csv_verdict, {"status": {"phase": "Failed", "reason": "InstallCheckFailed", "message": "install timeout"}}, "failed"),
    ("csv failed, OLM retries", mf.csv_verdict, {"status": {"phase": "Failed", "reason": "RequirementsNotMet"}}, "waiting"),
    ("csv failed (OLM retries)", mf.csv_verdict, {"status": {"phase": "Failed", "reason": "ComponentUnhealthy", "message": "m"}}, "waiting"),
]


@pytest.mark.parametrize("case, verdict, obj, expected", VERDICTS, ids=[row[0] for row in VERDICTS])
def test_verdicts(case, verdict, obj, expected):
    status, message = verdict(obj)
    assert status == expected, message
    kind = {mf.crd_verdict: mf.CRD_KIND, mf.deployment_verdict: "Deployment", mf.csv_verdict: mf.CSV_KIND}[verdict]
    assert mf.settled(kind)(obj) is (expected != "waiting")


def test_waiting_messages_carry_details():
    assert mf.csv_verdict({"status": {"phase": "Failed", "reason": "ComponentUnhealthy", "message": "apiServices not installed"}})[1] == (
        "Failed: ComponentUnhealthy: apiServices not installed"
    )
    assert "0/1 available" in mf.deployment_verdict(dep(available=0))[1]


# ------------------------------------------------------------------------------------------------ plan_steps

CORE_KINDS = frozenset({
    ("v1", "Namespace"),
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("apps/v1", "Deployment"),
})
OLM_KINDS = {
    ("operators.coreos.com/v1", "OperatorGroup"),
    ("operators.coreos.com/v1alpha1", "ClusterServiceVersion"),
    ("operators.coreos.com/v1alpha1", "CatalogSource"),
}


# Every object that lives in OLM's two namespaces, in apply order: what check mode cannot dry-run before they exist.
IN_OLM_NAMESPACES = [
    "ServiceAccount olm/olm-operator-serviceaccount",
    "Deployment olm/olm-operator",
    "Deployment olm/catalog-operator",
    "OperatorGroup operators/global-operators",
    "OperatorGroup olm/olm-operators",
    "ClusterServiceVersion olm/packageserver",
    "CatalogSource olm/operatorhubio-catalog",
]


def steps_of(plan, namespaces=(), served=CORE_KINDS, check_mode=False, wait=False):
    return [(step.action, mf.ref_text(step.ref)) for step in mf.plan_steps(plan, set(namespaces), served, check_mode, wait)]


def objects_by_action(steps):
    out = {}
    for action, ref in steps:
        if not ref.startswith("CustomResourceDefinition "):
            out.setdefault(action, []).append(ref)
    return out


def test_a_real_run_applies_the_crds_waits_for_them_then_applies_everything_in_order(plan):
    steps = steps_of(plan)
    crds = [f"CustomResourceDefinition {mf.object_ref(c).name}" for c in plan.crds]
    assert steps[: 2 * len(crds)] == [(mf.APPLY, c) for c in crds] + [(mf.ESTABLISHED, c) for c in crds]
    assert steps[2 * len(crds) :] == [(mf.APPLY, r) for r in refs(plan.objects)]  # the OLM kinds come with the CRDs


def test_a_real_run_with_wait_rolls_out_the_deployments_then_the_csvs(plan):
    waits = [s for s in steps_of(plan, wait=True) if s[0] in (mf.ROLLOUT, mf.SUCCEEDED)]
    assert waits == [
        (mf.ROLLOUT, "Deployment olm/olm-operator"),
        (mf.ROLLOUT, "Deployment olm/catalog-operator"),
        (mf.SUCCEEDED, "ClusterServiceVersion olm/packageserver"),
    ]


@pytest.mark.parametrize(
    ("case", "namespaces", "served", "predicted"),
    [
        # a fresh cluster: namespaces and cluster-scoped core objects dry-run; what lives in a new namespace and the OLM kinds cannot
        (
            "fresh",
            (),
            CORE_KINDS,
            IN_OLM_NAMESPACES,
        ),
        # OLM's CRDs served, its namespaces there: everything is dry-run by the API server
        ("installed", ("olm", "operators"), CORE_KINDS | OLM_KINDS, []),
        # the CRDs are served but the namespaces are not there yet
        (
            "crds-only",
            (),
            CORE_KINDS | OLM_KINDS,
            IN_OLM_NAMESPACES,
        ),
        # namespaces there, OLM's kinds not served yet: only those are predicted
        (
            "namespaces-only",
            ("olm", "operators"),
            CORE_KINDS,
            [
                "OperatorGroup operators/global-operators",
                "OperatorGroup olm/olm-operators",
                "ClusterServiceVersion olm/packageserver",
                "CatalogSource olm/operatorhubio-catalog",
            ],
        ),
    ],
)
def test_check_mode_dry_runs_what_it_can_and_predicts_the_rest(plan, case, namespaces, served, predicted):
    steps = steps_of(plan, namespaces, served, check_mode=True, wait=True)
    by_action = objects_by_action(steps)
    assert by_action.get(mf.PREDICT, []) == predicted
    assert sorted(by_action[mf.APPLY] + by_action.get(mf.PREDICT, [])) == sorted(refs(plan.objects))  # every object, once
    assert {action for action, _ref in steps} <= {mf.APPLY, mf.PREDICT}  # no waits in check mode
    crds = [(mf.APPLY, f"CustomResourceDefinition {mf.object_ref(c).name}") for c in plan.crds]
    assert [s for s in steps if s[1].startswith("CustomResourceDefinition ")] == crds


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_kind_the_cluster_does_not_serve_is_refused_before_any_step(plan, check_mode):
    served = CORE_KINDS - {("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")}
    message = r"^ClusterRoleBinding olm-operator-binding-olm: the cluster does not serve rbac.authorization.k8s.io/v1 ClusterRoleBinding$"
    with pytest.raises(ManifestError, match=message):
        mf.plan_steps(plan, set(), served, check_mode, True)


def test_crd_kinds_names_each_kinds_crd(plan):
    kinds = mf.crd_kinds(plan.crds)
    assert kinds[("operators.coreos.com", "OperatorGroup")] == "operatorgroups.operators.coreos.com"
    assert len(kinds) == len(plan.crds)
