package snapshot

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"github.com/listwatch/listwatch/raw"
)

// Reader reads one snapshot in two steps: NewReader or Open read its
// header and check it against the key wanted, so that a caller can act on
// the resourceVersion (open a watch from it) while Read reads the objects
// and checks the checksum that vouches for all of it. Until Read returns
// them, nothing read can be trusted but the match of the key.
type Reader struct {
	// ResourceVersion and Written are the header's, which a corrupt file
	// may have wrong: Read says whether it is whole.
	ResourceVersion string
	Written         time.Time

	key    Key
	lim    Limits
	d      decoder
	h      *header
	closer io.Closer
}

// NewReader reads the header of a snapshot from r and checks that it is of
// the current version and of want. Its errors wrap ErrCorrupt, ErrVersion,
// ErrMismatch or ErrTooLarge.
func NewReader(r io.Reader, want Key, lim Limits) (*Reader, error) {
	lim = lim.withDefaults()
	rd := &Reader{key: want, lim: lim,
		d: decoder{r: bufio.NewReaderSize(io.LimitReader(r, lim.MaxSize+1), readBuffer), crc: crc32.New(castagnoli), left: lim.MaxSize}}
	h, err := rd.d.header()
	if err != nil {
		return nil, err
	}
	if h.RawVersion != raw.BinaryVersion {
		return nil, fmt.Errorf("%w: objects in raw's binary form %d, want %d", ErrVersion, h.RawVersion, raw.BinaryVersion)
	}
	if field := h.mismatch(want.header()); field != "" {
		return nil, fmt.Errorf("%w: %s differs", ErrMismatch, field)
	}
	if h.Objects < 0 || h.Bytes < 0 || h.Bytes+4*int64(h.Objects) > rd.d.left {
		return nil, fmt.Errorf("%w: header claims %d objects of %d bytes", ErrCorrupt, h.Objects, h.Bytes)
	}
	rd.h, rd.ResourceVersion, rd.Written = h, h.ResourceVersion, h.Written
	return rd, nil
}

// Open opens the snapshot at path and reads its header (see NewReader). A
// missing file is an error wrapping fs.ErrNotExist. Close the Reader.
func Open(path string, want Key, lim Limits) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot read: %w", err)
	}
	if st, err := f.Stat(); err == nil && lim.withDefaults().MaxSize < st.Size() {
		f.Close()
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, path, st.Size())
	}
	rd, err := NewReader(f, want, lim)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot read %s: %w", path, err)
	}
	rd.closer = f
	return rd, nil
}

// Close closes the file Open opened.
func (rd *Reader) Close() error {
	if rd.closer == nil {
		return nil
	}
	return rd.closer.Close()
}

// Read reads the objects and returns the snapshot if it is whole: every
// object there, the checksum right and nothing after it. Its errors wrap
// ErrCorrupt or ErrTooLarge; nothing of a refused snapshot is returned.
// Call it once.
func (rd *Reader) Read() (*Snapshot, error) {
	h := rd.h
	objs, total, err := rd.d.readObjects(h.Objects, rd.lim.MaxObject)
	if err != nil {
		return nil, err
	}
	if total != h.Bytes {
		return nil, fmt.Errorf("%w: objects hold %d bytes, header says %d", ErrCorrupt, total, h.Bytes)
	}
	return &Snapshot{Key: rd.key, ResourceVersion: h.ResourceVersion, Written: h.Written, Objects: objs}, nil
}

// Decode reads a whole snapshot from r: NewReader, then Read.
func Decode(r io.Reader, want Key, lim Limits) (*Snapshot, error) {
	rd, err := NewReader(r, want, lim)
	if err != nil {
		return nil, err
	}
	return rd.Read()
}
