package clitest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
)

// Output collects what a command writes, line by line. It is safe for
// concurrent use.
type Output struct {
	mu      sync.Mutex
	partial bytes.Buffer
	lines   []string
	changed chan struct{} // closed and replaced on every new line
}

// NewOutput returns an empty Output.
func NewOutput() *Output { return &Output{changed: make(chan struct{})} }

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.partial.Write(p)
	for {
		line, err := o.partial.ReadString('\n')
		if err == io.EOF {
			o.partial.WriteString(line) // keep the unfinished line
			break
		}
		o.lines = append(o.lines, strings.TrimSuffix(line, "\n"))
		close(o.changed)
		o.changed = make(chan struct{})
	}
	return len(p), nil
}

// Lines returns every complete line so far.
func (o *Output) Lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines...)
}

// WaitFor blocks until done reports true of the lines so far, or fails the
// test, naming what it waited for, when ctx ends first.
func (o *Output) WaitFor(ctx context.Context, t testing.TB, what string, done func([]string) bool) {
	t.Helper()
	for {
		o.mu.Lock()
		ok, changed := done(o.lines), o.changed
		o.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("never saw %s; output:\n%s", what, strings.Join(o.Lines(), "\n"))
		}
	}
}
