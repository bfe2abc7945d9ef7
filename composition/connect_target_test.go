package composition

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports/portstest"
)

// TestConnectTarget: the Target Connect dials is built from the
// resolution Evaluate decided on, and only while the definition still
// materializes to the fingerprint that was decided on.
func TestConnectTarget(t *testing.T) {
	var value atomic.Value
	value.Store("one")
	h, err := Custom(Ports{
		Approvals: portstest.NewApprovalStore(),
		Audit:     portstest.NewAuditLog(),
	}, Config{Lookup: func(k string) (string, bool) {
		if k == "ARG" {
			return value.Load().(string), true
		}
		return "", false
	}})
	require.NoError(t, err)
	srcs := userSrc(`{"mcpServers": {"s": {"command": "/bin/true", "args": ["${ARG}"]}}}`)
	ev, res := h.evaluate(context.Background(), srcs)
	r, ok := ev.Server("s")
	require.True(t, ok)
	require.Equal(t, StateAllowed, r.State)

	tg, mat, ok := h.connectTarget(res, "s", r.Fingerprint)
	require.True(t, ok)
	require.NotNil(t, mat)
	assert.Equal(t, []string{"one"}, tg.Args)
	assert.Equal(t, r.Fingerprint, tg.Fingerprint)

	_, _, ok = h.connectTarget(res, "absent", r.Fingerprint)
	assert.False(t, ok, "an undefined name has no target")

	value.Store("two")
	_, _, ok = h.connectTarget(res, "s", r.Fingerprint)
	assert.False(t, ok, "a definition that changed since the decision is not connected")
}
