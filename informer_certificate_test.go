package listwatch

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/testlog"
)

// decision 20, decision 21: a server whose certificate the client does
// not trust (here: no CA given, so the system roots) will not be trusted
// on the next try: one Error line at once, with what to check, and
// Wait returns the reason instead of waiting for ever.
func TestInformerWrongCAFailsFast(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1}) // the default RetryMax
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	inf := NewInformer(c.Resource(podsRes), 0)
	inf.Reflector.Name = "pods"
	inf.Reflector.Backoff = reflector.Backoff{Initial: time.Millisecond, Cap: time.Millisecond}
	logger, log := testlog.NewLogger()
	inf.Logger = logger
	runInBackground(t, inf)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = inf.Wait(ctx)
	require.Error(t, err)
	assert.NoError(t, ctx.Err(), "returned for the certificate, not the deadline")
	assert.True(t, httpwatch.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "x509")
	lines := log.Lines(slog.LevelWarn)
	require.NotEmpty(t, lines)
	assert.Equal(t, slog.LevelError, lines[0].Level, lines[0].Text)
	assert.Contains(t, lines[0].Text, "hint=check the CA (certificate-authority) and the server name")
}
