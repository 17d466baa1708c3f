// Command watch keeps a live cache of one resource and prints every change.
//
// With no server given it starts an embedded fake API server (watchtest)
// filled with demo pods that keep changing, so it runs anywhere:
//
//	go run ./examples/watch
//
// Point it at a real cluster with a kubeconfig, a server URL, or from inside
// a pod; flags come first, then in-cluster config when
// KUBERNETES_SERVICE_HOST is set, then the demo server:
//
//	go run ./examples/watch --kubeconfig ~/.kube/config --resource deployments.v1.apps -n kube-system
//	go run ./examples/watch --server https://127.0.0.1:6443 --token-file token --ca ca.crt
//
// While the first list is read it shows progress on a terminal; then, as
// kubectl get -w does, one line per object of that list and one per event
// (or JSON lines with --output json); on Ctrl-C a summary.
package main

import (
	"fmt"
	"io"
	"time"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/kubeconfig"
)

const about = `watch keeps a live, indexed cache of one resource with listwatch and prints
the objects of its first list, then one line per change (like kubectl get -w).
With no server given it runs against an embedded fake API server full of demo
pods that keep changing.`

func main() { cli.Main("watch", run) }

// options are the command line.
type options struct {
	kube                kubeconfig.Flags
	resource, namespace string
	labels, fields      string
	output              string
	events              int
	duration            time.Duration
	watchList           bool
	initial             bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlagSet("watch", about, stderr)
	o.kube.Register(fs)
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
	fs.BoolVar(&o.initial, "initial", true, "print the objects of the first list before the changes, as ADDED (they do not count towards --events)")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	if o.output != "text" && o.output != "json" {
		return o, fmt.Errorf("--output must be text or json, not %q", o.output)
	}
	return o, nil
}
