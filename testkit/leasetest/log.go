// Package leasetest helps the tests of the packages built on leases
// (leader, shard): a Cluster of processes on one fake clock and one
// watchtest server, each behind a Partition the test can cut, hang or
// refuse, and Errors that keeps what was reported (testkit/testlog keeps
// what was logged).
package leasetest

import "sync"

// Errors collects what reaches an OnError.
type Errors struct {
	mu   sync.Mutex
	errs []error
}

// Add is an OnError.
func (e *Errors) Add(err error) { e.mu.Lock(); e.errs = append(e.errs, err); e.mu.Unlock() }

// All returns the errors added so far.
func (e *Errors) All() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}
