package raw

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A projection may keep maxKids names in one object (the bit mask of those
// found is then full): every one of them is kept, and the members after
// them are not.
func TestProjectionKeepsAsManyNamesAsAllowed(t *testing.T) {
	var paths, kept []string
	for i := range maxKids {
		paths = append(paths, fmt.Sprintf("spec.f%d", i))
		kept = append(kept, fmt.Sprintf(`"f%d":%d`, i, i))
	}
	spec := `{"before":0,` + strings.Join(kept, ",") + `,"after":{"x":1}}`
	o := project(t, `{"metadata":{"name":"a"},"spec":`+spec+`,"status":{}}`, false, paths...)
	assert.Equal(t, `{"metadata":{"name":"a"},"spec":{`+strings.Join(kept, ",")+`}}`, o.String())
}
