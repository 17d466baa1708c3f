// Package leasetest helps the tests of the packages built on leases
// (leader, shard): a Cluster of processes on one fake clock and one
// watchtest server, each behind a Partition the test can cut, hang or
// refuse, and a Log and Errors that keep what was logged and reported.
package leasetest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// Line is one logged record: its level and its text with every attribute
// as key=value.
type Line struct {
	Level slog.Level
	Text  string
}

func (l Line) String() string { return l.Level.String() + " " + l.Text }

// Log is a slog.Handler that records every line at Debug and above.
type Log struct {
	mu    sync.Mutex
	lines []Line
	attrs []slog.Attr
	root  *Log
}

// NewLogger returns a logger writing to a new Log, and the Log.
func NewLogger() (*slog.Logger, *Log) {
	l := &Log{}
	l.root = l
	return slog.New(l), l
}

func (l *Log) Enabled(context.Context, slog.Level) bool { return true }

func (l *Log) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	for _, a := range l.attrs {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.root.mu.Lock()
	defer l.root.mu.Unlock()
	l.root.lines = append(l.root.lines, Line{Level: r.Level, Text: b.String()})
	return nil
}

func (l *Log) WithAttrs(as []slog.Attr) slog.Handler {
	return &Log{attrs: append(append([]slog.Attr(nil), l.attrs...), as...), root: l.root}
}

func (l *Log) WithGroup(string) slog.Handler { return l }

// Lines returns the lines logged at level or above.
func (l *Log) Lines(level slog.Level) []Line {
	l.root.mu.Lock()
	defer l.root.mu.Unlock()
	var out []Line
	for _, ln := range l.root.lines {
		if ln.Level >= level {
			out = append(out, ln)
		}
	}
	return out
}

// Errors collects what reaches an OnError.
type Errors struct {
	mu   sync.Mutex
	errs []error
}

// Add is an OnError.
func (e *Errors) Add(err error) { e.mu.Lock(); e.errs = append(e.errs, err); e.mu.Unlock() }

// All returns the errors added so far.
func (e *Errors) All() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}
