// Package watchtest provides an in-memory Kubernetes API server for tests of
// code that lists and watches, in the manner of net/http/httptest.
//
// A Server keeps objects of any resource (pods, configmaps, namespaces and
// deployments are there from the start; AddResource adds others) under
// one global, increasing resourceVersion, and serves them on the real
// paths with the real server's semantics:
//
//   - GET, POST, PUT and DELETE on /api/v1/... and /apis/GROUP/VERSION/...,
//     with 404 NotFound, 409 AlreadyExists and 409 Conflict (a stale
//     metadata.resourceVersion in a PUT) shaped like the real Status objects.
//   - LIST with limit, continue and remainingItemCount. Every page of a list
//     comes from the snapshot at the first page's resourceVersion, however
//     the objects change in between. resourceVersion "" is the latest, "0"
//     any, N with resourceVersionMatch=Exact exactly N (410 once compacted),
//     N with NotOlderThan at least N (504 ResourceVersionTooLarge after
//     TooLargeWait if the server never gets there).
//   - WATCH from a resourceVersion (replayed from history), from "" or "0"
//     (the current state as ADDED events first), and as a streaming list
//     (sendInitialEvents=true: ADDED events, then a BOOKMARK annotated
//     k8s.io/initial-events-end). Bookmarks, timeoutSeconds, and label and
//     field selectors are honoured; an object that stops matching a watch's
//     selectors leaves it as DELETED, as the real watch cache does.
//   - History is kept until Compact, or per resource up to HistoryLimit;
//     watches, exact lists and continue tokens from older versions get 410
//     Expired, a watch either as an HTTP status or as an ERROR event.
//
// The server also misbehaves on request, each method arming the next
// request or requests: FailNext (429 with Retry-After, 500, 503, 410, …),
// CutNextWatchAfterBytes and CutNextWatchAfterEvents (the connection drops,
// mid-frame if need be), SlowWatches (events written in small pieces, with a
// pause the test controls), CloseWatches (every watch ends at once, as in a
// restart), RefuseWatchList (an old server), and a watch that reads too
// slowly is ended rather than let to block writers. Requests lists what
// clients sent; WaitForWatches lets a test change objects only once its
// client is watching.
//
// It serves discovery as kube-apiserver 1.37.2 does, through the serving
// core of package apiserve: every built-in resource of the real server
// (one no test registered is served, empty; Withhold takes one away, as
// from a server without it) and the custom resources added, so that
// kubectl api-resources prints what it prints against the real server and
// the client's checks that rest on discovery behave as in production: the
// aggregated v2 document (/api and /apis), and /api, /apis, /apis/GROUP
// and each group version's resource list. A namespaced resource addressed without a
// namespace is then httpwatch.ErrNamespaceRequired and a misspelt one
// discovery.ErrUnknownResource, not a missing object. Field selectors may
// name only what the real server supports for the resource (pods'
// spec.nodeName, status.phase and the rest, secrets' type, namespaces'
// status.phase; metadata.name and metadata.namespace everywhere; a custom
// resource's Definition.SelectableFields); anything else, and a label or
// field selector that does not parse, is the real server's 400 with its
// message.
//
// It also serves writes with the real server's semantics, as recorded from
// kube-apiserver 1.37, so that controllers that write can be tested:
//
//   - PATCH as application/merge-patch+json (RFC 7386),
//     application/json-patch+json (RFC 6902, with JSON Pointer escapes; a
//     failed test or a missing path is the real server's 422),
//     application/strategic-merge-patch+json (built-in resources only, as
//     on the real server; approximated, see below) and
//     application/apply-patch+yaml (server-side apply, JSON or YAML,
//     fieldManager required, force, creating the object if missing;
//     approximated, see below). A metadata.resourceVersion in a patch is a
//     precondition (409 Conflict); a patch that changes nothing keeps the
//     resourceVersion and sends no event; another media type is 415.
//   - The status and scale subresources of resources that declare them
//     (Definition.Status, Definition.Scale; Pods, Namespaces and Deployments
//     do): a write to /status never changes spec; it changes .status and,
//     for a built-in resource, metadata, except an apps resource's labels
//     (a custom resource's changes .status only). Other writes over HTTP
//     leave .status as it was and a create drops it. /scale reads and
//     writes an autoscaling/v1 Scale.
//   - dryRun=All on every write (the answer, nothing stored, no event),
//     fieldManager, fieldValidation, and on deletes a DeleteOptions body
//     with preconditions (uid, resourceVersion), propagationPolicy and
//     gracePeriodSeconds. DELETE on a collection with label and field
//     selectors deletes what they select and answers with the list of it.
//     A delete that removes the object at once answers with a Success
//     Status, except for pods and namespaces, which answer with the
//     object, as on the real server.
//
// Create and Update called from Go seed whole objects, status included,
// as fixtures need; only HTTP requests get the status subresource's split.
//
// A minimal use, with a client from package httpwatch:
//
//	s := watchtest.NewServer()
//	defer s.Close()
//	s.Create(watchtest.Pods, `{"metadata":{"name":"web-1","namespace":"prod"}}`)
//	c, _ := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
//	pods := c.Resource(watchtest.Pods).Namespace("prod")
//
// Resources are named by the client's httpwatch.Resource, for the server's
// Go methods and for clients alike. Built-in ones (Pods, Leases, ...) are
// served as the real server serves them; a custom resource is served as
// the Definition given to AddResource says, as a CustomResourceDefinition
// would:
//
//	widgets := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "widgets"}
//	s.AddResource(widgets, watchtest.Definition{Kind: "Widget", Namespaced: true})
//
// It answers clients other than listwatch's as the real server does,
// through the serving core of package apiserve: an Accept that lists JSON
// after protobuf or CBOR (client-go's) gets JSON, kubectl get's gets a
// Table with the real server's columns (a custom resource's from
// Definition.PrinterColumns), a body that is not JSON gets the real 415,
// an answer past 128 KiB is gzipped for a client that accepts gzip, and
// /version answers as 1.37.2 (Server.Version). An unmodified kubectl
// gives the same results against it as against kube-apiserver, but that
// it sends protobuf for create configmap, secret and the like (the 415)
// and reads /openapi/v3, which is not served, to validate and to explain:
// the schemas of every built-in kind are what validation reads and explain
// prints, and no small document satisfies both. Use --validate=false.
//
// Where it differs from a real server: there is no authentication,
// admission, defaulting or schema validation beyond metadata, the one
// schema every kind shares: its fields must have their types (a label
// given as a number is refused, as the real server refuses it), and
// fieldValidation=Strict rejects duplicate fields and fields metadata does
// not have; unknown fields elsewhere are kept. Strategic merge patch is merge patch plus a fixed table of
// lists merged on a key (containers, env, volumes and the like on name,
// ports on containerPort or port, volumeMounts on mountPath, conditions on
// type, ownerReferences on uid), finalizers merged as a set, and the
// directives "$patch": "delete" and "$patch": "replace",
// "$setElementOrder", "$deleteFromPrimitiveList" and "$retainKeys"; other
// lists are replaced. Merged items are ordered as the real server orders
// them: the server's items keep their order and a new item comes before
// the server's items that follow it in the patch. Server-side apply tracks ownership per leaf field, with lists
// owned whole rather than per item. Every write over HTTP records its
// manager's fields in metadata.managedFields, as the real server does
// (the fieldManager parameter, else the User-Agent's product; operation
// Update or Apply; FieldsV1, lists keyed as the built-in types key them),
// so an apply conflicts with what a create or update set; objects written
// only from Go have no entries. There is no garbage collector: a Foreground or
// Orphan delete leaves the object with its deletionTimestamp and the
// foregroundDeletion or orphan finalizer until a write removes it, as on a
// real server whose controller manager is not running. Pods are deleted at
// once (no kubelet grace period); objects with finalizers wait for a write
// that removes the last one. A watch from a resourceVersion the server has
// not reached waits for it rather than failing.
//
// # Approximations
//
// The e2e differential suite (TestWatchtestReadsMatchRealServer,
// TestWatchtestWritesMatchRealServer and the custom resource ones) sends
// the same requests to kube-apiserver 1.37 and to a Server and compares
// status codes, Status bodies and objects. What still differs, and why:
//
//   - Objects are not defaulted: a pod comes back without the
//     restartPolicy, terminationGracePeriodSeconds, tolerations or
//     status.phase the real server fills in, and an empty string stays
//     where the real server drops the field. Defaulting is per kind and
//     per version, a schema watchtest does not have. Field selectors on
//     pods do read the real defaults of the fields they name
//     (spec.hostNetwork false, spec.restartPolicy Always,
//     spec.schedulerName default-scheduler, status.phase Pending).
//   - Field labels are known for pods, namespaces, nodes, secrets,
//     services, replicationcontrollers, core events, jobs and
//     certificatesigningrequests; any other built-in resource accepts only
//     metadata.name and metadata.namespace, as apps and coordination do,
//     so one whose real server supports more fields (events.k8s.io's
//     regarding.name, say) is refused here. Values are compared as the
//     JSON's text.
//   - Label selector errors use the real parser's words for syntax; a key
//     or value that parses but breaks the label rules (a prefix that is
//     not a DNS subdomain, a value too long) is worded by package
//     selector. Both are the real 400 BadRequest.
//   - Discovery has no storageVersionHash, every group version is
//     fresh, and there are no aggregated API services. The subresources
//     it lists beyond status and scale (pods/log, exec, eviction...) are
//     not served. Like 1.37, it does not serve aggregated v2beta1: a
//     client that accepts only v2beta1 gets the plain documents.
//   - resourceVersions, uids, timestamps and continue tokens are the
//     server's own (a token has the real one's layout, not its bytes).
//     managedFields own no defaulted fields (there is no defaulting), and
//     maps are told from structs by a fixed list of names (labels,
//     annotations, data and the like), where the real server reads its
//     schema.
//   - History is kept until Compact or HistoryLimit, where a real server's
//     watch cache keeps a window and etcd compacts every few minutes: a
//     watch from an old resourceVersion that works here may be 410 Gone
//     there. Compact and HistoryLimit make tests of that deterministic.
//   - Bookmarks come every BookmarkInterval (or on SendBookmarks), the
//     real server's about once a minute with jitter; both send one 2 s
//     before a watch's deadline. Watches are otherwise served by the serving core
//     of package apiserve (decision 44), as a node's cache serves them.
//   - Pods are deleted at once, nothing runs the garbage collector, and
//     strategic merge patch and server-side apply are approximated, as
//     said above.
package watchtest
