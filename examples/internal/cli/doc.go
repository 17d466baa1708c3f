// Package cli holds what the example commands share and a program of one's
// own would not need: the choice of the embedded demo server when no API
// server is given, the wait for an informer's first sync, one-line
// explanations of the errors people hit first, and a main that turns
// signals into a cancelled context and errors into exit codes. The
// connection flags themselves are kubeconfig.Flags, which any program can
// import.
//
// A command keeps its own flags and its run function, which tests call
// directly:
//
//	type options struct {
//		kube kubeconfig.Flags
//		// the command's own flags
//	}
//
//	func main() { cli.Main("mycmd", run) }
//
//	func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
//		var o options
//		fs := cli.NewFlagSet("mycmd", about, stderr)
//		o.kube.Register(fs)
//		if err := cli.Parse(fs, args); err != nil {
//			return err
//		}
//		cfg, where, closeDemo, err := cli.Connect(ctx, &o.kube, startDemo)
//		if err != nil {
//			return err
//		}
//		defer closeDemo()
//		// NewClient(cfg), an informer, FailFast, Wait, ...
//	}
package cli
