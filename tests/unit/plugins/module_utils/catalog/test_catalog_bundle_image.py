"""catalog.bundle_image: which bundle directories become bundle images, their labels and operator-sdk's
bundle.Dockerfile, without a module or a registry."""

import gzip
import io
import tarfile

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.catalog import bundle_image as rules
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import PublishError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.image import build_layered_image

# operator-sdk testdata/go/v4/memcached-operator (commit 60559f3e002e0a6eccd7260935ef3aa1d154c66e):
# bundle/metadata/annotations.yaml and the bundle.Dockerfile generated next to it, byte for byte.
SDK_ANNOTATIONS = """annotations:
  # Core bundle annotations.
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: memcached-operator
  operators.operatorframework.io.bundle.channels.v1: alpha

  # Annotations for testing.
  operators.operatorframework.io.test.mediatype.v1: scorecard+v1
  operators.operatorframework.io.test.config.v1: tests/scorecard/
"""
SDK_DOCKERFILE = """FROM scratch

# Core bundle labels.
LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=memcached-operator
LABEL operators.operatorframework.io.bundle.channels.v1=alpha

# Labels for testing.
LABEL operators.operatorframework.io.test.mediatype.v1=scorecard+v1
LABEL operators.operatorframework.io.test.config.v1=tests/scorecard/

# Copy files to locations specified by labels.
COPY bundle/manifests /manifests/
COPY bundle/metadata /metadata/
COPY bundle/tests/scorecard /tests/scorecard/
"""

CSV = """apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: demo.v0.1.0
spec:
  version: 0.1.0
  installModes:
  - {type: AllNamespaces, supported: true}
"""
CRD = '{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "a.b"}}'
ANNOTATIONS = """annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: demo
  operators.operatorframework.io.bundle.channels.v1: alpha,stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
"""


def make_bundle(root, annotations=ANNOTATIONS, manifests=None, scorecard=None):
    """A bundle directory: ``manifests`` maps file name → text/bytes (None: no manifests/ directory);
    ``annotations`` None: no annotations.yaml; ``scorecard``: text of tests/scorecard/config.yaml."""
    root.mkdir(parents=True, exist_ok=True)
    manifests = {"demo.clusterserviceversion.yaml": CSV, "a.b.crd.json": CRD} if manifests is None else manifests
    if manifests is not False:
        (root / "manifests").mkdir()
        for name, data in manifests.items():
            path = root / "manifests" / name
            if data is None:
                path.mkdir()
            elif isinstance(data, bytes):
                path.write_bytes(data)
            else:
                path.write_text(data)
    (root / "metadata").mkdir()
    if isinstance(annotations, bytes):
        (root / "metadata" / "annotations.yaml").write_bytes(annotations)
    elif annotations is not None:
        (root / "metadata" / "annotations.yaml").write_text(annotations)
    if scorecard is not None:
        (root / "tests" / "scorecard").mkdir(parents=True)
        if scorecard:
            (root / "tests" / "scorecard" / "config.yaml").write_text(scorecard)
    return root


def test_dockerfile_is_operator_sdks_byte_for_byte(tmp_path):
    bundle_dir = make_bundle(tmp_path / "project" / "bundle", annotations=SDK_ANNOTATIONS, scorecard="kind: Configuration\n")
    bundle = rules.read_bundle(str(bundle_dir))
    bundle_dir_name = rules.dockerfile_bundle_dir(str(bundle_dir), str(tmp_path / "project" / "bundle.Dockerfile"))
    assert bundle_dir_name == "bundle"
    assert rules.bundle_dockerfile(bundle, bundle_dir=bundle_dir_name) == SDK_DOCKERFILE
    # every annotation is a label, and nothing else
    assert rules.bundle_labels(bundle) == {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": "memcached-operator",
        "operators.operatorframework.io.bundle.channels.v1": "alpha",
        "operators.operatorframework.io.test.mediatype.v1": "scorecard+v1",
        "operators.operatorframework.io.test.config.v1": "tests/scorecard/",
    }
    assert [dest for _src, dest in bundle.contents] == ["/manifests/", "/metadata/", "/tests/scorecard/"]
    assert bundle.scorecard is True and bundle.warnings == []


