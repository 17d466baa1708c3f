package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/listwatch/listwatch"
)

// podState is what the summary keeps of one pod: a few numbers, not the
// object, so the summary pins no JSON.
type podState struct {
	phase      string
	containers int
	restarts   int
}

// nodeSummary is an informer handler that keeps the pods of one node
// summed up. The informer calls it from one goroutine; the reporter reads
// it from another.
type nodeSummary struct {
	node         string
	metadataOnly bool

	mu   sync.Mutex
	pods map[string]podState // by namespace/name
}

func newNodeSummary(node string, metadataOnly bool) *nodeSummary {
	return &nodeSummary{node: node, metadataOnly: metadataOnly, pods: map[string]podState{}}
}

func (s *nodeSummary) OnAdd(o *listwatch.Object, _ bool) { s.put(o) }
func (s *nodeSummary) OnUpdate(_, o *listwatch.Object)   { s.put(o) }

func (s *nodeSummary) OnDelete(o *listwatch.Object, _ bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pods, listwatch.Key(o))
}

func (s *nodeSummary) put(o *listwatch.Object) {
	st := podState{
		phase:      strings.Clone(o.Get("status.phase").String()),
		containers: int(o.Get("spec.containers.#").Int()),
	}
	if st.phase == "" {
		st.phase = "Unknown"
	}
	for _, n := range o.Get("status.containerStatuses.#.restartCount").Array() {
		st.restarts += int(n.Int())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pods[listwatch.Key(o)] = st
}

// String is the summary in one line, e.g.
// "node-1: 3 pods (Pending=1 Running=2), 4 containers, 7 restarts".
func (s *nodeSummary) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.metadataOnly {
		return fmt.Sprintf("%s: %d pods (metadata only)", s.node, len(s.pods))
	}
	byPhase := map[string]int{}
	var containers, restarts int
	for _, p := range s.pods {
		byPhase[p.phase]++
		containers += p.containers
		restarts += p.restarts
	}
	phases := make([]string, 0, len(byPhase))
	for _, p := range slices.Sorted(maps.Keys(byPhase)) {
		phases = append(phases, fmt.Sprintf("%s=%d", p, byPhase[p]))
	}
	return fmt.Sprintf("%s: %d pods (%s), %d containers, %d restarts",
		s.node, len(s.pods), strings.Join(phases, " "), containers, restarts)
}
