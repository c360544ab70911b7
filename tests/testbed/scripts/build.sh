#!/usr/bin/env bash
# Build every testbed binary from Go modules (through the Go module proxy only) into a cache
# directory outside the repository, keyed by every component version and the Go version.
# Re-running is cheap: each binary is skipped when present, and a .done stamp naming every component marks a
# full build (a cache built before a component was added builds only the missing binaries).
#
# Usage: build.sh            build (or reuse) and print the bin directory on the last line
#        build.sh --print-bin  only print the bin directory
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.35.4}
ETCD_VERSION=${ETCD_VERSION:-v3.5.21}
KWOK_VERSION=${KWOK_VERSION:-v0.8.0}
OLM_VERSION=${OLM_VERSION:-v0.46.0}
OPM_VERSION=${OPM_VERSION:-v1.73.0}
# OLM v1 (catalogd + operator-controller): v1.5.1 is the newest release buildable through the proxy here
# (see tests/testbed/README.md, "OLM v1").
OLMV1_VERSION=${OLMV1_VERSION:-v1.5.1}
# ansible-operator (operator-framework/ansible-operator-plugins): v1.42.3 is refused by the proxy here, v1.42.2
# builds (see tests/testbed/README.md, "ansible-operator"). Its binary carries the version in its name, so a new
# version is a new component of the same cache.
ANSIBLE_OPERATOR_VERSION=${ANSIBLE_OPERATOR_VERSION:-v1.42.2}
ANSIBLE_OPERATOR_BINARY="ansible-operator-${ANSIBLE_OPERATOR_VERSION}"
# OpenShift's SCC admission as a webhook: our own program (tests/testbed/sccadmission, pinned go.mod), named by a
# digest of its sources (scc_admission.py computes the same), so an edit builds a new binary.
SCC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../sccadmission" && pwd)"
SCC_BINARY="sccadmission-$(cd "$SCC_DIR" && cat go.mod go.sum main.go | sha256sum | cut -c1-12)"
# The real node's cluster DNS: CoreDNS with the testbed's few plugins (tests/testbed/coredns, pinned go.mod), named
# by a digest of its sources like the SCC webhook (realnode.py computes the same).
COREDNS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../coredns" && pwd)"
COREDNS_BINARY="coredns-$(cd "$COREDNS_DIR" && cat go.mod go.sum main.go | sha256sum | cut -c1-12)"
# grpc_health_probe, which OLM's registry pods run as their probes (in the testbed's opm image).
GRPC_HEALTH_PROBE_VERSION=${GRPC_HEALTH_PROBE_VERSION:-v0.4.62}
# The testbed's own programs (pause, crash, relay; tests/testbed/programs): one multi-call binary, named the same way
# (realnode.py computes the same digest).
PROGRAMS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../programs" && pwd)"
PROGRAMS_BINARY="testbed-programs-$(cd "$PROGRAMS_DIR" && cat go.mod main.go | sha256sum | cut -c1-12)"

command -v go >/dev/null 2>&1 || { echo "build.sh: the Go toolchain (1.26.3 or later) is required on PATH" >&2; exit 1; }
GO_VERSION=$(go env GOVERSION)
# OLM's and opm's go.mod need go >= 1.26.3; with GOTOOLCHAIN=local an older Go fails late and obscurely.
if ! printf '%s\n%s\n' "go1.26.3" "$GO_VERSION" | sort -V -C; then
  echo "build.sh: Go $GO_VERSION is too old; 1.26.3 or later is required" >&2; exit 1
fi
CACHE=${KUBEFORGE_TESTBED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeforge-testbed}
BASE_KEY="k8s-${K8S_VERSION}.etcd-${ETCD_VERSION}.kwok-${KWOK_VERSION}.olm-${OLM_VERSION}.opm-${OPM_VERSION}"
KEY="${BASE_KEY}.olmv1-${OLMV1_VERSION}.${GO_VERSION}"
BIN="$CACHE/bin/$KEY"
SRC="$CACHE/src/$KEY"

