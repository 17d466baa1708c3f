//go:build unix

package apitest

import (
	"fmt"
	"syscall"
	"testing"
)

// Refused returns the URL of a local port where every connection is
// refused, for as long as the test runs. Closing a listener to free a port
// is not enough: another test, in this process or in another package run
// in parallel, may be given the port and answer. The port is bound, so no
// one else gets it, but not listened on, so the kernel refuses.
func Refused(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("refused port: socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("refused port: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("refused port: getsockname: %v", err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
