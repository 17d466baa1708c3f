package raw

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSkipValueRefusesTheOtherClosingBracket: skipValue and skipRest
// check balance only, but the bracket that ends the value must be of its
// kind (containerScanner's one grammar check), in the byte loop and in
// the 64-byte blocks alike: a mismatch is errMismatch at that bracket.
func TestSkipValueRefusesTheOtherClosingBracket(t *testing.T) {
	for _, pad := range []int{0, 10, 57, 64, 100} {
		p := strings.Repeat("x", pad)
		for _, tc := range []struct {
			value string
			err   bool
		}{
			{`{"p":"` + p + `","a":1]`, true},
			{`["` + p + `",1,2}`, true},
			{`{"p":"` + p + `","a":[1,{"b":2}]]`, true},
			{`[{"p":"` + p + `"},[1]}`, true},
			{`{"p":"` + p + `","a":"]"}`, false},
			{`["` + p + `","}",[{}]]`, false},
		} {
			in := " " + tc.value + ` ,"next":1}`
			start, end, err := skipValue([]byte(in), 0)
			require.Equal(t, 1, start)
			closeAt := 1 + len(tc.value) - 1
			require.Equal(t, closeAt+1, end, in)
			if !tc.err {
				require.NoError(t, err, in)
				continue
			}
			require.ErrorIs(t, err, errMismatch, in)
			require.ErrorContains(t, err, fmt.Sprintf("at byte %d", closeAt), in)
		}
		// skipRest: the members of an object from between two of them.
		for _, tc := range []struct {
			rest string
			err  bool
		}{
			{`,"p":"` + p + `","a":1]`, true},
			{`,"p":["` + p + `",{"b":[]}]]`, true},
			{`,"p":"` + p + `","a":1}`, false},
		} {
			in := `{"z":0` + tc.rest + ` "after"`
			end, err := skipRest([]byte(in), len(`{"z":0`))
			closeAt := len(`{"z":0`) + len(tc.rest) - 1
			require.Equal(t, closeAt+1, end, in)
			if !tc.err {
				require.NoError(t, err, in)
				continue
			}
			require.ErrorIs(t, err, errMismatch, in)
			require.ErrorContains(t, err, fmt.Sprintf("at byte %d", closeAt), in)
		}
	}
}
