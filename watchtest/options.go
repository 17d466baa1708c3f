package watchtest

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
)

// writeOptions are the query parameters of a create, update, patch or
// delete that change how the write is done.
type writeOptions struct {
	dryRun      bool   // dryRun=All: answer as if written, store nothing
	manager     string // fieldManager, or the User-Agent's product
	force       bool   // force=true: an apply takes fields from other managers
	strict      bool   // fieldValidation=Strict
	subresource string // "", "status" or "scale"
	// seed marks a write from Go, which sets the whole object, status
	// included, as a test's fixture needs.
	seed bool
	// owners, when not nil, is what each manager owns after the write: an
	// apply computed it. Other writes update the stored ownership.
	owners owners
	// sentOwners, when not nil, is the ownership a write sent in
	// metadata.managedFields, different from the stored one: the real
	// server takes it as the ownership the write starts from.
	sentOwners owners
}

// seedOptions are those of Create and Update called from Go.
var seedOptions = writeOptions{seed: true, manager: "watchtest"}

// parseWriteOptions reads and checks the options of a write. kind names the
// options type in errors, as the real server does: CreateOptions,
// UpdateOptions, PatchOptions or DeleteOptions.
func parseWriteOptions(req *http.Request, kind string) (writeOptions, *apiserve.Error) {
	q := req.URL.Query()
	var o writeOptions
	var errs []apiserve.StatusCause
	if dr, ok := q["dryRun"]; ok {
		for _, v := range dr {
			if v != "All" {
				errs = append(errs, apiserve.StatusCause{Reason: "FieldValueNotSupported", Field: "dryRun", Message: fmt.Sprintf("Unsupported value: %s: supported values: \"All\"", quotedList(dr))})
				break
			}
		}
		o.dryRun = len(dr) > 0
	}
	if kind != "DeleteOptions" {
		switch v := q.Get("fieldValidation"); v {
		case "", "Ignore", "Warn":
		case "Strict":
			o.strict = true
		default:
			errs = append(errs, apiserve.StatusCause{Reason: "FieldValueNotSupported", Field: "fieldValidation", Message: fmt.Sprintf(`Unsupported value: %q: supported values: "", "Ignore", "Strict", "Warn"`, v)})
		}
		o.manager = q.Get("fieldManager")
	}
	if kind == "PatchOptions" {
		o.force = forced(q)
	}
	if len(errs) > 0 {
		return o, invalidOptions(kind, errs)
	}
	if o.manager == "" {
		o.manager = userAgentManager(req.UserAgent())
	}
	return o, nil
}

// userAgentManager is the field manager the real server records for a
// write that names none: the product part of the User-Agent.
func userAgentManager(ua string) string {
	if i := strings.IndexByte(ua, '/'); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return "watchtest"
	}
	return ua
}

func quotedList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// invalidOptions is the 422 the real server sends for options it does not
// accept.
func invalidOptions(kind string, causes []apiserve.StatusCause) *apiserve.Error {
	msgs := make([]string, len(causes))
	for i, c := range causes {
		msgs[i] = c.Field + ": " + c.Message
	}
	all := msgs[0]
	if len(msgs) > 1 {
		all = "[" + strings.Join(msgs, ", ") + "]"
	}
	return &apiserve.Error{
		Code: http.StatusUnprocessableEntity, Reason: "Invalid",
		Message: kind + `.meta.k8s.io "" is invalid: ` + all,
		Details: &apiserve.StatusDetails{Group: "meta.k8s.io", Kind: kind, Causes: causes},
	}
}

// objectMetaFields are the fields of metadata every kind shares, which is
// all the schema watchtest knows.
var objectMetaFields = map[string]bool{
	"name": true, "generateName": true, "namespace": true, "selfLink": true, "uid": true,
	"resourceVersion": true, "generation": true, "creationTimestamp": true,
	"deletionTimestamp": true, "deletionGracePeriodSeconds": true, "labels": true,
	"annotations": true, "ownerReferences": true, "finalizers": true, "managedFields": true,
}

// checkStrict applies fieldValidation=Strict as far as watchtest can
// without schemas: duplicate fields at the top level or in metadata, and
// fields metadata does not have, fail with the real server's 400.
func checkStrict(r resource, body []byte) *apiserve.Error {
	fail := func(what string) *apiserve.Error {
		return badRequest("%s in version %q cannot be handled as a %s: strict decoding error: %s", r.Kind, r.Version, r.Kind, what)
	}
	if k := duplicateKey(gjson.ParseBytes(body)); k != "" {
		return fail(fmt.Sprintf("duplicate field %q", k))
	}
	meta := gjson.GetBytes(body, "metadata")
	if k := duplicateKey(meta); k != "" {
		return fail(fmt.Sprintf("duplicate field %q", "metadata."+k))
	}
	var unknown string
	meta.ForEach(func(k, _ gjson.Result) bool {
		if !objectMetaFields[k.String()] {
			unknown = k.String()
			return false
		}
		return true
	})
	if unknown != "" {
		return fail(fmt.Sprintf("unknown field %q", "metadata."+unknown))
	}
	return nil
}

func duplicateKey(r gjson.Result) string {
	seen := map[string]bool{}
	var dup string
	r.ForEach(func(k, _ gjson.Result) bool {
		if seen[k.String()] {
			dup = k.String()
			return false
		}
		seen[k.String()] = true
		return true
	})
	return dup
}

// forced reads an apply's force parameter as the real server reads a
// boolean: present and not one of 0, f, false, n, no, off.
func forced(q url.Values) bool {
	vs, ok := q["force"]
	if !ok || len(vs) == 0 {
		return false
	}
	switch strings.ToLower(vs[0]) {
	case "0", "f", "false", "n", "no", "off":
		return false
	}
	return true
}
