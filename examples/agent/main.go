// Command agent is a node agent built on listwatch, the kind that runs as a
// DaemonSet: it watches only the pods scheduled to its own node (a field
// selector spec.nodeName=NODE, filtered by the server), without their
// managedFields, and keeps a summary of them: pods by phase, containers, and
// container restarts. It prints the summary when the cache has synced, every
// --every, and at exit.
//
// Where it connects, first match wins:
//
//   - --server (with --token-file, --ca), or --kubeconfig or
//     --context (a context of $KUBECONFIG or ~/.kube/config);
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
	"fmt"
	"io"
	"os"
	"time"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/kubeconfig"
)

const about = `agent is a node agent built on listwatch: it caches only the pods of its own
node (a server-side field selector) and prints a summary of them: pods by
phase, containers and restarts. With no server given it runs against an
embedded fake API server.`

func main() { cli.Main("agent", run) }

// options are the command line.
type options struct {
	kube            kubeconfig.Flags
	node            string
	every, duration time.Duration
	metadataOnly    bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlagSet("agent", about, stderr)
	o.kube.Register(fs)
	fs.StringVar(&o.node, "node", os.Getenv("NODE_NAME"), "node whose pods to watch (default: $NODE_NAME; node-1 on the demo server)")
	fs.DurationVar(&o.every, "every", 10*time.Second, "print the summary this often")
	fs.DurationVar(&o.duration, "duration", 0, "exit after this long (0: run until interrupted)")
	fs.BoolVar(&o.metadataOnly, "metadata-only", false, "fetch pod metadata only (no phases, containers or restarts)")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	if o.every <= 0 {
		return o, fmt.Errorf("--every must be positive, not %s", o.every)
	}
	return o, nil
}
