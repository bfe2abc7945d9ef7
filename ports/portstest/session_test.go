package portstest_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

func toolsScript() portstest.SessionScript {
	return portstest.SessionScript{
		Identity: ports.SessionIdentity{ProtocolVersion: "2025-06-18", ServerName: "srv", ServerVersion: "1",
			Declared: []ports.ListKind{ports.ListTools, ports.ListPrompts}},
		Pages: map[ports.ListKind]map[string]ports.Page{
			ports.ListTools: {
				"":   {Items: []json.RawMessage{json.RawMessage(`{"name":"a"}`)}, NextCursor: "c1"},
				"c1": {Items: []json.RawMessage{json.RawMessage(`{"name":"b"}`)}},
			},
		},
	}
}

func connect(t *testing.T, c *portstest.Connector, target ports.Target, sig ports.Signals) *portstest.Session {
	t.Helper()
	s, err := c.Connect(t.Context(), target, sig)
	require.NoError(t, err)
	return s.(*portstest.Session)
}

func TestConnectorConnect(t *testing.T) {
	c := portstest.NewConnector(toolsScript())
	target := ports.Target{ServerID: "s1", Kind: ports.TransportHTTP, URL: "https://example.com/mcp", Headers: map[string]string{"X": "1"}}
	s := connect(t, c, target, ports.Signals{})
	target.Headers["X"] = "mutated"

	id := s.Identity()
	assert.Equal(t, "s1", id.ServerID, "an empty scripted ServerID takes the target's")
	assert.Equal(t, "srv", id.ServerName)
	id.Declared[0] = "mutated"
	assert.Equal(t, ports.ListTools, s.Identity().Declared[0], "Identity returns a copy")

	got := c.Targets()
	require.Len(t, got, 1)
	assert.Equal(t, "1", got[0].Headers["X"], "the recorded target is a copy")
	assert.Equal(t, "1", s.Target().Headers["X"])
	assert.Equal(t, []*portstest.Session{s}, c.Sessions())
	assert.Equal(t, 1, c.Calls("Connect"))
}

func TestConnectorScripts(t *testing.T) {
	ctx := t.Context()
	errDown := errors.New("transient")
	c := portstest.NewConnector(toolsScript())
	c.SetScript("named", portstest.SessionScript{Identity: ports.SessionIdentity{ServerID: "other", ServerName: "named"}})
	c.SetScript("down", portstest.SessionScript{OnConnect: func(context.Context, ports.Target) error { return errDown }})
	var hooked *portstest.Session
	c.SetScript("hooked", portstest.SessionScript{
		Identity:  ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}},
		OnSession: func(s *portstest.Session) { hooked = s; s.FailOnce("List", errDown) },
	})
	cases := []struct {
		name     string
		server   string
		wantErr  error
		wantName string
	}{
		{"default", "any", nil, "srv"},
		{"per server", "named", nil, "named"},
		{"connect fails", "down", errDown, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := c.Connect(ctx, ports.Target{ServerID: tc.server}, ports.Signals{})
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Nil(t, s)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantName, s.Identity().ServerName)
		})
	}
	t.Run("on session", func(t *testing.T) {
		s, err := c.Connect(ctx, ports.Target{ServerID: "hooked"}, ports.Signals{})
		require.NoError(t, err)
		require.Same(t, hooked, s)
		_, err = s.List(ctx, ports.ListTools, "")
		require.ErrorIs(t, err, errDown, "a fault injected in OnSession hits the first List")
		_, err = s.List(ctx, ports.ListTools, "")
		require.NoError(t, err)
	})
	assert.Len(t, c.Targets(), 4, "every asked target is recorded")
	assert.Len(t, c.Sessions(), 3, "a failed Connect opens no session")

	c.FailOnce("Connect", errDown)
	_, err := c.Connect(ctx, ports.Target{ServerID: "any"}, ports.Signals{})
	require.ErrorIs(t, err, errDown)
	assert.Len(t, c.Targets(), 4, "an injected failure records nothing")
}

