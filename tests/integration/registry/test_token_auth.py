"""module_utils.oci and the catalog_image module against a registry with Bearer-token auth: a real docker-registry
(distribution v2.8, ``auth: token``) trusting the testbed's token server (tests/testbed/token_server.py).

Users: ``pusher`` may pull and push ``kubeforge/*``, ``reader`` may only pull it.
"""

import base64
import json
import os
import re
import ssl
import urllib.error
import urllib.request
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import Credentials
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import RegistryClient
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import AuthenticationError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import (
    BaseImage,
    build_catalog_image,
    build_directory_image,
    push_image,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import pull_image

FBC_DIR = str(data_path("community-operators-prod", "catalogs", "v4.20", "kube-green"))


class RecordingClient(RegistryClient):
    """The collection's client, remembering ``(method, path, status)`` of every registry request that succeeded."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = []

    def request(self, method, path, *args, **kwargs):
        resp = super().request(method, path, *args, **kwargs)
        self.calls.append((method, path, resp.status))
        return resp


def _b64json(part):
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def _get_token(reg, user, scopes, password=None):
    ctx = ssl.create_default_context(cafile=reg.ca_file)
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.ProxyHandler({}))
    query = urlencode([("service", reg.tokens.service)] + [("scope", s) for s in scopes])
    req = urllib.request.Request(reg.tokens.realm + "?" + query)
    raw = ("%s:%s" % (user, reg.tokens.users[user] if password is None else password)).encode()
    req.add_header("Authorization", "Basic " + base64.b64encode(raw).decode())
    with opener.open(req, timeout=10) as resp:
        return json.loads(resp.read())


def _secrets(reg, *clients):
    """Everything that must never show up in a message: passwords and every token the clients got."""
    out = list(reg.tokens.users.values())
    for client in clients:
        out.extend(client._tokens.values())
    return [s for s in out if s]


@pytest.fixture(scope="module")
def base_image(token_registry):
    """A one-layer image (bin/opm) pushed by ``pusher`` to kubeforge/base/opm:v1."""
    src = token_registry.root / "base-src"
    (src / "bin").mkdir(parents=True)
    (src / "bin" / "opm").write_text("#!/bin/sh\necho fake opm\n")
    os.chmod(src / "bin" / "opm", 0o755)
    image = build_directory_image(str(src), "/", labels={"org.example.base": "opm"}, entrypoint=["/bin/opm"])
    ref = "%s/kubeforge/base/opm:v1" % token_registry.host
    assert push_image(token_registry.client("pusher"), ref, image)[0] is True
    return ref, image


def test_token_server_issues_standard_scoped_jwts(token_registry):
    doc = _get_token(token_registry, "reader", ["repository:kubeforge/a:pull,push repository:other/x:pull",
                                                "repository:kubeforge/b:pull"])
    assert doc["token"] == doc["access_token"] and doc["expires_in"] == 300 and doc["issued_at"].endswith("Z")
    header_b64, claims_b64, sig = doc["token"].split(".")
    header, claims = _b64json(header_b64), _b64json(claims_b64)
    assert header["alg"] == "ES256" and len(header["x5c"]) == 1 and len(base64.urlsafe_b64decode(sig + "==")) == 64
    assert claims["iss"] == token_registry.tokens.issuer and claims["aud"] == token_registry.tokens.service
    assert claims["sub"] == "reader" and claims["nbf"] <= claims["iat"] < claims["exp"] and claims["jti"]
    # reader asked for push too: only pull is granted; nothing outside kubeforge/*
    assert claims["access"] == [{"type": "repository", "name": "kubeforge/a", "actions": ["pull"]},
                                {"type": "repository", "name": "kubeforge/b", "actions": ["pull"]}]
    pusher = _b64json(_get_token(token_registry, "pusher", ["repository:kubeforge/a:pull,push"])["token"].split(".")[1])
    assert pusher["access"] == [{"type": "repository", "name": "kubeforge/a", "actions": ["pull", "push"]}]
    with pytest.raises(urllib.error.HTTPError) as info:
        _get_token(token_registry, "pusher", [], password="nope")
    assert info.value.code == 401


def test_registry_verifies_token_signature(token_registry, base_image):
    """The registry accepts the server's token and refuses the same token with widened claims (signature broken)."""
    url = "https://%s/v2/kubeforge/base/opm/manifests/v1" % token_registry.host
    ctx = ssl.create_default_context(cafile=token_registry.ca_file)
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx), urllib.request.ProxyHandler({}))
    accept = "application/vnd.oci.image.manifest.v1+json"

    def head(token):
        req = urllib.request.Request(url, method="HEAD", headers={"Authorization": "Bearer " + token, "Accept": accept})
        try:
            with opener.open(req, timeout=10) as resp:
                return resp.status, ""
        except urllib.error.HTTPError as e:
            e.close()
            return e.code, e.headers.get("WWW-Authenticate") or ""

    token = _get_token(token_registry, "reader", ["repository:kubeforge/base/opm:pull"])["token"]
    assert head(token) == (200, "")
    header, claims, sig = token.split(".")
    forged = dict(_b64json(claims), sub="pusher", access=[{"type": "repository", "name": "kubeforge/base/opm", "actions": ["pull", "push"]}])
    forged_b64 = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    status, challenge = head(".".join((header, forged_b64, sig)))
    assert status == 401 and 'error="invalid_token"' in challenge