if [ "${1:-}" = "--print-bin" ]; then echo "$BIN"; exit 0; fi

export GOFLAGS="-trimpath -buildvcs=false"
export GOTOOLCHAIN=local          # never download a toolchain
export GOPROXY=${GOPROXY:-https://proxy.golang.org}
# Modules are fetched only through the proxy: no VCS fallback.
case "$GOPROXY" in *direct*) export GOPROXY=https://proxy.golang.org ;; esac
export GONOSUMDB=''
export GOFLAGS
mkdir -p "$BIN" "$SRC"

# Every binary the testbed runs; the .done stamp holds this list, so adding a component to it makes an
# existing cache build just that component (each present binary is skipped).
COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet etcd kwok olm catalog package-server opm catalogd operator-controller $ANSIBLE_OPERATOR_BINARY $SCC_BINARY $PROGRAMS_BINARY $COREDNS_BINARY grpc_health_probe copy-content cpb kube-proxy"
OLMV1_BINARIES="catalogd operator-controller"
if [ -f "$BIN/.done" ] && [ "$(cat "$BIN/.done")" = "$COMPONENTS" ]; then echo "$BIN"; exit 0; fi

# A cache whose key differs only in the OLM v1 part (built before OLM v1 was a component, or for another
# OLMV1_VERSION) already holds every other binary: hard-link them (and copy the wrapper modules), so only
# OLM v1 is built.
if [ ! -f "$BIN/.done" ]; then
  for seed in "$CACHE/bin/${BASE_KEY}.${GO_VERSION}" "$CACHE/bin/${BASE_KEY}".olmv1-*".${GO_VERSION}"; do
    if [ ! -f "$seed/.done" ] || [ "$seed" = "$BIN" ]; then continue; fi
    for c in $COMPONENTS; do
      case " $OLMV1_BINARIES " in *" $c "*) continue ;; esac
      if [ -x "$seed/$c" ] && [ ! -e "$BIN/$c" ]; then ln "$seed/$c" "$BIN/$c" 2>/dev/null || cp -p "$seed/$c" "$BIN/$c"; fi
    done
    seedsrc="$CACHE/src/${seed##*/}"
    for d in k8s etcd olm opm; do
      if [ -d "$seedsrc/$d" ] && [ ! -e "$SRC/$d" ]; then cp -a "$seedsrc/$d" "$SRC/$d"; fi
    done
    printf '[testbed-build] reusing the binaries of %s\n' "${seed##*/}" >&2
    break
  done
fi