func TestSessionList(t *testing.T) {
	ctx := t.Context()
	errUnsupported := errors.New("unsupported")
	custom := toolsScript()
	custom.Undeclared = func(kind ports.ListKind) error { return errUnsupported }
	cases := []struct {
		name         string
		script       portstest.SessionScript
		kind         ports.ListKind
		cursor       string
		want         ports.Page
		wantErr      error
		wantContacts int
	}{
		{"first page", toolsScript(), ports.ListTools, "",
			ports.Page{Items: []json.RawMessage{json.RawMessage(`{"name":"a"}`)}, NextCursor: "c1"}, nil, 1},
		{"last page", toolsScript(), ports.ListTools, "c1",
			ports.Page{Items: []json.RawMessage{json.RawMessage(`{"name":"b"}`)}}, nil, 1},
		{"unknown cursor", toolsScript(), ports.ListTools, "nope", ports.Page{}, portstest.ErrUnknownCursor, 1},
		{"declared without pages", toolsScript(), ports.ListPrompts, "", ports.Page{}, nil, 1},
		{"declared without pages, cursor", toolsScript(), ports.ListPrompts, "c", ports.Page{}, portstest.ErrUnknownCursor, 1},
		{"undeclared", toolsScript(), ports.ListResources, "", ports.Page{}, portstest.ErrUndeclared, 0},
		{"undeclared, custom error", custom, ports.ListResourceTemplates, "", ports.Page{}, errUnsupported, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := connect(t, portstest.NewConnector(c.script), ports.Target{ServerID: "s"}, ports.Signals{})
			got, err := s.List(ctx, c.kind, c.cursor)
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, c.want, got)
			assert.Equal(t, c.wantContacts, s.Contacts())
			if c.wantContacts > 0 {
				assert.Equal(t, []portstest.ListRequest{{Kind: c.kind, Cursor: c.cursor}}, s.Lists())
			} else {
				assert.Empty(t, s.Lists())
			}
			assert.Equal(t, 1, s.Calls("List"))
		})
	}
}

func TestSessionListCopiesAndContext(t *testing.T) {
	script := toolsScript()
	s := connect(t, portstest.NewConnector(script), ports.Target{ServerID: "s"}, ports.Signals{})
	p, err := s.List(t.Context(), ports.ListTools, "")
	require.NoError(t, err)
	p.Items[0][2] = 'X'
	p, err = s.List(t.Context(), ports.ListTools, "")
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"a"}`, string(p.Items[0]), "pages are copies")
	assert.JSONEq(t, `{"name":"a"}`, string(script.Pages[ports.ListTools][""].Items[0]))

	_, err = s.List(errCtx(), ports.ListTools, "")
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 2, s.Contacts(), "an ended ctx contacts nothing")
}

func TestSessionCall(t *testing.T) {
	ctx := t.Context()
	script := toolsScript()
	script.Call = func(_ context.Context, r ports.CallRequest) (ports.CallResult, error) {
		return ports.CallResult{Content: json.RawMessage(`[{"type":"text","text":"` + r.Name + `"}]`)}, nil
	}
	s := connect(t, portstest.NewConnector(script), ports.Target{ServerID: "s"}, ports.Signals{})
	args := json.RawMessage(`{"x":1}`)
	req := ports.CallRequest{Name: "echo", Arguments: args, Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	res, err := s.Call(ctx, req)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"text","text":"echo"}]`, string(res.Content))
	args[2] = 'y'
	got := s.CallRequests()
	require.Len(t, got, 1)
	assert.JSONEq(t, `{"x":1}`, string(got[0].Arguments), "the recorded request is a copy")
	assert.Equal(t, req.Traceparent, got[0].Traceparent)
	assert.Equal(t, 1, s.Contacts())

	bare := connect(t, portstest.NewConnector(portstest.SessionScript{}), ports.Target{ServerID: "s"}, ports.Signals{})
	res, err = bare.Call(ctx, ports.CallRequest{Name: "x"})
	require.NoError(t, err)
	assert.Zero(t, res)
}

