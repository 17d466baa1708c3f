package httpwatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// WriteOptions are the options of a create, update, patch or server-side
// apply, sent as query parameters. The zero value asks for none: the
// server stores the write, names the writer after the request's user agent
// and drops unknown fields with a warning.
type WriteOptions struct {
	// DryRun has the server check, default and admit the write and answer
	// what it would store, without storing it (the answer then carries the
	// resourceVersion of the object as it is, or none for a create).
	DryRun bool
	// FieldManager names the writer in metadata.managedFields: the
	// applier of an Apply, who owns the fields its configuration sets and
	// which the server requires.
	FieldManager string
	// FieldValidation says what the server does with unknown or duplicate
	// fields in the body; "" leaves it to the server (Warn).
	FieldValidation FieldValidation
	// Force, for an Apply only, takes over fields another manager owns
	// instead of failing with a 409 Conflict whose causes name each field
	// and its owner. Other writes refuse it before sending.
	Force bool
}

// FieldValidation is how strictly the server checks the fields of a write.
type FieldValidation string

// The server's field validation levels. With FieldValidationWarn the
// server stores the object and answers a Warning header for each unknown
// field; the client logs those to Client.Logger.
const (
	FieldValidationIgnore FieldValidation = "Ignore" // drop unknown fields silently
	FieldValidationWarn   FieldValidation = "Warn"   // drop them with a warning
	FieldValidationStrict FieldValidation = "Strict" // refuse the write: 400 BadRequest
)

// values encodes the options as the server's CreateOptions, UpdateOptions
// or PatchOptions query parameters.
func (o WriteOptions) values() url.Values {
	q := url.Values{}
	if o.DryRun {
		q.Set("dryRun", "All")
	}
	if o.FieldManager != "" {
		q.Set("fieldManager", o.FieldManager)
	}
	if o.FieldValidation != "" {
		q.Set("fieldValidation", string(o.FieldValidation))
	}
	if o.Force {
		q.Set("force", "true")
	}
	return q
}

// writeOptions returns the one WriteOptions opts may hold, of an apply or
// not.
func writeOptions(opts []WriteOptions, apply bool) (WriteOptions, error) {
	o, err := optional(opts)
	if err == nil && o.Force && !apply {
		err = errors.New("WriteOptions.Force is for Apply only")
	}
	return o, err
}

// DeleteOptions are the options of a delete, sent as the server's
// DeleteOptions JSON body. The zero value sends no body: the server then
// applies the resource's defaults.
type DeleteOptions struct {
	// DryRun has the server check the delete without doing it.
	DryRun bool
	// GracePeriodSeconds overrides the object's grace period (pods have
	// one); nil keeps the default and 0 deletes at once.
	GracePeriodSeconds *int64
	// PropagationPolicy says what becomes of the objects this one owns;
	// "" leaves it to the resource's default (Background for most).
	PropagationPolicy Propagation
	// Preconditions make the delete fail with a 409 Conflict unless the
	// stored object still has this UID and resourceVersion.
	Preconditions Preconditions
}

// Propagation is what a delete does to the dependents of the object, the
// objects whose ownerReferences name it.
type Propagation string

// The server's propagation policies. No garbage collector, no propagation:
// the server only records the policy (Foreground adds the finalizer
// "foregroundDeletion" and leaves the object in place, with a
// deletionTimestamp, until the garbage collector removes the finalizer).
const (
	PropagationOrphan     Propagation = "Orphan"     // leave dependents, remove their owner references
	PropagationBackground Propagation = "Background" // delete the object now, its dependents after
	PropagationForeground Propagation = "Foreground" // delete dependents first, then the object
)

// Preconditions are what a delete checks on the stored object; each is
// checked when not "".
type Preconditions struct {
	UID             string
	ResourceVersion string
}

// body encodes the options as a DeleteOptions object, or returns nil when
// they are all at their zero value.
func (o DeleteOptions) body() ([]byte, error) {
	if o == (DeleteOptions{}) {
		return nil, nil
	}
	type preconditions struct {
		UID             string `json:"uid,omitempty"`
		ResourceVersion string `json:"resourceVersion,omitempty"`
	}
	wire := struct {
		Kind               string         `json:"kind"`
		APIVersion         string         `json:"apiVersion"`
		DryRun             []string       `json:"dryRun,omitempty"`
		GracePeriodSeconds *int64         `json:"gracePeriodSeconds,omitempty"`
		PropagationPolicy  Propagation    `json:"propagationPolicy,omitempty"`
		Preconditions      *preconditions `json:"preconditions,omitempty"`
	}{Kind: "DeleteOptions", APIVersion: "v1", GracePeriodSeconds: o.GracePeriodSeconds, PropagationPolicy: o.PropagationPolicy}
	if o.DryRun {
		wire.DryRun = []string{"All"}
	}
	if o.Preconditions != (Preconditions{}) {
		wire.Preconditions = &preconditions{UID: o.Preconditions.UID, ResourceVersion: o.Preconditions.ResourceVersion}
	}
	b, err := json.Marshal(wire)
	if err != nil {
		return nil, fmt.Errorf("delete options: %w", err)
	}
	return b, nil
}

// optional returns the one options value a variadic parameter may hold, or
// the zero value when it holds none.
func optional[T any](opts []T) (T, error) {
	var zero T
	switch len(opts) {
	case 0:
		return zero, nil
	case 1:
		return opts[0], nil
	}
	return zero, fmt.Errorf("%d %T values given, want at most one", len(opts), zero)
}
