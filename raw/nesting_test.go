package raw

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStreamNestingLimit: a watch event nested exactly as deep as
// encoding/json decodes (maxDepth, the event itself being depth 1) is
// accepted whatever its innermost container holds: strings, numbers,
// literals, keys, commas, colons, empty containers; one level more is
// refused as nested too deep, whichever bracket opens it; and a wrong
// token at the deepest level is reported as that, not as nesting.
func TestStreamNestingLimit(t *testing.T) {
	// In `{"type":..,"object":{..,"spec":X}}` X's outer bracket is at depth
	// 3: levels brackets around inner put inner's own at depth 3+levels.
	nest := func(levels int, inner string) string {
		return strings.Repeat("[", levels) + inner + strings.Repeat("]", levels)
	}
	const atMax = maxDepth - 3 // inner's bracket at maxDepth
	for _, tc := range []struct {
		spec string
		err  string // "" for accepted
	}{
		{nest(atMax, `[ "s" , -1.5e3,true,false,null,"t",0]`), ""},
		{nest(atMax, `["a","b"]`), ""},
		{nest(atMax, `{"k":"v","n":1,"t":true, "e" : "" ,"z":null}`), ""},
		{nest(atMax, `{"k":-0.5}`), ""},
		{nest(atMax, `[]`), ""},
		{nest(atMax, `{}`), ""},
		{nest(atMax-1, `[[],{},[ ],{ }]`), ""},

		{nest(atMax+1, `[]`), "values nested deeper than 10000"},
		{nest(atMax+1, `{}`), "values nested deeper than 10000"},
		{nest(atMax+1, `[1]`), "values nested deeper than 10000"},
		{nest(atMax+1, `{"a":1}`), "values nested deeper than 10000"},
		{nest(atMax, `["a",[1]]`), "values nested deeper than 10000"},
		{nest(atMax, `{"a":{}}`), "values nested deeper than 10000"},
		{nest(atMax, `{"a":[1]}`), "values nested deeper than 10000"},

		{nest(atMax, `[1:2]`), "expected ',' or ']', found ':'"},
		{nest(atMax, `["a":2]`), `expected a value or ']', found '"' and ':'`},
		{nest(atMax, `{"a" 1}`), "expected ':' after a key, found '1'"},
		{nest(atMax, `{"a":1 "b":2}`), "expected ',' or '}', found '\"'"},
		{nest(atMax, `{"a",1}`), `expected a key or '}', found '"' and ','`},
	} {
		frame := `{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":` + tc.spec + "}}\n"
		short := tc.spec[len(tc.spec)/2-20 : len(tc.spec)/2+20]
		require.Equal(t, tc.err == "", json.Valid([]byte(frame)), "encoding/json on ...%s...", short)
		ev, err := newTestWatcher(strings.NewReader(frame), &Decoder{}).Next()
		if tc.err == "" {
			require.NoError(t, err, "...%s...", short)
			require.Equal(t, "a", ev.Object.Name())
			var v map[string]any
			require.NoError(t, ev.Object.Decode(&v), "...%s...", short)
			continue
		}
		require.ErrorIs(t, err, errInvalidJSON, "...%s...", short)
		require.ErrorContains(t, err, tc.err, "...%s...", short)
	}
}
