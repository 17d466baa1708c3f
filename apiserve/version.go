package apiserve

import (
	"encoding/json"
	"net/http"
	"runtime"
)

// Version is what /version answers, as the real server's version.Info.
// The zero value of a field takes kube-apiserver 1.37.2's.
type Version struct {
	Major                 string `json:"major"`
	Minor                 string `json:"minor"`
	EmulationMajor        string `json:"emulationMajor,omitempty"`
	EmulationMinor        string `json:"emulationMinor,omitempty"`
	MinCompatibilityMajor string `json:"minCompatibilityMajor,omitempty"`
	MinCompatibilityMinor string `json:"minCompatibilityMinor,omitempty"`
	GitVersion            string `json:"gitVersion"`
	GitCommit             string `json:"gitCommit"`
	GitTreeState          string `json:"gitTreeState"`
	BuildDate             string `json:"buildDate"`
	GoVersion             string `json:"goVersion"`
	Compiler              string `json:"compiler"`
	Platform              string `json:"platform"`
}

// WithDefaults returns v with each empty field filled as a 1.37.2 release
// build on this machine fills it.
func (v Version) WithDefaults() Version {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&v.Major, "1")
	def(&v.Minor, "37")
	def(&v.EmulationMajor, "1")
	def(&v.EmulationMinor, "37")
	def(&v.MinCompatibilityMajor, "1")
	def(&v.MinCompatibilityMinor, "36")
	def(&v.GitVersion, "v1.37.2")
	def(&v.GitCommit, "$Format:%H$")
	def(&v.GitTreeState, "clean")
	def(&v.BuildDate, "1970-01-01T00:00:00Z")
	def(&v.GoVersion, runtime.Version())
	def(&v.Compiler, runtime.Compiler)
	def(&v.Platform, runtime.GOOS+"/"+runtime.GOARCH)
	return v
}

// ServeHTTP answers /version with v's defaults filled in.
func (v Version) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	b, _ := json.MarshalIndent(v.WithDefaults(), "", "  ") // a struct of strings
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
