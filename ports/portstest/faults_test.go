package portstest_test

import (
	"context"
	"errors"
	"net/netip"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

var errBoom = errors.New("boom")

// faulty is the fault-injection surface every fake shares.
type faulty interface {
	Fail(method string, err error)
	FailOnce(method string, err error)
	Clear()
	Calls(method string) int
}

func TestFaultsKnobs(t *testing.T) {
	ctx := t.Context()
	errOther := errors.New("other")
	cases := []struct {
		name string
		set  func(f faulty)
		want []error // results of successive Get calls of a missing key
	}{
		{"none", func(faulty) {}, []error{ports.ErrNotFound, ports.ErrNotFound}},
		{"fail persists", func(f faulty) { f.Fail("Get", errBoom) }, []error{errBoom, errBoom, errBoom}},
		{"fail nil stops", func(f faulty) { f.Fail("Get", errBoom); f.Fail("Get", nil) }, []error{ports.ErrNotFound}},
		{"fail replaces", func(f faulty) { f.Fail("Get", errBoom); f.Fail("Get", errOther) }, []error{errOther}},
		{"once", func(f faulty) { f.FailOnce("Get", errBoom) }, []error{errBoom, ports.ErrNotFound}},
		{"once queues in order", func(f faulty) { f.FailOnce("Get", errBoom); f.FailOnce("Get", errOther) },
			[]error{errBoom, errOther, ports.ErrNotFound}},
		{"once nil lets a call through", func(f faulty) { f.FailOnce("Get", nil); f.FailOnce("Get", errBoom) },
			[]error{ports.ErrNotFound, errBoom, ports.ErrNotFound}},
		{"once before fail", func(f faulty) { f.Fail("Get", errOther); f.FailOnce("Get", errBoom) },
			[]error{errBoom, errOther, errOther}},
		{"once nil then fail", func(f faulty) { f.Fail("Get", errOther); f.FailOnce("Get", nil) },
			[]error{errOther, errOther}},
		{"other method untouched", func(f faulty) { f.Fail("Set", errBoom) }, []error{ports.ErrNotFound}},
		{"clear", func(f faulty) { f.Fail("Get", errBoom); f.FailOnce("Get", errOther); f.Clear() },
			[]error{ports.ErrNotFound, ports.ErrNotFound}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := portstest.NewTokenStore()
			c.set(s)
			for i, want := range c.want {
				_, err := s.Get(ctx, "k")
				require.ErrorIs(t, err, want, "call %d", i)
			}
			assert.Equal(t, len(c.want), s.Calls("Get"))
			assert.Zero(t, s.Calls("Set"))
		})
	}
}

func TestFaultsClearKeepsCalls(t *testing.T) {
	s := portstest.NewTokenStore()
	s.Fail("Delete", errBoom)
	require.ErrorIs(t, s.Delete(t.Context(), "k"), errBoom)
	require.ErrorIs(t, s.Delete(t.Context(), "k"), errBoom)
	s.Clear()
	require.ErrorIs(t, s.Delete(t.Context(), "k"), ports.ErrNotFound)
	assert.Equal(t, 3, s.Calls("Delete"))
}

func TestFaultsUnknownMethodPanics(t *testing.T) {
	s := portstest.NewTokenStore()
	cases := []struct {
		name, method string
		do           func()
	}{
		{"Fail", "Gett", func() { s.Fail("Gett", errBoom) }},
		{"FailOnce", "get", func() { s.FailOnce("get", errBoom) }},
		{"Calls", "Lock", func() { s.Calls("Lock") }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.PanicsWithValue(t, `portstest: no fallible method "`+c.method+`" (have Get, Set, Delete)`, c.do)
		})
	}
}

func TestFaultsZeroValueAcceptsAnyName(t *testing.T) {
	var f portstest.Faults
	f.Fail("Anything", errBoom)
	assert.Zero(t, f.Calls("Anything"))
}

