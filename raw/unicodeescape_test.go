package raw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamUnicodeEscapeDigits: a \u escape takes exactly the hex digits
// 0-9, a-f and A-F, as encoding/json does: every byte in each of its four
// places is accepted or refused as encoding/json.Valid says, whether the
// escape arrives in one read or cut by one anywhere in it.
func TestStreamUnicodeEscapeDigits(t *testing.T) {
	const head = `{"type":"ADDED","object":{"metadata":{"name":"a"},"s":"`
	for place := range 4 {
		for c := range 256 {
			digits := []byte("0000")
			digits[place] = byte(c)
			frame := []byte(head + `\u` + string(digits) + `"}}` + "\n")
			valid := json.Valid(frame)
			if strings.IndexByte("0123456789abcdefABCDEF", byte(c)) >= 0 {
				require.True(t, valid, "%q", frame) // the reference agrees on the digits
			}
			for cut := len(head); cut <= len(head)+6; cut++ {
				ev, err := newTestWatcher(&chunkReader{chunks: splitAt(bytes.Clone(frame), cut)}, &Decoder{}).Next()
				if valid {
					require.NoError(t, err, "%q cut at %d", frame, cut)
					require.Equal(t, "a", ev.Object.Name())
					continue
				}
				require.ErrorIs(t, err, errInvalidJSON, "%q cut at %d", frame, cut)
			}
		}
	}
}
