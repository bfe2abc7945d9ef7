package supervisor

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

type stepKey struct{}

// TestStep: Options.Step is told of each connect and discovery as it
// begins, the step runs under the context Step returns, and the end func
// hears the step's failure (nil on success), once per step.
func TestStep(t *testing.T) {
	type rec struct {
		step string
		err  error
	}
	var mu sync.Mutex
	var got []rec
	var sawCtx []bool
	step := func(ctx context.Context, step string) (context.Context, func(error)) {
		return context.WithValue(ctx, stepKey{}, step), func(err error) {
			mu.Lock()
			got = append(got, rec{step, err})
			mu.Unlock()
		}
	}
	c := portstest.NewConnector(script("1", "a"))
	boom := refusal.New(refusal.Config, "bad_definition", serverID)
	c.FailOnce("Connect", boom)
	watch := &ctxConnector{Connector: c, saw: func(ctx context.Context) {
		mu.Lock()
		sawCtx = append(sawCtx, ctx.Value(stepKey{}) == StepConnect)
		mu.Unlock()
	}}
	s := New(watch, ports.Target{ServerID: serverID}, &Options{Step: step, MaxAttempts: 1})
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	require.Error(t, s.Connect(ctx), "the first attempt fails")
	require.NoError(t, s.Connect(ctx))
	require.NoError(t, s.Refresh(ctx))

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 4)
	assert.Equal(t, StepConnect, got[0].step)
	assert.ErrorIs(t, got[0].err, boom, "the connect's failure")
	assert.Equal(t, []rec{{StepConnect, nil}, {StepDiscovery, nil}, {StepDiscovery, nil}}, got[1:],
		"connect and discovery of the attempt, then the refresh's discovery")
	assert.Equal(t, []bool{true, true}, sawCtx, "the connector ran under the step's context")
}

// ctxConnector tells saw of the context of every Connect.
type ctxConnector struct {
	*portstest.Connector
	saw func(context.Context)
}

func (c *ctxConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	c.saw(ctx)
	return c.Connector.Connect(ctx, t, s)
}
