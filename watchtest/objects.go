package watchtest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

// The Go methods below address a resource as a client does: r's Namespace,
// when set, is the namespace written to (an object naming another is
// refused, as the server refuses it) and the one read when the namespace
// argument is "". A resource the server does not serve fails with
// discovery.ErrUnknownResource (List panics), unless it is one of the
// built-in ones watchtest knows, which it then adds.

// Create stores a new object of resource r and returns it as the server
// stored it: the object a GET returns. obj is JSON ([]byte, json.RawMessage
// or string) or any value json.Marshal accepts. The server sets
// metadata.uid, resourceVersion, creationTimestamp and, where the resource
// has one (Definition.Generation), generation; a namespaced object without
// metadata.namespace goes to "default"; an empty metadata.name is made from
// metadata.generateName. A name already taken
// fails with ErrAlreadyExists. The object is stored whole, status
// included, even for a resource with a status subresource: Create seeds
// fixtures; HTTP clients get the real server's rules.
func (s *Server) Create(res httpwatch.Resource, obj any) (*raw.Object, error) {
	r, err := s.served(res)
	if err != nil {
		return nil, err
	}
	o, err := s.create(r, res.Namespace, obj, seedOptions)
	if err != nil {
		return nil, fmt.Errorf("watchtest: create %s: %w", r.qualified(), err)
	}
	return s.client(r, o), nil
}

// Update replaces an object and returns it as stored. If obj carries a
// metadata.resourceVersion that is not the object's current one, Update
// fails with ErrConflict; without one the update is unconditional. A
// missing object fails with ErrNotFound. An update that changes nothing
// keeps the resourceVersion and sends no event, as on the real server.
// Like Create, it writes status too. An update that removes the last
// finalizer of an object being deleted deletes it: the answer is the
// object as written, at the resourceVersion it had, and watches get
// DELETED with the last stored state, as from the real server.
func (s *Server) Update(res httpwatch.Resource, obj any) (*raw.Object, error) {
	r, err := s.served(res)
	if err != nil {
		return nil, err
	}
	o, err := s.update(r, res.Namespace, "", obj, seedOptions)
	if err != nil {
		return nil, fmt.Errorf("watchtest: update %s: %w", r.qualified(), err)
	}
	return s.client(r, o), nil
}

// Delete deletes an object and returns its last state. An object with
// finalizers only gets a deletionTimestamp (MODIFIED); it goes away
// (DELETED) once an update removes the last finalizer. namespace is
// ignored for cluster-scoped resources.
func (s *Server) Delete(res httpwatch.Resource, namespace, name string) (*raw.Object, error) {
	r, err := s.served(res)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = res.Namespace
	}
	if !r.Namespaced {
		namespace = ""
	}
	o, _, err := s.delete(r, namespace, name, deleteOptions{})
	if err != nil {
		return nil, fmt.Errorf("watchtest: delete %s %s: %w", r.qualified(), objectKey(namespace, name), err)
	}
	return s.client(r, o), nil
}

// Get returns the current state of an object, as a client of the server
// reads it (Raw has its JSON), or ErrNotFound.
func (s *Server) Get(res httpwatch.Resource, namespace, name string) (*raw.Object, error) {
	r, err := s.served(res)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = res.Namespace
	}
	s.mu.Lock()
	st := s.storeLocked(r)
	if !r.Namespaced {
		namespace = ""
	}
	o := st.current(objectKey(namespace, name))
	s.mu.Unlock()
	if o == nil {
		return nil, fmt.Errorf("watchtest: get %s %s: %w", r.qualified(), objectKey(namespace, name), notFound(r, name))
	}
	return s.client(r, o), nil
}

// List returns the current objects of r in namespace ("" for all), in key
// order, each as Get returns it.
func (s *Server) List(res httpwatch.Resource, namespace string) []*raw.Object {
	r, err := s.served(res)
	if err != nil {
		panic(err.Error())
	}
	if namespace == "" {
		namespace = res.Namespace
	}
	s.mu.Lock()
	st := s.storeLocked(r)
	items, _, _ := st.snapshot(scope{namespace: namespace}, s.rv, "", 0)
	s.mu.Unlock()
	out := make([]*raw.Object, len(items))
	for i, o := range items {
		out[i] = s.client(r, o)
	}
	return out
}

// client is o as a client reads it. Stored objects are valid JSON objects
// with metadata, so the client's parser accepts them.
func (s *Server) client(r resource, o *object) *raw.Object {
	obj, err := raw.NewObject(s.render(r, o))
	if err != nil {
		panic("watchtest: a stored object does not parse: " + err.Error())
	}
	return obj
}

func (s *Server) render(r resource, o *object) []byte {
	b := append([]byte(nil), prefix(r)...)
	return append(b, o.body[1:]...)
}

