package mcpserve

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/ports"
)

// serversBackend is a fakeBackend that names each tool's server.
type serversBackend struct {
	*fakeBackend
	servers map[string]string
}

func (b serversBackend) ToolServer(name string) string { return b.servers[name] }

// askForm is a form question of server "up".
var askForm = ports.ElicitRequest{ServerID: "up", Mode: ports.ElicitForm, Message: "your name?",
	Schema: ports.ElicitSchema{Fields: []ports.ElicitField{{Name: "name", Type: ports.FieldString, Required: true}}}}

// asker is a backend whose tools ask the client askForm n times and
// answer the answers' actions and names; asked receives each Elicit's
// error, ended is closed when a call's ctx ends before it returns.
type asker struct {
	s     *Server
	n     int
	errs  chan error
	ended chan struct{}
}

func (a *asker) call(ctx context.Context, _ string, _ json.RawMessage) (ports.ToolResult, error) {
	defer func() {
		if ctx.Err() != nil && a.ended != nil {
			close(a.ended)
		}
	}()
	var out string
	for range a.n {
		r, err := a.s.Elicit(ctx, askForm)
		if a.errs != nil {
			a.errs <- err
		}
		if err != nil {
			return ports.ToolResult{}, err
		}
		name, _ := r.Content["name"].(string)
		out += string(r.Action) + ":" + name + ";"
	}
	b, _ := json.Marshal([]map[string]string{{"type": "text", "text": out}})
	return ports.ToolResult{Content: b}, nil
}

// newAsker is a Server whose tools "ask" and "other" ask n questions.
func newAsker(t *testing.T, n int, opts *Options, servers map[string]string) (*Server, *asker) {
	t.Helper()
	a := &asker{n: n}
	fb := newFake(Catalog{Tools: []Tool{{Name: "ask", InputSchema: objSchema}, {Name: "other", InputSchema: objSchema}}})
	fb.call = a.call
	var b Backend = fb
	if servers != nil {
		b = serversBackend{fb, servers}
	}
	s := New(b, opts)
	t.Cleanup(s.Close)
	a.s = s
	return s, a
}

// connectAt serves s to an in-memory client with copts and sopts.
func connectAt(t *testing.T, s *Server, copts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := s.srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, copts).Connect(ctx, ct, sopts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Close(); cancel() })
	return cs
}

func resultText(r *mcp.CallToolResult) string {
	var s string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// answering is a client whose ElicitationHandler answers each question
// with the next name and records the questions.
func answering(names ...string) (*mcp.ClientOptions, *[]*mcp.ElicitParams) {
	var mu sync.Mutex
	var asked []*mcp.ElicitParams
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, r.Params)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": names[len(asked)-1]}}, nil
	}}, &asked
}

