package apiserve

import (
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Output is the representation a request's Accept header picked.
type Output struct {
	// Table is set when the client asked for a meta.k8s.io Table, as
	// kubectl get does; TableVersion is then "v1" or "v1beta1".
	Table        bool
	TableVersion string
}

// served are the media types the core writes, for the 406 that lists
// them.
const served = "application/json"

// Negotiate picks what to answer with from an Accept header as
// kube-apiserver does: the clauses in order of preference (quality, then
// the more specific), the first one the core can serve wins. Media types
// it cannot write (protobuf, CBOR, YAML) are passed over, so a client that
// lists JSON after them, as client-go does, gets JSON. With nothing it can
// serve it answers the real server's 406 NotAcceptable.
func Negotiate(accept string) (Output, *Error) {
	if strings.TrimSpace(accept) == "" {
		return Output{}, nil
	}
	for _, c := range parseAccept(accept) {
		if c.typ != "application/json" && c.typ != "application/*" && c.typ != "*/*" {
			continue
		}
		as := c.params["as"]
		switch {
		case as == "" && c.params["g"] == "" && c.params["v"] == "":
			return Output{}, nil
		case as == "Table" && c.params["g"] == "meta.k8s.io" && (c.params["v"] == "v1" || c.params["v"] == "v1beta1"):
			return Output{Table: true, TableVersion: c.params["v"]}, nil
		}
	}
	return Output{}, &Error{Code: http.StatusNotAcceptable, Reason: "NotAcceptable",
		Message: "only the following media types are accepted: " + served}
}

type clause struct {
	typ    string
	q      float64
	params map[string]string
}

// parseAccept splits an Accept header into its clauses, most preferred
// first: higher quality, then a concrete type before a wildcard, then more
// parameters before fewer; ties keep their order.
func parseAccept(accept string) []clause {
	var cs []clause
	for part := range strings.SplitSeq(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		c := clause{typ: mt, q: 1, params: params}
		if q, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil {
				c.q = f
			}
			delete(params, "q")
		}
		if c.q > 0 {
			cs = append(cs, c)
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.q != b.q {
			return a.q > b.q
		}
		if wa, wb := wildcards(a.typ), wildcards(b.typ); wa != wb {
			return wa < wb
		}
		return len(a.params) > len(b.params)
	})
	return cs
}

func wildcards(mt string) int { return strings.Count(mt, "*") }

// CheckBody answers the real server's 415 UnsupportedMediaType for a
// request body in a media type the core cannot read: anything but JSON.
// An empty Content-Type is JSON, as on the real server. The message names
// the types it reads, so that a client sending protobuf or CBOR learns
// what to send instead.
func CheckBody(contentType string) *Error {
	if contentType == "" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && mt == "application/json" {
		return nil
	}
	return &Error{Code: http.StatusUnsupportedMediaType, Reason: "UnsupportedMediaType",
		Message: "the body of the request was in an unknown format - accepted media types include: " + served}
}