def test_other_annotations_follow_the_core_labels_sorted_as_key_value(tmp_path):
    """operator-sdk's OtherLabels (the metrics labels) are sorted as ``key=value`` strings after the default
    channel; without a scorecard config there is no test block and no third COPY."""
    annotations = ANNOTATIONS + (
        "  operators.operatorframework.io.metrics.project_layout: go.kubebuilder.io/v4\n"
        "  operators.operatorframework.io.metrics.mediatype.v1: metrics+v1\n"
        "  operators.operatorframework.io.metrics.builder: operator-sdk-v1.39.2\n"
        "  com.redhat.openshift.versions: v4.16-v4.20\n"
    )
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "0.1.0", annotations=annotations)))
    assert (
        rules.bundle_dockerfile(bundle)
        == """FROM scratch

# Core bundle labels.
LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=demo
LABEL operators.operatorframework.io.bundle.channels.v1=alpha,stable
LABEL operators.operatorframework.io.bundle.channel.default.v1=stable
LABEL com.redhat.openshift.versions=v4.16-v4.20
LABEL operators.operatorframework.io.metrics.builder=operator-sdk-v1.39.2
LABEL operators.operatorframework.io.metrics.mediatype.v1=metrics+v1
LABEL operators.operatorframework.io.metrics.project_layout=go.kubebuilder.io/v4

# Copy files to locations specified by labels.
COPY 0.1.0/manifests /manifests/
COPY 0.1.0/metadata /metadata/
"""
    )
    assert (bundle.package, bundle.csv_name, bundle.csv_version) == ("demo", "demo.v0.1.0", "0.1.0")
    assert rules.bundle_facts(bundle) == {"package": "demo", "csv": {"name": "demo.v0.1.0", "version": "0.1.0"}}


def test_missing_core_annotations_get_operator_sdks_values_and_slashes_are_accepted(tmp_path):
    annotations = "annotations:\n  operators.operatorframework.io.bundle.package.v1: demo\n  operators.operatorframework.io.bundle.manifests.v1: /manifests/\n"
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b", annotations=annotations)))
    assert rules.bundle_labels(bundle) == {
        "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
        "operators.operatorframework.io.bundle.manifests.v1": "/manifests/",
        "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
        "operators.operatorframework.io.bundle.package.v1": "demo",
    }


def test_annotation_scalars_keep_their_text(tmp_path):
    """operator-registry decodes annotations into map[string]string with yaml.v2: ``true`` and ``1.10`` stay text."""
    annotations = ANNOTATIONS + "  com.redhat.delivery.operator.bundle: true\n  example.com/level: 1.10\n  example.com/empty:\n"
    labels = rules.bundle_labels(rules.read_bundle(str(make_bundle(tmp_path / "b", annotations=annotations))))
    assert labels["com.redhat.delivery.operator.bundle"] == "true" and labels["example.com/level"] == "1.10"
    assert labels["example.com/empty"] == ""