log() { printf '[testbed-build %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
start=$(date +%s)
LOGS="$SRC/.logs"
mkdir -p "$LOGS"

# Progress: one line per component as it lands, with what is left (a newcomer's `make demo` shows only these lines;
# the compiler's own output goes to $LOGS/<step>.log and is printed when a step fails).
progress() {
  local done=0 left=()
  for c in $COMPONENTS; do if [ -x "$BIN/$c" ]; then done=$((done + 1)); else left+=("$c"); fi; done
  log "$* ($done/$(wc -w <<<"$COMPONENTS") built$([ ${#left[@]} -gt 0 ] && printf '; left: %s' "${left[*]}"), $(( $(date +%s) - start )) s)"
}

# go build of several main packages of one module at once (one compile graph, links in parallel), each binary
# moved into $BIN only when whole; only the missing binaries are built.
go_build_into_bin() {  # <module dir> <package prefix> <go build flags...> -- <name...>
  local wd=$1 prefix=$2; shift 2
  local flags=() names=() pkgs=() out
  while [ "$1" != "--" ]; do flags+=("$1"); shift; done; shift
  for c in "$@"; do [ -x "$BIN/$c" ] || { names+=("$c"); pkgs+=("$prefix/$c"); }; done
  [ ${#names[@]} -gt 0 ] || return 0
  out=$(mktemp -d "$BIN/.build.XXXXXX")
  if [ ${#names[@]} -eq 1 ]; then
    (cd "$wd" && go build "${flags[@]}" -o "$out/${names[0]}" "${pkgs[0]}")
  else
    (cd "$wd" && go build "${flags[@]}" -o "$out/" "${pkgs[@]}")
  fi
  for c in "${names[@]}"; do mv "$out/$c" "$BIN/$c"; done
  rmdir "$out"
}

# --- Kubernetes control plane and the real node's kubelet: wrapper module replacing each staging module with its
# published version
K8S_COMMANDS="kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy"
prepare_k8s() {
  local wd="$SRC/k8s" stg="v0.${K8S_VERSION#v1.}" tools
  mkdir -p "$wd"
  if [ ! -f "$wd/go.mod" ]; then
    local gomod goline godebug
    gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | python3 -c 'import json,sys; print(json.load(sys.stdin)["GoMod"])')
    goline=$(sed -n 's/^go \([0-9][0-9.]*\)[[:space:]]*$/\1/p' "$gomod" | head -n1)
    godebug=$(sed -n 's/^godebug \(default=[^[:space:]]*\).*$/\1/p' "$gomod" | head -n1)
    [ -n "$godebug" ] || godebug="default=go$(echo "$goline" | cut -d. -f1,2)"
    mapfile -t staging < <(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/.*#\1#p' "$gomod" | sort -u)
    {
      printf 'module local/k8sbins\n\ngo %s\n\ngodebug %s\n\n' "$goline" "$godebug"
      printf 'require k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
      for m in "${staging[@]}"; do printf '\t%s => %s %s\n' "$m" "$m" "$stg"; done
      printf ')\n'
    } > "$wd/go.mod"
  fi
  tools=$(
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for c in $K8S_COMMANDS; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
    printf ')'
  )
  # A new command (kubelet, added after caches existed) needs go.sum entries for its packages.
  if [ ! -f "$wd/go.sum" ] || [ "$(cat "$wd/tools.go" 2>/dev/null)" != "$tools" ]; then
    printf '%s\n' "$tools" > "$wd/tools.go"
    (cd "$wd" && go mod tidy)
  fi
  (cd "$wd" && go mod download)
}

build_k8s() {
  local minor d ldf="-s -w"
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  d=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=$d"
  done
  # shellcheck disable=SC2086 # a list of names
  CGO_ENABLED=0 go_build_into_bin "$SRC/k8s" k8s.io/kubernetes/cmd -ldflags "$ldf" -- $K8S_COMMANDS
}

prepare_etcd() {
  local wd="$SRC/etcd"
  mkdir -p "$wd"
  if [ ! -f "$wd/go.mod" ]; then
    (cd "$wd" && go mod init local/etcdw >/dev/null 2>&1 && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
  fi
  (cd "$wd" && go mod download)
}

build_etcd() {
  [ -x "$BIN/etcd" ] && return 0
  local out
  out=$(mktemp -d "$BIN/.build.XXXXXX")
  (cd "$SRC/etcd" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3) && mv "$out/etcd" "$BIN/etcd"
  rmdir "$out"
}

# kwok through a wrapper module too, so its download is part of the parallel prefetch.
prepare_kwok() { wrapper kwok sigs.k8s.io/kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok >/dev/null; }
build_kwok() { CGO_ENABLED=0 go_build_into_bin "$SRC/kwok" sigs.k8s.io/kwok/cmd -ldflags "-s -w" -- kwok; }

# A throwaway module requiring <module>@<version>, so `go build` works where `go install m@v` does not:
# go install looks up the module's deprecation through the proxy's version list, which the proxy refuses
# for some modules (403 "not available"); a wrapper module only needs the pinned version.
wrapper() {
  local name=$1 module=$2 version=$3; shift 3
  local wd="$SRC/$name"
  mkdir -p "$wd"
  local tools
  tools=$(
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for pkg in "$@"; do printf '\t_ "%s"\n' "$pkg"; done
    printf ')'
  )
  if [ ! -f "$wd/go.sum" ]; then
    {
      printf 'module local/%s\n\ngo %s\n\nrequire %s %s\n' "$name" "$(go env GOVERSION | sed 's/^go//')" "$module" "$version"
      # replace directives only apply in the main module: copy the wrapped module's (version to version only),
      # or MVS may pick dependency versions it was never built with (operator-controller pins k8s.io/* this way).
      if [ "${WRAPPER_COPY_REPLACES:-0}" = 1 ]; then
        (cd "$SRC" && go mod download -json "$module@$version") | python3 -c '
import json, re, sys
text = open(json.load(sys.stdin)["GoMod"]).read()
text = re.sub(r"(?ms)^replace \((.*?)^\)", lambda m: "\n".join("replace " + l.strip() for l in m.group(1).splitlines() if l.strip()), text)
for line in text.splitlines():
    if re.fullmatch(r"replace \S+( \S+)? => \S+ v\S+", line.split("//")[0].strip()):
        print(line.split("//")[0].strip())
'
      fi
    } > "$wd/go.mod"
  fi
  # A new package list (a component added to an existing cache) needs go.sum entries for its packages.
  if [ ! -f "$wd/go.sum" ] || [ "$(cat "$wd/tools.go" 2>/dev/null)" != "$tools" ]; then
    printf '%s\n' "$tools" > "$wd/tools.go"
    (cd "$wd" && go mod tidy >&2)
  fi
  echo "$wd"
}

OLM_MODULE=github.com/operator-framework/operator-lifecycle-manager
prepare_olm() {
  # package-server serves the PackageManifest API (packages.operators.coreos.com) through the aggregator.
  # copy-content and cpb go into the testbed's OLM util image (extractContent catalogs and bundle unpack Jobs on the
  # real node).
  wrapper olm "$OLM_MODULE" "$OLM_VERSION" "$OLM_MODULE/cmd/olm" "$OLM_MODULE/cmd/catalog" "$OLM_MODULE/cmd/package-server" \
    "$OLM_MODULE/cmd/copy-content" "$OLM_MODULE/util/cpb" >/dev/null
}
build_olm() {
  CGO_ENABLED=0 go_build_into_bin "$SRC/olm" "$OLM_MODULE/cmd" -tags json1 \
    -ldflags "-s -w -X $OLM_MODULE/pkg/version.OLMVersion=$OLM_VERSION" -- olm catalog package-server copy-content
  CGO_ENABLED=0 go_build_into_bin "$SRC/olm" "$OLM_MODULE/util" -ldflags "-s -w" -- cpb
}

OPM_MODULE=github.com/operator-framework/operator-registry
prepare_opm() { wrapper opm "$OPM_MODULE" "$OPM_VERSION" "$OPM_MODULE/cmd/opm" >/dev/null; }
build_opm() {
  CGO_ENABLED=1 go_build_into_bin "$SRC/opm" "$OPM_MODULE/cmd" -tags json1,containers_image_openpgp \
    -ldflags "-s -w -X $OPM_MODULE/cmd/opm/version.gitCommit=$OPM_VERSION -X $OPM_MODULE/cmd/opm/version.opmVersion=$OPM_VERSION" -- opm
}

# catalogd and operator-controller (OLM v1). The sumdb has no entry for the module (404): skip it for that one
# module only. containers_image_openpgp: containers/image's signature code without gpgme (cgo), as upstream builds.
OLMV1_MODULE=github.com/operator-framework/operator-controller
prepare_olmv1() {
  GONOSUMDB=$OLMV1_MODULE WRAPPER_COPY_REPLACES=1 wrapper olmv1 "$OLMV1_MODULE" "$OLMV1_VERSION" \
    "$OLMV1_MODULE/cmd/catalogd" "$OLMV1_MODULE/cmd/operator-controller" >/dev/null
}
build_olmv1() {
  GONOSUMDB=$OLMV1_MODULE CGO_ENABLED=0 go_build_into_bin "$SRC/olmv1" "$OLMV1_MODULE/cmd" -tags containers_image_openpgp \
    -ldflags "-s -w" -- catalogd operator-controller
}

# ansible-operator, the runtime of Ansible-based operators (its Makefile builds with CGO_ENABLED=0).
ANSIBLE_OPERATOR_MODULE=github.com/operator-framework/ansible-operator-plugins
prepare_ansible_operator() {
  wrapper ansible-operator "$ANSIBLE_OPERATOR_MODULE" "$ANSIBLE_OPERATOR_VERSION" "$ANSIBLE_OPERATOR_MODULE/cmd/ansible-operator" >/dev/null
}
build_ansible_operator() {
  [ -x "$BIN/$ANSIBLE_OPERATOR_BINARY" ] && return 0
  local out
  out=$(mktemp -d "$BIN/.build.XXXXXX")
  (cd "$SRC/ansible-operator" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$out/$ANSIBLE_OPERATOR_BINARY" "$ANSIBLE_OPERATOR_MODULE/cmd/ansible-operator") \
    && mv "$out/$ANSIBLE_OPERATOR_BINARY" "$BIN/$ANSIBLE_OPERATOR_BINARY"
  rmdir "$out"
}

prepare_sccadmission() { (cd "$SCC_DIR" && go mod download); }
build_sccadmission() {
  (cd "$SCC_DIR" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$BIN/$SCC_BINARY.tmp" .) && mv "$BIN/$SCC_BINARY.tmp" "$BIN/$SCC_BINARY"
  find "$BIN" -maxdepth 1 -name 'sccadmission-*' ! -name "$SCC_BINARY" -delete  # builds of earlier sources
}

prepare_coredns() { (cd "$COREDNS_DIR" && go mod download); }
build_coredns() {
  (cd "$COREDNS_DIR" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$BIN/$COREDNS_BINARY.tmp" .) && mv "$BIN/$COREDNS_BINARY.tmp" "$BIN/$COREDNS_BINARY"
  find "$BIN" -maxdepth 1 -name 'coredns-*' ! -name "$COREDNS_BINARY" -delete
}

GRPC_HEALTH_PROBE_MODULE=github.com/grpc-ecosystem/grpc-health-probe
prepare_grpc_health_probe() { wrapper grpc-health-probe "$GRPC_HEALTH_PROBE_MODULE" "$GRPC_HEALTH_PROBE_VERSION" "$GRPC_HEALTH_PROBE_MODULE" >/dev/null; }
build_grpc_health_probe() {
  (cd "$SRC/grpc-health-probe" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$BIN/grpc_health_probe.tmp" "$GRPC_HEALTH_PROBE_MODULE") \
    && mv "$BIN/grpc_health_probe.tmp" "$BIN/grpc_health_probe"
}

prepare_programs() { :; }  # standard library only
build_programs() {
  (cd "$PROGRAMS_DIR" && CGO_ENABLED=0 go build -ldflags "-s -w" -o "$BIN/$PROGRAMS_BINARY.tmp" .) && mv "$BIN/$PROGRAMS_BINARY.tmp" "$BIN/$PROGRAMS_BINARY"
  find "$BIN" -maxdepth 1 -name 'testbed-programs-*' ! -name "$PROGRAMS_BINARY" -delete
}

# step -> the binaries it makes (a step whose binaries are all present is skipped, its download too).
declare -A STEP_BINARIES=(
  [k8s]="$K8S_COMMANDS" [etcd]="etcd" [kwok]="kwok"
  [olm]="olm catalog package-server copy-content cpb" [opm]="opm" [olmv1]="catalogd operator-controller"
  [ansible_operator]="$ANSIBLE_OPERATOR_BINARY" [sccadmission]="$SCC_BINARY" [programs]="$PROGRAMS_BINARY"
  [coredns]="$COREDNS_BINARY" [grpc_health_probe]="grpc_health_probe"
)
step_needed() { local c; for c in ${STEP_BINARIES[$1]}; do [ -x "$BIN/$c" ] || return 0; done; return 1; }

# Every download starts at once (the network is idle while the compiler works); two compile lanes keep both CPUs
# busy through each build's single-threaded link and its tail of few packages. Largest first in each lane.
# A download's exit status lands in prepare-<step>.rc: the lanes are subshells and cannot `wait` for their siblings.
rm -f "$LOGS"/prepare-*.rc
PREPARED=" "
for step in k8s olm olmv1 kwok opm ansible_operator sccadmission programs coredns grpc_health_probe etcd; do
  step_needed "$step" || { log "${STEP_BINARIES[$step]}: cached"; continue; }
  ( rc=0; "prepare_$step" >"$LOGS/prepare-$step.log" 2>&1 || rc=$?; echo "$rc" >"$LOGS/prepare-$step.rc" ) &
  PREPARED+="$step "
done

run_step() {
  local step=$1 t0
  case "$PREPARED" in *" $step "*) ;; *) return 0 ;; esac
  while [ ! -s "$LOGS/prepare-$step.rc" ]; do sleep 1; done
  if [ "$(cat "$LOGS/prepare-$step.rc")" != 0 ]; then
    cat "$LOGS/prepare-$step.log" >&2; log "downloading the modules of ${STEP_BINARIES[$step]} failed"; return 1
  fi
  log "building ${STEP_BINARIES[$step]} ..."
  t0=$(date +%s)
  if ! "build_$step" >"$LOGS/build-$step.log" 2>&1; then
    cat "$LOGS/build-$step.log" >&2; log "building ${STEP_BINARIES[$step]} failed"; return 1
  fi
  progress "${STEP_BINARIES[$step]}: built in $(( $(date +%s) - t0 )) s"
}
lane() { local step; for step in "$@"; do run_step "$step" || return 1; done; }

lane k8s olmv1 etcd grpc_health_probe & lane_a=$!
lane olm kwok opm ansible_operator sccadmission programs coredns & lane_b=$!
failed=0
wait "$lane_a" || failed=1
wait "$lane_b" || failed=1
wait  # the downloads of a lane that stopped early
[ "$failed" = 0 ] || { echo "build.sh: the testbed build failed (logs: $LOGS)" >&2; exit 1; }

# Source trees the testbed reads at run time (CRDs, default stages) come from the module cache.
(cd "$SRC/olm" && go mod download "sigs.k8s.io/kwok@$KWOK_VERSION" "github.com/operator-framework/operator-lifecycle-manager@$OLM_VERSION" >/dev/null)
(cd "$SRC/olm" && GONOSUMDB=github.com/operator-framework/operator-controller go mod download "github.com/operator-framework/operator-controller@$OLMV1_VERSION" >/dev/null)
printf '%s\n' "$K8S_VERSION" "$ETCD_VERSION" "$KWOK_VERSION" "$OLM_VERSION" "$OPM_VERSION" "$GO_VERSION" "$OLMV1_VERSION" "$ANSIBLE_OPERATOR_VERSION" > "$BIN/VERSIONS"
for c in $COMPONENTS; do [ -x "$BIN/$c" ] || { echo "build.sh: $c was not built" >&2; exit 1; }; done
printf '%s' "$COMPONENTS" > "$BIN/.done"
log "build finished in $(( $(date +%s) - start ))s"
if [ "${KUBEFORGE_TESTBED_CLEAN_GOCACHE:-0}" = 1 ]; then go clean -cache; fi
echo "$BIN"