def test_push_and_pull_with_bearer_tokens(token_registry, tmp_path):
    pusher = token_registry.client("pusher")
    assert pusher.ping() == "registry/2.0"
    ref = "%s/kubeforge/catalogs/kube-green:v4.20" % token_registry.host
    image = build_catalog_image(FBC_DIR, labels={"org.example.auth": "token"})
    changed, stats = push_image(pusher, ref, image)
    assert changed and stats == {"exists": 0, "mounted": 0, "uploaded": 2, "copied": 0}
    assert push_image(token_registry.client("pusher"), ref, build_catalog_image(FBC_DIR, labels={"org.example.auth": "token"}))[0] is False

    reader = token_registry.client("reader")
    assert reader.head_manifest("kubeforge/catalogs/kube-green", "v4.20")["digest"] == image.digest
    pulled = pull_image(ref, str(tmp_path / "root"), client=reader)
    assert pulled.digest == image.digest and pulled.labels["org.example.auth"] == "token"
    assert sorted(os.listdir(tmp_path / "root" / "configs")) == sorted(os.listdir(FBC_DIR))

    asked = [r for r in token_registry.tokens.requests if r["user"] == "pusher"]
    assert any("repository:kubeforge/catalogs/kube-green:pull,push" in r["scopes"] for r in asked)


