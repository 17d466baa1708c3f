package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// Run is a command's body: it parses args, works until ctx is done or the
// work is, and writes to stdout and stderr. Tests call it directly.
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Main runs run with the process's arguments and standard streams. SIGINT
// and SIGTERM cancel run's context, so the command can shut down in order
// and print what it has to. It exits 0 when run succeeds, 2 for -h (the
// flag package has printed the usage already), and otherwise 1 after
// printing "name: error".
func Main(name string, run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(name, err, os.Stderr))
}

func exitCode(name string, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}
