// Package cause is listwatch's one table of failure causes. Each way a
// request to the server, or the work around it, can fail is one Row: the
// key that tells its occurrences apart, how bad it is (Class), what to do
// about it (Hint), which Stats.WatchEnds bucket a watch it ends is counted
// in (Ends), and whether a watch it refuses or ends is opened again from
// the same resourceVersion or the cache relists (Then). The reflector, the
// reconcile runner, leases, the events recorder and the warm start all
// read it (decision 20, decision 38); package faillog then says each
// failure as its row's class asks.
//
//	c := cause.Of(err)
//	if c.Class == cause.Permanent {
//		logger.Error("list failed", "err", err, "hint", c.HintFor(cause.Request{Verb: "list", Resource: "pods"}))
//	}
//
// Adding a cause is adding one row to Table, above the rows it must win
// over: Of takes the first row that matches. An error of a package above
// this one names its row itself, with New or a CauseKey method.
package cause

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// Class is how bad a cause is, which sets the level of its first line.
type Class int

const (
	// Transient: retrying may cure it. Warn, then counted.
	Transient Class = iota
	// Routine: part of normal operation (a lost race, a relist after 410).
	// Debug only; waits never return it.
	Routine
	// Permanent: retrying will not cure it; someone has to change the
	// program, its configuration or the cluster. Error, with the hint.
	Permanent
)

func (c Class) String() string { return [...]string{"transient", "routine", "permanent"}[c] }

// Ends is the Stats.WatchEnds bucket of a watch a cause ended.
type Ends int

const (
	Failed  Ends = iota // any other end
	Timeout             // the server ended it cleanly
	Gone                // 410: the version is compacted away
	Silent              // nothing heard, or the connection found dead
	Cut                 // the connection broke under it
)

// Then is what a reflector does after a watch the cause refused or ended.
type Then int

const (
	// Relist: only what the server says can make the cache relist
	// (decision 1, decision 38): the version is gone, the server failed
	// the watch, the stream cannot be read.
	Relist Then = iota
	// Resume: open the watch again from the same resourceVersion after a
	// step of backoff, for as long as the failure lasts: the network
	// failed, not the server's state (decision 38).
	Resume
)

// Request is what a hint speaks of: the request that failed, as RBAC
// names it. Of fills what the error itself says (a Status's request);
// the caller fills the rest.
type Request struct {
	Verb      string // "list", "watch", "patch", "create"...
	Resource  string // "pods", "deployments.apps/status", "leases.coordination.k8s.io"
	Namespace string // "" at cluster scope
	// Selectors are the label and field selectors of a list or watch,
	// named by a 400's hint.
	LabelSelector, FieldSelector string
}

// Row is one cause.
type Row struct {
	// Key names the cause; it tells the cause's occurrences apart in the
	// log (the first is said, the rest counted) unless Family does.
	Key string
	// Family, if set, makes the rows that share it one failure in the
	// log: the network's ways of failing are one outage, said once with
	// what failed first, and counted (decision 38).
	Family string
	Class  Class
	// Hint says what to do; nil when there is nothing to say.
	Hint func(Request) string
	Ends Ends
	Then Then
	// Quiet: ending a watch that was open, it is routine (Debug), and the
	// watch resumes at once: a watch is cut now and then.
	Quiet bool
	// Match reports whether err is of this cause; nil matches the errors
	// that name the row's Key (New, CauseKey).
	Match func(error) bool
}

// LogKey tells the cause's occurrences apart in the log: its Family, or
// else its Key.
func (r Row) LogKey() string {
	if r.Family != "" {
		return r.Family
	}
	return r.Key
}

// HintFor says what to do about the cause in rq, or "".
func (r Row) HintFor(rq Request) string {
	if r.Hint == nil {
		return ""
	}
	return r.Hint(rq)
}

// network is the family of the network's ways of failing.
const network = "network"

