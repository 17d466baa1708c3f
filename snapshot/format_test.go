package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/require"
)

func objects(t testing.TB, n int) []*raw.Object {
	t.Helper()
	out, err := makeObjects(n)
	require.NoError(t, err)
	return out
}

func makeObjects(n int) ([]*raw.Object, error) {
	out := make([]*raw.Object, n)
	for i := range out {
		o, err := raw.NewObject(fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns","resourceVersion":"%d"},"spec":{"nodeName":"n1"}}`, i, i+10))
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

var testKey = Key{Server: "https://user:secret@10.0.0.1:6443", Resource: "pods.v1", Namespace: "ns",
	LabelSelector: "app=a", FieldSelector: "spec.nodeName=n1", Shape: "metadataOnly=false"}

func encoded(t testing.TB, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	s := &Snapshot{Key: testKey, ResourceVersion: "42", Objects: objects(t, n), Written: time.Unix(1700000000, 0).UTC()}
	require.NoError(t, Encode(&b, s))
	return b.Bytes()
}

// Decision 32: a snapshot reads back exactly as written.
func TestRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 300} {
		want := &Snapshot{Key: testKey, ResourceVersion: "42", Objects: objects(t, n), Written: time.Unix(1700000000, 5).UTC()}
		var b bytes.Buffer
		require.NoError(t, Encode(&b, want))
		got, err := Decode(&b, testKey, Limits{})
		require.NoError(t, err)
		require.Equal(t, want.ResourceVersion, got.ResourceVersion)
		require.True(t, want.Written.Equal(got.Written))
		require.Len(t, got.Objects, n)
		for i := range want.Objects {
			require.Equal(t, want.Objects[i].String(), got.Objects[i].String())
		}
	}
}

// Decision 32: no credential and not even the server's address is written.
func TestServerIsOnlyHashed(t *testing.T) {
	b := encoded(t, 1)
	for _, s := range []string{"secret", "user", "10.0.0.1", "6443"} {
		require.NotContains(t, string(b), s)
	}
	// The user information is not part of the identity either.
	k := testKey
	k.Server = "https://10.0.0.1:6443"
	_, err := Decode(bytes.NewReader(b), k, Limits{})
	require.NoError(t, err)
}

// Decision 32: each field of the key must match.
func TestMismatchedKeyIsRefused(t *testing.T) {
	b := encoded(t, 3)
	for field, change := range map[string]func(*Key){
		"server":        func(k *Key) { k.Server = "https://10.0.0.2:6443" },
		"resource":      func(k *Key) { k.Resource = "configmaps.v1" },
		"namespace":     func(k *Key) { k.Namespace = "other" },
		"labelSelector": func(k *Key) { k.LabelSelector = "app=b" },
		"fieldSelector": func(k *Key) { k.FieldSelector = "" },
		"shape":         func(k *Key) { k.Shape = `projection=["status.phase"]` },
	} {
		t.Run(field, func(t *testing.T) {
			k := testKey
			change(&k)
			s, err := Decode(bytes.NewReader(b), k, Limits{})
			require.ErrorIs(t, err, ErrMismatch)
			require.ErrorContains(t, err, field)
			require.Nil(t, s)
		})
	}
}

// Decision 32: a byte changed anywhere, a file cut anywhere, bytes added,
// another version: every one is refused, none returns a snapshot.
func TestCorruptionIsRefused(t *testing.T) {
	b := encoded(t, 5)
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x20
		s, err := Decode(bytes.NewReader(bad), testKey, Limits{})
		require.Error(t, err, "byte %d flipped", i)
		require.Nil(t, s)
	}
	for n := range len(b) {
		s, err := Decode(bytes.NewReader(b[:n]), testKey, Limits{})
		require.ErrorIs(t, err, ErrCorrupt, "cut at %d", n)
		require.Nil(t, s)
	}
	_, err := Decode(bytes.NewReader(append(bytes.Clone(b), 0)), testKey, Limits{})
	require.ErrorIs(t, err, ErrCorrupt)

	v2 := bytes.Clone(b)
	binary.BigEndian.PutUint16(v2[len(magic):], Version+1)
	_, err = Decode(bytes.NewReader(v2), testKey, Limits{})
	require.ErrorIs(t, err, ErrVersion)
}

// Decision 32: the limits bound what a read takes in.
func TestLimits(t *testing.T) {
	b := encoded(t, 5)
	_, err := Decode(bytes.NewReader(b), testKey, Limits{MaxObject: 50})
	require.ErrorIs(t, err, ErrTooLarge)
	_, err = Decode(bytes.NewReader(b), testKey, Limits{MaxSize: int64(len(b) - 10)})
	require.True(t, errors.Is(err, ErrTooLarge) || errors.Is(err, ErrCorrupt), "%v", err)
	_, err = Decode(bytes.NewReader(b), testKey, Limits{MaxSize: int64(len(b))})
	require.NoError(t, err)
}

func FuzzDecode(f *testing.F) {
	f.Add(encoded(f, 0))
	f.Add(encoded(f, 2))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Decode(bytes.NewReader(b), testKey, Limits{MaxSize: 1 << 20})
		if err != nil {
			require.Nil(t, s)
			return
		}
		// What decodes encodes back to the same bytes.
		var again bytes.Buffer
		require.NoError(t, Encode(&again, s))
		s2, err := Decode(&again, testKey, Limits{})
		require.NoError(t, err)
		require.Equal(t, len(s.Objects), len(s2.Objects))
	})
}
