package events

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// A bucket is forgotten once it has refilled, to the token: it then holds
// nothing a new one would not, and a recorder that has seen many objects
// keeps only the buckets of those recently busy.
func TestFullBucketsAreForgotten(t *testing.T) {
	r := &Recorder{Burst: 2, Refill: time.Minute}
	r.init()
	now := time.Unix(1_700_000_000, 0)
	assert.True(t, r.allow(ref{uid: "u"}, now))
	r.forgetFullBuckets(now.Add(time.Minute - time.Millisecond))
	assert.Len(t, r.limits, 1, "one token short of full: kept")
	r.forgetFullBuckets(now.Add(time.Minute))
	assert.Empty(t, r.limits, "exactly full: forgotten")
}
