import base64
import json

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import (
    Credentials,
    credentials_from_config,
    default_auth_files,
    default_docker_config_path,
    load_docker_config,
    parse_www_authenticate,
    pick_challenge,
    resolve_credentials,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import DockerConfigError, redact


@pytest.mark.parametrize("header,expected", [
    ('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"',
     [("bearer", {"realm": "https://auth.docker.io/token", "service": "registry.docker.io",
                  "scope": "repository:library/busybox:pull"})]),
    ('Basic realm="Registry Realm"', [("basic", {"realm": "Registry Realm"})]),
    ('basic realm=unquoted', [("basic", {"realm": "unquoted"})]),
    ('Bearer realm="https://q/t", scope="repository:a:pull,push repository:b:pull"',
     [("bearer", {"realm": "https://q/t", "scope": "repository:a:pull,push repository:b:pull"})]),
    ('Basic realm="a \\"quoted\\", realm"', [("basic", {"realm": 'a "quoted", realm'})]),
    ('Negotiate abc==, Basic realm="x"', [("negotiate", {"token68": "abc=="}), ("basic", {"realm": "x"})]),
    ('Basic realm="r", Bearer realm="t",error="invalid_token"',
     [("basic", {"realm": "r"}), ("bearer", {"realm": "t", "error": "invalid_token"})]),
    ("", []),
    ("Bearer", [("bearer", {})]),
])
def test_parse_www_authenticate(header, expected):
    assert parse_www_authenticate(header) == expected


def test_pick_challenge_prefers_bearer():
    assert pick_challenge('Basic realm="r", Bearer realm="t"')[0] == "bearer"
    assert pick_challenge('Basic realm="r"') == ("basic", {"realm": "r"})
    assert pick_challenge("Negotiate abc") is None


def _b64(s):
    return base64.b64encode(s.encode()).decode()


def test_config_auth_entry_and_url_keys():
    cfg = {"auths": {
        "https://quay.io": {"auth": _b64("robot+x:pa:ss")},
        "registry.example.com:5000": {"username": "u", "password": "p"},
        "https://index.docker.io/v1/": {"auth": _b64("hub:hubpw")},
        "ghcr.io": {"auth": _b64("g:gp"), "email": "x@example.com"},
    }}
    assert credentials_from_config(cfg, "quay.io") == Credentials("robot+x", "pa:ss")
    assert credentials_from_config(cfg, "registry.example.com:5000") == Credentials("u", "p")
    assert credentials_from_config(cfg, "docker.io") == Credentials("hub", "hubpw")
    assert credentials_from_config(cfg, "ghcr.io") == Credentials("g", "gp")
    assert credentials_from_config(cfg, "registry.example.com") is None
    assert credentials_from_config({}, "quay.io") is None
    assert credentials_from_config({"auths": {"quay.io": {}}}, "quay.io") is None


def test_config_auth_unpadded_base64():
    raw = _b64("user:pw1").rstrip("=")
    assert credentials_from_config({"auths": {"q.io": {"auth": raw}}}, "q.io") == Credentials("user", "pw1")


def test_config_bad_auth_does_not_leak():
    secret = "not-base64!!secret"
    with pytest.raises(DockerConfigError) as info:
        credentials_from_config({"auths": {"q.io": {"auth": secret}}}, "q.io", source="/x/config.json")
    assert secret not in str(info.value) and "/x/config.json" in str(info.value)
    with pytest.raises(DockerConfigError):
        credentials_from_config({"auths": {"q.io": {"auth": _b64("nocolon")}}}, "q.io")


def test_load_and_resolve(tmp_path, monkeypatch):
    for name in ("REGISTRY_AUTH_FILE", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"auths": {"127.0.0.1:5000": {"auth": _b64("a:b")}}, "credsStore": "desktop"}))
    assert load_docker_config(str(path))["credsStore"] == "desktop"
    assert resolve_credentials("127.0.0.1:5000", docker_config=str(path)) == Credentials("a", "b")
    # explicit wins
    assert resolve_credentials("127.0.0.1:5000", "x", "y", docker_config=str(path)) == Credentials("x", "y")
    # default location from DOCKER_CONFIG
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path))
    assert default_docker_config_path() == str(path)
    assert resolve_credentials("127.0.0.1:5000") == Credentials("a", "b")
    monkeypatch.delenv("DOCKER_CONFIG")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_docker_config_path() == str(tmp_path / "home" / ".docker" / "config.json")
    assert resolve_credentials("127.0.0.1:5000") is None  # missing default file is fine
    with pytest.raises(DockerConfigError, match="does not exist"):
        resolve_credentials("127.0.0.1:5000", docker_config=str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"auths": {"q": {"auth": "c2VjcmV0')
    with pytest.raises(DockerConfigError) as info:
        load_docker_config(str(bad))
    assert "c2VjcmV0" not in str(info.value)


def test_credentials_repr_hides_password():
    c = Credentials("me", "hunter2-very-secret")
    assert "hunter2" not in repr(c) and "hunter2" not in str(c) and "me" in repr(c)
    assert c.basic_header() == "Basic " + _b64("me:hunter2-very-secret")


@pytest.mark.parametrize("text,secret", [
    ("Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop"),
    ("header Basic dXNlcjpwYXNzd29yZA== sent", "dXNlcjpwYXNzd29yZA=="),
    ('{"token": "eyJhbGciOi.abc.def"}', "eyJhbGciOi.abc.def"),
    ("https://user:pw@example.com/v2/", "pw"),
    ("access_token=xyz123&expires=3", "xyz123"),
])
def test_redact_patterns(text, secret):
    assert secret not in redact(text)


def test_redact_literal_secrets():
    assert redact("the password is pa55 here", ["pa55"]) == "the password is <redacted> here"


# ----------------------------------------------------------------------------------------- credential helpers

HELPER = """#!/bin/sh
# docker-credential-helpers protocol: "get", server address on stdin, JSON on stdout
[ "$1" = get ] || exit 3
read -r server
echo "$server" >> "$(dirname "$0")/asked"
case "$server" in
  %s
esac
"""


def _helper(tmp_path, monkeypatch, name, cases):
    """Install docker-credential-<name> (a real executable on PATH) answering per server address."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    exe = bindir / ("docker-credential-" + name)
    exe.write_text(HELPER % cases)
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, __import__("os").environ["PATH"]))
    return bindir / "asked"


def test_cred_helpers_entry_wins_over_auths(tmp_path, monkeypatch):
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import credentials_from_config

    asked = _helper(tmp_path, monkeypatch, "kf", """'q.io') echo '{"ServerURL":"q.io","Username":"robot","Secret":"t0k"}' ;;
  *) echo 'credentials not found in native keychain'; exit 1 ;;""")
    config = {"auths": {"q.io": {"auth": _b64("file:pw")}, "other.io": {"auth": _b64("o:p")}},
              "credHelpers": {"https://q.io": "kf"}}
    assert credentials_from_config(config, "q.io") == Credentials("robot", "t0k")
    assert credentials_from_config(config, "other.io") == Credentials("o", "p")  # no helper for it
    # credsStore is asked for every registry; "not found" falls back to the auths entry
    store = {"auths": {"other.io": {"auth": _b64("o:p")}}, "credsStore": "kf"}
    assert credentials_from_config(store, "other.io") == Credentials("o", "p")
    assert credentials_from_config(store, "none.io") is None
    # Docker Hub is asked under the CLI's v1 index URL
    assert credentials_from_config(store, "docker.io") is None
    assert asked.read_text().split() == ["q.io", "other.io", "none.io", "https://index.docker.io/v1/"]


@pytest.mark.parametrize("cases, message", [
    ("*) echo 'boom: s3cret-in-output' >&2; exit 2 ;;", "failed for q.io (exit status 2)"),
    ("*) echo 'not json s3cret' ;;", "malformed output for q.io"),
])
def test_helper_errors_are_clear_and_secret_free(tmp_path, monkeypatch, cases, message):
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import credentials_from_config

    _helper(tmp_path, monkeypatch, "bad", cases)
    with pytest.raises(DockerConfigError) as info:
        credentials_from_config({"credHelpers": {"q.io": "bad"}}, "q.io")
    assert message in str(info.value) and "docker-credential-bad" in str(info.value)
    assert "s3cret" not in str(info.value)


def test_identity_tokens_from_a_helper_and_from_auths(tmp_path, monkeypatch):
    """docker-credential-helpers mark an identity token with the user <token>; docker's config stores it as
    identitytoken beside the entry's auth."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import credentials_from_config

    _helper(tmp_path, monkeypatch, "idt", """*) echo '{"Username":"<token>","Secret":"s3cret-refresh"}' ;;""")
    found = credentials_from_config({"credHelpers": {"q.io": "idt"}}, "q.io")
    assert found == Credentials("", "", "s3cret-refresh") and "s3cret" not in repr(found)
    config = {"auths": {"r.io": {"auth": _b64("<token>:"), "identitytoken": "refresh-me"}}}
    assert credentials_from_config(config, "r.io") == Credentials("<token>", "", "refresh-me")
    with pytest.raises(DockerConfigError, match="'identitytoken' is not a string"):
        credentials_from_config({"auths": {"r.io": {"identitytoken": 7}}}, "r.io")


def test_missing_helper_and_bad_names(tmp_path, monkeypatch):
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import credentials_from_config

    monkeypatch.setenv("PATH", str(tmp_path))  # nothing installed
    config = {"auths": {"q.io": {"auth": _b64("a:b")}}, "credsStore": "desktop"}
    assert credentials_from_config(config, "q.io") == Credentials("a", "b")
    with pytest.raises(DockerConfigError, match='invalid credential helper name "../x"'):
        credentials_from_config({"credsStore": "../x"}, "q.io")
    with pytest.raises(DockerConfigError, match="'credHelpers' is not an object"):
        credentials_from_config({"credHelpers": ["x"]}, "q.io")


def test_the_auth_files_podman_reads_come_first_in_its_order(tmp_path):
    """containers-auth.json(5): REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json, the user's
    ~/.config/containers/auth.json, then docker's config - the first that has the registry's credentials wins."""
    def auth_file(path, user, registry="r.example.com"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"auths": {registry: {"auth": _b64(f"{user}:pw")}}}))
        return str(path)

    environ = {
        "REGISTRY_AUTH_FILE": auth_file(tmp_path / "explicit.json", "explicit", registry="other.example.com"),
        "XDG_RUNTIME_DIR": str(tmp_path / "run"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "DOCKER_CONFIG": str(tmp_path / "docker"),
    }
    auth_file(tmp_path / "run" / "containers" / "auth.json", "runtime")
    auth_file(tmp_path / "config" / "containers" / "auth.json", "user")
    auth_file(tmp_path / "docker" / "config.json", "docker")
    assert default_auth_files(environ) == [
        environ["REGISTRY_AUTH_FILE"],
        str(tmp_path / "run" / "containers" / "auth.json"),
        str(tmp_path / "config" / "containers" / "auth.json"),
        str(tmp_path / "docker" / "config.json"),
    ]
    assert resolve_credentials("other.example.com", environ=environ) == Credentials("explicit", "pw")
    assert resolve_credentials("r.example.com", environ=environ) == Credentials("runtime", "pw")  # REGISTRY_AUTH_FILE has none for it
    (tmp_path / "run" / "containers" / "auth.json").unlink()
    assert resolve_credentials("r.example.com", environ=environ) == Credentials("user", "pw")
    (tmp_path / "config" / "containers" / "auth.json").unlink()
    assert resolve_credentials("r.example.com", environ=environ) == Credentials("docker", "pw")
    assert resolve_credentials("none.example.com", environ=environ) is None
