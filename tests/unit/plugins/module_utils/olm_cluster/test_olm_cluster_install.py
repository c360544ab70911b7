"""olm_cluster/install.py: reading the manifests (directory or download) and recognising OpenShift.

What the testbed cannot show is tested here: OpenShift itself (an APIService served by openshift-apiserver; the
testbed must not register Service-backed APIServices), download failures from a real HTTPS site, redirects and
oversized files. Installs, dry runs and the refusal of a foreign OLM run on the testbed
(tests/integration/olm/test_olm_install.py).
"""

import io
import urllib.error

import pytest
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import manifests as mf
from ansible_collections.kubeforge.operators.plugins.module_utils.olm.manifests import ManifestError
from ansible_collections.kubeforge.operators.plugins.module_utils.olm_cluster import install


class Response(io.BytesIO):
    def __init__(self, body, url):
        super().__init__(body)
        self.url = url

    def geturl(self):
        return self.url


class Opener:
    """Stands in for ansible.module_utils.urls.open_url: ``pages`` maps a URL to bytes, an exception or a redirect."""

    def __init__(self, pages):
        self.pages = pages
        self.calls = []

    def __call__(self, url, **kwargs):
        self.calls.append((url, kwargs))
        page = self.pages[url]
        if isinstance(page, Exception):
            raise page
        if isinstance(page, tuple):  # (final URL, body)
            return Response(page[1], page[0])
        return Response(page, url)


V0460 = data_path("olm", "v0.46.0")
BASE = "https://mirror.example.com/olm"


def params(**kwargs):
    out = {"version": None, "manifests_url": mf.DEFAULT_MANIFESTS_URL, "manifests_dir": None}
    out.update(kwargs)
    return out


def test_read_from_directory():
    texts, sources, version = install.read_manifests(params(manifests_dir=str(V0460)))
    assert texts["crds.yaml"] == (V0460 / "crds.yaml").read_bytes() and texts["olm.yaml"] == (V0460 / "olm.yaml").read_bytes()
    assert sources == {"crds.yaml": str(V0460 / "crds.yaml"), "olm.yaml": str(V0460 / "olm.yaml")}
    assert version is None
    assert install.read_manifests(params(manifests_dir=str(V0460), version="v0.46.0"))[2] == "v0.46.0"


def test_read_from_directory_missing_file(tmp_path):
    (tmp_path / "crds.yaml").write_text("x")
    with pytest.raises(ManifestError, match="olm.yaml does not exist"):
        install.read_manifests(params(manifests_dir=str(tmp_path)))


def test_default_download_is_the_pinned_github_release_verified_and_without_netrc():
    crds, olm = (V0460 / "crds.yaml").read_bytes(), (V0460 / "olm.yaml").read_bytes()
    urls = mf.manifest_urls(mf.DEFAULT_MANIFESTS_URL, mf.DEFAULT_VERSION)
    opener = Opener({urls["crds.yaml"]: crds, urls["olm.yaml"]: olm})
    texts, sources, version = install.read_manifests(params(), opener)
    assert version == "v0.46.0" and sources == urls and texts == {"crds.yaml": crds, "olm.yaml": olm}
    for url, kwargs in opener.calls:
        assert url.startswith("https://github.com/operator-framework/operator-lifecycle-manager/releases/download/v0.46.0/")
        assert kwargs["validate_certs"] is True and kwargs["use_netrc"] is False and kwargs["timeout"] > 0


def test_github_redirect_to_https_storage_is_followed():
    url = BASE + "/v1.0.0/crds.yaml"
    opener = Opener({url: ("https://objects.example.com/x?sig=1", b"body")})
    assert install.download(url, opener) == b"body"


DOWNLOAD_FAILURES = [
    ("HTTP error", urllib.error.HTTPError(BASE, 404, "Not Found", {}, None), "HTTP 404"),
    ("no network", urllib.error.URLError("Name or service not known"), "Name or service not known"),
    ("TLS", urllib.error.URLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), "CERTIFICATE_VERIFY_FAILED"),
    ("downgrade", ("http://mirror.example.com/x", b"body"), "non-HTTPS location"),
    ("too large", b"x" * (mf.MAX_MANIFEST_BYTES + 1), "larger than"),
]


@pytest.mark.parametrize("case, page, fragment", DOWNLOAD_FAILURES, ids=[row[0] for row in DOWNLOAD_FAILURES])
def test_download_failures(case, page, fragment):
    url = BASE + "/v1.0.0/crds.yaml"
    with pytest.raises(ManifestError) as err:
        install.download(url, Opener({url: page}))
    assert fragment in str(err.value) and url in str(err.value)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(manifests_url="http://mirror.example.com/olm"), "plain HTTP"),
        (dict(version="latest"), "not an OLM release tag"),
        (dict(manifests_dir="/nonexistent", version="../x"), "not an OLM release tag"),
    ],
)
def test_refused_before_any_download(kwargs, fragment):
    opener = Opener({})
    with pytest.raises(ManifestError, match=fragment):
        install.read_manifests(params(**kwargs), opener)
    assert opener.calls == []
