# Developer entry points for the kubeforge.operators collection (GNU make).
#
#   make demo   # virtualenv, testbed (built on first use), demo playbook
#   make test   # everything CI runs: ruff, unit, sanity, ansible-lint, testbed smoke tests
#
# `make help` lists all targets.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

# Keep in sync with galaxy.yml.
COLLECTION_NAMESPACE := kubeforge
COLLECTION_NAME := operators
COLLECTION_VERSION := $(shell sed -n 's/^version:[[:space:]]*//p' galaxy.yml)

# Base interpreter for the virtualenvs (resolved before PATH gets .venv/bin below).
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3)
endif
BUILD_DIR := .build
VENV := .venv
PY := $(VENV)/bin/python
VENV_STAMP := $(BUILD_DIR)/venv.stamp
VENV_BIN := $(CURDIR)/$(VENV)/bin

COLLECTIONS_DIR := $(CURDIR)/$(BUILD_DIR)/collections
COLLECTION_LINK := $(COLLECTIONS_DIR)/ansible_collections/$(COLLECTION_NAMESPACE)/$(COLLECTION_NAME)
DIST_DIR := $(BUILD_DIR)/dist

# Sanity needs a physical ansible_collections/<ns>/<name> path (ansible-test uses os.getcwd(), which resolves
# symlinks) and its own pinned tool versions, kept apart from the dev venv in a second virtualenv.
SANITY_ROOT := $(CURDIR)/$(BUILD_DIR)/sanity
SANITY_COLLECTION := $(SANITY_ROOT)/ansible_collections/$(COLLECTION_NAMESPACE)/$(COLLECTION_NAME)
SANITY_VENV := $(CURDIR)/$(BUILD_DIR)/sanity-venv
SANITY_STAMP := $(BUILD_DIR)/sanity-venv.stamp
# Only the ansible-core pin matters to the sanity virtualenv; this file changes only when that pin changes.
SANITY_PIN := $(CURDIR)/$(BUILD_DIR)/ansible-core.pin
SANITY_PYTHON_VERSION := 3.11
# ansible-test caches its per-test virtualenvs and the pip bootstrap script under ~/.ansible/test: a HOME of its own,
# kept beside the cached virtualenvs and keyed by the same pin, is reused by every clone (a lock keeps two runs from
# racing on it) and never touches the user's ~/.ansible.
VENV_CACHE := $(or $(KUBEFORGE_VENV_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/kubeforge-venvs)
SANITY_HOME = $(VENV_CACHE)/sanity-home-$(shell sha256sum $(SANITY_PIN) 2>/dev/null | cut -c1-16)
# Sanity tests that cannot run on this kind of host (each needs a reason):
#   (none) -- every test runs; tests for other Python versions are skipped by ansible-test itself because only
#   --python $(SANITY_PYTHON_VERSION) is requested.
SANITY_SKIP :=
# Optional extra target Pythons for the version-specific tests (compile, import), when their interpreters are on
# PATH, e.g. `make sanity SANITY_EXTRA_PYTHONS="3.9 3.13"`. CI hosts only have 3.11, so the default is none.
SANITY_EXTRA_PYTHONS ?=
SANITY_ARGS ?=

# The venv's site-packages holds the `ansible` package's ansible_collections (kubernetes.core).
VENV_SITE_PACKAGES = $(firstword $(wildcard $(CURDIR)/$(VENV)/lib/python3*/site-packages))
export ANSIBLE_COLLECTIONS_PATH = $(COLLECTIONS_DIR):$(VENV_SITE_PACKAGES)
# Tools run from the venv (ansible-lint also finds ansible-playbook/ansible-galaxy through PATH).
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Every pytest run lists its 15 slowest tests, so each CI log shows where the time goes.
PYTEST_REPORT := --durations=15

TESTBED := PYTHONPATH=$(CURDIR)/tests $(CURDIR)/$(PY) -m testbed

.PHONY: help venv env collection-link unit ruff format lint docs-lint docs sanity sanity-venv changelog-lint molecule \
	check-packages testbed-deps testbed-build testbed-up testbed-down testbed-status smoke smoke-parallel smoke-costs smoke-exclusive testbed-up-once testbed-down-once testbed-binaries test ee bench bench-olm bench-canary bench-fleet bench-upgrade-plan bench-operator bench-mirror demo build clean distclean \
	selfcontained

help: ## Show this help
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# ---------------------------------------------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------------------------------------------

venv: $(VENV_STAMP) ## Link .venv to the virtualenv of the pinned requirements-dev.txt (built once per machine, outside the clone)

# The virtualenvs live in ~/.cache/kubeforge-venvs, keyed by the interpreter and the requirement files (.ci/cached-venv):
# a fresh clone links the one built before instead of installing everything again; a changed pin builds a new one.
$(VENV_STAMP): requirements-dev.txt .ci/cached-venv
	@test -n "$(PYTHON)" || { echo "python3.11 or python3 is required" >&2; exit 1; }
	@mkdir -p $(dir $@)
	@bash .ci/cached-venv dev $(VENV) $(PYTHON) --key requirements-dev.txt -- \
		'"$$VENV/bin/python" -m pip install --quiet --upgrade pip && "$$VENV/bin/python" -m pip install --quiet -r requirements-dev.txt'
	@touch $@

collection-link: venv ## Link the tree to .build/collections/ansible_collections/kubeforge/operators
	@if [ ! -L $(COLLECTION_LINK) ] || [ "$$(readlink $(COLLECTION_LINK))" != "$(CURDIR)" ]; then \
		mkdir -p $(dir $(COLLECTION_LINK)); rm -rf $(COLLECTION_LINK); ln -s $(CURDIR) $(COLLECTION_LINK); \
		$(VENV)/bin/ansible-galaxy collection list $(COLLECTION_NAMESPACE).$(COLLECTION_NAME) >/dev/null; \
		$(VENV)/bin/ansible-galaxy collection list kubernetes.core >/dev/null; \
		$(VENV)/bin/ansible-doc -t module -l $(COLLECTION_NAMESPACE).$(COLLECTION_NAME) >/dev/null; \
		echo "collection linked; for an interactive shell run: eval \"\$$(make -s env)\""; fi

env: ## Print shell exports (venv PATH, ANSIBLE_COLLECTIONS_PATH): eval "$(make -s env)"
	@echo 'export PATH="$(CURDIR)/$(VENV)/bin:$$PATH"'
	@echo 'export ANSIBLE_COLLECTIONS_PATH="$(ANSIBLE_COLLECTIONS_PATH)"'

# ---------------------------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------------------------

# References that only resolve on one machine: data beside the checkout (the parent's shared/) or absolute home/work
# paths. Every test input lives in tests/data (third-party data, not scanned). The brackets in the pattern keep this
# Makefile from matching itself.
SELFCONTAINED_RE := \.\./shared|/wor[k]/|/roo[t]/|/hom[e]/

selfcontained: ## Fail on references outside the repository (parent dir, absolute machine paths) in git-visible files
	@hits="$$(git ls-files -z -co --exclude-standard -- . ':!tests/data' | xargs -0 -r grep -snIE '$(SELFCONTAINED_RE)' -- || true)"; \
	if [ -n "$$hits" ]; then \
		echo "ERROR: references outside the repository (put test inputs under tests/data):" >&2; \
		echo "$$hits" >&2; exit 1; fi
	@echo "selfcontained: no references outside the repository"

ruff: venv ## ruff check (lint + import order)
	$(VENV)/bin/ruff check .

format: venv ## Apply ruff format and the autofixable ruff rules (not part of CI)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

unit: collection-link check-packages ## Unit tests (all of tests/unit)
	$(PY) -m pytest tests/unit $(PYTEST_REPORT)

lint: collection-link ## ansible-lint, profile production (.ansible-lint)
	$(VENV)/bin/ansible-lint

changelog-lint: venv ## Validate changelog fragments
	$(VENV)/bin/antsibull-changelog lint

docs-lint: collection-link ## antsibull-docs: plugin docs and semantic markup (incl. doc fragments, through the modules using them)
	cd $(COLLECTION_LINK) && $(VENV_BIN)/antsibull-docs lint-collection-docs --plugin-docs .

# The documentation site: the Markdown guides of docs/ and the module, filter and role pages antsibull-docs generates
# from the collection, assembled in $(DOCS_SRC) and built by Sphinx (config docs/conf.py) from scratch every time, so
# that every warning fails the build (-W -n, nothing fetched from the network); then tests/docs/check_site.py loads it
# in Debian's chromium, headless (installed here when missing, like testbed-deps' packages).
DOCS_DIR := $(BUILD_DIR)/docs
DOCS_SRC := $(DOCS_DIR)/src
DOCS_HTML := $(DOCS_DIR)/html

docs: collection-link check-packages ## Docs site (antsibull-docs + Sphinx, warnings are errors) into .build/docs/html, checked in headless chromium
	@start=$$(date +%s); \
	rm -rf $(DOCS_DIR); mkdir -p $(DOCS_SRC); chmod 700 $(DOCS_SRC); \
	cp docs/*.md $(DOCS_SRC)/; \
	echo ">>> antsibull-docs: module, filter and role pages"; \
	$(VENV_BIN)/antsibull-docs collection --use-current --fail-on-error --dest-dir $(DOCS_SRC) \
		$(COLLECTION_NAMESPACE).$(COLLECTION_NAME) >/dev/null; \
	echo ">>> sphinx-build -W --keep-going -n -b html -c docs $(DOCS_SRC) $(DOCS_HTML)"; \
	$(VENV_BIN)/sphinx-build -W --keep-going -n -q -b html -c docs $(DOCS_SRC) $(DOCS_HTML); \
	$(PY) tests/docs/check_site.py $(DOCS_HTML); \
	echo ">>> docs site built and checked in $$(( $$(date +%s) - start )) s: $(DOCS_HTML)/index.html"

sanity-venv: $(SANITY_STAMP)

# ansible-test's own pinned sanity requirements, installed from PyPI. Tests that build throwaway virtualenvs
# (import, ...) bootstrap pip with a get-pip script that ansible-test downloads from the Ansible CI file host,
# which is not reachable from here; a stand-in in ansible-test's cache path uses ensurepip + PyPI instead.
$(SANITY_PIN): requirements-dev.txt
	@mkdir -p $(dir $@)
	@grep -E '^ansible-core==' requirements-dev.txt > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi

$(SANITY_STAMP): $(SANITY_PIN) .ci/cached-venv
	@# the pin by its path inside the clone: the key (which hashes the command and the key files' paths) is then the
	@# same for every clone, so a fresh clone reuses the virtualenv instead of building its own
	@bash .ci/cached-venv sanity $(SANITY_VENV) $(PYTHON) --key $(BUILD_DIR)/ansible-core.pin -- \
		'"$$VENV/bin/python" -m pip install --quiet --upgrade pip; "$$VENV/bin/python" -m pip install --quiet -r $(BUILD_DIR)/ansible-core.pin; \
		reqdir="$$("$$VENV/bin/python" -c "import ansible_test, os; print(os.path.join(os.path.dirname(ansible_test.__file__), \"_data\", \"requirements\"))")"; \
		for f in "$$reqdir"/sanity.*.txt; do \
			case "$$f" in *sanity.pslint.*) continue;; esac; \
			echo "    $$(basename $$f)"; "$$VENV/bin/python" -m pip install --quiet -r "$$f"; \
		done'
	@touch $@

sanity: venv sanity-venv check-packages ## ansible-test sanity on a physical copy of the git-visible files
	@mkdir -p $(SANITY_HOME)
	@HOME=$(SANITY_HOME) $(SANITY_VENV)/bin/python .ci/get_pip_standin.py --install >/dev/null
	@echo ">>> copying git-visible files to $(SANITY_COLLECTION)"
	@rm -rf $(SANITY_COLLECTION)
	@mkdir -p $(SANITY_COLLECTION)
	@# tests/data is third-party test data (some of it invalid on purpose), not content of this collection.
	@git ls-files -z -co --exclude-standard -- . ':!tests/data' | rsync -a --from0 --ignore-missing-args --files-from=- ./ $(SANITY_COLLECTION)/
	@# ansible-test lists content with `git ls-files --cached --others --exclude-standard` from the nearest git
	@# work tree; without its own (empty) repository the copy would be seen as ignored files of this one.
	@git -C $(SANITY_COLLECTION) init -q
	@# kubernetes.core (from the `ansible` package) next to our collection, for the import/validate-modules tests.
	@mkdir -p $(SANITY_ROOT)/ansible_collections/kubernetes
	@ln -sfn $(VENV_SITE_PACKAGES)/ansible_collections/kubernetes/core $(SANITY_ROOT)/ansible_collections/kubernetes/core
	cd $(SANITY_COLLECTION) && HOME=$(SANITY_HOME) PATH=$(SANITY_VENV)/bin:$$PATH flock $(SANITY_HOME).lock $(SANITY_VENV)/bin/ansible-test sanity \
		--local --python $(SANITY_PYTHON_VERSION) --color no $(foreach t,$(SANITY_SKIP),--skip-test $(t)) $(SANITY_ARGS)
	@for v in $(SANITY_EXTRA_PYTHONS); do \
		echo ">>> compile + import on Python $$v"; \
		(cd $(SANITY_COLLECTION) && HOME=$(SANITY_HOME) PATH=$(SANITY_VENV)/bin:$$PATH $(SANITY_VENV)/bin/ansible-test sanity \
			--local --python $$v --color no --test compile --test import $(SANITY_ARGS)) || exit 1; \
	done
	@for f in tests/sanity/ignore-*.txt; do \
		if [ -s "$$f" ]; then echo "ERROR: $$f must be empty (fix the code instead)" >&2; exit 1; fi; done

# ---------------------------------------------------------------------------------------------------------------
# Testbed (tests/testbed) and integration
# ---------------------------------------------------------------------------------------------------------------

check-packages: ## Install the checks' Debian packages when missing (rsync, shellcheck, gnupg, chromium)
	@bash .ci/install-check-packages.sh

testbed-deps: ## Install the testbed's Debian packages when missing (docker-registry, htpasswd, containerd, runc, CNI plugins, iptables)
	bash tests/testbed/scripts/install-packages.sh

testbed-build: venv testbed-deps ## Build the local testbed binaries (no-op when already built)
	$(TESTBED) build

# The same build without the virtualenv (build.sh needs bash, Go and python3 only), so `make test` runs it beside the
# virtualenv's installation.
testbed-binaries: testbed-deps
	bash tests/testbed/scripts/build.sh >/dev/null

testbed-up: venv testbed-deps ## Start the testbed (control plane, KWOK, OLM, opm, OCI registry)
	$(TESTBED) up

testbed-down: venv ## Stop the testbed
	$(TESTBED) down

testbed-status: venv ## Show testbed status
	$(TESTBED) status

# The integration tests share one testbed: pytest-xdist workers take whole test files (or the groups that files name
# with pytest.mark.xdist_group, for cluster-wide state they share), then the tests marked `exclusive` (restarts of
# testbed processes) run alone. `make test` runs the molecule scenarios beside the parallel part. Workers take the
# longest unit first, by tests/integration/unit_costs.json: `make smoke-costs` remakes it from the last parallel run.
SMOKE_WORKERS ?= 4
SMOKE_TIMELINE := $(BUILD_DIR)/test-logs/smoke-timeline.json
smoke: collection-link ## Testbed smoke/integration tests (tests/integration): in parallel, then the exclusive ones
	$(MAKE) testbed-up-once
	@status=0; $(MAKE) smoke-parallel || status=1; \
	if [ $$status = 0 ]; then $(MAKE) smoke-exclusive || status=1; fi; \
	$(MAKE) testbed-down-once; exit $$status

smoke-parallel: collection-link
	$(PY) -m pytest tests/integration -n $(SMOKE_WORKERS) --dist loadgroup -m "not exclusive" $(PYTEST_REPORT) --timeline $(SMOKE_TIMELINE)
	PYTHONPATH=tests $(PY) -m lib.scheduling summary $(SMOKE_TIMELINE)

smoke-costs: venv ## Remake tests/integration/unit_costs.json (the parallel tests' order) from the last smoke-parallel run
	PYTHONPATH=tests $(PY) -m lib.scheduling costs $(SMOKE_TIMELINE) > tests/integration/unit_costs.json.new
	mv tests/integration/unit_costs.json.new tests/integration/unit_costs.json

smoke-exclusive: collection-link
	$(PY) -m pytest tests/integration -m exclusive $(PYTEST_REPORT)

# Molecule scenarios of the roles (molecule/<scenario>/): no instances, the plays run on localhost against the
# testbed, whose variables file KUBEFORGE_TESTBED_VARS names. MOLECULE_GLOB keeps the collection's top-level molecule/
# directory without molecule's "migrate to extensions/molecule" warning.
MOLECULE_SCENARIOS ?= default cluster_setup olm_operator scc_relax canary_rollout catalog_publish catalog_mirror fleet_rollout upgrade_readiness olm_migrate
# A testbed this target starts is stopped again at the end (as the pytest session fixture does), failure or not.
molecule: collection-link ## Molecule scenarios of the roles against the testbed (brought up when needed)
	$(MAKE) testbed-build
	@if $(TESTBED) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(TESTBED) down' EXIT; fi; \
	$(TESTBED) up --olmv1 >/dev/null; \
	vars="$$($(TESTBED) ansible-vars)"; \
	mkdir -p .build/molecule; \
	for s in $(MOLECULE_SCENARIOS); do \
		echo ">>> molecule test -s $$s"; start=$$(date +%s); log=.build/molecule/$$s.log; \
		if ! KUBEFORGE_TESTBED_VARS="$$vars" MOLECULE_GLOB='molecule/*/molecule.yml' NO_COLOR=1 PY_COLORS=0 ANSIBLE_NOCOLOR=1 \
			$(VENV)/bin/molecule test -s "$$s" 2>&1 | tee "$$log"; then \
			echo ">>> molecule scenario $$s failed; the failed tasks again (whole output: $$log):"; \
			sed 's/\x1b\[[0-9;]*m//g' "$$log" | grep -B3 -A40 -E '\[ERROR\]|FAILED!' | tail -150 || tail -40 "$$log"; \
			exit 1; \
		fi; \
		echo ">>> molecule scenario $$s passed in $$(( $$(date +%s) - start )) s"; \
	done

# Two lanes at once (.ci/phases.py): the checks that need no cluster, one after the other, and the testbed's (build,
# up, the parallel integration tests beside molecule, the exclusive tests, down). Each phase's output is printed
# whole when it ends; a table of the phases and their durations closes the run.
TEST_LOGS := $(BUILD_DIR)/test-logs
# The scenarios in two lanes of about equal length (the preflight first); together they are MOLECULE_SCENARIOS.
# Measured in three runs of make test before olm_migrate joined lane A: lane A 617 to 693 s, lane B 739 to 878 s.
MOLECULE_LANE_A := default olm_operator canary_rollout fleet_rollout olm_migrate
MOLECULE_LANE_B := scc_relax cluster_setup catalog_publish catalog_mirror upgrade_readiness
# The checks that need no cluster run at a lower CPU priority: the testbed lane is the longer one (its tests wait on
# the cluster, which needs the CPU), and the checks still end well before it, in the time it leaves idle.
NICE_LANE := nice -n 10
# The molecule lanes end minutes before the parallel integration tests: a little lower priority than those too.
NICE_MOLECULE := nice -n 5
# The runner needs only the standard library: the virtualenv is one of its phases, built beside the testbed binaries.
test: ## CI: selfcontained, ruff, unit, sanity, ansible-lint, docs-lint, changelog-lint, docs site, build, execution environment context; beside them the testbed: build, smoke, molecule
	@test -n "$(PYTHON)" || { echo "python3.11 or python3 is required" >&2; exit 1; }
	@$(PYTHON) .ci/phases.py $(TEST_LOGS) \
		'venv=$(MAKE) venv' \
		'selfcontained=$(MAKE) selfcontained' \
		'ruff=$(MAKE) ruff@venv,selfcontained!' \
		'unit=$(NICE_LANE) $(MAKE) unit@ruff!' \
		'sanity=$(NICE_LANE) $(MAKE) sanity@unit!' \
		'lint=$(NICE_LANE) $(MAKE) lint@sanity!' \
		'docs-lint=$(NICE_LANE) $(MAKE) docs-lint@lint!' \
		'changelog-lint=$(NICE_LANE) $(MAKE) changelog-lint@docs-lint!' \
		'docs=$(NICE_LANE) $(MAKE) docs@changelog-lint!' \
		'build+ee=$(NICE_LANE) $(MAKE) ee@docs!' \
		'testbed-build=$(MAKE) testbed-binaries' \
		'testbed-up=$(MAKE) testbed-up-once@venv,testbed-build' \
		'smoke-parallel=$(MAKE) smoke-parallel@testbed-up' \
		'molecule-a=$(NICE_MOLECULE) $(MAKE) molecule MOLECULE_SCENARIOS="$(MOLECULE_LANE_A)"@testbed-up' \
		'molecule-b=$(NICE_MOLECULE) $(MAKE) molecule MOLECULE_SCENARIOS="$(MOLECULE_LANE_B)"@testbed-up' \
		'smoke-exclusive=$(MAKE) smoke-exclusive@smoke-parallel,molecule-a,molecule-b!' \
		'testbed-down=$(MAKE) testbed-down-once@testbed-up,smoke-parallel,molecule-a,molecule-b,smoke-exclusive!'

# A testbed that `make test` starts is stopped at its end; one that was already running is left running.
TESTBED_STARTED_MARK := $(BUILD_DIR)/testbed-started-by-test
# The parallel tests and molecule need what they share in place before they start: OLM v1 (its start rewrites
# ansible-vars.json) and every node a test asks for (a node added during a rollout changes its counts).
TEST_NODES := 20
testbed-up-once: venv testbed-deps
	@if $(TESTBED) status >/dev/null 2>&1; then echo "testbed already running: reused, left running"; \
	else mkdir -p $(BUILD_DIR); touch $(TESTBED_STARTED_MARK); fi
	$(TESTBED) up --nodes $(TEST_NODES) --olmv1 >/dev/null
	$(TESTBED) scale $(TEST_NODES)

testbed-down-once: venv
	@if [ -f $(TESTBED_STARTED_MARK) ]; then rm -f $(TESTBED_STARTED_MARK); $(TESTBED) down; \
	else echo "testbed not started by this run: left running"; fi

ee: build ## AWX/AAP execution environment: ansible-builder create into .build/ee, then check the context (no image build)
	cp $(ARTIFACT) $(DIST_DIR)/$(COLLECTION_NAMESPACE)-$(COLLECTION_NAME).tar.gz
	rm -rf $(BUILD_DIR)/ee
	$(VENV)/bin/ansible-builder create --file execution-environment.yml --context $(BUILD_DIR)/ee
	$(VENV)/bin/python -m pytest tests/ee -q

bench: venv ## Benchmark our FBC engine against opm side by side (not a test; needs `make testbed-build`)
	@mkdir -p $(BUILD_DIR)/bench
	$(PY) benchmarks/run.py --out $(BUILD_DIR)/bench/results.json --markdown $(BUILD_DIR)/bench/results.md $(BENCH_ARGS)

bench-mirror: collection-link testbed-deps ## Benchmark catalog_mirror's copy against skopeo and its filter against oc-mirror's catalog-filter (not a test)
	@mkdir -p $(BUILD_DIR)/bench
	benchmarks/mirror/install-skopeo.sh
	$(PY) benchmarks/mirror/run.py --out $(BUILD_DIR)/bench/mirror.json --markdown $(BUILD_DIR)/bench/mirror.md $(BENCH_ARGS)
	$(PY) benchmarks/mirror/filter.py --out $(BUILD_DIR)/bench/mirror-filter.json --markdown $(BUILD_DIR)/bench/mirror-filter.md

bench-olm: collection-link testbed-deps ## Benchmark olm_operator against kubernetes.core on the testbed (brings it up if needed; not a test)
	@mkdir -p $(BUILD_DIR)/bench
	$(PY) benchmarks/olm/run.py --out $(BUILD_DIR)/bench/olm.json --markdown $(BUILD_DIR)/bench/olm.md $(BENCH_ARGS)

bench-canary: collection-link testbed-deps ## Benchmark daemonset_canary against the DaemonSet controller's rolling update on 100 and 1000 KWOK nodes (not a test)
	@mkdir -p $(BUILD_DIR)/bench
	$(PY) benchmarks/canary/run.py --out $(BUILD_DIR)/bench/canary.json --markdown $(BUILD_DIR)/bench/canary.md $(BENCH_ARGS)

bench-fleet: collection-link testbed-deps ## Benchmark playbooks/fleet_rollout.yml against a kubernetes.core loop on the testbed's member clusters (starts them and leaves them running; not a test)
	@mkdir -p $(BUILD_DIR)/bench
	$(PY) benchmarks/fleet/run.py --out $(BUILD_DIR)/bench/fleet.json --markdown $(BUILD_DIR)/bench/fleet.md $(BENCH_ARGS)

bench-upgrade-plan: collection-link testbed-deps ## Benchmark olm_upgrade_plan (50 operators, 500-package catalog) against a kubernetes.core k8s_info loop on the testbed (not a test)
	@mkdir -p $(BUILD_DIR)/bench
	$(PY) benchmarks/upgrade_plan/run.py --out $(BUILD_DIR)/bench/upgrade-plan.json --markdown $(BUILD_DIR)/bench/upgrade-plan.md $(BENCH_ARGS)

bench-operator: collection-link testbed-deps ## Benchmark a no-op OperatorInstall reconcile: our role vs the operator-sdk scaffold way (kubernetes.core k8s tasks) on the testbed (not a test)
	@mkdir -p $(BUILD_DIR)/bench
	$(PY) benchmarks/operator/run.py --out $(BUILD_DIR)/bench/operator.json --markdown $(BUILD_DIR)/bench/operator.md $(BENCH_ARGS)

# The catalog act needs no cluster: it runs while the testbed builds in the background (a line per component as it
# lands), so a fresh machine shows the collection at work within minutes instead of after the cold build.
demo: collection-link testbed-deps ## Build/start the testbed (the catalog act runs meanwhile) and run playbooks/demo.yml, playbooks/demo_operator.yml, then the fleet act (playbooks/demo_fleet.yml)
	@$(TESTBED) build >/dev/null & build=$$!; \
	status=0; $(VENV)/bin/ansible-playbook playbooks/demo_catalog.yml || status=$$?; \
	! kill -0 $$build 2>/dev/null || echo ">>> waiting for the testbed build (a line per component as it lands)"; \
	wait $$build || { echo "the testbed build failed" >&2; exit 1; }; exit $$status
	$(MAKE) testbed-up
	$(TESTBED) up --olmv1
	$(TESTBED) scale 10
	$(VENV)/bin/ansible-playbook playbooks/demo.yml -e @"$$($(TESTBED) ansible-vars)"
	$(VENV)/bin/ansible-playbook playbooks/demo_operator.yml -e @"$$($(TESTBED) ansible-vars)"
	$(TESTBED) members 2 >/dev/null
	@mkdir -p $(BUILD_DIR)/demo
	@$(PY) -c 'import json, sys; v = json.load(open(sys.argv[1])); print(json.dumps({"plugin": "kubeforge.operators.clusters", \
		"kubeconfigs": [v["testbed_fleet_kubeconfigs"]], "groups": {"canary": "context == \"testbed\""}}, indent=2))' \
		"$$($(TESTBED) ansible-vars)" > $(BUILD_DIR)/demo/fleet.clusters.yml
	$(VENV)/bin/ansible-playbook -i $(BUILD_DIR)/demo/fleet.clusters.yml playbooks/demo_fleet.yml -e @"$$($(TESTBED) ansible-vars)"

# ---------------------------------------------------------------------------------------------------------------
# Packaging
# ---------------------------------------------------------------------------------------------------------------

ARTIFACT := $(DIST_DIR)/$(COLLECTION_NAMESPACE)-$(COLLECTION_NAME)-$(COLLECTION_VERSION).tar.gz

build: venv ## Build the collection artifact into .build/dist and test-install it
	@mkdir -p $(DIST_DIR)
	$(VENV)/bin/ansible-galaxy collection build --force --output-path $(DIST_DIR) .
	@echo ">>> checking that no development files were packaged"
	@if tar -tzf $(ARTIFACT) | grep -E '(^|/)(\.venv|\.build|\.ci|\.git|tests/output|tests/data|benchmarks|__pycache__)(/|$$)'; then \
		echo "ERROR: development files in $(ARTIFACT); extend build_ignore in galaxy.yml" >&2; exit 1; fi
	@echo ">>> test-installing $(ARTIFACT)"
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	export ANSIBLE_COLLECTIONS_PATH="$$tmp:$(VENV_SITE_PACKAGES)"; \
	$(VENV)/bin/ansible-galaxy collection install --offline -p "$$tmp" $(ARTIFACT); \
	test -f "$$tmp/ansible_collections/$(COLLECTION_NAMESPACE)/$(COLLECTION_NAME)/MANIFEST.json"; \
	$(VENV)/bin/ansible-galaxy collection list $(COLLECTION_NAMESPACE).$(COLLECTION_NAME); \
	$(VENV)/bin/ansible-doc -t module -l $(COLLECTION_NAMESPACE).$(COLLECTION_NAME) >/dev/null
	@echo ">>> $(ARTIFACT) OK"

clean: ## Remove build outputs and caches (keeps .venv and the sanity virtualenv)
	rm -rf $(DIST_DIR) $(SANITY_ROOT) $(BUILD_DIR)/tmp tests/output .pytest_cache .ruff_cache .hypothesis
	find . -path ./$(VENV) -prune -o -path ./$(BUILD_DIR) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean ## clean + remove .venv and all of .build
	rm -rf $(VENV) $(BUILD_DIR)
