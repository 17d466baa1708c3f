package snapshot

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/require"
)

// largeSnapshot encodes objects over several reads: many of 100 KB and two
// bigger than a read, one of them last.
func largeSnapshot(t *testing.T) (*Snapshot, []byte) {
	t.Helper()
	var objs []*raw.Object
	add := func(i, size int) {
		o, err := raw.NewObject(fmt.Appendf(nil, `{"metadata":{"name":"p%d","namespace":"ns","resourceVersion":"%d"},"data":%q}`, i, i+10, strings.Repeat("x", size)))
		require.NoError(t, err)
		objs = append(objs, o)
	}
	for i := range 90 {
		size := 100 << 10
		if i == 40 {
			size = chunkSize + chunkSize/2
		}
		add(i, size+i) // lengths that cross the reads' ends at every offset
	}
	add(90, 2*chunkSize)
	s := &Snapshot{Key: testKey, ResourceVersion: "42", Objects: objs, Written: time.Unix(1700000000, 0).UTC()}
	var b bytes.Buffer
	require.NoError(t, Encode(&b, s))
	require.Greater(t, b.Len(), 4*chunkSize)
	return s, b.Bytes()
}

// decision 32: a snapshot read in several chunks, by several workers, with
// objects bigger than a chunk, reads back whole and in order; cut at or
// near a chunk's end, or with a byte changed in any chunk, it is refused.
func TestLargeSnapshot(t *testing.T) {
	s, b := largeSnapshot(t)
	got, err := Decode(bytes.NewReader(b), testKey, Limits{})
	require.NoError(t, err)
	require.Len(t, got.Objects, len(s.Objects))
	for i, o := range got.Objects {
		require.Equal(t, s.Objects[i].String(), o.String(), "object %d", i)
	}
	for _, at := range []int{chunkSize - 3, chunkSize, chunkSize + 1, 2*chunkSize + 7, len(b) - 5, len(b) - 1} {
		_, err := Decode(bytes.NewReader(b[:at]), testKey, Limits{})
		require.ErrorIs(t, err, ErrCorrupt, "cut at %d", at)
	}
	for _, at := range []int{chunkSize / 2, chunkSize + 100, 3*chunkSize - 1, len(b) - 10} {
		bad := bytes.Clone(b)
		bad[at] ^= 0x20
		_, err := Decode(bytes.NewReader(bad), testKey, Limits{})
		require.ErrorIs(t, err, ErrCorrupt, "byte %d changed", at)
	}
	_, err = Decode(bytes.NewReader(b), testKey, Limits{MaxObject: chunkSize})
	require.ErrorIs(t, err, ErrTooLarge)
}
