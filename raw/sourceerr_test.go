package raw

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// failingSource serves data and then fails with err.
type failingSource struct {
	data string
	err  error
}

func (s *failingSource) Read(p []byte) (int, error) {
	if s.data == "" {
		return 0, s.err
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

var errConnReset = errors.New("connection reset by peer")

// TestSourceErrorsInsideAValueAreNotInputErrors: a body that fails or ends
// inside a watch frame or a list is reported as a read error wrapping what
// the body said, not as malformed input (*InputError), which would blame
// the server's JSON for a cut connection.
func TestSourceErrorsInsideAValueAreNotInputErrors(t *testing.T) {
	cut := podFrame[:len(podFrame)/2]
	list := `{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[` + podFrame
	for _, tc := range []struct {
		name string
		err  error // from the body
		want error // in the chain returned
	}{
		{"failed", errConnReset, errConnReset},
		{"ended", io.EOF, io.ErrUnexpectedEOF},
		{"ended, said so", io.ErrUnexpectedEOF, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ie *InputError
			er := (&Decoder{}).Events(&failingSource{data: podFrame + "\n" + cut, err: tc.err})
			_, err := er.Next()
			require.NoError(t, err, "the first frame is whole")
			_, err = er.Next()
			require.ErrorIs(t, err, tc.want)
			require.False(t, errors.As(err, &ie), "watch: %v", err)
			require.Contains(t, err.Error(), fmt.Sprintf("read stream at byte %d:", len(podFrame)+1))
			_, err = (&Decoder{}).DecodeList(&failingSource{data: list[:len(list)-10], err: tc.err}, 0)
			require.ErrorIs(t, err, tc.want)
			require.False(t, errors.As(err, &ie), "list: %v", err)
		})
	}
	// A body that fails between frames ends the watch with its error too.
	er := (&Decoder{}).Events(&failingSource{data: podFrame + "\n", err: errConnReset})
	_, err := er.Next()
	require.NoError(t, err)
	_, err = er.Next()
	require.ErrorIs(t, err, errConnReset)
}

// TestBytesReadWithTheEndAreFramed: a body whose last Read returns bytes
// together with io.EOF (as io.Reader allows) has those bytes framed
// before the end is reported.
func TestBytesReadWithTheEndAreFramed(t *testing.T) {
	stream := strings.Repeat(podFrame+"\n", 3)
	er := (&Decoder{}).Events(iotest.DataErrReader(strings.NewReader(stream)))
	for i := range 3 {
		f, err := er.Next()
		require.NoError(t, err, "frame %d", i)
		require.Equal(t, "ADDED", f.Type)
	}
	_, err := er.Next()
	require.Equal(t, io.EOF, err)

	list := `{"items":[` + podFrame + `,` + podFrame + `],"metadata":{"resourceVersion":"9"}}`
	p, err := (&Decoder{}).DecodeList(iotest.DataErrReader(strings.NewReader(list)), 0)
	require.NoError(t, err)
	require.Len(t, p.Items, 2)
	require.Equal(t, "9", p.ResourceVersion)
}

// emptyReads returns 0, nil from every Read, up to calls of them, and
// then fails, so that a reader that retried it forever ends the test.
type emptyReads struct {
	data  string // served before the empty reads
	calls int
}

var errStillReading = errors.New("still reading a body that returns nothing")

func (e *emptyReads) Read(p []byte) (int, error) {
	if e.data != "" {
		n := copy(p, e.data)
		e.data = e.data[n:]
		return n, nil
	}
	if e.calls == 0 {
		return 0, errStillReading
	}
	e.calls--
	return 0, nil
}

// TestBodyReturningNothingEndsWithNoProgress: a body whose reads keep
// returning no bytes and no error ends the watch or the list with
// io.ErrNoProgress after a bounded number of tries.
func TestBodyReturningNothingEndsWithNoProgress(t *testing.T) {
	for _, data := range []string{"", podFrame + "\n", podFrame[:40]} {
		er := (&Decoder{}).Events(&emptyReads{data: data, calls: 1000})
		_, err := er.Next()
		if data == podFrame+"\n" {
			require.NoError(t, err)
			_, err = er.Next()
		}
		require.ErrorIs(t, err, io.ErrNoProgress, "watch after %q", data)
	}
	for _, data := range []string{"", `{"items":[`, `{"items":[{"metadata":{"name":"a"}},{"kind":"P`} {
		_, err := (&Decoder{}).DecodeList(&emptyReads{data: data, calls: 1000}, 0)
		require.ErrorIs(t, err, io.ErrNoProgress, "list after %q", data)
	}
}