@pytest.mark.parametrize(
    "kwargs,remove,msg",
    [
        ({"manifests": False}, None, "has no manifests/ directory"),
        ({"annotations": None}, None, "has no metadata/annotations.yaml"),
        ({}, "metadata", "has no metadata/annotations.yaml"),
        ({"annotations": "operators.operatorframework.io.bundle.package.v1: demo\n"}, None, "has no 'annotations:' map"),
        ({"annotations": "annotations: [a, b]\n"}, None, "has no 'annotations:' map"),
        ({"annotations": "- annotations\n"}, None, "has no 'annotations:' map"),
        ({"annotations": ""}, None, "has no 'annotations:' map"),
        ({"annotations": "annotations: {a: [1]}\n"}, None, 'annotation "a" must be a string, not a list'),
        ({"annotations": "annotations: {a: {b: c}}\n"}, None, 'annotation "a" must be a string, not a map'),
        ({"annotations": "annotations: [\n"}, None, "metadata/annotations.yaml is not valid YAML"),
        ({"annotations": b'annotations:\n  a: "\xff"\n'}, None, "metadata/annotations.yaml: invalid UTF-8 at byte 19"),
        ({"manifests": {"csv.yaml": CSV, "x.yaml": b"kind: \xff"}}, None, "manifests/x.yaml is not a YAML or JSON manifest: invalid UTF-8 at byte 6"),
        (
            {"annotations": "annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n"},
            None,
            "names no package (annotation operators.operatorframework.io.bundle.package.v1)",
        ),
        ({"annotations": "annotations:\n  operators.operatorframework.io.bundle.package.v1: ''\n"}, None, "names no package"),
        (
            {"annotations": ANNOTATIONS.replace("registry+v1", "plain")},
            None,
            'annotation operators.operatorframework.io.bundle.mediatype.v1 is "plain", but this module builds registry+v1',
        ),
        (
            {"annotations": ANNOTATIONS.replace("manifests.v1: manifests/", "manifests.v1: deploy/")},
            None,
            'annotation operators.operatorframework.io.bundle.manifests.v1 is "deploy/"',
        ),
        (
            {"annotations": ANNOTATIONS.replace("metadata.v1: metadata/", "metadata.v1: meta/")},
            None,
            'annotation operators.operatorframework.io.bundle.metadata.v1 is "meta/"',
        ),
        (
            {"manifests": {"demo.clusterserviceversion.yaml": CSV, "crds": None}},
            None,
            "manifests/crds is a directory; OLM v1 requires a flat manifests/ directory",
        ),
        ({"manifests": {"crd.yaml": CRD}}, None, "no ClusterServiceVersion in manifests/"),
        ({"manifests": {}}, None, "no ClusterServiceVersion in manifests/"),
        (
            {"manifests": {"a.yaml": CSV, "b.yaml": CSV.replace("v0.1.0", "v0.2.0")}},
            None,
            "more than one ClusterServiceVersion in manifests/ (manifests/a.yaml, manifests/b.yaml)",
        ),
        ({"manifests": {"csv.yaml": CSV + "---\n" + CSV}}, None, "more than one ClusterServiceVersion"),
        ({"manifests": {"csv.yaml": CSV, "icon.png": b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe"}}, None, "manifests/icon.png is not a YAML or JSON manifest"),
        (
            {"manifests": {"csv.yaml": CSV, "README.md": "Read me first.\n"}},
            None,
            "manifests/README.md is not a YAML or JSON manifest: a document is not a Kubernetes object",
        ),
        ({"manifests": {"csv.yaml": CSV, "broken.yaml": "kind: [\n"}}, None, "manifests/broken.yaml is not a YAML or JSON"),
        (
            {"manifests": {"csv.yaml": CSV, "cm.yaml": "kind: ConfigMap\nmetadata: {name: x}\n"}},
            None,
            "manifests/cm.yaml is not a YAML or JSON manifest: a document is not a Kubernetes object with apiVersion and kind",
        ),
        ({"manifests": {"csv.json": '{"apiVersion": "v1", "kind": 3}'}}, None, "manifests/csv.json is not a YAML or JSON"),
        ({"manifests": {"csv.yaml": CSV.replace("  name: demo.v0.1.0\n", "")}}, None, "the ClusterServiceVersion in manifests/csv.yaml has no metadata.name"),
    ],
)
def test_refusals(tmp_path, kwargs, remove, msg):
    root = make_bundle(tmp_path / "bundle", **kwargs)
    if remove:
        import shutil

        shutil.rmtree(str(root / remove))
    with pytest.raises(PublishError) as exc:
        rules.read_bundle(str(root))
    assert msg in str(exc.value)
    assert str(root) in str(exc.value)


def test_not_a_directory(tmp_path):
    with pytest.raises(PublishError, match="is not a directory"):
        rules.read_bundle(str(tmp_path / "missing"))


def test_empty_and_json_manifests_are_accepted(tmp_path):
    """An empty file holds no objects (allowed); JSON is YAML; a CSV without spec.version has version None."""
    csv = '{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "x.v1"}}'
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b", manifests={"csv.json": csv, ".keep": ""})))
    assert (bundle.csv_name, bundle.csv_version) == ("x.v1", None)


def test_scorecard_without_config_is_left_out_with_a_warning(tmp_path):
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b", scorecard="")))
    assert bundle.scorecard is False and [d for _s, d in bundle.contents] == ["/manifests/", "/metadata/"]
    assert len(bundle.warnings) == 1 and "tests/scorecard/ has no config.yaml" in bundle.warnings[0]
    assert "operators.operatorframework.io.test.config.v1" not in rules.bundle_labels(bundle)


def test_scorecard_annotations_without_config_stay_labels_with_a_warning(tmp_path):
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b", annotations=SDK_ANNOTATIONS)))
    assert bundle.scorecard is False and "no tests/scorecard/config.yaml" in bundle.warnings[0]
    assert rules.bundle_labels(bundle)["operators.operatorframework.io.test.config.v1"] == "tests/scorecard/"
    assert "# Labels for testing.\n" in rules.bundle_dockerfile(bundle)
    assert "COPY b/tests/scorecard" not in rules.bundle_dockerfile(bundle)


def test_scorecard_config_adds_the_test_labels_the_annotations_leave_out(tmp_path):
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b", scorecard="kind: Configuration\n")))
    labels = rules.bundle_labels(bundle)
    assert labels["operators.operatorframework.io.test.mediatype.v1"] == "scorecard+v1"
    assert labels["operators.operatorframework.io.test.config.v1"] == "tests/scorecard/"


def test_extra_labels(tmp_path):
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "my bundle")))
    extra = {
        "org.opencontainers.image.source": "https://example.com/x",
        "z": 1,
        "q": 'say "$HOME"\\',
        "operators.operatorframework.io.bundle.package.v1": "demo",
    }
    text = rules.bundle_dockerfile(bundle, extra)
    assert text.endswith(
        "\n# Other labels.\n"
        "LABEL org.opencontainers.image.source=https://example.com/x\n"
        'LABEL q="say \\"\\$HOME\\"\\\\"\n'
        "LABEL z=1\n"
        "\n# Copy files to locations specified by labels.\n"
        'COPY ["my bundle/manifests", "/manifests/"]\n'
        'COPY ["my bundle/metadata", "/metadata/"]\n'
    )
    labels = rules.bundle_labels(bundle, extra)
    assert labels["z"] == "1" and labels["q"] == 'say "$HOME"\\' and labels["operators.operatorframework.io.bundle.package.v1"] == "demo"


