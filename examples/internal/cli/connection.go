package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/kubeconfig"
)

// Connection is the command line's say on which API server to use. The
// first of these that applies wins:
//
//  1. --server, with --token, --token-file, --ca and
//     --insecure-skip-tls-verify; a server without a scheme is https;
//  2. --kubeconfig (the file given) or --context alone (the context in
//     $KUBECONFIG or ~/.kube/config);
//  3. $KUBECONFIG, when it is set: its current context;
//  4. in-cluster, when KUBERNETES_SERVICE_HOST is set: the pod's service
//     account;
//  5. the command's embedded demo server.
//
// Flags win over the environment so that a command running in a pod can
// still be pointed elsewhere for debugging. ~/.kube/config is not looked
// for without a flag: with nothing set the command runs against its demo
// server, so it works anywhere.
type Connection struct {
	Kubeconfig, Context string
	Server              string
	Token, TokenFile    string
	CA                  string
	Insecure            bool
}

// RegisterFlags defines the connection flags on fs.
func (c *Connection) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG if set, else in-cluster, else an embedded demo server)")
	fs.StringVar(&c.Context, "context", "", "kubeconfig context (default: current-context)")
	fs.StringVar(&c.Server, "server", "", "API server URL, e.g. https://127.0.0.1:6443 (https when no scheme is given)")
	fs.StringVar(&c.Token, "token", "", "bearer token for --server")
	fs.StringVar(&c.TokenFile, "token-file", "", "file holding the bearer token for --server (re-read when it rotates)")
	fs.StringVar(&c.CA, "ca", "", "CA bundle for --server")
	fs.BoolVar(&c.Insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate")
}

// Config chooses the server in the order Connection describes. where says
// which one it chose, for the user, with any password in the URL hidden. demo starts the embedded server and is
// called only when nothing else applies; its closeFn is returned for the
// caller to run when done. For any other server closeFn does nothing, so
// callers can always defer it.
func (c *Connection) Config(ctx context.Context, demo func(context.Context) (host string, closeFn func(), err error)) (cfg *kubeconfig.Config, where string, closeFn func(), err error) {
	switch {
	case c.Server != "":
		host := c.Server
		if !strings.Contains(host, "://") {
			host = "https://" + host // as kubectl: 127.0.0.1:6443 is an https server
		}
		cfg = &kubeconfig.Config{Host: host, BearerToken: c.Token, BearerTokenFile: c.TokenFile, CAFile: c.CA, Insecure: c.Insecure}
		return cfg, redact.URL(host), func() {}, nil
	case c.Kubeconfig != "":
		if cfg, err = kubeconfig.Load(c.Kubeconfig, c.Context); err != nil {
			return nil, "", nil, err
		}
		return cfg, redact.URL(cfg.Host), func() {}, nil
	case c.Context != "":
		if cfg, err = kubeconfig.FromEnvironment(c.Context); err != nil {
			return nil, "", nil, err
		}
		return cfg, redact.URL(cfg.Host), func() {}, nil
	case os.Getenv("KUBECONFIG") != "":
		if cfg, err = kubeconfig.FromEnvironment(""); err != nil {
			return nil, "", nil, fmt.Errorf("KUBECONFIG is set: %w", err)
		}
		return cfg, redact.URL(cfg.Host) + " (from $KUBECONFIG)", func() {}, nil
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		if cfg, err = kubeconfig.InCluster(); err != nil {
			return nil, "", nil, fmt.Errorf("in-cluster config (KUBERNETES_SERVICE_HOST is set): %w", err)
		}
		return cfg, cfg.Host + " (in-cluster)", func() {}, nil
	}
	host, closeFn, err := demo(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	return &kubeconfig.Config{Host: host}, host + " (embedded demo server; --server or --kubeconfig for a real one)", closeFn, nil
}
