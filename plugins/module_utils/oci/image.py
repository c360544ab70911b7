# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Build, push and save file-based-catalog (FBC) images without a container engine.

The image mirrors ``opm generate dockerfile``: the FBC root is copied to ``/configs`` in one gzip tar layer, the
config carries the label ``operators.operatorframework.io.index.configs.v1=/configs`` plus extra labels, and, on an
opm base image, ``ENTRYPOINT ["/bin/opm"]`` / ``CMD ["serve", "/configs", "--cache-dir=/tmp/cache",
"--cache-enforce-integrity=false"]``. With base
``scratch`` (binary-less catalog, as ``opm generate dockerfile -i scratch``) there is no entrypoint/cmd.

Layers are deterministic: entries sorted by path, mtime 0, uid/gid 0, no user/group names, fixed modes
(0755 directories, 0644 files, 0755 for files executable by their owner), gzip header mtime 0 and no file name.
The pre-populated opm serve cache (``/tmp/cache``) is not produced: that needs the opm binary. So the command turns
off opm's cache integrity check, which is on whenever ``--cache-dir`` is given (then ``opm serve`` exits at once
with "integrity check failed" on an image without the cache; seen on the testbed's real node); opm builds the cache
at start-up instead.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import gzip
import hashlib
import io
import json
import os
import re
import stat
import tarfile

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.files import FileOutput
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import (
    DEFAULT_PLATFORM,
    DOCKER_CONFIG,
    DOCKER_LAYER_GZIP,
    DOCKER_MANIFEST,
    OCI_CONFIG,
    OCI_INDEX,
    OCI_LAYER_GZIP,
    OCI_MANIFEST,
    parse_platform,
    sha256_digest,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import ImageBuildError, RegistryError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.pull import resolve_pull
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"
CONFIGS_DIR = "/configs"
OPM_ENTRYPOINT = ["/bin/opm"]
OPM_CMD = ["serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"]
DEFAULT_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
SCRATCH = "scratch"
WHITEOUT_OPAQUE = ".wh..wh..opq"

_GZIP_LEVEL = 6


class Layer:
    """A compressed layer blob: ``data`` (tar+gzip bytes), ``digest``, ``diff_id`` (digest of the tar), ``size``."""

    __slots__ = ("data", "digest", "diff_id", "size", "media_type", "files")

    def __init__(self, data, diff_id, media_type=OCI_LAYER_GZIP, files=None):
        self.data = data
        self.digest = sha256_digest(data)
        self.diff_id = diff_id
        self.size = len(data)
        self.media_type = media_type
        self.files = files or []


def _tarinfo(name, kind, mode, size=0, linkname=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.size = size
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.linkname = linkname
    return info


def _walk_sorted(root):
    """Yield ``(relpath, abspath, is_dir)`` below ``root`` in byte-wise sorted order of the relative paths."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            entries.append((rel, full))
    entries.sort(key=lambda e: e[0].encode("utf-8"))
    for rel, full in entries:
        yield rel, full


def build_configs_layer(fbc_root, dest=CONFIGS_DIR, media_type=OCI_LAYER_GZIP, opaque=False):
    """Tar+gzip the directory ``fbc_root`` under ``dest`` (``/configs``; ``/`` for the image root, as in bundle
    images) deterministically; return a :class:`Layer`. ``opaque``: ``dest`` hides what lower layers hold there
    (an opaque whiteout), so the layer replaces the directory instead of adding to it.

    Symbolic links inside the tree are stored as links when relative and pointing inside the tree; other links are
    rejected. Sockets, FIFOs and devices are rejected.
    """
    if not fbc_root or not os.path.isdir(fbc_root):
        raise ImageBuildError("FBC root %r is not a directory" % (fbc_root,))
    prefix = dest.strip("/")
    raw = io.BytesIO()
    files = []
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        if prefix:
            parts = prefix.split("/")
            for i in range(len(parts)):
                tar.addfile(_tarinfo("/".join(parts[:i + 1]) + "/", tarfile.DIRTYPE, 0o755))
            if opaque:
                tar.addfile(_tarinfo(prefix + "/" + WHITEOUT_OPAQUE, tarfile.REGTYPE, 0o644), io.BytesIO(b""))
        elif opaque:
            raise ImageBuildError("the image root cannot replace what a base image holds")
        root_real = os.path.realpath(fbc_root)
        for rel, full in _walk_sorted(fbc_root):
            name = prefix + "/" + rel if prefix else rel
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(full)
                resolved = os.path.realpath(os.path.join(os.path.dirname(full), target))
                if os.path.isabs(target) or not (resolved == root_real or resolved.startswith(root_real + os.sep)):
                    raise ImageBuildError("FBC root %s: symlink %s points outside the directory" % (fbc_root, rel))
                tar.addfile(_tarinfo(name, tarfile.SYMTYPE, 0o777, linkname=target))
                files.append(rel)
            elif stat.S_ISDIR(st.st_mode):
                tar.addfile(_tarinfo(name + "/", tarfile.DIRTYPE, 0o755))
            elif stat.S_ISREG(st.st_mode):
                mode = 0o755 if st.st_mode & stat.S_IXUSR else 0o644
                with open(full, "rb") as f:
                    content = f.read()
                tar.addfile(_tarinfo(name, tarfile.REGTYPE, mode, len(content)), io.BytesIO(content))
                files.append(rel)
            else:
                raise ImageBuildError("FBC root %s: %s is not a regular file or directory" % (fbc_root, rel))
    tar_bytes = raw.getvalue()
    diff_id = sha256_digest(tar_bytes)
    gz = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=gz, mtime=0, compresslevel=_GZIP_LEVEL) as g:
        g.write(tar_bytes)
    return Layer(gz.getvalue(), diff_id, media_type, files)


def canonical_json(obj):
    """Compact JSON with sorted keys: stable bytes for config and manifest digests."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class BaseImage:
    """A base image resolved from a registry: its manifest/config plus where to fetch (or mount) its blobs."""

    def __init__(self, ref, client, resolved):
        self.ref = parse_reference(ref) if isinstance(ref, str) else ref
        self.client = client
        self.manifest = resolved["manifest"]
        self.config = resolved["config"]
        self.digest = resolved["digest"]
        self.media_type = resolved["media_type"]

    @property
    def layers(self):
        return list(self.manifest.get("layers") or [])

    def fetch_blob(self, digest):
        return self.client.get_blob(self.ref.repository, digest)

    @classmethod
    def pull(cls, ref, client, platform=DEFAULT_PLATFORM, mirrors=None):
        """The base image ``ref``, read through the registry mirrors podman reads (``pull.resolve_pull``): its
        layers are then fetched from where it was found."""
        ref = parse_reference(ref) if isinstance(ref, str) else ref
        client, ref, resolved = resolve_pull(ref, client, platform, mirrors)
        return cls(ref, client, resolved)


class CatalogImage:
    """An image assembled in memory. ``blobs`` maps digest → bytes for the new blobs (config and the new layers);
    base layers stay remote and are described in ``base_layers`` (descriptors) with ``base`` (:class:`BaseImage`).
    ``layers``: the new :class:`Layer` objects in manifest order; ``layer`` is the top one.
    """

    def __init__(self, manifest, manifest_bytes, media_type, config, config_bytes, blobs, base=None,
                 base_layers=None, layers=None):
        self.manifest = manifest
        self.manifest_bytes = manifest_bytes
        self.media_type = media_type
        self.config = config
        self.config_bytes = config_bytes
        self.blobs = blobs
        self.base = base
        self.base_layers = base_layers or []
        self.layers = list(layers or [])

    @property
    def layer(self):
        return self.layers[-1] if self.layers else None

    @layer.setter
    def layer(self, value):
        if self.layers:
            self.layers[-1] = value
        else:
            self.layers.append(value)

    @property
    def digest(self):
        return sha256_digest(self.manifest_bytes)

    @property
    def labels(self):
        return dict((self.config.get("config") or {}).get("Labels") or {})

    def blob(self, digest):
        if digest in self.blobs:
            return self.blobs[digest]
        if self.base is not None:
            return self.base.fetch_blob(digest)
        raise ImageBuildError("the image has no blob %s" % digest)


def build_catalog_image(fbc_root, labels=None, base=None, manifest_format="oci", platform=DEFAULT_PLATFORM,
                        entrypoint=None, cmd=None):
    """Build the catalog image for ``fbc_root``.

    ``base``: ``None`` (scratch) or a :class:`BaseImage`. ``labels``: extra labels (the configs label is always set
    and wins). ``manifest_format``: ``"oci"`` or ``"docker"`` (schema 2). ``entrypoint``/``cmd`` default to the opm
    serve ones on a base image and to none on scratch.
    """
    if base is not None:
        entrypoint = OPM_ENTRYPOINT if entrypoint is None else entrypoint
        cmd = OPM_CMD if cmd is None else cmd
    return build_directory_image(fbc_root, CONFIGS_DIR, labels=labels, base=base, manifest_format=manifest_format,
                                 platform=platform, entrypoint=entrypoint, cmd=cmd,
                                 forced_labels={CONFIGS_LABEL: CONFIGS_DIR})


def build_directory_image(src_dir, dest="/", labels=None, base=None, manifest_format="oci",
                          platform=DEFAULT_PLATFORM, entrypoint=None, cmd=None, forced_labels=None, opaque=False):
    """Build an image whose top layer holds ``src_dir`` copied to ``dest`` (e.g. a bundle image with ``dest="/"``).

    Entrypoint/Cmd of the base are kept unless ``entrypoint``/``cmd`` are given (``[]`` removes them).
    """
    return build_layered_image([(src_dir, dest)], labels=labels, base=base, manifest_format=manifest_format,
                               platform=platform, entrypoint=entrypoint, cmd=cmd, forced_labels=forced_labels,
                               opaque=opaque)


def build_layered_image(contents, labels=None, base=None, manifest_format="oci", platform=DEFAULT_PLATFORM,
                        entrypoint=None, cmd=None, forced_labels=None, opaque=False):
    """Build an image with one new layer per ``(src_dir, dest)`` of ``contents``, in order, on top of ``base``
    (``None``: scratch), as a Dockerfile with one ``COPY <src_dir> <dest>`` per entry would.

    ``labels``: extra labels (values converted to strings); ``forced_labels`` win over them and over the base's.
    Entrypoint/Cmd of the base are kept unless ``entrypoint``/``cmd`` are given (``[]`` removes them).
    ``opaque``: each ``dest`` replaces the base's directory there instead of adding to it.
    """
    if manifest_format not in ("oci", "docker"):
        raise ImageBuildError("manifest_format must be 'oci' or 'docker', not %r" % (manifest_format,))
    if not contents:
        raise ImageBuildError("an image needs at least one directory to copy")
    oci = manifest_format == "oci"
    new_layers = [build_configs_layer(src, dest, media_type=OCI_LAYER_GZIP if oci else DOCKER_LAYER_GZIP,
                                      opaque=opaque) for src, dest in contents]
    plat = parse_platform(platform)
    if base is not None:
        base_cfg = json.loads(json.dumps(base.config))
        cfg = base_cfg
        inner = dict(cfg.get("config") or {})
        diff_ids = list((cfg.get("rootfs") or {}).get("diff_ids") or [])
        base_layers = []
        for desc in base.layers:
            d = dict(desc)
            mt = d.get("mediaType", "")
            if oci and mt == DOCKER_LAYER_GZIP:
                d["mediaType"] = OCI_LAYER_GZIP
            elif not oci and mt == OCI_LAYER_GZIP:
                d["mediaType"] = DOCKER_LAYER_GZIP
            elif not oci and mt not in (DOCKER_LAYER_GZIP,) and mt.startswith("application/vnd.oci.image.layer"):
                raise ImageBuildError("base image %s layer media type %s cannot be expressed in a docker schema 2 "
                                      "manifest; use manifest_format oci" % (base.ref, mt))
            base_layers.append(d)
        if len(diff_ids) != len(base_layers):
            raise ImageBuildError("base image %s: %d layers but %d diff_ids" % (base.ref, len(base_layers),
                                                                                len(diff_ids)))
        history = list(cfg.get("history") or [])
    else:
        cfg = {"architecture": plat["architecture"], "os": plat["os"]}
        if "variant" in plat:
            cfg["variant"] = plat["variant"]
        inner = {"Env": list(DEFAULT_ENV)}
        diff_ids = []
        base_layers = []
        history = []
    if entrypoint is not None:
        if entrypoint:
            inner["Entrypoint"] = list(entrypoint)
        else:
            inner.pop("Entrypoint", None)
    if cmd is not None:
        if cmd:
            inner["Cmd"] = list(cmd)
        else:
            inner.pop("Cmd", None)
    all_labels = dict(inner.get("Labels") or {})
    for k, v in (labels or {}).items():
        all_labels[str(k)] = str(v)
    all_labels.update(forced_labels or {})
    inner["Labels"] = dict(sorted(all_labels.items()))
    cfg["config"] = inner
    cfg["rootfs"] = {"type": "layers", "diff_ids": diff_ids + [layer.diff_id for layer in new_layers]}
    if history or base is None:
        history = history + [{"created_by": "ADD %s %s # kubeforge.operators" % (
            os.path.basename(os.path.abspath(src)), dest)} for src, dest in contents]
        cfg["history"] = history
    cfg.pop("created", None)
    config_bytes = canonical_json(cfg)
    layers = base_layers + [{"mediaType": layer.media_type, "digest": layer.digest, "size": layer.size}
                            for layer in new_layers]
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST if oci else DOCKER_MANIFEST,
        "config": {"mediaType": OCI_CONFIG if oci else DOCKER_CONFIG, "digest": sha256_digest(config_bytes),
                   "size": len(config_bytes)},
        "layers": layers,
    }
    manifest_bytes = canonical_json(manifest)
    blobs = {sha256_digest(config_bytes): config_bytes}
    blobs.update((layer.digest, layer.data) for layer in new_layers)
    return CatalogImage(manifest, manifest_bytes, manifest["mediaType"], cfg, config_bytes, blobs, base,
                        base_layers, new_layers)


def push_image(client, ref, image, check_mode=False):
    """Push ``image`` (:class:`CatalogImage`) to ``ref`` (tag). Idempotent.

    Returns ``(changed, stats)``: ``changed`` is ``False`` when the tag already points at the same manifest
    digest. In ``check_mode`` nothing is written. Base layers are cross-repository mounted when the base lives on the
    same registry, otherwise downloaded from the base registry and uploaded.
    """
    ref = parse_reference(ref) if isinstance(ref, str) else ref
    repo = ref.repository
    tag = ref.tag or ref.digest
    stats = {"exists": 0, "mounted": 0, "uploaded": 0, "copied": 0}
    current = client.head_manifest(repo, tag, push=not check_mode)
    if current is not None and current.get("digest") == image.digest:
        return False, stats
    if check_mode:
        return True, stats
    same_registry = image.base is not None and image.base.client.registry == client.registry
    for desc in image.base_layers:
        digest = desc["digest"]
        if client.blob_exists(repo, digest, push=True):
            stats["exists"] += 1
            continue
        if same_registry and image.base.ref.repository != repo:
            if client.mount_blob(repo, digest, image.base.ref.repository):
                stats["mounted"] += 1
                continue
        data = image.base.fetch_blob(digest)
        client.upload_blob(repo, data, digest)
        stats["copied"] += 1
    uploaded = set()
    for digest in [image.manifest["config"]["digest"]] + [layer.digest for layer in image.layers]:
        if digest in uploaded:  # two COPY of identical content: one blob
            continue
        uploaded.add(digest)
        result = client.upload_blob(repo, image.blobs[digest], digest)
        stats[result] += 1
    pushed = client.put_manifest(repo, tag, image.manifest_bytes, image.media_type)
    if pushed != image.digest:
        raise RegistryError("registry %s: pushed manifest for %s:%s got digest %s, expected %s" % (
            client.registry, repo, tag, pushed, image.digest), registry=client.registry, repository=repo)
    return True, stats


OCI_LAYOUT_FILE = b'{"imageLayoutVersion":"1.0.0"}'
_SHA256_DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")


def oci_index(image, tag=None):
    """The ``index.json`` of a layout holding ``image``: one manifest descriptor, annotated with
    ``org.opencontainers.image.ref.name`` = ``tag`` when given."""
    desc = {"mediaType": image.media_type, "digest": image.digest, "size": len(image.manifest_bytes)}
    if tag:
        desc["annotations"] = {"org.opencontainers.image.ref.name": tag}
    return {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [desc]}


def layout_blob_path(directory, digest):
    """``<directory>/blobs/sha256/<hex>`` for a sha256 ``digest``; anything else (a digest from a registry's manifest
    that is not 64 lower-case hex, which could name a path outside the layout) raises ImageBuildError."""
    if not isinstance(digest, str) or not _SHA256_DIGEST_RE.match(digest):
        raise ImageBuildError("OCI layout %s: unsupported blob digest %s (sha256 expected)"
                              % (directory, excerpt(repr(digest), 100)))
    return os.path.join(directory, "blobs", "sha256", digest[len("sha256:"):])


def layout_has_blob(directory, digest):
    """True when the layout holds the blob ``digest`` with content of that digest (a blob of the right name but other
    content, e.g. truncated, is not counted)."""
    path = layout_blob_path(directory, digest)
    if not os.path.isfile(path):
        return False
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest() == digest


def layout_blobs(image):
    """``[(digest, bytes or a function returning them)]`` of every blob a layout of ``image`` holds: the base layers
    (fetched only when written), the new config and layer, and the manifest."""
    out = [(desc["digest"], lambda d=desc["digest"]: image.base.fetch_blob(d)) for desc in image.base_layers]
    out.extend(sorted(image.blobs.items()))
    out.append((image.digest, image.manifest_bytes))
    seen = set()
    return [(d, data) for d, data in out if not (d in seen or seen.add(d))]


def write_oci_layout(image, directory, tag=None, output=None):
    """Write ``image`` as an OCI image layout in ``directory`` (created if needed). Returns ``changed``.

    ``index.json`` gets one manifest descriptor, annotated with ``org.opencontainers.image.ref.name`` = ``tag``.

    Every file goes through ``files.FileOutput`` (unique, exclusively created temporary names; fsync and atomic
    rename). ``output``: the caller's FileOutput, in which ``oci-layout`` and ``index.json`` are staged (the caller
    commits them; its check mode and diffs apply); None: one of our own, committed here. Blobs are
    content-addressed: one already present with the right digest is skipped; missing ones are written and renamed
    into place before ``index.json`` is staged, so an index never names a missing blob. In check mode no blob is
    fetched or written: a missing one only counts as a change.
    """
    if output is None:
        with FileOutput() as own:
            changed = write_oci_layout(image, directory, tag=tag, output=own)
            own.commit()
        return changed
    missing = [(d, data) for d, data in layout_blobs(image) if not layout_has_blob(directory, d)]
    changed = bool(missing)
    if missing and not output.check_mode:
        with FileOutput() as blobs:
            for digest, data in missing:
                blobs.write(layout_blob_path(directory, digest), data() if callable(data) else data)
            blobs.commit()
    changed |= output.write(os.path.join(directory, "oci-layout"), OCI_LAYOUT_FILE)
    changed |= output.write(os.path.join(directory, "index.json"), canonical_json(oci_index(image, tag)))
    return changed
