package clitest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/clitest"
)

func TestOutputSplitsLines(t *testing.T) {
	o := clitest.NewOutput()
	for _, w := range []string{"one\ntw", "o\n", "", "three\nfour"} {
		n, err := io.WriteString(o, w)
		require.NoError(t, err)
		assert.Equal(t, len(w), n)
	}
	assert.Equal(t, []string{"one", "two", "three"}, o.Lines(), "an unfinished line is not a line yet")
}

// Start runs the command in the background; WaitFor sees its lines as they
// come; Stop cancels it as a signal would; Wait returns its error.
func TestStartWaitForStop(t *testing.T) {
	errStopped := errors.New("stopped")
	run := func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		for i, a := range args {
			fmt.Fprintf(stdout, "%d %s\n", i, a)
		}
		fmt.Fprintln(stderr, "waiting")
		<-ctx.Done()
		return errStopped
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "a", "b")
	r.Stderr.WaitFor(ctx, t, "the wait", clitest.Contains(`^waiting$`))
	assert.Equal(t, []string{"0 a", "1 b"}, r.Stdout.Lines())
	r.Stop()
	assert.ErrorIs(t, r.Wait(t), errStopped)
}

func TestContains(t *testing.T) {
	lines := []string{"synced 30 pods", "summary: 1 reconciled"}
	assert.True(t, clitest.Contains(`^summary: \d+`)(lines))
	assert.False(t, clitest.Contains(`^reconciled`)(lines))
	assert.False(t, clitest.Contains(`.`)(nil))
}

func TestDemoEnv(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
	t.Run("inner", func(t *testing.T) {
		clitest.DemoEnv(t)
		assert.Empty(t, os.Getenv("KUBERNETES_SERVICE_HOST"))
	})
	assert.Equal(t, "10.0.0.1", os.Getenv("KUBERNETES_SERVICE_HOST"), "restored after the test")
}
