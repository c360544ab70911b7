"""Auth resolution (params, K8S_AUTH_* env, kubeconfig contexts), server-side dry run and discovery refresh."""

from unittest import mock

import pytest
from ansible_collections.kubernetes.core.plugins.module_utils.k8s import client as core_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import K8SClient
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import UnauthorizedError
from lib.fakes import FakeDynamicClient

from ansible_collections.kubeforge.operators.plugins.module_utils.k8s import client as kf_client
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kubeforge.operators.plugins.module_utils.k8s.observe import transient_error


def test_kubeconfig_from_env_uses_current_context(monkeypatch, kubeconfig_file, fake_module):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", kubeconfig_file)
    configuration, headers = kf_client.build_configuration(fake_module())
    assert configuration.host == "https://127.0.0.1:6443"
    assert "Bearer alpha-token" in configuration.api_key.values()
    assert headers == {}


def test_context_from_env_selects_cluster(monkeypatch, kubeconfig_file, fake_module):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", kubeconfig_file)
    monkeypatch.setenv("K8S_AUTH_CONTEXT", "beta")
    configuration, _headers = kf_client.build_configuration(fake_module())
    assert configuration.host == "https://127.0.0.2:7443"
    assert "Bearer beta-token" in configuration.api_key.values()


def test_params_win_over_env(monkeypatch, kubeconfig_file, fake_module, tmp_path):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", str(tmp_path / "does-not-exist"))
    monkeypatch.setenv("K8S_AUTH_CONTEXT", "alpha")
    module = fake_module({"kubeconfig": kubeconfig_file, "context": "beta"})
    configuration, _headers = kf_client.build_configuration(module)
    assert configuration.host == "https://127.0.0.2:7443"


def test_kubeconfig_as_dict(kubeconfig_file, fake_module):
    import yaml

    with open(kubeconfig_file) as handle:
        config = yaml.safe_load(handle)
    configuration, _headers = kf_client.build_configuration(fake_module({"kubeconfig": config, "context": "beta"}))
    assert configuration.host == "https://127.0.0.2:7443"


def test_host_and_token_from_env_skip_kubeconfig(monkeypatch, fake_module):
    # AWX's bearer token credential: host + token (+ CA, verify flag) only, no kubeconfig anywhere.
    monkeypatch.setenv("KUBECONFIG", "/nonexistent/kubeconfig")
    monkeypatch.setenv("K8S_AUTH_HOST", "https://api.example.test:6443/")
    monkeypatch.setenv("K8S_AUTH_API_KEY", "sha256~secret")
    monkeypatch.setenv("K8S_AUTH_VERIFY_SSL", "no")
    configuration, _headers = kf_client.build_configuration(fake_module())
    assert configuration.host == "https://api.example.test:6443"
    assert configuration.api_key == {"authorization": "Bearer sha256~secret"}
    assert configuration.verify_ssl is False


@pytest.mark.parametrize("value,expected", [("true", True), ("1", True), ("yes", True), ("false", False), ("0", False)])
def test_validate_certs_env_alias_names(monkeypatch, fake_module, value, expected):
    monkeypatch.setenv("K8S_AUTH_HOST", "https://127.0.0.1:6443")
    monkeypatch.setenv("K8S_AUTH_API_KEY", "t")
    monkeypatch.setenv("K8S_AUTH_VALIDATE_CERTS", value)
    configuration, _headers = kf_client.build_configuration(fake_module())
    assert configuration.verify_ssl is expected


def test_impersonation_from_env_and_params(monkeypatch, kubeconfig_file, fake_module):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", kubeconfig_file)
    monkeypatch.setenv("K8S_AUTH_IMPERSONATE_USER", "system:admin")
    monkeypatch.setenv("K8S_AUTH_IMPERSONATE_GROUPS", "g1,,g2")
    _configuration, headers = kf_client.build_configuration(fake_module())
    assert headers == {"Impersonate-User": "system:admin", "Impersonate-Group": ["g1", "g2"]}
    _configuration, headers = kf_client.build_configuration(fake_module({"impersonate_user": "bob"}))
    assert headers["Impersonate-User"] == "bob"


def test_proxy_and_no_proxy_from_env(monkeypatch, kubeconfig_file, fake_module):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", kubeconfig_file)
    monkeypatch.setenv("K8S_AUTH_PROXY", "http://proxy.test:3128")
    monkeypatch.setenv("K8S_AUTH_NO_PROXY", "127.0.0.1,localhost")
    configuration, _headers = kf_client.build_configuration(fake_module())
    assert configuration.proxy == "http://proxy.test:3128"
    assert configuration.no_proxy == "127.0.0.1,localhost"


def test_unknown_context_is_a_kubeforge_error(kubeconfig_file, fake_module):
    with pytest.raises(K8sError, match="configuration"):
        kf_client.build_configuration(fake_module({"kubeconfig": kubeconfig_file, "context": "nope"}))


@pytest.mark.parametrize("dry_run,expected", [(True, {"a": 1, "dry_run": "All"}), (False, {"a": 1})])
def test_dry_run_params_is_pure(dry_run, expected):
    params = {"a": 1}
    assert kf_client.dry_run_params(dry_run, params) == expected
    assert params == {"a": 1}


