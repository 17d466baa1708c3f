package raw

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// stackGrowth runs f on a new goroutine and returns how much stack memory
// was in use at its end beyond its start. The collector is off meanwhile,
// since it may shrink a stack that has grown.
func stackGrowth(f func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	grown := make(chan uint64)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		grown <- after.StackInuse - min(before.StackInuse, after.StackInuse)
	}()
	return <-grown
}

// TestNewObjectDeepNesting: NewObject checks its input without recursion
// too, and rejects nesting deeper than encoding/json decodes (Decode would
// fail on it later), while accepting the deepest it does decode.
func TestNewObjectDeepNesting(t *testing.T) {
	nested := func(depth int) []byte {
		return []byte(`{"metadata":{"name":"a"},"spec":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`)
	}
	o, err := NewObject(nested(maxDepth))
	require.NoError(t, err)
	var v map[string]any
	require.NoError(t, o.Decode(&v))

	_, err = NewObject(nested(maxDepth + 1))
	require.ErrorContains(t, err, "nested")

	grown := stackGrowth(func() {
		_, err = NewObject([]byte(strings.Repeat("[", 1<<20)))
	})
	require.Error(t, err)
	require.Less(t, grown, uint64(1<<20), "stack grew by %d bytes", grown)
}
