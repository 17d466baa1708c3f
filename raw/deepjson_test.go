package raw

import (
	"strings"
	"testing"

	"github.com/listwatch/listwatch/testkit/stackuse"
	"github.com/stretchr/testify/require"
)

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

	grown := stackuse.Growth(func() {
		_, err = NewObject([]byte(strings.Repeat("[", 1<<20)))
	})
	require.Error(t, err)
	require.Less(t, grown, uint64(1<<20), "stack grew by %d bytes", grown)
}
