// Command watch keeps a live cache of one resource and prints every change.
//
// With no server given it starts an embedded fake API server (watchtest)
// filled with demo pods that keep changing, so it runs anywhere:
//
//	go run ./examples/watch
//
// Point it at a real cluster with a kubeconfig, a server URL, or from inside
// a pod:
//
//	go run ./examples/watch --kubeconfig ~/.kube/config --resource deployments.v1.apps -n kube-system
//	go run ./examples/watch --server https://127.0.0.1:6443 --token-file token --ca ca.crt
//
// While the first list is read it shows progress on a terminal; then one
// line per event (or JSON lines with --output json); on Ctrl-C a summary.
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
		fmt.Fprintln(os.Stderr, "watch:", err)
		os.Exit(1)
	}
}

// options are the command line.
type options struct {
	kubeconfig, context    string
	server, token, tokenFn string
	ca                     string
	insecure               bool
	resource, namespace    string
	labels, fields         string
	output                 string
	events                 int
	duration               time.Duration
	watchList              bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster; embedded demo server if none)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default: current-context)")
	fs.StringVar(&o.server, "server", "", "API server URL, e.g. https://127.0.0.1:6443")
	fs.StringVar(&o.token, "token", "", "bearer token for --server")
	fs.StringVar(&o.tokenFn, "token-file", "", "file holding the bearer token for --server (re-read when it rotates)")
	fs.StringVar(&o.ca, "ca", "", "CA bundle for --server")
	fs.BoolVar(&o.insecure, "insecure-skip-tls-verify", false, "do not verify the server's certificate")
	fs.StringVar(&o.resource, "resource", "pods", "resource to watch: plural[.version[.group]], e.g. pods, deployments.v1.apps, widgets.v1.example.com")
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all)")
	fs.StringVar(&o.namespace, "n", "", "shorthand for --namespace")
	fs.StringVar(&o.labels, "selector", "", "label selector, e.g. app=web,tier!=db")
	fs.StringVar(&o.labels, "l", "", "shorthand for --selector")
	fs.StringVar(&o.fields, "field-selector", "", "field selector, e.g. spec.nodeName=node-1")
	fs.StringVar(&o.output, "output", "text", "event format: text or json")
	fs.StringVar(&o.output, "o", "text", "shorthand for --output")
	fs.IntVar(&o.events, "events", 0, "exit after this many events (0: run until interrupted)")
	fs.DurationVar(&o.duration, "duration", 0, "exit after this long (0: run until interrupted)")
	fs.BoolVar(&o.watchList, "watch-list", true, "sync through a watch-list stream when the server supports it")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	if o.output != "text" && o.output != "json" {
		return o, fmt.Errorf("--output must be text or json, not %q", o.output)
	}
	return o, nil
}
