# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Port of operator-registry alpha/action/generate_dockerfile_test.go (TestGenerateDockerfile) and cmd checks."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.action.dockerfile import (
    generate_dockerfile,
    parse_labels,
    write_dockerfile,
)
from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError

HEAD = """# The builder image is expected to contain
# /bin/opm (with serve subcommand)
FROM foo as builder

# Copy FBC root into image at /configs and pre-populate serve cache
ADD bar /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]

"""
OPM_BASE = """FROM foo
# The base image is expected to contain
# /bin/opm (with serve subcommand) and /bin/grpc_health_probe

# Configure the entrypoint and command
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
"""
SCRATCH_BASE = """FROM scratch
# OLMv0 CatalogSources that use binary-less images must set:
# spec:
#   grpcPodConfig:
#     extractContent:
#       catalogDir: /configs
#       cacheDir: /tmp/cache
"""
TAIL = """
COPY --from=builder /configs /configs
COPY --from=builder /tmp/cache /tmp/cache

# Set FBC-specific label for the location of the FBC root directory
# in the image
LABEL operators.operatorframework.io.index.configs.v1=/configs
"""
LABELS = """
# Set other custom labels
LABEL "key1"="value1"
LABEL "key2"="value2"
"""
EXTRA = {"key1": "value1", "key2": "value2"}


@pytest.mark.parametrize("base,labels,expected", [
    ("foo", EXTRA, HEAD + OPM_BASE + TAIL + LABELS),
    ("foo", None, HEAD + OPM_BASE + TAIL),
    ("scratch", EXTRA, HEAD + SCRATCH_BASE + TAIL + LABELS),
    ("scratch", None, HEAD + SCRATCH_BASE + TAIL),
], ids=["Success_WithExtraLabels", "Success_WithoutExtraLabels", "Scratch_Success_WithExtraLabels",
        "Scratch_Success_WithoutExtraLabels"])
def test_generate_dockerfile(base, labels, expected):
    assert generate_dockerfile("bar", base_image=base, builder_image="foo", extra_labels=labels) == expected


@pytest.mark.parametrize("kw,error", [
    ({"index_dir": "bar", "base_image": "", "builder_image": None}, "base image is unset"),
    ({"index_dir": "", "base_image": "foo", "builder_image": None}, "index directory is unset"),
    ({"index_dir": "bar", "base_image": "", "builder_image": "foo"}, "base image is unset"),
    ({"index_dir": "", "base_image": "scratch", "builder_image": "foo"}, "index directory is unset"),
    ({"index_dir": "bar", "base_image": "foo", "builder_image": "scratch"}, 'invalid builder image: "scratch"'),
], ids=["Fail_EmptyBaseImage", "Fail_EmptyFromDir", "Scratch_Fail_EmptyBaseImage", "Scratch_Fail_EmptyFromDir",
        "Fail_ScratchBuilder"])
def test_generate_dockerfile_errors(kw, error):
    with pytest.raises(FBCError) as info:
        generate_dockerfile(kw["index_dir"], kw["base_image"], kw["builder_image"], EXTRA)
    assert str(info.value) == error


def test_labels_parsing():
    assert parse_labels(["a=1,b=2", "a=3", "c=x=y"]) == {"a": "3", "b": "2", "c": "x=y"}
    with pytest.raises(FBCError) as info:
        parse_labels(["novalue"])
    assert str(info.value) == 'invalid label "novalue"'


def test_write_dockerfile(tmp_path):
    (tmp_path / "catalog").mkdir()
    target = write_dockerfile(str(tmp_path / "catalog"), base_image="foo", builder_image="foo")
    assert target == str(tmp_path / "catalog.Dockerfile")
    assert (tmp_path / "catalog.Dockerfile").read_text() == HEAD.replace("ADD bar", "ADD catalog") + OPM_BASE + TAIL
    with pytest.raises(FBCError) as info:
        write_dockerfile(str(tmp_path / "catalog"))
    assert "file already exists" in str(info.value)
    with pytest.raises(FBCError):
        write_dockerfile(str(tmp_path / "missing"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(FBCError) as info:
        write_dockerfile(str(tmp_path / "file"))
    assert "is not a directory" in str(info.value)
