package raw

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests pin how a watch reader sizes its buffer, on Next and on
// Batches, where each hand-over gives the reader another buffer (decision
// 35). The sizes show in what each Read of the body is offered, which
// offerCounter (readsize_test.go) records.

// dataFrame is an event whose object carries n bytes of data.
func dataFrame(n int) string {
	return `{"type":"ADDED","object":{"metadata":{"name":"long","namespace":"ns"},"data":"` + strings.Repeat("x", n) + `"}}`
}

// repeatFrame is frame n times over.
func repeatFrame(frame string, n int) string { return strings.Repeat(frame, n) }

// readerPaths are the two ways of reading a watch stream.
var readerPaths = []struct {
	name  string
	drain func(*EventReader) error
}{
	{"Next", drainEvents},
	{"Batches", drainBatches},
}

// A frame cut by the end of a read is carried into the next buffer at a
// hand-over. If it fills more than half of the buffer, a long value is
// being assembled and the next buffer is twice as large; up to half, the
// buffer keeps its size, so that a quiet watch keeps its small buffers.
func TestHandOverGrowsForAFrameFillingMoreThanHalf(t *testing.T) {
	long := dataFrame(initialBufSize)
	for _, tc := range []struct {
		name      string
		cut       int // bytes of long in the first read
		wantOffer int // room offered to the second read
	}{
		{"just under half", initialBufSize/2 - 1, initialBufSize - (initialBufSize/2 - 1)},
		{"exactly half", initialBufSize / 2, initialBufSize / 2},
		{"one byte past half", initialBufSize/2 + 1, 2*initialBufSize - (initialBufSize/2 + 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The first read holds a whole frame, which Batches hands out
			// before the second read, and the start of the long one; it
			// does not fill its room, so the stream is not flowing.
			chunks := [][]byte{[]byte(podFrame + long[:tc.cut]), []byte(long[tc.cut:])}
			require.Less(t, len(chunks[0]), initialBufSize)
			src := &offerCounter{r: &chunkReader{chunks: chunks}, avail: 1 << 30}
			require.NoError(t, drainBatches((&Decoder{}).Events(src)))
			require.GreaterOrEqual(t, len(src.offers), 2)
			assert.Equal(t, initialBufSize, src.offers[0])
			assert.Equal(t, tc.wantOffer, src.offers[1], "room offered to the read after the hand-over: %v", src.offers)
		})
	}
}

// A buffer grown for a long frame keeps its size: the reads after it are
// offered as much, so that a busy stream does not grow it again for the
// next long frame. Next keeps its one buffer; Batches asks each hand-over
// for a buffer as large as the one it hands out.
func TestReaderKeepsTheBufferALongFrameGrew(t *testing.T) {
	body := repeatFrame(podFrame, 2000) + dataFrame(300<<10) + repeatFrame(podFrame, 20000)
	const grown = 4 * readSize // the long frame grows the buffer past this
	for _, path := range readerPaths {
		t.Run(path.name, func(t *testing.T) {
			src := &offerCounter{r: strings.NewReader(body), avail: 1 << 30}
			require.NoError(t, path.drain((&Decoder{}).Events(src)))
			after := -1 // the first read offered more than grown
			for i, n := range src.offers {
				if n > grown {
					after = i
					break
				}
			}
			require.GreaterOrEqual(t, after, 0, "the long frame grew the buffer: %v", src.offers)
			require.Greater(t, len(src.offers)-after, 4, "the stream goes on for several reads after it")
			// The last read, which finds the end, may be offered anything.
			for i, n := range src.offers[after : len(src.offers)-1] {
				require.Greater(t, n, grown, "read %d after the long frame: %v", i, src.offers)
			}
		})
	}
}

