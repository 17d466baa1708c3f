#!/usr/bin/env bash
# Runs a real etcd + kube-apiserver on loopback for the e2e suite, and a
# toxiproxy server (a TCP fault proxy) for the chaos suite.
#
#   scripts/realapi.sh build               # compile them (and kubectl) from their Go modules (cached)
#   eval "$(scripts/realapi.sh start)"     # start them; exports REALAPI_* for the tests
#   scripts/realapi.sh stop "$REALAPI_DIR" # stop them and remove their data
#
# Binaries are cached in $REALAPI_HOME/bin (default ~/.cache/realapi); the first
# build takes about ten minutes on two cores, later runs reuse it.
# REALAPI_EXTRA_FLAGS adds kube-apiserver flags; REALAPI_AUTHZ=RBAC turns on
# RBAC so that REALAPI_TOKEN_NOBODY is refused everything.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-3.7.3}"
TOXIPROXY_VERSION="${TOXIPROXY_VERSION:-2.5.0}"
REALAPI_HOME="${REALAPI_HOME:-$HOME/.cache/realapi}"
BIN="$REALAPI_HOME/bin"

log() { echo "realapi: $*" >&2; }

build_etcd() {
  local src="$REALAPI_HOME/src/etcd"
  mkdir -p "$src"
  (
    cd "$src"
    printf 'module realapi/etcd\n\ngo 1.26\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' "$ETCD_VERSION" > go.mod
    # etcd's server module pins its sibling modules loosely; hold them at one release.
    for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do
      echo "replace go.etcd.io/etcd/$m => go.etcd.io/etcd/$m v$ETCD_VERSION" >> go.mod
    done
    printf '//go:build tools\n\npackage etcd\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
    go mod tidy >/dev/null
    go build -trimpath -ldflags='-s -w' -o "$BIN/etcd" go.etcd.io/etcd/server/v3
  )
}

