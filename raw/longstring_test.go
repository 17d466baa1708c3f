package raw

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// trickle hands out its data at most n bytes per Read, as a slow network
// does, so that a long value needs many refills of the read buffer.
type trickle struct {
	data []byte
	n    int
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), t.n)], t.data)
	t.data = t.data[k:]
	return k, nil
}

// longStringList is a list whose unknown top-level key holds a string of
// size bytes, before and after the items.
func longStringList(size int) []byte {
	s := strings.Repeat("abcdefg\\\"", size/9+1)[:size]
	s = strings.TrimRight(s, `\`) // keep the literal closed
	return []byte(`{"kind":"PodList","apiVersion":"v1","unknown":"` + s +
		`","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}],"tail":"` + s + `"}`)
}

// TestListLongStringScannedOnce: a string at the list's top level that
// spans many reads is examined once, not again from its start after every
// refill (which made a 32 MB string take 40 s). The reader counts the bytes
// it examines in strings; it must stay linear in the body's size.
func TestListLongStringScannedOnce(t *testing.T) {
	for _, tc := range []struct {
		size, chunk int
	}{
		{1 << 20, 4 << 10},
		{1 << 20, 1},
		{256 << 10, 63},
		{100, 7},
	} {
		body := longStringList(tc.size)
		rd := newReader(&trickle{data: body, n: tc.chunk}, 0, false)
		p, err := (&Decoder{}).scanList(rd, 0)
		require.NoError(t, err, "size %d chunk %d", tc.size, tc.chunk)
		require.Len(t, p.Items, 1)
		require.Equal(t, "5", p.ResourceVersion)
		// Both long strings, plus the short keys and values.
		require.LessOrEqual(t, rd.strExamined, int64(len(body)),
			"size %d in %d-byte reads: %d bytes examined for a %d-byte body", tc.size, tc.chunk, rd.strExamined, len(body))
	}
}

// TestReaderStringSplitAnywhere: a string value whose escapes fall on a
// read boundary decodes the same wherever the reads end.
func TestReaderStringSplitAnywhere(t *testing.T) {
	for _, lit := range []string{
		`"plain"`,
		`"a\"b"`,
		`"\\\\\""`,
		`"x\u00e9y\/z\n"`,
		`"` + strings.Repeat(`\\`, 40) + `\"` + strings.Repeat("é", 30) + `"`,
	} {
		in := []byte(lit + ` `)
		var sources []io.Reader
		for cut := 0; cut <= len(in); cut++ {
			sources = append(sources, &chunkReader{chunks: splitAt(bytes.Clone(in), cut)})
		}
		for _, n := range []int{1, 2, 3, 64} {
			sources = append(sources, &trickle{data: in, n: n})
		}
		for k, src := range sources {
			rd := newReader(src, 0, false)
			c, err := rd.peek()
			require.NoError(t, err)
			require.Equal(t, byte('"'), c)
			got, err := rd.str()
			require.NoError(t, err, "%s, source %d", lit, k)
			require.Equal(t, lit, string(got), "source %d", k)
			var s string
			require.NoError(t, json.Unmarshal(got, &s))
		}
	}
}

// BenchmarkListLongString measures a list whose unknown key holds a long
// string, read 16 KiB at a time as from a TLS connection; cpu-ns/op should
// grow linearly with the size.
func BenchmarkListLongString(b *testing.B) {
	for _, mb := range []int{1, 4, 16} {
		b.Run(strconv.Itoa(mb)+"MB", func(b *testing.B) {
			body := longStringList(mb << 20)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			src := &trickle{n: 16 << 10}
			cpu := startCPU(b)
			for b.Loop() {
				src.data = body
				if _, err := (&Decoder{}).DecodeList(src, 0); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(len(body))
		})
	}
}
