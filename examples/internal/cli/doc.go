// Package cli holds what the example commands share: the flags that say
// which API server to use and how to reach it, the choice between a real
// server and the embedded demo one, the wait for an informer's first sync,
// one-line explanations of the errors people hit first, and a main that
// turns signals into a cancelled context and errors into exit codes.
//
// A command keeps its own flags and its run function, which tests call
// directly:
//
//	type options struct {
//		conn cli.Connection
//		// the command's own flags
//	}
//
//	func main() { cli.Main("mycmd", run) }
//
//	func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
//		var o options
//		fs := flag.NewFlagSet("mycmd", flag.ContinueOnError)
//		fs.SetOutput(stderr)
//		o.conn.RegisterFlags(fs)
//		if err := fs.Parse(args); err != nil {
//			return err
//		}
//		cfg, where, closeDemo, err := o.conn.Config(ctx, startDemo)
//		if err != nil {
//			return err
//		}
//		if closeDemo != nil {
//			defer closeDemo()
//		}
//		// NewClient(cfg), an informer, FailFast, Wait, ...
//	}
package cli
