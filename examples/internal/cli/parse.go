package cli

import (
	"flag"
	"fmt"
)

// Parse parses args with fs, and rejects arguments left after the flags:
// the commands take flags only.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	return nil
}
