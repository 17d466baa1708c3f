package processor

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Conformance 68: RemoveHandler removes only its own processor's handlers.
// The processor is not running, so the initial add waits in the buffer for
// as long as the handler is registered.
func TestRemoveHandlerIgnoresForeignRegistration(t *testing.T) {
	p := New[string]()
	reg, err := p.AddHandler(HandlerFuncs[string]{}, 0, []string{"x"})
	require.NoError(t, err)
	require.Equal(t, 1, reg.Pending())

	New[string]().RemoveHandler(reg)
	New[int]().RemoveHandler(reg)
	p.RemoveHandler(nil)
	assert.Equal(t, 1, reg.Pending(), "other processors leave it registered")

	p.RemoveHandler(reg)
	assert.Equal(t, 0, reg.Pending(), "its own processor removes it")
	p.RemoveHandler(reg) // again: nothing
}
