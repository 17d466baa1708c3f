// Package watchtest provides an in-memory Kubernetes API server for tests of
// code that lists and watches, in the manner of net/http/httptest.
//
// A Server keeps objects of any resource (pods, configmaps and namespaces
// are there from the start; AddResource adds others) under one global,
// increasing resourceVersion, and serves them on the real paths with the
// real server's semantics:
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
// A minimal use:
//
//	s := watchtest.NewServer()
//	defer s.Close()
//	s.Create(watchtest.Pods, `{"metadata":{"name":"web-1","namespace":"prod"}}`)
//	resp, err := s.Client().Get(s.URL + "/api/v1/namespaces/prod/pods")
//
// Where it differs from a real server: there is no authentication,
// admission, defaulting or schema validation; PATCH, subresources,
// deleteCollection and discovery are not served; pods are deleted at once
// (no kubelet grace period), objects with finalizers wait for an update that
// removes the last one; a watch from a resourceVersion the server has not
// reached waits for it rather than failing.
package watchtest