// A frame limit below flowBufSize bounds the buffer: no read is offered
// more than the limit and the byte that shows a frame is over it, however
// fast the data flows.
func TestBufferStaysWithinTheFrameLimit(t *testing.T) {
	const limit = 40000
	body := repeatFrame(podFrame, 2000) + dataFrame(limit-200) + repeatFrame(podFrame, 2000)
	for _, path := range readerPaths {
		t.Run(path.name, func(t *testing.T) {
			src := &offerCounter{r: strings.NewReader(body), avail: 1 << 30}
			require.NoError(t, path.drain((&Decoder{MaxFrameSize: limit}).Events(src)))
			require.Greater(t, len(src.offers), 8)
			for i, n := range src.offers {
				require.LessOrEqual(t, n, limit+1, "read %d: %v", i, src.offers)
			}
		})
	}
}

// A watch read in batches gives back the buffers a frame over a mebibyte
// made it grow: once that frame is handed out, reads are offered the
// flowing size again, and the huge buffers are not kept for the watch's
// life (decision 35: a flowing watch holds a few buffers of 128 KiB). The
// buffers it then reads into are reused, released batch by batch, rather
// than made anew at every read.
func TestBatchesGiveBackBuffersGrownPastOneMiB(t *testing.T) {
	const after = 200000 // 26 MB of small frames: 200 reads of 128 KiB
	read := func(huge int) (offers []int, allocated uint64) {
		body := repeatFrame(podFrame, 2000) + dataFrame(huge) + repeatFrame(podFrame, after)
		src := &offerCounter{r: strings.NewReader(body), avail: 1 << 30}
		er := (&Decoder{}).Events(src)
		var before, end runtime.MemStats
		runtime.ReadMemStats(&before)
		require.NoError(t, drainBatches(er))
		runtime.ReadMemStats(&end)
		return src.offers, end.TotalAlloc - before.TotalAlloc
	}
	_, plain := read(0)
	offers, allocated := read(3 << 20)

	huge := -1 // the last read offered more than maxPooledBuf
	for i, n := range offers {
		if n > maxPooledBuf {
			huge = i
		}
	}
	require.GreaterOrEqual(t, huge, 0, "the huge frame grew the buffer: %v", offers)
	rest := offers[huge+1 : len(offers)-1] // the last read, which finds the end, may be offered anything
	require.Greater(t, len(rest), 100, "the stream goes on for many reads after the huge frame")
	for i, n := range rest {
		require.LessOrEqual(t, n, flowBufSize, "read %d after the huge frame: %v", i, offers)
	}
	// Growing for the 3 MiB frame, a buffer twice the size at each read it
	// spans, takes about 18 MB more than the same stream without it. Kept
	// huge buffers took 150 MB; a new 128 KiB buffer at each later read
	// would take 26 MB more.
	assert.Less(t, allocated-plain, uint64(24<<20), "bytes allocated for the huge frame")
}

// Only a buffer grown past maxPooledBuf is given back: one that a 600 KiB
// frame grew to exactly 1 MiB is kept, as smaller ones are, so that a
// watch of large objects does not grow its buffer again for each.
func TestBatchesKeepABufferGrownToOneMiB(t *testing.T) {
	body := repeatFrame(podFrame, 2000) + dataFrame(600<<10) + repeatFrame(podFrame, 20000)
	src := &offerCounter{r: strings.NewReader(body), avail: 1 << 30}
	require.NoError(t, drainBatches((&Decoder{}).Events(src)))
	const grown = maxPooledBuf / 2
	after := slices.IndexFunc(src.offers, func(n int) bool { return n > grown })
	require.GreaterOrEqual(t, after, 0, "the frame grew the buffer to 1 MiB: %v", src.offers)
	require.LessOrEqual(t, slices.Max(src.offers), maxPooledBuf, "but not past it: %v", src.offers)
	rest := src.offers[after : len(src.offers)-1] // the last read, which finds the end, may be offered anything
	require.Greater(t, len(rest), 2, "the stream goes on after the frame: %v", src.offers)
	for i, n := range rest {
		require.Greater(t, n, grown, "read %d after the frame: %v", i, src.offers)
	}
}
