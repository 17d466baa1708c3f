// Command nodecache serves the pods of one node, read through one upstream
// watch, to the node's other programs over the Kubernetes list/watch API
// (package cacheserve, decisions 43 and 45). They read it as they would
// read the API server: lists and gets exact to the resourceVersion,
// watches that resume from one, while the upstream is away too, and after
// a restart from its snapshot (--snapshot-dir), warm, within milliseconds,
// the API server up or not.
//
//	go run ./examples/nodecache --review=false              # an embedded demo server, node-1
//	go run ./examples/nodecache --kubeconfig ~/.kube/config --node "$NODE_NAME"
//
// It listens on a unix socket whose mode, 0600, is the authorization (only
// its owner may connect):
//
//	curl --unix-socket /tmp/listwatch-nodecache.sock http://local/api/v1/pods
//
// kubectl and client-go take only http(s) servers; --listen 127.0.0.1:8001
// adds a TCP listener on loopback. Its clients are authorized by the API
// server: their own bearer token by a TokenReview, each request by a
// SubjectAccessReview (the node cache's identity needs the ClusterRole
// system:auth-delegator), cached, and used offline within 15 minutes;
// --review=false lets every local user of the node read instead. Nothing
// is authorized by User-Agent.
//
//	kubectl --server https://127.0.0.1:8001 --certificate-authority ca.crt --token "$TOKEN" get pods -A --field-selector spec.nodeName=node-1 -w
//
// kubectl sends its token only to an https server: give the listener a
// certificate (--tls-cert, --tls-key). kubectl finds every resource
// through the API server's discovery, forwarded; what is not cached is
// forwarded too.
//
// A client-go program takes the same URL as its rest.Config's Host (and
// its BearerToken). What the cache cannot answer completely — a write, a
// resource not cached, a selector wider than spec.nodeName=NODE — is
// forwarded to the API server with the client's own token (never the
// cache's), and refused with a Status that says why when the client has
// none or the API server is unreachable. While the cache may be stale,
// every response carries a Warning that says since when.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

const about = `nodecache serves the pods of one node, read through one upstream watch, to
the node's other programs over the Kubernetes list/watch API, on a unix
socket (and, with --listen, on loopback).`

func main() { cli.Main("nodecache", run) }

type options struct {
	kube   kubeconfig.Flags
	node   string
	socket string
	listen string
	review bool
	snaps  string
	// tlsCert and tlsKey make the TCP listener https.
	tlsCert, tlsKey string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlagSet("nodecache", about, stderr)
	o.kube.Register(fs)
	fs.StringVar(&o.node, "node", os.Getenv("NODE_NAME"), "the node whose pods to serve (default $NODE_NAME; node-1 on the demo server)")
	fs.StringVar(&o.socket, "socket", filepath.Join(os.TempDir(), "listwatch-nodecache.sock"), "the unix socket to serve on, mode 0600")
	fs.StringVar(&o.listen, "listen", "", "also serve on this loopback TCP address (e.g. 127.0.0.1:8001)")
	fs.BoolVar(&o.review, "review", true, "authorize the TCP listener's clients by TokenReview and SubjectAccessReview; false: every local user may read")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "serve the TCP listener over TLS with this certificate (PEM), as kubectl needs to send its token")
	fs.StringVar(&o.tlsKey, "tls-key", "", "the key of --tls-cert (PEM)")
	fs.StringVar(&o.snaps, "snapshot-dir", filepath.Join(os.TempDir(), "listwatch-nodecache"), "keep a snapshot here and start from it, warm (\"\": none)")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	cfg, where, closeDemo, err := cli.Connect(ctx, &o.kube, startDemo)
	if err != nil {
		return err
	}
	defer closeDemo()
	if o.node == "" {
		o.node = "node-1"
	}
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	pods := client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	// Served objects are whole, as kube-apiserver's: without managedFields
	// every answer would carry a Warning, and kubectl prints each one.
	pods.KeepManagedFields = true
	inf := listwatch.NewInformer(pods, 0, listwatch.Selector{Field: "spec.nodeName=" + o.node})
	inf.Snapshot.Dir = o.snaps
	srv := &cacheserve.Server{}
	if srv.Proxy, err = cacheserve.NewProxy(cfg); err != nil {
		return err
	}
	switch {
	case o.listen == "":
	case o.review:
		srv.Authorize = (&cacheserve.Reviewer{Client: client}).Authorize
	default:
		srv.Authorize = loopbackOnly
	}
	if _, err := srv.Add(inf, pods, apiserve.APIResource{}); err != nil {
		return err
	}
	l, err := cacheserve.ListenUnix(o.socket, 0o600)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	defer func() { cancel(); <-done }()
	errs := make(chan error, 2)
	go func() { errs <- srv.Serve(ctx, l) }()
	fmt.Fprintf(stdout, "serving the pods of %s from %s on %s\n", o.node, where, o.socket)
	if o.listen != "" {
		tl, url, err := listenTCP(o)
		if err != nil {
			cancel()
			<-errs
			return err
		}
		go func() { errs <- srv.Serve(ctx, tl) }()
		fmt.Fprintf(stdout, "and on %s: kubectl --server %s get pods -A --field-selector spec.nodeName=%s\n", url, url, o.node)
	}
	err = <-errs
	cancel()
	if o.listen != "" {
		err = errors.Join(err, <-errs)
	}
	return err
}

// listenTCP listens on o.listen, with TLS if o has a certificate: kubectl
// sends its token to an https server only.
func listenTCP(o options) (net.Listener, string, error) {
	l, err := net.Listen("tcp", o.listen)
	if err != nil {
		return nil, "", err
	}
	if o.tlsCert == "" {
		return l, "http://" + l.Addr().String(), nil
	}
	cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		l.Close()
		return nil, "", err
	}
	return tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), "https://" + l.Addr().String(), nil
}

// loopbackOnly allows a request from the node itself: its peer address is
// a loopback one.
func loopbackOnly(req *http.Request) error {
	host, _, err := net.SplitHostPort(req.RemoteAddr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
		return nil
	}
	return errors.New("only the node itself may read this cache")
}

func startDemo(ctx context.Context) (string, func(), error) {
	s, err := demo.NewServer(
		demo.Pod{Namespace: "default", Name: "web-1", Node: "node-1", Phase: "Running"},
		demo.Pod{Namespace: "default", Name: "web-2", Node: "node-2", Phase: "Running"},
		demo.Pod{Namespace: "kube-system", Name: "proxy-1", Node: "node-1", Phase: "Running"},
	)
	if err != nil {
		return "", nil, err
	}
	return s.URL, s.Close, nil
}
