package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Run is a command's body: it parses args, works until ctx is done or the
// work is, and writes to stdout and stderr. Tests call it directly.
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Main runs run with the process's arguments and standard streams. SIGINT
// and SIGTERM cancel run's context, so the command can shut down in order
// and print what it has to. It exits 0 when run succeeds and for -h or
// --help (the flag package has printed the usage already: asking for help
// is not a failure), and otherwise 1 after printing "name: error" on one
// line, and with -v the chain of its causes. A bad flag returns an error
// from run, so it exits 1.
func Main(name string, run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(name, err, verbose(os.Args[1:]), os.Stderr))
}

// NewFlagSet returns a command's flag set: -h prints about, which says what
// the command does, before the flags. It defines -v, which Main reads.
func NewFlagSet(name, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "%s\n\nUsage of %s:\n", strings.TrimSpace(about), name)
		fs.PrintDefaults()
	}
	fs.Bool("v", false, "on error, print the chain of causes behind the one-line message")
	return fs
}

// verbose reports whether args hold -v among the flags.
func verbose(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-v", "--v", "-v=true", "--v=true":
			return true
		}
	}
	return false
}

func exitCode(name string, err error, verbose bool, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	if !verbose {
		if errors.Unwrap(err) != nil {
			fmt.Fprintf(stderr, "(run with -v for the causes)\n")
		}
		return 1
	}
	for _, cause := range causes(err) {
		fmt.Fprintf(stderr, "  caused by: %s\n", cause)
	}
	return 1
}

// causes lists what each error wrapped inside err adds, outermost first: a
// message that ends with its cause's is cut to what it adds.
func causes(err error) []string {
	var out []string
	msg := err.Error()
	for c := errors.Unwrap(err); c != nil; c = errors.Unwrap(c) {
		inner := c.Error()
		if own, ok := strings.CutSuffix(msg, ": "+inner); ok {
			if len(out) > 0 {
				out[len(out)-1] = own
			}
		}
		out = append(out, inner)
		msg = inner
	}
	return out
}
