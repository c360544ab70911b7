# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""`opm generate dockerfile` parity (cmd/opm/generate, alpha/action/generate_dockerfile.go; fbc.md section 10)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.kubeforge.operators.plugins.module_utils.errors import excerpt
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError, WriteError, check_one_line
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.imageref import check_image_reference
from ansible_collections.kubeforge.operators.plugins.module_utils.files import write_file

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


def check_line_safe(field, value):
    """Refuse a string that cannot be written on one Dockerfile line; returns ``value``."""
    return check_one_line(field, value)


def fbc_root_name(fbc_dir):
    """``(parent, name)`` of an FBC root directory, as opm names it in ``ADD <name> /configs``."""
    fbc_dir = os.path.normpath(os.fspath(fbc_dir))
    parent, name = os.path.split(fbc_dir)
    if name in ("", ".", ".."):
        parent, name = os.path.split(os.path.abspath(fbc_dir))
    return parent, name


def _quote_label(text):
    """A label key/value inside the double quotes opm writes. opm does not escape at all, so a ``"`` or ``\\`` would
    end the string early (letting a value smuggle in more labels); Dockerfile double-quoted strings take ``\\"``
    and ``\\\\``. Text without either (the normal case) is written exactly as opm writes it."""
    return text.replace("\\", "\\\\").replace('"', '\\"')


def check_image(field, image):
    """A base/builder image: no credentials, one line, and a valid image reference (``scratch`` allowed)."""
    if image == "scratch":
        return image
    try:
        check_image_reference(image, field)
    except ValueError as e:
        raise FBCError(str(e)) from None
    return image


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
    check_line_safe("index directory", index_dir)
    check_image("base image", base_image)
    check_image("builder image", builder_image)
    for key, value in (extra_labels or {}).items():
        check_line_safe("label key", key)
        check_line_safe("label %s" % json.dumps(excerpt(key)), value)
        if not key:
            raise FBCError("label key must not be empty")
    text = _HEADER.format(builder=builder_image, index_dir=index_dir, base=base_image)
    text += _SCRATCH_BASE if base_image == "scratch" else _OPM_BASE
    text += _TRAILER.format(label=CONFIGS_LABEL)
    labels = extra_labels or {}
    if labels:
        text += "\n# Set other custom labels\n"
        for key in sorted(labels):
            text += 'LABEL "%s"="%s"\n' % (_quote_label(key), _quote_label(labels[key]))
    return text


def write_dockerfile(fbc_dir, base_image=DEFAULT_IMAGE, builder_image=None, extra_labels=None):
    """opm generate dockerfile <fbcRootDir>: writes <parent>/<dirname>.Dockerfile, refusing to overwrite."""
    if builder_image == "scratch":
        raise FBCError('invalid builder image: "scratch"')
    parent, name = fbc_root_name(fbc_dir)
    target = os.path.join(parent, name + ".Dockerfile")
    if os.path.exists(target):
        raise WriteError("path %s: file already exists" % json.dumps(target), path=target)
    if not os.path.exists(fbc_dir):
        raise FBCError("stat %s: no such file or directory" % fbc_dir, path=fbc_dir)
    if not os.path.isdir(fbc_dir):
        raise FBCError("provided root path %s is not a directory" % json.dumps(fbc_dir), path=fbc_dir)
    text = generate_dockerfile(name, base_image, builder_image, extra_labels)
    write_file(target, text)
    return target
