package httpwatch

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/require"
)

// A password in Host never shows in NewClient's errors.
func TestNewClientErrorsHidePassword(t *testing.T) {
	for _, host := range []string{
		"http://admin:hunter2@127.0.0.1:bad-port",
		"ftp://admin:hunter2@127.0.0.1",
		"http://admin:hunter2@",
		"http://admin:hunter2@10.0.0.1:6443/%zz",
		"http://admin:hunter2@[::1",
	} {
		_, err := NewClient(&kubeconfig.Config{Host: host})
		require.Error(t, err, host)
		require.NotContains(t, err.Error(), "hunter2", host)
		require.Contains(t, err.Error(), "httpwatch: new client: host ")
	}
}

// A server (or a proxy in front of it) that echoes the credential in an
// error body does not get it into the error.
func TestStatusErrorHidesEchoedCredential(t *testing.T) {
	bearer := kubeconfig.Config{BearerToken: "hunter2-token"}
	basic := kubeconfig.Config{Username: "admin", Password: "hunter2-password"}
	// A credential the library did not add (a custom Transport's) is
	// caught by its shape.
	none := kubeconfig.Config{}
	tests := []struct {
		name string
		cfg  kubeconfig.Config
		body string
	}{
		{"header echoed", bearer, "Unauthorized: the request had Authorization: Bearer hunter2-token"},
		{"bare token", bearer, "token hunter2-token has expired"},
		{"status message", bearer, `{"kind":"Status","apiVersion":"v1","status":"Failure","code":401,"reason":"Unauthorized","message":"invalid bearer token hunter2-token"}`},
		{"basic echoed", basic, "bad credentials in Authorization: Basic YWRtaW46aHVudGVyMi1wYXNzd29yZA=="},
		{"password", basic, "user admin, password hunter2-password: denied"},
		{"foreign bearer", none, "rejected Authorization: Bearer hunter2.other-token"},
		{"foreign basic", none, "rejected authorization: basic aHVudGVyMjpodW50ZXIy"},
		{"jwt", none, "rejected eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJodW50ZXIyIn0.c2lnbmF0dXJlaHVudGVyMg"},
	}
	for _, tt := range tests {
		for _, code := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError} {
			t.Run(tt.name+"/"+http.StatusText(code), func(t *testing.T) {
				srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
					w.WriteHeader(code)
					io.WriteString(w, tt.body)
				})
				cfg := tt.cfg
				cfg.Host = srv.URL
				c, rc := podsClient(t, &cfg)
				c.RetryMax = 0
				_, listErr := rc.List(context.Background(), ListOptions{})
				_, watchErr := rc.Watch(context.Background(), ListOptions{})
				for _, err := range []error{listErr, watchErr} {
					require.Error(t, err)
					require.NotContains(t, err.Error(), "hunter2")
					_, ok := asStatus(err)
					require.True(t, ok)
					require.Contains(t, err.Error(), "<redacted>", "the message stays, with the secret cut out")
				}
			})
		}
	}
}
