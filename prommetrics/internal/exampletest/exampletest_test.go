package exampletest

import (
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Labels that match two series are reported, not settled by picking one:
// a test with too loose a selector must not pass by luck.
func TestValueNeedsExactlyOneSeries(t *testing.T) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(`# TYPE requests_total counter
requests_total{code="200",method="GET"} 3
requests_total{code="404",method="GET"} 1
`))
	require.NoError(t, err)
	s := Scraped(fams)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"one", map[string]string{"code": "404"}, 1},
		{"none", map[string]string{"code": "500"}, -1},
		{"two", map[string]string{"method": "GET"}, -2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, s.Value("requests_total", tc.labels))
		})
	}
	_, err = s.Series("requests_total", map[string]string{"method": "GET"})
	assert.ErrorContains(t, err, "more than one series")
	m, err := s.Series("missing_total", nil)
	assert.NoError(t, err)
	assert.Nil(t, m)
}
