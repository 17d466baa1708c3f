//go:build !unix

package apitest

import (
	"net"
	"testing"
)

// Refused returns the URL of a local port where connections are refused:
// one a listener just gave up, which another test may yet be given.
func Refused(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return url
}
