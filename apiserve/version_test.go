package apiserve_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/apiserve"
)

// Decision 40: /version answers as a 1.37.2 release does, each field given
// replacing the default.
func TestVersionAnswersAsTheRelease(t *testing.T) {
	rec := httptest.NewRecorder()
	apiserve.Version{GitCommit: "abc"}.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/version", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var v map[string]string
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	require.Equal(t, map[string]string{
		"major": "1", "minor": "37", "emulationMajor": "1", "emulationMinor": "37",
		"minCompatibilityMajor": "1", "minCompatibilityMinor": "36",
		"gitVersion": "v1.37.2", "gitCommit": "abc", "gitTreeState": "clean", "buildDate": "1970-01-01T00:00:00Z",
		"goVersion": runtime.Version(), "compiler": runtime.Compiler, "platform": runtime.GOOS + "/" + runtime.GOARCH,
	}, v)
}
