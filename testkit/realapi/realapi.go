// Package realapi gives integration tests the kube-apiserver that
// scripts/realapi.sh starts:
//
//	eval "$(scripts/realapi.sh start)"   # exports REALAPI_URL, REALAPI_TOKEN, REALAPI_CA, ...
//	go test ./e2e/
//
// Without those variables a test that needs them is skipped, unless
// REALAPI_REQUIRED is set (.ci/run sets it once the server is up): then it
// fails, so the integration suite can never pass by skipping.
package realapi

import (
	"os"
	"testing"
)

// Env returns the variable name, one of those scripts/realapi.sh exports,
// or skips (or fails, see the package doc) the test when it is not set.
func Env(t testing.TB, name string) string {
	t.Helper()
	if v := os.Getenv(name); v != "" {
		return v
	}
	msg := name + ` not set: start a kube-apiserver with eval "$(scripts/realapi.sh start)" from the repository root`
	if os.Getenv("REALAPI_REQUIRED") != "" {
		t.Fatal(msg + " (REALAPI_REQUIRED is set: the integration tests must run, not skip)")
	}
	t.Skip(msg)
	return ""
}
