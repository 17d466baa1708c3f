// Package apitest has the HTTP servers the tests of several packages share:
// one that records every request before answering it, one that accepts
// connections and never answers, and a port that refuses them.
//
//	srv := apitest.Serve(t, handler)
//	... srv.URL ...
//	reqs := srv.Requests()
package apitest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Server is an httptest.Server that remembers the requests it saw.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
}

// Serve starts a Server answering every request with h; it is closed when
// the test ends.
func Serve(t testing.TB, h http.HandlerFunc) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Clone(r.Context()))
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests seen so far, oldest first.
func (s *Server) Requests() []*http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*http.Request(nil), s.requests...)
}

// Silent starts a listener that accepts connections and never answers on
// them, and returns its URL; it is closed when the test ends.
func Silent(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}
