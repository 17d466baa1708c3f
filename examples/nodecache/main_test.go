package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestServesTheNodesPods runs the command against its demo server and
// reads the node's pods through the socket and the loopback listener, as
// kubectl would (decision 43); a write with the client's own token is
// forwarded to the API server, and one through the socket without a token
// is refused (decision 45).
func TestServesTheNodesPods(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "pods.sock")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--socket", sock, "--listen", "127.0.0.1:0", "--review=false", "--snapshot-dir", t.TempDir()}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan())
	require.Contains(t, lines.Text(), "serving the pods of node-1")
	require.True(t, lines.Scan())
	addr := strings.TrimSuffix(strings.Fields(lines.Text())[2], ":")
	go func() { _, _ = io.Copy(io.Discard, out) }()

	unix := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer unix.CloseIdleConnections()
	for _, c := range []struct {
		client *http.Client
		url    string
	}{
		{unix, "http://local/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1"},
		{http.DefaultClient, addr + "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1"},
	} {
		var names []string
		require.Eventually(t, func() bool { // 429 until the first sync
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
			resp, err := c.client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return false
			}
			var l struct {
				Items []struct{ Metadata struct{ Name string } }
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&l))
			names = names[:0]
			for _, it := range l.Items {
				names = append(names, it.Metadata.Name)
			}
			return true
		}, 10*time.Second, 10*time.Millisecond)
		require.Equal(t, []string{"web-1", "proxy-1"}, names, c.url)
	}
	for _, c := range []struct {
		client *http.Client
		url    string
		auth   string
		code   int
	}{
		{unix, "http://local/api/v1/namespaces/default/configmaps", "", http.StatusForbidden},
		{http.DefaultClient, addr + "/api/v1/namespaces/default/configmaps", "Bearer own-token", http.StatusCreated},
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(`{"metadata":{"name":"made-here"}}`))
		req.Header.Set("Content-Type", "application/json")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := c.client.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, c.code, resp.StatusCode, "%s", body)
	}
	cancel()
	require.NoError(t, <-done)
}

// TestServesOverTLS runs the command with a certificate: its TCP listener
// is https, as kubectl needs to send a token (decision 45).
func TestServesOverTLS(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeSelfSigned(t, cert, key)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--socket", filepath.Join(dir, "pods.sock"), "--listen", "127.0.0.1:0", "--review=false",
			"--snapshot-dir", "", "--tls-cert", cert, "--tls-key", key}, w, io.Discard)
		w.Close()
	}()
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan())
	require.True(t, lines.Scan())
	addr := strings.TrimSuffix(strings.Fields(lines.Text())[2], ":")
	require.True(t, strings.HasPrefix(addr, "https://"), lines.Text())
	go func() { _, _ = io.Copy(io.Discard, out) }()
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} // the test's own certificate
	defer hc.CloseIdleConnections()
	require.Eventually(t, func() bool { // 429 until the first sync
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, addr+"/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-1", nil)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond)
	cancel()
	require.NoError(t, <-done)
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key.
func writeSelfSigned(t *testing.T, certFile, keyFile string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nodecache"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	kb, err := x509.MarshalECPrivateKey(k)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600))
}