// TestMultiRoundElicitation: a client on 2026-07-28 (the SDK's default)
// that declared elicitation gets each upstream question inside an
// input-required result; its SDK retries with the answer, which reaches
// the waiting upstream call, and the final result is the upstream's. A
// client before 2026-07-28 is asked with elicitation/create, as before.
func TestMultiRoundElicitation(t *testing.T) {
	for _, tc := range []struct {
		name, version string
	}{{"2026-07-28 (multi round-trip)", ""}, {"2025-11-25 (elicitation/create)", "2025-11-25"}} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newAsker(t, 2, nil, nil)
			copts, asked := answering("Ann", "Bob")
			cs := connectAt(t, s, copts, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask"})
			require.NoError(t, err)
			assert.False(t, r.IsError, resultText(r))
			assert.Equal(t, "accept:Ann;accept:Bob;", resultText(r))
			require.Len(t, *asked, 2)
			assert.Equal(t, "your name?", (*asked)[0].Message)
			schema, _ := json.Marshal((*asked)[0].RequestedSchema)
			assert.JSONEq(t, `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, string(schema))
			assert.Zero(t, s.Pending())
			for ss := range s.srv.Sessions() {
				assert.Equal(t, tc.version == "", roundsElicit(ss.InitializeParams()), "the path taken")
			}
			for ss := range s.srv.Sessions() {
				assert.Equal(t, tc.version == "", roundsElicit(ss.InitializeParams()), "the path taken")
			}
		})
	}
}

// manual is a 2026-07-28 client that declared elicitation and retries
// by hand.
func manual(t *testing.T, s *Server) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, s, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, assert.AnError
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}, nil)
}

// firstRound calls tool and returns its input-required result.
func firstRound(t *testing.T, cs *mcp.ClientSession, tool string) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool})
	require.NoError(t, err)
	require.True(t, r.NeedsInput(), "%+v", r)
	require.Contains(t, r.InputRequests, inputRequestID)
	require.Len(t, r.RequestState, 43, "32 random bytes")
	return r
}

func retry(t *testing.T, cs *mcp.ClientSession, tool, state, name string) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, RequestState: state,
		InputResponses: mcp.InputResponseMap{inputRequestID: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}}})
	require.NoError(t, err)
	return r
}

// TestMultiRoundStates: a retry with a state never handed out, with a
// state for another tool, from another session, or with a state already
// used is refused by name and leaves the call waiting for its owner's
// retry; the owner's retry completes it.
func TestMultiRoundStates(t *testing.T) {
	s, _ := newAsker(t, 1, nil, nil)
	cs := manual(t, s)
	first := firstRound(t, cs, "ask")
	assert.Equal(t, 1, s.Pending())

	r := retry(t, cs, "ask", "not-a-state", "Eve")
	assert.True(t, r.IsError)
	assert.Contains(t, resultText(r), ReasonInputStateUnknown)

	r = retry(t, cs, "other", first.RequestState, "Eve")
	assert.Contains(t, resultText(r), ReasonInputStateUnknown, "a state binds its tool")

	other := manual(t, s)
	r = retry(t, other, "ask", first.RequestState, "Eve")
	assert.Contains(t, resultText(r), ReasonInputStateUnknown, "a state binds its session")
	assert.Equal(t, 1, s.Pending())

	r = retry(t, cs, "ask", first.RequestState, "Ann")
	assert.False(t, r.NeedsInput())
	assert.Equal(t, "accept:Ann;", resultText(r))
	assert.Zero(t, s.Pending())

	r = retry(t, cs, "ask", first.RequestState, "Ann")
	assert.Contains(t, resultText(r), ReasonInputStateUnknown, "a state is used once")
}

// TestMultiRoundExpiry: a client that does not come back within
// InputTimeout: the question is answered "cancel", the upstream call's
// ctx ends, the state is forgotten and a late retry refused by name.
func TestMultiRoundExpiry(t *testing.T) {
	s, a := newAsker(t, 1, &Options{InputTimeout: 50 * time.Millisecond}, nil)
	a.ended = make(chan struct{})
	cs := manual(t, s)
	first := firstRound(t, cs, "ask")
	select {
	case <-a.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not ended")
	}
	assert.Zero(t, s.Pending())
	r := retry(t, cs, "ask", first.RequestState, "Ann")
	assert.Contains(t, resultText(r), ReasonInputStateUnknown)
}

// TestMultiRoundRefusals: a 2026-07-28 client without elicitation, two
// running calls of the same server (the question cannot be routed), and
// more waiting calls than MaxPendingInputs are refused by name.
func TestMultiRoundRefusals(t *testing.T) {
	t.Run("no elicitation declared", func(t *testing.T) {
		s, a := newAsker(t, 1, nil, nil)
		a.errs = make(chan error, 1)
		cs := connectAt(t, s, nil, nil)
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask"})
		require.NoError(t, err)
		assert.True(t, r.IsError)
		assert.ErrorIs(t, <-a.errs, ErrNoElicitingClient)
	})
	for _, tc := range []struct {
		name    string
		servers map[string]string
		opts    *Options
		want    error
	}{
		{"two calls of one server", nil, nil, errUnroutable},
		{"two calls of two servers, one may wait", map[string]string{"ask": "up", "other": "up2"}, &Options{MaxPendingInputs: 1}, errInputsFull},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newAsker(t, 1, tc.opts, tc.servers)
			release := make(chan struct{})
			errs := make(chan error, 2)
			var fb *fakeBackend
			switch b := s.b.(type) {
			case *fakeBackend:
				fb = b
			case serversBackend:
				fb = b.fakeBackend
			}
			var started sync.WaitGroup
			started.Add(2)
			fb.call = func(ctx context.Context, name string, _ json.RawMessage) (ports.ToolResult, error) {
				started.Done()
				started.Wait() // both calls run before either asks
				q := askForm
				if tc.servers != nil {
					q.ServerID = tc.servers[name]
				}
				_, err := s.Elicit(ctx, q)
				errs <- err
				<-release
				return ports.ToolResult{}, nil
			}
			cs := manual(t, s)
			var wg sync.WaitGroup
			for _, tool := range []string{"ask", "other"} {
				wg.Go(func() { _, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool}) })
			}
			if tc.want == errUnroutable {
				assert.ErrorIs(t, <-errs, errUnroutable)
				assert.ErrorIs(t, <-errs, errUnroutable)
			} else {
				// One question waits for the client; the other is refused.
				assert.ErrorIs(t, <-errs, errInputsFull)
				require.Eventually(t, func() bool { return s.Pending() == 1 }, 10*time.Second, time.Millisecond)
			}
			close(release)
			s.Close() // ends the waiting call
			wg.Wait()
			assert.Zero(t, s.Pending())
		})
	}
}

// TestMultiRoundCancel: the client's cancel of a round ends the upstream
// call.
func TestMultiRoundCancel(t *testing.T) {
	s, _ := newAsker(t, 1, nil, nil)
	started, ended := make(chan struct{}), make(chan struct{})
	s.b.(*fakeBackend).call = func(ctx context.Context, _ string, _ json.RawMessage) (ports.ToolResult, error) {
		close(started)
		<-ctx.Done()
		close(ended)
		return ports.ToolResult{}, ctx.Err()
	}
	cs := manual(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	require.Error(t, err)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream call was not ended")
	}
}

// TestMultiRoundOtherAnswers: a retry whose inputResponses lack the
// question's answer, or hold another kind of answer, answers the server
// "cancel".
func TestMultiRoundOtherAnswers(t *testing.T) {
	for name, responses := range map[string]mcp.InputResponseMap{
		"missing":    nil,
		"other id":   {"x": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Eve"}}},
		"roots list": {inputRequestID: &mcp.ListRootsResult{Roots: []*mcp.Root{}}},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := newAsker(t, 1, nil, nil)
			cs := manual(t, s)
			first := firstRound(t, cs, "ask")
			r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", RequestState: first.RequestState, InputResponses: responses})
			require.NoError(t, err)
			assert.Equal(t, "cancel:;", resultText(r))
		})
	}
}

// TestMultiRoundProgress: the upstream call's progress goes to the round
// running at the time, under that round's progress token.
func TestMultiRoundProgress(t *testing.T) {
	s, _ := newAsker(t, 1, nil, nil)
	s.b.(*fakeBackend).call = func(ctx context.Context, _ string, _ json.RawMessage) (ports.ToolResult, error) {
		report := ports.ProgressFunc(ctx)
		if report == nil {
			return ports.ToolResult{}, assert.AnError
		}
		report(ports.Progress{Progress: 1, Message: "before"})
		if _, err := s.Elicit(ctx, askForm); err != nil {
			return ports.ToolResult{}, err
		}
		report(ports.Progress{Progress: 2, Message: "after"})
		return ports.ToolResult{Content: json.RawMessage(`[]`)}, nil
	}
	got := make(chan string, 4)
	cs := connectAt(t, s, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, assert.AnError
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			got <- r.Params.ProgressToken.(string) + " " + r.Params.Message
		},
	}, nil)
	p := &mcp.CallToolParams{Name: "ask"}
	p.SetProgressToken("round-1")
	first, err := cs.CallTool(context.Background(), p)
	require.NoError(t, err)
	require.True(t, first.NeedsInput())
	assert.Equal(t, "round-1 before", <-got)
	p = &mcp.CallToolParams{Name: "ask", RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{inputRequestID: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}}}
	p.SetProgressToken("round-2")
	r, err := cs.CallTool(context.Background(), p)
	require.NoError(t, err)
	assert.False(t, r.IsError, resultText(r))
	assert.Equal(t, "round-2 after", <-got)
}
