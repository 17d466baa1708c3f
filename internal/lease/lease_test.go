package lease

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// A lease of this name made by someone else (its labels differ) is not
// taken: two users whose names compose alike would otherwise fight over it.
func TestTryRefusesAForeignLease(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	_, err := s.Create(watchtest.Leases, `{"metadata":{"name":"g-a-b","namespace":"ns","labels":{"group":"g-a"}},"spec":{}}`)
	require.NoError(t, err)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	l := &Lease{
		Client: c.Resource(watchtest.Leases).Namespace("ns"), Name: "g-a-b", Identity: "a-b",
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

// testLease is a Lease on a fresh watchtest server, with a fake clock.
func testLease(t *testing.T, name string, d time.Duration) (*Lease, *watchtest.Server) {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return &Lease{
		Client: c.Resource(watchtest.Leases).Namespace("ns"), Name: name, Identity: "a",
		Duration: d, Clock: clock.NewFake(time.Unix(0, 0)), Labels: map[string]string{"group": "g"},
	}, s
}

// A lease of the member's name that has no labels at all was not made by
// it: it is foreign like one whose labels differ, not free for the taking.
// Decision 18.
func TestTryRefusesALeaseWithoutLabels(t *testing.T) {
	l, s := testLease(t, "g-a", time.Second)
	_, err := s.Create(watchtest.Leases, `{"metadata":{"name":"g-a","namespace":"ns"},"spec":{}}`)
	require.NoError(t, err)
	_, err = l.Try(context.Background())
	require.ErrorIs(t, err, ErrForeign)
	var re *RequestError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, RequestError{Verb: "get", Lease: "g-a", Namespace: "ns", Err: re.Err}, *re)
	assert.Empty(t, l.Holder())
}

// The API has whole seconds only: a duration is written rounded up, so
// the others never wait less than the holder counts on, and never 0 (a
// lease that expires as it is written). Decision 16.
func TestDurationIsWrittenInWholeSecondsRoundedUp(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		time.Nanosecond: 1, 300 * time.Millisecond: 1, time.Second: 1,
		1500 * time.Millisecond: 2, 15 * time.Second: 15, 15*time.Second + time.Nanosecond: 16,
	} {
		l, s := testLease(t, "g-a", d)
		_, err := l.Try(context.Background())
		require.NoError(t, err)
		o, err := s.Get(watchtest.Leases, "ns", "g-a")
		require.NoError(t, err)
		assert.Equal(t, want, o.Get("spec.leaseDurationSeconds").Int(), "%v", d)
	}
}
