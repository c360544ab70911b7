"""k8s.cluster: the plumbing every cluster layer shares (apply as the collection's field manager, the Cluster facade,
diff views, guarded writes retried on conflict and across an API server restart)."""

import pytest
from kubernetes.client.rest import ApiException
from lib.fakes import DiscoveredResource, FakeDynamicClient, api_exception
from urllib3.exceptions import MaxRetryError, NewConnectionError

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import cluster as k8s_cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import observe as kf_observe
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError


class Clock:
    def __init__(self):
        self.now = 0.0
        self.sleeps = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        self.now += seconds


class Attempts:
    """An attempt that raises ``failures`` in order, then returns ``done``."""

    def __init__(self, failures, done="written"):
        self.failures = list(failures)
        self.done = done
        self.calls = 0

    def __call__(self):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return self.done


class WidgetError(KubeforgeError):
    pass


def refused():
    return MaxRetryError(None, "/apis", reason=NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused"))


def guarded(attempt, clock=None):
    clock = clock or Clock()
    return k8s_cluster.retry_guarded(attempt, "Widget ns/w", error=WidgetError, clock=clock, sleep=clock.sleep)


@pytest.mark.parametrize(
    ("case", "failures"),
    [
        ("no refusal", []),
        ("resourceVersion conflict", [api_exception(409, "the object has been modified")]),
        ("JSON patch test failed", [api_exception(422, "test operation failed")]),
        ("our own guard", [k8s_cluster.GuardFailed()]),
        ("wrapped conflict", [K8sError("Failed to patch Widget w: conflict", status=409)]),
        ("four refusals", [api_exception(409, "modified")] * 4),
    ],
)
def test_a_refused_guard_reads_and_decides_again(case, failures):
    attempt = Attempts(failures)
    assert guarded(attempt) == "written", case
    assert attempt.calls == len(failures) + 1


def test_a_guard_refused_guard_retries_times_gives_up_naming_the_object():
    attempt = Attempts([api_exception(409, "modified")] * k8s_cluster.GUARD_RETRIES)
    with pytest.raises(WidgetError, match=r"^Widget ns/w kept changing while we tried to write it \(5 attempts\)$"):
        guarded(attempt)
    assert attempt.calls == k8s_cluster.GUARD_RETRIES


def test_guards_name_the_statuses_that_mean_the_object_changed():
    attempt = Attempts([api_exception(422, "field is immutable")])
    with pytest.raises(ApiException):
        k8s_cluster.retry_guarded(attempt, "Widget ns/w", guards=(k8s_cluster.HTTP_CONFLICT,))
    assert attempt.calls == 1
    again = Attempts([k8s_cluster.GuardFailed(), api_exception(409, "modified")])
    assert k8s_cluster.retry_guarded(again, "Widget ns/w", guards=(k8s_cluster.HTTP_CONFLICT,)) == "written" and again.calls == 3


def test_a_refusal_pause_grows_with_the_refusals_so_far():
    clock = Clock()
    attempt = Attempts([api_exception(409, "modified")] * 3)
    assert k8s_cluster.retry_guarded(attempt, "Widget ns/w", refusal_pause=0.2, clock=clock, sleep=clock.sleep) == "written"
    assert clock.sleeps == pytest.approx([0.2, 0.4, 0.6])


@pytest.mark.parametrize("failure", [refused(), ApiException(status=503, reason="Service Unavailable"), ApiException(status=429, reason="Too Many Requests")])
def test_an_api_server_restart_is_waited_out_with_growing_pauses(failure):
    clock = Clock()
    attempt = Attempts([failure] * 6)
    assert guarded(attempt, clock) == "written"
    assert clock.sleeps == [kf_observe.retry_pause(n) for n in range(1, 7)]


def test_an_api_server_away_for_transient_seconds_fails_with_its_error():
    clock = Clock()
    attempt = Attempts([refused()] * 1000)
    with pytest.raises(MaxRetryError):
        guarded(attempt, clock)
    assert kf_observe.TRANSIENT_SECONDS <= clock.now < kf_observe.TRANSIENT_SECONDS + kf_observe.RETRY_PAUSE_MAX


def test_without_riding_out_restarts_a_refused_request_fails_at_once():
    attempt = Attempts([refused()])
    with pytest.raises(MaxRetryError):
        k8s_cluster.retry_guarded(attempt, "Widget ns/w", ride_out_restarts=False)
    assert attempt.calls == 1


@pytest.mark.parametrize("failure", [api_exception(403, "forbidden"), api_exception(404, "not found"), WidgetError("bad spec"), ValueError("a bug")])
def test_other_errors_are_raised_at_once(failure):
    attempt = Attempts([failure])
    with pytest.raises(type(failure)):
        guarded(attempt)
    assert attempt.calls == 1


def test_the_cluster_facade_looks_each_resource_up_once_with_its_default_api_version():
    class OlmCluster(k8s_cluster.Cluster):
        default_api_version = "operators.coreos.com/v1alpha1"

    client = FakeDynamicClient(served=[("operators.coreos.com/v1alpha1", "Subscription"), ("v1", "Namespace")])
    cluster = OlmCluster(client)
    first = cluster.resource("Subscription")
    assert cluster.resource("Subscription", "operators.coreos.com/v1alpha1") is first
    assert cluster.resource("Namespace", "v1") is not first
    assert k8s_cluster.Cluster(client).default_api_version == "v1"


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (None, {"kind": "X", "metadata": {"name": "a", "managedFields": [{}], "uid": "1"}}, {"before": {}, "after": {"kind": "X", "metadata": {"name": "a"}}}),
        ({"kind": "X", "metadata": {"name": "a", "resourceVersion": "4"}}, None, {"before": {"kind": "X", "metadata": {"name": "a"}}, "after": {}}),
    ],
)
def test_diff_view_drops_server_managed_fields_and_shows_absence_as_empty(before, after, expected):
    assert k8s_cluster.diff_view(before, after) == expected
    keyed = k8s_cluster.diff_view(before, after, key="binding")
    assert keyed == {"before": {"binding": expected["before"]}, "after": {"binding": expected["after"]}}


