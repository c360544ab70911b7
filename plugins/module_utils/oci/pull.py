# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pull and unpack images (bundle images for the FBC renderer) with safe tar extraction.

``pull_bundle(ref)`` returns the path of a directory holding the unpacked bundle (``manifests/``, ``metadata/``);
``make_image_puller(...)`` returns the ``image_puller(image_ref) -> path`` callable the FBC renderer accepts.

Extraction never writes outside the destination: absolute paths and ``..`` components are rejected, writes through
symbolic links that leave the tree are refused, hard links must point inside the tree (they are copied), device
nodes and FIFOs are skipped, set-uid/set-gid/sticky bits are dropped and ownership is not restored. Whiteouts
(``.wh.<name>`` and the opaque ``.wh..wh..opq``) remove content of lower layers.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil
import tarfile
import tempfile

from ansible_collections.kubeforge.operators.plugins.module_utils.oci.client import (
    DEFAULT_PLATFORM,
    OCI_LAYER_ZSTD,
    client_for,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.errors import OCIError, UnsafeLayerError
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.mirrors import load as load_mirrors
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.mirrors import pull_endpoints
from ansible_collections.kubeforge.operators.plugins.module_utils.oci.reference import parse_reference

WHITEOUT_PREFIX = ".wh."
WHITEOUT_OPAQUE = ".wh..wh..opq"
BUNDLE_PACKAGE_LABEL = "operators.operatorframework.io.bundle.package.v1"
BUNDLE_MANIFESTS_LABEL = "operators.operatorframework.io.bundle.manifests.v1"
BUNDLE_METADATA_LABEL = "operators.operatorframework.io.bundle.metadata.v1"
CATALOG_CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"


class PulledImage:
    """Result of :func:`pull_image`: ``path``, ``ref`` (string), ``digest``, ``manifest``, ``config``, ``labels``."""

    def __init__(self, path, ref, digest, manifest, config):
        self.path = path
        self.ref = ref
        self.digest = digest
        self.manifest = manifest
        self.config = config

    @property
    def labels(self):
        return dict((self.config.get("config") or {}).get("Labels") or {})

    def __repr__(self):
        return "PulledImage(ref=%r, digest=%r, path=%r)" % (self.ref, self.digest, self.path)


def _clean_name(name):
    """Normalise a tar member name to a list of path components; raise on absolute paths or ``..``."""
    if name.startswith("/") or name.startswith("\\"):
        raise UnsafeLayerError("layer entry %r has an absolute path" % name)
    parts = []
    for part in name.replace("\\", "/").split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise UnsafeLayerError("layer entry %r contains '..'" % name)
        parts.append(part)
    return parts


def _inside(root, path):
    root = os.path.realpath(root)
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _remove(path):
    if os.path.islink(path) or os.path.isfile(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def _ensure_parent(dest, parts, name):
    parent = os.path.join(dest, *parts[:-1]) if len(parts) > 1 else dest
    if not _inside(dest, parent):
        raise UnsafeLayerError("layer entry %r would be written through a symlink outside the destination" % name)
    if not os.path.isdir(parent):
        if os.path.lexists(parent):
            _remove(parent)
        os.makedirs(parent, exist_ok=True)
        if not _inside(dest, parent):
            raise UnsafeLayerError("layer entry %r escapes the destination" % name)
    return parent


def extract_layer(fileobj, dest):
    """Apply one (optionally gzip-compressed) tar layer from ``fileobj`` (seekable) onto ``dest``.

    Returns the list of skipped entry names (devices, FIFOs).
    """
    skipped = []
    os.makedirs(dest, exist_ok=True)
    try:
        tar = tarfile.open(fileobj=fileobj, mode="r:*")
    except tarfile.TarError as e:
        raise UnsafeLayerError("layer is not a readable tar archive: %s" % e) from None
    with tar:
        members = tar.getmembers()
        # pass 1: whiteouts apply to lower layers only
        for m in members:
            parts = _clean_name(m.name)
            if not parts:
                continue
            base = parts[-1]
            if base == WHITEOUT_OPAQUE:
                d = os.path.join(dest, *parts[:-1])
                if parts[:-1] and _inside(dest, d) and os.path.isdir(d) and not os.path.islink(d):
                    for child in os.listdir(d):
                        _remove(os.path.join(d, child))
            elif base.startswith(WHITEOUT_PREFIX):
                target = os.path.join(dest, *(parts[:-1] + [base[len(WHITEOUT_PREFIX):]]))
                if _inside(dest, os.path.dirname(target)) and os.path.lexists(target):
                    _remove(target)
        # pass 2: content
        for m in members:
            parts = _clean_name(m.name)
            if not parts or parts[-1].startswith(WHITEOUT_PREFIX):
                continue
            path = os.path.join(dest, *parts)
            if m.ischr() or m.isblk() or m.isfifo():
                skipped.append(m.name)
                continue
            _ensure_parent(dest, parts, m.name)
            if m.isdir():
                if os.path.lexists(path) and not os.path.isdir(path):
                    _remove(path)
                if os.path.islink(path):
                    _remove(path)
                os.makedirs(path, exist_ok=True)
                os.chmod(path, (m.mode & 0o777) | 0o700)
            elif m.issym():
                if os.path.lexists(path):
                    _remove(path)
                os.symlink(m.linkname, path)
            elif m.islnk():
                lparts = _clean_name(m.linkname)
                src = os.path.join(dest, *lparts)
                if not lparts or not _inside(dest, src) or not os.path.isfile(src):
                    raise UnsafeLayerError("layer entry %r: hard link target %r is not a file inside the image" % (
                        m.name, m.linkname))
                if os.path.lexists(path):
                    _remove(path)
                shutil.copy2(src, path)
            elif m.isreg():
                if os.path.lexists(path):
                    _remove(path)
                src = tar.extractfile(m)
                with open(path, "xb") as out:
                    shutil.copyfileobj(src, out, 1024 * 1024)
                os.chmod(path, (m.mode & 0o777) | 0o600)
            else:
                skipped.append(m.name)
    return skipped


def resolve_pull(ref, client, platform=DEFAULT_PLATFORM, mirrors=None):
    """``(client, reference pulled, resolved image)`` of ``ref``, through the registry mirrors podman reads
    (``oci.mirrors``; ``mirrors``: their ``{prefix: entry}``, None for the default files, ``{}`` for none): each
    applicable mirror in order, then the source. ``client`` is the source registry's; a mirror on another registry
    gets a sibling client (same TLS settings, credentials from the auth files)."""
    endpoints = pull_endpoints(load_mirrors() if mirrors is None else mirrors, ref)
    if endpoints == [(ref, False)]:
        return client, ref, client.resolve_image(ref.repository, ref.reference, platform)
    errors = []
    for candidate, insecure in endpoints:
        same = candidate.registry == client.registry and not insecure
        endpoint_client = client if same else client.for_registry(candidate.registry, verify=False if insecure else None)
        try:
            return endpoint_client, candidate, endpoint_client.resolve_image(candidate.repository, candidate.reference, platform)
        except OCIError as e:  # the next mirror, then the source, as containers/image goes on
            errors.append("%s: %s" % (candidate, e))
    raise OCIError("image %s: neither its mirrors (registries.conf) nor its registry could give it: %s" % (
        ref, "; ".join(errors)))


def pull_image(ref, dest_dir, client=None, platform=DEFAULT_PLATFORM, mirrors=None, **client_kwargs):
    """Pull ``ref`` and unpack its layers into ``dest_dir``. Returns a :class:`PulledImage`.

    ``client``: a ``RegistryClient`` for the reference's registry; otherwise one is built with
    ``client_for(ref, **client_kwargs)`` (``username``, ``password``, ``docker_config``, ``ca_file``, ``verify``,
    ``plain_http``, ``timeout``). The pull goes through the registry mirrors of :func:`resolve_pull` (``mirrors``).
    """
    parsed = parse_reference(ref) if isinstance(ref, str) else ref
    client = client or client_for(parsed, **client_kwargs)
    client, source, resolved = resolve_pull(parsed, client, platform, mirrors)
    os.makedirs(dest_dir, exist_ok=True)
    for desc in resolved["manifest"].get("layers") or []:
        if desc.get("mediaType") == OCI_LAYER_ZSTD:
            raise OCIError("image %s: zstd-compressed layers are not supported" % parsed)
        with tempfile.TemporaryFile() as tmp:
            client.download_blob(source.repository, desc["digest"], tmp.write)
            tmp.seek(0)
            extract_layer(tmp, dest_dir)
    return PulledImage(dest_dir, str(parsed), resolved["digest"], resolved["manifest"], resolved["config"])


def pull_bundle(ref, dest_dir=None, client=None, platform=DEFAULT_PLATFORM, **client_kwargs):
    """Pull a bundle image and return the path of the unpacked bundle directory.

    ``dest_dir`` defaults to a new temporary directory (the caller removes it). The bundle root is the image root, or
    the directory named by the bundle ``manifests``/``metadata`` labels' common parent when those are set.
    """
    dest = dest_dir or tempfile.mkdtemp(prefix="kubeforge-bundle-")
    pulled = pull_image(ref, dest, client=client, platform=platform, **client_kwargs)
    labels = pulled.labels
    root = dest
    manifests = labels.get(BUNDLE_MANIFESTS_LABEL)
    if manifests:
        parent = os.path.dirname(manifests.strip("/").rstrip("/"))
        if parent:
            candidate = os.path.join(dest, *_clean_name(parent))
            if os.path.isdir(candidate):
                root = candidate
    return root


def pull_catalog(ref, dest_dir, client=None, platform=DEFAULT_PLATFORM, mirrors=None, **client_kwargs):
    """Pull a catalog (index) image into ``dest_dir``; returns ``(path of its file-based catalog, PulledImage)``.

    The catalog is the directory the ``operators.operatorframework.io.index.configs.v1`` label names, as opm and
    catalogd read it; an image without the label is refused.
    """
    pulled = pull_image(ref, dest_dir, client=client, platform=platform, mirrors=mirrors, **client_kwargs)
    configs = pulled.labels.get(CATALOG_CONFIGS_LABEL)
    if not configs:
        raise OCIError(f"image {pulled.ref} is not a catalog image: it has no label {CATALOG_CONFIGS_LABEL}")
    path = os.path.join(dest_dir, *_clean_name(configs.strip("/"))) if configs.strip("/") else dest_dir
    if not os.path.isdir(path):
        raise OCIError(f"image {pulled.ref}: the catalog directory {configs} its label {CATALOG_CONFIGS_LABEL} names is not in the image")
    return path, pulled


def make_image_puller(cache_dir=None, **client_kwargs):
    """Return ``image_puller(image_ref) -> path`` for the FBC renderer.

    Clients are reused per registry; each image is unpacked once (cached by reference) in a new directory ``root``
    below ``cache_dir`` (the system temporary directory when ``None``). The returned callable has ``cleanup()``
    (removes ``root``) and ``root`` attributes.
    """
    if cache_dir:
        os.makedirs(cache_dir, exist_ok=True)
    root = tempfile.mkdtemp(prefix="kubeforge-images-", dir=cache_dir)
    clients = {}
    pulled = {}

    def image_puller(image_ref):
        if image_ref in pulled:
            return pulled[image_ref]
        parsed = parse_reference(image_ref)
        client = clients.get(parsed.registry)
        if client is None:
            client = clients[parsed.registry] = client_for(parsed, **client_kwargs)
        dest = tempfile.mkdtemp(prefix="bundle-", dir=root)
        pulled[image_ref] = pull_bundle(parsed, dest, client=client)
        return pulled[image_ref]

    def cleanup():
        shutil.rmtree(root, ignore_errors=True)
        pulled.clear()

    image_puller.cleanup = cleanup
    image_puller.root = root
    return image_puller