@pytest.mark.parametrize("check_mode", [True, False])
def test_get_client_enables_server_side_dry_run_in_check_mode(monkeypatch, kubeconfig_file, fake_module, check_mode):
    dynamic = mock.Mock(name="dynamic-client")
    monkeypatch.setattr(core_client, "create_api_client", lambda configuration, **headers: dynamic)
    client = kf_client.get_client(fake_module({"kubeconfig": kubeconfig_file}, check_mode=check_mode))
    assert isinstance(client, K8SClient)
    assert client.client is dynamic
    assert kf_client.is_dry_run(client) is check_mode
    assert kf_client.dynamic_client(client) is dynamic

    resource = mock.Mock(name="resource")
    client.create(resource, {"metadata": {"name": "x"}}, namespace="ns")
    client.patch(resource, {"spec": {}}, name="x", namespace="ns")
    client.delete(resource, name="x", namespace="ns")
    client.get(resource, name="x", namespace="ns")
    for call in (resource.create, resource.patch, resource.delete):
        kwargs = call.call_args.kwargs
        assert (kwargs.get("dry_run") == "All") is check_mode
    assert "dry_run" not in resource.get.call_args.kwargs


def test_get_client_wraps_config_errors(fake_module, tmp_path):
    with pytest.raises(K8sError):
        kf_client.get_client(fake_module({"kubeconfig": str(tmp_path / "missing")}))


def test_get_client_keeps_the_api_servers_reason_of_a_rejected_discovery(monkeypatch, kubeconfig_file, fake_module):
    # What kubernetes' dynamic client raises when the first discovery request gets a 401 (a token the API server
    # does not accept): its str() holds the response headers, the body and the original traceback.
    rejected = ApiException(status=401, reason="Unauthorized")
    rejected.headers = {"Audit-Id": "c0ffee", "Content-Type": "application/json"}
    rejected.body = '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
    error = UnauthorizedError(rejected, tb='  File "client.py", line 54, in inner')
    assert "HTTP response headers" in str(error) and "Original traceback" in str(error)

    def create_api_client(configuration, **headers):
        raise error

    monkeypatch.setattr(core_client, "create_api_client", create_api_client)
    with pytest.raises(K8sError) as caught:
        kf_client.get_client(fake_module({"kubeconfig": kubeconfig_file}))
    assert str(caught.value) == "Could not create API client: the API server answered 401: Unauthorized"
    assert caught.value.status == 401 and caught.value.failure_fields() == {"status": 401}


def served_after_refresh(*served):
    """A dynamic client whose discovery cache is empty: ``served`` kinds are found after a refresh."""
    return FakeDynamicClient(served=served, cached=())


def test_find_resource_refreshes_discovery_once_on_miss():
    dyn = served_after_refresh(("operators.coreos.com/v1alpha1", "CatalogSource"))
    resource = kf_client.find_resource(dyn, "CatalogSource", "operators.coreos.com/v1alpha1")
    assert (resource.api_version, resource.kind) == ("operators.coreos.com/v1alpha1", "CatalogSource")
    assert dyn.resources.invalidations == 1


def test_find_resource_gives_up_after_the_ready_server_refreshed_too():
    dyn = served_after_refresh()
    with pytest.raises(K8sError, match="Failed to find exact match for example.com/v1.Widget"):
        kf_client.find_resource(dyn, "Widget", "example.com/v1")
    assert dyn.resources.invalidations == 2 and dyn.requests == [("discovery", "GET", "/readyz", None)]


def test_find_resource_without_refresh():
    dyn = served_after_refresh(("example.com/v1", "Widget"))
    with pytest.raises(K8sError):
        kf_client.find_resource(dyn, "Widget", "example.com/v1", refresh_on_miss=False)
    assert dyn.resources.invalidations == 0


def test_invalidate_discovery_cache_through_k8sclient():
    dyn = mock.Mock()
    client = K8SClient(configuration=None, client=dyn)
    kf_client.invalidate_discovery_cache(client)
    dyn.resources.invalidate_cache.assert_called_once_with()


@pytest.mark.parametrize(
    "readyz_error, status, message",
    [
        # A starting API server: /readyz fails or does not answer; the kind is said to be missing for now (503, which
        # every wait and guarded write rides out like the restart).
        (ApiException(status=500, reason="Internal Server Error"), 503, "example.com/v1.Widget is not in the API server's discovery yet"),
        (ConnectionRefusedError(111, "Connection refused"), 503, "the API server is starting"),
        # A ready server, or one that does not let us ask: the kind is unknown.
        (None, None, "Failed to find exact match for example.com/v1.Widget"),
        (ApiException(status=403, reason="Forbidden"), None, "Failed to find exact match for example.com/v1.Widget"),
    ],
)
def test_a_kind_missing_while_the_api_server_starts_is_transient(readyz_error, status, message):
    dyn = FakeDynamicClient(served=(), cached=(), errors={"readyz": readyz_error} if readyz_error else {})
    with pytest.raises(K8sError, match=message) as caught:
        kf_client.find_resource(dyn, "Widget", "example.com/v1")
    assert caught.value.status == status
    assert transient_error(caught.value) is (status == 503)
    assert dyn.requests == [("discovery", "GET", "/readyz", None)] and dyn.resources.invalidations == (1 if status == 503 else 2)


class ServedOnceReady(FakeDynamicClient):
    """A starting server: its discovery gains the kind when /readyz (which waits until the server is ready) answers."""

    def request(self, method, path, serialize=True):
        answer = super().request(method, path, serialize)
        self.resources.served.add(("example.com/v1", "Widget"))
        return answer


def test_a_kind_served_once_the_server_is_ready_is_found():
    dyn = ServedOnceReady(served=(), cached=())
    assert kf_client.find_resource(dyn, "Widget", "example.com/v1").kind == "Widget"
    assert dyn.resources.invalidations == 2


def test_a_kind_found_after_the_refresh_does_not_ask_readyz():
    dyn = FakeDynamicClient(served=[("example.com/v1", "Widget")], cached=())
    assert kf_client.find_resource(dyn, "Widget", "example.com/v1").kind == "Widget"
    assert dyn.requests == []
