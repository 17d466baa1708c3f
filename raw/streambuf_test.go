package raw

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scriptedReader serves data in reads no larger than script says, one entry
// per Read in turn (then as large as offered), as a socket holding that
// much each time would, and records the room each Read was offered.
type scriptedReader struct {
	data   []byte
	script []int
	offers []int
}

func (s *scriptedReader) Read(p []byte) (int, error) {
	i := len(s.offers)
	s.offers = append(s.offers, len(p))
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	if i < len(s.script) {
		p = p[:min(len(p), s.script[i])]
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// sizedFrame is a watch event of exactly size bytes, its newline included,
// padded in a member of its object.
func sizedFrame(size int) []byte {
	const head, tail = `{"type":"ADDED","object":{"metadata":{"name":"p"},"pad":"`, "\"}}\n"
	return []byte(head + strings.Repeat("x", size-len(head)-len(tail)) + tail)
}

// sizedFrames joins frames of the given sizes and returns where each
// starts.
func sizedFrames(sizes ...int) (body []byte, offsets []int64) {
	for _, n := range sizes {
		offsets = append(offsets, int64(len(body)))
		body = append(body, sizedFrame(n)...)
	}
	return body, offsets
}

// TestReadsOfferTheRoomTheBufferRulesGive pins when the watch reader moves,
// grows and keeps its buffer, as the room it offers each read of the body:
// it moves a pending frame to the front only when less than readSize is
// left behind it or when half the buffer is spent, and grows the buffer to
// flowBufSize once a read filled all the room it was offered (even behind
// a partial frame) and the limit allows that size.
func TestReadsOfferTheRoomTheBufferRulesGive(t *testing.T) {
	const kib32 = initialBufSize
	for _, tc := range []struct {
		name   string
		max    int
		frames []int
		script []int // the most each read returns
		offers []int // the room the first reads are offered
	}{{
		// Two reads of 32768: the frame from 40000 to 70000 is pending
		// and exactly readSize is left behind it, so it stays put.
		name:   "exactly readSize left is read into without moving",
		frames: []int{40000, 30000, 1000},
		script: []int{kib32, kib32},
		offers: []int{kib32, flowBufSize - kib32, readSize},
	}, {
		// 72768 bytes in, the frame from 40000 pending: less than
		// readSize is left, so the frame's 32768 bytes so far move to
		// the front.
		name:   "less than readSize left moves the pending frame",
		frames: []int{40000, 40000, 1000},
		script: []int{kib32, 40000},
		offers: []int{kib32, flowBufSize - kib32, flowBufSize - kib32},
	}, {
		// The frames end exactly at readSize, half the buffer: the next
		// read starts over at its front.
		name:   "a buffer spent to its half starts over",
		frames: []int{40000, readSize - 40000, 1000},
		script: []int{kib32, kib32},
		offers: []int{kib32, flowBufSize - kib32, flowBufSize},
	}, {
		name:   "a read filling the room behind a partial frame grows the buffer",
		frames: []int{40000, 1000},
		script: []int{100, kib32 - 100},
		offers: []int{kib32, kib32 - 100, flowBufSize - kib32},
	}, {
		name:   "a limit of exactly flowBufSize lets the buffer grow to it",
		max:    flowBufSize,
		frames: []int{40000, 1000},
		script: []int{kib32},
		offers: []int{kib32, flowBufSize - kib32},
	}, {
		// Below flowBufSize it only doubles for the long frame.
		name:   "a limit below flowBufSize keeps the first size while frames fit",
		max:    flowBufSize - 1,
		frames: []int{40000, 1000},
		script: []int{kib32},
		offers: []int{kib32, kib32},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			body, offsets := sizedFrames(tc.frames...)
			src := &scriptedReader{data: body, script: tc.script}
			er := (&Decoder{MaxFrameSize: tc.max}).Events(src)
			for i, at := range offsets {
				f, err := er.Next()
				require.NoError(t, err, "frame %d", i)
				require.Equal(t, at, f.Offset, "frame %d", i)
				o, err := f.Plain()
				require.NoError(t, err, "frame %d", i)
				require.Len(t, o.String(), tc.frames[i]-len("{\"type\":\"ADDED\",\"object\":}\n"), "frame %d", i)
			}
			_, err := er.Next()
			require.Equal(t, io.EOF, err)
			require.GreaterOrEqual(t, len(src.offers), len(tc.offers))
			require.Equal(t, tc.offers, src.offers[:len(tc.offers)], "room offered to the first reads (all: %v)", src.offers)
		})
	}
}

// TestFlowingStreamAllocatesItsBuffersOnce: a watch whose reads all fill
// their room grows its buffer once, to flowBufSize, and then reads into it:
// framing megabytes allocates the two buffers and the events' type
// strings, not a buffer per read.
func TestFlowingStreamAllocatesItsBuffersOnce(t *testing.T) {
	body, events := watchStream(t, 1024)
	require.Greater(t, len(body), 40*flowBufSize)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := drainEvents((&Decoder{}).Events(&offerCounter{r: bytes.NewReader(body), avail: 1 << 30}))
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	allocated := after.TotalAlloc - before.TotalAlloc
	bound := uint64(initialBufSize + flowBufSize + 16*events + 128<<10)
	require.Less(t, allocated, bound, "bytes allocated framing %d bytes in %d events", len(body), events)
}

// bigItemList is a list whose one item is about size bytes long.
func bigItemList(size int) []byte {
	return []byte(`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"big"},"pad":"` +
		strings.Repeat("x", size) + `"}]}`)
}

// drainFreeBufs empties the pool of list buffers, so that the next list
// reads into a new one.
func drainFreeBufs() {
	for {
		select {
		case <-freeBufs:
		default:
			return
		}
	}
}

// TestListBuffersPooledUpToMaxPooledBuf: a list read buffer that grew for a
// large item is handed to the next list if it is no larger than
// maxPooledBuf (its first read is offered all of it), and left to the
// collector if it is larger (the next list starts at flowBufSize).
func TestListBuffersPooledUpToMaxPooledBuf(t *testing.T) {
	drainFreeBufs()
	t.Cleanup(drainFreeBufs)
	for _, tc := range []struct {
		name      string
		item      int // bytes in the first list's item
		nextOffer int // the room the next list's first read is offered
	}{
		{"grown to maxPooledBuf", 700 << 10, maxPooledBuf},
		{"grown past maxPooledBuf", 1500 << 10, flowBufSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drainFreeBufs()
			p, err := (&Decoder{}).DecodeList(bytes.NewReader(bigItemList(tc.item)), 0)
			require.NoError(t, err)
			require.Len(t, p.Items, 1)
			src := &offerCounter{r: strings.NewReader(`{"items":[{"metadata":{"name":"a"}}]}`), avail: 1 << 30}
			p, err = (&Decoder{}).DecodeList(src, 0)
			require.NoError(t, err)
			require.Len(t, p.Items, 1)
			require.Equal(t, tc.nextOffer, src.offers[0], fmt.Sprintf("reads offered %v", src.offers))
		})
	}
}
