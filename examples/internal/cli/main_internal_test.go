package cli

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestExitCode(t *testing.T) {
	for name, tc := range map[string]struct {
		err    error
		code   int
		stderr string
	}{
		"success": {nil, 0, ""},
		"-h":      {fmt.Errorf("parse: %w", flag.ErrHelp), 2, ""}, // the flag package printed the usage
		"failure": {errors.New("cannot reach the server"), 1, "cmd: cannot reach the server\n"},
	} {
		t.Run(name, func(t *testing.T) {
			var stderr strings.Builder
			assert.Equal(t, tc.code, exitCode("cmd", tc.err, &stderr))
			assert.Equal(t, tc.stderr, stderr.String())
		})
	}
}