// blockingScript's Call blocks until its ctx ends and reports why.
func blockingScript() portstest.SessionScript {
	s := toolsScript()
	s.Call = func(ctx context.Context, _ ports.CallRequest) (ports.CallResult, error) {
		<-ctx.Done()
		return ports.CallResult{}, ctx.Err()
	}
	return s
}

func TestSessionCloseEndsInFlightCalls(t *testing.T) {
	s := connect(t, portstest.NewConnector(blockingScript()), ports.Target{ServerID: "s"}, ports.Signals{})
	const n = 4
	errc := make(chan error, n)
	for range n {
		go func() {
			_, err := s.Call(t.Context(), ports.CallRequest{Name: "slow"})
			errc <- err
		}()
	}
	require.Eventually(t, func() bool { return s.InFlight() == n }, 5*time.Second, time.Millisecond)
	assert.False(t, s.Closed())
	require.NoError(t, s.Close())
	assert.Zero(t, s.InFlight(), "Close waits for in-flight calls to end")
	assert.True(t, s.Closed())
	for range n {
		require.ErrorIs(t, <-errc, context.Canceled)
	}

	_, err := s.Call(t.Context(), ports.CallRequest{Name: "late"})
	require.ErrorIs(t, err, portstest.ErrSessionClosed)
	_, err = s.List(t.Context(), ports.ListTools, "")
	require.ErrorIs(t, err, portstest.ErrSessionClosed)
	assert.Equal(t, n, s.Contacts(), "nothing reaches a closed session")
	require.NoError(t, s.Close(), "Close again")
	assert.Equal(t, 2, s.Calls("Close"))
}

func TestSessionCallerContextEndsCall(t *testing.T) {
	s := connect(t, portstest.NewConnector(blockingScript()), ports.Target{ServerID: "s"}, ports.Signals{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	_, err := s.Call(ctx, ports.CallRequest{Name: "slow"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.False(t, s.Closed())
	assert.Zero(t, s.InFlight())
}

func TestSessionCloseFailureHasNoEffect(t *testing.T) {
	s := connect(t, portstest.NewConnector(toolsScript()), ports.Target{ServerID: "s"}, ports.Signals{})
	s.FailOnce("Close", errBoom)
	require.ErrorIs(t, s.Close(), errBoom)
	assert.False(t, s.Closed())
	require.NoError(t, s.Close())
	assert.True(t, s.Closed())
}

func TestSessionFireListChanged(t *testing.T) {
	c := portstest.NewConnector(toolsScript())
	var mu sync.Mutex
	var got []ports.ListKind
	sig := ports.Signals{ListChanged: func(k ports.ListKind) { mu.Lock(); got = append(got, k); mu.Unlock() }}
	s := connect(t, c, ports.Target{ServerID: "s"}, sig)
	assert.True(t, s.FireListChanged(ports.ListTools))
	assert.True(t, s.FireListChanged(ports.ListPrompts))
	require.NoError(t, s.Close())
	assert.False(t, s.FireListChanged(ports.ListTools), "no signal after Close")
	mu.Lock()
	assert.Equal(t, []ports.ListKind{ports.ListTools, ports.ListPrompts}, got)
	mu.Unlock()

	silent := connect(t, c, ports.Target{ServerID: "s"}, ports.Signals{})
	assert.False(t, silent.FireListChanged(ports.ListTools))
}

func TestSessionConcurrent(t *testing.T) {
	ctx := t.Context()
	script := toolsScript()
	script.Call = func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
		return ports.CallResult{Content: r.Arguments}, ctx.Err()
	}
	c := portstest.NewConnector(script)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			s := connect(t, c, ports.Target{ServerID: "s"}, ports.Signals{ListChanged: func(ports.ListKind) {}})
			var inner sync.WaitGroup
			for range 4 {
				inner.Go(func() {
					for range 20 {
						if _, err := s.List(ctx, ports.ListTools, ""); err != nil {
							assert.ErrorIs(t, err, portstest.ErrSessionClosed)
						}
						if _, err := s.Call(ctx, ports.CallRequest{Name: "t", Arguments: json.RawMessage(`{}`)}); err != nil {
							assert.True(t, errors.Is(err, portstest.ErrSessionClosed) || errors.Is(err, context.Canceled), err)
						}
						s.FireListChanged(ports.ListTools)
						_ = s.InFlight()
					}
				})
			}
			if i%2 == 0 {
				assert.NoError(t, s.Close())
			}
			inner.Wait()
			assert.NoError(t, s.Close())
			assert.Zero(t, s.InFlight())
		})
	}
	wg.Wait()
	assert.Len(t, c.Sessions(), 8)
}

