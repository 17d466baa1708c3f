// Package clitest helps test the example commands through their run
// functions: it runs one in the background, collects what it writes line
// by line, and lets a test wait for a line without sleeping.
//
//	r := clitest.Start(ctx, run, "--workers", "3")
//	r.Stdout.WaitFor(ctx, t, "a reconcile", clitest.Contains(`^reconciled `))
//	r.Stop() // as SIGINT would
//	require.NoError(t, r.Wait(t))
package clitest

import (
	"context"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/cli"
)

// Running is a command's run function going in the background.
type Running struct {
	Stdout, Stderr *Output
	// Stop cancels run's context, as SIGINT or SIGTERM would.
	Stop context.CancelFunc
	err  chan error
}

// Start calls run with args in a goroutine.
func Start(ctx context.Context, run cli.Run, args ...string) *Running {
	ctx, stop := context.WithCancel(ctx)
	r := &Running{Stdout: NewOutput(), Stderr: NewOutput(), Stop: stop, err: make(chan error, 1)}
	go func() { r.err <- run(ctx, args, r.Stdout, r.Stderr) }()
	return r
}

// Wait returns run's error once it has returned, and fails the test if it
// takes more than 30 seconds.
func (r *Running) Wait(t testing.TB) error {
	t.Helper()
	select {
	case err := <-r.err:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return")
		return nil
	}
}

// DemoEnv makes a command pick its embedded demo server even when the test
// runs in a pod, for the rest of the test.
func DemoEnv(t testing.TB) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
}

// Contains returns a condition for Output.WaitFor: a line matches re.
func Contains(re string) func([]string) bool {
	r := regexp.MustCompile(re)
	return func(lines []string) bool {
		for _, l := range lines {
			if r.MatchString(l) {
				return true
			}
		}
		return false
	}
}

// BadArgs is a command line run must reject, and what its error says.
type BadArgs struct {
	Args []string
	Want string
}

// RejectsFlags checks that run fails on each bad command line, with an
// error containing its Want, and that -h asks for help with flag.ErrHelp.
func RejectsFlags(t *testing.T, run cli.Run, bad []BadArgs) {
	t.Helper()
	for _, tc := range bad {
		t.Run(strings.Join(tc.Args, " "), func(t *testing.T) {
			err := run(t.Context(), tc.Args, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.Want)
		})
	}
	err := run(t.Context(), []string{"-h"}, io.Discard, io.Discard)
	assert.ErrorIs(t, err, flag.ErrHelp)
}
