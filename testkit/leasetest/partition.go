package leasetest

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Errors a Partition returns in the server's stead.
var (
	ErrPartitioned = errors.New("partitioned")
	ErrReplyLost   = errors.New("reply lost")
)

// Partition sits between one process and the server, as a network that
// fails would: it drops the process's requests, holds them, holds or
// loses the replies of its writes, or answers in the server's stead.
// Its zero value passes everything to Next.
type Partition struct {
	Next http.RoundTripper

	mu          sync.Mutex
	drop        bool
	hold        chan struct{} // non-nil: requests wait for it to close
	holdReplies bool          // with hold: only writes wait, once applied
	loseReplies bool
	refuse      func(r *http.Request) (code int, status string)
	held        int
}

// RoundTrip implements http.RoundTripper.
func (p *Partition) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	drop, hold, refuse := p.drop, p.hold, p.refuse
	late := hold != nil && p.holdReplies
	if late && r.Method == http.MethodGet {
		hold, late = nil, false
	}
	lose := p.loseReplies && r.Method == http.MethodPut
	p.mu.Unlock()
	if drop {
		return nil, ErrPartitioned
	}
	if resp := refused(refuse, r); resp != nil {
		return resp, nil
	}
	if hold != nil && !late {
		if err := p.wait(r, hold); err != nil {
			return nil, err
		}
	}
	resp, err := p.Next.RoundTrip(r)
	switch {
	case err != nil:
		return nil, err
	case lose:
		resp.Body.Close()
		return nil, ErrReplyLost
	case late:
		// Counted once written: a test that sees it held sees the write.
		if err := p.wait(r, hold); err != nil {
			resp.Body.Close()
			return nil, err
		}
	}
	return resp, nil
}

// wait holds r, counted as held, until hold is closed or r is cancelled.
func (p *Partition) wait(r *http.Request, hold <-chan struct{}) error {
	p.mu.Lock()
	p.held++
	p.mu.Unlock()
	defer func() { p.mu.Lock(); p.held--; p.mu.Unlock() }()
	select {
	case <-hold:
		return nil
	case <-r.Context().Done():
		return r.Context().Err()
	}
}

func refused(refuse func(*http.Request) (int, string), r *http.Request) *http.Response {
	if refuse == nil {
		return nil
	}
	code, status := refuse(r)
	if code == 0 {
		return nil
	}
	return &http.Response{
		StatusCode: code, Status: http.StatusText(code), Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(status)),
	}
}

// SetDrop makes every request fail at once (v true), as a cut cable would.
func (p *Partition) SetDrop(v bool) { p.mu.Lock(); p.drop = v; p.mu.Unlock() }

// SetLoseReplies makes updates (PUT) reach the server and their replies
// get lost (v true): the process sees ErrReplyLost for a write that took.
func (p *Partition) SetLoseReplies(v bool) { p.mu.Lock(); p.loseReplies = v; p.mu.Unlock() }

// SetRefuse makes the requests f returns a code for (0: none) get that
// code and the Status body in the server's stead, as RBAC would.
func (p *Partition) SetRefuse(f func(r *http.Request) (code int, status string)) {
	p.mu.Lock()
	p.refuse = f
	p.mu.Unlock()
}

// Hold makes every request wait until Release or its cancellation, as
// a hung server (or a process paused by SIGSTOP) would.
func (p *Partition) Hold() { p.setHold(false) }

// HoldReplies lets writes reach the server but holds their replies until
// Release or their cancellation, as a slow network would; reads pass.
func (p *Partition) HoldReplies() { p.setHold(true) }

func (p *Partition) setHold(replies bool) {
	p.mu.Lock()
	p.hold, p.holdReplies = make(chan struct{}), replies
	p.mu.Unlock()
}

// StopHolding lets new requests through; the held ones stay held until
// they are cancelled.
func (p *Partition) StopHolding() { p.mu.Lock(); p.hold = nil; p.mu.Unlock() }

// Release lets the held requests go and holds no more.
func (p *Partition) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold != nil {
		close(p.hold)
		p.hold = nil
	}
}

// Held is the number of requests (or replies) held now.
func (p *Partition) Held() int { p.mu.Lock(); defer p.mu.Unlock(); return p.held }

// Forbidden answers every request as RBAC does for a user without rights
// on leases in namespace ns; give it to SetRefuse or Cluster.Refuse.
func Forbidden(r *http.Request) (int, string) {
	return http.StatusForbidden, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"leases.coordination.k8s.io is forbidden: User \"nobody\" cannot %s resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ns\"",`+
		`"reason":"Forbidden","details":{"group":"coordination.k8s.io","kind":"leases"},"code":403}`, r.Method)
}
