// Command agent is examples/agent with Prometheus metrics: it caches the
// pods of its node keeping only the fields it reads, restarts warm from a
// snapshot (decision 32), logs a summary every --every, and /metrics beside
// the probes on --health-addr says what an operator needs of the cache:
// synced, restored and not yet confirmed, objects and bytes, the last sync,
// sync errors by kind, watch restarts by cause, the snapshot's last save.
// The one line that differs from examples/agent is a.Metrics.
//
//	go run ./examples/agent                       # an embedded fake API server
//	NODE_NAME=worker-1 go run ./examples/agent --kubeconfig ~/.kube/config
//	curl -s localhost:8081/metrics | grep ^listwatch_
//
// It lives in the prommetrics module, not beside the library's examples,
// so that the library module never depends on client_golang.
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/prommetrics"
)

var node string // --node; node-1 on the demo server

var every time.Duration // --every

func main() { newApp().Main(setup) }

func newApp() *app.App {
	a := app.New("agent")
	a.Flags.StringVar(&node, "node", os.Getenv("NODE_NAME"), "the node whose pods to cache (default $NODE_NAME)")
	a.Flags.DurationVar(&every, "every", 10*time.Second, "log the summary this often")
	a.SnapshotDir, a.Demo = filepath.Join(os.TempDir(), "listwatch-agent"), demoServer
	a.Metrics = prommetrics.Handler
	return a
}

func setup(a *app.App) error {
	if node == "" {
		return errors.New("no node: set --node or NODE_NAME (from the downward API's spec.nodeName)")
	}
	pods := a.Watch(app.Pods, app.Options{Fields: "spec.nodeName=" + node, Project: []string{"status.phase", "status.containerStatuses"}})
	a.Go(func(ctx context.Context) error {
		for tick := time.Tick(every); ; {
			all, phases, restarts := pods.List(), map[string]int{}, int64(0)
			for _, p := range all {
				phases[p.Get("status.phase").String()]++
				for _, n := range p.Get("status.containerStatuses.#.restartCount").Array() {
					restarts += n.Int()
				}
			}
			a.Logger.Info("pods", "node", node, "count", len(all), "phases", phases, "restarts", restarts)
			select {
			case <-ctx.Done():
				return nil
			case <-tick:
			}
		}
	})
	return nil
}
