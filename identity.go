package listwatch

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
)

// Selector says which objects of a resource an informer caches, and
// which of their fields: the one place a program says so (decision 41),
// given to Factory.ForResource. The zero Selector caches every object,
// whole.
type Selector struct {
	Label string // a label selector ("app=web,tier!=db"); "" selects all
	Field string // a field selector ("spec.nodeName=node-1"); "" selects all
	// Projection, if set, keeps only the fields it names of every object,
	// cut while the object is read (see raw.Projection).
	Projection *raw.Projection
}

// Identity is what an informer caches: a resource in a namespace, the
// objects its selectors let through, the fields its projection keeps.
// It names the informer's log lines and errors, its metrics and its
// snapshot file, and a Factory shares one informer per Identity
// (decision 41). It is comparable.
type Identity struct {
	Resource      httpwatch.Resource // with its namespace; "" is all namespaces
	LabelSelector string
	FieldSelector string
	Projection    string // the projection's paths, joined by ","; "" keeps whole objects
}

// String names the identity: "pods.v1 in ns", then what narrows it, as
// "pods.v1 in ns (labels app=web; fields spec.nodeName=n1; projection
// spec.nodeName,status.phase)".
func (id Identity) String() string {
	name := reflector.NameOf(httpwatch.SourceInfo{Resource: id.Resource})
	if sel := id.selection(); sel != "" {
		name += " (" + sel + ")"
	}
	return name
}

// selection says what narrows the identity, "" if nothing does.
func (id Identity) selection() string {
	var parts []string
	for _, p := range []struct{ what, v string }{
		{"labels", id.LabelSelector}, {"fields", id.FieldSelector}, {"projection", id.Projection},
	} {
		if p.v != "" {
			parts = append(parts, p.what+" "+p.v)
		}
	}
	return strings.Join(parts, "; ")
}

// fileSuffix tells apart the snapshot files of informers of one resource
// and namespace with different selections: "" when nothing narrows the
// identity, else "_" and 8 hex digits of a hash of the selection.
func (id Identity) fileSuffix() string {
	sel := id.selection()
	if sel == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(sel))
	return "_" + hex.EncodeToString(sum[:4])
}

func projectionString(p *raw.Projection) string {
	if p == nil {
		return ""
	}
	return strings.Join(p.Paths(), ",")
}

// runningName is a name taken by a running informer of a client.
type runningName struct {
	client *httpwatch.Client
	name   string
}

// running are the names of the informers running in the process, by
// client, so that two of one identity are told apart in logs and metrics
// alike. The client, not the server: two replicas run in one process (a
// test) have a client each, and each its own informers.
var running = struct {
	sync.Mutex
	names map[runningName]bool
}{names: map[runningName]bool{}}

// claimName makes name, of an informer reading through client, one no
// running informer of client has, and returns it with a func that gives
// it back. Informers of a source that is not a *httpwatch.ResourceClient
// (nil client) are not checked: nothing says which client they share.
func claimName(client *httpwatch.Client, name string) (string, func()) {
	if client == nil {
		return name, func() {}
	}
	running.Lock()
	defer running.Unlock()
	claimed := name
	for n := 2; running.names[runningName{client, claimed}]; n++ {
		claimed = fmt.Sprintf("%s #%d", name, n)
	}
	key := runningName{client, claimed}
	running.names[key] = true
	return claimed, func() {
		running.Lock()
		defer running.Unlock()
		delete(running.names, key)
	}
}

// clientOf is the client an informer's source reads through, nil when
// the source does not say.
func clientOf(source httpwatch.ListerWatcher) *httpwatch.Client {
	if rc, ok := source.(*httpwatch.ResourceClient); ok {
		return rc.Client()
	}
	return nil
}
