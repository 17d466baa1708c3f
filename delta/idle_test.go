package delta_test

import (
	"testing"

	"github.com/listwatch/listwatch/delta"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decision 32: Idle is true only when every write has been popped and
// processed: not while a key is queued, nor while a Pop's process runs
// (the key is out of the queue, not yet applied), as the warm start's
// snapshot needs.
func TestIdle(t *testing.T) {
	f := delta.NewFIFO(key)
	assert.True(t, f.Idle(), "empty")
	require.NoError(t, f.Add(o("a", "1")))
	assert.False(t, f.Idle(), "queued")
	_, err := f.Pop(func(delta.Deltas[*obj], bool) error {
		assert.Equal(t, 0, f.Len())
		assert.False(t, f.Idle(), "popped, being processed")
		return nil
	})
	require.NoError(t, err)
	assert.True(t, f.Idle(), "processed")
}
