package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExitCode(t *testing.T) {
	explained := &Explained{Summary: "cannot reach the server at https://k:6443",
		Err: fmt.Errorf("list pods: %w", fmt.Errorf("dial tcp: %w", syscall.ECONNREFUSED))}
	for name, tc := range map[string]struct {
		err     error
		verbose bool
		code    int
		stderr  string
	}{
		"success": {nil, false, 0, ""},
		"-h":      {fmt.Errorf("parse: %w", flag.ErrHelp), false, 0, ""}, // the flag package printed the usage
		"failure": {errors.New("cannot reach the server"), false, 1, "cmd: cannot reach the server\n"},
		"one line, causes behind -v": {explained, false, 1,
			"cmd: cannot reach the server at https://k:6443\n(run with -v for the causes)\n"},
		"-v": {explained, true, 1, "cmd: cannot reach the server at https://k:6443\n" +
			"  caused by: list pods\n  caused by: dial tcp\n  caused by: connection refused\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var stderr strings.Builder
			assert.Equal(t, tc.code, exitCode("cmd", tc.err, tc.verbose, &stderr))
			assert.Equal(t, tc.stderr, stderr.String())
		})
	}
}

func TestVerbose(t *testing.T) {
	assert.True(t, verbose([]string{"--events", "3", "-v"}))
	assert.True(t, verbose([]string{"--v=true"}))
	assert.False(t, verbose([]string{"--events", "3"}))
	assert.False(t, verbose([]string{"--", "-v"}))
}

func TestUsageSaysWhatTheCommandDoes(t *testing.T) {
	var out strings.Builder
	fs := NewFlagSet("watch", "watch keeps a live cache of one resource and prints every change.", &out)
	err := fs.Parse([]string{"-h"})
	assert.ErrorIs(t, err, flag.ErrHelp)
	assert.True(t, strings.HasPrefix(out.String(), "watch keeps a live cache"), out.String())
	assert.Contains(t, out.String(), "-v\ton error, print the chain of causes")
}
