package raw

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// frameLine builds a frame's object and describes it.
func frameLine(f Frame) (string, error) {
	o, err := buildFrame(f)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s@%d %s/%s %s %s %s", f.Type, f.Offset, o.Namespace(), o.Name(), o.ResourceVersion(), o.UID(), o.String()), nil
}

// nextLines reads chunks with Next, building each object before the next
// read.
func nextLines(chunks [][]byte, max int) ([]string, error) {
	er := (&Decoder{MaxFrameSize: max}).Events(&chunkReader{chunks: chunks})
	var out []string
	for {
		f, err := er.Next()
		if err != nil {
			return out, err
		}
		line, err := frameLine(f)
		if err != nil {
			return out, err
		}
		out = append(out, line)
	}
}

// batchLines reads chunks with Batches. With hold, it keeps every batch
// until the stream ends and only then builds the objects, as a consumer far
// behind its reader would: frames must survive every later read.
func batchLines(chunks [][]byte, max int, hold bool) (out []string, batches int, err error) {
	er := (&Decoder{MaxFrameSize: max}).Events(&chunkReader{chunks: chunks})
	var held []*Batch
	build := func(b *Batch) error {
		for _, f := range b.Frames {
			line, err := frameLine(f)
			if err != nil {
				return err
			}
			out = append(out, line)
		}
		err := b.Err
		b.Release()
		return err
	}
	for b := range er.Batches() {
		batches++
		if hold {
			held = append(held, b)
			continue
		}
		if err := build(b); err != nil {
			return out, batches, err
		}
	}
	for _, b := range held {
		if err := build(b); err != nil {
			return out, batches, err
		}
	}
	return out, batches, io.ErrNoProgress // Batches ended without Err
}

// Batches must frame exactly what Next frames, however the stream arrives,
// and a frame must stay intact until its batch is released, whatever was
// read after it (decision 35).
func TestBatchesMatchNext(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, fx := range watchFixtures(t) {
		cuts := map[string][][]byte{"whole": {fx.Body}, "bytes of 7": fixedChunks(fx.Body, 7)}
		for i := range 5 {
			cuts[fmt.Sprintf("random %d", i)] = randomChunks(r, fx.Body)
		}
		for how, chunks := range cuts {
			want, werr := nextLines(cloneChunks(chunks), 0)
			for _, hold := range []bool{false, true} {
				got, _, err := batchLines(cloneChunks(chunks), 0, hold)
				require.Equal(t, want, got, "%s, %s, hold %v", fx.Name, how, hold)
				assert.Equal(t, fmt.Sprint(werr), fmt.Sprint(err), "%s, %s, hold %v", fx.Name, how, hold)
			}
		}
	}
}

// A frame larger than the reader's buffer, arriving over many reads, and a
// broken frame after good ones: the good ones come first, then Next's error
// (decision 35).
func TestBatchesLongFrameAndError(t *testing.T) {
	long := `{"type":"ADDED","object":{"metadata":{"name":"long","namespace":"ns"},"data":"` + strings.Repeat("x", 200<<10) + `"}}`
	stream := podFrame + "\n" + long + "\n" + podFrame + `{"type":"MODIFIED","object":{"a" 1}}` + podFrame
	chunks := fixedChunks([]byte(stream), 3000)
	want, werr := nextLines(cloneChunks(chunks), 0)
	require.Len(t, want, 3)
	got, batches, err := batchLines(cloneChunks(chunks), 0, true)
	assert.Equal(t, want, got)
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Equal(t, werr.Error(), err.Error())
	assert.Greater(t, batches, 1, "the frames before the long one are handed out before it is read")

	// Past the frame limit, the same error as Next's.
	_, werr = nextLines(cloneChunks(chunks), 64<<10)
	_, _, err = batchLines(cloneChunks(chunks), 64<<10, false)
	require.ErrorIs(t, err, ErrFrameTooLarge)
	assert.Equal(t, werr.Error(), err.Error())
}

// A quiet stream holds back no frame: each is handed out before the reader
// goes back to the body for more (decision 35).
func TestBatchesHandOutBeforeEachRead(t *testing.T) {
	body := &announcingReader{chunks: [][]byte{[]byte(podFrame), []byte(podFrame + podFrame), []byte(podFrame[:20]), []byte(podFrame[20:])}}
	er := (&Decoder{}).Events(body)
	var sizes, reads []int
	for b := range er.Batches() {
		reads = append(reads, body.reads)
		sizes = append(sizes, len(b.Frames))
		if b.Err != nil {
			assert.ErrorIs(t, b.Err, io.EOF)
		}
		b.Release()
	}
	assert.Equal(t, []int{1, 2, 1, 0}, sizes, "frames per batch; the last carries io.EOF")
	assert.Equal(t, []int{1, 2, 4, 5}, reads, "reads before each batch: a frame cut in two waits for its second half")
}

// A consumer that stops ranging stops the reading.
func TestBatchesStop(t *testing.T) {
	body := &announcingReader{chunks: [][]byte{[]byte(podFrame), []byte(podFrame), []byte(podFrame)}}
	er := (&Decoder{}).Events(body)
	for b := range er.Batches() {
		b.Release()
		break
	}
	assert.Equal(t, 1, body.reads, "nothing is read after the stop")
}

// announcingReader counts its reads.
type announcingReader struct {
	chunks [][]byte
	reads  int
}

func (a *announcingReader) Read(p []byte) (int, error) {
	a.reads++
	if len(a.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, a.chunks[0])
	if a.chunks[0] = a.chunks[0][n:]; len(a.chunks[0]) == 0 {
		a.chunks = a.chunks[1:]
	}
	return n, nil
}

func fixedChunks(b []byte, size int) [][]byte {
	var out [][]byte
	for len(b) > size {
		out = append(out, b[:size])
		b = b[size:]
	}
	return append(out, b)
}

func cloneChunks(chunks [][]byte) [][]byte {
	out := make([][]byte, len(chunks))
	for i, c := range chunks {
		out[i] = append([]byte(nil), c...)
	}
	return out
}

// FuzzBatches: Batches frames any stream as Next does, whether each batch
// is built at once or only after the stream ends.
func FuzzBatches(f *testing.F) {
	addFixtureSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		at := int(cut) % (len(data) + 1)
		want, werr := nextLines(splitAt(data, at), fuzzMaxFrame)
		for _, hold := range []bool{false, true} {
			got, _, err := batchLines(splitAt(data, at), fuzzMaxFrame, hold)
			if !equalLines(want, got) || fmt.Sprint(werr) != fmt.Sprint(err) {
				t.Fatalf("hold %v: Batches %q %v, Next %q %v", hold, got, err, want, werr)
			}
			if errors.Is(err, io.ErrNoProgress) {
				t.Fatal("Batches ended without an error")
			}
		}
	})
}

// A quiet stream, one event a read, whose consumer keeps up, goes back and
// forth between two buffers (decision 35): memory per quiet watch is two
// small buffers, not one per batch.
func TestBatchesQuietStreamReusesTwoBuffers(t *testing.T) {
	chunks := make([][]byte, 50)
	for i := range chunks {
		chunks[i] = []byte(podFrame)
	}
	bufs := map[*byte]bool{}
	for b := range (&Decoder{}).Events(&announcingReader{chunks: chunks}).Batches() {
		bufs[&b.buf[:1][0]] = true
		b.Release()
	}
	assert.Len(t, bufs, 2, "distinct buffers handed out")
}
