package snapshot

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"net/url"
	"time"

	"github.com/listwatch/listwatch/raw"
)

// Version is the format version this package writes and reads. Version 2
// keeps each object in raw's binary form, read back without scanning its
// JSON again (the checksum vouches for it); version 1 kept the JSON alone.
const Version = 2

const magic = "lwsnap"

// Errors a read returns, wrapped with what was wrong.
var (
	// ErrCorrupt: the file is cut short, fails its checksum, or holds
	// something this package never writes.
	ErrCorrupt = errors.New("snapshot corrupt")
	// ErrVersion: the file is of another format version.
	ErrVersion = errors.New("snapshot of another format version")
	// ErrMismatch: the snapshot is of another server, resource, namespace,
	// selector or shape than asked for.
	ErrMismatch = errors.New("snapshot does not match")
	// ErrTooLarge: the file or one of its objects exceeds the Limits.
	ErrTooLarge = errors.New("snapshot too large")
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Key is what a snapshot must match to be used: which objects of which
// server it holds, and how they were cut.
type Key struct {
	// Server is the API server's URL. Only a SHA-256 of it, without any
	// user information, is written.
	Server string
	// Resource names the resource, e.g. "pods.v1" (httpwatch.Resource's
	// String).
	Resource      string
	Namespace     string
	LabelSelector string
	FieldSelector string
	// Shape says how objects were cut and rewritten before they were
	// cached: metadata only, managed fields kept, projection paths, the
	// version of a transform. Two shapes that differ never match.
	Shape string
}

// Snapshot is a cache at one resourceVersion.
type Snapshot struct {
	Key             Key
	ResourceVersion string
	Objects         []*raw.Object
	Written         time.Time
}

// Limits bound what a read accepts; zero fields take the defaults.
type Limits struct {
	// MaxSize bounds the whole file: 4 GiB by default.
	MaxSize int64
	// MaxObject bounds one object: raw.DefaultMaxFrameSize by default.
	MaxObject int
}

const maxHeader = 64 << 10

func (l Limits) withDefaults() Limits {
	if l.MaxSize <= 0 {
		l.MaxSize = 4 << 30
	}
	if l.MaxObject <= 0 {
		l.MaxObject = raw.DefaultMaxFrameSize
	}
	return l
}

// header is the file's JSON header.
type header struct {
	Server          string    `json:"server"` // "sha256:" and hex
	Resource        string    `json:"resource"`
	Namespace       string    `json:"namespace,omitempty"`
	LabelSelector   string    `json:"labelSelector,omitempty"`
	FieldSelector   string    `json:"fieldSelector,omitempty"`
	Shape           string    `json:"shape,omitempty"`
	ResourceVersion string    `json:"resourceVersion"`
	Written         time.Time `json:"written"`
	RawVersion      int       `json:"rawVersion"` // raw.BinaryVersion
	Objects         int       `json:"objects"`
	Bytes           int64     `json:"bytes"` // of the objects' JSON
}

// serverHash hashes the server URL without its user information, so that
// neither the address's credentials nor the address itself is written.
func serverHash(server string) string {
	if u, err := url.Parse(server); err == nil {
		u.User = nil
		server = u.String()
	}
	sum := sha256.Sum256([]byte(server))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (k Key) header() header {
	return header{Server: serverHash(k.Server), Resource: k.Resource, Namespace: k.Namespace,
		LabelSelector: k.LabelSelector, FieldSelector: k.FieldSelector, Shape: k.Shape}
}

// mismatch names the first field of h that differs from want's, or "".
func (h *header) mismatch(want header) string {
	for _, f := range []struct{ name, got, want string }{
		{"server", h.Server, want.Server},
		{"resource", h.Resource, want.Resource},
		{"namespace", h.Namespace, want.Namespace},
		{"labelSelector", h.LabelSelector, want.LabelSelector},
		{"fieldSelector", h.FieldSelector, want.FieldSelector},
		{"shape", h.Shape, want.Shape},
	} {
		if f.got != f.want {
			return f.name
		}
	}
	return ""
}

// Encode writes s to w in the current format.
func Encode(w io.Writer, s *Snapshot) error {
	h := s.Key.header()
	h.ResourceVersion = s.ResourceVersion
	h.Written = s.Written.UTC()
	h.Objects = len(s.Objects)
	h.RawVersion = raw.BinaryVersion
	for _, o := range s.Objects {
		h.Bytes += int64(len(o.Raw()))
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("snapshot encode: header: %w", err)
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	crc := crc32.New(castagnoli)
	out := io.MultiWriter(bw, crc)
	var n [4]byte
	put := func(b []byte) { _, _ = out.Write(b) } // bw keeps the first error; Flush returns it
	put([]byte(magic))
	put(binary.BigEndian.AppendUint16(nil, Version))
	binary.LittleEndian.PutUint32(n[:], uint32(len(hj)))
	put(n[:])
	put(hj)
	var form []byte
	for _, o := range s.Objects {
		if form, err = o.AppendBinary(form[:0]); err != nil {
			return fmt.Errorf("snapshot encode: %w", err)
		}
		binary.LittleEndian.PutUint32(n[:], uint32(len(form)))
		put(n[:])
		put(form)
	}
	binary.LittleEndian.PutUint32(n[:], crc.Sum32())
	_, _ = bw.Write(n[:])
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("snapshot encode: %w", err)
	}
	return nil
}

// decoder reads a snapshot, summing what it reads.
type decoder struct {
	r    *bufio.Reader
	crc  hash.Hash32
	left int64 // bytes the limit still allows

	carryHead [4]byte // the length of an object split between two reads
}

// read fills b, summing it; a short read is corruption.
func (d *decoder) read(b []byte) error {
	if int64(len(b)) > d.left {
		return fmt.Errorf("%w: over the size limit", ErrTooLarge)
	}
	if _, err := io.ReadFull(d.r, b); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: cut short", ErrCorrupt)
		}
		return fmt.Errorf("snapshot read: %w", err)
	}
	d.left -= int64(len(b))
	d.crc.Write(b)
	return nil
}

func (d *decoder) uint32() (uint32, error) {
	var n [4]byte
	if err := d.read(n[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(n[:]), nil
}

func (d *decoder) header() (*header, error) {
	var m [len(magic) + 2]byte
	if err := d.read(m[:]); err != nil {
		return nil, err
	}
	if string(m[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: not a snapshot file", ErrCorrupt)
	}
	if v := binary.BigEndian.Uint16(m[len(magic):]); v != Version {
		return nil, fmt.Errorf("%w: version %d, want %d", ErrVersion, v, Version)
	}
	n, err := d.uint32()
	if err != nil {
		return nil, err
	}
	if n > maxHeader {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrCorrupt, n)
	}
	hj := make([]byte, n)
	if err := d.read(hj); err != nil {
		return nil, err
	}
	var h header
	if err := json.Unmarshal(hj, &h); err != nil {
		return nil, fmt.Errorf("%w: header: %w", ErrCorrupt, err)
	}
	return &h, nil
}

// readBuffer is the size of the decoder's buffer, which reads the header
// (and the objects' first bytes, as it reads ahead).
const readBuffer = 64 << 10
