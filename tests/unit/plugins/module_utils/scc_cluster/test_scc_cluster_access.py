"""scc_cluster/access.py around the pure plan (tests/unit/plugins/module_utils/scc/test_scc_access.py): the warnings
of a cluster that serves the SCC API from a CRD, a plan carried out as dry runs, and a binding raced by another
writer. The cluster behaviour is proven on the testbed (tests/integration/scc)."""

import pytest
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import KubeforgeError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.cluster import Cluster
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.scc import access
from ansible_collections.kubeforge.operators.plugins.module_utils.scc_cluster import access as glue

SCC_CRD_ONLY = {
    ("security.openshift.io/v1", "SecurityContextConstraints"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
}


@pytest.mark.parametrize(
    "state, says, never",
    [
        ("present", "the grant is stored, and takes effect only where an SCC admission webhook enforces SCCs", "taken out"),
        ("absent", "the grant is taken out of RBAC, which changes pod admission only where", "stored"),
    ],
)
def test_a_cluster_with_only_the_scc_crd_is_told_what_the_grant_or_revoke_means(state, says, never):
    """The testbed serves OpenShift's SCC CRD without OpenShift: a revoke must not say the grant is stored."""
    scc = {"apiVersion": "security.openshift.io/v1", "kind": "SecurityContextConstraints", "metadata": {"name": "anyuid"}}
    binding = access.scc_binding("anyuid", "a", [access.service_account_subject("a", "x")])
    binding["metadata"]["resourceVersion"] = "7"
    client = FakeDynamicClient({"SecurityContextConstraints": [scc], "APIService": [], "ClusterRole": [access.scc_cluster_role("anyuid")],
                                "RoleBinding": [binding] if state == "absent" else []}, served=SCC_CRD_ONLY, dry_run=True)
    params = {"scc": "anyuid", "service_accounts": ["a/y"], "state": state, "fallback": "none", "remove_from_scc_lists": False}
    result = glue.apply(Cluster(client), params, check_mode=True)
    (warning,) = [w for w in result["warnings"] if "served by a CRD" in w]
    assert says in warning and never not in warning, warning
    assert warning == access.crd_only_warning("grant", state)


@pytest.fixture(name="no_pause")
def fixture_no_pause(monkeypatch):
    monkeypatch.setattr(glue, "BINDING_REFUSAL_PAUSE", 0)


class RacedBindings:
    """The ``Cluster`` calls of the binding step: before each of the first writes, ``race`` (a list of callables)
    changes the stored binding, as another writer would; writes carry the resourceVersion they were decided on."""

    def __init__(self, binding, race):
        self.binding, self.race, self.writes = binding, list(race), []

    def get(self, kind, name, namespace, api_version=None):
        return self.binding

    def _check(self, version, verb):
        self.writes.append(verb)
        if self.race:
            self.race.pop(0)(self)
        if self.binding is None:
            raise K8sError("not found", status=404)
        if version is not None and version != self.binding["metadata"]["resourceVersion"]:
            raise K8sError("the object has been modified", status=409)

    def patch(self, kind, name, body, namespace, api_version=None):
        self._check(body["metadata"]["resourceVersion"], "patch")
        self.binding = dict(self.binding, subjects=body["subjects"])

    def delete(self, kind, name, namespace, api_version=None, resource_version=None):
        self._check(resource_version, "delete")
        self.binding = None

    def create(self, definition):
        self.writes.append("create")
        self.binding = dict(definition, metadata=dict(definition["metadata"], resourceVersion="1"))


def bound(*subjects, version="7"):
    binding = access.scc_binding("anyuid", "myns", list(subjects))
    binding["metadata"]["resourceVersion"] = version
    return binding


SA = access.service_account_subject("myns", "a")
OTHER = access.service_account_subject("myns", "b")


def test_a_subject_added_meanwhile_is_kept_when_the_revoke_reads_again(no_pause):
    def add_other(fake):
        fake.binding = bound(SA, OTHER, version="8")

    fake = RacedBindings(bound(SA), [add_other])
    before, after, edited = glue._edit_binding(fake, "RoleBinding", "anyuid", "myns", [SA], "absent")
    assert fake.writes == ["delete", "patch"]  # the delete of version 7 conflicted; decided again on version 8
    assert fake.binding["subjects"] == [OTHER] and after["subjects"] == [OTHER] and before["metadata"]["resourceVersion"] == "8"
    assert edited is True


def test_a_binding_deleted_meanwhile_is_created_again_by_the_grant(no_pause):
    def delete(fake):
        fake.binding = None

    fake = RacedBindings(bound(OTHER), [delete])
    _before, after, edited = glue._edit_binding(fake, "RoleBinding", "anyuid", "myns", [SA], "present")
    assert fake.writes == ["patch", "create"] and after["subjects"] == [SA] and edited is True


def test_a_binding_that_keeps_changing_fails_naming_it(no_pause):
    def bump(fake):
        version = str(int(fake.binding["metadata"]["resourceVersion"]) + 1)
        fake.binding = bound(*fake.binding["subjects"], version=version)

    fake = RacedBindings(bound(OTHER), [bump] * 10)
    with pytest.raises(KubeforgeError, match=r"^RoleBinding myns/system:openshift:scc:anyuid kept changing while we tried to write it"):
        glue._edit_binding(fake, "RoleBinding", "anyuid", "myns", [SA], "present")
