package leader

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test stops its electors; a goroutine left behind fails the run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
