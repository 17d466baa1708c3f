package listwatch

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Conformance 68: RemoveEventHandler with a registration
// another informer returned does nothing; only the handler's own informer
// removes it. The handler is held in its first call, so what waits in its
// buffer shows whether it is still registered (removal drops the buffer).
func TestRemoveEventHandlerIgnoresForeignRegistration(t *testing.T) {
	src := newMemSource()
	owner, start := startInformer(t, src, 0)
	other := NewInformer(newMemSource(), 0)
	entered, release := make(chan struct{}), make(chan struct{})
	reg, err := owner.AddEventHandler(HandlerFuncs{AddFunc: func(o *Object, _ bool) {
		if o.Name() == "a" {
			close(entered)
			<-release
		}
	}})
	require.NoError(t, err)
	start()
	require.Eventually(t, owner.HasSynced, wait, time.Millisecond)
	src.put("ns", "a", "x")
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the handler never saw a")
	}
	src.put("ns", "b", "x")
	require.Eventually(t, func() bool { return reg.Pending() == 1 }, wait, time.Millisecond)

	other.RemoveEventHandler(reg)
	other.RemoveEventHandler(nil)
	assert.Equal(t, 1, reg.Pending(), "still registered with its informer")

	owner.RemoveEventHandler(reg)
	assert.Equal(t, 0, reg.Pending(), "removed by its own informer")
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, reg.Shutdown(ctx))
}
