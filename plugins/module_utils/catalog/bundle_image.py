# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The bundle_image module's rules (no Ansible import): what an operator bundle directory must hold to become a
registry+v1 bundle image, the image labels and the ``bundle.Dockerfile`` operator-sdk would generate for it, and
the ``(directory, destination)`` pairs the image is built from (one layer each, like the Dockerfile's COPY lines);
``execute(module)`` is the module's run.

operator-sdk (``internal/util/bundleutil``) writes ``metadata/annotations.yaml`` and ``bundle.Dockerfile`` from the
same values, so every annotation is also an image label: the core bundle labels (media type, manifests and
metadata directories, package, channels, default channel), the other labels (metrics labels, sorted as
``key=value`` strings) and, when ``tests/scorecard/config.yaml`` exists, the scorecard labels
``operators.operatorframework.io.test.mediatype.v1=scorecard+v1`` and
``operators.operatorframework.io.test.config.v1=tests/scorecard/``, with a third COPY of ``tests/scorecard``.

OLM v1 (operator-controller) reads the package from ``metadata/annotations.yaml`` and needs a flat ``manifests/``
directory holding exactly one ClusterServiceVersion; OLM v0 reads the same files. Bundles that would fail there
are refused here, before anything is built or pushed.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
from collections import namedtuple

try:
    import yaml

    YAML_IMPORT_ERROR = None
except ImportError:
    import traceback

    yaml = None
    YAML_IMPORT_ERROR = traceback.format_exc()

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.image import (
    check_image_params,
    publish_image,
    registry_clients,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    FBCError,
    PublishError,
    check_one_line,
    decode_utf8,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import load_all_documents
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_layered_image
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

MEDIATYPE_LABEL = "operators.operatorframework.io.bundle.mediatype.v1"
MANIFESTS_LABEL = "operators.operatorframework.io.bundle.manifests.v1"
METADATA_LABEL = "operators.operatorframework.io.bundle.metadata.v1"
PACKAGE_LABEL = "operators.operatorframework.io.bundle.package.v1"
CHANNELS_LABEL = "operators.operatorframework.io.bundle.channels.v1"
DEFAULT_CHANNEL_LABEL = "operators.operatorframework.io.bundle.channel.default.v1"
TEST_MEDIATYPE_LABEL = "operators.operatorframework.io.test.mediatype.v1"
TEST_CONFIG_LABEL = "operators.operatorframework.io.test.config.v1"

REGISTRY_V1 = "registry+v1"
MANIFESTS_DIR = "manifests"
METADATA_DIR = "metadata"
ANNOTATIONS_FILE = "annotations.yaml"
SCORECARD_DIR = "tests/scorecard"
SCORECARD_CONFIG = "config.yaml"
CSV_KIND = "ClusterServiceVersion"

# The labels operator-sdk always writes, with the values it writes (annotations.yaml may spell the directories
# "/manifests/" or "manifests"; any other value would point at a directory the image does not have).
CORE_LABELS = ((MEDIATYPE_LABEL, REGISTRY_V1), (MANIFESTS_LABEL, "manifests/"), (METADATA_LABEL, "metadata/"))
TEST_LABELS = ((TEST_MEDIATYPE_LABEL, "scorecard+v1"), (TEST_CONFIG_LABEL, "tests/scorecard/"))

# Label keys and values written without quotes in a Dockerfile (operator-sdk writes all of them bare); anything
# else is double-quoted, with ``\``, ``"`` and ``$`` (LABEL expands variables) escaped.
_BARE_KEY = re.compile(r"^[A-Za-z0-9._/-]+\Z")
_BARE_VALUE = re.compile(r"^[A-Za-z0-9._/:+,@=-]*\Z")
_BARE_PATH = re.compile(r"^[A-Za-z0-9._/+@-]+\Z")

Bundle = namedtuple("Bundle", ["path", "annotations", "package", "csv_name", "csv_version", "scorecard", "contents", "warnings"])
Bundle.__doc__ = """A bundle directory checked by :func:`read_bundle`: ``annotations`` (str → str, from
``metadata/annotations.yaml``), ``package``, the CSV's ``csv_name`` and ``csv_version`` (None when unset),
``scorecard`` (``tests/scorecard/config.yaml`` exists), ``contents`` (``(directory, image destination)`` pairs, one
layer each) and ``warnings``."""


def _rel(path, name):
    return os.path.join(path, *name.split("/"))


def _read_annotations(path):
    """The ``annotations`` map of ``metadata/annotations.yaml``, as operator-registry decodes it into
    ``map[string]string`` (yaml.v2: scalars keep their text, so ``true`` is the string ``true``)."""
    file_path = _rel(path, METADATA_DIR + "/" + ANNOTATIONS_FILE)
    shown = METADATA_DIR + "/" + ANNOTATIONS_FILE
    if not os.path.isfile(file_path):
        raise PublishError("bundle %s has no %s (operator-sdk generate bundle writes it; OLM reads the package name from it)" % (path, shown))
    with open(file_path, "rb") as f:
        text = decode_utf8(f.read(), "bundle %s: %s" % (path, shown), PublishError)
    try:
        doc = next(iter(yaml.load_all(text, Loader=yaml.BaseLoader)), None)
    except yaml.YAMLError as e:
        raise PublishError("bundle %s: %s is not valid YAML: %s" % (path, shown, excerpt(e, 300))) from None
    annotations = doc.get("annotations") if isinstance(doc, dict) else None
    if not isinstance(annotations, dict):
        raise PublishError("bundle %s: %s has no 'annotations:' map" % (path, shown))
    out = {}
    for key, value in annotations.items():
        if not isinstance(value, str):
            raise PublishError(
                "bundle %s: %s: annotation %s must be a string, not a %s"
                % (path, shown, json.dumps(excerpt(key, 200)), "map" if isinstance(value, dict) else "list")
            )
        out[key] = value
    if not out.get(PACKAGE_LABEL):
        raise PublishError("bundle %s: %s names no package (annotation %s)" % (path, shown, PACKAGE_LABEL))
    return out


def _check_core_annotations(path, annotations):
    """Annotations may leave out the core labels (they are added with operator-sdk's values) but must not
    contradict them: the image is a registry+v1 bundle with ``/manifests/`` and ``/metadata/``."""
    for key, expected in CORE_LABELS:
        value = annotations.get(key)
        if value is None:
            continue
        same = value == expected if key == MEDIATYPE_LABEL else value.strip("/") == expected.strip("/")
        if not same:
            raise PublishError(
                "bundle %s: annotation %s is %s, but this module builds %s bundle images with %s "
                "(the content is copied to /%s)" % (path, key, json.dumps(excerpt(value, 200)), REGISTRY_V1, json.dumps(expected), expected)
            )


def _read_manifests(path):
    """``(csv name, csv version)`` of the flat ``manifests/`` directory; every file must hold Kubernetes objects
    (YAML or JSON documents with apiVersion and kind) and exactly one is a ClusterServiceVersion."""
    directory = _rel(path, MANIFESTS_DIR)
    if not os.path.isdir(directory):
        raise PublishError("bundle %s has no manifests/ directory" % path)
    csvs = []
    for name in sorted(os.listdir(directory)):
        full = os.path.join(directory, name)
        shown = MANIFESTS_DIR + "/" + name
        if os.path.isdir(full):
            raise PublishError("bundle %s: %s is a directory; OLM v1 requires a flat manifests/ directory (subdirectories are not allowed)" % (path, shown))
        if not os.path.isfile(full):
            raise PublishError("bundle %s: %s is not a regular file" % (path, shown))
        with open(full, "rb") as f:
            data = f.read()
        try:
            docs = load_all_documents(data)
        except FBCError as e:
            raise PublishError("bundle %s: %s is not a YAML or JSON manifest: %s" % (path, shown, excerpt(e, 300))) from None
        for doc in docs:
            if not (
                isinstance(doc, dict) and isinstance(doc.get("apiVersion"), str) and doc["apiVersion"] and isinstance(doc.get("kind"), str) and doc["kind"]
            ):
                raise PublishError(
                    "bundle %s: %s is not a YAML or JSON manifest: a document is not a Kubernetes object with apiVersion and kind" % (path, shown)
                )
            if doc["kind"] == CSV_KIND:
                csvs.append((shown, doc))
    if not csvs:
        raise PublishError("bundle %s: no ClusterServiceVersion in manifests/" % path)
    if len(csvs) > 1:
        raise PublishError("bundle %s: more than one ClusterServiceVersion in manifests/ (%s)" % (path, ", ".join(shown for shown, _doc in csvs)))
    shown, csv = csvs[0]
    meta = csv.get("metadata") if isinstance(csv.get("metadata"), dict) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise PublishError("bundle %s: the ClusterServiceVersion in %s has no metadata.name" % (path, shown))
    version = (csv.get("spec") if isinstance(csv.get("spec"), dict) else {}).get("version")
    return name, version if isinstance(version, str) and version else None


def read_bundle(path):
    """Check the bundle directory ``path`` and return a :class:`Bundle` (raises ``PublishError``)."""
    if yaml is None:
        raise PublishError("PyYAML is required to read metadata/annotations.yaml")
    if not os.path.isdir(path):
        raise PublishError("path %s is not a directory" % path)
    csv_name, csv_version = _read_manifests(path)
    annotations = _read_annotations(path)
    _check_core_annotations(path, annotations)
    warnings = []
    scorecard = os.path.isfile(_rel(path, SCORECARD_DIR + "/" + SCORECARD_CONFIG))
    contents = [(_rel(path, MANIFESTS_DIR), "/manifests/"), (_rel(path, METADATA_DIR), "/metadata/")]
    if scorecard:
        contents.append((_rel(path, SCORECARD_DIR), "/tests/scorecard/"))
    elif os.path.isdir(_rel(path, SCORECARD_DIR)):
        warnings.append("bundle %s: tests/scorecard/ has no config.yaml and is not added to the image (operator-sdk adds it only with its config.yaml)" % path)
    if not scorecard and any(key in annotations for key, _value in TEST_LABELS):
        warnings.append(
            "bundle %s: metadata/annotations.yaml has scorecard test annotations, but there is no tests/scorecard/config.yaml to add to the image" % path
        )
    return Bundle(path, annotations, annotations[PACKAGE_LABEL], csv_name, csv_version, scorecard, contents, warnings)


def _label_groups(bundle):
    """``(core, other, test)`` lists of ``(key, value)`` in operator-sdk's bundle.Dockerfile order."""
    annotations = bundle.annotations
    core = [(key, annotations.get(key, value)) for key, value in CORE_LABELS]
    core.append((PACKAGE_LABEL, annotations[PACKAGE_LABEL]))
    for key in (CHANNELS_LABEL, DEFAULT_CHANNEL_LABEL):
        if key in annotations:
            core.append((key, annotations[key]))
    test = [(key, annotations.get(key, value)) for key, value in TEST_LABELS if bundle.scorecard or key in annotations]
    taken = set(key for key, _value in core + test)
    other = sorted(((k, v) for k, v in annotations.items() if k not in taken), key=lambda kv: ("%s=%s" % kv).encode("utf-8"))
    return core, other, test


def _extra_labels(bundle, labels):
    """User ``labels`` as strings; one that contradicts a bundle label is refused (the image labels and
    annotations.yaml would disagree)."""
    extra = {}
    bundle_labels = dict(kv for group in _label_groups(bundle) for kv in group)
    for key, value in (labels or {}).items():
        key, value = str(key), str(value)
        if key in bundle_labels and bundle_labels[key] != value:
            raise PublishError(
                "labels: %s=%s contradicts the bundle's %s=%s (from metadata/annotations.yaml or "
                "operator-sdk's defaults); change the annotation instead"
                % (key, json.dumps(excerpt(value, 200)), key, json.dumps(excerpt(bundle_labels[key], 200)))
            )
        if key not in bundle_labels:
            extra[key] = value
    return extra


def bundle_labels(bundle, labels=None):
    """Every image label: the bundle's (annotations plus operator-sdk's core and scorecard labels) and the extra
    ``labels``."""
    out = dict(kv for group in _label_groups(bundle) for kv in group)
    out.update(_extra_labels(bundle, labels))
    return out


def _quote(text, bare):
    check_one_line("label %s" % json.dumps(excerpt(text, 100)), text, PublishError)
    if bare.match(text):
        return text
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")


def _label_line(key, value):
    if not key:
        raise PublishError("label keys must not be empty")
    return "LABEL %s=%s\n" % (_quote(key, _BARE_KEY), _quote(value, _BARE_VALUE))


def _copy_line(src, dest):
    check_one_line("bundle path", src, PublishError)
    if _BARE_PATH.match(src):
        return "COPY %s %s\n" % (src, dest)
    return "COPY %s\n" % json.dumps([src, dest])


def dockerfile_bundle_dir(path, dockerfile_path=None):
    """How the Dockerfile names the bundle directory: relative to the directory of ``dockerfile_path`` (the build
    context, as operator-sdk's ``bundle.Dockerfile`` in the project root names ``bundle/``), else its base name."""
    path = os.path.abspath(path)
    if dockerfile_path:
        rel = os.path.relpath(path, os.path.dirname(os.path.abspath(dockerfile_path)))
    else:
        rel = os.path.basename(path)
    return rel.replace(os.sep, "/")


def bundle_dockerfile(bundle, labels=None, bundle_dir=None):
    """The ``bundle.Dockerfile`` operator-sdk generates for ``bundle`` (byte for byte for its own bundles), with
    the extra ``labels`` in a last block. ``bundle_dir``: the directory the COPY lines name
    (:func:`dockerfile_bundle_dir`)."""
    core, other, test = _label_groups(bundle)
    extra = _extra_labels(bundle, labels)
    bundle_dir = bundle_dir or dockerfile_bundle_dir(bundle.path)
    text = "FROM scratch\n\n# Core bundle labels.\n"
    text += "".join(_label_line(k, v) for k, v in core + other)
    if test:
        text += "\n# Labels for testing.\n" + "".join(_label_line(k, v) for k, v in test)
    if extra:
        text += "\n# Other labels.\n" + "".join(_label_line(k, extra[k]) for k in sorted(extra))
    text += "\n# Copy files to locations specified by labels.\n"
    prefix = "" if bundle_dir in ("", ".") else bundle_dir.rstrip("/") + "/"
    for src, dest in bundle.contents:
        rel = os.path.relpath(src, bundle.path).replace(os.sep, "/")
        text += _copy_line(prefix + rel, dest)
    return text


def bundle_facts(bundle):
    """The module's bundle results: ``package`` and ``csv`` (``name``, ``version``)."""
    return dict(package=bundle.package, csv=dict(name=bundle.csv_name, version=bundle.csv_version))


def execute(module):
    p = module.params
    check_image_params(p)
    bundle = read_bundle(p["path"])
    target = parse_reference(p["image"]) if p["image"] and not p["dockerfile_only"] else None
    result = dict(changed=False, warnings=list(bundle.warnings), **bundle_facts(bundle))
    result["dockerfile"] = bundle_dockerfile(bundle, p["labels"], dockerfile_bundle_dir(p["path"], p["dockerfile_path"]))

    def build():
        image = build_layered_image(
            bundle.contents, labels=bundle_labels(bundle, p["labels"]), manifest_format=p["manifest_format"], platform=p["platform"]
        )
        return image, registry_clients(p, target)[1]

    return publish_image(p, result, target, build, check_mode=module.check_mode, diff=module._diff, keep_tag=False)
