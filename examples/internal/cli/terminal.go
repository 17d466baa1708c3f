package cli

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a terminal, where progress that rewrites
// its line makes sense; in a pipe or a file it would be noise.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
