package patch

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/listwatch/listwatch/raw"
)

// ErrOwner is wrapped by the error of Bytes when ControlledBy was given an
// owner that cannot own the object: one with no uid (not read from the
// server, or with no kind or apiVersion), or one in another namespace.
var ErrOwner = errors.New("patch: bad owner")

// Object returns a Builder of a server-side apply configuration of the
// object of kind in apiVersion named name in namespace ("" for a
// cluster-scoped one), which need not exist yet: what a controller
// applies for the objects it makes.
//
//	body, err := patch.Object("v1", "ConfigMap", d.Namespace(), d.Name()+"-summary").
//		ControlledBy(d).Set("data.replicas", "3").Bytes()
func Object(apiVersion, kind, namespace, name string) *Builder {
	b := New()
	b.Set("apiVersion", apiVersion)
	b.Set("kind", kind)
	b.Set("metadata.name", name)
	if namespace != "" {
		b.Set("metadata.namespace", namespace)
	}
	return b
}

// ControlledBy makes owner the object's controller: an owner reference
// with owner's apiVersion, kind, name and uid, controller true (the one
// reconcile.ControllerOf follows back to the owner) and blockOwnerDeletion
// true (a foreground deletion of the owner waits for the object). The
// garbage collector deletes the object once the owner is gone.
//
// It sets metadata.ownerReferences whole, to this one reference; in a
// server-side apply that is the list this field manager owns, merged by uid
// with the references others set. A namespaced owner must be in the
// object's namespace, and owner must have a uid, a kind and an apiVersion:
// read it from the server (an informer's objects have them).
func (b *Builder) ControlledBy(owner *raw.Object) *Builder {
	switch {
	case owner.UID() == "" || owner.Kind() == "" || owner.APIVersion() == "":
		b.fail(fmt.Errorf("%w: %s %q lacks a uid, kind or apiVersion", ErrOwner, owner.Kind(), owner.Name()))
		return b
	case owner.Namespace() != "" && owner.Namespace() != b.namespace():
		b.fail(fmt.Errorf("%w: %s %s/%s cannot own an object in namespace %q (owners are in the same namespace, or cluster-scoped)",
			ErrOwner, owner.Kind(), owner.Namespace(), owner.Name(), b.namespace()))
		return b
	}
	return b.Set("metadata.ownerReferences", []ownerReference{{
		APIVersion:         owner.APIVersion(),
		Kind:               owner.Kind(),
		Name:               owner.Name(),
		UID:                owner.UID(),
		Controller:         true,
		BlockOwnerDeletion: true,
	}})
}

type ownerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         bool   `json:"controller"`
	BlockOwnerDeletion bool   `json:"blockOwnerDeletion"`
}

// namespace is metadata.namespace as set so far, "" if not set.
func (b *Builder) namespace() string {
	meta, ok := b.root.get("metadata")
	if !ok || meta.obj == nil {
		return ""
	}
	ns, ok := meta.obj.get("namespace")
	if !ok || ns.raw == nil {
		return ""
	}
	var s string
	if err := json.Unmarshal(ns.raw, &s); err != nil {
		return ""
	}
	return s
}
