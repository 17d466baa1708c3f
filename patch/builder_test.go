package patch_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/raw"
)

func object(t testing.TB, doc string) *raw.Object {
	t.Helper()
	o, err := raw.NewObject([]byte(doc))
	require.NoError(t, err)
	return o
}

const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a\"b","namespace":"ns","uid":"u-1","resourceVersion":"42"}}`

func TestBuilders(t *testing.T) {
	o := object(t, cm)
	for _, tc := range []struct {
		name string
		b    *patch.Builder
		want string
	}{
		{"merge with resourceVersion", patch.Merge(o, patch.ResourceVersion).Set("metadata.labels.checked", "true"),
			`{"metadata":{"resourceVersion":"42","labels":{"checked":"true"}}}`},
		{"merge with uid", patch.Merge(o, patch.UID).Set("metadata.labels.checked", "true"),
			`{"metadata":{"uid":"u-1","labels":{"checked":"true"}}}`},
		{"merge without precondition", patch.Merge(o, patch.None).Remove("metadata.labels.old"),
			`{"metadata":{"labels":{"old":null}}}`},
		{"apply with identity", patch.Apply(o, patch.None).Set("data.k", "v"),
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a\"b","namespace":"ns"},"data":{"k":"v"}}`},
		{"apply with resourceVersion", patch.Apply(o, patch.ResourceVersion),
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a\"b","namespace":"ns","resourceVersion":"42"}}`},
		{"escaped dots", patch.New().Set(`metadata.labels.app\.kubernetes\.io/name`, "web"),
			`{"metadata":{"labels":{"app.kubernetes.io/name":"web"}}}`},
		{"Path escapes", patch.New().Set(patch.Path("a.b", `c\d`), 1),
			`{"a.b":{"c\\d":1}}`},
		{"escape as the first byte", patch.New().Set(patch.Path(".hidden", "x"), 1),
			`{".hidden":{"x":1}}`},
		{"hard strings", patch.New().Set("k", "q\"b\\n\n\t\x01\x7f é 日本 \u2028 \xff \x80"),
			`{"k":"q\"b\\n\n\t\u0001` + "\x7f é 日本 " + `\u2028 \ufffd \ufffd"}`},
		{"values", patch.New().Set("b", true).Set("i", 3).Set("f", 1.5).Set("n", nil).Set("l", []string{"x"}).Set("m", map[string]int{"z": 1}),
			`{"b":true,"i":3,"f":1.5,"n":null,"l":["x"],"m":{"z":1}}`},
		{"replace keeps order", patch.New().Set("a.x", 1).Set("b", 2).Set("a.x", 3),
			`{"a":{"x":3},"b":2}`},
		{"raw", patch.New().SetRaw("spec", []byte(`{"replicas":3}`)), `{"spec":{"replicas":3}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.b.Bytes()
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestBuilderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *patch.Builder
		want string
	}{
		{"empty name", patch.New().Set("a..b", 1), `bad path "a..b": empty member name`},
		{"empty path", patch.New().Set("", 1), `bad path "": empty member name`},
		{"lone backslash", patch.New().Set(`a\`, 1), `lone backslash`},
		{"backslash alone", patch.New().Set(`\`, 1), `lone backslash`},
		{"through a value", patch.New().Set("a", 1).Set("a.b", 2), `a is set to a value, not an object`},
		{"invalid raw", patch.New().SetRaw("a", []byte(`{`)), `invalid JSON value`},
		{"unencodable", patch.New().Set("a", func() {}), `unsupported type`},
		{"first error wins", patch.New().Set("", 1).Set("a..b", 2), `bad path ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.b.Bytes()
			require.ErrorContains(t, err, tc.want)
		})
	}
	_, err := patch.New().Set("a..b", 1).Bytes()
	assert.ErrorIs(t, err, patch.ErrPath)
}

// marshal is encoding/json's encoding, without its HTML escapes.
func marshal(t *testing.T, v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// The builders write names and values exactly as encoding/json does
// (without HTML escapes), whatever bytes they hold, and the body reads
// back as the names and values given.
func FuzzBuilders(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b`, `back\slash`, "nl\n", "bs\b", "ff\f", "\b\f\v\t\r", "\x00\x1f\x7f", "é日本", "\u2028\u2029", "\xff\xfe", "\x80", "a.b", `a\.b`, "<&>"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if name == "" {
			return
		}
		got, err := patch.New().Set(patch.Path("metadata", "labels", name), value).Bytes()
		require.NoError(t, err)
		want := marshal(t, map[string]map[string]map[string]string{"metadata": {"labels": {name: value}}})
		require.Equal(t, string(want), string(got))

		var back map[string]map[string]map[string]string
		require.NoError(t, json.Unmarshal(got, &back))
		require.Len(t, back["metadata"]["labels"], 1)
		if utf8.ValidString(name) && utf8.ValidString(value) {
			assert.Equal(t, value, back["metadata"]["labels"][name], "read back as given")
		}
	})
}
