"""olm/catalog_source.py: the CatalogSource definition, Go durations, field pruning and OLM's health verdict."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import catalog_source as cs
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.catalog_source import CatalogSourceError


def obj(spec=None, status=None):
    out = {"apiVersion": cs.API_VERSION, "kind": cs.KIND, "metadata": {"name": "c", "namespace": "olm"}, "spec": spec or {}}
    if status is not None:
        out["status"] = status
    return out


def conn(state, address="127.0.0.1:50051", **extra):
    return dict({"connectionState": {"address": address, "lastObservedState": state, "lastConnect": "2026-11-23T15:15:17Z"}}, **extra)


ADDR = {"sourceType": "grpc", "address": "127.0.0.1:50051"}
IMAGE = {"sourceType": "grpc", "image": "quay.io/example/catalog:v1"}

# (case, object, expected verdict, a substring the message must contain)
VERDICTS = [
    ("absent", None, "waiting", "does not exist"),
    ("created, no status yet", obj(ADDR), "waiting", "no status yet"),
    ("ready", obj(ADDR, conn("READY")), "ready", "READY"),
    ("idle first", obj(ADDR, conn("IDLE")), "waiting", "IDLE"),
    ("connecting", obj(ADDR, conn("CONNECTING")), "waiting", "CONNECTING"),
    ("nothing listens", obj(ADDR, conn("TRANSIENT_FAILURE")), "failed", "127.0.0.1:50051"),
    ("shutdown", obj(ADDR, conn("SHUTDOWN")), "waiting", "SHUTDOWN"),
    # the status still describes the previous address: not a verdict on the new one (either way)
    ("stale ready of the old address", obj(ADDR, conn("READY", address="127.0.0.1:1")), "waiting", "not connected to 127.0.0.1:50051"),
    ("stale failure of the old address", obj(ADDR, conn("TRANSIENT_FAILURE", address="127.0.0.1:1")), "waiting", "127.0.0.1:1"),
    (
        "invalid address",
        obj(dict(ADDR, address="a:b:c"), {"reason": "RegistryServerError", "message": "couldn't connect to registry - bad target"}),
        "failed",
        "couldn't connect to registry",
    ),
    ("invalid spec", obj({"sourceType": "grpc"}, {"reason": "SpecInvalidError", "message": "image and address unset"}), "failed", "SpecInvalidError"),
    ("bad poll interval", obj(IMAGE, {"reason": "InvalidIntervalError", "message": "bad interval"}), "failed", "bad interval"),
    ("configmap error", obj({"sourceType": "configmap"}, {"reason": "ConfigMapError", "message": "no cm"}), "failed", "ConfigMapError"),
    # image catalogs: OLM recreates the registry pod and retries, so these only time out
    ("image registry pod failing", obj(IMAGE, {"reason": "RegistryServerError", "message": "couldn't ensure registry server"}), "waiting", "couldn't ensure"),
    ("image transient failure", obj(IMAGE, conn("TRANSIENT_FAILURE", address="c.olm.svc:50051")), "waiting", "TRANSIENT_FAILURE"),
    # ... except a registry pod the API server refuses: no retry makes it admissible
    (
        "image registry pod refused",
        obj(
            IMAGE,
            {
                "reason": "RegistryServerError",
                "message": 'couldn\'t ensure registry server - error ensuring pod: : error creating new pod: cat-: pods "cat-x" is forbidden: '
                'violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false',
            },
        ),
        "failed",
        "is forbidden",
    ),
    ("image ready (service address)", obj(IMAGE, conn("READY", address="c.olm.svc:50051")), "ready", "c.olm.svc:50051"),
    ("image and address: address ignored by OLM", obj(dict(IMAGE, address="1.2.3.4:5"), conn("READY", address="c.olm.svc:50051")), "ready", "READY"),
]


@pytest.mark.parametrize("case, catsrc, expected, fragment", VERDICTS, ids=[row[0] for row in VERDICTS])
def test_verdict(case, catsrc, expected, fragment):
    status, message = cs.catalog_source_verdict(catsrc)
    assert status == expected, message
    assert fragment in message
    assert cs.settled(catsrc) is (expected != "waiting")


def test_failure_message_names_state_address_and_olm_message():
    catsrc = obj(ADDR, conn("TRANSIENT_FAILURE", reason="RegistryServerError", message="dial tcp: connection refused"))
    status, message = cs.catalog_source_verdict(catsrc)
    assert status == "failed"
    for fragment in ("RegistryServerError", "TRANSIENT_FAILURE", "127.0.0.1:50051", "connection refused"):
        assert fragment in message


def test_connection_state():
    assert cs.connection_state(obj(ADDR, conn("READY"))) == "READY"
    assert cs.connection_state(obj(ADDR)) is None
    assert cs.connection_state(None) is None


DEFINITIONS = [
    (dict(address="127.0.0.1:50051"), {"sourceType": "grpc", "address": "127.0.0.1:50051"}),
    (
        dict(address="[::1]:50051", display_name="D", publisher="P", priority=-5),
        {"sourceType": "grpc", "address": "[::1]:50051", "displayName": "D", "publisher": "P", "priority": -5},
    ),
    (dict(address="dns:///registry.example.com:50051"), {"sourceType": "grpc", "address": "dns:///registry.example.com:50051"}),
    (dict(address="registry.example.com:50051", priority=0), {"sourceType": "grpc", "address": "registry.example.com:50051", "priority": 0}),
    (
        dict(image="quay.io/x/cat:v1", update_interval="1h30m", grpc_pod_config={"securityContextConfig": "restricted"}),
        {
            "sourceType": "grpc",
            "image": "quay.io/x/cat:v1",
            "updateStrategy": {"registryPoll": {"interval": "1h30m"}},
            "grpcPodConfig": {"securityContextConfig": "restricted"},
        },
    ),
]


@pytest.mark.parametrize("kwargs, spec", DEFINITIONS)
def test_definition(kwargs, spec):
    definition = cs.catalog_source_definition("my-catalog", "olm", **kwargs)
    assert definition == {"apiVersion": cs.API_VERSION, "kind": "CatalogSource", "metadata": {"name": "my-catalog", "namespace": "olm"}, "spec": spec}


BAD_DEFINITIONS = [
    (dict(), "exactly one of address and image"),
    (dict(address="127.0.0.1:1", image="quay.io/x/c:v1"), "exactly one of address and image"),
    (dict(address="127.0.0.1"), "host:port"),
    (dict(address="127.0.0.1:0"), "host:port"),
    (dict(address="127.0.0.1:70000"), "host:port"),
    (dict(address=" 127.0.0.1:1"), "whitespace"),
    (dict(address="127.0.0.1:1", update_interval="10m"), "update_interval is only valid with image"),
    (dict(address="127.0.0.1:1", grpc_pod_config={"nodeSelector": {}}), "grpc_pod_config is only valid with image"),
    (dict(address="127.0.0.1:1", pull_secrets=["creds"]), "pull_secrets is only valid with image"),
    (dict(image="r.example/c:v1", pull_secrets=["Not A Name"]), "is not a valid Secret name"),
    (dict(image="quay.io/x/c:v1", update_interval="10 minutes"), "Go duration"),
    (dict(image="quay.io/x/c:v1", update_interval="0s"), "not positive"),
    (dict(image="quay.io/x c:v1"), "whitespace"),
    (dict(image="quay.io/x/c:v1", priority=True), "priority must be an integer"),
]


@pytest.mark.parametrize("kwargs, fragment", BAD_DEFINITIONS)
def test_bad_definition(kwargs, fragment):
    with pytest.raises(CatalogSourceError) as err:
        cs.catalog_source_definition("c", "olm", **kwargs)
    assert fragment in str(err.value)


@pytest.mark.parametrize("name, namespace", [("My_Catalog", "olm"), ("c", "Bad Namespace"), ("", "olm"), ("c", None)])
def test_bad_names(name, namespace):
    with pytest.raises(CatalogSourceError, match="not a valid Kubernetes object name"):
        cs.catalog_source_definition(name, namespace, address="127.0.0.1:1")


# Go's time.ParseDuration accepts these (and rejects the ones below).
DURATIONS = [("10m", 600), ("1h30m", 5400), ("45s", 45), ("1.5h", 5400), ("300ms", 0.3), ("2h0m0s", 7200), (".5s", 0.5), ("1\u00b5s", 1e-6)]


@pytest.mark.parametrize("text, seconds", DURATIONS)
def test_go_duration(text, seconds):
    assert cs.parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "10", "m", "10 m", "-10m", "10d", "1h-5m", "0m", None])
def test_bad_go_duration(text):
    with pytest.raises(ValueError):
        cs.parse_go_duration(text)


def test_pruned_fields():
    requested = {"sourceType": "grpc", "image": "x", "grpcPodConfig": {"nodeSelector": {"a": "b"}, "securityContextConfg": "restricted"}}
    stored = {"sourceType": "grpc", "image": "x", "grpcPodConfig": {"nodeSelector": {"a": "b"}}}
    assert cs.pruned_fields(requested, stored) == ["spec.grpcPodConfig.securityContextConfg"]
    assert cs.pruned_fields(requested, {"sourceType": "grpc", "image": "x"}) == ["spec.grpcPodConfig"]
    assert cs.pruned_fields(requested, requested) == []
    assert cs.pruned_fields(requested, None) == ["spec.sourceType", "spec.image", "spec.grpcPodConfig"]


def _registry_pod(state, restarts=0, last_state=None):
    status = {"name": "registry-server", "restartCount": restarts, "state": state}
    if last_state:
        status["lastState"] = last_state
    return {"metadata": {"name": "images-98m55", "labels": {"olm.catalogSource": "images"}}, "status": {"containerStatuses": [status]}}


# Registry pods as the testbed's real kubelet reported them.
NO_ENTRYPOINT = _registry_pod(
    {"waiting": {"reason": "CreateContainerError", "message": 'failed to generate container "f" spec: failed to generate spec: no command specified'}}
)
OPM_FATAL = 'level=fatal msg="integrity check failed: read existing cache digest: open /tmp/cache/pogreb.v1/digest: no such file or directory"'
CRASHING = _registry_pod({"terminated": {"exitCode": 1, "reason": "Error", "message": OPM_FATAL}}, restarts=4)
PULLING = _registry_pod({"waiting": {"reason": "ErrImagePull", "message": "not found"}})
SERVING = _registry_pod({"running": {}})


@pytest.mark.parametrize(
    "pods, reason, fragments",
    [
        ([NO_ENTRYPOINT], "CreateContainerError", ["no command specified", "grpc_pod_config.extractContent", "{catalogDir: /configs}"]),
        ([SERVING, CRASHING], "CrashLoopBackOff", ["exited with code 1 (Error)", "its last output: " + OPM_FATAL]),
        ([PULLING], None, []),
        ([SERVING], None, []),
        ([], None, []),
    ],
    ids=["scratch image without extractContent", "opm exits at start", "first pull failure is retried", "serving", "no pod yet"],
)
def test_a_registry_pod_that_cannot_serve_is_named_with_its_reason(pods, reason, fragments):
    problem = cs.registry_pod_problem(pods)
    if reason is None:
        assert problem is None
        return
    assert problem[0] == reason
    for fragment in fragments:
        assert fragment in problem[1]
    assert "extractContent" not in problem[1] or reason == "CreateContainerError"


def test_an_unschedulable_registry_pod_is_named_not_failed_on():
    pending = {
        "metadata": {"name": "cat-x"},
        "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes match"}]},
    }
    assert cs.registry_pod_unscheduled([pending]) == "registry pod cat-x is not scheduled (Unschedulable): 0/3 nodes match"
    assert cs.registry_pod_problem([pending]) is None  # a node may free up: the timeout names it instead
    assert cs.registry_pod_unscheduled([]) is None


def test_pull_secrets_become_spec_secrets():
    definition = cs.catalog_source_definition("c", "ns", image="r.example/c:v1", pull_secrets=["creds", "more"])
    assert definition["spec"]["secrets"] == ["creds", "more"]
