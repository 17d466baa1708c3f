package lease

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops its members and workers; a goroutine left behind fails the run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
