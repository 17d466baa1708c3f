package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var deployments = httpwatch.Resource{Group: "apps", Version: "v1", Resource: "deployments"}

func statusError(t *testing.T, err error) *httpwatch.StatusError {
	t.Helper()
	var se *httpwatch.StatusError
	require.True(t, errors.As(err, &se), "want a *StatusError, got %v", err)
	return se
}

// Server-side apply creates, re-applies without a write, refuses to take a
// field from another manager (409 naming the field and its owner) unless
// forced.
func TestApply(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	cms := c.Resource(configMaps).Namespace(namespace(t, c))
	cfg := func(v string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"x":%q}}`, v)
	}

	created, err := cms.Apply(ctx, cfg("1"), httpwatch.WriteOptions{FieldManager: "alice"})
	require.NoError(t, err)
	again, err := cms.Apply(ctx, cfg("1"), httpwatch.WriteOptions{FieldManager: "alice"})
	require.NoError(t, err)
	assert.Equal(t, created.ResourceVersion(), again.ResourceVersion(), "an apply that changes nothing writes nothing")

	_, err = cms.Apply(ctx, cfg("2"), httpwatch.WriteOptions{FieldManager: "bob"})
	require.True(t, httpwatch.IsConflict(err), "%v", err)
	se := statusError(t, err)
	assert.Equal(t, 409, se.Code)
	assert.Equal(t, `Apply failed with 1 conflict: conflict with "alice": .data.x`, se.Message)
	require.Len(t, se.Details.Causes, 1)
	assert.Equal(t, httpwatch.StatusCause{Reason: "FieldManagerConflict", Message: `conflict with "alice"`, Field: ".data.x"}, se.Details.Causes[0])

	_, err = cms.Apply(ctx, cfg("2"), httpwatch.WriteOptions{})
	assert.ErrorContains(t, err, "server-side apply needs a field manager")

	cms.KeepManagedFields = true
	forced, err := cms.Apply(ctx, cfg("2"), httpwatch.WriteOptions{FieldManager: "bob", Force: true})
	require.NoError(t, err)
	assert.Equal(t, "2", forced.Get("data.x").String())
	assert.Equal(t, "bob", forced.Get(`metadata.managedFields.#(operation=="Apply").manager`).String(), "bob took the field over")
}

// A dry run is checked and answered but not stored.
func TestDryRun(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	dry := httpwatch.WriteOptions{DryRun: true}

	o, err := cms.Create(ctx, configMap(ns, "ghost", "1"), dry)
	require.NoError(t, err)
	assert.Equal(t, "ghost", o.Name())
	assert.Empty(t, o.ResourceVersion(), "a dry-run create has no resourceVersion")
	_, err = cms.Get(ctx, "ghost")
	assert.True(t, httpwatch.IsNotFound(err), "%v", err)

	stored, err := cms.Create(ctx, configMap(ns, "real", "1"))
	require.NoError(t, err)
	patched, err := cms.Patch(ctx, "real", httpwatch.MergePatch, []byte(`{"data":{"v":"2"}}`), dry)
	require.NoError(t, err)
	assert.Equal(t, "2", patched.Get("data.v").String())
	assert.Equal(t, stored.ResourceVersion(), patched.ResourceVersion(), "the answer keeps the stored version")
	_, err = cms.Apply(ctx, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"real"},"data":{"v":"3"}}`),
		httpwatch.WriteOptions{FieldManager: "m", Force: true, DryRun: true})
	require.NoError(t, err)
	require.NoError(t, cms.Delete(ctx, "real", httpwatch.DeleteOptions{DryRun: true}))

	now, err := cms.Get(ctx, "real")
	require.NoError(t, err)
	assert.Equal(t, stored.ResourceVersion(), now.ResourceVersion())
	assert.Equal(t, "1", now.Get("data.v").String())
}

// Strict field validation refuses unknown fields with 400 BadRequest; the
// default, Warn, stores the object and the server's warning is logged.
func TestFieldValidation(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	var logged syncBuffer
	c.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	bogus := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":%q},"bogus":1}`, ns)
	_, err := cms.Create(ctx, bogus, httpwatch.WriteOptions{FieldValidation: httpwatch.FieldValidationStrict})
	se := statusError(t, err)
	assert.Equal(t, 400, se.Code)
	assert.Equal(t, "BadRequest", se.Reason)
	assert.Contains(t, se.Message, `strict decoding error: unknown field "bogus"`)
	_, err = cms.Create(ctx, bogus, httpwatch.WriteOptions{FieldValidation: httpwatch.FieldValidationIgnore, FieldManager: "quiet", DryRun: true})
	require.NoError(t, err)
	assert.Empty(t, logged.String())
	_, err = cms.Create(ctx, bogus)
	require.NoError(t, err)
	assert.Contains(t, logged.String(), `msg="httpwatch: server warning" verb=POST path=/api/v1/namespaces/`+ns+`/configmaps warning="unknown field \"bogus\""`)
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A stale resourceVersion is a 409; RetryOnConflict reads afresh and wins.
func TestConflictRetry(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	stale, err := cms.Create(ctx, configMap(ns, "a", "1"))
	require.NoError(t, err)
	_, err = cms.Patch(ctx, "a", httpwatch.MergePatch, []byte(`{"data":{"v":"2"}}`))
	require.NoError(t, err)

	attempts := 0
	err = httpwatch.RetryOnConflict(ctx, func(ctx context.Context) error {
		attempts++
		cur := stale
		if attempts > 1 {
			if cur, err = cms.Get(ctx, "a"); err != nil {
				return err
			}
		}
		_, err := cms.Update(ctx, withData(t, cur, "3"))
		if attempts == 1 {
			assert.True(t, httpwatch.IsConflict(err), "%v", err)
		}
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, 2, attempts)
	now, err := cms.Get(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, "3", now.Get("data.v").String())

	// A merge patch carrying a resourceVersion is checked against it too.
	_, err = cms.Patch(ctx, "a", httpwatch.MergePatch, fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q},"data":{"v":"4"}}`, stale.ResourceVersion()))
	assert.True(t, httpwatch.IsConflict(err), "%v", err)
}

// withData returns o's JSON with data.v set to v.
func withData(t *testing.T, o *raw.Object, v string) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, o.Decode(&m))
	m["data"] = map[string]any{"v": v}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// Every write of a namespaced resource's objects needs a namespace, the
// client's or the object's: without one it fails before it is sent.
func TestWritesNeedANamespace(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	all := c.Resource(configMaps)
	noNS := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
	for name, write := range map[string]func() error{
		"create": func() error { _, err := all.Create(ctx, noNS); return err },
		"update": func() error { _, err := all.Update(ctx, noNS); return err },
		"apply": func() error {
			_, err := all.Apply(ctx, noNS, httpwatch.WriteOptions{FieldManager: "m"})
			return err
		},
		"patch":             func() error { _, err := all.Patch(ctx, "a", httpwatch.MergePatch, []byte(`{}`)); return err },
		"status":            func() error { _, err := all.Subresource("status").Get(ctx, "a"); return err },
		"delete":            func() error { return all.Delete(ctx, "a") },
		"delete collection": func() error { return all.DeleteCollection(ctx, httpwatch.ListOptions{}) },
	} {
		assert.ErrorIs(t, write(), httpwatch.ErrNamespaceRequired, name)
	}
	// The object's own namespace is enough for writes of whole objects.
	o, err := all.Create(ctx, configMap(ns, "a", "1"))
	require.NoError(t, err)
	assert.Equal(t, ns, o.Namespace())
}
