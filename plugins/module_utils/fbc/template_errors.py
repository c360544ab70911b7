# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Exceptions raised by the template / bundle-rendering / release layer of the FBC engine.

All of them subclass both the engine-wide ``errors.FBCError`` and ValueError, so callers can catch bad input with
``except FBCError`` or ``except ValueError``; ``str(err)`` is the opm error text wherever opm has one.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.fbc.errors import FBCError


class FbcTemplateError(FBCError, ValueError):
    """Base class: invalid template, bundle or release input."""


class TemplateSchemaError(FbcTemplateError):
    """Template schema missing / unknown / mismatching."""


class TemplateParseError(FbcTemplateError):
    """Template could not be decoded (bad YAML/JSON, wrong field types, unknown fields)."""


class BundleRenderError(FbcTemplateError):
    """A bundle reference (image or directory) could not be rendered."""


class BundleNotFoundError(BundleRenderError):
    """A bundle image is neither in the lookup catalogs/directories nor obtainable from the image puller."""


class MigrationError(FbcTemplateError):
    """Unknown migrate level or a bundle that cannot be migrated."""


class ReleaseConfigError(FbcTemplateError):
    """Invalid ci.yaml fbc section, release-config.yaml or template edit request."""