def test_identity_tokens_from_a_docker_config(token_registry, tmp_path):
    """An identity token (docker login's refresh token) is exchanged with the OAuth2 POST of the token spec, and
    gives what its user may do; a wrong one is refused without showing it."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import client_for

    def config(token):
        path = tmp_path / ("config-%s.json" % token[-6:])
        path.write_text(json.dumps({"auths": {token_registry.host: {"auth": base64.b64encode(b"<token>:").decode(), "identitytoken": token}}}))
        return str(path)

    ref = "%s/kubeforge/identity/kube-green:v1" % token_registry.host
    image = build_catalog_image(FBC_DIR, labels={"org.example.auth": "identity-token"})
    pusher = client_for(ref, docker_config=config(token_registry.tokens.identity_token("pusher")), ca_file=token_registry.ca_file)
    assert push_image(pusher, ref, image)[0] is True
    reader = client_for(ref, docker_config=config(token_registry.tokens.identity_token("reader")), ca_file=token_registry.ca_file)
    assert pull_image(ref, str(tmp_path / "root"), client=reader).digest == image.digest
    with pytest.raises(AuthenticationError, match="insufficient_scope"):
        push_image(reader, "%s/kubeforge/identity/other:v1" % token_registry.host, image)
    exchanged = [r for r in token_registry.tokens.requests if r.get("grant_type") == "refresh_token"]
    assert {r["user"] for r in exchanged} == {"pusher", "reader"} and all(r["status"] == 200 for r in exchanged)

    wrong = "idt-" + "0" * 32
    with pytest.raises(AuthenticationError) as refused:
        client_for(ref, docker_config=config(wrong), ca_file=token_registry.ca_file).head_manifest("kubeforge/identity/kube-green", "v1")
    assert "failed with HTTP 401 (credentials rejected)" in str(refused.value) and wrong not in str(refused.value)


def test_cross_repo_mount_answers_201(token_registry, base_image, tmp_path):
    base_ref, base = base_image
    client = RecordingClient(token_registry.host, credentials=Credentials("pusher", token_registry.tokens.users["pusher"]),
                             ca_file=token_registry.ca_file)
    image = build_catalog_image(FBC_DIR, base=BaseImage.pull(base_ref, client))
    ref = "%s/kubeforge/catalogs/on-base:v1" % token_registry.host
    changed, stats = push_image(client, ref, image)
    assert changed and stats == {"exists": 0, "mounted": 1, "uploaded": 2, "copied": 0}

    layer = base.layer.digest
    mounts = [(m, p, s) for m, p, s in client.calls if m == "POST" and "mount=" in p]
    assert len(mounts) == 1
    method, path, status = mounts[0]
    query = parse_qs(urlsplit(path).query)
    assert path.startswith("/v2/kubeforge/catalogs/on-base/blobs/uploads/") and status == 201
    assert query == {"mount": [layer], "from": ["kubeforge/base/opm"]}
    # the base layer was never uploaded to the new repository: the only upload PUTs are config and catalog layer
    uploads = [p for m, p, _s in client.calls if m == "PUT" and "/blobs/uploads/" in p]
    assert len(uploads) == 2 and not any(layer in p for p in uploads)
    # one token request carried both scopes: pull on the source and push on the destination
    both = {"repository:kubeforge/catalogs/on-base:pull,push", "repository:kubeforge/base/opm:pull"}
    assert any(both <= set(r["scopes"]) and r["user"] == "pusher" for r in token_registry.tokens.requests)

    pulled = pull_image(ref, str(tmp_path / "root"), client=token_registry.client("reader"))
    assert pulled.digest == image.digest and [d["digest"] for d in pulled.manifest["layers"]] == [layer, image.layer.digest]
    assert os.access(tmp_path / "root" / "bin" / "opm", os.X_OK)

    # the client's own mount call: "mounted", nothing uploaded
    again = token_registry.client("pusher")
    assert again.upload_blob("kubeforge/catalogs/mounted-too", base.layer.data, layer, mount_from="kubeforge/base/opm") == "mounted"


def test_wrong_password_is_clean(token_registry, base_image):
    bad = "Wrong-Pa55word-" + os.urandom(4).hex()
    client = token_registry.client("pusher", password=bad)
    with pytest.raises(AuthenticationError) as info:
        client.head_manifest("kubeforge/base/opm", "v1")
    msg, rep = str(info.value), repr(info.value)
    assert token_registry.host in msg and "token request" in msg and "credentials rejected" in msg
    assert info.value.status == 401 and info.value.registry == token_registry.host
    good = token_registry.client("pusher")
    good.ping()
    for secret in [bad] + _secrets(token_registry, good, client):
        for text in (msg, rep, repr(client), repr(client.credentials)):
            assert secret not in text
    with pytest.raises(AuthenticationError) as info:
        push_image(client, "%s/kubeforge/catalogs/nope:v1" % token_registry.host, build_catalog_image(FBC_DIR))
    assert bad not in str(info.value) and token_registry.host in str(info.value)


def test_reader_pulls_but_cannot_push(token_registry, base_image, tmp_path):
    base_ref, base = base_image
    reader = token_registry.client("reader")
    pulled = pull_image(base_ref, str(tmp_path / "root"), client=reader)
    assert pulled.digest == base.digest

    ref = "%s/kubeforge/catalogs/by-reader:v1" % token_registry.host
    with pytest.raises(AuthenticationError) as info:
        push_image(reader, ref, build_catalog_image(FBC_DIR))
    msg = str(info.value)
    assert token_registry.host in msg and "kubeforge/catalogs/by-reader" in msg and info.value.status == 401
    assert "user reader" in msg and "insufficient_scope" in msg
    # the scope is the registry's challenge, whose action order varies (distribution builds it from a Go map)
    assert re.search(r"repository:kubeforge/catalogs/by-reader:(pull,push|push,pull)\b", msg)
    for secret in _secrets(token_registry, reader):
        assert secret not in msg and secret not in repr(info.value)
    assert token_registry.client("pusher").head_manifest("kubeforge/catalogs/by-reader", "v1") is None
    # the cut-down token is not re-requested over and over
    push_asks = [r for r in token_registry.tokens.requests
                 if r["user"] == "reader" and "repository:kubeforge/catalogs/by-reader:pull,push" in r["scopes"]]
    assert len(push_asks) == 1

    # outside the ACL the reader gets nothing, not even pull
    with pytest.raises(AuthenticationError, match="insufficient_scope"):
        reader.head_manifest("other/repo", "v1")


PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars:
    common: &common
      path: "{{ fbc_dir }}"
      image: "{{ registry }}/kubeforge/catalogs/module:v1"
      base_image: "{{ base_image }}"
      registry_username: pusher
      registry_password: "{{ pusher_password }}"
      ca_file: "{{ ca_file }}"
      push: true
  tasks:
    - name: push on a base image from the same registry, as pusher
      kubeforge.operators.catalog_image: *common
      register: pushed
    - name: push as reader
      kubeforge.operators.catalog_image:
        <<: *common
        image: "{{ registry }}/kubeforge/catalogs/module-reader:v1"
        registry_username: reader
        registry_password: "{{ reader_password }}"
      register: reader
      ignore_errors: true
    - name: wrong password
      kubeforge.operators.catalog_image:
        <<: *common
        registry_password: "{{ bad_password }}"
      register: wrong
      ignore_errors: true
    - name: save results
      ansible.builtin.copy:
        dest: "{{ out_dir }}/results.json"
        content: "{{ {'pushed': pushed, 'reader': reader, 'wrong': wrong} | to_json }}"
        mode: "0600"
"""


