package raw

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// offerCounter is a source that records the room each Read was offered and
// fills it from a stream of at most avail bytes per read (a socket holding
// that much).
type offerCounter struct {
	r      io.Reader
	avail  int
	offers []int
}

func (c *offerCounter) Read(p []byte) (int, error) {
	c.offers = append(c.offers, len(p))
	return c.r.Read(p[:min(len(p), c.avail)])
}

// TestReadsAreLargeWhileDataFlows: once a read fills all the room it was
// offered, every later read is offered at least readSize bytes, on a watch
// stream and on a list page, so that a busy stream costs few system calls;
// a quiet watch, whose reads come in small pieces, keeps its
// small buffer.
func TestReadsAreLargeWhileDataFlows(t *testing.T) {
	events, _ := watchStream(t, 256)
	list, _ := podList(t, 2000)
	for _, tc := range []struct {
		name string
		read func(io.Reader) error
		body []byte
	}{
		{"watch", func(r io.Reader) error { return drainEvents((&Decoder{}).Events(r)) }, events},
		{"watch in batches", func(r io.Reader) error { return drainBatches((&Decoder{}).Events(r)) }, events},
		{"list", func(r io.Reader) error { _, err := (&Decoder{}).DecodeList(r, 500); return err }, list},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &offerCounter{r: bytes.NewReader(tc.body), avail: 1 << 30}
			require.NoError(t, tc.read(src))
			require.Greater(t, len(tc.body), 8*readSize, "the body must span many reads")
			// The first read of a watch is offered its initial buffer; the
			// last ones may be offered less than readSize only when the
			// stream ended.
			for i, n := range src.offers[1 : len(src.offers)-1] {
				require.GreaterOrEqual(t, n, readSize, "read %d of %d offered %d bytes: %v", i+1, len(src.offers), n, src.offers)
			}
		})
	}
	t.Run("quiet watch in batches", func(t *testing.T) {
		src := &offerCounter{r: bytes.NewReader(events), avail: 2000}
		require.NoError(t, drainBatches((&Decoder{}).Events(src)))
		for i, n := range src.offers {
			require.LessOrEqual(t, n, initialBufSize, "read %d: a watch whose reads never fill their room keeps buffers of the first size", i)
		}
	})
	t.Run("quiet watch", func(t *testing.T) {
		src := &offerCounter{r: bytes.NewReader(events), avail: 2000}
		er := (&Decoder{}).Events(src)
		require.NoError(t, drainEvents(er))
		require.Equal(t, initialBufSize, cap(er.rd.buf), "a watch whose reads never fill their room keeps its buffer")
	})
}

func drainEvents(er *EventReader) error {
	for {
		if _, err := er.Next(); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// drainBatches reads a stream with Batches, holding two batches at a time
// as a consumer a little behind the reader would.
func drainBatches(er *EventReader) error {
	var prev *Batch
	for b := range er.Batches() {
		if prev != nil {
			prev.Release()
		}
		if b.Err != nil {
			if b.Err == io.EOF {
				return nil
			}
			return b.Err
		}
		prev = b
	}
	return io.ErrNoProgress
}
