package supervisor

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpward/mcpward/core/catalog"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
	"github.com/mcpward/mcpward/ports/portstest"
)

// panicText is the text of every panic value of these tests: it stands for
// bytes a server sent, so it must never reach a log record or an error.
const panicText = "PANIC-TEXT-3f9a server bytes"

// serverPanic is the type of the panic values; its name may be logged.
type serverPanic struct{ text string }

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

// requirePanicLogged requires exactly one panic record for the test's
// server: reason, where, the value's type and a stack, never its text.
func requirePanicLogged(t *testing.T, log *logBuffer, where string) {
	t.Helper()
	out := log.String()
	assert.Equal(t, 1, strings.Count(out, "reason=panic"), "one record per panic:\n%s", out)
	assert.Contains(t, out, "level=ERROR")
	assert.Contains(t, out, "server="+serverID)
	assert.Contains(t, out, "where="+where)
	assert.Contains(t, out, "panic_type=supervisor.serverPanic")
	assert.Contains(t, out, "goroutine ", "the stack is logged")
	assert.Contains(t, out, "panic_test.go", "the stack reaches the panic")
	assert.NotContains(t, out, "PANIC-TEXT", "the panic value's text is never logged")
}

// panicConnector wraps a portstest.Connector: Connect panics while
// panicConnect is set, and every session's List of prompts panics from the
// listPanicsFrom-th prompts List of that session on (0: never).
//
// Prompts, not tools: catalog.Discover narrows tool pages on a goroutine
// of its own that a panic in the tools List would leave behind (a defect
// of the catalog, not of the boundary under test).
type panicConnector struct {
	*portstest.Connector
	panicConnect   atomic.Bool
	listPanicsFrom int
}

func (c *panicConnector) Connect(ctx context.Context, t ports.Target, s ports.Signals) (ports.Session, error) {
	if c.panicConnect.Load() {
		panic(serverPanic{panicText})
	}
	sess, err := c.Connector.Connect(ctx, t, s)
	if err != nil {
		return nil, err
	}
	return &panicSession{Session: sess.(*portstest.Session), from: c.listPanicsFrom}, nil
}

type panicSession struct {
	*portstest.Session
	from  int
	lists atomic.Int32
}

func (s *panicSession) List(ctx context.Context, kind ports.ListKind, cursor string) (ports.Page, error) {
	if kind == ports.ListPrompts {
		if n := s.lists.Add(1); s.from > 0 && int(n) >= s.from {
			panic(serverPanic{panicText})
		}
	}
	return s.Session.List(ctx, kind, cursor)
}

// panicScript is script(v, tools...) declaring prompts too.
func panicScript(v string, tools ...string) portstest.SessionScript {
	sc := script(v, tools...)
	sc.Identity.Declared = []ports.ListKind{ports.ListTools, ports.ListPrompts}
	return sc
}

// newPanicFixture is newFixture over a panicConnector, logging to log.
func newPanicFixture(t *testing.T, sc portstest.SessionScript, kind ports.TransportKind, listPanicsFrom int, log *logBuffer) (*fixture, *panicConnector) {
	t.Helper()
	pc := &panicConnector{Connector: portstest.NewConnector(sc), listPanicsFrom: listPanicsFrom}
	f := &fixture{conn: pc.Connector, clock: newClock(), rec: newRecorder()}
	f.srv = New(pc, ports.Target{ServerID: serverID, Kind: kind}, &Options{
		Clock:    f.clock,
		OnChange: f.rec.OnChange,
		Jitter:   func() float64 { return 0.5 },
		Logger:   log.logger(),
	})
	t.Cleanup(func() { _ = f.srv.Close() })
	return f, pc
}

func TestPanicInAttemptFailsTheServer(t *testing.T) {
	tests := []struct {
		name          string
		listFrom      int
		panicConnect  bool
		wantSessions  int
		sessionClosed bool
	}{
		{"in Connect", 0, true, 0, false},
		{"in the first discovery", 1, false, 1, true},
	}
	for _, tt := range tests {
		for _, kind := range []ports.TransportKind{ports.TransportHTTP, ports.TransportStdio} {
			t.Run(tt.name+"/"+string(kind), func(t *testing.T) {
				var log logBuffer
				f, pc := newPanicFixture(t, panicScript("1", "a"), kind, tt.listFrom, &log)
				pc.panicConnect.Store(tt.panicConnect)
				err := recv(t, f.connectAsync(context.Background()))
				e := requireRefusal(t, err, refusal.Internal, ReasonPanic)
				assert.NotContains(t, e.Error(), "PANIC-TEXT")
				st := f.srv.Status()
				assert.Equal(t, Failed, st.State)
				assert.Same(t, e, st.Err)
				assert.Equal(t, 1, st.Attempts, "a panic is not retried")
				assert.Empty(t, f.clock.Sleeps(), "no backoff: Internal is not Transient")
				assert.Nil(t, f.srv.Catalog())
				require.Len(t, f.conn.Sessions(), tt.wantSessions)
				for _, s := range f.conn.Sessions() {
					assert.True(t, s.CloseCalled(), "the attempt's session (and child) was closed")
				}
				requirePanicLogged(t, &log, panicInConnect)

				// Not connected, with the class of the failure.
				_, err = f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
				requireRefusal(t, err, refusal.Internal, ReasonServerUnavailable)
				// A later Connect starts afresh.
				pc.panicConnect.Store(false)
				pc.listPanicsFrom = 0
				f.connect(t)
			})
		}
	}
}