// create stores a new object. pathNS is the namespace of the request path,
// or "" when the call comes from Go.
func (s *Server) create(r resource, pathNS string, obj any, opts writeOptions) (*object, error) {
	d, err := newDraft(obj)
	if err != nil {
		return nil, err
	}
	if err := d.checkType(r); err != nil {
		return nil, err
	}
	if !opts.seed {
		if err := d.checkMetaTypes(r); err != nil {
			return nil, err
		}
	}
	ns := d.str("namespace")
	switch {
	case !r.Namespaced:
		ns = ""
	case pathNS != "" && ns != "" && ns != pathNS:
		return nil, badRequest("the namespace of the provided object does not match the namespace sent on the request")
	case pathNS != "":
		ns = pathNS
	case ns == "":
		ns = "default"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createLocked(s.storeLocked(r), ns, d, opts)
}

// createLocked stores the draft of a new object in namespace ns.
func (s *Server) createLocked(st *store, ns string, d *draft, opts writeOptions) (*object, error) {
	r := st.res
	name := d.str("name")
	if name == "" && d.str("generateName") != "" {
		s.seq++
		name = d.str("generateName") + suffix(s.seq)
	}
	if err := checkName(r, name); err != nil {
		return nil, err
	}
	if st.current(objectKey(ns, name)) != nil {
		return nil, alreadyExists(r, name)
	}
	s.seq++
	d.set("name", name)
	if ns != "" {
		d.set("namespace", ns)
	} else {
		delete(d.meta, "namespace")
	}
	d.set("uid", fmt.Sprintf("00000000-0000-4000-8000-%012x", s.seq))
	d.set("creationTimestamp", s.now())
	if r.tracksGeneration() {
		d.set("generation", 1)
	} else {
		delete(d.meta, "generation")
	}
	delete(d.meta, "deletionTimestamp")
	delete(d.meta, "deletionGracePeriodSeconds")
	if r.Status && !opts.seed {
		delete(d.top, "status") // written through the status subresource only
	}
	if r.BuiltIn {
		d.dropEmptyMaps()
	}
	if !opts.seed {
		delete(d.meta, "managedFields") // the server's record, not the client's
	}
	o, err := d.object(s.rv+1, r.BuiltIn)
	if err != nil {
		return nil, err
	}
	o.owners = opts.owners
	if o.owners == nil && !opts.seed {
		o.owners = createOwners(o, opts.manager, r.apiVersion())
	}
	if o, err = s.withManaged(r, o, nil); err != nil {
		return nil, err
	}
	if opts.dryRun {
		return withoutRV(o), nil
	}
	s.nextRVLocked()
	s.commitLocked(st, &change{typ: apiserve.Added, obj: o})
	return o, nil
}

// update replaces an object. pathNS and pathName come from the request
// path, or are "" when the call comes from Go.
func (s *Server) update(r resource, pathNS, pathName string, obj any, opts writeOptions) (*object, error) {
	d, err := newDraft(obj)
	if err != nil {
		return nil, err
	}
	if err := d.checkType(r); err != nil {
		return nil, err
	}
	if !opts.seed {
		if err := d.checkMetaTypes(r); err != nil {
			return nil, err
		}
	}
	ns, name, err := d.target(r, pathNS, pathName)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storeLocked(r)
	old, err := st.existing(ns, name)
	if err != nil {
		return nil, err
	}
	return s.replaceLocked(st, old, d, opts)
}

// target returns the namespace and name an update addresses.
func (d *draft) target(r resource, pathNS, pathName string) (ns, name string, err error) {
	name, ns = d.str("name"), d.str("namespace")
	if pathName != "" {
		if name != "" && name != pathName {
			return "", "", badRequest("the name of the object (%s) does not match the name on the URL (%s)", name, pathName)
		}
		name = pathName
	}
	switch {
	case !r.Namespaced:
		ns = ""
	case pathNS != "" && ns != "" && ns != pathNS:
		return "", "", badRequest("the namespace of the provided object does not match the namespace sent on the request")
	case pathNS != "":
		ns = pathNS
	case ns == "":
		ns = "default"
	}
	if name == "" {
		return "", "", invalidObject(r, name, "metadata.name", "Required value: name is required")
	}
	return ns, name, nil
}

// serverFields are the metadata fields the server owns; a client cannot
// change them.
var serverFields = []string{"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"}

// replaceLocked makes d the new state of old: an update, or the result of a
// patch. A metadata.resourceVersion in d is a precondition.
func (s *Server) replaceLocked(st *store, old *object, d *draft, opts writeOptions) (*object, error) {
	r := st.res
	if rv := d.str("resourceVersion"); rv != "" && rv != strconv.FormatInt(old.rv, 10) {
		return nil, conflict(r, old.name)
	}
	if uid := d.str("uid"); uid != "" && uid != old.uid {
		return nil, uidMismatch(r, old, uid)
	}
	prev, _ := newDraft(old.body)
	if !opts.seed {
		d = r.guardStatus(prev, d, opts.subresource)
	}
	if sent, ok := d.meta["managedFields"]; ok && !opts.seed && !sameJSON(sent, prev.meta["managedFields"]) {
		opts.sentOwners = parseManagedFields(sent)
	}
	kept := serverFields
	if !opts.seed {
		kept = append(kept[:len(kept):len(kept)], "managedFields") // the server's record, not the client's
	}
	for _, k := range kept {
		if v, ok := prev.meta[k]; ok {
			d.meta[k] = v
		} else {
			delete(d.meta, k)
		}
	}
	if r.BuiltIn {
		d.dropEmptyMaps()
	}
	d.set("name", old.name)
	if old.namespace != "" {
		d.set("namespace", old.namespace)
	} else {
		delete(d.meta, "namespace")
	}
	o, err := d.object(old.rv, r.BuiltIn)
	if err != nil {
		return nil, err
	}
	if r.tracksGeneration() && !sameJSON(r.counted(o), r.counted(old)) {
		d.set("generation", gjson.Parse(prev.meta["generation"]).Int()+1)
		if o, err = d.object(old.rv, r.BuiltIn); err != nil {
			return nil, err
		}
	}
	return s.commitWriteLocked(st, old, o, opts), nil
}

// commitWriteLocked stores o as the next version of old, unless nothing
// changed or the write is a dry run.
func (s *Server) commitWriteLocked(st *store, old, o *object, opts writeOptions) *object {
	base := old
	if opts.sentOwners != nil {
		b := *old
		b.owners = opts.sentOwners
		base = &b
	}
	owners := opts.owners
	if owners == nil {
		owners = updateOwners(base, o, opts, st.res.apiVersion())
	}
	if sameJSON(string(o.body), string(old.body)) && opts.sentOwners == nil {
		if !opts.dryRun {
			old.owners = owners // ownership is not part of the body; the lock guards it
		}
		return old
	}
	o.owners = owners
	if m, err := s.withManaged(st.res, o, base.owners); err == nil {
		o = m
	}
	if opts.dryRun {
		return o
	}
	rv := s.nextRVLocked()
	if o.deleting && !o.finalizers {
		// The last finalizer is gone: the object goes with this write. As
		// on the real server, the writer gets the object as written, at
		// the resourceVersion it had, and watches get the last stored
		// state, finalizers and all, at the deletion's.
		s.commitLocked(st, &change{typ: apiserve.Deleted, obj: withRV(old, rv), prev: old})
		return o
	}
	o = withRV(o, rv)
	s.commitLocked(st, &change{typ: apiserve.Modified, obj: o, prev: old})
	return o
}

// withManaged is o with its ownership stamped and shown as
// metadata.managedFields (decision 40); an object nobody owns anything of
// shows none.
func (s *Server) withManaged(r resource, o *object, prev owners) (*object, error) {
	if len(o.owners) == 0 {
		return o, nil
	}
	stamp(prev, o.owners, s.now())
	doc, err := decodeJSON(o.body)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(o.body)
	if err != nil {
		return nil, err
	}
	d.meta["managedFields"] = managedFieldsJSON(o.owners, doc, r)
	m, err := d.object(o.rv, r.BuiltIn)
	if err != nil {
		return nil, err
	}
	m.owners = o.owners
	return m, nil
}

func (s *Server) now() string {
	return s.Clock.Now().UTC().Format("2006-01-02T15:04:05Z")
}

// checkName applies the rules every real resource shares: a name is
// required and must be usable as a path segment.
func checkName(r resource, name string) error {
	switch {
	case name == "":
		return invalidObject(r, name, "metadata.name", "Required value: name or generateName is required")
	case len(name) > 253:
		return invalidObject(r, name, "metadata.name", "Invalid value: must be no more than 253 characters")
	case name == "." || name == ".." || strings.ContainsAny(name, "/%"):
		return invalidObject(r, name, "metadata.name", `Invalid value: may not be '.' or '..' and may not contain '/' or '%'`)
	}
	return nil
}

// suffix makes the random-looking part of a generated name from a counter,
// so that runs are reproducible. It uses the real server's alphabet.
func suffix(n int64) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	n = n*7919 + 104729 // spread consecutive counters apart
	for i := range b {
		b[i] = alphabet[n%int64(len(alphabet))]
		n /= int64(len(alphabet))
	}
	return string(b)
}
