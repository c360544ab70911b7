"""oci.mirrors (containers-registries.conf(5) v2) and pull.resolve_pull: which endpoints a pull tries, in which
order, and what it does when they fail."""

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.oci import mirrors
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import NotFoundError, OCIError, RegistryConnectionError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import resolve_pull
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

DIGEST = "sha256:" + "a" * 64
CONF = """
unqualified-search-registries = ["docker.io"]

[[registry]]
location = "quay.io/ns"
[[registry.mirror]]
location = "mirror.example:5000/ops/ns"
pull-from-mirror = "digest-only"
[[registry.mirror]]
location = "tags.example/ns"
pull-from-mirror = "tag-only"
[[registry.mirror]]
location = "any.example/ns"
insecure = true

[[registry]]
prefix = "quay.io/ns/app"
location = "quay.io/ns/app"
mirror-by-digest-only = true
[[registry.mirror]]
location = "apps.example/app"

[[registry]]
prefix = "*.blocked.example"
blocked = true

[[registry]]
location = "gone.example"
blocked = true
[[registry.mirror]]
location = "mirror.example/gone"
"""


@pytest.fixture
def entries(tmp_path):
    path = tmp_path / "registries.conf"
    path.write_text(CONF)
    return mirrors.load(str(path))


@pytest.mark.parametrize("ref, expected", [
    # a digest: the digest-only and the all mirrors, then the source
    ("quay.io/ns/other@" + DIGEST, ["mirror.example:5000/ops/ns/other@" + DIGEST, "any.example/ns/other@" + DIGEST, "quay.io/ns/other@" + DIGEST]),
    # a tag: the tag-only and the all mirrors
    ("quay.io/ns/other:v1", ["tags.example/ns/other:v1", "any.example/ns/other:v1", "quay.io/ns/other:v1"]),
    # the longest prefix wins; mirror-by-digest-only keeps its mirrors for digests
    ("quay.io/ns/app@" + DIGEST, ["apps.example/app@" + DIGEST, "quay.io/ns/app@" + DIGEST]),
    ("quay.io/ns/app:v1", ["quay.io/ns/app:v1"]),
    # a prefix matches whole path components only
    ("quay.io/ns/application:v1", ["tags.example/ns/application:v1", "any.example/ns/application:v1", "quay.io/ns/application:v1"]),
    ("quay.io/nsx/app:v1", ["quay.io/nsx/app:v1"]),
    # blocked: only the mirrors
    ("gone.example/x@" + DIGEST, ["mirror.example/gone/x@" + DIGEST]),
])
def test_pull_endpoints(entries, ref, expected):
    assert [str(r) for r, _insecure in mirrors.pull_endpoints(entries, parse_reference(ref))] == expected


def test_insecure_mirror_and_blocked_wildcard(entries):
    found = mirrors.pull_endpoints(entries, parse_reference("quay.io/ns/other:v1"))
    assert [insecure for _r, insecure in found] == [False, True, False]
    with pytest.raises(OCIError, match=r"blocked in registries.conf \(prefix \*\.blocked\.example\)"):
        mirrors.pull_endpoints(entries, parse_reference("r.blocked.example/x:v1"))


def test_dropins_replace_entries_of_the_same_prefix_and_no_file_is_no_mirror(tmp_path):
    path = tmp_path / "registries.conf"
    path.write_text(CONF)
    (tmp_path / "registries.conf.d").mkdir()
    (tmp_path / "registries.conf.d" / "50-quay.conf").write_text('[[registry]]\nlocation = "quay.io/ns"\n')
    (tmp_path / "registries.conf.d" / "ignored.txt").write_text("not toml [")
    loaded = mirrors.load(str(path))
    assert loaded["quay.io/ns"]["mirrors"] == []
    assert mirrors.load(str(tmp_path / "absent.conf")) == {}


@pytest.mark.parametrize("text, problem", [
    ("[[registry]]\nlocation = 1\n", "location must be a string"),
    ('[[registry]]\nlocation = "q.io"\n[[registry.mirror]]\nlocation = "m.io"\npull-from-mirror = "sometimes"\n', "pull-from-mirror 'sometimes'"),
    ('[[registry]]\nprefix = "*quay.io"\n', "a wildcard is"),
    ("[[registry]]\n", "needs a location or a prefix"),
    ("registry = [", "registries.conf"),
])
def test_bad_files_name_the_problem(tmp_path, text, problem):
    path = tmp_path / "registries.conf"
    path.write_text(text)
    with pytest.raises(mirrors.MirrorConfigError, match=problem):
        mirrors.load(str(path))


def test_default_path(tmp_path):
    assert mirrors.default_path({"CONTAINERS_REGISTRIES_CONF": "/x.conf", "HOME": str(tmp_path)}) == "/x.conf"
    assert mirrors.default_path({"HOME": str(tmp_path)}) == mirrors.SYSTEM_FILE
    user = tmp_path / ".config" / "containers" / "registries.conf"
    user.parent.mkdir(parents=True)
    user.write_text("")
    assert mirrors.default_path({"HOME": str(tmp_path)}) == str(user)


class FakeClient:
    """A registry client whose images are ``answers`` ({(registry, repository, reference): resolved or exception})."""

    def __init__(self, registry, answers, calls):
        self.registry = registry
        self.answers = answers
        self.calls = calls

    def for_registry(self, registry, verify=None):
        self.calls.append(("client", registry, verify))
        return FakeClient(registry, self.answers, self.calls)

    def resolve_image(self, repository, reference, platform):
        self.calls.append((self.registry, repository, reference))
        answer = self.answers.get((self.registry, repository, reference))
        if isinstance(answer, Exception):
            raise answer
        if answer is None:
            raise NotFoundError("registry %s: manifest %s not found" % (self.registry, reference))
        return answer


def test_resolve_pull_goes_on_to_the_next_endpoint_and_names_every_failure(entries):
    ref = parse_reference("quay.io/ns/other@" + DIGEST)
    calls = []
    answers = {("mirror.example:5000", "ops/ns/other", DIGEST): RegistryConnectionError("registry mirror.example:5000: cannot connect"),
               ("any.example", "ns/other", DIGEST): {"digest": DIGEST}}
    client, source, resolved = resolve_pull(ref, FakeClient("quay.io", answers, calls), mirrors=entries)
    assert (client.registry, str(source), resolved) == ("any.example", "any.example/ns/other@" + DIGEST, {"digest": DIGEST})
    assert ("client", "any.example", False) in calls  # the insecure mirror: TLS not verified
    assert not [c for c in calls if c[0] == "quay.io"]  # the source was not needed

    with pytest.raises(OCIError) as failed:
        resolve_pull(ref, FakeClient("quay.io", {}, []), mirrors=entries)
    message = str(failed.value)
    assert "neither its mirrors (registries.conf) nor its registry" in message
    assert message.count("not found") == 3


def test_resolve_pull_without_mirrors_keeps_the_source_error(entries):
    with pytest.raises(NotFoundError):
        resolve_pull(parse_reference("other.example/x:v1"), FakeClient("other.example", {}, []), mirrors=entries)
    with pytest.raises(NotFoundError):
        resolve_pull(parse_reference("quay.io/ns/other:v1"), FakeClient("quay.io", {}, []), mirrors={})
