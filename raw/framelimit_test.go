package raw

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFrameAtTheLimitIsAccepted: a watch frame or list item of exactly
// MaxFrameSize bytes is read, one byte more is refused, whether it arrives
// whole or a byte at a time.
func TestFrameAtTheLimitIsAccepted(t *testing.T) {
	for _, size := range []int{200, initialBufSize, initialBufSize + 5000} {
		frame := sizedFrame(size)
		object := frame[len(`{"type":"ADDED","object":`) : len(frame)-len("}\n")]
		list := []byte(`{"items":[` + string(object) + `]}`)
		for _, tc := range []struct {
			name string
			over int // bytes the frame has over the limit
		}{
			{"at the limit", 0},
			{"a byte over", 1},
		} {
			for _, chunk := range []int{1 << 30, 1} {
				// The newline after the frame is not the frame's.
				er := (&Decoder{MaxFrameSize: size - 1 - tc.over}).Events(&chunkReader{chunks: fixedChunks(frame, chunk)})
				f, err := er.Next()
				if tc.over == 0 {
					require.NoError(t, err, "watch frame of %d bytes, reads of %d", size-1, chunk)
					o, err := f.Plain()
					require.NoError(t, err)
					require.Equal(t, string(object), o.String())
				} else {
					require.ErrorIs(t, err, ErrFrameTooLarge, "watch frame of %d bytes, %s, reads of %d", size-1, tc.name, chunk)
				}
				p, err := (&Decoder{MaxFrameSize: len(object) - tc.over}).DecodeList(&chunkReader{chunks: fixedChunks(list, chunk)}, 0)
				if tc.over == 0 {
					require.NoError(t, err, "list item of %d bytes, reads of %d", len(object), chunk)
					require.Equal(t, string(object), p.Items[0].String())
				} else {
					require.ErrorIs(t, err, ErrFrameTooLarge, "list item of %d bytes, %s, reads of %d", len(object), tc.name, chunk)
				}
			}
		}
	}
}

// limitedSource serves n bytes of data, in reads as large as offered, and
// then fails any further Read with errReadPastLimit.
type limitedSource struct {
	data []byte
	n    int
}

var errReadPastLimit = errors.New("read past the frame size limit")

func (s *limitedSource) Read(p []byte) (int, error) {
	if s.n == 0 {
		return 0, errReadPastLimit
	}
	k := copy(p[:min(len(p), s.n)], s.data)
	s.data, s.n = s.data[k:], s.n-k
	return k, nil
}

// TestFrameOverTheLimitRefusedWithoutReadingOn: once MaxFrameSize bytes of
// an unfinished frame are in, the frame is refused there, without asking
// the body for more (which on a quiet stream would wait for the server).
func TestFrameOverTheLimitRefusedWithoutReadingOn(t *testing.T) {
	// Limits that the buffer reaches exactly: below its first size, and
	// one doubling of it.
	for _, max := range []int{1000, 2 * initialBufSize} {
		frame := sizedFrame(3 * max)
		_, err := (&Decoder{MaxFrameSize: max}).Events(&limitedSource{data: frame, n: max}).Next()
		require.ErrorIs(t, err, ErrFrameTooLarge, "limit %d", max)
		var ie *InputError
		require.ErrorAs(t, err, &ie)
		require.Zero(t, ie.Offset)
	}
	// The same frame with a limit above what the source holds waits for
	// more: the test source does tell a read past its bytes.
	_, err := (&Decoder{MaxFrameSize: 2000}).Events(&limitedSource{data: sizedFrame(3000), n: 1000}).Next()
	require.ErrorIs(t, err, errReadPastLimit)
}

// A number in a list is held to the frame limit like an item when the
// reader must gather it across reads: one of exactly the limit is read
// however the reads cut it, one a byte longer is refused when it comes a
// byte at a time. (Whole in one read it costs no buffer and is taken.)
func TestListScalarAtTheLimitIsAccepted(t *testing.T) {
	const limit = 1000
	for _, tc := range []struct {
		digits, chunk int
		ok            bool
	}{
		{limit, 1 << 30, true},
		{limit, 1, true},
		{limit + 1, 1, false},
	} {
		body := `{"items":[],"n":` + strings.Repeat("7", tc.digits) + `}`
		drainFreeBufs()
		_, err := (&Decoder{MaxFrameSize: limit}).DecodeList(&chunkReader{chunks: fixedChunks([]byte(body), tc.chunk)}, 0)
		if tc.ok {
			require.NoError(t, err, "a number of %d digits, reads of %d", tc.digits, tc.chunk)
		} else {
			require.ErrorIs(t, err, ErrFrameTooLarge, "a number of %d digits, reads of %d", tc.digits, tc.chunk)
		}
	}
}
