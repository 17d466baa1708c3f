package selector

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFieldsCanonical(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{" , ", ""},
		{"metadata.name=web-1", "metadata.name=web-1"},
		{"metadata.name==web-1", "metadata.name=web-1"},
		{"status.phase!=Running", "status.phase!=Running"},
		{" spec.nodeName = ", "spec.nodeName="},
		{"metadata.namespace=b,metadata.name=a", "metadata.name=a,metadata.namespace=b"},
		{`a=x\,y`, `a=x\,y`},
		{`a=x\=y`, `a=x\=y`},
		{`a=x\\y`, `a=x\\y`},
		{"a=b,", "a=b"},
		{"a=b c", "a=b c"},
		{"spec.x/y_z-1=v", "spec.x/y_z-1=v"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := ParseFields(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.String())
			again, err := ParseFields(s.String())
			require.NoError(t, err)
			assert.Equal(t, s, again)
			assert.Equal(t, tt.want == "", s.Empty())
		})
	}
}

func TestParseFieldsValues(t *testing.T) {
	s, err := ParseFields(`b!=x\,y\=z\\,a==1`)
	require.NoError(t, err)
	assert.Equal(t, []FieldTerm{
		{Path: "a", Op: Equals, Value: "1"},
		{Path: "b", Op: NotEquals, Value: `x,y=z\`},
	}, s.Terms())
}

func TestParseFieldsErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		{"metadata.name", 0, "found 'metadata.name', expected: path=value"},
		{"a=b,c", 4, "found 'c', expected"},
		{"=b", 0, "expected: a field path"},
		{"a=b, !=c", 5, "expected: a field path"},
		{"a b=c", 1, "invalid field path 'a b'"},
		{"a=b=c", 3, "found unescaped '='"},
		{"a===c", 3, "found unescaped '='"},
		{`a=x\y`, 3, "invalid escape sequence"},
		{`a= x\`, 4, "invalid escape sequence"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseFields(tt.in)
			require.Error(t, err)
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "error %v is not a *SyntaxError", err)
			assert.Equal(t, tt.offset, se.Offset, "%v", err)
			assert.Contains(t, se.Msg, tt.msg)
		})
	}
}

func TestFieldsMatches(t *testing.T) {
	fields := Set{"metadata.name": "web-1", "metadata.namespace": "prod", "status.phase": "Running"}
	tests := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"metadata.name=web-1", true},
		{"metadata.name==web-1", true},
		{"metadata.name=web-2", false},
		{"metadata.name!=web-2", true},
		{"metadata.name!=web-1", false},
		{"metadata.name=web-1,metadata.namespace=prod", true},
		{"metadata.name=web-1,metadata.namespace=dev", false},
		// A missing field reads as "", so these select unscheduled pods.
		{"spec.nodeName=", true},
		{"spec.nodeName!=", false},
		{"spec.nodeName=node-1", false},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			s, err := ParseFields(tt.sel)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Matches(fields))
		})
	}
	var zero FieldSelector
	assert.True(t, zero.Matches(nil))
}

func TestFieldsRequiresExactMatch(t *testing.T) {
	s, err := ParseFields("metadata.name=a,metadata.namespace!=b")
	require.NoError(t, err)
	v, ok := s.RequiresExactMatch("metadata.name")
	assert.True(t, ok)
	assert.Equal(t, "a", v)
	_, ok = s.RequiresExactMatch("metadata.namespace")
	assert.False(t, ok)
}