// TestFaultsReachEveryMethod injects a failure into every fallible method
// of every fake and checks the call returns it, is counted, and works again
// after Clear.
func TestFaultsReachEveryMethod(t *testing.T) {
	ctx := t.Context()
	type tc struct {
		name   string
		fake   faulty
		method string
		call   func() error
	}
	store := portstest.NewTokenStore()
	locker := portstest.NewLocker()
	approvals := portstest.NewApprovalStore()
	audit := portstest.NewAuditLog()
	egress := portstest.AllowAllEgress()
	auth := portstest.NewAuthenticator(nil, 1)
	proc := portstest.GrantAllProcesses(ports.ProcessGrant{AllowedRoot: "/"})
	trust := portstest.NewWorkspaceTrust(ports.WorkspaceFacts{})
	clock := portstest.NewClock(testEpoch)
	conn := portstest.NewConnector(portstest.SessionScript{Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}}})
	sess0, err := conn.Connect(ctx, ports.Target{ServerID: "s"}, ports.Signals{})
	require.NoError(t, err)
	sess := sess0.(*portstest.Session)
	tool := portstest.NewTool(ports.ToolSpec{Name: "t"}, nil)
	u := &url.URL{Scheme: "https", Host: "example.com"}
	id := ports.Identity{ServerID: "s"}

	cases := []tc{
		{"TokenStore.Get", store, "Get", func() error { _, err := store.Get(ctx, "k"); return ignore(err, ports.ErrNotFound) }},
		{"TokenStore.Set", store, "Set", func() error { return store.Set(ctx, "k", nil) }},
		{"TokenStore.Delete", store, "Delete", func() error { return ignore(store.Delete(ctx, "k"), ports.ErrNotFound) }},
		{"Locker.Lock", locker, "Lock", func() error {
			unlock, err := locker.Lock(ctx, "k")
			if err == nil {
				return unlock()
			}
			return err
		}},
		{"ApprovalStore.List", approvals, "List", func() error { _, err := approvals.List(ctx, "s"); return err }},
		{"ApprovalStore.Grant", approvals, "Grant", func() error { return approvals.Grant(ctx, ports.Approval{Identity: id}) }},
		{"ApprovalStore.Revoke", approvals, "Revoke", func() error { return ignore(approvals.Revoke(ctx, id), ports.ErrNotFound) }},
		{"AuditLog.Append", audit, "Append", func() error { return audit.Append(ctx, ports.AuditRecord{}) }},
		{"AuditLog.Records", audit, "Records", func() error { _, err := audit.Records(ctx); return err }},
		{"EgressPolicy.AdmitURL", egress, "AdmitURL", func() error { return egress.AdmitURL(ctx, u) }},
		{"EgressPolicy.AdmitAddr", egress, "AdmitAddr", func() error {
			return egress.AdmitAddr(ctx, "https", netip.MustParseAddrPort("192.0.2.1:443"))
		}},
		{"Authenticator.Headers", auth, "Headers", func() error { _, err := auth.Headers(ctx, ports.AuthRequest{}); return err }},
		{"Authenticator.Refused", auth, "Refused", func() error { _, err := auth.Refused(ctx, ports.AuthRefusal{}); return err }},
		{"ProcessAuthority.Authorize", proc, "Authorize", func() error { _, err := proc.Authorize(ctx, ports.LaunchRequest{}); return err }},
		{"WorkspaceTrust.Facts", trust, "Facts", func() error { _, err := trust.Facts(ctx); return err }},
		{"Clock.Sleep", clock, "Sleep", func() error { return clock.Sleep(ctx, 0) }},
		{"Connector.Connect", conn, "Connect", func() error { _, err := conn.Connect(ctx, ports.Target{}, ports.Signals{}); return err }},
		{"Session.List", sess, "List", func() error { _, err := sess.List(ctx, ports.ListTools, ""); return err }},
		{"Session.Call", sess, "Call", func() error { _, err := sess.Call(ctx, ports.CallRequest{}); return err }},
		{"Session.Close", sess, "Close", func() error { return sess.Close() }},
		{"Tool.Call", tool, "Call", func() error { _, err := tool.Call(ctx, nil); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.fake.Calls(c.method)
			c.fake.Fail(c.method, errBoom)
			require.ErrorIs(t, c.call(), errBoom)
			require.ErrorIs(t, c.call(), errBoom)
			c.fake.Clear()
			c.fake.FailOnce(c.method, errBoom)
			require.ErrorIs(t, c.call(), errBoom)
			require.NoError(t, c.call())
			assert.Equal(t, before+4, c.fake.Calls(c.method))
		})
	}
}

// ignore maps the expected err to nil.
func ignore(err, expected error) error {
	if errors.Is(err, expected) {
		return nil
	}
	return err
}

// errCtx is a context that has already ended.
func errCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
