package composition

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/supervisor"
)

func TestConnectKnobs(t *testing.T) {
	h := &Host{}
	base := &supervisor.Options{
		ConnectTimeout: time.Second, CallTimeout: time.Minute, MaxAttempts: 2,
		Catalog:  &catalog.Options{AdmissionCap: 10},
		Discover: &catalog.DiscoverOptions{MaxPages: 3, MaxItems: 7},
	}
	t.Run("zero knobs keep Supervisor's fields", func(t *testing.T) {
		got := h.supervisorOptions(&ConnectOptions{Supervisor: base}, "s", nil, nil)
		assert.Equal(t, time.Second, got.ConnectTimeout)
		assert.Equal(t, time.Minute, got.CallTimeout)
		assert.Equal(t, 10, got.Catalog.AdmissionCap)
		assert.Zero(t, got.Catalog.MaxBinaryBytes, "the catalog's default")
		assert.Equal(t, 7, got.Discover.MaxItems)
	})
	t.Run("a binary limit alone keeps Supervisor's result cap", func(t *testing.T) {
		got := h.supervisorOptions(&ConnectOptions{Supervisor: base, MaxBinaryBytes: 99}, "s", nil, nil)
		assert.Equal(t, 10, got.Catalog.AdmissionCap)
		assert.Equal(t, 99, got.Catalog.MaxBinaryBytes)
		assert.Zero(t, base.Catalog.MaxBinaryBytes, "Supervisor is not modified")
	})
	t.Run("set knobs win", func(t *testing.T) {
		o := &ConnectOptions{Supervisor: base, ResultCap: 500, ConnectTimeout: 5 * time.Second, CallTimeout: 2 * time.Minute,
			CallTimeoutMax: supervisor.NoTimeout, MaxItems: 100, MaxBytes: 1 << 20, MaxBinaryBytes: 4096, ReadCap: 2048}
		got := h.supervisorOptions(o, "s", nil, nil)
		assert.Equal(t, 5*time.Second, got.ConnectTimeout)
		assert.Equal(t, 2*time.Minute, got.CallTimeout)
		assert.Equal(t, supervisor.NoTimeout, got.CallTimeoutMax)
		assert.Equal(t, 2, got.MaxAttempts, "what no knob names stays")
		require.NotNil(t, got.Catalog)
		assert.Equal(t, 500, got.Catalog.AdmissionCap)
		assert.Equal(t, 4096, got.Catalog.MaxBinaryBytes)
		assert.Equal(t, 2048, got.Catalog.ReadCap)
		assert.Equal(t, catalog.DiscoverOptions{MaxPages: 3, MaxItems: 100, MaxBytes: 1 << 20}, *got.Discover)
		assert.Equal(t, 10, base.Catalog.AdmissionCap, "Supervisor is not modified")
		assert.Equal(t, 7, base.Discover.MaxItems)
	})
	t.Run("a definition's timeout shortens the knob", func(t *testing.T) {
		got := h.supervisorOptions(&ConnectOptions{CallTimeout: time.Hour}, "s", &definition.Definition{Timeout: time.Minute}, nil)
		assert.Equal(t, time.Minute, got.CallTimeout)
		got = h.supervisorOptions(&ConnectOptions{CallTimeout: time.Second}, "s", &definition.Definition{Timeout: time.Minute}, nil)
		assert.Equal(t, time.Second, got.CallTimeout, "never lengthens it")
	})
}