def test_catalog_image_module_with_token_auth(token_registry, base_image, tmp_path, run_playbook):
    bad = "Wrong-Pa55word-%s" % os.urandom(3).hex()
    users = token_registry.tokens.users
    returncode, output = run_playbook(PLAYBOOK, {
        "fbc_dir": FBC_DIR, "registry": token_registry.host, "base_image": base_image[0],
        "ca_file": token_registry.ca_file, "pusher_password": users["pusher"], "reader_password": users["reader"],
        "bad_password": bad, "out_dir": str(tmp_path)})
    assert returncode == 0, output
    for secret in (bad, users["pusher"], users["reader"]):
        assert secret not in output
    res = json.loads((tmp_path / "results.json").read_text())
    pushed, reader, wrong = res["pushed"], res["reader"], res["wrong"]
    assert pushed["changed"] is True and pushed["blobs"] == {"exists": 0, "mounted": 1, "uploaded": 2, "copied": 0}
    assert reader["failed"] is True and "insufficient_scope" in reader["msg"] and "user reader" in reader["msg"]
    assert wrong["failed"] is True and token_registry.host in wrong["msg"] and "credentials rejected" in wrong["msg"]
    assert bad not in json.dumps(wrong)
    head = token_registry.client("reader").head_manifest("kubeforge/catalogs/module", "v1")
    assert head["digest"] == pushed["digest"]
