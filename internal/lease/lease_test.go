package lease

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/httpwatch/watchtest"
	"github.com/listwatch/listwatch/kubeconfig"
)

// A lease of this name made by someone else (its labels differ) is not
// taken: two users whose names compose alike would otherwise fight over it.
func TestTryRefusesAForeignLease(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	s.AddResource(watchtest.Leases)
	_, err := s.Create(watchtest.Leases, `{"metadata":{"name":"g-a-b","namespace":"ns","labels":{"group":"g-a"}},"spec":{}}`)
	require.NoError(t, err)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	l := &Lease{
		Client: c.Resource(watchtest.Leases.In("ns")), Name: "g-a-b", Identity: "a-b",
		Duration: time.Second, Clock: clock.NewFake(time.Unix(0, 0)), Labels: map[string]string{"group": "g"},
	}
	_, err = l.Try(context.Background())
	assert.ErrorIs(t, err, ErrForeign)
	assert.Empty(t, l.Holder(), "nothing was taken")

	l.Labels = map[string]string{"group": "g-a"}
	_, err = l.Try(context.Background())
	require.NoError(t, err, "its own")
	assert.Equal(t, "a-b", l.Holder())
}
