# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge maintainers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The catalog olm_bundle_run serves, built for the unit and the integration tests of olm_bundle_run.

Both import it as ``lib.bundle_run``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.kubeforge.operators.plugins.module_utils.olm import bundle_run as core


def catalog_for_bundle_dirs(paths, channel=None):
    """The catalog olm_bundle_run serves after running these bundle directories one after the other (oldest first).

    Built with the module's own steps: ``read_bundle`` (of the first bundle's package), then ``plan_catalog`` - a first
    install, then an upgrade per further bundle, each replacing the one before it. ``channel`` is the module's
    ``channel`` option (default: each bundle's default channel).
    """
    cfg, installed, package = None, None, None
    for path in paths:
        bundle = core.read_bundle(path, package, channel)
        kind = core.INSTALL if installed is None else core.UPGRADE
        cfg = core.plan_catalog(cfg, bundle, kind, installed)
        installed, package = bundle.name, bundle.package
    return cfg