def test_apply_owned_names_the_object_and_the_way_out_of_a_field_manager_conflict(monkeypatch):
    def apply_object(client, resource, definition, field_manager, force_conflicts=False):
        assert field_manager == k8s_cluster.FIELD_MANAGER == "kubeforge"
        raise K8sError('Apply failed with 1 conflict: conflict with "kubectl": .spec.image', status=409)

    monkeypatch.setattr(k8s_cluster, "apply_object", apply_object)
    with pytest.raises(K8sError, match=r"conflict with \"kubectl\".*fields of CatalogSource olm/x; .*force_conflicts=true") as failure:
        k8s_cluster.apply_owned("client", "resource", {"kind": "CatalogSource"}, False, "CatalogSource olm/x")
    assert failure.value.status == 409


def apiservice(name, service):
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {"service": service, "group": name.split(".", 1)[1]},
    }


OPENSHIFT = [
    ("vanilla: no such APIServices", [], None),
    ("OpenShift", [apiservice("v1.project.openshift.io", {"namespace": "openshift-apiserver", "name": "api", "port": 443})], "openshift-apiserver/api"),
    ("route API only", [apiservice("v1.route.openshift.io", {"namespace": "openshift-apiserver", "name": "api"})], "v1.route.openshift.io"),
    ("CRD-backed group (local APIService)", [apiservice("v1.project.openshift.io", None)], None),
    ("CRD-backed, both groups", [apiservice("v1.project.openshift.io", None), apiservice("v1.route.openshift.io", None)], None),
    ("another aggregated API", [apiservice("v1.metrics.k8s.io", {"namespace": "kube-system", "name": "metrics-server"})], None),
    ("garbage", [None, "x", {"metadata": None}], None),
]


@pytest.mark.parametrize("case, services, fragment", OPENSHIFT, ids=[row[0] for row in OPENSHIFT])
def test_openshift_evidence(case, services, fragment):
    evidence = k8s_cluster.openshift_evidence(services)
    if fragment is None:
        assert evidence is None
    else:
        assert fragment in evidence


APISERVICES = DiscoveredResource(k8s_cluster.APISERVICE_KIND, k8s_cluster.APISERVICE_API_VERSION)


def test_detect_openshift_reads_the_two_apiservices():
    openshift = FakeDynamicClient({"APIService": [apiservice("v1.route.openshift.io", {"namespace": "openshift-apiserver", "name": "api"})]})
    assert "openshift-apiserver/api" in k8s_cluster.detect_openshift(openshift, resource=APISERVICES)
    assert [name for _kind, _verb, name, _field_selector in openshift.requests] == list(k8s_cluster.OPENSHIFT_APISERVICES)
    crds_only = FakeDynamicClient({"APIService": [apiservice("v1.project.openshift.io", None)]})
    assert k8s_cluster.detect_openshift(crds_only, resource=APISERVICES) is None
    assert k8s_cluster.detect_openshift(FakeDynamicClient({"APIService": []}), resource=APISERVICES) is None
