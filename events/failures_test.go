package events_test

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/watchtest"
)

// decision 31, decision 20: writes the server refuses for want of a grant
// (403 on events) are said at once at Error with the grant to make, the
// ones after counted at Debug, and the first write that works again at
// Info with the right count: events are best effort, but a program that
// may not write them hears so.
func TestRefusedEventWritesAreSaidOnceWithTheGrant(t *testing.T) {
	log := &testlog.Log{}
	f := newFixture(t, func(r *events.Recorder) { r.Logger = slog.New(log) })
	f.s.FailNext(watchtest.Failure{Code: http.StatusForbidden, Verbs: []string{"create"}, Times: 3})
	for _, name := range []string{"a", "b", "c"} {
		f.rec.Event(f.object(name), events.Normal, "Labelled", "Label", "")
	}
	f.processed("m1") // written after the three, which were refused
	assert.EqualValues(t, 3, f.rec.Dropped())

	var above []string
	require.Eventually(t, func() bool { above = log.Above(); return len(above) >= 2 }, wait, time.Millisecond,
		"the recovery said once the marker is written")
	require.Len(t, above, 2, "%q", above)
	assert.Contains(t, above[0], "ERROR events: event not recorded; events are dropped while this lasts namespace=ns")
	assert.Contains(t, above[0], "hint=check RBAC: grant create and patch on events.events.k8s.io in namespace ns to this program's user or service account (a Role and a RoleBinding)")
	assert.Contains(t, above[1], "INFO events: events recorded again after 3 failures")
	assert.Len(t, log.Lines(slog.LevelDebug), 4, "the two repeats at Debug: %q", log.All())
}
