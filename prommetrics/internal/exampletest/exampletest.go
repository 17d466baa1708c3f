// Package exampletest helps test the example programs through their run
// functions: it runs one in the background against its embedded fake API
// server, waits for the lines it writes without sleeping, and scrapes the
// /metrics it serves.
//
//	r := exampletest.Start(t, run, "--metrics-addr", "127.0.0.1:0")
//	url := r.WaitFor(t, `metrics on (\S+)`)[1]
//	s := exampletest.Scrape(t, url)
//	s.Value("workqueue_depth", map[string]string{"name": "labeller"})
package exampletest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
)

// Timeout bounds every wait: a healthy one takes milliseconds.
const Timeout = 10 * time.Second

// Run is an example's run function.
type Run func(ctx context.Context, args []string, out io.Writer) error

// Running is a run function going in the background.
type Running struct {
	stop context.CancelFunc
	err  chan error

	mu      sync.Mutex
	partial bytes.Buffer
	lines   []string
	changed chan struct{} // closed and replaced on every new line
}

// Start makes run pick its embedded fake API server (no kubeconfig, not
// in a pod) and calls it with args in a goroutine. Stop ends it, at the
// latest when the test does.
func Start(t *testing.T, run Run, args ...string) *Running {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	ctx, stop := context.WithCancel(context.Background())
	r := &Running{stop: stop, err: make(chan error, 1), changed: make(chan struct{})}
	go func() { r.err <- run(ctx, args, r) }()
	t.Cleanup(func() { r.Stop(t) })
	return r
}

// Stop cancels run's context, as SIGINT would, and returns run's error,
// failing the test if run does not return within Timeout.
func (r *Running) Stop(t *testing.T) error {
	t.Helper()
	r.stop()
	select {
	case err := <-r.err:
		r.err <- err // for a second Stop
		return err
	case <-time.After(Timeout):
		t.Fatalf("run did not return within %v of its context's end", Timeout)
		return nil
	}
}

// Write collects the lines run writes.
func (r *Running) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partial.Write(p)
	for {
		line, err := r.partial.ReadString('\n')
		if err == io.EOF {
			r.partial.WriteString(line) // not a line yet
			return len(p), nil
		}
		r.lines = append(r.lines, strings.TrimSuffix(line, "\n"))
		close(r.changed)
		r.changed = make(chan struct{})
	}
}

// WaitFor returns the submatches of the first line run wrote that
// matches re, waiting for it at most Timeout.
func (r *Running) WaitFor(t *testing.T, re string) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		lines, changed := r.lines, r.changed
		r.mu.Unlock()
		for _, l := range lines {
			if m := rx.FindStringSubmatch(l); m != nil {
				return m
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("no line matching %q within %v; run wrote:\n%s", re, Timeout, strings.Join(lines, "\n"))
		}
	}
}

// Scraped is what one GET of /metrics said, parsed as Prometheus does.
type Scraped map[string]*dto.MetricFamily

// Scrape gets url and parses it.
func Scrape(t *testing.T, url string) Scraped {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// Series is the one series of name whose labels include labels; nil if
// there is none. More than one is an error rather than a pick, so that a
// test whose labels are too loose fails saying so.
func (s Scraped) Series(name string, labels map[string]string) (*dto.Metric, error) {
	var found *dto.Metric
	for _, m := range s[name].GetMetric() {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		match := true
		for k, want := range labels {
			match = match && have[k] == want
		}
		if !match {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("%s%v: more than one series", name, labels)
		}
		found = m
	}
	return found, nil
}

// Value is the value of the one series of name whose labels include
// labels: a counter's or gauge's, a histogram's count; -1 if there is no
// such series, -2 if there are more than one.
func (s Scraped) Value(name string, labels map[string]string) float64 {
	m, err := s.Series(name, labels)
	switch {
	case err != nil:
		return -2
	case m == nil:
		return -1
	}
	return valueOf(m)
}

func valueOf(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// String lists every series and its value, for a failure's message.
func (s Scraped) String() string {
	var b strings.Builder
	for name, f := range s {
		for _, m := range f.Metric {
			b.WriteString(name)
			for _, l := range m.Label {
				fmt.Fprintf(&b, ",%s=%s", l.GetName(), l.GetValue())
			}
			fmt.Fprintf(&b, " %v\n", valueOf(m))
		}
	}
	return b.String()
}
