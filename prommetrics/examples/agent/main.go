// Command agent is examples/agent with one line more, a.Metrics: /metrics
// beside its probes says of its cache what an operator needs (synced,
// restored, objects, bytes, errors, the snapshot's last save). It lives in
// this module so that the library never depends on client_golang:
// go run ./examples/agent; curl -s localhost:8081/metrics | grep ^listwatch_
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
