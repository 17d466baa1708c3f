package watchtest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tidwall/gjson"
)

// A selector the server cannot parse is its 400 with the words of its own
// parser, which clients log and people read (decision 7): the operators
// in and notin, the characters a label name may hold, the parts of a key,
// and the terms of a field selector.
func TestRefusedSelectorsAnswerInServerWords(t *testing.T) {
	s := newServer(t)
	const (
		op       = "unable to parse requirement: found '%s', expected: in, notin, =, ==, !=, gt, lt"
		nameRule = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
	)
	long := strings.Repeat("x", 63)
	for _, tc := range []struct {
		field, label string
		message      string
	}{
		// in and notin are operators after a key: what must follow is '('.
		{"", "a in b", "unable to parse requirement: found 'b' expected: '('"},
		{"", "a notin b", "unable to parse requirement: found 'b' expected: '('"},
		// Keys whose names are valid, so the parser goes on to the
		// missing operator: the letters and digits at both ends of their
		// ranges, '-', '_' and '.' inside, 63 characters, a prefix.
		{"", "zAZ09 b", strings.Replace(op, "%s", "b", 1)},
		{"", "a-b c", strings.Replace(op, "%s", "c", 1)},
		{"", "a_b c", strings.Replace(op, "%s", "c", 1)},
		{"", "a.b c", strings.Replace(op, "%s", "c", 1)},
		{"", long + " b", strings.Replace(op, "%s", "b", 1)},
		{"", "example.com/a b", strings.Replace(op, "%s", "b", 1)},
		// Keys the server refuses, with every reason it finds.
		{"", "-a", `unable to parse requirement: <nil>: Invalid value: "-a": ` + nameRule},
		{"", "a/-b", `unable to parse requirement: <nil>: Invalid value: "a/-b": ` + nameRule},
		{"", "/a", `unable to parse requirement: <nil>: Invalid value: "/a": prefix part must be non-empty`},
		{"", "a/", `unable to parse requirement: <nil>: Invalid value: "a/": name part must be non-empty; ` + nameRule},
		{"", long + "x", `unable to parse requirement: <nil>: Invalid value: "` + long + `x": name part must be no more than 63 bytes`},
		{"", long + "-", `unable to parse requirement: <nil>: Invalid value: "` + long + `-": name part must be no more than 63 bytes; ` + nameRule},
		// Each comma-separated term of a field selector needs an operator.
		{"metadata.name=x,y", "", "invalid selector: 'metadata.name=x,y'; can't understand 'y'"},
	} {
		q := url.Values{"fieldSelector": {tc.field}, "labelSelector": {tc.label}}
		code, body := get(t, s, podsPath("ns", "")+"?"+q.Encode())
		assert.Equal(t, http.StatusBadRequest, code, "%q %q: %s", tc.field, tc.label, body)
		assert.Equal(t, "BadRequest", gjson.GetBytes(body, "reason").String())
		assert.Equal(t, tc.message, gjson.GetBytes(body, "message").String(), "%q %q", tc.field, tc.label)
	}
}
