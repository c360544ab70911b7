"""The kubeforge-operator's files agree with each other and with the roles they drive (pure checks of operator/)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
OPERATOR = ROOT / "operator"
WATCHES = yaml.safe_load((OPERATOR / "watches.yaml").read_text())
CRDS = {doc["spec"]["names"]["kind"]: doc for doc in (yaml.safe_load(p.read_text()) for p in (OPERATOR / "config" / "crd").glob("*.yaml"))}
COLLECTION_PREFIX = "kubeforge.operators."
# A var read from one place with a fallback: `"{{ <source> | default(<literal>) }}"`.
DEFAULTED = re.compile(r"^\{\{ (?P<source>[^|]+?) \| default\((?P<default>[^)]*)\) \}\}$")


def spec_fields(watch):
    version = next(v for v in CRDS[watch["kind"]]["spec"]["versions"] if v["name"] == watch["version"])
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


def role_spec(role):
    name = role[len(COLLECTION_PREFIX) :]
    spec = yaml.safe_load((ROOT / "roles" / name / "meta" / "argument_specs.yml").read_text())
    return spec["argument_specs"]["main"]["options"]


def spec_key(kind):
    group = WATCHES[0]["group"].replace(".", "_").replace("-", "_")
    return f"_{group}_{kind.lower()}"


@pytest.mark.parametrize("watch", WATCHES, ids=[w["kind"] for w in WATCHES])
def test_watch_names_a_role_of_the_collection_and_a_crd(watch):
    assert watch["role"].startswith(COLLECTION_PREFIX) and (ROOT / "roles" / watch["role"][len(COLLECTION_PREFIX) :]).is_dir()
    crd = CRDS[watch["kind"]]
    assert crd["spec"]["group"] == watch["group"] and watch["version"] in [v["name"] for v in crd["spec"]["versions"]]
    assert watch["markUnsafe"] is True, "spec values are data: never templated"
    assert watch["manageStatus"] is False, "the roles write the status"
    version = next(v for v in crd["spec"]["versions"] if v["name"] == watch["version"])
    assert "status" in version["subresources"]


@pytest.mark.parametrize("watch", WATCHES, ids=[w["kind"] for w in WATCHES])
def test_vars_are_role_options_with_the_role_defaults(watch):
    options = role_spec(watch["role"])
    variables = dict(watch.get("vars") or {})
    variables.update((watch.get("finalizer") or {}).get("vars") or {})
    for name, value in variables.items():
        assert name in options, f"{name} is not an option of {watch['role']}"
        match = DEFAULTED.match(value) if isinstance(value, str) else None
        if match and match.group("default") != "None":
            literal = yaml.safe_load(match.group("default").replace("'", '"'))
            # A spec field with a CRD default has that default (the API server sets it); others the role's.
            field = match.group("source").rpartition("_spec.")[2] if "_spec." in match.group("source") else None
            crd_default = spec_fields(watch).get(field, {}).get("default") if field else None
            expected = crd_default if crd_default is not None else options[name].get("default")
            assert literal == expected, f"{name}: default({literal!r}) differs from {expected!r}"


@pytest.mark.parametrize("watch", WATCHES, ids=[w["kind"] for w in WATCHES])
def test_every_spec_field_reaches_the_role(watch):
    """Each field of the CRD's spec is read by a var (raw spec or its snake_cased variable)."""
    fields = spec_fields(watch)
    text = yaml.safe_dump(watch)
    raw = spec_key(watch["kind"]) + "_spec."
    for field in fields:
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", field).lower()
        assert raw + field in text or re.search(rf"\{{\{{ \(*{snake} \|", text), f"spec.{field} of {watch['kind']} is not passed to the role"


@pytest.mark.parametrize("watch", WATCHES, ids=[w["kind"] for w in WATCHES])
def test_status_resource_is_the_whole_object(watch):
    key = next(k for k in watch["vars"] if k.endswith("_status_resource"))
    assert watch["vars"][key] == "{{ " + spec_key(watch["kind"]) + " }}"


def test_finalizers_undo_what_the_role_does():
    finals = {w["kind"]: w.get("finalizer") for w in WATCHES}
    assert finals["OperatorInstall"]["vars"] == {"olm_operator_state": "absent"}
    assert finals["SCCGrant"]["vars"]["scc_relax_state"] == "absent"
    assert finals["CanaryRollout"] is None, "a rollout has nothing to undo on deletion"


def rbac_documents():
    return [yaml.safe_load(p.read_text()) for p in (OPERATOR / "config" / "rbac").glob("*.yaml")]


@pytest.mark.parametrize("doc", rbac_documents(), ids=lambda d: d["metadata"]["name"])
def test_rbac_has_no_wildcards(doc):
    for rule in doc["rules"]:
        for key in ("apiGroups", "resources", "verbs", "resourceNames"):
            assert "*" not in rule.get(key, []), f"{doc['metadata']['name']}: wildcard in {key}: {rule}"
        assert not {"escalate", "bind", "impersonate"} & set(rule["verbs"]), rule


def test_operator_role_cannot_touch_secrets_or_crds():
    role = yaml.safe_load((OPERATOR / "config" / "rbac" / "role.yaml").read_text())
    resources = {r for rule in role["rules"] for r in rule["resources"]}
    assert not resources & {"secrets", "customresourcedefinitions", "configmaps", "serviceaccounts/token"}


def test_bundle_is_generated_from_config():
    proc = subprocess.run([sys.executable, str(OPERATOR / "hack" / "generate_bundle.py"), "--check"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_bundle_csv_owns_the_crds_and_grants_the_role():
    csv = yaml.safe_load((OPERATOR / "bundle" / "manifests" / "kubeforge-operator.clusterserviceversion.yaml").read_text())
    owned = {o["kind"]: o["name"] for o in csv["spec"]["customresourcedefinitions"]["owned"]}
    assert owned == {kind: crd["metadata"]["name"] for kind, crd in CRDS.items()}
    role = yaml.safe_load((OPERATOR / "config" / "rbac" / "role.yaml").read_text())
    assert csv["spec"]["install"]["spec"]["clusterPermissions"][0]["rules"] == role["rules"]
    modes = {m["type"]: m["supported"] for m in csv["spec"]["installModes"]}
    assert modes["AllNamespaces"] and modes["OwnNamespace"]
