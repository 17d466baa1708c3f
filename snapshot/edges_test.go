package snapshot

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Decision 32: zero or negative durations take the defaults; others are
// kept.
func TestWithDefaults(t *testing.T) {
	for _, zero := range []time.Duration{0, -time.Second} {
		o := Options{Interval: zero, MaxAge: zero, ConfirmAfter: zero}.WithDefaults()
		assert.Equal(t, Options{Interval: DefaultInterval, MaxAge: DefaultMaxAge, ConfirmAfter: DefaultConfirmAfter}, o)
	}
	set := Options{Interval: time.Second, MaxAge: 2 * time.Second, ConfirmAfter: 3 * time.Millisecond}
	assert.Equal(t, set, set.WithDefaults())
}

// A derived file name keeps letters, digits, '.', '_' and '-', and turns
// every other character, those next to the ranges included, into '_'.
func TestPathKeepsSafeCharacters(t *testing.T) {
	o := Options{Dir: "/d"}
	assert.Equal(t, "/d/azAZ09.-_______.snap", o.Path(Key{Resource: "azAZ09.-`{@[/:é", Namespace: ""}))
	assert.Equal(t, "/d/a_b_c_.snap", o.Path(Key{Resource: "a b", Namespace: "c "}))
}

// A file name without a directory is written in the working directory.
func TestWriteFileInWorkingDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, WriteFile("s.snap", &Snapshot{Key: testKey, ResourceVersion: "1"}))
	s, err := ReadFile("s.snap", testKey, Limits{})
	require.NoError(t, err)
	assert.Equal(t, "1", s.ResourceVersion)
}

// A write that fails leaves no temporary file behind.
func TestFailedWriteLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	require.NoError(t, os.MkdirAll(filepath.Join(path, "busy"), 0o700)) // a directory where the file goes
	require.Error(t, WriteFile(path, &Snapshot{Key: testKey}))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), tempPrefix), "left %s", e.Name())
	}
}

// Open refuses a file larger than MaxSize before reading it, as too
// large; one of exactly MaxSize is read.
func TestOpenChecksTheFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.snap")
	require.NoError(t, WriteFile(path, &Snapshot{Key: testKey, Objects: objects(t, 3)}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	_, err = ReadFile(path, testKey, Limits{MaxSize: st.Size()})
	require.NoError(t, err, "exactly MaxSize")
	_, err = Open(path, testKey, Limits{MaxSize: st.Size() - 1})
	require.ErrorIs(t, err, ErrTooLarge)
}

// MaxObject bounds an object's stored form inclusively: an object of
// exactly MaxObject bytes is read, one byte less refuses it.
func TestMaxObjectIsInclusive(t *testing.T) {
	objs := objects(t, 3)
	largest := 0
	for _, o := range objs {
		form, err := o.AppendBinary(nil)
		require.NoError(t, err)
		largest = max(largest, len(form))
	}
	var b bytes.Buffer
	require.NoError(t, Encode(&b, &Snapshot{Key: testKey, Objects: objs}))
	_, err := Decode(bytes.NewReader(b.Bytes()), testKey, Limits{MaxObject: largest})
	require.NoError(t, err)
	_, err = Decode(bytes.NewReader(b.Bytes()), testKey, Limits{MaxObject: largest - 1})
	require.ErrorIs(t, err, ErrTooLarge)
}

// A header of exactly maxHeader bytes is read; one byte more is refused as
// corrupt (a snapshot's header is small: a bigger one is garbage).
func TestHeaderSizeLimit(t *testing.T) {
	encode := func(headerLen int) []byte {
		k := testKey
		var b bytes.Buffer
		require.NoError(t, Encode(&b, &Snapshot{Key: k}))
		k.LabelSelector += strings.Repeat("x", headerLen-int(binary.LittleEndian.Uint32(b.Bytes()[len(magic)+2:])))
		b.Reset()
		require.NoError(t, Encode(&b, &Snapshot{Key: k}))
		require.EqualValues(t, headerLen, binary.LittleEndian.Uint32(b.Bytes()[len(magic)+2:]))
		return b.Bytes()
	}
	_, err := NewReader(bytes.NewReader(encode(maxHeader)), testKey, Limits{})
	require.ErrorIs(t, err, ErrMismatch, "read: only the selector differs")
	_, err = NewReader(bytes.NewReader(encode(maxHeader+1)), testKey, Limits{})
	require.ErrorIs(t, err, ErrCorrupt)
}

// Close closes the file Open opened (a second Close says it is closed),
// and does nothing for a Reader over a caller's reader.
func TestReaderClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.snap")
	require.NoError(t, WriteFile(path, &Snapshot{Key: testKey}))
	rd, err := Open(path, testKey, Limits{})
	require.NoError(t, err)
	require.NoError(t, rd.Close())
	require.ErrorIs(t, rd.Close(), os.ErrClosed, "the file was closed")

	b, err := os.ReadFile(path)
	require.NoError(t, err)
	rd, err = NewReader(bytes.NewReader(b), testKey, Limits{})
	require.NoError(t, err)
	require.NoError(t, rd.Close())
}
