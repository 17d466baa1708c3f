package raw

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An escape is refused for what it is once all its bytes are there, as
// encoding/json refuses it, even when the input ends right after it; an
// escape the input cuts is a truncation. The hex digits of \u escapes
// are 0-9, a-f and A-F, the letters' ends included.
func TestValidateEscapes(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr string // "" for valid
	}{
		{`"\x`, "invalid escape"},
		{`"\u12x4`, "invalid escape"},
		{`"\`, "truncated"},
		{`"\u12`, "truncated"},
		{`"\u1234`, "truncated"},
		{`"\n`, "truncated"},
		{`"\u000a"`, ""},
		{`"\u000A"`, ""},
		{`"\uFfAa"`, ""},
		{`"\u0f0F"`, ""},
		{`"\u000\"`, "invalid escape"},
	} {
		err := Validate([]byte(tc.in))
		jerr := json.Unmarshal([]byte(tc.in), new(string))
		if tc.wantErr == "" {
			require.NoError(t, err, tc.in)
			require.NoError(t, jerr, tc.in)
			continue
		}
		require.ErrorContains(t, err, tc.wantErr, tc.in)
		require.Error(t, jerr, tc.in)
		if tc.wantErr == "invalid escape" {
			assert.ErrorContains(t, jerr, "escape", tc.in)
		}
	}
	o, err := NewObject([]byte(`{"metadata":{"name":"\u0061\u00Af"}}`))
	require.NoError(t, err)
	assert.Equal(t, "a\u00af", o.Name())
}