@pytest.mark.parametrize(
    "labels,msg",
    [
        ({"operators.operatorframework.io.bundle.package.v1": "other"}, "contradicts the bundle's"),
        ({"operators.operatorframework.io.bundle.mediatype.v1": "plain"}, "contradicts the bundle's"),
        ({"a": "line\nLABEL b=c"}, "must not contain a line break"),
        ({"": "x"}, "label keys must not be empty"),
    ],
)
def test_extra_label_refusals(tmp_path, labels, msg):
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b")))
    with pytest.raises(PublishError, match=msg):
        rules.bundle_dockerfile(bundle, labels)


def test_annotation_with_a_line_break_is_refused_in_the_dockerfile(tmp_path):
    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b", annotations=ANNOTATIONS + '  x: "a\\nLABEL y=z"\n')))
    with pytest.raises(PublishError, match="must not contain a line break"):
        rules.bundle_dockerfile(bundle)


def test_dockerfile_bundle_dir(tmp_path):
    assert rules.dockerfile_bundle_dir(str(tmp_path / "bundles" / "0.0.1")) == "0.0.1"
    assert rules.dockerfile_bundle_dir(str(tmp_path / "bundles" / "0.0.1") + "/", str(tmp_path / "bundle.Dockerfile")) == "bundles/0.0.1"
    assert rules.dockerfile_bundle_dir(str(tmp_path / "b"), str(tmp_path / "b" / "bundle.Dockerfile")) == "."
    text = rules.bundle_dockerfile(rules.read_bundle(str(make_bundle(tmp_path / "b"))), bundle_dir=".")
    assert "COPY manifests /manifests/\nCOPY metadata /metadata/\n" in text