// Table is every cause, the first match winning.
var Table = []Row{
	{Key: "canceled", Class: Routine, Match: func(err error) bool { return errors.Is(err, context.Canceled) }},
	{Key: "conflict", Class: Routine, Match: conflict},                   // a lost race (Conflict, AlreadyExists): read again
	{Key: "gone", Class: Routine, Ends: Gone, Match: versionUnavailable}, // relist at the last synced version
	{Key: "no initial-events-end", Class: Routine},                       // a paged list follows
	{Key: "panic", Class: Permanent, Hint: func(Request) string {
		return "fix the reconcile function: it panicked (recovered; the key is retried after a backoff)"
	}},
	{Key: "exec plugin missing", Class: Permanent, Match: isExecMissing, Hint: func(Request) string {
		return "install the exec credential plugin, or fix its path (users[].user.exec.command in the kubeconfig)"
	}},
	{Key: "foreign lease", Class: Permanent, Hint: func(rq Request) string {
		return "another user of " + where(rq) + " made a lease of this name: choose another name"
	}},
	{Key: "held lease", Class: Transient},
	{Key: "unknown resource", Class: Permanent, Match: is(discovery.ErrUnknownResource), Hint: func(rq Request) string {
		if rq.Resource == "" {
			return "check the resource name, version and group: the server does not serve it"
		}
		return "check the resource name, version and group: the server does not serve " + rq.Resource
	}},
	{Key: "namespace required", Class: Permanent, Match: is(httpwatch.ErrNamespaceRequired), Hint: func(Request) string {
		return "set a namespace: the resource is namespaced"
	}},
	{Key: "certificate", Class: Permanent, Match: certificateRefused, Hint: func(Request) string {
		return "check the CA (certificate-authority) and the server name: the server's certificate does not verify against them"
	}},
	{Key: "401", Class: Permanent, Match: httpwatch.IsUnauthorized, Hint: func(Request) string {
		return "check the credentials: the server does not accept them (expired or wrong token, certificate?)"
	}},
	{Key: "403", Class: Permanent, Match: httpwatch.IsForbidden, Hint: func(rq Request) string {
		scope, binding := "at cluster scope", "a ClusterRole and a ClusterRoleBinding"
		if rq.Namespace != "" {
			scope, binding = "in namespace "+rq.Namespace, "a Role and a RoleBinding"
		}
		return fmt.Sprintf("check RBAC: grant %s on %s %s to this program's user or service account (%s)", rq.Verb, rq.Resource, scope, binding)
	}},
	{Key: "namespace missing", Class: Permanent, Match: namespaceMissing, Hint: func(rq Request) string {
		return "create " + where(rq) + ", or use a namespace that exists"
	}},
	// A 404 on one object: the object is missing, which may well be cured.
	{Key: "object missing", Class: Transient, Match: objectMissing},
	{Key: "404", Class: Permanent, Match: httpwatch.IsNotFound, Hint: func(rq Request) string {
		return "check the resource name, version, group and namespace: the server does not serve " + rq.Resource + " there"
	}},
	{Key: "400", Class: Permanent, Match: isCode(http.StatusBadRequest, http.StatusUnprocessableEntity), Hint: refusedHint},
	{Key: "refused request", Class: Permanent, Match: httpwatch.IsPermanent, Hint: func(Request) string {
		return "the server refuses this request as it is: it will not work until the program or the cluster changes"
	}},
	{Key: "429", Class: Transient, Then: Resume, Match: httpwatch.IsTooManyRequests},
	{Key: "status", Class: Transient, Match: isStatus}, // 5xx and the rest: the server failed the watch
	// The network: the request never reached the server, or its answer
	// never came back. A watch resumes from its version (decision 38).
	{Key: "connection refused", Family: network, Class: Transient, Then: Resume, Match: is(syscall.ECONNREFUSED), Hint: func(Request) string {
		return "check the server address: nothing listens there (or the server is restarting)"
	}},
	{Key: "name not resolved", Family: network, Class: Transient, Then: Resume, Match: isDNS, Hint: func(Request) string {
		return "check the server's name: it does not resolve (or DNS is unreachable)"
	}},
	{Key: "no response headers", Family: network, Class: Transient, Then: Resume, Match: is(httpwatch.ErrResponseHeaderTimeout), Hint: func(Request) string {
		return "the server did not answer the watch in time: it may be overloaded, or the path to it lost the request"
	}},
	{Key: "TLS handshake timeout", Family: network, Class: Transient, Then: Resume, Ends: Cut, Quiet: true, Match: tlsHandshakeTimeout},
	// A server that proved it sends no bookmarks (its watch cache off) costs
	// one restart, at Debug; its watches then wait for their own timeout
	// (decision 36).
	{Key: "no bookmarks", Class: Routine, Then: Resume, Ends: Silent, Match: is(httpwatch.ErrNoBookmarks)},
	// A connection found silent, by the watch's own bound (HTTP/1.1) or by
	// the HTTP/2 ping: an outage's first sign, said at Warn by whoever
	// meets it, and the retries that follow counted with it (decision 38).
	{Key: "silent watch", Family: network, Class: Transient, Then: Resume, Ends: Silent, Match: is(httpwatch.ErrWatchIdle), Hint: func(Request) string {
		return "the watch resumed on a new connection; if this repeats, look for a proxy, NAT or load balancer between here and the server that drops quiet connections"
	}},
	{Key: "connection lost", Family: network, Class: Transient, Then: Resume, Ends: Silent, Match: is(httpwatch.ErrConnectionLost)},
	{Key: "timeout", Family: network, Class: Transient, Then: Resume, Ends: Cut, Quiet: true, Match: isTimeout},
	{Key: "connection cut", Family: network, Class: Transient, Then: Resume, Ends: Cut, Quiet: true, Match: httpwatch.IsProbableEOF},
	{Key: "unreachable", Family: network, Class: Transient, Then: Resume, Match: isNetwork, Hint: func(Request) string {
		return "check the network between here and the server"
	}},
	{Key: "very short watch", Class: Transient}, // the server ended a watch at once: relist
	{Key: "unexpected kind", Class: Transient},
	{Key: "permission denied", Class: Permanent, Match: is(fs.ErrPermission), Hint: func(rq Request) string {
		return "check the permissions of " + rq.Resource + ": this process may not write there"
	}},
	{Key: "no space", Class: Transient, Match: is(syscall.ENOSPC), Hint: func(rq Request) string {
		return "free space on the device of " + rq.Resource
	}},
}

