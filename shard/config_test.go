package shard

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/leasetest"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	ok := Config{Leases: c.Resource(leasetest.Resource), Group: "g", Identity: "a"}
	m, err := New(ok)
	require.NoError(t, err)
	assert.Equal(t, "g-a", m.cfg.Name)
	assert.Equal(t, DefaultLeaseDuration, m.cfg.LeaseDuration)
	assert.Equal(t, DefaultRenewDeadline, m.cfg.RenewDeadline)
	assert.Equal(t, DefaultRetryPeriod, m.cfg.RetryPeriod)
	assert.Equal(t, clock.Real, m.cfg.Clock, "a nil Clock means the wall clock")
	assert.Same(t, slog.Default(), m.cfg.Logger, "a nil Logger means slog.Default()")

	for name, edit := range map[string]func(*Config){
		"no leases":            func(c *Config) { c.Leases = nil },
		"no group":             func(c *Config) { c.Group = "" },
		"no identity":          func(c *Config) { c.Identity = "" },
		"comma in identity":    func(c *Config) { c.Identity = "a,b" },
		"negative":             func(c *Config) { c.RetryPeriod = -time.Second },
		"renew beyond lease":   func(c *Config) { c.LeaseDuration, c.RenewDeadline = 5*time.Second, 5*time.Second },
		"retry beyond renewal": func(c *Config) { c.RenewDeadline, c.RetryPeriod = 2*time.Second, 2*time.Second },
	} {
		cfg := ok
		edit(&cfg)
		_, err := New(cfg)
		assert.ErrorIs(t, err, ErrConfig, name)
	}
}

// Rendezvous hashing: the owner does not depend on the order of members;
// removing a member moves only its keys; adding one moves keys only to it;
// and keys spread evenly.
func TestOwnerIsRendezvous(t *testing.T) {
	abc, ab := []string{"a", "b", "c"}, []string{"a", "b"}
	counts := map[string]int{}
	for i := range 3000 {
		key := "ns/cm-" + string(rune('a'+i%26)) + "-" + time.Duration(i).String()
		o := Owner(key, abc)
		assert.Equal(t, o, Owner(key, []string{"c", "a", "b"}))
		if o != "c" {
			assert.Equal(t, o, Owner(key, ab), "only c's keys move when c leaves")
		}
		counts[o]++
	}
	for id, n := range counts {
		assert.InDelta(t, 1000, n, 150, "%s's share", id)
	}
	assert.Empty(t, Owner("k", nil))
	assert.Equal(t, []string{"a", "b"}, parseMembers(formatMembers([]string{"a", "b"})))
	assert.Nil(t, parseMembers(""))
}