def _layer_names(image, index):
    data = image.blobs[image.layers[index].digest]
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        return [(m.name, m.mode, m.uid, m.mtime) for m in tar.getmembers()]


def test_image_from_the_bundle_contents(tmp_path):
    root = make_bundle(tmp_path / "b", scorecard="kind: Configuration\n")
    (root / "README.md").write_text("not in the image\n")
    bundle = rules.read_bundle(str(root))
    image = build_layered_image(bundle.contents, labels=rules.bundle_labels(bundle))
    assert len(image.manifest["layers"]) == 3 and len(image.config["rootfs"]["diff_ids"]) == 3
    assert [h["created_by"] for h in image.config["history"]] == [
        "ADD manifests /manifests/ # kubeforge.operators",
        "ADD metadata /metadata/ # kubeforge.operators",
        "ADD scorecard /tests/scorecard/ # kubeforge.operators",
    ]
    assert _layer_names(image, 0) == [
        ("manifests", 0o755, 0, 0),
        ("manifests/a.b.crd.json", 0o644, 0, 0),
        ("manifests/demo.clusterserviceversion.yaml", 0o644, 0, 0),
    ]
    assert _layer_names(image, 1) == [("metadata", 0o755, 0, 0), ("metadata/annotations.yaml", 0o644, 0, 0)]
    assert [n for n, *_rest in _layer_names(image, 2)] == ["tests", "tests/scorecard", "tests/scorecard/config.yaml"]
    assert image.labels == rules.bundle_labels(bundle)
    # deterministic: the same input gives the same digest; one changed byte changes it
    again = build_layered_image(rules.read_bundle(str(root)).contents, labels=rules.bundle_labels(bundle))
    assert again.digest == image.digest and again.manifest_bytes == image.manifest_bytes
    (root / "metadata" / "annotations.yaml").write_text(ANNOTATIONS.replace("stable\n", "stablE\n"))
    changed = rules.read_bundle(str(root))
    other = build_layered_image(changed.contents, labels=rules.bundle_labels(changed))
    assert other.digest != image.digest and other.layers[0].digest == image.layers[0].digest
    assert other.layers[1].digest != image.layers[1].digest


def test_image_fact_without_the_tag(tmp_path):
    """bundle_image returns ``registry/repository@digest``: containers/image (opm, catalogd, operator-controller)
    refuses references with both a tag and a digest."""
    from ansible_collections.kubeforge.operators.plugins.module_utils.catalog.image import image_facts
    from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

    bundle = rules.read_bundle(str(make_bundle(tmp_path / "b")))
    image = build_layered_image(bundle.contents, labels=rules.bundle_labels(bundle))
    target = parse_reference("quay.io/example/bundle:v0.1.0")
    assert image_facts(image, target, keep_tag=False)["image"] == "quay.io/example/bundle@" + image.digest
    assert image_facts(image, target)["image"] == "quay.io/example/bundle:v0.1.0@" + image.digest