func TestPanicInRefreshFailsTheServer(t *testing.T) {
	for _, viaSignal := range []bool{true, false} {
		name := "Refresh"
		if viaSignal {
			name = "list_changed"
		}
		t.Run(name, func(t *testing.T) {
			var log logBuffer
			// The first discovery lists once; the refresh panics.
			f, _ := newPanicFixture(t, panicScript("1", "a"), ports.TransportStdio, 2, &log)
			f.connect(t)
			sess := f.session(t, 0)
			if viaSignal {
				require.True(t, sess.FireListChanged(ports.ListTools))
				st := f.rec.awaitState(t, f.srv, Failed)
				requireRefusal(t, st.Err, refusal.Internal, ReasonPanic)
			} else {
				err := f.srv.Refresh(context.Background())
				requireRefusal(t, err, refusal.Internal, ReasonPanic)
			}
			st := f.srv.Status()
			assert.Equal(t, Failed, st.State)
			requireRefusal(t, st.Err, refusal.Internal, ReasonPanic)
			require.NotNil(t, st.Catalog, "the retained catalog is kept")
			assert.True(t, st.Catalog.Stale)
			assert.True(t, sess.CloseCalled(), "the session (and child) was closed")
			assert.Zero(t, st.Disconnects, "closing it is not a disconnect")
			requirePanicLogged(t, &log, panicInRefresh)

			// Nothing reconnects on its own.
			assert.Len(t, f.conn.Sessions(), 1)
			assert.Empty(t, f.clock.Sleeps())
			require.NoError(t, closeWithin(t, f.srv))
			assert.Len(t, f.conn.Sessions(), 1)
		})
	}
}

func TestPanicInCallFailsTheServer(t *testing.T) {
	for _, kind := range []ports.TransportKind{ports.TransportHTTP, ports.TransportStdio} {
		t.Run(string(kind), func(t *testing.T) {
			var log logBuffer
			sc := panicScript("1", "a", "b")
			sc.Call = func(_ context.Context, r ports.CallRequest) (ports.CallResult, error) {
				if r.Name == "a" {
					panic(serverPanic{panicText})
				}
				return ports.CallResult{}, nil
			}
			f, _ := newPanicFixture(t, sc, kind, 0, &log)
			f.connect(t)
			_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "a"})
			e := requireRefusal(t, err, refusal.Internal, ReasonPanic)
			assert.NotContains(t, e.Error(), "PANIC-TEXT")
			requirePanicLogged(t, &log, panicInCall)

			st := f.srv.Status()
			assert.Equal(t, Failed, st.State, "a session a panic went through is not used again")
			assert.Same(t, e, st.Err)
			require.NotNil(t, st.Catalog)
			assert.True(t, st.Catalog.Stale)
			assert.True(t, f.session(t, 0).CloseCalled())
			assert.Zero(t, f.session(t, 0).InFlight())

			// Through the catalog's tools too: not connected, Internal.
			tool, ok := st.Catalog.Tool(catalog.ToolName(serverID, "b"))
			require.True(t, ok)
			_, err = tool.Call(context.Background(), nil)
			requireRefusal(t, err, refusal.Internal, ReasonServerUnavailable)
			assert.Len(t, f.session(t, 0).CallRequests(), 1, "nothing was replayed")

			f.connect(t)
			_, err = f.srv.Call(context.Background(), ports.CallRequest{Name: "b"})
			require.NoError(t, err)
		})
	}
}

// A panic in one call ends the session's other calls in flight; they fail
// like calls of a closed session, and the server stays Failed.
func TestPanicInCallEndsOtherCalls(t *testing.T) {
	var log logBuffer
	started := make(chan struct{}, 1)
	sc := panicScript("1", "slow", "boom")
	sc.Call = func(ctx context.Context, r ports.CallRequest) (ports.CallResult, error) {
		if r.Name == "boom" {
			panic(serverPanic{panicText})
		}
		started <- struct{}{}
		<-ctx.Done()
		return ports.CallResult{}, portstest.ErrSessionClosed
	}
	f, _ := newPanicFixture(t, sc, ports.TransportHTTP, 0, &log)
	f.connect(t)
	slow := make(chan error, 1)
	go func() {
		_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "slow"})
		slow <- err
	}()
	recv(t, started)
	_, err := f.srv.Call(context.Background(), ports.CallRequest{Name: "boom"})
	requireRefusal(t, err, refusal.Internal, ReasonPanic)
	require.Error(t, recv(t, slow))
	st := f.srv.Status()
	assert.Equal(t, Failed, st.State)
	requireRefusal(t, st.Err, refusal.Internal, ReasonPanic)
}

func TestNilLoggerDiscards(t *testing.T) {
	pc := &panicConnector{Connector: portstest.NewConnector(script("1", "a"))}
	pc.panicConnect.Store(true)
	s := New(pc, ports.Target{ServerID: serverID}, &Options{MaxAttempts: 1})
	defer s.Close()
	requireRefusal(t, s.Connect(context.Background()), refusal.Internal, ReasonPanic)
}
