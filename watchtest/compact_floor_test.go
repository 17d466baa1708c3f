package watchtest_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// Compacting at a resourceVersion forgets only what is at or below it, as
// etcd's compaction does: an exact list above the floor still sees every
// object as it was then, an object's versions newer than the floor all
// survive, and a watch from the floor replays every later change.
func TestCompactKeepsWhatIsNewerThanTheFloor(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	floor := s.ResourceVersion()
	c := mustCreate(t, s, watchtest.Pods, podJSON("ns", "c", nil))
	d := mustCreate(t, s, watchtest.Pods, podJSON("ns", "d", nil))
	up, err := s.Update(watchtest.Pods, podJSON("ns", "c", map[string]string{"v": "2"}))
	require.NoError(t, err)
	require.NoError(t, s.Compact(floor))

	items := list(t, s, listPath("ns", url.Values{"resourceVersion": {rvOf(d)}, "resourceVersionMatch": {"Exact"}})).Get("items").Array()
	assert.Equal(t, []string{"a", "b", "c", "d"}, names(items))
	if assert.Len(t, items, 4) {
		assert.Equal(t, rvOf(c), rvOf(items[2]), "c as it was before its update, which is newer than the floor too")
	}

	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {floor}}))
	got := w.nextN(3)
	assert.Equal(t, []string{
		"ADDED c " + rvOf(c),
		"ADDED d " + rvOf(d),
		"MODIFIED c " + rvOf(gjson.ParseBytes(up.Raw())),
	}, []string{got[0].String(), got[1].String(), got[2].String()})
}
