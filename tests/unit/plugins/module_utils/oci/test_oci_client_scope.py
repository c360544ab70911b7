"""Bearer ``insufficient_scope`` handling of RegistryClient against the in-process fake registry of lib.registry.

Like distribution: a valid token that lacks an action gets 401 with ``error="insufficient_scope"`` and the scope the
request needs. When the client already asked for that scope, the token server granted less and would again: the
client stops at once with a clear error. When the registry wants more than the client asked for, it asks again.
"""

import pytest
from lib.registry import FakeRegistry, serving

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import AuthenticationError

PASSWORD = "Sc0pe-Pa55word"
GRANTS = {"reader": {"pull"}, "writer": {"pull", "push"}}


@pytest.fixture
def scope_registry():
    with serving(FakeRegistry(users={user: (PASSWORD, actions) for user, actions in GRANTS.items()})) as registry:
        yield registry


def _client(reg, user):
    return RegistryClient(reg.host, credentials=Credentials(user, PASSWORD), plain_http=True)


def test_insufficient_scope_fails_once_and_clearly(scope_registry):
    client = _client(scope_registry, "reader")
    scope_registry.add_blob("team/app", "sha256:" + "a" * 64)
    assert client.blob_exists("team/app", "sha256:" + "a" * 64) is True  # pull is granted
    with pytest.raises(AuthenticationError) as info:
        client.mount_blob("team/app", "sha256:" + "b" * 64, "team/other")
    msg = str(info.value)
    assert scope_registry.host in msg and "team/app" in msg and "user reader" in msg
    assert "insufficient_scope" in msg and "repository:team/app:pull,push" in msg
    assert "check the username/password" not in msg
    assert info.value.status == 401
    assert PASSWORD not in msg and not any(tok in msg for tok in scope_registry.tokens)
    # one token per scope set: no futile re-requests of a scope the token server already cut down
    assert scope_registry.requested_scopes() == [
        ["repository:team/app:pull"],
        ["repository:team/app:pull,push", "repository:team/other:pull"],
    ]


def test_registry_wanting_more_scope_gets_a_wider_token(scope_registry):
    """The registry needs pull on the mount source too, which the request did not name: the client asks again."""
    client = _client(scope_registry, "writer")
    scope_registry.add_blob("team/dest", "sha256:" + "c" * 64)
    scope_registry.add_blob("team/src", "sha256:" + "c" * 64)
    assert client.blob_exists("team/dest", "sha256:" + "c" * 64, push=True)  # a cached token for team/dest only
    with client.request("POST", "/v2/team/dest/blobs/uploads/?mount=sha256:%s&from=team/src" % ("c" * 64),
                        ["repository:team/dest:pull,push"], "team/dest", "blob upload", {"Content-Length": "0"}, b"",
                        ok=(201, 202)) as resp:
        assert resp.status == 201
    assert len(scope_registry.token_requests) == 2
    assert scope_registry.requested_scopes()[-1] == ["repository:team/dest:pull,push", "repository:team/src:pull"]


def test_mount_with_both_scopes_asked_upfront(scope_registry):
    client = _client(scope_registry, "writer")
    scope_registry.add_blob("team/src", "sha256:" + "d" * 64)
    assert client.mount_blob("team/dest", "sha256:" + "d" * 64, "team/src") is True
    assert sorted(scope_registry.requested_scopes()[-1]) == ["repository:team/dest:pull,push", "repository:team/src:pull"]