// Of returns the row of err. The key of a status without a row of its own
// is its code, and that of an error no row matches the type of its
// innermost error, transient and relisting.
func Of(err error) Row {
	var named interface{ CauseKey() string }
	if errors.As(err, &named) {
		if r, ok := byKey[named.CauseKey()]; ok {
			return r
		}
	}
	for _, r := range Table {
		if r.Match != nil && r.Match(err) {
			if r.Key == "status" || r.Key == "refused request" {
				var se *httpwatch.StatusError
				errors.As(err, &se)
				r.Key = fmt.Sprint(se.Code)
			}
			return r
		}
	}
	return Row{Key: fmt.Sprintf("%T", innermost(err)), Class: Transient}
}

// Lookup returns the row of key.
func Lookup(key string) (Row, bool) {
	r, ok := byKey[key]
	return r, ok
}

var byKey = func() map[string]Row {
	m := make(map[string]Row, len(Table))
	for _, r := range Table {
		if _, dup := m[r.Key]; dup {
			panic("cause: two rows of key " + r.Key)
		}
		m[r.Key] = r
	}
	return m
}()

// New returns an error with text msg that names the row of key: how a
// package above this one makes an error of its own a cause.
func New(key, msg string) error {
	if _, ok := byKey[key]; !ok {
		panic("cause: no row of key " + key)
	}
	return &keyed{key: key, msg: msg}
}

type keyed struct{ key, msg string }

func (e *keyed) Error() string    { return e.msg }
func (e *keyed) CauseKey() string { return e.key }

func is(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func isCode(codes ...int) func(error) bool {
	return func(err error) bool {
		var se *httpwatch.StatusError
		if !errors.As(err, &se) {
			return false
		}
		for _, c := range codes {
			if se.Code == c {
				return true
			}
		}
		return false
	}
}

func conflict(err error) bool { return httpwatch.IsConflict(err) || isCode(http.StatusConflict)(err) }

func isStatus(err error) bool {
	var se *httpwatch.StatusError
	return errors.As(err, &se)
}

func versionUnavailable(err error) bool {
	return httpwatch.IsGone(err) || httpwatch.IsResourceVersionTooLarge(err)
}

func isExecMissing(err error) bool { return errors.Is(err, kubeconfig.ErrExecPluginMissing) }

func namespaceMissing(err error) bool {
	var se *httpwatch.StatusError
	return errors.As(err, &se) && httpwatch.IsNotFound(err) && se.Details.Kind == "namespaces"
}

func objectMissing(err error) bool {
	var se *httpwatch.StatusError
	return errors.As(err, &se) && httpwatch.IsNotFound(err) && se.Details.Name != ""
}

func certificateRefused(err error) bool {
	var verr *tls.CertificateVerificationError
	var uerr x509.UnknownAuthorityError
	var herr x509.HostnameError
	var cerr x509.CertificateInvalidError
	return errors.As(err, &verr) || errors.As(err, &uerr) || errors.As(err, &herr) || errors.As(err, &cerr)
}

func isDNS(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

// tlsHandshakeTimeout is net/http's handshake timeout, which it exports no
// value for.
func tlsHandshakeTimeout(err error) bool {
	return err != nil && strings.Contains(err.Error(), "TLS handshake timeout") && isTimeout(err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// isNetwork is any other failure to reach the server: a dial or read that
// failed (no route, network unreachable), or a body cut at its end.
func isNetwork(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) || errors.Is(err, io.ErrUnexpectedEOF)
}

func where(rq Request) string {
	if rq.Namespace == "" {
		return "its namespace"
	}
	return "namespace " + rq.Namespace
}

func refusedHint(rq Request) string {
	switch {
	case rq.FieldSelector != "" && rq.LabelSelector != "":
		return fmt.Sprintf("check the field selector %q and the label selector %q", rq.FieldSelector, rq.LabelSelector)
	case rq.FieldSelector != "":
		return fmt.Sprintf("check the field selector %q: the server may not support that field for %s", rq.FieldSelector, rq.Resource)
	case rq.LabelSelector != "":
		return fmt.Sprintf("check the label selector %q", rq.LabelSelector)
	}
	return "the server refuses what was sent: see message, and fix the object or the request"
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}
