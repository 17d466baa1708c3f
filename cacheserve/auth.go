package cacheserve

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
)

// Authorizer decides whether a request may be served (decision 45): nil
// allows it; an error denies it. An *apiserve.Error is answered as it is
// (a 401, or a 503 while nothing can decide); any other error is a 403
// that carries its text. Server.Authorize takes an Authorizer's method
// value:
//
//	srv.Authorize = (&cacheserve.Reviewer{Client: upstream}).Authorize
type Authorizer interface {
	Authorize(req *http.Request) error
}

// Default lifetimes of a Reviewer's decisions: kube-apiserver's own for
// its webhook token authenticator (--authentication-token-webhook-cache-ttl)
// and authorizer (--authorization-webhook-cache-authorized-ttl and
// -unauthorized-ttl), checked against kube-apiserver 1.37.2's --help; a
// token refused is kept as long as a request denied.
const (
	DefaultTokenTTL   = 2 * time.Minute
	DefaultAllowedTTL = 5 * time.Minute
	DefaultDeniedTTL  = 30 * time.Second
	// DefaultMaxStale is how old a decision may be and still be used
	// while the API server cannot be reached: long enough for an
	// informer's relist or new watch during an outage of ten minutes.
	DefaultMaxStale = 15 * time.Minute
	// DefaultReviewTimeout bounds one review, retries included.
	DefaultReviewTimeout = 5 * time.Second
)

// maxDecisions bounds each of a Reviewer's caches: past it, expired
// decisions are dropped, then the whole cache if none had.
const maxDecisions = 10_000

// Reviewer is the Authorizer that asks the API server: the bearer token
// by a TokenReview (authentication.k8s.io/v1), then the request by a
// SubjectAccessReview (authorization.k8s.io/v1) for the user the token
// is, each decision cached for its TTL (decision 45). A request without a
// bearer token is a 401: default deny. Nothing is decided by a header a
// client chooses but its token; User-Agent never counts.
//
// While the API server cannot be reached (a review fails without an
// answer, or with a 5xx or 429), a decision made before the outage is
// used while it is younger than MaxStale, past its TTL; an older one, or
// none, denies with a 503 and Retry-After. Tokens are kept only as keyed
// hashes, and are never logged nor said in an error.
//
// The reviews are made with Client, the node cache's own client: its
// identity needs create on tokenreviews and subjectaccessreviews (the
// system:auth-delegator ClusterRole grants both). Set the fields before
// the first request; the zero value of each is its default.
type Reviewer struct {
	// Client makes the reviews, with the node cache's credentials.
	Client *httpwatch.Client
	// TokenTTL, AllowedTTL and DeniedTTL are how long a token's review,
	// an allowed request and a denied one (or a refused token) are used
	// before they are asked again; the Default… constants when 0.
	TokenTTL, AllowedTTL, DeniedTTL time.Duration
	// MaxStale bounds the age of a decision used while the API server
	// cannot be reached; DefaultMaxStale when 0.
	MaxStale time.Duration
	// Timeout bounds each review; DefaultReviewTimeout when 0.
	Timeout time.Duration
	// Clock tells the age of decisions.
	Clock clock.Clock
	// Logger hears, at Error and once until one succeeds, of reviews the
	// API server refuses to make (the node cache's identity may not).
	Logger *slog.Logger

	once      sync.Once
	secret    [32]byte // keys the token hashes
	mu        sync.Mutex
	tokens    map[[32]byte]decision
	decisions map[string]decision
	calls     map[any]*call
	refused   atomic.Bool // a review was refused; said once
	stats     reviewStats
}

// decision is one review's outcome and when it was made.
type decision struct {
	ok     bool
	user   userInfo // a token's
	reason string
	at     time.Time
}

type userInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

type reviewStats struct {
	reviews, cached, offline, denied, coalesced atomic.Int64
}

// ReviewerStats counts a Reviewer's decisions.
type ReviewerStats struct {
	Reviews int64 // reviews the API server answered
	Cached  int64 // decisions taken from the cache within their TTL
	Offline int64 // decisions taken from the cache past their TTL, while the API server could not be reached
	Denied  int64 // requests denied, for any reason
	// Coalesced counts the requests that waited for a review another
	// request had asked for.
	Coalesced int64
}

// Stats returns the Reviewer's counters.
func (r *Reviewer) Stats() ReviewerStats {
	return ReviewerStats{Reviews: r.stats.reviews.Load(), Cached: r.stats.cached.Load(),
		Offline: r.stats.offline.Load(), Denied: r.stats.denied.Load(), Coalesced: r.stats.coalesced.Load()}
}

func (r *Reviewer) init() {
	r.once.Do(func() {
		if _, err := rand.Read(r.secret[:]); err != nil {
			panic("cacheserve: no randomness for the token hashes: " + err.Error())
		}
		r.tokens = map[[32]byte]decision{}
		r.decisions = map[string]decision{}
		r.calls = map[any]*call{}
	})
}

