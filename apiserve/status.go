package apiserve

import (
	"encoding/json"
	"net/http"
)

// Error is a failure the core answers with a metav1.Status, as the real
// server words it.
type Error struct {
	Code    int
	Reason  string
	Message string
}

func (e *Error) Error() string { return e.Message }

// Write answers with e as a Status object, laid out as the real server
// lays one out.
func (e *Error) Write(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Code)
	_ = json.NewEncoder(w).Encode(struct {
		Kind       string   `json:"kind"`
		APIVersion string   `json:"apiVersion"`
		Metadata   struct{} `json:"metadata"`
		Status     string   `json:"status"`
		Message    string   `json:"message"`
		Reason     string   `json:"reason"`
		Code       int      `json:"code"`
	}{Kind: "Status", APIVersion: "v1", Status: "Failure", Message: e.Message, Reason: e.Reason, Code: e.Code})
}
