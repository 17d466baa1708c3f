package cli_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/cli"
)

func TestParse(t *testing.T) {
	newFlags := func() (*flag.FlagSet, *int) {
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		return fs, fs.Int("n", 0, "a number")
	}
	fs, n := newFlags()
	require.NoError(t, cli.Parse(fs, []string{"-n", "3"}))
	assert.Equal(t, 3, *n)

	fs, _ = newFlags()
	assert.EqualError(t, cli.Parse(fs, []string{"-n", "3", "pods"}), `unexpected argument "pods" (flags only; see -h)`)
	fs, _ = newFlags()
	assert.ErrorIs(t, cli.Parse(fs, []string{"-h"}), flag.ErrHelp)
	fs, _ = newFlags()
	assert.ErrorContains(t, cli.Parse(fs, []string{"-x"}), "flag provided but not defined: -x")
}

func TestWithDuration(t *testing.T) {
	ctx, cancel := cli.WithDuration(t.Context(), 0)
	_, ok := ctx.Deadline()
	assert.False(t, ok, "0 sets no deadline")
	cancel()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)

	ctx, cancel = cli.WithDuration(t.Context(), time.Hour)
	defer cancel()
	deadline, ok := ctx.Deadline()
	require.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(time.Hour), deadline, time.Minute)
}

func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	cli.Every(ctx, time.Millisecond, func() {
		if calls++; calls == 3 {
			cancel()
		}
	})
	assert.Equal(t, 3, calls, "Every returns once ctx is done")
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, cli.IsTerminal(f), "a file")
	assert.False(t, cli.IsTerminal(&bytes.Buffer{}), "a buffer")
	assert.False(t, cli.IsTerminal(nil))
}
