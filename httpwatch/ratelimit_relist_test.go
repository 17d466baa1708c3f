package httpwatch

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// decision 34: the one unpaginated list made after a continue token
// expired is a new list, not a page of the old one, so it pays the
// client-side rate limiter as every list's first page does. With one token
// spent on the first page and the next one due in 100 s, it fails at once
// on the limiter and never reaches the server.
func TestFullListAfterExpiredContinuePaysTheRateLimiter(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		q := r.URL.Query()
		switch {
		case q.Get("continue") != "":
			w.WriteHeader(http.StatusGone)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"continue token too old"}`)
		case q.Get("limit") != "":
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"c1"},"items":[{"metadata":{"name":"p0","namespace":"ns"}}]}`)
		default:
			fmt.Fprint(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[]}`)
		}
	})
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL, QPS: 0.01, Burst: 1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	c.RetryMax = 0 // one attempt: the limiter's refusal is final at once
	_, err = c.Resource(pods).List(testwait.Context(t), ListOptions{})
	require.Error(t, err, "the full list went through without a token")
	assert.ErrorContains(t, err, "client rate limiter")
	var queries []string
	for _, r := range srv.Requests() {
		queries = append(queries, r.URL.RawQuery)
	}
	assert.Equal(t, []string{"limit=500", "continue=c1&limit=500"}, queries, "the page after the first is free; the full list is not")

	// The same list with tokens to spare makes the full list.
	c2, err := NewClient(&kubeconfig.Config{Host: srv.URL, QPS: 0.01, Burst: 2})
	require.NoError(t, err)
	defer c2.CloseIdleConnections()
	all, err := c2.Resource(pods).List(context.Background(), ListOptions{})
	require.NoError(t, err)
	assert.Equal(t, "10", all.ResourceVersion)
}
