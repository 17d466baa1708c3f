// Command agent is a node agent, as a DaemonSet runs: it caches the pods of
// its node (the server filters them) keeping only the fields it reads,
// starts warm from a snapshot, serves /healthz and /readyz, and logs a
// summary of the pods every --every. With no server given it runs against
// an embedded demo server: go run ./examples/agent
package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/listwatch/listwatch/app"
)

var node string // --node; node-1 on the demo server

var every time.Duration // --every

func main() { newApp().Main(setup) }

func newApp() *app.App {
	a := app.New("agent")
	a.Flags.StringVar(&node, "node", os.Getenv("NODE_NAME"), "the node whose pods to cache (default $NODE_NAME)")
	a.Flags.DurationVar(&every, "every", 10*time.Second, "log the summary this often")
	a.SnapshotDir, a.Demo = filepath.Join(os.TempDir(), "listwatch-agent"), demoServer
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
