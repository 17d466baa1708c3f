package store_test

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// obj is a minimal Named, Versioned test object.
type obj struct{ ns, name, rv, data string }

func (o *obj) Namespace() string       { return o.ns }
func (o *obj) Name() string            { return o.name }
func (o *obj) ResourceVersion() string { return o.rv }

var key = store.MetaNamespaceKey[*obj]

func sorted(s []string) []string { sort.Strings(s); return s }

// conformance 48
func TestMetaNamespaceKey(t *testing.T) {
	for _, tc := range []struct {
		ns, name, want string
		err            error
	}{
		{"default", "web", "default/web", nil},
		{"", "node-1", "node-1", nil},
		{"default", "", "", store.ErrNoName},
	} {
		got, err := key(&obj{ns: tc.ns, name: tc.name})
		require.ErrorIs(t, err, tc.err, "%s/%s", tc.ns, tc.name)
		assert.Equal(t, tc.want, got)
	}
}

// conformance 48
func TestSplitKey(t *testing.T) {
	for _, tc := range []struct {
		key, ns, name string
		bad           bool
	}{
		{key: "default/web", ns: "default", name: "web"},
		{key: "node-1", name: "node-1"},
		{key: "/web", name: "web"},
		{key: "", name: ""},
		{key: "a/b/c", bad: true},
		{key: "a//", bad: true},
	} {
		ns, name, err := store.SplitKey(tc.key)
		if tc.bad {
			require.Error(t, err, tc.key)
			assert.Contains(t, err.Error(), tc.key)
			continue
		}
		require.NoError(t, err, tc.key)
		assert.Equal(t, [2]string{tc.ns, tc.name}, [2]string{ns, name}, tc.key)
	}
}

// conformance 50
func TestAddUpdateDelete(t *testing.T) {
	c := store.New(key)
	a1 := &obj{ns: "ns", name: "a", data: "1"}
	a2 := &obj{ns: "ns", name: "a", data: "2"}
	b := &obj{name: "b"}

	require.NoError(t, c.Add(a1))
	require.NoError(t, c.Add(b))
	require.NoError(t, c.Add(a2), "Add of an existing key is an upsert")
	got, ok, err := c.Get(&obj{ns: "ns", name: "a"})
	require.NoError(t, err)
	require.True(t, ok)
	assert.Same(t, a2, got, "reads hand out the stored object, not a copy")

	require.NoError(t, c.Update(a1))
	got, _, _ = c.GetByKey("ns/a")
	assert.Same(t, a1, got)
	require.NoError(t, c.Update(&obj{name: "c"}), "Update of a new key is an add")
	assert.Equal(t, []string{"b", "c", "ns/a"}, sorted(c.ListKeys()))

	require.NoError(t, c.Delete(b))
	require.NoError(t, c.Delete(b), "deleting a missing key is a no-op")
	require.NoError(t, c.Delete(&obj{name: "never"}))
	assert.Equal(t, []string{"c", "ns/a"}, sorted(c.ListKeys()))
	assert.Len(t, c.List(), 2)
	assert.Equal(t, 2, c.Len())
	_, ok, err = c.GetByKey("b")
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestKeyErrorsAreReturned(t *testing.T) {
	boom := errors.New("boom")
	c := store.New(func(*obj) (string, error) { return "", boom })
	o := &obj{name: "a"}
	for name, err := range map[string]error{
		"add":     c.Add(o),
		"update":  c.Update(o),
		"delete":  c.Delete(o),
		"replace": c.Replace([]*obj{o}, "1"),
	} {
		require.ErrorIs(t, err, boom, name)
		assert.Contains(t, err.Error(), name)
	}
	_, _, err := c.Get(o)
	require.ErrorIs(t, err, boom)
	assert.Empty(t, c.ListKeys())

	nameless := store.New(key)
	require.ErrorIs(t, nameless.Add(&obj{ns: "x"}), store.ErrNoName)

	var nilKey store.KeyFunc[*obj]
	require.ErrorIs(t, store.New(nilKey).Add(o), store.ErrNoKeyFunc)
}

// conformance 51
func TestReplace(t *testing.T) {
	c := store.New(key)
	require.NoError(t, c.Add(&obj{name: "old"}))
	require.NoError(t, c.Replace([]*obj{{name: "a"}, {name: "b"}}, "42"))
	assert.Equal(t, []string{"a", "b"}, sorted(c.ListKeys()))
	assert.Equal(t, "42", c.LastResourceVersion())
	require.NoError(t, c.Resync(), "a plain store has nothing to resync")
	assert.Equal(t, []string{"a", "b"}, sorted(c.ListKeys()))

	// A bad item leaves the store untouched.
	err := c.Replace([]*obj{{name: "c"}, {ns: "x"}}, "43")
	require.ErrorIs(t, err, store.ErrNoName)
	assert.Equal(t, []string{"a", "b"}, sorted(c.ListKeys()))
	assert.Equal(t, "42", c.LastResourceVersion())
}

// conformance 57
func TestTransform(t *testing.T) {
	c := store.New(key)
	c.Transform = func(o *obj) (*obj, error) {
		if o.data == "bad" {
			return nil, errors.New("cannot transform")
		}
		return &obj{ns: o.ns, name: o.name, data: "t:" + o.data}, nil
	}
	require.NoError(t, c.Add(&obj{name: "a", data: "1"}))
	require.NoError(t, c.Update(&obj{name: "b", data: "2"}))
	require.NoError(t, c.Replace([]*obj{{name: "c", data: "3"}, {name: "d", data: "4"}}, "9"))
	require.NoError(t, c.Add(&obj{name: "e", data: "5"}))
	var data []string
	for _, o := range c.List() {
		data = append(data, o.data)
	}
	assert.Equal(t, []string{"t:3", "t:4", "t:5"}, sorted(data))

	err := c.Add(&obj{name: "f", data: "bad"})
	require.ErrorContains(t, err, "cannot transform")
	require.ErrorContains(t, err, `"f"`)
	_, ok, _ := c.GetByKey("f")
	assert.False(t, ok, "a failed transform stores nothing")
}

// conformance 58
func TestLastResourceVersion(t *testing.T) {
	c := store.New(key)
	assert.Equal(t, "", c.LastResourceVersion())
	require.NoError(t, c.Replace(nil, "10"))
	assert.Equal(t, "10", c.LastResourceVersion())
	require.NoError(t, c.Add(&obj{name: "a", rv: "11"}))
	assert.Equal(t, "11", c.LastResourceVersion())
	require.NoError(t, c.Update(&obj{name: "a"}), "an object without a version keeps the last one")
	assert.Equal(t, "11", c.LastResourceVersion())
	require.NoError(t, c.Delete(&obj{name: "a", rv: "12"}))
	assert.Equal(t, "12", c.LastResourceVersion())
	require.NoError(t, c.Replace(nil, "5"), "Replace sets the version as given")
	assert.Equal(t, "5", c.LastResourceVersion())
}

func TestConcurrentReadersAndWriters(t *testing.T) {
	c := store.New(key)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				o := &obj{ns: "ns", name: fmt.Sprint(w, "-", i%20)}
				switch i % 4 {
				case 0, 1:
					assert.NoError(t, c.Add(o))
				case 2:
					assert.NoError(t, c.Delete(o))
				case 3:
					assert.NoError(t, c.Replace([]*obj{o}, fmt.Sprint(i)))
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				for _, k := range c.ListKeys() {
					_, _, err := c.GetByKey(k)
					assert.NoError(t, err)
				}
				_ = c.List()
				_ = c.LastResourceVersion()
			}
		})
	}
	wg.Wait()
}
