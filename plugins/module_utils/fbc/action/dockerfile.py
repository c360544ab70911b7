# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""`opm generate dockerfile` parity (cmd/opm/generate, alpha/action/generate_dockerfile.go; fbc.md section 10)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.declcfg.write import atomic_write
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, WriteError

DEFAULT_IMAGE = "quay.io/operator-framework/opm:latest"
CONFIGS_LABEL = "operators.operatorframework.io.index.configs.v1"

_HEADER = """# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM {builder} as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD {index_dir} /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

FROM {base}
"""

_OPM_BASE = """# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
"""

_SCRATCH_BASE = """# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache
"""

_TRAILER = """
COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL {label}=/configs
"""


def parse_labels(values):
    """-l/--extra-labels: repeatable key=value items (comma lists allowed); later keys win."""
    labels = {}
    for value in values or ():
        for item in value.split(",") if isinstance(value, str) else [value]:
            key, sep, val = item.partition("=")
            if not sep:
                raise FBCError("invalid label %s" % json.dumps(item))
            labels[key] = val
    return labels


def generate_dockerfile(index_dir, base_image=DEFAULT_IMAGE, builder_image=None, extra_labels=None):
    """Dockerfile text exactly as opm's GenerateDockerfile action renders it.

    builder_image defaults to base_image's default (opm's flag default), never to "scratch".
    """
    if builder_image is None:
        builder_image = DEFAULT_IMAGE
    if builder_image == "scratch":
        raise FBCError('invalid builder image: "scratch"')
    if not base_image:
        raise FBCError("base image is unset")
    if not index_dir:
        raise FBCError("index directory is unset")
    text = _HEADER.format(builder=builder_image, index_dir=index_dir, base=base_image)
    text += _SCRATCH_BASE if base_image == "scratch" else _OPM_BASE
    text += _TRAILER.format(label=CONFIGS_LABEL)
    labels = extra_labels or {}
    if labels:
        text += "\n# Set other custom labels\n"
        for key in sorted(labels):
            text += 'LABEL "%s"="%s"\n' % (key, labels[key])
    return text


def write_dockerfile(fbc_dir, base_image=DEFAULT_IMAGE, builder_image=None, extra_labels=None):
    """opm generate dockerfile <fbcRootDir>: writes <parent>/<dirname>.Dockerfile, refusing to overwrite."""
    if builder_image == "scratch":
        raise FBCError('invalid builder image: "scratch"')
    fbc_dir = os.path.normpath(os.fspath(fbc_dir))
    parent, name = os.path.split(fbc_dir)
    if name in ("", ".", ".."):
        parent, name = os.path.split(os.path.abspath(fbc_dir))
    target = os.path.join(parent, name + ".Dockerfile")
    if os.path.exists(target):
        raise WriteError("path %s: file already exists" % json.dumps(target), path=target)
    if not os.path.exists(fbc_dir):
        raise FBCError("stat %s: no such file or directory" % fbc_dir, path=fbc_dir)
    if not os.path.isdir(fbc_dir):
        raise FBCError("provided root path %s is not a directory" % json.dumps(fbc_dir), path=fbc_dir)
    text = generate_dockerfile(name, base_image, builder_image, extra_labels)
    atomic_write(target, text)
    return target
