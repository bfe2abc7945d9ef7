package composition

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/activation"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// auditHost is a Host on audit, with the rig's other fakes.
func auditHost(t *testing.T, audit ports.AuditLog) *Host {
	t.Helper()
	h, err := Custom(Ports{
		Approvals: portstest.NewApprovalStore(),
		Audit:     audit,
		Trust:     portstest.NewWorkspaceTrust(ports.WorkspaceFacts{Repository: "https://example.com/r.git", Generation: "g1"}),
	}, Config{})
	require.NoError(t, err)
	return h
}

// gatedFlush is an AuditQueue whose Flush waits (up to 10s) until open is
// closed, and says whether it was.
type gatedFlush struct {
	*portstest.AuditQueue
	open   chan struct{}
	opened bool
}

func (g *gatedFlush) Flush(ctx context.Context) error {
	select {
	case <-g.open:
		g.opened = true
	case <-time.After(10 * time.Second):
	}
	return g.AuditQueue.Flush(ctx)
}

// startNotifier is a connector that closes started at its first Connect
// (once: two servers' connects run at once).
type startNotifier struct {
	*liveConnector
	started chan struct{}
	once    sync.Once
}

func (c *startNotifier) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	c.once.Do(func() { close(c.started) })
	return c.liveConnector.Connect(ctx, t, s)
}

// TestConnectDoesNotWaitForTheDecisionRecord: the servers connect while
// the decisions' records are being made durable (a Flush that waits for
// the first connect to start returns), and Connect returns only once they
// are durable.
//
// A lone server connects in the calling goroutine and the flush runs
// beside it; several connect in their own goroutines.
func TestConnectDoesNotWaitForTheDecisionRecord(t *testing.T) {
	for _, names := range [][]string{{"a"}, {"a", "b"}} {
		q := &gatedFlush{AuditQueue: portstest.NewAuditQueue()}
		c := &startNotifier{liveConnector: newLiveConnector(), started: make(chan struct{})}
		q.open = c.started
		for _, n := range names {
			c.set(n, tool("keep", "string"))
		}
		h := auditHost(t, q)
		f := h.Connect(t.Context(), liveSrcs(names...), &ConnectOptions{connector: c, Supervisor: fastSupervisor})
		assert.True(t, q.opened, "%d servers: a server began connecting before the decisions' records were durable", len(names))
		assert.Equal(t, 1, q.Calls("Flush"), "one flush for every decision")
		assert.Zero(t, q.Calls("Append"), "no fsync per decision on the connect path")
		recs, err := q.Records(t.Context())
		require.NoError(t, err)
		require.Len(t, recs, len(names), "every decision durable when Connect returned")
		assert.Empty(t, q.Pending())
		for _, s := range f.Servers() {
			assert.Equal(t, StateConnected, s.State, s.Name)
		}
		require.NoError(t, f.Close())
	}
}

// TestConnectDeniesWhenTheDecisionRecordFails: a Flush that fails takes
// every server it decided out of service, connected or connecting:
// denied, audit_unavailable, calls refused (nothing is usable unaudited).
func TestConnectDeniesWhenTheDecisionRecordFails(t *testing.T) {
	for _, background := range []bool{false, true} {
		q := portstest.NewAuditQueue()
		q.Fail("Flush", ports.ErrUnavailable)
		c := newLiveConnector()
		c.set("a", tool("keep", "string"))
		h := auditHost(t, q)
		f := h.Connect(t.Context(), liveSrcs("a"), &ConnectOptions{connector: c, Supervisor: fastSupervisor, Background: background})
		require.NoError(t, f.Wait(t.Context()))
		st := f.Servers()
		require.Len(t, st, 1)
		assert.Equal(t, StateDenied, st[0].State)
		assert.Equal(t, activation.ReasonAuditUnavailable, st[0].Reason)
		assert.Equal(t, activation.ReasonAuditUnavailable, refusal.ReasonOf(st[0].Evaluation.Err))
		assert.ErrorIs(t, st[0].Evaluation.Err, ports.ErrUnavailable)
		_, err := f.CallServerTool(t.Context(), "a", "keep", json.RawMessage(`{}`))
		assert.Error(t, err, "no call on an unaudited decision")
		for _, s := range c.Sessions() {
			select {
			case <-s.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the session of an unaudited server stays open")
			}
		}
		assert.Empty(t, f.Set().Tools())
		require.NoError(t, f.Close())
	}
}

// TestEvaluateFlushesOnce: Evaluate records every decision with one
// write (a flush), durable when it returns; a failed flush denies every
// decided server.
func TestEvaluateFlushesOnce(t *testing.T) {
	q := portstest.NewAuditQueue()
	h := auditHost(t, q)
	ev := h.Evaluate(t.Context(), liveSrcs("a", "b", "c"))
	assert.Equal(t, 1, q.Calls("Flush"))
	recs, err := q.Records(t.Context())
	require.NoError(t, err)
	assert.Len(t, recs, 3)
	for _, s := range ev.Servers {
		assert.Equal(t, StateAllowed, s.State)
	}

	q.Fail("Flush", ports.ErrUnavailable)
	ev = h.Evaluate(t.Context(), liveSrcs("a", "b"))
	for _, s := range ev.Servers {
		assert.Equal(t, StateDenied, s.State)
		assert.Equal(t, activation.ReasonAuditUnavailable, s.Reason)
		assert.Equal(t, activation.ReasonAuditUnavailable, refusal.ReasonOf(s.Err))
	}
}
