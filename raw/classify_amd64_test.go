//go:build !purego

package raw

import "testing"

// TestClassifyWithoutCLMUL: on a CPU without PCLMULQDQ classifyJSON's
// quoted comes from shifts, and is the same.
func TestClassifyWithoutCLMUL(t *testing.T) {
	if !useCLMUL {
		t.Log("no PCLMULQDQ on this CPU: TestClassify already checked the shifts")
	}
	defer func(was bool) { useCLMUL = was }(useCLMUL)
	useCLMUL = false
	TestClassify(t)
}
