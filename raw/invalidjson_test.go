package raw

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/stretchr/testify/require"
)

// invalidObjects are objects whose brackets balance in number, so that a
// scanner that only counts them finds their end, but where one closes a
// container of the other kind, at any depth.
var invalidObjects = []string{
	`{"metadata":{"name":"a"},"spec":[}{]}`,
	`{"metadata":{"name":"a"},"status":{"a":1]}`,
	`{"spec":[}{],"metadata":{"name":"a"}}`,
	`{"metadata":{"name":"a","labels":{"x":"y"]}}`,
	`{"metadata":{"name":"a","managedFields":[{"a":{}}}}}`,
	`{"metadata":{"name":"a"}]`,
}

// TestWatchRejectsMismatchedBrackets: an event whose object closes a
// container with the other kind of bracket ends the stream with a
// *InputError, rather than handing the cache an object that Decode and Get
// cannot read; the reflector relists. The events before it are delivered
// (conformance 4). TestStreamRejectsInvalidJSON has the other ways to
// break the grammar.
func TestWatchRejectsMismatchedBrackets(t *testing.T) {
	for _, obj := range invalidObjects {
		require.False(t, json.Valid([]byte(obj)), obj)
		for _, typ := range []string{"ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"} {
			frame := `{"type":"` + string(typ) + `","object":` + obj + `}`
			body := podFrame + "\n" + frame + "\n" + podFrame + "\n"
			w := newTestWatcher(strings.NewReader(body), &Decoder{})
			ev, err := w.Next()
			require.NoError(t, err)
			require.Equal(t, "a", ev.Object.Name())

			ev, err = w.Next()
			require.Error(t, err, "%s accepted: %+v", frame, ev)
			var de *InputError
			require.ErrorAs(t, err, &de, frame)
			require.ErrorIs(t, err, errMismatch, frame)
			require.Equal(t, int64(len(podFrame)+1), de.Offset)
			require.Contains(t, err.Error(), "invalid input at byte", frame)
		}
	}
}

// TestListRejectsMismatchedBrackets: the same for an item of a list, with
// and without managedFields dropped.
func TestListRejectsMismatchedBrackets(t *testing.T) {
	for _, obj := range invalidObjects {
		for _, drop := range []bool{false, true} {
			body := `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"b"}},` + obj + `]}`
			_, err := (&Decoder{DropManagedFields: drop}).DecodeList(strings.NewReader(body), 0)
			var de *InputError
			require.ErrorAs(t, err, &de, body)
			require.ErrorIs(t, err, errMismatch, body)
			require.Contains(t, err.Error(), "items: item 1: ", body)
		}
	}
}

// TestDecodedObjectsAreValid: whatever the stream accepts is valid JSON, so
// Decode never fails on a cached object for its syntax.
func TestDecodedObjectsAreValid(t *testing.T) {
	for _, fx := range fixtures.Names() {
		body := fixtures.Load(t, fx).Body
		if !bytes.HasPrefix(body, []byte(`{"type"`)) {
			continue
		}
		w := newTestWatcher(bytes.NewReader(body), &Decoder{})
		for {
			ev, err := w.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, fx)
			if ev.Object != nil {
				var v map[string]any
				require.NoError(t, ev.Object.Decode(&v), fx)
			}
		}
	}
}
