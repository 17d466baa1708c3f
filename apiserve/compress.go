package apiserve

import (
	"compress/gzip"
	"net/http"
	"strings"
)

// GzipThreshold is the size past which the real server compresses an
// answer for a client that accepts gzip; smaller ones go as they are.
const GzipThreshold = 128 << 10

// Compress returns the writer to answer a request with, and a function to
// call once the answer is written. When the request accepts gzip (an
// Accept-Encoding token that is exactly "gzip", as the real server reads
// it), an answer longer than GzipThreshold is sent with Content-Encoding
// gzip and Vary Accept-Encoding; anything shorter is sent as written.
// Watches are streams and are never compressed: do not use it for them.
func Compress(w http.ResponseWriter, req *http.Request) (http.ResponseWriter, func()) {
	if !acceptsGzip(req.Header.Get("Accept-Encoding")) {
		return w, func() {}
	}
	g := &gzipWriter{w: w, code: http.StatusOK}
	return g, g.finish
}

func acceptsGzip(h string) bool {
	for tok := range strings.SplitSeq(h, ",") {
		if strings.TrimSpace(tok) == "gzip" {
			return true
		}
	}
	return false
}

// gzipWriter holds an answer back until it knows whether the answer is
// long enough to compress.
type gzipWriter struct {
	w       http.ResponseWriter
	code    int
	buf     []byte
	gz      *gzip.Writer
	started bool
}

func (g *gzipWriter) Header() http.Header { return g.w.Header() }

func (g *gzipWriter) WriteHeader(code int) { g.code = code }

func (g *gzipWriter) Write(p []byte) (int, error) {
	if g.gz != nil {
		return g.gz.Write(p)
	}
	g.buf = append(g.buf, p...)
	if len(g.buf) <= GzipThreshold {
		return len(p), nil
	}
	h := g.w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Add("Vary", "Accept-Encoding")
	h.Del("Content-Length")
	g.w.WriteHeader(g.code)
	g.started = true
	g.gz = gzip.NewWriter(g.w)
	_, err := g.gz.Write(g.buf)
	g.buf = nil
	return len(p), err
}

func (g *gzipWriter) finish() {
	if g.gz != nil {
		_ = g.gz.Close()
		return
	}
	if !g.started {
		g.started = true
		g.w.WriteHeader(g.code)
		_, _ = g.w.Write(g.buf)
		g.buf = nil
	}
}
