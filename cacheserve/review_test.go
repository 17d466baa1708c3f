package cacheserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/require"
)

// sarServer is an API server whose TokenReview accepts any token as
// alice and whose SubjectAccessReview answers with deny (or, while fail
// is set, that status code), recording each review's spec.
type sarServer struct {
	*httptest.Server
	fail  atomic.Int64
	allow atomic.Bool
	specs chan accessSpec
}

func newSARServer(t *testing.T) (*sarServer, *Reviewer) {
	t.Helper()
	s := &sarServer{specs: make(chan accessSpec, 1)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Spec accessSpec }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var status map[string]any
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			status = map[string]any{"authenticated": true, "user": map[string]any{"username": "alice"}}
		default:
			if code := s.fail.Load(); code != 0 {
				w.WriteHeader(int(code))
				_, _ = fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":%d}`, code)
				return
			}
			select {
			case s.specs <- in.Spec:
			default:
			}
			reason := "RBAC: no rule allows it"
			if in.Spec.NonResourceAttributes != nil {
				reason = "" // a denial without a reason
			}
			status = map[string]any{"allowed": s.allow.Load(), "reason": reason}
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": status})
	}))
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	client, err := httpwatch.NewClient(nodeConfig(s.URL))
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	client.RetryMax = 0
	return s, &Reviewer{Client: client, Clock: fakeClock()}
}

func request(t *testing.T, method, target string) *http.Request {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("Authorization", "Bearer alice-token")
	return req
}

// TestReviewerAsksAsKubeAPIServerNamesIt is decision 45: the
// SubjectAccessReview names a request's verb as kube-apiserver's
// authorizer does (list and watch for a collection, deletecollection, the
// method's own name for one it does not know, a non-resource path's
// method), and the 403 is worded as kube-apiserver's, with the review's
// reason when it gave one.
func TestReviewerAsksAsKubeAPIServerNamesIt(t *testing.T) {
	s, rv := newSARServer(t)
	for _, tc := range []struct {
		method, target string
		verb, ns, name string
		msg            string
	}{
		{"GET", "/api/v1/pods", "list", "", "",
			`pods is forbidden: User "alice" cannot list resource "pods" in API group "" at the cluster scope: RBAC: no rule allows it`},
		{"GET", "/api/v1/pods?watch=true", "watch", "", "", ""},
		{"GET", "/api/v1/namespaces/shop/pods?watch=1", "watch", "shop", "",
			`pods is forbidden: User "alice" cannot watch resource "pods" in API group "" in the namespace "shop": RBAC: no rule allows it`},
		{"GET", "/api/v1/namespaces/shop/pods?watch=false", "list", "shop", "", ""},
		{"GET", "/api/v1/namespaces/shop/pods/web-1", "get", "shop", "web-1", ""},
		{"HEAD", "/api/v1/namespaces/shop/pods/web-2", "get", "shop", "web-2", ""},
		{"DELETE", "/api/v1/namespaces/shop/pods", "deletecollection", "shop", "", ""},
		{"DELETE", "/api/v1/namespaces/shop/pods/web-1", "delete", "shop", "web-1", ""},
		{"POST", "/apis/apps/v1/namespaces/shop/deployments", "create", "shop", "",
			`deployments.apps is forbidden: User "alice" cannot create resource "deployments" in API group "apps" in the namespace "shop": RBAC: no rule allows it`},
		{"PUT", "/api/v1/namespaces/shop/pods/web-1", "update", "shop", "web-1", ""},
		{"PATCH", "/api/v1/namespaces/shop/pods/web-1", "patch", "shop", "web-1", ""},
		{"OPTIONS", "/api/v1/pods", "options", "", "", ""},
		{"GET", "/version", "get", "", "", `forbidden: User "alice" cannot get path "/version"`},
	} {
		err := rv.Authorize(request(t, tc.method, tc.target))
		var e *apiserve.Error
		require.True(t, errors.As(err, &e), "%s %s: %v", tc.method, tc.target, err)
		require.Equal(t, http.StatusForbidden, e.Code)
		if tc.msg != "" {
			require.Equal(t, tc.msg, e.Message)
		}
		var spec accessSpec
		select {
		case spec = <-s.specs:
		case <-time.After(wait):
			t.Fatalf("%s %s: no review", tc.method, tc.target)
		}
		if a := spec.ResourceAttributes; a != nil {
			require.Equal(t, []string{tc.verb, tc.ns, tc.name}, []string{a.Verb, a.Namespace, a.Name}, "%s %s", tc.method, tc.target)
		} else {
			require.NotNil(t, spec.NonResourceAttributes, "%s %s: %+v", tc.method, tc.target, spec)
			require.Equal(t, []string{tc.verb, tc.target}, []string{spec.NonResourceAttributes.Verb, spec.NonResourceAttributes.Path})
		}
	}
}

// TestReviewerServerErrorsAreOutages is decision 45: a review answered
// with a 5xx or a 429 is an outage (a decision made before is used, past
// its TTL), any other refusal is not.
func TestReviewerServerErrorsAreOutages(t *testing.T) {
	for _, tc := range []struct {
		code    int
		allowed bool
	}{
		{http.StatusInternalServerError, true},
		{http.StatusServiceUnavailable, true},
		{http.StatusTooManyRequests, true},
		{http.StatusForbidden, false},
		{http.StatusBadRequest, false},
	} {
		t.Run(http.StatusText(tc.code), func(t *testing.T) {
			s, rv := newSARServer(t)
			s.allow.Store(true)
			require.NoError(t, rv.Authorize(request(t, "GET", "/api/v1/pods")))
			<-s.specs
			s.fail.Store(int64(tc.code))
			rv.Clock.(interface{ Step(time.Duration) }).Step(DefaultAllowedTTL)
			err := rv.Authorize(request(t, "GET", "/api/v1/pods"))
			if tc.allowed {
				require.NoError(t, err)
				require.Equal(t, int64(1), rv.Stats().Offline)
			} else {
				require.ErrorContains(t, err, "refused to review")
			}
		})
	}
}
