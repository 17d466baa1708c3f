package raw

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A watch read in batches keeps the 128 KiB buffers of a burst only while
// data flows: once a read comes back short of its room (the stream has
// caught up with the server), the reader goes back to a 32 KiB buffer,
// the spare batches let their big buffers go, and so do the batches
// released afterwards (decision 35). Before, a watch kept five of them
// for its life after its first burst, such as the initial events of a
// streaming list: 0.6 MiB per informer, 5% of 10,000 pods' JSON
// (BenchmarkInformerHeap in the root package).
func TestBatchesGiveBackTheBurstsBuffersOnceQuiet(t *testing.T) {
	const burst = 20000 // 2.7 MB of frames, read 128 KiB at a time
	body := repeatFrame(podFrame, burst)
	// Every read of the burst fills its room; the last, one frame, does not.
	src := &chunkReader{chunks: [][]byte{[]byte(body), []byte(podFrame)}}
	er := (&Decoder{}).Events(src)

	var held []*Batch // two ahead of the consumer, as httpwatch frames them
	bufs := map[*byte]bool{}
	var last *Batch
	for b := range er.Batches() {
		if b.Err != nil {
			require.ErrorIs(t, b.Err, io.EOF)
			last = b
			break
		}
		if cap(b.buf) == flowBufSize {
			bufs[&b.buf[:1][0]] = true
		}
		held = append(held, b)
		if len(held) > 2 {
			held[0].Release()
			held = held[1:]
		}
	}
	require.NotNil(t, last)
	assert.Greater(t, len(bufs), 1, "the burst was read into 128 KiB buffers")
	assert.LessOrEqual(t, len(bufs), 2+spareBatches, "reused while data flowed, not made anew at each read")
	assert.True(t, last.quiet.Load(), "the short read made the stream quiet")
	assert.LessOrEqual(t, cap(last.buf), initialBufSize, "the reader went back to the quiet size")

	for _, b := range held {
		b.Release() // after the stream went quiet
	}
	kept := 0
	for range len(last.spare) {
		b := <-last.spare
		kept++
		assert.LessOrEqual(t, cap(b.buf), quietBufMax, "a spare batch keeps a burst's buffer")
	}
	assert.LessOrEqual(t, kept, spareBatches)
}
