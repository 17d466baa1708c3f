package snapshot

import (
	"path/filepath"
	"strings"
	"time"
)

// Defaults of Options.
const (
	DefaultInterval     = time.Minute
	DefaultMaxAge       = time.Hour
	DefaultConfirmAfter = 100 * time.Millisecond
)

// Options configure the snapshots of an informer (listwatch.Informer's
// Snapshot field; a Factory's applies to each of its informers). The zero
// value keeps none.
type Options struct {
	// Dir is the directory of the snapshot file; "" keeps no snapshot. It
	// is created (mode 0700) if missing, and files are written mode 0600:
	// a snapshot holds the objects as the server sent them, a Secret's
	// data included, so keep Dir as private as the credentials that read
	// them.
	Dir string
	// Name is the file's name in Dir; "" derives one from the resource
	// and namespace ("pods.v1_default.snap"), to which a
	// listwatch.Informer adds a hash of its selectors and projection, if
	// it has any, so that informers of one resource with different ones
	// keep files of their own.
	Name string
	// Interval is how often the cache is saved while it changes (a saved
	// resourceVersion soon falls out of the server's watch window);
	// DefaultInterval if 0. The cache is also saved when the informer
	// stops.
	Interval time.Duration
	// MaxAge is the age beyond which a snapshot is not used (the server
	// has most likely forgotten its version, and its objects would mislead
	// more than help); DefaultMaxAge if 0.
	MaxAge time.Duration
	// ConfirmAfter is how long a watch resumed from a snapshot's version
	// must stay open after the server's response without an ERROR event,
	// if no event comes sooner, before the informer counts as synced.
	// kube-apiserver 1.37 sends no bookmark on a quiet resumed watch and
	// answers a version it forgot with 200 and then a 410 ERROR event:
	// from its watch cache (every built-in resource's default) the refusal
	// is decided before the response starts and came right after it (of
	// 600, on 2 busy cores: median 40 µs, 99% under 0.6 ms, slowest 19 ms);
	// with the watch cache off for the resource it comes from etcd, whose
	// watchers catch up every 100 ms, 9–270 ms after it. The default,
	// DefaultConfirmAfter (used if 0), covers the watch cache; set 500 ms
	// for a server that reads the resource's watches from etcd. A 410 that
	// comes later still relists, and handlers hear what changed.
	ConfirmAfter time.Duration
	// Limits bound what a read accepts.
	Limits
	// TransformVersion names the version of the source's Transform. A
	// transform is code, which a snapshot cannot compare: change the name
	// whenever the transform's output changes. With a Transform and no
	// name no snapshot is kept.
	TransformVersion string
	// Identity is anything else the objects depend on; required, in place
	// of the server and resource, when the source is not a
	// *httpwatch.ResourceClient (a filtering wrapper, say, whose filter it
	// should name).
	Identity string
}

// WithDefaults returns o with zero durations set to their defaults.
func (o Options) WithDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxAge <= 0 {
		o.MaxAge = DefaultMaxAge
	}
	if o.ConfirmAfter <= 0 {
		o.ConfirmAfter = DefaultConfirmAfter
	}
	return o
}

// Path is where o keeps the snapshot of key.
func (o Options) Path(key Key) string {
	name := o.Name
	if name == "" {
		name = key.Resource
		if key.Namespace != "" {
			name += "_" + key.Namespace
		}
		name = strings.Map(func(r rune) rune {
			if r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, name) + ".snap"
	}
	return filepath.Join(o.Dir, name)
}