# The release's version, as the release build stamps it (else both binaries
# say v0.0.0-master).
kube_version_ldflags() {
  local v=k8s.io/component-base/version minor=${KUBE_VERSION#1.}
  echo "-X $v.gitMajor=1 -X $v.gitMinor=${minor%%.*} -X $v.gitVersion=v$KUBE_VERSION -X $v.gitTreeState=clean"
}

build_apiserver() {
  local src="$REALAPI_HOME/src/kube-apiserver"
  mkdir -p "$src"
  (
    cd "$src"
    printf 'module realapi/kubeapiserver\n\ngo 1.26\n\nrequire k8s.io/kubernetes v%s\n' "$KUBE_VERSION" > go.mod
    # k8s.io/kubernetes refers to its staging modules by relative path; point
    # each at its published release (staging modules are versioned 0.MINOR.PATCH).
    local gomod
    gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    grep -oE '^[[:space:]]*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | while read -r m; do
      echo "replace $m => $m v0.${KUBE_VERSION#1.}"
    done >> go.mod
    printf '//go:build tools\n\npackage kubeapiserver\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' > tools.go
    go mod tidy >/dev/null
    go build -trimpath -ldflags="-s -w $(kube_version_ldflags)" -o "$BIN/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
  )
}

# kubectl comes from the same k8s.io/kubernetes release and the same module
# graph as kube-apiserver, so that e2e compares a client and a server of one
# release.
build_kubectl() {
  local src="$REALAPI_HOME/src/kubectl"
  mkdir -p "$src"
  (
    cd "$src"
    sed 's/^module .*/module realapi\/kubectl/' "$REALAPI_HOME/src/kube-apiserver/go.mod" > go.mod
    cp "$REALAPI_HOME/src/kube-apiserver/go.sum" go.sum 2>/dev/null || true
    printf '//go:build tools\n\npackage kubectl\n\nimport _ "k8s.io/kubernetes/cmd/kubectl"\n' > tools.go
    go mod tidy >/dev/null
    go build -trimpath -ldflags="-s -w $(kube_version_ldflags)" -o "$BIN/kubectl" k8s.io/kubernetes/cmd/kubectl
  )
}

build_toxiproxy() {
  local src="$REALAPI_HOME/src/toxiproxy"
  mkdir -p "$src"
  (
    cd "$src"
    printf 'module realapi/toxiproxy\n\ngo 1.26\n\nrequire github.com/Shopify/toxiproxy/v2 v%s\n' "$TOXIPROXY_VERSION" > go.mod
    printf '//go:build tools\n\npackage toxiproxy\n\nimport _ "github.com/Shopify/toxiproxy/v2/cmd/server"\n' > tools.go
    go mod tidy >/dev/null
    go build -trimpath -ldflags='-s -w' -o "$BIN/toxiproxy-server" github.com/Shopify/toxiproxy/v2/cmd/server
  )
}

cmd_build() {
  mkdir -p "$BIN"
  [ -x "$BIN/etcd" ] || { log "building etcd v$ETCD_VERSION"; build_etcd; }
  # A binary cached before the version stamp came says v0.0.0-master, which
  # the /version comparison of e2e would take for a difference: rebuild it.
  "$BIN/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes v$KUBE_VERSION" ||
    { log "building kube-apiserver v$KUBE_VERSION (several minutes)"; build_apiserver; }
  "$BIN/kubectl" version --client 2>/dev/null | grep -qx "Client Version: v$KUBE_VERSION" || { log "building kubectl v$KUBE_VERSION"; build_kubectl; }
  [ -x "$BIN/toxiproxy-server" ] || { log "building toxiproxy-server v$TOXIPROXY_VERSION"; build_toxiproxy; }
}

free_ports() {
  python3 -c 'import socket
socks=[socket.socket() for _ in range(4)]
[s.bind(("127.0.0.1",0)) for s in socks]
print(*[s.getsockname()[1] for s in socks])'
}

randhex() { head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

cmd_start() {
  cmd_build
  local dir etcd_port peer_port api_port toxi_port token nobody
  dir=$(mktemp -d /tmp/listwatch-realapi.XXXXXX)
  read -r etcd_port peer_port api_port toxi_port < <(free_ports)
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  token=$(randhex); nobody=$(randhex)
  printf '%s,admin,1,"system:masters"\n%s,nobody,2\n' "$token" "$nobody" > "$dir/tokens.csv"

  "$BIN/etcd" --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "default=http://127.0.0.1:$peer_port" >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"

  # The flags live in a file so a test can restart the same server (REALAPI_DIR/apiserver.args).
  cat >"$dir/apiserver.args" <<ARGS
--etcd-servers=http://127.0.0.1:$etcd_port
--bind-address=127.0.0.1
--secure-port=$api_port
--cert-dir=$dir/certs
--service-account-issuer=https://kubernetes.default.svc
--service-account-key-file=$dir/sa.pub
--service-account-signing-key-file=$dir/sa.key
--token-auth-file=$dir/tokens.csv
--authorization-mode=${REALAPI_AUTHZ:-AlwaysAllow}
--service-cluster-ip-range=10.0.0.0/24
--disable-admission-plugins=ServiceAccount
ARGS
  for f in ${REALAPI_EXTRA_FLAGS:-}; do echo "$f" >>"$dir/apiserver.args"; done
  echo "$BIN/kube-apiserver" >"$dir/apiserver.bin"
  # shellcheck disable=SC2046
  "$BIN/kube-apiserver" $(cat "$dir/apiserver.args") >"$dir/kube-apiserver.log" 2>&1 &
  echo $! >"$dir/kube-apiserver.pid"
  # The chaos suite puts its proxies here, between its clients and the server.
  LOG_LEVEL=warn "$BIN/toxiproxy-server" -host 127.0.0.1 -port "$toxi_port" >"$dir/toxiproxy.log" 2>&1 &
  echo $! >"$dir/toxiproxy.pid"

  for _ in $(seq 1 120); do
    if curl -fsk -H "Authorization: Bearer $token" "https://127.0.0.1:$api_port/readyz" >/dev/null 2>&1 &&
      curl -fs "http://127.0.0.1:$toxi_port/version" >/dev/null 2>&1; then
      cat <<OUT
export REALAPI_URL=https://127.0.0.1:$api_port
export REALAPI_TOKEN=$token
export REALAPI_TOKEN_NOBODY=$nobody
export REALAPI_CA=$dir/certs/apiserver.crt
export REALAPI_DIR=$dir
export REALAPI_TOXIPROXY=127.0.0.1:$toxi_port
export REALAPI_KUBECTL=$BIN/kubectl
export REALAPI_AUTHZ=${REALAPI_AUTHZ:-AlwaysAllow}
OUT
      return 0
    fi
    kill -0 "$(cat "$dir/kube-apiserver.pid")" 2>/dev/null || break
    sleep 1
  done
  log "kube-apiserver did not become ready; last log lines:"
  tail -20 "$dir/kube-apiserver.log" >&2
  cmd_stop "$dir"
  return 1
}

cmd_stop() {
  local dir="${1:?usage: realapi.sh stop REALAPI_DIR}"
  for name in toxiproxy kube-apiserver etcd; do
    [ -f "$dir/$name.pid" ] && kill "$(cat "$dir/$name.pid")" 2>/dev/null || true
  done
  for _ in 1 2 3 4 5; do
    alive=0
    for name in toxiproxy kube-apiserver etcd; do
      [ -f "$dir/$name.pid" ] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null && alive=1
    done
    [ $alive = 0 ] && break
    sleep 1
  done
  for name in toxiproxy kube-apiserver etcd; do
    [ -f "$dir/$name.pid" ] && kill -9 "$(cat "$dir/$name.pid")" 2>/dev/null || true
  done
  rm -rf "$dir"
}

case "${1:-}" in
  build) cmd_build; echo "$BIN" ;;
  start) cmd_start ;;
  stop) shift; cmd_stop "$@" ;;
  *) echo "usage: $0 build | start | stop DIR" >&2; exit 2 ;;
esac
