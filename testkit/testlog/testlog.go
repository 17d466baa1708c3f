// Package testlog is a slog.Handler for tests that assert what a program
// logs: every record is kept with its level and its text, attributes
// written as key=value, so a test can check that a failure is one line at
// Error and that a healthy run logs nothing above Debug.
//
//	logger, log := testlog.NewLogger()
//	inf.Logger = logger
//	...
//	require.Len(t, log.Above(), 1)
package testlog

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
	Msg   string // the message alone
	Text  string
}

func (l Line) String() string { return l.Level.String() + " " + l.Text }

// Log records every line, Debug included. The zero value is ready to use.
type Log struct {
	mu    sync.Mutex
	lines []Line
	attrs []slog.Attr
	root  *Log // where a logger made by WithAttrs records; nil: itself
}

// NewLogger returns a logger writing to a new Log, and the Log.
func NewLogger() (*slog.Logger, *Log) {
	l := &Log{}
	return slog.New(l), l
}

func (l *Log) target() *Log {
	if l.root == nil {
		return l
	}
	return l.root
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
	t := l.target()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, Line{Level: r.Level, Msg: r.Message, Text: b.String()})
	return nil
}

func (l *Log) WithAttrs(as []slog.Attr) slog.Handler {
	return &Log{attrs: append(append([]slog.Attr(nil), l.attrs...), as...), root: l.target()}
}

func (l *Log) WithGroup(string) slog.Handler { return l }

// Lines returns the lines logged at level or above.
func (l *Log) Lines(level slog.Level) []Line {
	t := l.target()
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Line
	for _, ln := range t.lines {
		if ln.Level >= level {
			out = append(out, ln)
		}
	}
	return out
}

// Above returns the lines logged above Debug, each as "LEVEL text".
func (l *Log) Above() []string {
	var out []string
	for _, ln := range l.Lines(slog.LevelDebug + 1) {
		out = append(out, ln.String())
	}
	return out
}

// All returns every line, Debug included, one per line: what a check that
// nothing secret was logged reads.
func (l *Log) All() string {
	var b strings.Builder
	for _, ln := range l.Lines(slog.LevelDebug - 4) {
		b.WriteString(ln.String() + "\n")
	}
	return b.String()
}

// Reset forgets the lines logged so far.
func (l *Log) Reset() {
	t := l.target()
	t.mu.Lock()
	t.lines = nil
	t.mu.Unlock()
}
