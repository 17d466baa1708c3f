package httpwatch

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/require"
)

// A Delete's answer is read up to MaxFrameSize, as Get's is: an endless
// 200 body ends the call with ErrFrameTooLarge, not when the context (or
// here the client's 10 s timeout) does (decision 28).
// DeleteCollection stops reading there too.
func TestDeleteAnswerIsBounded(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		chunk := []byte(`{"kind":"Status","message":"` + strings.Repeat("x", 32<<10))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	c := newTestClient(t, srv.URL)
	c.MaxFrameSize = 1 << 20
	cms := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"})
	err := cms.Delete(context.Background(), "cfg")
	require.ErrorIs(t, err, raw.ErrFrameTooLarge)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.Equal(t, http.MethodDelete, de.Verb)

	// DeleteCollection's answer, the deleted objects, may be long and is
	// not needed: reading it stops at the bound, and the delete succeeded.
	require.NoError(t, cms.DeleteCollection(context.Background(), ListOptions{}))
}

// TestAnswersUpToMaxFrameSize: an answer of exactly MaxFrameSize bytes is
// read whole, by Get and Delete alike, and one byte more is
// ErrFrameTooLarge (decision 28); a MaxFrameSize of 0 is the default.
func TestAnswersUpToMaxFrameSize(t *testing.T) {
	const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cfg","namespace":"ns1","resourceVersion":"5"}}`
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	})
	for _, c := range []struct {
		max     int
		tooLong bool
	}{{len(body), false}, {len(body) - 1, true}, {0, false}} {
		cl := newTestClient(t, srv.URL)
		cl.MaxFrameSize = c.max
		cms := cl.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns1"})
		o, err := cms.Get(context.Background(), "cfg")
		derr := cms.Delete(context.Background(), "cfg")
		if c.tooLong {
			require.ErrorIs(t, err, raw.ErrFrameTooLarge, "Get, MaxFrameSize %d", c.max)
			require.ErrorIs(t, derr, raw.ErrFrameTooLarge, "Delete, MaxFrameSize %d", c.max)
			continue
		}
		require.NoError(t, err, "Get, MaxFrameSize %d", c.max)
		require.Equal(t, "5", o.ResourceVersion())
		require.NoError(t, derr, "Delete, MaxFrameSize %d", c.max)
	}
}
