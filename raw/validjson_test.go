package raw

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/stretchr/testify/require"
)

// validCases are JSON texts on the edges of the grammar, valid or not.
var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0.5e+3`, `true`, `null`, ` {"a" : [ 1 , 2 ] } `,
	`{"a":{"b":[{},[],"",1,true,null]}}`,
	`{"a":[}]}`, `[{]}`, `{"a":1,}`, `[1,]`, `[,1]`, `{,}`, `{"a"}`, `{"a":}`,
	`{"a" 1}`, `{1:2}`, `["a""b"]`, `[1 2]`, `[1:2]`, `{"a":1"b":2}`, `[01]`,
	`[tru]`, `[truex]`, `[nul]`, `[1.]`, `[-]`, `["\x"]`, `["\u12"]`, `["\u12g4"]`,
	`["\u00e9\n\/\\\""]`, "[\"\x01\"]", "[\"\xff\xfe\"]", `{} {}`, `{}}`, `[`, `{"a":`,
	`"abc`, `[1,{"a":[2,{"b":3}]}]`, `{"a":[1,2}`, `{"a":{"b":1]}`, `[]]`,
	"[\t\n\r 1 ]", "[\v1]", `[1]x`, `x`, ``, ` `,
	strings.Repeat("[", 100) + strings.Repeat("]", 100),
	strings.Repeat("[", 100) + strings.Repeat("}", 100),
	strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70),
	strings.Repeat(`{"a":[`, 70) + strings.Repeat("]}", 69) + "}]",
	strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
	strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
}

// TestValidJSONMatchesEncodingJSON: Validate accepts exactly what
// json.Valid does, up to encoding/json's depth limit.
func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	for _, in := range validCases {
		require.Equal(t, json.Valid([]byte(in)), Validate([]byte(in)) == nil, "%.80q", in)
	}
	for _, fx := range fixtures.Names() {
		body := fixtures.Load(t, fx).Body
		require.Equal(t, json.Valid(body), Validate(body) == nil, fx)
	}
}

// FuzzValidJSON: Validate and json.Valid agree on any input.
func FuzzValidJSON(f *testing.F) {
	for _, in := range validCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := Validate(data) == nil, json.Valid(data); got != want {
			t.Fatalf("Validate %v, json.Valid %v on %q", got, want, data)
		}
	})
}