func TestSessionToolPagesAreCopies(t *testing.T) {
	schema := map[string]any{"type": "object"}
	script := portstest.SessionScript{
		Identity: ports.SessionIdentity{Declared: []ports.ListKind{ports.ListTools}},
		Pages: map[ports.ListKind]map[string]ports.Page{ports.ListTools: {"": {
			Tools:   []ports.ToolItem{{Name: "a", InputSchema: schema}},
			Dropped: []ports.DroppedTool{{Name: "b", Reason: "invalid_header_annotation"}},
		}}},
	}
	s := connect(t, portstest.NewConnector(script), ports.Target{ServerID: "s"}, ports.Signals{})
	p, err := s.List(t.Context(), ports.ListTools, "")
	require.NoError(t, err)
	require.Len(t, p.Tools, 1)
	assert.Equal(t, "a", p.Tools[0].Name)
	assert.Equal(t, []ports.DroppedTool{{Name: "b", Reason: "invalid_header_annotation"}}, p.Dropped)
	p.Tools[0].Name = "mutated"
	p.Dropped[0].Name = "mutated"
	again, err := s.List(t.Context(), ports.ListTools, "")
	require.NoError(t, err)
	assert.Equal(t, "a", again.Tools[0].Name, "a page's Tools slice is a copy")
	assert.Equal(t, "b", again.Dropped[0].Name, "a page's Dropped slice is a copy")
}

func TestSessionDisconnect(t *testing.T) {
	called := make(chan struct{})
	script := toolsScript()
	script.Call = func(ctx context.Context, _ ports.CallRequest) (ports.CallResult, error) {
		close(called)
		<-ctx.Done()
		return ports.CallResult{}, ctx.Err()
	}
	s := connect(t, portstest.NewConnector(script), ports.Target{ServerID: "s"}, ports.Signals{})
	select {
	case <-s.Done():
		t.Fatal("Done closed before the session ended")
	default:
	}
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(context.Background(), ports.CallRequest{Name: "x"})
		errc <- err
	}()
	<-called
	s.Disconnect()
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed by Disconnect")
	}
	require.ErrorIs(t, <-errc, context.Canceled, "an in-flight call sees its ctx end")
	assert.True(t, s.Closed())
	assert.False(t, s.CloseCalled(), "Disconnect is not Close")
	_, err := s.List(t.Context(), ports.ListTools, "")
	require.ErrorIs(t, err, portstest.ErrSessionClosed)
	_, err = s.Call(t.Context(), ports.CallRequest{Name: "x"})
	require.ErrorIs(t, err, portstest.ErrSessionClosed)
	assert.False(t, s.FireListChanged(ports.ListTools))
	require.NoError(t, s.Close())
	assert.True(t, s.CloseCalled())
}

func TestSessionDoneOnClose(t *testing.T) {
	s := connect(t, portstest.NewConnector(toolsScript()), ports.Target{ServerID: "s"}, ports.Signals{})
	require.NoError(t, s.Close())
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed by Close")
	}
	assert.True(t, s.CloseCalled())
	require.NoError(t, s.Close(), "Close is idempotent")
}
