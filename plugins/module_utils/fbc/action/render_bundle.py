# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Bundle rendering: bundle directory -> ``olm.bundle`` blob (opm parity), and the pluggable bundle renderer used by
templates.

Sources ported: operator-registry pkg/registry/parse.go, bundle.go, csv.go, registry_to_model.go and
alpha/action/render.go (``bundleToDeclcfg``, ``getRelatedImages``, ``moveBundleObjectsToEndOfPropertySlices``).

A *bundle renderer* is any callable ``renderer(image_ref) -> DeclarativeConfig`` (opm's ``template.BundleRenderer``).
:class:`BundleLookup` is the offline implementation: it resolves an image reference from already rendered FBC
catalogs, from a map image -> unpacked bundle directory, and finally from a pluggable ``image_puller`` callable
``puller(image_ref) -> path of an unpacked bundle directory`` (``manifests/`` + ``metadata/``).

Renderers may attach the CSV of each bundle (opm's non-serialized ``Bundle.CsvJSON``) to the returned config as the
attribute ``csv_json`` (dict bundle name -> CSV dict); templates use it for package metadata and migrations.
:class:`BundleLookup` also attaches ``lookup_packages`` (dict package name -> the ``olm.package`` blob of the lookup
catalog the bundle came from): when a catalog's bundles carry no CSV (``olm.csv.metadata`` only), the semver template
takes the package icon from there, so re-rendering a committed catalog keeps its icon.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.migrate import (
    TYPE_BUNDLE_OBJECT,
    TYPE_CSV_METADATA,
    check_migrate_level,
    csv_from_bundle,
    migrate_bundle,
    wants_csv_metadata,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg import load as core_load
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.config import DeclarativeConfig
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import (
    BundleNotFoundError,
    BundleRenderError,
    decode_utf8,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.golang.json import go_marshal, go_sort_key
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import (
    CREDENTIALS_MESSAGE,
    has_credentials,
    near_references,
    shown_reference,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.template.util import load_first_document

ANNOTATION_PACKAGE = "operators.operatorframework.io.bundle.package.v1"
ANNOTATION_CHANNELS = "operators.operatorframework.io.bundle.channels.v1"
ANNOTATION_DEFAULT_CHANNEL = "operators.operatorframework.io.bundle.channel.default.v1"
CSV_PROPERTIES_ANNOTATION = "olm.properties"


def is_bundle_dir(path):
    """opm ``isBundle``: a directory with both ``manifests/`` and ``metadata/`` sub-directories."""
    return os.path.isdir(os.path.join(path, "manifests")) and os.path.isdir(os.path.join(path, "metadata"))


def _read_doc(path):
    """First document of a YAML/JSON file, or None if it cannot be decoded (opm logs a warning and skips).

    Invalid UTF-8 is an error naming the file and the offset of the first bad byte: opm's YAML decoder would skip such
    a file with a warning (a CSV with one bad byte silently vanishing), and its JSON decoder would replace the byte."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    text = decode_utf8(data, path, BundleRenderError)
    try:
        return load_first_document(text)
    except ValueError:
        return None


def _prop(type_, value):
    return {"type": type_, "value": value}


def _gvk(group, kind, version):
    return {"group": group, "kind": kind, "version": version}


def _as_str(v):
    return v if isinstance(v, str) else ""


def _crd_provided(obj):
    """Provided APIs of one CRD object: set of (group, version, kind, plural)."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    group, kind, plural = _as_str(spec.get("group")), _as_str(names.get("kind")), _as_str(names.get("plural"))
    out = []
    api = _as_str(obj.get("apiVersion"))
    if api == "apiextensions.k8s.io/v1beta1" and _as_str(spec.get("version")):
        out.append((group, spec["version"], kind, plural))
    for v in spec.get("versions") or ():
        if isinstance(v, dict):
            out.append((group, _as_str(v.get("name")), kind, plural))
    return out


def _csv_section(csv, key):
    spec = csv.get("spec") if isinstance(csv.get("spec"), dict) else {}
    sec = spec.get(key)
    if not isinstance(sec, dict):
        return [], []
    owned = [x for x in (sec.get("owned") or ()) if isinstance(x, dict)]
    required = [x for x in (sec.get("required") or ()) if isinstance(x, dict)]
    return owned, required


def _split_crd_name(name):
    parts = name.split(".", 1)
    if len(parts) < 2:
        raise BundleRenderError("couldn't parse plural.group from crd name: %s" % name)
    return parts[0], parts[1]


def _operator_images(csv):
    """csv.GetOperatorImages(): container and initContainer images of the install deployments (ordered set)."""
    spec = csv.get("spec") if isinstance(csv.get("spec"), dict) else {}
    install = spec.get("install") if isinstance(spec.get("install"), dict) else {}
    if install.get("strategy") != "deployment":
        return []
    images = {}
    ispec = install.get("spec") if isinstance(install.get("spec"), dict) else {}
    for d in ispec.get("deployments") or ():
        if not isinstance(d, dict):
            continue
        pod = d
        for key in ("spec", "template", "spec"):
            pod = pod.get(key) if isinstance(pod, dict) else None
        if not isinstance(pod, dict):
            continue
        for key in ("containers", "initContainers"):
            for c in pod.get(key) or ():
                if isinstance(c, dict):
                    images.setdefault(_as_str(c.get("image")), None)
    return list(images)


def _related_images(csv, bundle_image):
    spec = csv.get("spec") if isinstance(csv.get("spec"), dict) else {}
    related = []
    seen = set()
    for ri in spec.get("relatedImages") or ():
        if isinstance(ri, dict):
            img = _as_str(ri.get("image"))
            related.append({"name": _as_str(ri.get("name")), "image": img})
            seen.add(img)
    if bundle_image and bundle_image not in seen:
        related.append({"name": "", "image": bundle_image})
    for img in _operator_images(csv):
        if img not in seen:
            related.append({"name": "", "image": img})
        seen.add(img)
    related.sort(key=lambda r: go_sort_key(r["image"]))
    return related


def _sort_key(p):
    return (go_sort_key(p["type"]), go_sort_key(go_marshal(p["value"])))


def _move_objects_to_end(props):
    head = [p for p in props if p["type"] not in (TYPE_BUNDLE_OBJECT, TYPE_CSV_METADATA)]
    tail = [p for p in props if p["type"] in (TYPE_BUNDLE_OBJECT, TYPE_CSV_METADATA)]
    return head + tail


def parse_bundle_metadata(metadata_dir):
    """``(annotations, dependencies, properties)`` of a bundle's ``metadata/`` directory, as opm reads them."""
    annotations = dependencies = properties = None
    try:
        names = sorted(os.listdir(metadata_dir))
    except OSError as e:
        raise BundleRenderError("error opening metadata directory: %s" % e) from e
    for name in names:
        path = os.path.join(metadata_dir, name)
        if not os.path.isfile(path):
            continue
        doc = _read_doc(path)
        if not isinstance(doc, dict):
            continue
        if annotations is None:
            a = doc.get("annotations")
            if isinstance(a, dict) and any(_as_str(a.get(k)) for k in (
                    ANNOTATION_PACKAGE, ANNOTATION_CHANNELS, ANNOTATION_DEFAULT_CHANNEL)):
                annotations = a
        if dependencies is None:
            d = doc.get("dependencies")
            if isinstance(d, list) and d:
                dependencies = d
        if properties is None:
            p = doc.get("properties")
            if isinstance(p, list) and p:
                properties = p
    if annotations is None:
        raise BundleRenderError("Could not find annotations file")
    return annotations, dependencies or [], properties or []


def _parse_manifests(manifests_dir):
    try:
        names = sorted(os.listdir(manifests_dir))
    except OSError as e:
        raise BundleRenderError("error opening manifests directory: %s" % e) from e
    objects = []
    csv = None
    for name in names:
        if name.startswith("."):
            continue
        path = os.path.join(manifests_dir, name)
        if os.path.isdir(path):
            continue
        obj = _read_doc(path)
        if not isinstance(obj, dict) or not obj:
            continue
        if obj.get("kind") == "ClusterServiceVersion":
            if csv is not None:
                continue
            csv = obj
        objects.append(obj)
    if not objects:
        raise BundleRenderError("no bundle objects found")
    if csv is None:
        raise BundleRenderError("no csv in bundle")
    return objects, csv


def _sorted_keys(v):
    if isinstance(v, dict):
        return {k: _sorted_keys(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [_sorted_keys(x) for x in v]
    return v


def _typed_value(p, idx):
    if not isinstance(p, dict):
        raise BundleRenderError("parse property[%d]: not an object" % idx)
    return _as_str(p.get("type")), p.get("value")


def render_bundle_dir_blob(path, image=""):
    """Render one bundle directory. Returns ``(blob, csv)``: the olm.bundle dict (struct field order) and the CSV.

    ``image`` is the bundle image to record (opm leaves it "" for a directory).
    """
    if not os.path.isdir(path):
        raise BundleRenderError("ref %s is not a directory" % json.dumps(path))
    if not is_bundle_dir(path):
        raise BundleRenderError("%s is not a bundle directory: manifests/ and metadata/ are required"
                                % json.dumps(path))
    objects, csv = _parse_manifests(os.path.join(path, "manifests"))
    annotations, dependencies, file_props = parse_bundle_metadata(os.path.join(path, "metadata"))
    meta = csv.get("metadata") if isinstance(csv.get("metadata"), dict) else {}
    spec = csv.get("spec") if isinstance(csv.get("spec"), dict) else {}
    name = _as_str(meta.get("name"))
    package = _as_str(annotations.get(ANNOTATION_PACKAGE))
    version = spec.get("version")
    if version is None:
        version = ""
    elif not isinstance(version, str):
        raise BundleRenderError("get version: json: cannot unmarshal %s into Go value of type string"
                                % ("number" if isinstance(version, (int, float)) else type(version).__name__))
    release = _as_str(spec.get("release"))

    # provided APIs (CRDs in the bundle + owned APIServices), keyed with plural for the owned-CRD check
    provided = {}
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition":
            for key in _crd_provided(obj):
                provided.setdefault(key, None)
    owned_crds, required_crds = _csv_section(csv, "customresourcedefinitions")
    owned_apis, required_apis = _csv_section(csv, "apiservicedefinitions")
    for api in owned_apis:
        provided.setdefault((_as_str(api.get("group")), _as_str(api.get("version")), _as_str(api.get("kind")),
                             _as_str(api.get("name"))), None)
    for crd in owned_crds:
        plural, group = _split_crd_name(_as_str(crd.get("name")))
        key = (group, _as_str(crd.get("version")), _as_str(crd.get("kind")), plural)
        if key not in provided:
            found = " ".join("%s/%s/%s (%s)" % k for k in provided)
            raise BundleRenderError("error checking provided apis in bundle %s: couldn't find %s/%s/%s (%s) in bundle. "
                                    "found: map[%s]" % (name, key[0], key[1], key[2], key[3], found))
    required = {}
    for crd in required_crds:
        plural, group = _split_crd_name(_as_str(crd.get("name")))
        required.setdefault((group, _as_str(crd.get("version")), _as_str(crd.get("kind"))), None)
    for api in required_apis:
        required.setdefault((_as_str(api.get("group")), _as_str(api.get("version")), _as_str(api.get("kind"))), None)

    # bundle.Properties = properties file + derived (olm.package from annotations, then CSV olm.properties)
    csv_props = []
    ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
    raw = ann.get(CSV_PROPERTIES_ANNOTATION)
    if isinstance(raw, str) and raw:
        try:
            parsed = json.loads(raw)
            if isinstance(parsed, list):
                csv_props = [p for p in parsed if isinstance(p, dict)]
        except ValueError:
            csv_props = []  # opm logs a warning and ignores the annotation
    derived = []
    if package:
        pv = {"packageName": package, "version": version}
        if release:
            pv["release"] = release
        derived.append(_prop("olm.package", pv))
    all_props = list(file_props) + derived + csv_props

    provided_gvks = {}
    required_gvks = {}
    package_prop = None
    other = []
    n_file = len(file_props)
    for i, p in enumerate(all_props):
        t, v = _typed_value(p, i)
        if i < n_file:
            v = _sorted_keys(v)  # metadata files go through YAML->JSON (keys sorted); the CSV annotation stays raw
        if t == "olm.gvk":
            v = v if isinstance(v, dict) else {}
            provided_gvks.setdefault((_as_str(v.get("group")), _as_str(v.get("kind")), _as_str(v.get("version"))), None)
        elif t == "olm.package":
            v = v if isinstance(v, dict) else {}
            pv = {"packageName": _as_str(v.get("packageName")), "version": _as_str(v.get("version"))}
            if _as_str(v.get("release")):
                pv["release"] = v["release"]
            package_prop = _prop("olm.package", pv)
        else:
            other.append(_prop(t, v))
    package_required = []
    for i, p in enumerate(dependencies):
        t, v = _typed_value(p, i)
        v = _sorted_keys(v)
        if t == "olm.gvk":
            v = v if isinstance(v, dict) else {}
            required_gvks.setdefault((_as_str(v.get("group")), _as_str(v.get("kind")), _as_str(v.get("version"))), None)
        elif t == "olm.package":
            v = v if isinstance(v, dict) else {}
            package_required.append(_prop("olm.package.required", {"packageName": _as_str(v.get("packageName")),
                                                                   "versionRange": _as_str(v.get("version"))}))
        else:
            other.append(_prop(t, v))
    for g, v, k, _plural in provided:
        provided_gvks.setdefault((g, k, v), None)
    for g, v, k in required:
        required_gvks.setdefault((g, k, v), None)

    props = []
    for obj in objects:
        data = base64.b64encode(go_marshal(obj, sort_keys=True).encode("utf-8")).decode("ascii")
        props.append(_prop(TYPE_BUNDLE_OBJECT, {"data": data}))
    if package_prop is None:
        pv = {"packageName": package, "version": version}
        if release:
            pv["release"] = release
        package_prop = _prop("olm.package", pv)
    props.append(package_prop)
    props.extend(_prop("olm.gvk", _gvk(*k)) for k in provided_gvks)
    props.extend(_prop("olm.gvk.required", _gvk(*k)) for k in required_gvks)
    props.extend(package_required)
    props.extend(other)
    props.sort(key=_sort_key)
    props = _move_objects_to_end(props)

    blob = {"schema": "olm.bundle", "name": name, "package": package, "image": image, "properties": props}
    related = _related_images(csv, image)
    if related:
        blob["relatedImages"] = related
    return blob, csv


def expand_image_ref_template(tmpl, package, name, version):
    """opm ``--alpha-image-ref-template``: substitutes ``{{.Package}}``, ``{{.Name}}`` and ``{{.Version}}``."""
    out = tmpl
    for key, val in (("Package", package), ("Name", name), ("Version", version)):
        for form in ("{{.%s}}" % key, "{{ .%s }}" % key):
            out = out.replace(form, val)
    return out


def _package_version(blob):
    for p in blob.get("properties") or ():
        if p.get("type") == "olm.package" and isinstance(p.get("value"), dict):
            return _as_str(p["value"].get("version"))
    return ""


def render_bundle_dir(path, image="", migrate_level=None, image_ref_template=None):
    """``opm render <bundle-dir>``: a DeclarativeConfig with one bundle (attribute ``csv_json`` set)."""
    blob, csv = render_bundle_dir_blob(path, image=image)
    if image_ref_template:
        blob["image"] = expand_image_ref_template(image_ref_template, blob["package"], blob["name"],
                                                  _package_version(blob))
    if wants_csv_metadata(migrate_level):
        blob = migrate_bundle(blob, csv)
    cfg = DeclarativeConfig(bundles=[blob])
    cfg.csv_json = {blob["name"]: csv}
    return cfg


# --------------------------------------------------------------------------- offline lookup renderer

def load_catalog(path):
    """Load an FBC directory or file with the core loader (``load.load``; errors are ``errors.LoadError``)."""
    return core_load.load(path)


class BundleLookup:
    """Offline bundle renderer: ``lookup(image_ref) -> DeclarativeConfig`` with exactly one bundle.

    Resolution order: bundles of the given FBC catalogs (first catalog wins; indexed by ``image``), then the
    ``bundle_dirs`` map (image -> unpacked bundle directory), then ``image_puller(image_ref)`` which must return the
    path of an unpacked bundle directory. ``migrate_level`` is applied to every returned bundle (opm applies
    migrations inside the renderer). Returned blobs are shared with the catalogs (never mutated; migration copies).
    """

    def __init__(self, catalogs=(), bundle_dirs=None, image_puller=None, migrate_level=None):
        self.migrate_level = check_migrate_level(migrate_level)
        self.image_puller = image_puller
        self.bundle_dirs = dict(bundle_dirs or {})
        self._by_image = {}
        self._csv_sources = {}
        self._packages = {}
        self._dir_cache = {}
        for c in catalogs:
            self.add_catalog(c)

    def add_catalog(self, catalog):
        """Index a DeclarativeConfig, or a path to an FBC directory/file."""
        if isinstance(catalog, (str, bytes, os.PathLike)):
            catalog = load_catalog(os.fsdecode(catalog))
        by_image = self._by_image
        for p in catalog.packages:
            if p.get("name"):
                self._packages.setdefault(p["name"], p)
        for b in catalog.bundles:
            img = b.get("image")
            if not img:
                continue
            if img not in by_image:
                by_image[img] = b
            elif img not in self._csv_sources and b is not by_image[img]:
                self._csv_sources[img] = b
        return self

    def near_matches(self, image):
        """``"; the lookup has: a, b"`` - the bundle images it knows that ``image`` may have meant - or ``""``."""
        near = near_references(image, list(self._by_image) + list(self.bundle_dirs))
        return "; the lookup has: %s" % ", ".join(near) if near else ""

    def __contains__(self, image):
        return image in self._by_image or image in self.bundle_dirs

    def csv_for(self, image):
        """The CSV of a bundle (from its olm.bundle.object properties, in any indexed catalog), or None."""
        b = self._by_image.get(image)
        csv = csv_from_bundle(b) if b is not None else None
        if csv is None and image in self._csv_sources:
            csv = csv_from_bundle(self._csv_sources[image])
        return csv

    def blob(self, image):
        """(blob, csv) for an image; csv may be None when only olm.csv.metadata is known."""
        if isinstance(image, str) and has_credentials(image):
            raise BundleRenderError("bundle image: %s" % CREDENTIALS_MESSAGE)
        b = self._by_image.get(image)
        if b is not None:
            csv = None
            if wants_csv_metadata(self.migrate_level) or image in self._csv_sources:
                csv = self.csv_for(image)
            return b, csv
        if image in self._dir_cache:
            return self._dir_cache[image]
        path = self.bundle_dirs.get(image)
        if path is None and self.image_puller is not None:
            try:
                path = self.image_puller(image)
            except BundleNotFoundError as e:
                raise BundleNotFoundError(str(e) + self.near_matches(image)) from e
            except BundleRenderError:
                raise
            except Exception as e:  # the puller is third-party code: report cleanly
                raise BundleRenderError("render %s: %s" % (json.dumps(shown_reference(image)), e)) from e
            if not path:
                raise BundleNotFoundError("render %s: image puller returned no bundle directory"
                                          % json.dumps(shown_reference(image)))
        if path is None:
            raise BundleNotFoundError("bundle image %s not found in the lookup catalogs or bundle directories%s"
                                      % (json.dumps(shown_reference(image)), self.near_matches(image)))
        path = os.fspath(path)
        if not is_bundle_dir(path):
            raise BundleRenderError("render %s: %s is not a bundle directory (manifests/ and metadata/ required)"
                                    % (json.dumps(shown_reference(image)), json.dumps(path)))
        res = render_bundle_dir_blob(path, image=image)
        self._dir_cache[image] = res
        return res

    def __call__(self, image):
        blob, csv = self.blob(image)
        if wants_csv_metadata(self.migrate_level):
            blob = migrate_bundle(blob, csv)
        cfg = DeclarativeConfig(bundles=[blob])
        if csv is not None:
            cfg.csv_json = {blob.get("name"): csv}
        pkg = self._packages.get(blob.get("package"))
        if pkg is not None:
            cfg.lookup_packages = {pkg["name"]: pkg}
        return cfg

    render = __call__
