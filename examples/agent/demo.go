package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/listwatch/listwatch/httpwatch/watchtest"
)

// The embedded server's world: demoPods pods over three namespaces and
// three nodes, pod i on node-(i%3+1); demoNode is the node watched by default.
var (
	demoNamespaces = []string{"shop", "billing", "search"}
	demoPhases     = []string{"Pending", "Running", "Succeeded"}
)

const (
	demoPods = 30
	demoNode = "node-1"
)

// demoState is one demo pod as the churn last wrote it.
type demoState struct {
	phase      string
	containers int
	restarts   int
}

func demoInitial(i int) demoState {
	return demoState{phase: demoPhases[i/3%len(demoPhases)], containers: 1 + i%2, restarts: i % 4}
}

// startDemo starts an embedded API server holding the demo pods.
func startDemo() (*watchtest.Server, error) {
	s := watchtest.NewUnstartedServer()
	s.BookmarkInterval = 10 * time.Second
	s.Start()
	for i := range demoPods {
		if _, err := s.Create(watchtest.Pods, demoPod(i, demoInitial(i))); err != nil {
			s.Close()
			return nil, fmt.Errorf("demo server: %w", err)
		}
	}
	return s, nil
}

// churn restarts containers, changes phases, adds and deletes demo pods a
// few times a second until ctx is done.
func churn(ctx context.Context, s *watchtest.Server) {
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	rnd := rand.New(rand.NewPCG(3, 4))
	pods := make([]demoState, demoPods)
	for i := range pods {
		pods[i] = demoInitial(i)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		i := rnd.IntN(len(pods))
		var err error
		switch rnd.IntN(10) {
		case 0:
			ns, name := demoKey(i)
			_, err = s.Delete(watchtest.Pods, ns, name)
		case 1:
			pods = append(pods, demoState{phase: "Pending", containers: 1 + rnd.IntN(3)})
			i = len(pods) - 1
			_, err = s.Create(watchtest.Pods, demoPod(i, pods[i]))
		case 2, 3, 4:
			pods[i].restarts++
			_, err = s.Update(watchtest.Pods, demoPod(i, pods[i]))
		default:
			pods[i].phase = demoPhases[rnd.IntN(len(demoPhases))]
			_, err = s.Update(watchtest.Pods, demoPod(i, pods[i]))
		}
		_ = err // a pod deleted earlier cannot be updated: the demo just moves on
	}
}

func demoKey(i int) (namespace, name string) {
	return demoNamespaces[i%len(demoNamespaces)], fmt.Sprintf("app-%02d", i)
}

// demoPod is pod i as JSON, with managedFields for the agent to drop. Its
// first container carries all the restarts.
func demoPod(i int, st demoState) string {
	ns, name := demoKey(i)
	var specs, statuses []string
	for c := range st.containers {
		restarts := 0
		if c == 0 {
			restarts = st.restarts
		}
		specs = append(specs, fmt.Sprintf(`{"name":"c%d","image":"nginx:1.27"}`, c))
		statuses = append(statuses, fmt.Sprintf(`{"name":"c%d","ready":true,"restartCount":%d}`, c, restarts))
	}
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"labels":{"app":"demo"},`+
		`"managedFields":[{"manager":"kubelet","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:phase":{}}}}]},`+
		`"spec":{"nodeName":"node-%d","containers":[%s]},"status":{"phase":%q,"containerStatuses":[%s]}}`,
		name, ns, i%3+1, strings.Join(specs, ","), st.phase, strings.Join(statuses, ","))
}
