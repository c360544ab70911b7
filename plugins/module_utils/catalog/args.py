# -*- coding: utf-8 -*-
# Copyright: (c) 2026, kubeforge.operators contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Options shared by the catalog modules: ``select_argspec()`` is the argument spec of the operator selection the
``kubeforge.operators.catalog_select`` doc fragment documents (keep both in sync). Plain data, no Ansible import."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def select_argspec():
    """A fresh argument spec of the ``select`` option (``fbc.action.filter``'s selection)."""
    return dict(type="dict", options=dict(
        full=dict(type="bool", default=False),
        packages=dict(type="list", elements="dict", default=[], options=dict(
            name=dict(type="str", required=True),
            default_channel=dict(type="str"),
            min_version=dict(type="str"),
            max_version=dict(type="str"),
            installed_version=dict(type="str"),
            channels=dict(type="list", elements="dict", default=[], options=dict(
                name=dict(type="str", required=True),
                min_version=dict(type="str"),
                max_version=dict(type="str"),
            )),
        )),
    ))
