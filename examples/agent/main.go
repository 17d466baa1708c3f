// Command agent is a node agent built on listwatch, the kind that runs as a
// DaemonSet: it watches only the pods scheduled to its own node (a field
// selector spec.nodeName=NODE, filtered by the server), without their
// managedFields, and keeps a summary of them: pods by phase, containers, and
// container restarts. It prints the summary when the cache has synced, every
// --every, and at exit.
//
// Where it connects, first match wins:
//
//   - --server (with --token, --token-file, --ca) or --kubeconfig;
//   - in-cluster, when KUBERNETES_SERVICE_HOST is set (the pod's service
//     account; give it NODE_NAME from the downward API, spec.nodeName);
//   - otherwise an embedded fake API server holding demo pods spread over
//     three nodes that keep changing, so it runs anywhere.
//
// For example:
//
//	go run ./examples/agent
//	go run ./examples/agent --node node-2 --every 2s --duration 10s
//	NODE_NAME=worker-1 go run ./examples/agent --kubeconfig ~/.kube/config
//
// --metadata-only asks the server for object metadata alone, which is
// lighter still but leaves the summary with pod counts only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	kubeconfig, context    string
	server, token, tokenFn string
	ca                     string
	insecure               bool
	node                   string
	every, duration        time.Duration
	metadataOnly           bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default: current-context)")
	fs.StringVar(&o.server, "server", "", "API server URL, e.g. https://127.0.0.1:6443")
	fs.StringVar(&o.token, "token", "", "bearer token for --server")
	fs.StringVar(&o.tokenFn, "token-file", "", "file holding the bearer token for --server (re-read when it rotates)")
	fs.StringVar(&o.ca, "ca", "", "CA bundle for --server")
	fs.BoolVar(&o.insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate")
	fs.StringVar(&o.node, "node", os.Getenv("NODE_NAME"), "node whose pods to watch (default: $NODE_NAME; node-1 on the demo server)")
	fs.DurationVar(&o.every, "every", 10*time.Second, "print the summary this often")
	fs.DurationVar(&o.duration, "duration", 0, "exit after this long (0: run until interrupted)")
	fs.BoolVar(&o.metadataOnly, "metadata-only", false, "fetch pod metadata only (no phases, containers or restarts)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	if o.every <= 0 {
		return o, fmt.Errorf("--every must be positive, not %s", o.every)
	}
	return o, nil
}
