package apiserve_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/apiserve"
)

// Decision 40: an answer longer than 128 KiB is gzipped for a client whose
// Accept-Encoding names gzip; a shorter one, or one for a client that did
// not ask, goes as written, however it is cut into writes.
func TestCompressPastTheRealThreshold(t *testing.T) {
	for _, tc := range []struct {
		name     string
		encoding string
		size     int
		writes   int
		gzipped  bool
	}{
		{name: "at the threshold", encoding: "gzip", size: apiserve.GzipThreshold, writes: 1},
		{name: "one byte past", encoding: "gzip", size: apiserve.GzipThreshold + 1, writes: 1, gzipped: true},
		{name: "past, in small writes", encoding: "gzip, deflate", size: 3 * apiserve.GzipThreshold, writes: 1000, gzipped: true},
		{name: "small, in small writes", encoding: "deflate, gzip", size: 1000, writes: 10},
		{name: "not asked", encoding: "", size: 2 * apiserve.GzipThreshold, writes: 1},
		{name: "gzip with a quality is not read as gzip", encoding: "gzip;q=1.0", size: 2 * apiserve.GzipThreshold, writes: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := bytes.Repeat([]byte("x"), tc.size)
			req := httptest.NewRequest(http.MethodGet, "/api/v1/pods", nil)
			if tc.encoding != "" {
				req.Header.Set("Accept-Encoding", tc.encoding)
			}
			rec := httptest.NewRecorder()
			w, done := apiserve.Compress(rec, req)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			step := (tc.size + tc.writes - 1) / tc.writes
			for b := body; len(b) > 0; {
				n := min(step, len(b))
				_, err := w.Write(b[:n])
				require.NoError(t, err)
				b = b[n:]
			}
			done()
			require.Equal(t, http.StatusCreated, rec.Code)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			got := rec.Body.Bytes()
			if tc.gzipped {
				require.Equal(t, "gzip", rec.Header().Get("Content-Encoding"))
				require.Equal(t, "Accept-Encoding", rec.Header().Get("Vary"))
				zr, err := gzip.NewReader(bytes.NewReader(got))
				require.NoError(t, err)
				got, err = io.ReadAll(zr)
				require.NoError(t, err)
			} else {
				require.Empty(t, rec.Header().Get("Content-Encoding"))
			}
			require.Equal(t, body, got)
		})
	}
}
