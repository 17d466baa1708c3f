package kubeconfig

import (
	"testing"

	"go.uber.org/goleak"
)

// Exec plugin runs start goroutines (and processes); every test waits for them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
