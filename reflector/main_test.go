package reflector

import (
	"testing"

	"go.uber.org/goleak"
)

// Every watch reader a test starts must be gone when the tests end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