func (r *Reviewer) clock() clock.Clock {
	if r.Clock == nil {
		return clock.Real
	}
	return r.Clock
}

// Authorize decides req (Authorizer).
func (r *Reviewer) Authorize(req *http.Request) error {
	r.init()
	err := r.authorize(req)
	if err != nil {
		r.stats.denied.Add(1)
	}
	return err
}

func (r *Reviewer) authorize(req *http.Request) error {
	tok, ok := bearer(req)
	if !ok {
		return unauthorized("this listwatch cache serves a request only with a bearer token it can review (or through its unix socket)")
	}
	user, err := r.authenticate(req.Context(), tok)
	if err != nil {
		return err
	}
	spec := newAccessSpec(req, user)
	key, _ := json.Marshal(spec) // strings, slices and maps of strings
	d, err := decide(req.Context(), r, r.decisions, string(key), orDefault(r.AllowedTTL, DefaultAllowedTTL), func(ctx context.Context) (decision, error) {
		return r.reviewAccess(ctx, spec)
	})
	if err != nil {
		return err
	}
	if !d.ok {
		return forbiddenFor(user.Username, spec, d.reason)
	}
	return nil
}

// authenticate reviews a token, or takes its cached review.
func (r *Reviewer) authenticate(ctx context.Context, tok string) (userInfo, error) {
	mac := hmac.New(sha256.New, r.secret[:])
	mac.Write([]byte(tok))
	var k [32]byte
	copy(k[:], mac.Sum(nil))
	d, err := decide(ctx, r, r.tokens, k, orDefault(r.TokenTTL, DefaultTokenTTL), func(ctx context.Context) (decision, error) {
		return r.reviewToken(ctx, tok)
	})
	if err != nil {
		return userInfo{}, err
	}
	if !d.ok {
		return userInfo{}, unauthorized("the bearer token was not accepted by the API server's TokenReview")
	}
	return d.user, nil
}

// decide takes a cached decision while fresh (for okTTL if it allowed,
// DeniedTTL if not), or asks, or, when the API server cannot be reached,
// takes a cached one younger than MaxStale. Requests that need a review
// under way wait for it rather than each asking: 50 informers relisting
// at once with one token make one review, not 50.
func decide[K comparable](ctx context.Context, r *Reviewer, cache map[K]decision, k K, okTTL time.Duration,
	ask func(context.Context) (decision, error)) (decision, error) {
	r.mu.Lock()
	d, ok := cache[k]
	ttl := okTTL
	if !d.ok {
		ttl = orDefault(r.DeniedTTL, DefaultDeniedTTL)
	}
	if ok && r.clock().Since(d.at) < ttl {
		r.mu.Unlock()
		r.stats.cached.Add(1)
		return d, nil
	}
	c, waiting := r.calls[k]
	if !waiting {
		c = &call{done: make(chan struct{})}
		r.calls[k] = c
	}
	r.mu.Unlock()
	if waiting {
		r.stats.coalesced.Add(1)
		select {
		case <-c.done:
		case <-ctx.Done():
			return decision{}, fmt.Errorf("cannot authorize: %w", ctx.Err())
		}
	} else {
		// The review is not the asking request's: its client leaving
		// does not fail the others (Timeout bounds it).
		c.d, c.err = r.review(context.WithoutCancel(ctx), ask)
		r.mu.Lock()
		if c.err == nil {
			putBounded(cache, k, c.d, r.expired)
		}
		delete(r.calls, k)
		r.mu.Unlock()
		close(c.done)
	}
	if c.err == nil {
		return c.d, nil
	}
	return r.offline(ok, d, c.err)
}

// call is a review under way.
type call struct {
	done chan struct{}
	d    decision
	err  error
}

// offline is the decision taken when a review failed: a cached one
// younger than MaxStale if the API server could not be reached, else a
// denial that says why.
func (r *Reviewer) offline(cached bool, d decision, err error) (decision, error) {
	var down *unreachableError
	if !errors.As(err, &down) {
		return decision{}, err
	}
	maxStale := orDefault(r.MaxStale, DefaultMaxStale)
	if cached && r.clock().Since(d.at) < maxStale {
		r.stats.offline.Add(1)
		return d, nil
	}
	return decision{}, unreachable(fmt.Sprintf("cannot authorize: the API server cannot be reached to review the request (%v), "+
		"and no decision on it younger than %v was made before", down.err, maxStale))
}

// expired reports whether d may be dropped: too old for any use.
func (r *Reviewer) expired(d decision) bool {
	return r.clock().Since(d.at) >= max(orDefault(r.MaxStale, DefaultMaxStale), orDefault(r.AllowedTTL, DefaultAllowedTTL))
}

func putBounded[K comparable](m map[K]decision, k K, d decision, expired func(decision) bool) {
	if len(m) >= maxDecisions {
		for k, old := range m {
			if expired(old) {
				delete(m, k)
			}
		}
		if len(m) >= maxDecisions {
			clear(m)
		}
	}
	m[k] = d
}
