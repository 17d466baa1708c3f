package apiserve

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/listwatch/listwatch/selector"
)

// fieldRules is what field selectors may name on the built-in resources,
// and how the real server words a refusal, as kube-apiserver 1.37 answers
// (each resource's field label conversion). Resources not listed, core
// ones such as configmaps among them, take the generic rule and message:
// metadata.name and metadata.namespace. Custom resources add their
// selectable fields and are worded as the core group. Keys are
// GROUP/VERSION/RESOURCE.
var fieldRules = map[string]fieldRule{
	"/v1/pods": {coreStyle, []string{"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy",
		"spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
		"status.podIPs", "status.nominatedNodeName"}},
	"/v1/namespaces":             {coreStyle, []string{"metadata.name", "status.phase"}},
	"/v1/nodes":                  {coreStyle, []string{"metadata.name", "spec.unschedulable"}},
	"/v1/secrets":                {coreStyle, []string{"metadata.name", "metadata.namespace", "type"}},
	"/v1/services":               {coreStyle, []string{"metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"}},
	"/v1/replicationcontrollers": {coreStyle, []string{"metadata.name", "metadata.namespace", "status.replicas"}},
	"/v1/events": {coreStyle, []string{"metadata.name", "metadata.namespace", "involvedObject.kind",
		"involvedObject.namespace", "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
		"involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"}},
	"batch/v1/jobs": {jobStyle, []string{"metadata.name", "metadata.namespace", "status.successful"}},
	"certificates.k8s.io/v1/certificatesigningrequests": {coreStyle, []string{"metadata.name", "spec.signerName"}},
}

// podDefaults are the values the real server gives a pod's selectable
// fields when the pod it was sent left them out; field selectors see them
// (watchtest does not store them: it has no defaulting).
var podDefaults = map[string]string{
	"spec.hostNetwork": "false", "spec.restartPolicy": "Always",
	"spec.schedulerName": "default-scheduler", "status.phase": "Pending",
}

type fieldRule struct {
	style  int
	fields []string
}

// How the real server words a field label it does not support: the core
// group's conversion functions, batch's, and the generic one.
const (
	defaultStyle = iota
	coreStyle
	jobStyle
)

// rule is what field selectors may name on r.
func (r APIResource) rule() fieldRule {
	if r.Custom {
		return fieldRule{coreStyle, append([]string{"metadata.name", "metadata.namespace"}, r.SelectableFields...)}
	}
	if fr, ok := fieldRules[r.Group+"/"+r.Version+"/"+r.Resource]; ok {
		return fr
	}
	return fieldRule{defaultStyle, []string{"metadata.name", "metadata.namespace"}}
}

func badRequest(format string, args ...any) *Error {
	return &Error{Code: http.StatusBadRequest, Reason: "BadRequest", Message: fmt.Sprintf(format, args...)}
}

// checkFields refuses a field selector naming a field r does not support,
// with the real server's 400.
func (r APIResource) checkFields(fs selector.FieldSelector) *Error {
	fr := r.rule()
	for _, t := range fs.Terms() {
		if slices.Contains(fr.fields, t.Path) {
			continue
		}
		switch fr.style {
		case coreStyle:
			return badRequest("field label not supported: %s", t.Path)
		case jobStyle:
			return badRequest("field label %q not supported for %s", t.Path, r.Kind)
		}
		quoted := make([]string, len(fr.fields))
		for i, f := range fr.fields {
			quoted[i] = fmt.Sprintf("%q", f)
		}
		return badRequest("%q is not a known field selector: only %s", t.Path, strings.Join(quoted, ", "))
	}
	return nil
}

// Filter is what a list, watch or collection delete selects: its label
// and field selectors.
type Filter struct {
	Labels selector.Selector
	Fields selector.FieldSelector
	// defaults are what field selectors read for fields an object lacks,
	// where the real server's defaulting would have set them.
	defaults map[string]string
}

// Empty reports whether f selects everything.
func (f Filter) Empty() bool { return f.Labels.Empty() && f.Fields.Empty() }

// Matches reports whether an object with these labels and fields is
// selected.
func (f Filter) Matches(labels selector.Set, fields selector.Fields) bool {
	return f.Labels.Matches(labels) && f.Fields.Matches(defaulted{fields, f.defaults})
}

// defaulted reads an object's fields with defaults for missing ones.
type defaulted struct {
	fields   selector.Fields
	defaults map[string]string
}

func (d defaulted) Get(path string) (string, bool) {
	if v, ok := d.fields.Get(path); ok {
		return v, true
	}
	v, ok := d.defaults[path]
	return v, ok
}

// ParseFilter reads and checks the label and field selectors of a list,
// watch or collection delete on r as the real server does: a selector
// that does not parse, or a field r does not support, is its 400, in its
// words.
func ParseFilter(r APIResource, ls, fs string) (Filter, *Error) {
	var f Filter
	var err error
	if f.Labels, err = selector.Parse(ls); err != nil {
		if msg := labelMessage(ls); msg != "" {
			return f, badRequest("%s", msg)
		}
		return f, selectorError(err)
	}
	if f.Fields, err = selector.ParseFields(fs); err != nil {
		if msg := fieldMessage(fs); msg != "" {
			return f, badRequest("%s", msg)
		}
		return f, selectorError(err)
	}
	if !r.Custom && r.Group == "" && r.Resource == "pods" {
		f.defaults = podDefaults
	}
	return f, r.checkFields(f.Fields)
}

// selectorError is the 400 for a selector that does not parse. Like the
// real server, the message is the parser's, without the input around it.
func selectorError(err error) *Error {
	var se *selector.SyntaxError
	if errors.As(err, &se) {
		return badRequest("%s", se.Msg)
	}
	return badRequest("%v", err)
}
