package cacheserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
)

var (
	tokenReviews  = httpwatch.Resource{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"}
	accessReviews = httpwatch.Resource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"}
)

// unreachableError is a review the API server did not answer: offline,
// the Reviewer falls back on what it decided before.
type unreachableError struct{ err error }

func (e *unreachableError) Error() string { return e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// review asks the API server once, within Timeout, and counts it. A
// review it refuses (the node cache's identity may not make it) is said
// at Error once until one succeeds, with what to do.
func (r *Reviewer) review(ctx context.Context, ask func(context.Context) (decision, error)) (decision, error) {
	if r.Client == nil {
		return decision{}, errors.New("cannot authorize: the Reviewer has no Client")
	}
	ctx, cancel := context.WithTimeout(ctx, orDefault(r.Timeout, DefaultReviewTimeout))
	defer cancel()
	d, err := ask(ctx)
	if err == nil {
		r.stats.reviews.Add(1)
		r.refused.Store(false)
		d.at = r.clock().Now()
		return d, nil
	}
	var se *httpwatch.StatusError
	if !errors.As(err, &se) || se.Code >= 500 || se.Code == http.StatusTooManyRequests {
		return decision{}, &unreachableError{err}
	}
	if !r.refused.Swap(true) && r.Logger != nil {
		r.Logger.Error("cacheserve: the API server refused a review; every request needing one is denied", "code", se.Code, "err", err,
			"hint", "grant the node cache's identity create on tokenreviews and subjectaccessreviews (ClusterRole system:auth-delegator)")
	}
	return decision{}, fmt.Errorf("cannot authorize: the API server refused to review the request: %w", err)
}

// reviewToken asks who a bearer token is (TokenReview).
func (r *Reviewer) reviewToken(ctx context.Context, tok string) (decision, error) {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": map[string]string{"token": tok},
	})
	o, err := r.Client.Resource(tokenReviews).Create(ctx, body)
	if err != nil {
		return decision{}, fmt.Errorf("token review: %w", err)
	}
	var tr struct {
		Status struct {
			Authenticated bool     `json:"authenticated"`
			User          userInfo `json:"user"`
			Error         string   `json:"error"`
		} `json:"status"`
	}
	if err := json.Unmarshal(o.Raw(), &tr); err != nil {
		return decision{}, fmt.Errorf("token review: read its answer: %w", err)
	}
	return decision{ok: tr.Status.Authenticated, user: tr.Status.User, reason: tr.Status.Error}, nil
}

// reviewAccess asks whether a user may make a request
// (SubjectAccessReview).
func (r *Reviewer) reviewAccess(ctx context.Context, spec accessSpec) (decision, error) {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec,
	})
	o, err := r.Client.Resource(accessReviews).Create(ctx, body)
	if err != nil {
		return decision{}, fmt.Errorf("subject access review: %w", err)
	}
	var sar struct {
		Status struct {
			Allowed         bool   `json:"allowed"`
			Reason          string `json:"reason"`
			EvaluationError string `json:"evaluationError"`
		} `json:"status"`
	}
	if err := json.Unmarshal(o.Raw(), &sar); err != nil {
		return decision{}, fmt.Errorf("subject access review: read its answer: %w", err)
	}
	return decision{ok: sar.Status.Allowed, reason: sar.Status.Reason}, nil
}

// accessSpec is a SubjectAccessReview's spec: who, and what they ask.
type accessSpec struct {
	ResourceAttributes    *resourceAttributes    `json:"resourceAttributes,omitempty"`
	NonResourceAttributes *nonResourceAttributes `json:"nonResourceAttributes,omitempty"`
	User                  string                 `json:"user,omitempty"`
	Groups                []string               `json:"groups,omitempty"`
	Extra                 map[string][]string    `json:"extra,omitempty"`
	UID                   string                 `json:"uid,omitempty"`
}

type resourceAttributes struct {
	Namespace   string `json:"namespace,omitempty"`
	Verb        string `json:"verb"`
	Group       string `json:"group,omitempty"`
	Version     string `json:"version,omitempty"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	Name        string `json:"name,omitempty"`
}

type nonResourceAttributes struct {
	Path string `json:"path"`
	Verb string `json:"verb"`
}

// newAccessSpec reads what req asks, as kube-apiserver names it for its
// authorizer: a resource path's verb from the method, the name and the
// watch parameter; any other path as a non-resource one.
func newAccessSpec(req *http.Request, u userInfo) accessSpec {
	spec := accessSpec{User: u.Username, Groups: u.Groups, Extra: u.Extra, UID: u.UID}
	p, e := apiserve.ParsePath(req.URL.Path)
	if e != nil {
		spec.NonResourceAttributes = &nonResourceAttributes{Path: req.URL.Path, Verb: strings.ToLower(req.Method)}
		return spec
	}
	w := req.URL.Query().Get("watch")
	verb := map[string]string{
		http.MethodGet: "get", http.MethodHead: "get", http.MethodPost: "create", http.MethodPut: "update",
		http.MethodPatch: "patch", http.MethodDelete: "delete",
	}[req.Method]
	switch {
	case req.Method == http.MethodGet && (w == "1" || w == "true"):
		verb = "watch"
	case p.Name == "" && verb == "get":
		verb = "list"
	case p.Name == "" && verb == "delete":
		verb = "deletecollection"
	case verb == "":
		verb = strings.ToLower(req.Method)
	}
	spec.ResourceAttributes = &resourceAttributes{Namespace: p.Namespace, Verb: verb, Group: p.Group, Version: p.Version,
		Resource: p.Resource, Subresource: p.Subresource, Name: p.Name}
	return spec
}

// unauthorized is the 401 for a request without a token the API server
// accepts.
func unauthorized(why string) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusUnauthorized, Reason: "Unauthorized", Message: "Unauthorized: " + why, Details: &apiserve.StatusDetails{}}
}

// forbiddenFor is the 403 for a request the API server's review denied,
// worded as kube-apiserver words its own.
func forbiddenFor(user string, spec accessSpec, reason string) *apiserve.Error {
	var msg string
	if a := spec.ResourceAttributes; a != nil {
		what := a.Resource
		if a.Group != "" {
			what += "." + a.Group
		}
		msg = fmt.Sprintf("%s is forbidden: User %q cannot %s resource %q in API group %q", what, user, a.Verb, a.Resource, a.Group)
		if a.Namespace != "" {
			msg += fmt.Sprintf(" in the namespace %q", a.Namespace)
		} else {
			msg += " at the cluster scope"
		}
	} else {
		msg = fmt.Sprintf("forbidden: User %q cannot %s path %q", user, spec.NonResourceAttributes.Verb, spec.NonResourceAttributes.Path)
	}
	if reason != "" {
		msg += ": " + reason
	}
	return &apiserve.Error{Code: http.StatusForbidden, Reason: "Forbidden", Message: msg, Details: &apiserve.StatusDetails{}}
}

// denied is the answer to a request the Authorize function refused: its
// *apiserve.Error as it is, any other error a 403 with its text.
func denied(err error) *apiserve.Error {
	var e *apiserve.Error
	if errors.As(err, &e) {
		return e
	}
	return forbidden(err)
}
