// Package chaos runs listwatch against a real kube-apiserver through a real
// fault proxy, toxiproxy, and checks that every fault it can inject on the
// path ends in a cache equal to the server's, within a stated bound, with
// the failure said once and a leader and a shard group recovered (decision
// 36). It is its own module so that the library's go.mod stays free of
// toxiproxy.
//
//	scripts/realapi.sh build                 # etcd, kube-apiserver, toxiproxy-server
//	eval "$(scripts/realapi.sh start)"       # exports REALAPI_*, REALAPI_TOXIPROXY too
//	(cd chaos && go test -race -v ./...)
//	scripts/realapi.sh stop "$REALAPI_DIR"
//
// The package holds only tests; see chaos_test.go for the faults and the
// bounds each is held to.
package chaos
